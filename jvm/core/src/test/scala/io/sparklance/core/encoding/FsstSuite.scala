package io.sparklance.core.encoding

import scala.jdk.CollectionConverters._
import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

/** FSST: symbol tables, strings compressed with a greedy encoder here and decompressed by the reader's decoder. */
class FsstSuite extends AnyFunSuite {
  import EncodingTesting._

  private val maxBytes = 16L << 20

  /** A symbol table in Lance's layout: header (count, enabled bit, magic), symbols as u64, then lengths. */
  private def table(symbols: Seq[Array[Byte]], enabled: Boolean = true): Array[Byte] = {
    val n = symbols.size
    val out = new Array[Byte](8 + 9 * n)
    LittleEndian.putLong(out, 0, (0x46535354L << 32) | (if (enabled) 1L << 24 else 0L) | n)
    for (i <- 0 until n) {
      var v = 0L
      for (b <- symbols(i).indices) v |= (symbols(i)(b) & 0xFFL) << (8 * b)
      LittleEndian.putLong(out, 8 + 8 * i, v)
      out(8 + 8 * n + i) = symbols(i).length.toByte
    }
    out
  }

  /** Greedy compression: the longest symbol at each position, or an escaped literal byte. */
  private def compress(symbols: Seq[Array[Byte]], s: Array[Byte]): Array[Byte] = {
    val out = new java.io.ByteArrayOutputStream()
    val byFirst = symbols.indices.groupBy(k => symbols(k)(0))
    var i = 0
    while (i < s.length) {
      val matches = byFirst.getOrElse(s(i), Nil)
        .filter(k => symbols(k).length <= s.length - i && symbols(k).indices.forall(b => symbols(k)(b) == s(i + b)))
      if (matches.isEmpty) { out.write(255); out.write(s(i).toInt); i += 1 }
      else { val k = matches.maxBy(symbols(_).length); out.write(k); i += symbols(k).length }
    }
    out.toByteArray
  }

  private def randomSymbols(r: Random): Seq[Array[Byte]] =
    Seq.fill(1 + r.nextInt(254))(Array.fill(1 + r.nextInt(8))(('a' + r.nextInt(4)).toByte))

  private def randomStrings(r: Random, n: Int): Seq[Array[Byte]] =
    Seq.fill(n)(Array.fill(r.nextInt(30))(if (r.nextInt(10) == 0) r.nextInt(256).toByte else ('a' + r.nextInt(4)).toByte))

  test("strings compressed with random symbol tables decompress to themselves, directly and in a mini-block chunk") {
    for (seed <- Seeds; n <- Seq(0, 1, 200)) {
      val r = new Random(seed * 17 + n)
      val symbols = randomSymbols(r)
      val strs = randomStrings(r, n)
      val compressedValues = Blocks.ofValues(strs.map(compress(symbols, _)).asJava, 32)
      val t = Fsst.SymbolTable.parse(table(symbols))
      assert(strings(Fsst.decompress(t, compressedValues, maxBytes)) == strs.map(_.toSeq), s"seed $seed n $n")
      val wide = Blocks.ofValues(strs.map(compress(symbols, _)).asJava, 64)
      val got64 = Fsst.decompress(t, wide, maxBytes)
      assert(got64.offsetBits == 64 && strings(got64) == strs.map(_.toSeq))
      // In a mini-block chunk: variable-width values with inline offsets, then FSST.
      val head = (n + 1) * 4
      val buf = new Array[Byte](head + compressedValues.data.length)
      for (i <- 0 to n) LittleEndian.putInt(buf, 4 * i, head + compressedValues.offset(i).toInt)
      System.arraycopy(compressedValues.data, 0, buf, head, compressedValues.data.length)
      val mb = Decoders21.miniBlock(fsst(table(symbols), variable(32)), maxBytes).decode(Array(slice(buf)), n)
      assert(strings(mb) == strs.map(_.toSeq))
    }
  }

  test("a table with compression off passes strings through") {
    val strs = Blocks.ofValues(Seq("abc".getBytes, Array[Byte](0, -1)).asJava, 32)
    assert(Fsst.decompress(Fsst.SymbolTable.parse(table(Seq("ab".getBytes), enabled = false)), strs, maxBytes) eq strs)
  }

  test("damaged symbol tables and code streams are EncodingExceptions") {
    val symbols = Seq("ab".getBytes, "cde".getBytes)
    val good = table(symbols)
    assert(damaged("short table")(Fsst.SymbolTable.parse(good.take(7))).getMessage == "an FSST symbol table of 7 bytes")
    val noMagic = good.clone(); noMagic(7) = 0
    assert(damaged("magic")(Fsst.SymbolTable.parse(noMagic)).getMessage == "an FSST symbol table without the FSST magic")
    assert(damaged("cut")(Fsst.SymbolTable.parse(good.take(good.length - 1))).getMessage ==
      "an FSST symbol table of 2 symbols in 25 bytes")
    val badLen = good.clone(); badLen(good.length - 1) = 9
    assert(damaged("length 9")(Fsst.SymbolTable.parse(badLen)).getMessage == "FSST symbol 1 has length 9")
    val zero = good.clone(); zero(good.length - 2) = 0
    damaged("length 0")(Fsst.SymbolTable.parse(zero))
    val t = Fsst.SymbolTable.parse(good)
    val unknown = Blocks.ofValues(Seq(Array[Byte](0, 7)).asJava, 32)
    assert(damaged("unknown code")(Fsst.decompress(t, unknown, maxBytes)).getMessage == "FSST code 7 is not in the symbol table")
    val escape = Blocks.ofValues(Seq(Array[Byte](0, -1), Array[Byte](1)).asJava, 32)
    assert(damaged("escape at the end of a string")(Fsst.decompress(t, escape, maxBytes)).getMessage ==
      "an FSST string ends in an escape byte")
    damaged("escape at the end of the data")(Fsst.decompress(t, Blocks.ofValues(Seq(Array[Byte](-1)).asJava, 32), maxBytes))
    val big = Blocks.ofValues(Seq(Array.fill[Byte](100)(1)).asJava, 32)
    assert(damaged("inflates")(Fsst.decompress(t, big, 299)).getMessage == "FSST strings inflate to 300 bytes")
    damaged("damaged table in an encoding")(Decoders21.miniBlock(fsst(badLen, variable(32)), maxBytes))
    for (seed <- Seeds) {
      val r = new Random(seed)
      val syms = randomSymbols(r)
      val codes = compress(syms, randomStrings(r, 1).head ++ "abcabc".getBytes)
      for (m <- mutants(table(syms), r); if m.length >= 8) survives("table mutant") {
        Fsst.decompress(Fsst.SymbolTable.parse(m), Blocks.ofValues(Seq(codes).asJava, 32), maxBytes)
      }
      for (m <- mutants(codes, r)) survives("code mutant") {
        Fsst.decompress(Fsst.SymbolTable.parse(table(syms)), Blocks.ofValues(Seq(m).asJava, 32), maxBytes)
      }
    }
  }
}
