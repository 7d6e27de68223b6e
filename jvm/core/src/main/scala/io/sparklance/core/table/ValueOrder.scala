package io.sparklance.core.table

import org.apache.arrow.vector._
import org.apache.arrow.vector.types.pojo.ArrowType

/**
 * SQL's order of the non-null values of one Arrow type, as Spark orders them: integers and dates by value (unsigned
 * integers as unsigned), floats with every NaN equal and greater than any other value and -0.0 equal to 0.0
 * (Spark's `SQLOrderingUtil`), strings and binaries by their bytes, unsigned, booleans false before true, decimals by
 * value. Compares a row of one vector with a row of another of the same type (a batch's and a zone map's `min`, say).
 */
private[table] abstract class ValueOrder {
  /** Negative, zero or positive as row `i` of `a` sorts before, with or after row `j` of `b`; neither is null. */
  def compare(a: ValueVector, i: Int, b: ValueVector, j: Int): Int
}

private[table] object ValueOrder {
  /** The order of values of `t`, or None when this reader does not order that type (lists, structs, maps, ...). */
  def of(t: ArrowType): Option[ValueOrder] = t match {
    case i: ArrowType.Int if i.getIsSigned => Some(Signed)
    case _: ArrowType.Int => Some(Unsigned)
    case f: ArrowType.FloatingPoint if f.getPrecision != org.apache.arrow.vector.types.FloatingPointPrecision.HALF => Some(Floats)
    case _: ArrowType.Bool => Some(Booleans)
    case _: ArrowType.Utf8 | _: ArrowType.LargeUtf8 | _: ArrowType.Binary | _: ArrowType.LargeBinary |
         _: ArrowType.FixedSizeBinary => Some(Bytes)
    case _: ArrowType.Date | _: ArrowType.Timestamp => Some(Signed)
    case d: ArrowType.Decimal if d.getBitWidth == 128 => Some(Decimals)
    case _ => None
  }

  private def long(v: ValueVector, i: Int): Long = v match {
    case x: BigIntVector => x.get(i)
    case x: IntVector => x.get(i).toLong
    case x: SmallIntVector => x.get(i).toLong
    case x: TinyIntVector => x.get(i).toLong
    case x: DateDayVector => x.get(i).toLong
    case x: DateMilliVector => x.get(i)
    case x: TimeStampVector => x.get(i)
    case other => throw new IllegalStateException(s"no signed order for ${other.getField}")
  }

  private object Signed extends ValueOrder {
    def compare(a: ValueVector, i: Int, b: ValueVector, j: Int): Int = java.lang.Long.compare(long(a, i), long(b, j))
  }

  private def unsigned(v: ValueVector, i: Int): Long = v match {
    case x: UInt8Vector => x.get(i)
    case x: UInt4Vector => x.get(i).toLong & 0xFFFFFFFFL
    case x: UInt2Vector => x.get(i).toLong & 0xFFFFL
    case x: UInt1Vector => x.get(i).toLong & 0xFFL
    case other => throw new IllegalStateException(s"no unsigned order for ${other.getField}")
  }

  private object Unsigned extends ValueOrder {
    def compare(a: ValueVector, i: Int, b: ValueVector, j: Int): Int = java.lang.Long.compareUnsigned(unsigned(a, i), unsigned(b, j))
  }

  private def double(v: ValueVector, i: Int): Double = v match {
    case x: Float8Vector => x.get(i)
    case x: Float4Vector => x.get(i).toDouble
    case other => throw new IllegalStateException(s"no float order for ${other.getField}")
  }

  /** Spark's order of doubles: equal values (0.0 and -0.0 among them) are equal, NaN is equal to NaN and above all. */
  def compareDoubles(x: Double, y: Double): Int =
    if (x == y) 0 else java.lang.Double.compare(x, y)

  private object Floats extends ValueOrder {
    def compare(a: ValueVector, i: Int, b: ValueVector, j: Int): Int = compareDoubles(double(a, i), double(b, j))
  }

  private object Booleans extends ValueOrder {
    def compare(a: ValueVector, i: Int, b: ValueVector, j: Int): Int =
      Integer.compare(a.asInstanceOf[BitVector].get(i), b.asInstanceOf[BitVector].get(j))
  }

  private def bytes(v: ValueVector, i: Int): Array[Byte] = v match {
    case x: VarCharVector => x.get(i)
    case x: LargeVarCharVector => x.get(i)
    case x: VarBinaryVector => x.get(i)
    case x: LargeVarBinaryVector => x.get(i)
    case x: FixedSizeBinaryVector => x.get(i)
    case other => throw new IllegalStateException(s"no byte order for ${other.getField}")
  }

  private object Bytes extends ValueOrder {
    def compare(a: ValueVector, i: Int, b: ValueVector, j: Int): Int = {
      val x = bytes(a, i)
      val y = bytes(b, j)
      val n = math.min(x.length, y.length)
      var k = 0
      var c = 0
      while (c == 0 && k < n) { c = Integer.compare(x(k) & 0xFF, y(k) & 0xFF); k += 1 }
      if (c != 0) c else Integer.compare(x.length, y.length)
    }
  }

  private object Decimals extends ValueOrder {
    def compare(a: ValueVector, i: Int, b: ValueVector, j: Int): Int =
      a.asInstanceOf[DecimalVector].getObject(i).compareTo(b.asInstanceOf[DecimalVector].getObject(j))
  }
}
