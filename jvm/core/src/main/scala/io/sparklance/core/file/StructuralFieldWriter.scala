package io.sparklance.core.file

import org.apache.arrow.vector.FieldVector

import io.sparklance.core.{FileVersion, UnsupportedFeatureException}
import io.sparklance.core.encoding.{LeafShredder, StructuralPageEncoder}
import io.sparklance.core.schema.{LanceField, LogicalType}

/**
 * Writes one top-level field in file version 2.1 or 2.2: one column per leaf (docs/dev/file-format-2.1.md §1.4),
 * each leaf shredded into levels and values and cut into pages of about `maxPageBytes`.
 */
final class StructuralFieldWriter(field: LanceField, version: FileVersion, options: LanceFileWriter.Options)
    extends FieldWriter {
  import StructuralFieldWriter._

  private val leaves: IndexedSeq[Leaf] = pathsTo(field).map(path => new Leaf(path))

  override val columnFieldIds: IndexedSeq[Int] = leaves.map(_.field.id)

  private final class Leaf(val path: Seq[LanceField]) {
    val field: LanceField = path.last
    val shredder: LeafShredder = shredderFor(path, version)
    val bitpackable: Boolean = options.bitpacking && isIntegerLike(field.logicalType)
    /** A field marked `lance-encoding:compression=none` (pylance's index posting lists): nothing is bitpacked. */
    val uncompressed: Boolean = field.metadataStrings.get("lance-encoding:compression").contains("none")
    var firstRow = 0L
  }

  override def write(vector: FieldVector, sink: PageSink): Unit = {
    val n = vector.getValueCount
    var from = 0
    while (from < n) {
      val to = math.min(n, from + SliceRows)
      var c = 0
      while (c < leaves.size) {
        val leaf = leaves(c)
        leaf.shredder.shred(vector, from, to)
        if (leaf.shredder.bufferedBytes() >= options.maxPageBytes) flush(c, sink)
        c += 1
      }
      from = to
    }
  }

  override def finish(sink: PageSink): Unit =
    leaves.indices.foreach(c => if (leaves(c).shredder.rows > 0) flush(c, sink))

  private def flush(column: Int, sink: PageSink): Unit = {
    val leaf = leaves(column)
    val s = leaf.shredder
    val page =
      if (leaf.uncompressed) StructuralPageEncoder.encodeUncompressed(s, version == FileVersion.V2_2)
      else if (options.dictionaries) StructuralPageEncoder.encode(s, version == FileVersion.V2_2, leaf.bitpackable)
      else StructuralPageEncoder.encodeWithoutPageDictionary(s, version == FileVersion.V2_2, leaf.bitpackable)
    val any = com.google.protobuf.Any.newBuilder().setTypeUrl(PageLayoutTypeUrl).setValue(page.layout.toByteString).build()
    sink.page(column, page.buffers, s.rows, leaf.firstRow, any)
    leaf.firstRow += s.rows
    s.clear()
  }
}

object StructuralFieldWriter {
  private val PageLayoutTypeUrl = "/lance.encodings21.PageLayout"
  /** Rows shredded between page-size checks. */
  private val SliceRows = 1024

  /** The paths from the field down to each of its leaf columns. */
  private def pathsTo(f: LanceField): IndexedSeq[Seq[LanceField]] = f.logicalType match {
    case LogicalType.Struct if !f.isPacked => f.children.flatMap(c => pathsTo(c).map(f +: _))
    case _: LogicalType.List | LogicalType.Map => f.children.flatMap(c => pathsTo(c).map(f +: _))
    case _ => IndexedSeq(Seq(f))
  }

  private def isIntegerLike(t: LogicalType): Boolean = t match {
    case _: LogicalType.Int | LogicalType.Date32 | LogicalType.Date64 | _: LogicalType.Time | _: LogicalType.Timestamp |
         _: LogicalType.Duration => true
    case _ => false
  }

  private def shredderFor(path: Seq[LanceField], version: FileVersion): LeafShredder = {
    val leaf = path.last
    def refuse(what: String): Nothing = throw new UnsupportedFeatureException(s"Cannot write field '${path.map(_.name)
      .mkString(".")}': $what is not supported by the sparklance file writer yet. Write it with pylance, or leave the " +
      "column out.")
    if (path.exists(f => f.isBlob || f.isBlobV2)) {
      refuse("a blob column (lance-encoding:blob)")
    }
    val kinds = path.map { f =>
      if (f eq leaf) LeafShredder.LEAF
      else f.logicalType match {
        case LogicalType.Struct => LeafShredder.STRUCT
        case _ => LeafShredder.LIST
      }
    }.toArray
    val names = path.map(_.name).toArray
    if (leaf.isPacked) {
      val widths = leaf.children.map { c =>
        c.logicalType match {
          case LogicalType.Bool | LogicalType.Null | _: LogicalType.FixedSizeList => None
          case t => fixedWidth(t)
        }
      }
      val variableWidths = leaf.children.map(_.logicalType match {
        case LogicalType.Utf8(large) => Some(if (large) -64 else -32)
        case LogicalType.Binary(large) => Some(if (large) -64 else -32)
        case _ => None
      })
      if (widths.forall(_.isDefined)) {
        val s = new LeafShredder(kinds, names, LeafShredder.PACKED_STRUCT, widths.flatten.sum, null)
        s.packedWidths = widths.flatten.toArray
        return s
      }
      val all = widths.zip(variableWidths).map { case (f, v) => f.orElse(v) }
      if (version != FileVersion.V2_2 || all.exists(_.isEmpty)) {
        refuse("a packed struct with variable-width, boolean or nested children" +
          (if (version != FileVersion.V2_2) " in file version 2.1 (2.2 writes variable-width children)" else ""))
      }
      val s = new LeafShredder(kinds, names, LeafShredder.VARIABLE_PACKED_STRUCT, 32, null)
      s.packedWidths = all.flatten.toArray
      return s
    }
    def fixedBytes(t: LogicalType): Int = fixedWidth(t).getOrElse(refuse(s"a fixed-size list of $t values"))
    leaf.logicalType match {
      case LogicalType.Bool => new LeafShredder(kinds, names, LeafShredder.BOOL, 1, null)
      case LogicalType.Null => new LeafShredder(kinds, names, LeafShredder.NULL, 1, null)
      case LogicalType.Utf8(large) => new LeafShredder(kinds, names, LeafShredder.VARIABLE, if (large) 64 else 32, null)
      case LogicalType.Binary(large) => new LeafShredder(kinds, names, LeafShredder.VARIABLE, if (large) 64 else 32, null)
      case LogicalType.Json =>
        val s = new LeafShredder(kinds, names, LeafShredder.VARIABLE, 64, null)
        s.json = true
        s
      case LogicalType.Dictionary(value, key, _) =>
        val s = value match {
          case LogicalType.Utf8(large) => new LeafShredder(kinds, names, LeafShredder.VARIABLE, if (large) 64 else 32, null)
          case LogicalType.Binary(large) => new LeafShredder(kinds, names, LeafShredder.VARIABLE, if (large) 64 else 32, null)
          case other => new LeafShredder(kinds, names, LeafShredder.FIXED, fixedWidth(other).getOrElse(
            refuse(s"a dictionary of $other values")), null)
        }
        s.dictionaryKeyBits = key.bitWidth
        s
      case fsl: LogicalType.FixedSizeList =>
        val dims = Iterator.iterate[LogicalType](fsl) { case LogicalType.FixedSizeList(e, _) => e; case o => o }
          .takeWhile(_.isInstanceOf[LogicalType.FixedSizeList]).map(_.asInstanceOf[LogicalType.FixedSizeList]).toSeq
        val elem = dims.last.element
        new LeafShredder(kinds, names, LeafShredder.FIXED_SIZE_LIST, fixedBytes(elem), dims.map(_.size).toArray)
      case other => new LeafShredder(kinds, names, LeafShredder.FIXED, fixedWidth(other).getOrElse(refuse(s"type $other")), null)
    }
  }

  /** Bytes per value of a fixed-width logical type. */
  private def fixedWidth(t: LogicalType): Option[Int] = t match {
    case LogicalType.Int(bits, _) => Some(bits / 8)
    case LogicalType.HalfFloat | LogicalType.BFloat16 => Some(2)
    case LogicalType.Float | LogicalType.Date32 => Some(4)
    case LogicalType.Double | LogicalType.Date64 | _: LogicalType.Timestamp | _: LogicalType.Duration => Some(8)
    case tt: LogicalType.Time => Some(tt.bitWidth / 8)
    case LogicalType.Decimal(bits, _, _) => Some(bits / 8)
    case LogicalType.FixedSizeBinary(w) => Some(w)
    case _ => None
  }
}
