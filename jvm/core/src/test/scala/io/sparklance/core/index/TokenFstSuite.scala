package io.sparklance.core.index

import java.nio.{ByteBuffer, ByteOrder}

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.CorruptFileException

/**
 * The listing of a token dictionary (through [[FstReader]]) on FSTs laid out by hand from the `fst` crate's format
 * (tests/test_fts_stemming.py reads pylance's dictionaries of tens of thousands of tokens), and on damaged ones.
 */
class TokenFstSuite extends AnyFunSuite {
  /** An FST of format version 3: header, `nodes` (their first byte at address 16), key count, root, checksum. */
  private def fst(nodes: Array[Byte], count: Long, root: Long, version: Long = 3): Array[Byte] = {
    val b = ByteBuffer.allocate(16 + nodes.length + 20).order(ByteOrder.LITTLE_ENDIAN)
    b.putLong(version).putLong(0L).put(nodes).putLong(count).putLong(root).putInt(0)
    b.array()
  }

  // One key "a" with value 5: a node with one transition and an output, to the empty final node (address 0):
  // the output (1 byte), the address delta (1 byte, 0: the empty node), the pack sizes (0x11), the state
  // (0b10 and the index of 'a' in the common inputs, 5).
  private val oneKey = fst(Array[Byte](5, 0, 0x11, 0x85.toByte), count = 1, root = 19)

  test("no key (a root with no transition), the empty key alone (root 0), one key with its output") {
    // The root: pack sizes 0, the transition count 0 (in its own byte), the state 0 (not final).
    assert(TokenFst.read(fst(Array[Byte](0, 0, 0), count = 0, root = 18), "t").size() == 0)
    assert(TokenFst.read(fst(Array.emptyByteArray, count = 1, root = 0), "t").keys.toSeq == Seq(""))
    val e = TokenFst.read(oneKey, "t")
    assert(e.keys.toSeq == Seq("a") && e.values.toSeq == Seq(5L))
  }

  test("damaged dictionaries are refused with the file named") {
    def refused(bytes: Array[Byte]) = intercept[CorruptFileException](TokenFst.read(bytes, "part_0_tokens.lance")).getMessage
    assert(refused(oneKey.take(20)).contains("part_0_tokens.lance") && refused(oneKey.take(20)).contains("fewer than 32"))
    assert(refused(fst(Array[Byte](5, 0, 0x11, 0x85.toByte), 1, 19, version = 9)).contains("FST of version 9"))
    assert(refused(fst(Array[Byte](5, 0, 0x11, 0x85.toByte), 2, 19)).contains("holds 1 keys where its footer says 2"))
    assert(refused(fst(Array[Byte](5, 0, 0x11, 0x85.toByte), 1, 900)).contains("root address 900"))
    assert(refused(fst(Array[Byte](5, 0x30, 0x11, 0x85.toByte), 1, 19)).contains("leads to address"))
  }
}
