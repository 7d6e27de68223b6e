package io.sparklance.spark

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector._
import org.apache.arrow.vector.complex.{FixedSizeListVector, LargeListVector, ListVector, MapVector, StructVector}
import org.apache.arrow.vector.types.TimeUnit
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType}
import org.apache.spark.sql.types._

/**
 * Converts the Arrow vectors the core reads into the Arrow vectors Spark's `ArrowColumnVector` understands for
 * the Spark type each column maps to (docs/types.md): unsigned integers widen, half floats widen, date64 becomes
 * days, times become nanoseconds, timestamps and durations become microseconds (or stay as their raw LONG),
 * fixed-size binaries become binaries, decimal256 becomes decimal128, fixed-size and large lists become lists.
 * Vectors Spark already reads are passed through untouched, without copying.
 */
object SparkArrow {

  /** Returns a vector Spark can read as `dt`: `v` itself when it already fits (then `v` is not closed), else a new one. */
  def convert(v: FieldVector, dt: DataType, allocator: BufferAllocator): FieldVector = (v, dt) match {
    // A blob descriptor's position or size (BlobHandling.DescriptorType): offsets and lengths in a file, below 2^63.
    case (u: UInt8Vector, LongType) => longs(u, u.get, allocator)
    case (_: UInt1Vector | _: UInt2Vector | _: UInt4Vector | _: UInt8Vector, _) => unsigned(v, dt, allocator)
    case (h, FloatType) if HalfFloats.holds(h) =>
      fixed(h, new Float4Vector(h.getName, allocator), (o: Float4Vector, i: Int) => o.set(i, HalfFloats.get(h, i)))
    case (d: DateMilliVector, DateType) =>
      fixed(d, new DateDayVector(d.getName, allocator), (o: DateDayVector, i: Int) => o.set(i, Math.floorDiv(d.get(i), 86400000L).toInt))
    // Where Spark has no TIME type, times read as LONG nanoseconds of the day (TimeTypes).
    case (NanosOfDay(t, nanos), LongType) => longs(t, nanos, allocator)
    case (t: TimeNanoVector, LongType) => longs(t, t.get, allocator)
    case (NanosOfDay(t, nanos), _) if TimeTypes.isTime(dt) =>
      fixed(t, new TimeNanoVector(t.getName, allocator), (o: TimeNanoVector, i: Int) => o.set(i, nanos(i)))
    // TIME(6): Spark holds nanoseconds of the day, but the type's precision is microseconds (docs/types.md).
    case (t: TimeNanoVector, _) if TimeTypes.isTime(dt) => fixed(t, new TimeNanoVector(t.getName, allocator), (o: TimeNanoVector, i: Int) => o.set(i, t.get(i) - Math.floorMod(t.get(i), 1000L)))
    case (t: TimeStampVector, TimestampType | TimestampNTZType) if !isMicro(t) => timestamp(t, dt, allocator)
    case (t: TimeStampVector, LongType) => longs(t, t.get, allocator)
    case (d: DurationVector, _: DayTimeIntervalType) if d.getUnit != TimeUnit.MICROSECOND =>
      val f = unitToMicros(d.getUnit)
      val out = new DurationVector(Field.nullable(d.getName, new ArrowType.Duration(TimeUnit.MICROSECOND)), allocator)
      fixed(d, out, (o: DurationVector, i: Int) => o.set(i, f(DurationVector.get(d.getDataBuffer, i))))
    case (d: DurationVector, LongType) => longs(d, i => DurationVector.get(d.getDataBuffer, i), allocator)
    case (b: FixedSizeBinaryVector, BinaryType) =>
      val out = new VarBinaryVector(b.getName, allocator)
      out.allocateNew(b.getByteWidth.toLong * b.getValueCount, b.getValueCount)
      (0 until b.getValueCount).foreach(i => if (!b.isNull(i)) out.setSafe(i, b.get(i)))
      out.setValueCount(b.getValueCount); out
    case (d: Decimal256Vector, StringType) =>
      val out = new VarCharVector(d.getName, allocator)
      out.allocateNew(d.getValueCount.toLong * 24, d.getValueCount)
      (0 until d.getValueCount).foreach(i => if (!d.isNull(i)) out.setSafe(i, d.getObject(i).toPlainString.getBytes("UTF-8")))
      out.setValueCount(d.getValueCount); out
    case (b: FixedSizeBinaryVector, FloatType) if b.getByteWidth == 2 =>
      // bfloat16: the high 16 bits of a float32.
      fixed(b, new Float4Vector(b.getName, allocator), (o: Float4Vector, i: Int) => {
        val bits = (b.getDataBuffer.getShort(2L * i) & 0xFFFF) << 16
        o.set(i, java.lang.Float.intBitsToFloat(bits))
      })
    case (d: Decimal256Vector, t: DecimalType) =>
      val out = new DecimalVector(d.getName, allocator, t.precision, t.scale)
      fixed(d, out, (o: DecimalVector, i: Int) => o.set(i, d.getObject(i)))
    case (l: FixedSizeListVector, ArrayType(et, _)) =>
      val child = convert(l.getDataVector, et, allocator)
      list(l, offsetsOf(l.getValueCount)(_.toLong * l.getListSize), child, child ne l.getDataVector, allocator)
    case (l: LargeListVector, ArrayType(et, _)) =>
      val child = convert(l.getDataVector, et, allocator)
      list(l, offsetsOf(l.getValueCount)(i => l.getOffsetBuffer.getLong(8L * i)), child, child ne l.getDataVector, allocator)
    case (m: MapVector, MapType(kt, vt, _)) =>
      val entries = m.getDataVector.asInstanceOf[StructVector]
      val k = entries.getChildByOrdinal(0).asInstanceOf[FieldVector]
      val vv = entries.getChildByOrdinal(1).asInstanceOf[FieldVector]
      val ck = convert(k, kt, allocator)
      val cv = convert(vv, vt, allocator)
      if ((ck eq k) && (cv eq vv)) m
      else rebuildMap(m, ck, cv, allocator)
    case (l: ListVector, ArrayType(et, _)) =>
      val child = convert(l.getDataVector, et, allocator)
      if (child eq l.getDataVector) l
      else list(l, offsetsOf(l.getValueCount)(i => l.getOffsetBuffer.getInt(4L * i).toLong), child, owned = true, allocator)
    // One part of a blob v2 column (BlobColumns.view): its bytes, or its positions or sizes (uint64, below 2^63).
    case (s: StructVector, BinaryType | LongType) if s.getChildrenFromFields.size == 1 =>
      s.getChildrenFromFields.get(0) match {
        case u: UInt8Vector => longs(u, u.get, allocator)
        case c =>
          val out = c.getField.createVector(allocator)
          c.makeTransferPair(out).transfer()
          out
      }
    case (s: StructVector, st: StructType) =>
      val children = s.getChildrenFromFields.asScala.zip(st.fields).map { case (c, f) => convert(c, f.dataType, allocator) }
      if (children.zip(s.getChildrenFromFields.asScala).forall { case (a, b) => a eq b }) s
      else rebuildStruct(s, children.toSeq, allocator)
    case (_: LargeVarBinaryVector | _: LargeVarCharVector | _: VarCharVector | _: VarBinaryVector, _) => v
    case _ => v
  }

  /** The n + 1 offsets of n lists (a plain loop: this runs for every batch of a list column). */
  private def offsetsOf(n: Int)(offset: Int => Long): Array[Long] = {
    val out = new Array[Long](n + 1)
    var i = 0
    while (i <= n) { out(i) = offset(i); i += 1 }
    out
  }

  private def isMicro(t: TimeStampVector): Boolean = t match {
    case _: TimeStampMicroVector | _: TimeStampMicroTZVector => true
    case _ => false
  }

  // Seconds and milliseconds can overflow 64-bit microseconds: an error, never a wrapped value.
  private def unitToMicros(u: TimeUnit): Long => Long = u match {
    case TimeUnit.SECOND => Math.multiplyExact(_, 1000000L)
    case TimeUnit.MILLISECOND => Math.multiplyExact(_, 1000L)
    case TimeUnit.MICROSECOND => x => x
    case TimeUnit.NANOSECOND => x => Math.floorDiv(x, 1000L)
  }

  private def timestamp(t: TimeStampVector, dt: DataType, allocator: BufferAllocator): FieldVector = {
    val unit = t.getField.getType.asInstanceOf[ArrowType.Timestamp].getUnit
    val f = unitToMicros(unit)
    if (dt == TimestampType) {
      val out = new TimeStampMicroTZVector(Field.nullable(t.getName, new ArrowType.Timestamp(TimeUnit.MICROSECOND, "UTC")), allocator)
      fixed(t, out, (o: TimeStampMicroTZVector, i: Int) => o.set(i, f(t.get(i))))
    } else {
      fixed(t, new TimeStampMicroVector(t.getName, allocator), (o: TimeStampMicroVector, i: Int) => o.set(i, f(t.get(i))))
    }
  }

  private def unsigned(v: FieldVector, dt: DataType, allocator: BufferAllocator): FieldVector = v match {
    case u: UInt1Vector => fixed(u, new SmallIntVector(u.getName, allocator), (o: SmallIntVector, i: Int) => o.set(i, (u.get(i) & 0xFF).toShort))
    case u: UInt2Vector => fixed(u, new IntVector(u.getName, allocator), (o: IntVector, i: Int) => o.set(i, u.get(i).toInt))
    case u: UInt4Vector => fixed(u, new BigIntVector(u.getName, allocator), (o: BigIntVector, i: Int) => o.set(i, u.get(i) & 0xFFFFFFFFL))
    case u: UInt8Vector =>
      val out = new DecimalVector(u.getName, allocator, 20, 0)
      fixed(u, out, (o: DecimalVector, i: Int) => o.set(i, new java.math.BigDecimal(new java.math.BigInteger(java.lang.Long.toUnsignedString(u.get(i))))))
    case other => other
  }

  /** A time vector of seconds, milliseconds or microseconds, with its values as nanoseconds of the day. */
  private object NanosOfDay {
    def unapply(v: ValueVector): Option[(BaseFixedWidthVector, Int => Long)] = v match {
      case t: TimeSecVector => Some((t, i => t.get(i) * 1000000000L))
      case t: TimeMilliVector => Some((t, i => t.get(i) * 1000000L))
      case t: TimeMicroVector => Some((t, i => t.get(i) * 1000L))
      case _ => None
    }
  }

  private def longs(v: BaseFixedWidthVector, get: Int => Long, allocator: BufferAllocator): FieldVector =
    fixed(v, new BigIntVector(v.getName, allocator), (o: BigIntVector, i: Int) => o.set(i, get(i)))

  /** Fills `out` value by value from non-null positions of `in` (nulls stay null); closes nothing. */
  private def fixed[O <: BaseFixedWidthVector](in: ValueVector, out: O, set: (O, Int) => Unit): O = {
    val n = in.getValueCount
    try {
      out.allocateNew(n)
      var i = 0
      while (i < n) { if (!in.isNull(i)) set(out, i); i += 1 }
      out.setValueCount(n)
      out
    } catch { case NonFatal(e) => out.close(); throw e }
  }

  /** A ListVector over `child` with the given offsets and `l`'s validity, built buffer by buffer. */
  private def list(l: FieldVector, offsets: Array[Long], child: FieldVector, owned: Boolean, allocator: BufferAllocator): FieldVector = {
    val n = l.getValueCount
    val out = ListVector.empty(l.getName, allocator)
    out.addOrGetVector[FieldVector](FieldType.nullable(child.getField.getType))
    child.makeTransferPair(out.getDataVector).transfer()
    if (owned) child.close()
    val off = allocator.buffer(4L * (n + 1))
    val valid = allocator.buffer(math.max(1L, (n + 7) / 8))
    try {
      var i = 0
      while (i <= n) {
        if (offsets(i) > Int.MaxValue) throw new IllegalStateException(s"list column '${l.getName}' too long for Spark")
        off.setInt(4L * i, offsets(i).toInt)
        i += 1
      }
      valid.setBytes(0, l.getValidityBuffer, 0, (n + 7) / 8)
      out.loadFieldBuffers(new org.apache.arrow.vector.ipc.message.ArrowFieldNode(n, l.getNullCount),
        java.util.List.of(valid, off))
    } finally {
      off.getReferenceManager.release()
      valid.getReferenceManager.release()
    }
    out
  }

  private def rebuildStruct(s: StructVector, children: Seq[FieldVector], allocator: BufferAllocator): FieldVector = {
    val out = StructVector.empty(s.getName, allocator)
    children.foreach { c =>
      val target = out.addOrGet(c.getName, c.getField.getFieldType, c.getClass.asInstanceOf[Class[FieldVector]])
      c.makeTransferPair(target).transfer()
    }
    val n = s.getValueCount
    out.setInitialCapacity(n)
    (0 until n).foreach(i => if (!s.isNull(i)) out.setIndexDefined(i) else out.setNull(i))
    out.setValueCount(n)
    out
  }

  private def rebuildMap(m: MapVector, keys: FieldVector, values: FieldVector, allocator: BufferAllocator): FieldVector = {
    val n = m.getValueCount
    val out = MapVector.empty(m.getName, allocator, false)
    // Before the entries get their buffers: allocating a map allocates its children anew.
    out.setInitialCapacity(n)
    out.allocateNew()
    val entries = out.addOrGetVector[StructVector](FieldType.notNullable(ArrowType.Struct.INSTANCE)).getVector
    val k = entries.addOrGet("key", new FieldType(false, keys.getField.getType, null), keys.getClass.asInstanceOf[Class[FieldVector]])
    val v = entries.addOrGet("value", values.getField.getFieldType, values.getClass.asInstanceOf[Class[FieldVector]])
    keys.makeTransferPair(k).transfer()
    values.makeTransferPair(v).transfer()
    val items = k.getValueCount
    (0 until items).foreach(entries.setIndexDefined)
    entries.setValueCount(items)
    var i = 0
    while (i < n) {
      val start = m.getOffsetBuffer.getInt(4L * i)
      val end = m.getOffsetBuffer.getInt(4L * (i + 1))
      if (!m.isNull(i)) { out.startNewValue(i); out.endValue(i, end - start) }
      else { out.setNull(i); out.getOffsetBuffer.setInt(4L * (i + 1), end) }
      i += 1
    }
    out.setValueCount(n)
    out
  }
}
