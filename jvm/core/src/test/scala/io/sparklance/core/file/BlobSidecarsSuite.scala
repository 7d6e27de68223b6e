package io.sparklance.core.file

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.storage.InMemoryStorage

/** [[BlobSidecars]]: names and ids as pylance 14 gives them, shared and dedicated files, and abandoning them. */
class BlobSidecarsSuite extends AnyFunSuite {

  test("a sidecar is named by its id's 32 bits, least significant first, in the data file's directory") {
    assert(BlobSidecars.fileName(1) == "1" + "0" * 31 + ".blob")
    assert(BlobSidecars.fileName(2) == "01" + "0" * 30 + ".blob")
    assert(BlobSidecars.fileName(3) == "11" + "0" * 30 + ".blob")
    assert(BlobSidecars.fileName(0xFFFFFFFFL) == "1" * 32 + ".blob")
    assert(BlobSidecars.directory("/t/data/abc.lance") == "/t/data/abc")
  }

  test("ids count from 1 in the order files open; shared blobs follow each other in one file") {
    val storage = new InMemoryStorage
    val s = new BlobSidecars(storage, "/t/data/f.lance")
    val bytes = Array.tabulate[Byte](300)(_.toByte)
    assert(s.packed(bytes, 0, 100) == ((1L, 0L)))
    assert(s.dedicated(bytes, 100, 50) == 2L)
    assert(s.packed(bytes, 150, 150) == ((1L, 100L)))
    s.finish()
    def read(id: Long) = storage.readAll(s"/t/data/f/${BlobSidecars.fileName(id)}").toSeq
    assert(read(1) == (bytes.slice(0, 100) ++ bytes.slice(150, 300)).toSeq)
    assert(read(2) == bytes.slice(100, 150).toSeq)
  }

  test("abandoned sidecars are deleted with their directory") {
    val storage = new InMemoryStorage
    val s = new BlobSidecars(storage, "/t/data/f.lance")
    s.packed(Array[Byte](1, 2, 3), 0, 3)
    s.dedicated(Array[Byte](4), 0, 1)
    s.abandon()
    assert(storage.list("/t/data/f").isEmpty)
  }
}
