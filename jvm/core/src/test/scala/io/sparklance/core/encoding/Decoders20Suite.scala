package io.sparklance.core.encoding

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.proto.Encodings20Protos.{ArrayEncoding, Compression, Flat, Fsst => Fsst20}

/**
 * The 2.0 array encodings: page buffers laid out here and described with the writer's {@link Encoders20} messages,
 * decoded by {@link Decoders20}: flat, nullable, fixed-size lists, strings with null adjustments, dictionaries,
 * packed structs and FSST, then damaged buffers and encoding trees.
 */
class Decoders20Suite extends AnyFunSuite {
  import EncodingTesting._

  private val maxBytes = 64L << 20
  private def target(shape: LeafShape, offsetBits: Int = 32, arrowDictionary: Boolean = false) =
    new Decoders20.Target(shape, offsetBits, arrowDictionary)

  private def decode(e: ArrayEncoding, page: Seq[Array[Byte]], n: Int, t: Decoders20.Target): Decoders20.Values =
    Decoders20.decode(e, page.map(Slice.of).toArray, n, t, maxBytes)

  private def validBits(v: Decoders20.Values, n: Int): Seq[Boolean] =
    (0 until n).map(i => v.validity == null || Bits.get(v.validity, i.toLong))

  /** A 1-bit validity bitmap of `valid`. */
  private def bitmap(valid: Seq[Boolean]): Array[Byte] = {
    val b = new Array[Byte]((valid.size + 7) / 8)
    valid.indices.foreach(i => if (valid(i)) Bits.set(b, i.toLong, 1L))
    b
  }

  test("flat values, with no nulls, some nulls and all nulls, at many lengths") {
    for (seed <- Seeds; n <- Boundaries) {
      val r = new Random(seed + n)
      val vals = bytes(r, 4 * n)
      val valid = IndexedSeq.fill(n)(r.nextInt(4) != 0)
      val plain = decode(Encoders20.noNulls(Encoders20.flat(32, 0)), Seq(vals), n, target(LeafShape.fixed(32)))
      assert(fixedBytes(plain.block) == vals.toSeq && plain.validity == null)
      val some = decode(Encoders20.someNulls(0, Encoders20.flat(32, 1)), Seq(bitmap(valid), vals), n, target(LeafShape.fixed(32)))
      assert(fixedBytes(some.block) == vals.toSeq && validBits(some, n) == valid)
      val none = decode(Encoders20.allNulls(), Nil, n, target(LeafShape.fixed(32)))
      assert(none.block.numValues == n && validBits(none, n).forall(!_) == true)
      val bools = decode(Encoders20.flat(1, 0), Seq(bitmap(valid)), n, target(LeafShape.fixed(1)))
      assert(bits(bools.block) == valid)
    }
  }

  test("zstd- and lz4-compressed flat buffers") {
    val vals = values(new Random(1), 3000, 8, 10)
    val out = new Growable.Bytes(64)
    Codecs.zstdCompress(vals, 0, vals.length, 3, out)
    val e = ArrayEncoding.newBuilder().setFlat(Flat.newBuilder().setBitsPerValue(64).setBuffer(Encoders20.buffer(0))
      .setCompression(Compression.newBuilder().setScheme("zstd"))).build()
    assert(fixedBytes(decode(e, Seq(out.toArray), 3000, target(LeafShape.fixed(64))).block) == vals.toSeq)
    val none = e.toBuilder.setFlat(e.getFlat.toBuilder.setCompression(Compression.newBuilder().setScheme("none"))).build()
    assert(fixedBytes(decode(none, Seq(vals), 3000, target(LeafShape.fixed(64))).block) == vals.toSeq)
    damaged("brotli")(decode(e.toBuilder.setFlat(e.getFlat.toBuilder.setCompression(Compression.newBuilder().setScheme("brotli"))).build(),
      Seq(vals), 3000, target(LeafShape.fixed(64))))
    damaged("damaged frame")(decode(e, Seq(out.toArray.dropRight(5)), 3000, target(LeafShape.fixed(64))))
  }

  test("fixed-size lists of flat items with item nulls") {
    for (n <- Seq(0, 1, 1025); dim <- Seq(1, 3, 8)) {
      val r = new Random(n * dim)
      val items = bytes(r, 2 * n * dim)
      val valid = IndexedSeq.fill(n * dim)(r.nextBoolean())
      val e = Encoders20.fixedSizeList(dim, Encoders20.someNulls(0, Encoders20.flat(16, 1)))
      val got = decode(e, Seq(bitmap(valid), items), n, target(LeafShape.fixedSizeList(dim, LeafShape.fixed(16))))
      val fsl = got.block.asInstanceOf[DataBlock.FixedSizeList]
      assert(fsl.dimension == dim && fsl.numValues == n && fixedBytes(fsl.child) == items.toSeq)
      assert((0 until n * dim).map(k => Bits.get(fsl.itemValidity, k.toLong)) == valid)
    }
    damaged("dimension 0")(decode(Encoders20.fixedSizeList(0, Encoders20.flat(8, 0)), Seq(new Array[Byte](4)), 4,
      target(LeafShape.fixedSizeList(1, LeafShape.fixed(8)))))
    damaged("too many items")(Decoders20.decode(Encoders20.fixedSizeList(1 << 20, Encoders20.flat(8, 0)), Array(Slice.of(new Array[Byte](4))),
      1 << 10, target(LeafShape.fixedSizeList(1 << 20, LeafShape.fixed(8))), 1000))
  }

  /** A `binary` page of strings (None: null): u64 ends, null ends raised by `adjustment`, then the bytes. */
  private def binaryPage(vals: Seq[Option[String]], adjustment: Long): Seq[Array[Byte]] = {
    val ends = new Array[Byte](8 * vals.size)
    var end = 0L
    val data = new java.io.ByteArrayOutputStream()
    vals.zipWithIndex.foreach { case (v, i) =>
      v.foreach { s => data.write(s.getBytes("UTF-8")); end += s.getBytes("UTF-8").length }
      LittleEndian.putLong(ends, 8 * i, if (v.isEmpty) end + adjustment else end)
    }
    Seq(ends, data.toByteArray)
  }

  private def stringsOf(v: Decoders20.Values, n: Int): Seq[Option[String]] = {
    val s = strings(v.block)
    (0 until n).map(i => if (validBits(v, n)(i)) Some(new String(s(i).toArray, "UTF-8")) else None)
  }

  private def randomStrings(r: Random, n: Int): IndexedSeq[Option[String]] =
    IndexedSeq.fill(n)(if (r.nextInt(5) == 0) None else Some(Seq("", "a", "bcd", "ünï", "x" * 30)(r.nextInt(5))))

  test("strings with null adjustments, as 32- and 64-bit offsets") {
    for (seed <- Seeds; n <- Seq(0, 1, 100, 1025); ob <- Seq(32, 64)) {
      val vals = randomStrings(new Random(seed + n), n)
      val total = vals.flatten.map(_.getBytes("UTF-8").length).sum
      val got = decode(Encoders20.binary(0, 1, total + 1L), binaryPage(vals, total + 1L), n, target(LeafShape.variable(ob), ob))
      assert(got.block.asInstanceOf[DataBlock.VariableWidth].offsetBits == ob && stringsOf(got, n) == vals, s"n $n")
    }
  }

  test("dictionaries of strings: 1-based indices with 0 as null, and 0-based indices of Arrow dictionaries") {
    val items = Seq(Some("zero"), Some("one"), Some("two"))
    val itemPage = binaryPage(items, 100)
    val idx = Array[Byte](1, 0, 3, 2, 1)
    val e = Encoders20.dictionary(Encoders20.noNulls(Encoders20.flat(8, 0)), Encoders20.binary(1, 2, 100), 3)
    val got = decode(e, idx +: itemPage, 5, target(LeafShape.variable(32)))
    assert(stringsOf(got, 5) == Seq(Some("zero"), None, Some("two"), Some("one"), Some("zero")))
    val arrow = decode(e, Array[Byte](0, 2, 1) +: itemPage, 3, target(LeafShape.variable(32), arrowDictionary = true))
    assert(stringsOf(arrow, 3) == Seq(Some("zero"), Some("two"), Some("one")))
    assert(damaged("index past the items")(decode(e, Array[Byte](1, 4) +: itemPage, 2, target(LeafShape.variable(32)))).getMessage ==
      "dictionary index 4 of 3 items")
    val wide = Encoders20.dictionary(Encoders20.noNulls(Encoders20.flat(64, 0)), Encoders20.binary(1, 2, 100), 3)
    damaged("a u64 index of 2^64 - 2")(decode(wide, Array.fill[Byte](8)(-1).updated(0, (-2).toByte) +: itemPage, 1,
      target(LeafShape.variable(32))))
    damaged("an Arrow dictionary index of 2^64 - 1")(decode(wide, Array.fill[Byte](8)(-1) +: itemPage, 1,
      target(LeafShape.variable(32), arrowDictionary = true)))
  }

  test("packed structs of flat fields and fixed-size lists") {
    val n = 1025
    val rows = bytes(new Random(3), n * (4 + 2 * 3))
    val e = Encoders20.packedStruct(java.util.Arrays.asList(Encoders20.flat(32, 0),
      Encoders20.fixedSizeList(3, Encoders20.noNulls(Encoders20.flat(16, 0)))), 0)
    val st = decode(e, Seq(rows), n, target(LeafShape.fixed(8))).block.asInstanceOf[DataBlock.Struct]
    assert(fixedBytes(st.children(0)) == (0 until n).flatMap(i => rows.slice(10 * i, 10 * i + 4)))
    assert(fixedBytes(st.children(1).asInstanceOf[DataBlock.FixedSizeList].child) == (0 until n).flatMap(i => rows.slice(10 * i + 4, 10 * i + 10)))
    assert(damaged("short")(decode(e, Seq(rows.dropRight(1)), n, target(LeafShape.fixed(8)))).getMessage ==
      s"packed struct rows needs ${10 * n} bytes at offset 0, but the buffer has ${10 * n - 1}")
    damaged("nullable field")(decode(Encoders20.packedStruct(java.util.Arrays.asList(Encoders20.someNulls(0, Encoders20.flat(8, 1))), 0),
      Seq(rows), 1, target(LeafShape.fixed(8))))
    damaged("12-bit field")(decode(Encoders20.packedStruct(java.util.Arrays.asList(Encoders20.flat(12, 0)), 0), Seq(rows), 1,
      target(LeafShape.fixed(8))))
  }

  test("FSST strings over a binary page") {
    // One symbol "ab" (code 0); "abc" is coded as the symbol, then an escaped 'c'.
    val table = new Array[Byte](8 + 9)
    LittleEndian.putLong(table, 0, (0x46535354L << 32) | (1L << 24) | 1)
    table(8) = 'a'; table(9) = 'b'; table(16) = 2
    val ends = new Array[Byte](24)
    LittleEndian.putLong(ends, 0, 3); LittleEndian.putLong(ends, 8, 3 + 100); LittleEndian.putLong(ends, 16, 3)
    val page = Seq(ends, Array[Byte](0, -1, 'c'))
    val e = ArrayEncoding.newBuilder().setFsst(Fsst20.newBuilder().setBinary(Encoders20.binary(0, 1, 100))
      .setSymbolTable(com.google.protobuf.ByteString.copyFrom(table))).build()
    for (ob <- Seq(32, 64)) {
      val got = decode(e, page, 3, target(LeafShape.variable(ob), ob))
      assert(stringsOf(got, 3) == Seq(Some("abc"), None, Some("")) && got.block.asInstanceOf[DataBlock.VariableWidth].offsetBits == ob)
    }
    damaged("damaged table")(decode(e.toBuilder.setFsst(e.getFsst.toBuilder.setSymbolTable(com.google.protobuf.ByteString.copyFrom(table.take(9))))
      .build(), page, 3, target(LeafShape.variable(32))))
  }

  test("damaged 2.0 pages and encoding trees are EncodingExceptions") {
    val vals = randomStrings(new Random(9), 200)
    val total = vals.flatten.map(_.getBytes("UTF-8").length).sum
    val page = binaryPage(vals, total + 1L)
    val e = Encoders20.binary(0, 1, total + 1L)
    val t = target(LeafShape.variable(32))
    assert(damaged("buffer index")(decode(e, page.take(1), 200, t)).getMessage == "buffer index 1 of a page with 1 buffers")
    val goesBack = page.head.clone(); LittleEndian.putLong(goesBack, 8 * 100, 1L)
    assert(damaged("an end going back")(decode(e, Seq(goesBack, page(1)), 200, t)).getMessage.startsWith("string end 1 before"))
    val huge = page.head.clone(); LittleEndian.putLong(huge, 8 * 150, -5L)
    damaged("an end past 2^63")(decode(Encoders20.binary(0, 1, 0), Seq(huge, page(1)), 200, t))
    damaged("bytes missing")(decode(e, Seq(page.head, page(1).dropRight(1)), 200, t))
    assert(damaged("no encoding")(decode(ArrayEncoding.getDefaultInstance, page, 200, t)).getMessage ==
      "an encoding that names no array encoding")
    damaged("string indices that are not u64")(decode(io.sparklance.proto.Encodings20Protos.ArrayEncoding.newBuilder().setBinary(
      e.getBinary.toBuilder.setIndices(Encoders20.flat(32, 0))).build(), page, 200, t))
    for (seed <- Seeds; b <- page.indices; m <- mutants(page(b), new Random(seed), flips = 12)) survives("mutant") {
      decode(e, page.updated(b, m), 200, t)
    }
  }
}
