package io.sparklance.core.index

import java.nio.ByteBuffer
import java.nio.charset.StandardCharsets

import scala.jdk.CollectionConverters._

import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.{BigIntVector, FieldVector, Float8Vector, UInt8Vector,
  VarBinaryVector, VectorSchemaRoot}
import org.apache.arrow.vector.complex.StructVector
import org.apache.arrow.vector.types.FloatingPointPrecision
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType, Schema}
import org.roaringbitmap.RoaringBitmap

import io.sparklance.core.{CorruptFileException, FileVersion, InvalidArgumentException}
import io.sparklance.core.file.LanceFileWriter
import io.sparklance.core.schema.ArrowSchemas
import io.sparklance.core.storage.Storage

/**
 * Builds an RTREE index (pylance 14's spatial index, `docs/dev/scalar-indexes.md` §13) as upstream's
 * `rust/lance-index/src/scalar/rtree.rs` lays it out: the bounding box of each row's geometry, packed bottom-up into
 * pages of `page_size` entries in Hilbert order of the boxes' centres.
 *
 *  - `page_data.lance`: columns `bbox` (a non-null struct of non-null float64 `xmin, ymin, xmax, ymax`, field
 *    metadata `ARROW:extension:name = geoarrow.box`) and `id` (non-null uint64). Its first `num_items` rows are the
 *    leaves, one per indexed row, `id` its row address (its stable row id on tables that have them); then each level
 *    above, one entry per page of the level below (`id` the page's number, pages numbered in file order), until a
 *    level fits one page, the root, which is the last. Schema metadata: `page_size`, `num_pages`, `num_items`, and
 *    `bbox`, the box of every item as JSON `{"minx":..,"miny":..,"maxx":..,"maxy":..}` (nulls when there is none).
 *  - `nulls.lance`: one non-null binary `nulls` row, the null rows as a [[RowIdTreeMap]].
 *
 * A geometry with no coordinates (`POINT EMPTY`, an empty line) is neither indexed nor null, as upstream's. Each task
 * writes its fragment's boxes as a run (columns `minx, miny, maxx, maxy, id`, null rows beside it as [[ZoneRuns]]
 * keep them); the driver sorts every run's boxes and writes the pages ([[merge]]).
 *
 * Geometries are WKB (a binary column, as pylance reads one without extension metadata or as `geoarrow.wkb`), or
 * GeoArrow points (a struct of float64 `x`, `y` marked `geoarrow.point`).
 */
object RTreeWriter {
  val PagesFile = "page_data.lance"
  val NullsFile = "nulls.lance"
  val DefaultPageSize = 4096

  /** The Arrow extension names of the geometry columns this writer reads. */
  val PointExtension = "geoarrow.point"
  val WkbExtension = "geoarrow.wkb"

  /** Rows of `page_data.lance` encoded at a time. */
  private val BatchRows = 8192

  private val F64 = new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE)
  private val U64 = new ArrowType.Int(64, false)

  private def f64(name: String): Field = new Field(name, FieldType.notNullable(F64), null)

  private val runSchema = new Schema(Seq(f64("minx"), f64("miny"), f64("maxx"), f64("maxy"),
    new Field("id", FieldType.notNullable(U64), null)).asJava)

  /** `page_data.lance`'s schema, as upstream's `RTREE_PAGE_SCHEMA`. */
  val pageSchema: Schema = new Schema(Seq(
    new Field("bbox", new FieldType(false, ArrowType.Struct.INSTANCE, null,
      Map("ARROW:extension:name" -> "geoarrow.box").asJava),
      Seq(f64("xmin"), f64("ymin"), f64("xmax"), f64("ymax")).asJava),
    new Field("id", FieldType.notNullable(U64), null)).asJava)

  private val nullsSchema = new Schema(Seq(new Field("nulls", FieldType.notNullable(ArrowType.Binary.INSTANCE), null)).asJava)

  /** Boxes and row ids being gathered: plain growable arrays. */
  private final class Boxes {
    var n = 0
    var minX = new Array[Double](1024)
    var minY = new Array[Double](1024)
    var maxX = new Array[Double](1024)
    var maxY = new Array[Double](1024)
    var ids = new Array[Long](1024)

    def add(x0: Double, y0: Double, x1: Double, y1: Double, id: Long): Unit = {
      if (n == ids.length) {
        val m = n * 2
        minX = java.util.Arrays.copyOf(minX, m); minY = java.util.Arrays.copyOf(minY, m)
        maxX = java.util.Arrays.copyOf(maxX, m); maxY = java.util.Arrays.copyOf(maxY, m)
        ids = java.util.Arrays.copyOf(ids, m)
      }
      minX(n) = x0; minY(n) = y0; maxX(n) = x1; maxY(n) = y1; ids(n) = id
      n += 1
    }
  }

  /**
   * Writes the boxes of `geometries` (one fragment's live rows; `ids` their row addresses or stable row ids) as a run
   * at `path`, the null rows beside it. A value that is not valid WKB fails the build naming `column` and the row.
   */
  def writeRun(storage: Storage, path: String, column: String, geometries: FieldVector, ids: BigIntVector,
      allocator: BufferAllocator): Unit = {
    val boxes = new Boxes
    val nulls = scala.collection.mutable.Map.empty[Long, RoaringBitmap]
    val box = new Array[Double](4)
    val n = geometries.getValueCount
    val points = geometries match {
      case s: StructVector => Some((s.getChild("x").asInstanceOf[Float8Vector], s.getChild("y").asInstanceOf[Float8Vector]))
      case _ => None
    }
    var i = 0
    while (i < n) {
      val id = ids.get(i)
      if (geometries.isNull(i)) nulls.getOrElseUpdate(id >>> 32, new RoaringBitmap()).add((id & 0xFFFFFFFFL).toInt)
      else {
        box(0) = Double.PositiveInfinity; box(1) = Double.PositiveInfinity
        box(2) = Double.NegativeInfinity; box(3) = Double.NegativeInfinity
        points match {
          case Some((xs, ys)) =>
            if (!xs.isNull(i) && !ys.isNull(i)) Wkb.addPoint(box, xs.get(i), ys.get(i))
          case None =>
            val bytes = KeyOrder.bytes(geometries, i)
            val end = try Wkb.bounds(bytes, 0, box) catch {
              case e: Wkb.Malformed => throw new InvalidArgumentException(s"Cannot create an RTREE index on column " +
                s"'$column': its value at row ${id & 0xFFFFFFFFL} of fragment ${id >>> 32} is not a WKB geometry " +
                s"(${e.getMessage}). RTREE indexes take WKB in binary columns.")
            }
            if (end != bytes.length) throw new InvalidArgumentException(s"Cannot create an RTREE index on column " +
              s"'$column': its value at row ${id & 0xFFFFFFFFL} of fragment ${id >>> 32} has ${bytes.length - end} " +
              "bytes after its WKB geometry.")
        }
        if (box(0) <= box(2) && box(1) <= box(3)) boxes.add(box(0), box(1), box(2), box(3), id)
      }
      i += 1
    }
    writeBoxes(storage, path, boxes, allocator)
    ZoneRuns.writeNulls(storage, path, nulls)
  }

  private def writeBoxes(storage: Storage, path: String, boxes: Boxes, allocator: BufferAllocator): Unit = {
    val root = VectorSchemaRoot.create(runSchema, allocator)
    try {
      root.getFieldVectors.asScala.foreach { v => v.setInitialCapacity(math.max(boxes.n, 1)); v.allocateNew() }
      val cols = (0 until 4).map(root.getVector(_).asInstanceOf[Float8Vector])
      val ids = root.getVector(4).asInstanceOf[UInt8Vector]
      var i = 0
      while (i < boxes.n) {
        cols(0).set(i, boxes.minX(i)); cols(1).set(i, boxes.minY(i))
        cols(2).set(i, boxes.maxX(i)); cols(3).set(i, boxes.maxY(i))
        ids.set(i, boxes.ids(i))
        i += 1
      }
      root.setRowCount(boxes.n)
      BTreeWriter.writeFile(storage, path, runSchema, Map.empty, Iterator.single(root))
    } finally root.close()
  }

  /**
   * Writes the leaves of an existing RTREE index (in `dir`) as a run at `run`, leaving out rows of fragments `keep`
   * refuses (all are kept when the index holds stable row ids, `rowIds`), its null rows beside it.
   */
  def oldRun(storage: Storage, dir: String, run: String, rowIds: Boolean, keep: Long => Boolean,
      allocator: BufferAllocator): String = {
    val pages = Storage.join(dir, PagesFile)
    val boxes = new Boxes
    IndexFiles.withAll(storage, pages, allocator) { (reader, root) =>
      import IndexFiles.SchemaMetadata
      val items = reader.schemaMetadataString("num_items").map(v => scala.util.Try(v.trim.toLong).toOption
        .filter(n => n >= 0 && n <= root.getRowCount).getOrElse(throw new CorruptFileException(pages,
          s"its schema metadata num_items is '$v', not a number of rows up to ${root.getRowCount}"))).getOrElse(0L).toInt
      val bbox = IndexFiles.column(pages, root, "bbox") match {
        case s: StructVector => s
        case other => throw new CorruptFileException(pages, s"column bbox has type ${other.getField.getType}, not a struct")
      }
      val corners = Seq("xmin", "ymin", "xmax", "ymax").map(c => Option(bbox.getChild(c)).collect {
        case f: Float8Vector => f
      }.getOrElse(throw new CorruptFileException(pages, s"column bbox has no float64 field $c")))
      val ids = IndexFiles.column(pages, root, "id") match {
        case u: UInt8Vector => u
        case other => throw new CorruptFileException(pages, s"column id has type ${other.getField.getType}, not uint64")
      }
      var i = 0
      while (i < items) {
        val id = ids.get(i)
        if (rowIds || keep(id >>> 32)) {
          boxes.add(corners(0).get(i), corners(1).get(i), corners(2).get(i), corners(3).get(i), id)
        }
        i += 1
      }
    }
    writeBoxes(storage, run, boxes, allocator)
    val nullsPath = Storage.join(dir, NullsFile)
    val nulls = new RowSelection.Builder(exact = true)
    IndexFiles.withAll(storage, nullsPath, allocator) { (_, root) =>
      val v = IndexFiles.column(nullsPath, root, "nulls")
      if (root.getRowCount > 0 && !v.isNull(0)) {
        RowIdTreeMap.decodeInto(nullsPath, ByteBuffer.wrap(KeyOrder.bytes(v, 0)), nulls, _ => 0L)
      }
    }
    ZoneRuns.writeNulls(storage, run, nulls.result().byFragment.filter { case (high, _) => rowIds || keep(high) })
    run
  }

  /** Merges the runs into the index's files in `dir`: each file with its size. */
  def merge(storage: Storage, runs: Seq[String], dir: String, pageSize: Int, allocator: BufferAllocator): Seq[(String, Long)] = {
    val boxes = new Boxes
    runs.foreach { run =>
      IndexFiles.withAll(storage, run, allocator) { (_, root) =>
        val c = Seq("minx", "miny", "maxx", "maxy").map(IndexFiles.column(run, root, _).asInstanceOf[Float8Vector])
        val ids = IndexFiles.column(run, root, "id").asInstanceOf[UInt8Vector]
        var i = 0
        while (i < root.getRowCount) {
          boxes.add(c(0).get(i), c(1).get(i), c(2).get(i), c(3).get(i), ids.get(i))
          i += 1
        }
      }
    }
    val nulls = ZoneRuns.readNulls(storage, runs)
    val pages = Storage.join(dir, PagesFile)
    val pagesSize = writePages(storage, pages, hilbertSorted(boxes), pageSize, allocator)
    val nullsPath = Storage.join(dir, NullsFile)
    val root = VectorSchemaRoot.create(nullsSchema, allocator)
    val nullsSize = try {
      val v = root.getVector(0).asInstanceOf[VarBinaryVector]
      v.allocateNew()
      v.setSafe(0, RowIdTreeMap.encode(nulls))
      root.setRowCount(1)
      BTreeWriter.writeFile(storage, nullsPath, nullsSchema, Map.empty, Iterator.single(root))
    } finally root.close()
    Seq(PagesFile -> pagesSize, NullsFile -> nullsSize)
  }

  /** The boxes in upstream's order: by the Hilbert value of their centres in the box of them all (ties: as read). */
  private def hilbertSorted(b: Boxes): Boxes = {
    if (b.n == 0) return b
    var x0 = Double.PositiveInfinity; var y0 = Double.PositiveInfinity
    var x1 = Double.NegativeInfinity; var y1 = Double.NegativeInfinity
    var i = 0
    while (i < b.n) {
      x0 = math.min(x0, b.minX(i)); y0 = math.min(y0, b.minY(i)); x1 = math.max(x1, b.maxX(i)); y1 = math.max(y1, b.maxY(i))
      i += 1
    }
    val width = if (x1 - x0 == 0.0) 1.0 else x1 - x0
    val height = if (y1 - y0 == 0.0) 1.0 else y1 - y0
    val max = 65535.0
    val keys = new Array[Long](b.n)
    i = 0
    while (i < b.n) {
      val hx = saturatedU32(math.floor(max * ((b.minX(i) + b.maxX(i)) / 2 - x0) / width))
      val hy = saturatedU32(math.floor(max * ((b.minY(i) + b.maxY(i)) / 2 - y0) / height))
      // The Hilbert value (u32) in the upper half, flipped in its top bit so that signed order is unsigned order.
      keys(i) = (((Hilbert.index(hx, hy).toLong & 0xFFFFFFFFL) << 32) | i) ^ Long.MinValue
      i += 1
    }
    java.util.Arrays.sort(keys)
    val sorted = new Boxes
    i = 0
    while (i < b.n) {
      val j = (keys(i) & 0xFFFFFFFFL).toInt
      sorted.add(b.minX(j), b.minY(j), b.maxX(j), b.maxY(j), b.ids(j))
      i += 1
    }
    sorted
  }

  /** Rust's `f64 as u32`: NaN is 0, out-of-range values saturate. */
  private def saturatedU32(d: Double): Int =
    if (java.lang.Double.isNaN(d) || d <= 0) 0 else if (d >= 4294967295.0) -1 else d.toLong.toInt

  /** Writes the leaves and the levels above them to `page_data.lance` at `path`; its size. */
  private def writePages(storage: Storage, path: String, leaves: Boxes, pageSize: Int, allocator: BufferAllocator): Long = {
    val all = new Boxes
    var pagesWritten = 0L
    var level = leaves
    var done = leaves.n == 0
    while (!done) {
      val from = all.n
      var i = 0
      while (i < level.n) { all.add(level.minX(i), level.minY(i), level.maxX(i), level.maxY(i), level.ids(i)); i += 1 }
      if (level.n <= pageSize) {
        pagesWritten += 1
        done = true
      } else {
        val up = new Boxes
        var start = 0
        while (start < level.n) {
          val end = math.min(level.n, start + pageSize)
          var x0 = Double.PositiveInfinity; var y0 = Double.PositiveInfinity
          var x1 = Double.NegativeInfinity; var y1 = Double.NegativeInfinity
          var j = start
          while (j < end) {
            x0 = math.min(x0, all.minX(from + j)); y0 = math.min(y0, all.minY(from + j))
            x1 = math.max(x1, all.maxX(from + j)); y1 = math.max(y1, all.maxY(from + j))
            j += 1
          }
          up.add(x0, y0, x1, y1, pagesWritten)
          pagesWritten += 1
          start = end
        }
        level = up
      }
    }
    var x0 = Double.PositiveInfinity; var y0 = Double.PositiveInfinity
    var x1 = Double.NegativeInfinity; var y1 = Double.NegativeInfinity
    var i = 0
    while (i < leaves.n) {
      x0 = math.min(x0, leaves.minX(i)); y0 = math.min(y0, leaves.minY(i))
      x1 = math.max(x1, leaves.maxX(i)); y1 = math.max(y1, leaves.maxY(i))
      i += 1
    }
    val bbox = if (leaves.n == 0) """{"minx":null,"miny":null,"maxx":null,"maxy":null}"""
      else s"""{"minx":${JsonNumber(x0)},"miny":${JsonNumber(y0)},"maxx":${JsonNumber(x1)},"maxy":${JsonNumber(y1)}}"""
    val metadata = Map("page_size" -> pageSize.toString, "num_pages" -> pagesWritten.toString,
      "num_items" -> leaves.n.toString, "bbox" -> bbox)
    val w = LanceFileWriter.create(storage, path, ArrowSchemas.fromArrow(pageSchema)
      .copy(metadata = metadata.map { case (k, v) => k -> v.getBytes(StandardCharsets.UTF_8) }), FileVersion.V2_2)
    try {
      var from = 0
      while (from < all.n) {
        val root = pageBatch(all, from, math.min(all.n, from + BatchRows), allocator)
        try w.write(root) finally root.close()
        from += BatchRows
      }
      w.finish()
    } finally w.close()
  }

  private def pageBatch(all: Boxes, from: Int, to: Int, allocator: BufferAllocator): VectorSchemaRoot = {
    val root = VectorSchemaRoot.create(pageSchema, allocator)
    val n = to - from
    val bbox = root.getVector(0).asInstanceOf[StructVector]
    bbox.setInitialCapacity(math.max(n, 1))
    bbox.allocateNew()
    val c = Seq("xmin", "ymin", "xmax", "ymax").map(bbox.getChild(_).asInstanceOf[Float8Vector])
    val ids = root.getVector(1).asInstanceOf[UInt8Vector]
    ids.setInitialCapacity(math.max(n, 1))
    ids.allocateNew()
    var i = 0
    while (i < n) {
      bbox.setIndexDefined(i)
      c(0).setSafe(i, all.minX(from + i)); c(1).setSafe(i, all.minY(from + i))
      c(2).setSafe(i, all.maxX(from + i)); c(3).setSafe(i, all.maxY(from + i))
      ids.set(i, all.ids(from + i))
      i += 1
    }
    c.foreach(_.setValueCount(n))
    bbox.setValueCount(n)
    ids.setValueCount(n)
    root.setRowCount(n)
    root
  }

  /** The page size a build takes (`page_size`, at least 2 as upstream requires); the default without it. */
  def pageSize(params: Map[String, String]): Int = params.get("page_size").map { v =>
    scala.util.Try(v.trim.toInt).toOption.filter(_ >= 2).getOrElse(throw new InvalidArgumentException(
      s"Index option page_size must be a whole number of at least 2 (entries per R-tree page), not '$v'."))
  }.getOrElse(DefaultPageSize)

  /** The page size of the index in `dir`, from its schema metadata. */
  def pageSizeOf(storage: Storage, dir: String): Option[Int] = {
    val path = Storage.join(dir, PagesFile)
    IndexFiles.withReader(storage, path) { r =>
      import IndexFiles.SchemaMetadata
      r.schemaMetadataString("page_size").map(IndexFiles.positiveInt(path, "page_size", _))
    }
  }

  /**
   * A float as serde_json writes it (ryu's shortest digits): `1.0`, `12345678.9`, `0.0001`, `1e-7`, `1e+20`,
   * `1.5e+300`. The decimal form for exponents from -5 to 16, the scientific form outside.
   */
  private[index] object JsonNumber {
    def apply(d: Double): String = {
      if (java.lang.Double.isNaN(d) || java.lang.Double.isInfinite(d)) return "null"
      if (d == 0.0) return if ((java.lang.Double.doubleToRawLongBits(d) >>> 63) != 0) "-0.0" else "0.0"
      val sign = if (d < 0) "-" else ""
      val bd = new java.math.BigDecimal(java.lang.Double.toString(math.abs(d))).stripTrailingZeros
      val digits = bd.unscaledValue.toString
      val k = -bd.scale
      val kk = digits.length + k
      val body =
        if (k >= 0 && kk <= 16) digits + "0" * k + ".0"
        else if (kk > 0 && kk <= 16) digits.substring(0, kk) + "." + digits.substring(kk)
        else if (kk > -5 && kk <= 0) "0." + "0" * -kk + digits
        else {
          val e = kk - 1
          (if (digits.length == 1) digits else digits.substring(0, 1) + "." + digits.substring(1)) +
            "e" + (if (e < 0) "-" else "+") + math.abs(e)
        }
      sign + body
    }
  }
}

/** The Hilbert index of a point of a 2¹⁶ × 2¹⁶ grid (the algorithm of threadlocalmutex.com, as upstream uses it). */
private[index] object Hilbert {
  def index(x: Int, y: Int): Int = {
    var a1 = x ^ y
    var b1 = 0xFFFF ^ a1
    var c1 = 0xFFFF ^ (x | y)
    var d1 = x & (y ^ 0xFFFF)
    var a2 = a1 | (b1 >>> 1)
    var b2 = (a1 >>> 1) ^ a1
    var c2 = ((c1 >>> 1) ^ (b1 & (d1 >>> 1))) ^ c1
    var d2 = ((a1 & (c1 >>> 1)) ^ (d1 >>> 1)) ^ d1
    var shift = 2
    while (shift <= 8) {
      a1 = a2; b1 = b2; c1 = c2; d1 = d2
      if (shift < 8) {
        a2 = (a1 & (a1 >>> shift)) ^ (b1 & (b1 >>> shift))
        b2 = (a1 & (b1 >>> shift)) ^ (b1 & ((a1 ^ b1) >>> shift))
      }
      c2 ^= (a1 & (c1 >>> shift)) ^ (b1 & (d1 >>> shift))
      d2 ^= (b1 & (c1 >>> shift)) ^ ((a1 ^ b1) & (d1 >>> shift))
      shift *= 2
    }
    a1 = c2 ^ (c2 >>> 1)
    b1 = d2 ^ (d2 >>> 1)
    var i0 = x ^ y
    var i1 = b1 | (0xFFFF ^ (i0 | a1))
    i0 = (i0 | (i0 << 8)) & 0x00FF00FF
    i0 = (i0 | (i0 << 4)) & 0x0F0F0F0F
    i0 = (i0 | (i0 << 2)) & 0x33333333
    i0 = (i0 | (i0 << 1)) & 0x55555555
    i1 = (i1 | (i1 << 8)) & 0x00FF00FF
    i1 = (i1 | (i1 << 4)) & 0x0F0F0F0F
    i1 = (i1 | (i1 << 2)) & 0x33333333
    i1 = (i1 | (i1 << 1)) & 0x55555555
    (i1 << 1) | i0
  }
}

/** The bounding box of a WKB geometry (ISO and EWKB type codes, any dimensions), read with every length checked. */
private[index] object Wkb {
  final class Malformed(message: String) extends Exception(message)

  /**
   * Widens `box` (minx, miny, maxx, maxy) by the coordinates of the geometry at `bytes(offset)`; the offset after it.
   */
  def bounds(bytes: Array[Byte], offset: Int, box: Array[Double]): Int = geometry(bytes, offset, box, 0)

  private def geometry(b: Array[Byte], start: Int, box: Array[Double], depth: Int): Int = {
    if (depth > 64) throw new Malformed("geometries nested more than 64 deep")
    need(b, start, 5)
    val little = b(start) match {
      case 1 => true
      case 0 => false
      case o => throw new Malformed(s"byte order $o at byte $start is neither 0 nor 1")
    }
    val code = u32(b, start + 1, little)
    var p = start + 5
    val ewkbZ = (code & 0x80000000L) != 0
    val ewkbM = (code & 0x40000000L) != 0
    if ((code & 0x20000000L) != 0) { need(b, p, 4); p += 4 }
    val iso = (code & 0x0FFFFFFFL).toInt
    val kind = iso % 1000
    val isoDims = iso / 1000
    if (isoDims > 3) throw new Malformed(s"geometry type $iso at byte $start is not a WKB type")
    val dims = 2 + (if (ewkbZ || isoDims == 1 || isoDims == 3) 1 else 0) + (if (ewkbM || isoDims == 2 || isoDims == 3) 1 else 0)
    def points(at: Int): Int = {
      need(b, at, 4)
      val n = u32(b, at, little)
      val size = n * dims * 8
      if (size > b.length - at - 4) throw new Malformed(s"$n points at byte $at run past the value's ${b.length} bytes")
      var q = at + 4
      var i = 0L
      while (i < n) {
        addPoint(box, f64(b, q, little), f64(b, q + 8, little))
        q += dims * 8
        i += 1
      }
      q
    }
    kind match {
      case 1 =>
        need(b, p, dims * 8)
        addPoint(box, f64(b, p, little), f64(b, p + 8, little))
        p + dims * 8
      case 2 => points(p)
      case 3 =>
        need(b, p, 4)
        val rings = u32(b, p, little)
        p += 4
        var r = 0L
        while (r < rings) { p = points(p); r += 1 }
        p
      case 4 | 5 | 6 | 7 =>
        need(b, p, 4)
        val parts = u32(b, p, little)
        if (parts > b.length) throw new Malformed(s"$parts parts at byte $p in a value of ${b.length} bytes")
        p += 4
        var i = 0L
        while (i < parts) { p = geometry(b, p, box, depth + 1); i += 1 }
        p
      case other => throw new Malformed(s"geometry type $other at byte $start is not a WKB point, line, polygon, " +
        "multi-geometry or collection")
    }
  }

  /** Widens `box` by a point. A NaN coordinate widens nothing on its axis (as pylance's bounds skip it), so a point
   *  with one leaves the box empty on that axis and is not indexed; a line keeps its other points. */
  def addPoint(box: Array[Double], x: Double, y: Double): Unit = {
    if (x < box(0)) box(0) = x
    if (y < box(1)) box(1) = y
    if (x > box(2)) box(2) = x
    if (y > box(3)) box(3) = y
  }

  private def need(b: Array[Byte], at: Int, n: Int): Unit =
    if (at < 0 || n > b.length - at) throw new Malformed(s"it ends at byte ${b.length}, before the ${n} bytes at byte $at")

  private def u32(b: Array[Byte], at: Int, little: Boolean): Long = {
    val v = if (little) (b(at) & 0xFF) | (b(at + 1) & 0xFF) << 8 | (b(at + 2) & 0xFF) << 16 | (b(at + 3) & 0xFF) << 24
      else (b(at + 3) & 0xFF) | (b(at + 2) & 0xFF) << 8 | (b(at + 1) & 0xFF) << 16 | (b(at) & 0xFF) << 24
    v & 0xFFFFFFFFL
  }

  private def f64(b: Array[Byte], at: Int, little: Boolean): Double = {
    var bits = 0L
    var i = 0
    while (i < 8) {
      bits |= (b(if (little) at + i else at + 7 - i) & 0xFFL) << (8 * i)
      i += 1
    }
    java.lang.Double.longBitsToDouble(bits)
  }
}
