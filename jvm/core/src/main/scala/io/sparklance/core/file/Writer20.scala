package io.sparklance.core.file

import java.nio.ByteBuffer

import scala.collection.mutable.ArrayBuffer
import scala.jdk.CollectionConverters._

import org.apache.arrow.memory.ArrowBuf
import org.apache.arrow.vector.{BaseLargeVariableWidthVector, BaseVariableWidthVector, FieldVector, NullVector}
import org.apache.arrow.vector.complex.{FixedSizeListVector, LargeListVector, ListVector, StructVector}

import io.sparklance.core.{InvalidArgumentException, UnsupportedFeatureException}
import io.sparklance.core.encoding.{Encoders20, Growable}
import io.sparklance.core.schema.{LanceField, LogicalType}
import io.sparklance.proto.Encodings20Protos.ArrayEncoding

/**
 * The field writer of file version 2.0 (docs/dev/file-format-2.0.md): one column per field in depth-first
 * pre-order, parents included (§1.4). A struct gets a header column, a list an offsets column; primitives,
 * fixed-size lists, strings, packed structs and blobs are one column each.
 *
 * Each column buffers one page and writes it when it holds `maxPageBytes`; a list's items may span several item
 * pages, but writing an offsets page first flushes its descendants, so no item page spans two offsets pages (what
 * pylance does). Page `length` is the number of items at the column's own level; `priority` is 0.
 */
private[file] final class Writer20(field: LanceField, options: LanceFileWriter.Options) extends FieldWriter {
  import Writer20._

  private val columns = ArrayBuffer.empty[Column]
  private val root: Column = build(field, field.name)

  override val columnFieldIds: IndexedSeq[Int] = columns.map(_.field.id).toIndexedSeq

  override val columnEncodings: IndexedSeq[com.google.protobuf.Any] =
    columns.map(c => if (c.isInstanceOf[BlobColumn]) BlobColumnEncoding else FieldWriter.ValuesColumnEncoding).toIndexedSeq

  override def write(vector: FieldVector, sink: PageSink): Unit = root.append(vector, 0, vector.getValueCount, sink)

  override def finish(sink: PageSink): Unit = root.finish(sink)

  private def build(f: LanceField, path: String): Column = {
    val max = math.max(1L, options.maxPageBytes)
    val index = columns.size
    def add[C <: Column](c: => C): C = { columns += null; val built = c; columns(index) = built; built }
    f.logicalType match {
      case LogicalType.Map =>
        throw new UnsupportedFeatureException(s"Cannot write field '$path' to a Lance file of version 2.0: it is a map, " +
          "and file version 2.0 has no encoding for maps. Write file version 2.1 or later.")
      case LogicalType.Json =>
        throw new UnsupportedFeatureException(s"Cannot write field '$path' to a Lance file of version 2.0: writing the " +
          "json type is not supported yet. Store the JSON text as a string column, or write file version 2.1 or later.")
      case LogicalType.Struct if f.isPacked => add(new PackedColumn(index, f, path, max))
      case LogicalType.Struct =>
        add(new StructColumn(index, f, path, max, f.children.map(c => build(c, s"$path.${c.name}"))))
      case _: LogicalType.List =>
        val col = add(new ListColumn(index, f, path, max))
        col.child = build(f.children.head, s"$path.${f.children.head.name}")
        col
      case LogicalType.Binary(true) if f.isBlob => add(new BlobColumn(index, f, path, max))
      case LogicalType.Utf8(_) | LogicalType.Binary(_) => add(new BinaryColumn(index, f, path, max))
      case LogicalType.Dictionary(value, key, _) => add(new DictionaryColumn(index, f, path, max, value, key))
      case t => add(new FixedColumn(index, f, path, max, t))
    }
  }
}

private[file] object Writer20 {

  /** `/lance.encodings.ColumnEncoding` holding `blob{inner{values{}}}`: the column encoding of a 2.0 blob column. */
  val BlobColumnEncoding: com.google.protobuf.Any = com.google.protobuf.Any.newBuilder()
    .setTypeUrl("/lance.encodings.ColumnEncoding")
    .setValue(com.google.protobuf.ByteString.copyFrom(Array[Byte](0x1a, 0x04, 0x0a, 0x02, 0x0a, 0x00))).build()

  private val DictionaryMinRows = 100
  private val DictionaryMaxItems = 100

  /** Width in bits of one value of a fixed-width scalar type (0 for the null type), or -1 if it is not one. */
  def scalarBits(t: LogicalType): Int = t match {
    case LogicalType.Null => 0
    case LogicalType.Bool => 1
    case LogicalType.Int(bits, _) => bits
    case LogicalType.HalfFloat | LogicalType.BFloat16 => 16
    case LogicalType.Float | LogicalType.Date32 => 32
    case LogicalType.Double | LogicalType.Date64 | LogicalType.Timestamp(_, _) | LogicalType.Duration(_) => 64
    case t: LogicalType.Time => t.bitWidth
    case LogicalType.Decimal(bits, _, _) => bits
    case LogicalType.FixedSizeBinary(w) => 8 * w
    case _ => -1
  }

  /** One column of a 2.0 field: buffers one page of items at its level and writes it through the sink. */
  abstract class Column(val index: Int, val field: LanceField, val path: String, val maxBytes: Long) {
    /** Items buffered in the current page. */
    protected var count = 0
    private var emittedSinceForced = false

    /** Adds items [from, to) of the vector (the items of this column's level). */
    def append(v: FieldVector, from: Int, to: Int, sink: PageSink): Unit

    /** Bytes buffered in the current page. */
    def bufferedBytes: Long

    /** Writes the buffered items as one page (possibly of 0 items) and clears the buffers. */
    protected def emitPage(sink: PageSink): Unit

    protected final def page(sink: PageSink, buffers: Seq[ByteBuffer], encoding: ArrayEncoding): Unit =
      sink.page(index, buffers.toArray, count.toLong, 0L, Encoders20.any(encoding))

    /** Writes the current page if it holds items. */
    def flush(sink: PageSink): Unit = if (count > 0) { emitPage(sink); emittedSinceForced = true }

    /**
     * Writes the current page because the enclosing list wrote an offsets page. Like pylance, a column that wrote
     * no page since the last such flush writes one even if it is empty (a list page of lists with no items is
     * followed by a 0-length item page).
     */
    def forceFlush(sink: PageSink): Unit = {
      if (count > 0 || !emittedSinceForced) emitPage(sink)
      emittedSinceForced = false
    }

    def finish(sink: PageSink): Unit = flush(sink)

    /** Splits [from, to) into chunks of about the room left in the page, given a cost per item. */
    protected final def chunks(from: Int, to: Int, bytesPerItem: Long, sink: PageSink)(body: (Int, Int) => Unit): Unit = {
      var lo = from
      while (lo < to) {
        val room = math.max(1L, (maxBytes - bufferedBytes) / math.max(1L, bytesPerItem))
        val hi = math.min(to.toLong, lo + room).toInt
        body(lo, hi)
        count += hi - lo
        if (bufferedBytes >= maxBytes) flush(sink)
        lo = hi
      }
    }

    protected final def mismatch(v: FieldVector): Nothing =
      throw new InvalidArgumentException(s"Cannot write field '$path' (${field.logicalType}): got an Arrow vector " +
        s"of type ${v.getField.getType}, expected ${LanceFileReader.readField(field).getType}.")
  }

  /** The validity bits [from, to) of a vector, appended to a bitmap; a null-type vector is all null. */
  def appendValidity(bits: Growable.Bits, v: FieldVector, from: Long, to: Long): Unit = v match {
    case _: NullVector => bits.appendConstant(false, (to - from).toInt)
    case _ => bits.append(v.getValidityBuffer, from, (to - from).toInt)
  }

  /**
   * A primitive or (nested) fixed-size list of primitives: `nullable(flat)` or `nullable(fixed_size_list(...))`,
   * one validity bitmap per level (rows, then each list level's items).
   */
  final class FixedColumn(index: Int, field: LanceField, path: String, maxBytes: Long, t: LogicalType)
      extends Column(index, field, path, maxBytes) {
    private val dims: Array[Int] = {
      val out = ArrayBuffer.empty[Int]
      var e = t
      while (e.isInstanceOf[LogicalType.FixedSizeList]) {
        val l = e.asInstanceOf[LogicalType.FixedSizeList]
        out += l.size; e = l.element
      }
      out.toArray
    }
    private val valueBits: Int = {
      var e = t
      while (e.isInstanceOf[LogicalType.FixedSizeList]) e = e.asInstanceOf[LogicalType.FixedSizeList].element
      val b = scalarBits(e)
      if (b < 0) throw new UnsupportedFeatureException(s"Cannot write field '$path' of type $t to a Lance file of version 2.0.")
      b
    }
    private val itemsPerRow: Long = dims.foldLeft(1L)(_ * _)
    private val validity = Array.fill(dims.length + 1)(new Growable.Bits(512))
    private val bytes = new Growable.Bytes(256)
    private val bits = new Growable.Bits(512)

    override def bufferedBytes: Long = bytes.size + bits.bytes + validity.map(_.bytes.toLong).sum

    override def append(v: FieldVector, from: Int, to: Int, sink: PageSink): Unit =
      chunks(from, to, math.max(1L, (itemsPerRow * math.max(valueBits, 1) + 7) / 8), sink) { (lo, hi) =>
        var vec = v
        var a = lo.toLong
        var b = hi.toLong
        var level = 0
        while (level < dims.length) {
          appendValidity(validity(level), vec, a, b)
          vec match {
            case l: FixedSizeListVector if l.getListSize == dims(level) => vec = l.getDataVector
            case other => mismatch(other)
          }
          a *= dims(level); b *= dims(level); level += 1
        }
        appendValidity(validity(level), vec, a, b)
        val n = (b - a).toInt
        valueBits match {
          case 0 =>
          case 1 => bits.append(dataBuffer(vec), a, n)
          case w => bytes.add(dataBuffer(vec), a * (w / 8), n * (w / 8))
        }
      }

    private def dataBuffer(v: FieldVector): ArrowBuf = v match {
      case _: NullVector | _: BaseVariableWidthVector | _: BaseLargeVariableWidthVector => mismatch(v)
      case _ if v.getField.getType.isComplex => mismatch(v)
      case _ => v.getDataBuffer
    }

    override protected def emitPage(sink: PageSink): Unit = {
      val buffers = ArrayBuffer.empty[ByteBuffer]
      def encode(level: Int): ArrayEncoding = {
        val v = validity(level)
        def inner(): ArrayEncoding =
          if (level < dims.length) Encoders20.fixedSizeList(dims(level), encode(level + 1))
          else {
            buffers += (if (valueBits == 1) bits.view() else bytes.view())
            Encoders20.flat(valueBits, buffers.size - 1)
          }
        if (v.ones == 0 || (valueBits == 0 && level == dims.length)) Encoders20.allNulls()
        else if (v.ones == v.size) Encoders20.noNulls(inner())
        else {
          buffers += v.view()
          val at = buffers.size - 1
          Encoders20.someNulls(at, inner())
        }
      }
      val encoding = encode(0)
      page(sink, buffers.toSeq, encoding)
      validity.foreach(_.clearAndShrink()); bytes.clearAndShrink(); bits.clearAndShrink()
      count = 0
    }
  }

  /** Reads offset i of a variable-width or list vector (32- or 64-bit offsets). */
  private def offsetOf(buf: ArrowBuf, large: Boolean, i: Int): Long =
    if (large) buf.getLong(8L * i) else buf.getInt(4L * i).toLong

  /** Strings and binary: `binary` pages, u64 end offsets with nulls marked by `null_adjustment` (§2.3). */
  final class BinaryColumn(index: Int, field: LanceField, path: String, maxBytes: Long)
      extends Column(index, field, path, maxBytes) {
    private val ends = new Growable.Longs(64)
    private val validity = new Growable.Bits(512)
    private val data = new Growable.Bytes(256)

    override def bufferedBytes: Long = 8L * ends.size + data.size

    override def append(v: FieldVector, from: Int, to: Int, sink: PageSink): Unit = {
      val large = v match {
        case _: BaseLargeVariableWidthVector => true
        case _: BaseVariableWidthVector => false
        case other => mismatch(other)
      }
      val offsets = v.getOffsetBuffer
      var lo = from
      while (lo < to) {
        // As many values as fit the page (at least one).
        var hi = lo
        var bytes = bufferedBytes
        while (hi < to && (hi == lo || bytes < maxBytes)) {
          bytes += 8 + offsetOf(offsets, large, hi + 1) - offsetOf(offsets, large, hi)
          hi += 1
        }
        val start = offsetOf(offsets, large, lo)
        val len = offsetOf(offsets, large, hi) - start
        if (len > Growable.MAX_LENGTH - data.size) {
          throw new InvalidArgumentException(s"Cannot write field '$path': a value of $len bytes does not fit a page.")
        }
        val base = data.size.toLong - start
        data.add(v.getDataBuffer, start, len.toInt)
        var i = lo
        while (i < hi) { ends.add(base + offsetOf(offsets, large, i + 1)); i += 1 }
        appendValidity(validity, v, lo, hi)
        count += hi - lo
        if (bufferedBytes >= maxBytes) flush(sink)
        lo = hi
      }
    }

    override protected def emitPage(sink: PageSink): Unit = {
      if (!(dictionaryCandidate && count >= DictionaryMinRows && emitDictionaryPage(sink))) {
        val adjustment = if (count == 0) 0L else data.size.toLong + 1
        page(sink, Seq(Encoders20.binaryIndices(ends, validity, adjustment), data.view()), Encoders20.binary(0, 1, adjustment))
      }
      ends.clearAndShrink(); validity.clearAndShrink(); data.clearAndShrink()
      count = 0
    }

    // Like pylance, a page of a plain `string` field (not large, not binary, no compression asked for) with at
    // least 100 rows and fewer than 100 distinct values is a dictionary page (§2.4 a).
    private val dictionaryCandidate =
      field.logicalType == LogicalType.Utf8(false) && !field.metadata.contains("lance-encoding:compression")
    private lazy val dict = new io.sparklance.core.encoding.DictionaryBuilder

    /**
     * Writes the page as `dictionary{indices: u8 1-based (0 = null), items: binary}` if it has fewer than 100
     * distinct values; returns false (and writes nothing) otherwise. A page with no non-null value has one null item.
     */
    private def emitDictionaryPage(sink: PageSink): Boolean = {
      dict.clear()
      var i = 0
      var start = 0L
      while (i < count && dict.items < DictionaryMaxItems) {
        val end = ends.data(i)
        if (validity.get(i)) dict.add(data.data, start.toInt, (end - start).toInt) else dict.addNull()
        start = end
        i += 1
      }
      if (dict.items >= DictionaryMaxItems) return false
      val rows = dict.rowItems
      val indices = new Array[Byte](count)
      i = 0
      while (i < count) { indices(i) = (rows(i) + 1).toByte; i += 1 }
      val itemValidity = new Growable.Bits(512)
      val itemEnds = dict.itemEnds
      val numItems = math.max(1, dict.items)
      if (dict.items == 0) { itemEnds.add(0L); itemValidity.appendConstant(false, 1) }
      else itemValidity.appendConstant(true, dict.items)
      val adjustment = dict.itemBytes.size + 1L
      page(sink, Seq(ByteBuffer.wrap(indices), Encoders20.binaryIndices(itemEnds, itemValidity, adjustment), dict.itemBytes.view()),
        Encoders20.dictionary(Encoders20.noNulls(Encoders20.flat(8, 0)), Encoders20.binary(1, 2, adjustment), numItems))
      dict.clear()
      true
    }
  }

  /** A list's offsets column: `list` pages of page-relative u64 ends, null lists marked by the adjustment (§2.7). */
  final class ListColumn(index: Int, field: LanceField, path: String, maxBytes: Long)
      extends Column(index, field, path, maxBytes) {
    var child: Column = _
    private val ends = new Growable.Longs(64)
    private val validity = new Growable.Bits(512)

    override def bufferedBytes: Long = 8L * ends.size

    override def append(v: FieldVector, from: Int, to: Int, sink: PageSink): Unit = {
      val (large, items) = v match {
        case l: ListVector => (false, l.getDataVector)
        case l: LargeListVector => (true, l.getDataVector)
        case other => mismatch(other)
      }
      val offsets = v.getOffsetBuffer
      chunks(from, to, 8L, sink) { (lo, hi) =>
        var end = ends.last
        var i = lo
        while (i < hi) {
          end += offsetOf(offsets, large, i + 1) - offsetOf(offsets, large, i)
          ends.add(end)
          i += 1
        }
        appendValidity(validity, v, lo, hi)
        val a = offsetOf(offsets, large, lo)
        val b = offsetOf(offsets, large, hi)
        if (b - a > Int.MaxValue) throw new InvalidArgumentException(s"Cannot write field '$path': lists of ${b - a} items.")
        child.append(items, a.toInt, b.toInt, sink)
      }
    }

    override protected def emitPage(sink: PageSink): Unit = {
      val numItems = ends.last
      val adjustment = numItems + 1
      page(sink, Seq(Encoders20.binaryIndices(ends, validity, adjustment)), Encoders20.list(adjustment, numItems))
      ends.clearAndShrink(); validity.clearAndShrink()
      count = 0
      child.forceFlush(sink)
    }

    override def finish(sink: PageSink): Unit = { flush(sink); child.finish(sink) }
  }

  /** A struct's header column: one `struct{}` page of the total item count, written at the end (§2.8). */
  final class StructColumn(index: Int, field: LanceField, path: String, maxBytes: Long, children: Seq[Column])
      extends Column(index, field, path, maxBytes) {
    private var total = 0L
    private var forced = false

    override def bufferedBytes: Long = 0L

    override def append(v: FieldVector, from: Int, to: Int, sink: PageSink): Unit = {
      val s = v match {
        case s: StructVector if s.getChildrenFromFields.size == children.size => s
        case other => mismatch(other)
      }
      checkNoNulls(s, from, to, path)
      total += to - from
      children.zip(s.getChildrenFromFields.asScala).foreach { case (c, cv) => c.append(cv, from, to, sink) }
    }

    override protected def emitPage(sink: PageSink): Unit = ()

    override def flush(sink: PageSink): Unit = ()

    override def forceFlush(sink: PageSink): Unit = { forced = true; children.foreach(_.forceFlush(sink)) }

    override def finish(sink: PageSink): Unit = {
      children.foreach(_.finish(sink))
      if (total > 0 || forced) sink.page(index, Array.empty, total, 0L, Encoders20.any(Encoders20.struct()))
    }
  }

  /** Refuses null structs: 2.0 has no encoding for struct validity (file-format-2.0.md §1.4). */
  def checkNoNulls(s: StructVector, from: Int, to: Int, path: String): Unit = {
    var nulls = 0
    var i = from
    while (i < to) { if (s.isNull(i)) nulls += 1; i += 1 }
    if (nulls > 0) {
      throw new UnsupportedFeatureException(s"Cannot write struct field '$path' to a Lance file of version 2.0: it " +
        s"contains $nulls null value(s), and file version 2.0 does not store struct validity. Write file version 2.1 " +
        "or later, or replace the null structs with structs of null fields.")
    }
  }

  /**
   * A packed struct (`lance-encoding:packed`): one `packed_struct` column of row-major records, the children's
   * fixed-width values back to back (§2.9). Children must be fixed-width (not bool) and hold no nulls.
   */
  final class PackedColumn(index: Int, field: LanceField, path: String, maxBytes: Long)
      extends Column(index, field, path, maxBytes) {
    private val widths: Array[Int] = field.children.map { c =>
      var t = c.logicalType
      var items = 1L
      while (t.isInstanceOf[LogicalType.FixedSizeList]) {
        items *= t.asInstanceOf[LogicalType.FixedSizeList].size; t = t.asInstanceOf[LogicalType.FixedSizeList].element
      }
      val bits = scalarBits(t)
      if (bits <= 1 || bits % 8 != 0) {
        throw new UnsupportedFeatureException(s"Cannot write packed struct field '$path' to a Lance file of version " +
          s"2.0: its child '${c.name}' has type ${c.logicalType}, and 2.0 packs only fixed-width children (not bool). " +
          "Remove the lance-encoding:packed metadata, or write file version 2.2.")
      }
      (items * bits / 8).toInt
    }.toArray
    private val rowBytes = widths.sum
    private val rows = new Growable.Bytes(256)

    override def bufferedBytes: Long = rows.size

    override def append(v: FieldVector, from: Int, to: Int, sink: PageSink): Unit = {
      val s = v match {
        case s: StructVector if s.getChildrenFromFields.size == widths.length => s
        case other => mismatch(other)
      }
      checkNoNulls(s, from, to, path)
      val leaves = s.getChildrenFromFields.asScala.zip(field.children).map { case (cv, cf) => leafOf(cv, cf, from, to) }.toArray
      chunks(from, to, math.max(1, rowBytes), sink) { (lo, hi) =>
        var r = lo
        while (r < hi) {
          var c = 0
          while (c < widths.length) {
            rows.add(leaves(c).getDataBuffer, r.toLong * widths(c), widths(c))
            c += 1
          }
          r += 1
        }
      }
    }

    /** The vector holding a child's values (through fixed-size lists), after checking it has no nulls. */
    private def leafOf(v: FieldVector, f: LanceField, from: Int, to: Int): FieldVector = {
      var vec = v
      var a = from.toLong
      var b = to.toLong
      while (true) {
        if (vec.isInstanceOf[NullVector] || Encoders20.countOnes(vec.getValidityBuffer, a, (b - a).toInt) != b - a) {
          throw new UnsupportedFeatureException(s"Cannot write packed struct field '$path' to a Lance file of version " +
            s"2.0: its child '${f.name}' contains nulls, which packed structs cannot store. Remove the " +
            "lance-encoding:packed metadata to store nulls.")
        }
        vec match {
          case l: FixedSizeListVector => a *= l.getListSize; b *= l.getListSize; vec = l.getDataVector
          case _ if vec.getField.getType.isComplex => mismatch(vec)
          case _ => return vec
        }
      }
      vec
    }

    override protected def emitPage(sink: PageSink): Unit = {
      def inner(t: LogicalType): ArrayEncoding = t match {
        case LogicalType.FixedSizeList(e, dim) => Encoders20.noNulls(Encoders20.fixedSizeList(dim, inner(e)))
        case other => Encoders20.noNulls(Encoders20.flat(scalarBits(other), 0))
      }
      page(sink, Seq(rows.view()), Encoders20.packedStruct(field.children.map(c => inner(c.logicalType)).asJava, 0))
      rows.clearAndShrink()
      count = 0
    }
  }

  /**
   * A blob column (large_binary with `lance-encoding:blob=true`): each value's bytes go to the data region, the
   * page holds (position, size) descriptors as a `packed_struct`; (1, 0) is null, (0, 0) empty (§2.11).
   */
  final class BlobColumn(index: Int, field: LanceField, path: String, maxBytes: Long)
      extends Column(index, field, path, maxBytes) {
    private val descriptors = new Growable.Bytes(256)

    override def bufferedBytes: Long = descriptors.size

    override def append(v: FieldVector, from: Int, to: Int, sink: PageSink): Unit = {
      val b = v match {
        case b: BaseLargeVariableWidthVector => b
        case other => mismatch(other)
      }
      val offsets = b.getOffsetBuffer
      chunks(from, to, 16L, sink) { (lo, hi) =>
        var i = lo
        while (i < hi) {
          val start = offsets.getLong(8L * i)
          val size = offsets.getLong(8L * (i + 1)) - start
          if (b.isNull(i)) { descriptors.u64(1L); descriptors.u64(0L) }
          else if (size == 0) { descriptors.u64(0L); descriptors.u64(0L) }
          else {
            if (size > Int.MaxValue) throw new InvalidArgumentException(s"Cannot write field '$path': a blob of $size bytes.")
            descriptors.u64(sink.raw(b.getDataBuffer.nioBuffer(start, size.toInt)))
            descriptors.u64(size)
          }
          i += 1
        }
      }
    }

    override protected def emitPage(sink: PageSink): Unit = {
      val d = Encoders20.noNulls(Encoders20.flat(64, 0))
      page(sink, Seq(descriptors.view()), Encoders20.packedStruct(java.util.List.of(d, d), 0))
      descriptors.clearAndShrink()
      count = 0
    }
  }

  /**
   * An Arrow dictionary field (`dict:<value>:<key>:<ordered>`): a `dictionary` page per page, with 0-based indices
   * of the key's width and the page's distinct values as items; null rows point at one null item appended to the
   * items (§2.4 b). The vector holds the decoded values, as the reader returns them.
   */
  final class DictionaryColumn(index: Int, field: LanceField, path: String, maxBytes: Long, value: LogicalType,
      key: LogicalType.Int) extends Column(index, field, path, maxBytes) {
    private val variable = value match {
      case LogicalType.Utf8(_) | LogicalType.Binary(_) => true
      case _ => false
    }
    private val width: Int = if (variable) 0 else {
      val bits = scalarBits(value)
      if (bits <= 1 || bits % 8 != 0) {
        throw new UnsupportedFeatureException(s"Cannot write dictionary field '$path' of type ${field.logicalType} " +
          "to a Lance file of version 2.0: only string, binary and fixed-width values are supported. Cast the " +
          "column to its value type.")
      }
      bits / 8
    }
    private val keyBytes = key.bitWidth / 8
    // The largest index the key type holds; the items (and the null item) must stay within it.
    private val maxIndex: Long = math.min(1L << 20, if (key.signed) (1L << (key.bitWidth - 1)) - 1 else (1L << math.min(key.bitWidth, 62)) - 1)
    private val dict = new io.sparklance.core.encoding.DictionaryBuilder

    override def bufferedBytes: Long = dict.itemBytes.size + 8L * dict.items + keyBytes.toLong * count

    override def append(v: FieldVector, from: Int, to: Int, sink: PageSink): Unit = {
      val large = v match {
        case _: BaseLargeVariableWidthVector if variable => true
        case _: BaseVariableWidthVector if variable => false
        case _ if !variable && !v.getField.getType.isComplex && !v.isInstanceOf[NullVector] => false
        case other => mismatch(other)
      }
      val offsets = if (variable) v.getOffsetBuffer else null
      val data = v.getDataBuffer
      val validity = v.getValidityBuffer
      var i = from
      while (i < to) {
        if (dict.items >= maxIndex || bufferedBytes >= maxBytes) flush(sink)
        if (((validity.getByte(i.toLong >>> 3) >>> (i & 7)) & 1) == 0) dict.addNull()
        else if (variable) {
          val start = offsetOf(offsets, large, i)
          dict.add(data, start, (offsetOf(offsets, large, i + 1) - start).toInt)
        } else dict.add(data, i.toLong * width, width)
        count += 1
        i += 1
      }
      if (bufferedBytes >= maxBytes) flush(sink)
    }

    override protected def emitPage(sink: PageSink): Unit = {
      val distinct = dict.items
      val numItems = distinct + (if (dict.anyNull) 1 else 0)
      val rows = dict.rowItems
      var r = 0
      while (r < count) { if (rows(r) < 0) rows(r) = distinct; r += 1 }
      val buffers = ArrayBuffer[ByteBuffer](Encoders20.narrowIndices(rows, count, keyBytes))
      val validity = new Growable.Bits(512)
      validity.appendConstant(true, distinct)
      if (dict.anyNull) validity.appendConstant(false, 1)
      val items =
        if (variable) {
          val ends = dict.itemEnds
          if (dict.anyNull) ends.add(ends.last)
          val adjustment = if (numItems == 0) 0L else dict.itemBytes.size + 1L
          buffers += Encoders20.binaryIndices(ends, validity, adjustment)
          buffers += dict.itemBytes.view()
          Encoders20.binary(1, 2, adjustment)
        } else if (numItems == 0 || distinct == 0) Encoders20.allNulls()
        else if (!dict.anyNull) { buffers += dict.itemBytes.view(); Encoders20.noNulls(Encoders20.flat(8 * width, 1)) }
        else {
          buffers += validity.view()
          val values = java.util.Arrays.copyOf(dict.itemBytes.data, dict.itemBytes.size + width)
          buffers += ByteBuffer.wrap(values)
          Encoders20.someNulls(1, Encoders20.flat(8 * width, 2))
        }
      page(sink, buffers.toSeq, Encoders20.dictionary(Encoders20.noNulls(Encoders20.flat(8 * keyBytes, 0)), items, numItems))
      dict.clear()
      count = 0
    }
  }
}
