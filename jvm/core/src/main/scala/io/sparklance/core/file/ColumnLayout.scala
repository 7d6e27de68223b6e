package io.sparklance.core.file

import org.apache.arrow.vector.types.pojo.{ArrowType, Field}

import io.sparklance.core.UnsupportedFeatureException
import io.sparklance.core.encoding.LeafShape
import io.sparklance.core.schema.{LanceField, LogicalType}

/**
 * How the fields of a Lance schema are stored in columns, whatever the file version: which fields are packed
 * structs or blobs, which are leaf columns (2.1+), and the shape of a leaf column's values. The readers and the
 * writers of every version agree on it.
 */
private[file] object ColumnLayout {

  /** The value shape of a leaf column of this field. */
  def shapeOf(f: LanceField): LeafShape = {
    import LogicalType._
    def scalar(t: LogicalType): LeafShape = t match {
      case Bool => LeafShape.fixed(1)
      case Int(bits, _) => LeafShape.fixed(bits)
      case HalfFloat | BFloat16 => LeafShape.fixed(16)
      case Float | Date32 => LeafShape.fixed(32)
      case Double | Date64 | Timestamp(_, _) | Duration(_) => LeafShape.fixed(64)
      case t: Time => LeafShape.fixed(t.bitWidth)
      case Decimal(bits, _, _) => LeafShape.fixed(bits)
      case FixedSizeBinary(w) => LeafShape.fixed(8 * w)
      case Null => LeafShape.fixed(8)
      case Utf8(large) => LeafShape.variable(if (large) 64 else 32)
      case Binary(large) => LeafShape.variable(if (large) 64 else 32)
      case Json => LeafShape.variable(64)
      case Dictionary(value, _, _) => scalar(value)
      case FixedSizeList(elem, dim) => LeafShape.fixedSizeList(dim, scalar(elem))
      case other => throw new UnsupportedFeatureException(s"Field '${f.name}' of type $other is not a leaf column")
    }
    if (f.isPacked) LeafShape.struct(f.children.map(c => packedChild(f, c)).toArray) else scalar(f.logicalType)
  }

  /**
   * The shape of a packed struct's child: a value of fixed width, a string or a binary. pylance 14 also writes a
   * packed struct with a list, map or (not packed) struct child when every value of the column is null (it fails on any other),
   * which this reader refuses by name (fuzz seed 20261415).
   */
  private def packedChild(struct: LanceField, c: LanceField): LeafShape = c.logicalType match {
    case _: LogicalType.List | LogicalType.Map | LogicalType.Struct if !c.isPacked =>
      throw new UnsupportedFeatureException(s"Cannot read field '${struct.name}': it is a packed struct " +
        s"(lance-encoding:packed) with the ${c.logicalType} child '${c.name}', which this reader does not support yet. " +
        "Write the column without lance-encoding:packed.")
    case _ => shapeOf(c)
  }

  /** The fields of a field's subtree stored as columns (2.1+): leaves, and packed structs as one. */
  def leavesOf(f: LanceField): Seq[LanceField] = f.logicalType match {
    case LogicalType.Struct if !f.isPacked => f.children.flatMap(leavesOf)
    case _: LogicalType.List | LogicalType.Map => f.children.flatMap(leavesOf)
    case _ => Seq(f)
  }

  /** [[LanceField.isPacked]] of the Arrow field a read produces. */
  def isPackedArrow(f: Field): Boolean = f.getType.isInstanceOf[ArrowType.Struct] &&
    LanceField.PackedKeys.exists(k => Option(f.getMetadata.get(k)).exists(_.equalsIgnoreCase("true")))
}
