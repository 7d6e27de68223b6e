package io.sparklance.spark

import java.math.{BigDecimal => JBigDecimal}

import scala.jdk.CollectionConverters._

import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector._
import org.apache.arrow.vector.complex.{FixedSizeListVector, LargeListVector, ListVector, MapVector, StructVector}
import org.apache.arrow.vector.types.TimeUnit
import org.apache.arrow.vector.types.pojo.Schema
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.SpecializedGetters
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import io.sparklance.core.{InvalidArgumentException, UnsupportedFeatureException, ValueOutOfRangeException}

import io.sparklance.core.schema.{ArrowSchemas, LanceField}

/**
 * Fills Arrow vectors of a Lance table's types (the Arrow types the file writer takes, [[ArrowSchemas.plain]])
 * from Spark rows, the inverse of the read mapping of docs/types.md: Spark's microsecond timestamps and durations
 * become the column's unit, nanosecond times of day become the column's time unit, wider Spark integers fill
 * unsigned columns (range-checked), arrays fill fixed-size lists (length-checked), and so on. Values that do not
 * fit the Lance column are an error naming the column, never silently changed; the one narrowing is Spark's
 * microsecond timestamps into second or millisecond columns, floored as Spark's own Parquet writer does.
 */
final class ArrowRowWriter(fields: Seq[LanceField], sparkSchema: StructType, allocator: BufferAllocator,
    invalidUtf8: ArrowRowWriter.InvalidUtf8 = ArrowRowWriter.InvalidUtf8.Refuse) extends AutoCloseable {
  import ArrowRowWriter._

  val root: VectorSchemaRoot = VectorSchemaRoot.create(new Schema(fields.map(ArrowSchemas.plain).asJava), allocator)
  root.allocateNew()
  private val writers: Array[ValueWriter] = fields.indices.map { i =>
    writerFor(root.getVector(i), sparkSchema(i).dataType, fields(i).name, invalidUtf8)
  }.toArray
  private var rows = 0
  private var earlierRows = 0L

  def rowCount: Int = rows

  /** Appends one row (its columns in the order of the Lance fields). */
  def write(row: InternalRow): Unit = {
    var i = 0
    try while (i < writers.length) { writers(i).write(row, i, rows); i += 1 }
    catch {
      case e: InvalidUtf8Exception =>
        val task = Option(org.apache.spark.TaskContext.get()).map(t => s" of partition ${t.partitionId()}").getOrElse("")
        throw new LanceSparkException(new InvalidArgumentException(s"Cannot write column '${e.column}': row " +
          s"${earlierRows + rows}$task holds a STRING that is not valid UTF-8 (byte 0x${"%02X".format(e.badByte)} at " +
          s"offset ${e.offset}), which Lance readers refuse. Fix the value (e.g. CAST the bytes to BINARY), or set the " +
          "write option invalid_utf8 to 'replace' to store U+FFFD in place of each invalid sequence."))
    }
    rows += 1
  }

  /**
   * Appends a row that no reader will see (a deleted row's slot in a file that must hold every physical row of its
   * fragment): null in every column, NOT NULL ones included, whose slots keep the vectors' zeroed bytes; structs
   * are present, with vacant fields.
   */
  def writeVacant(): Unit = {
    var i = 0
    while (i < writers.length) { writers(i).vacant(rows); i += 1 }
    rows += 1
  }

  /** Sets the value counts; the root then holds the rows written since the last reset. */
  def finishBatch(): VectorSchemaRoot = {
    writers.foreach(_.finish(rows))
    root.setRowCount(rows)
    root
  }

  /** Empties the vectors for the next batch. */
  def reset(): Unit = {
    earlierRows += rows
    root.getFieldVectors.asScala.foreach(_.reset())
    writers.foreach(_.reset())
    rows = 0
  }

  override def close(): Unit = root.close()
}

object ArrowRowWriter {

  /** What a write does with a Spark STRING that is not valid UTF-8 (the write option `invalid_utf8`). */
  sealed trait InvalidUtf8
  object InvalidUtf8 {
    /** Fail the write, naming the column and row (the default). */
    case object Refuse extends InvalidUtf8
    /** Store the value with U+FFFD in place of each invalid sequence. */
    case object Replace extends InvalidUtf8

    def parse(option: String): Option[InvalidUtf8] = option.trim.toLowerCase match {
      case "error" => Some(Refuse)
      case "replace" => Some(Replace)
      case _ => None
    }
  }

  private final class InvalidUtf8Exception(val column: String, val offset: Int, val badByte: Int)
    extends RuntimeException(null, null, false, false)

  /** The bytes of a Spark string as the column stores them: valid UTF-8, or an [[InvalidUtf8Exception]]. */
  private def utf8(s: UTF8String, column: String, policy: InvalidUtf8): Array[Byte] = {
    val b = s.getBytes
    val bad = io.sparklance.core.util.Utf8.invalidAt(b, 0, b.length)
    if (bad < 0) b
    else policy match {
      case InvalidUtf8.Refuse => throw new InvalidUtf8Exception(column, bad, b(bad) & 0xFF)
      case InvalidUtf8.Replace => io.sparklance.core.util.Utf8.replaceInvalid(b)
    }
  }

  /** Writes the value at `ordinal` of a row or array into slot `slot` of one vector. */
  private[spark] abstract class ValueWriter(val vector: ValueVector) {
    private val nullable = vector.getField.isNullable
    final def write(in: SpecializedGetters, ordinal: Int, slot: Int): Unit =
      if (!in.isNullAt(ordinal)) set(in, ordinal, slot)
      else if (nullable) setNull(slot)
      else throw new LanceSparkException(new InvalidArgumentException(s"Cannot write a null to column " +
        s"'${vector.getField.getName}', which is NOT NULL in the table. Filter out or fill the nulls first."))
    def setNull(slot: Int): Unit = vector match {
      case v: BaseFixedWidthVector => v.setNull(slot)
      case v: BaseVariableWidthVector => v.setNull(slot)
      case v: BaseLargeVariableWidthVector => v.setNull(slot)
      case _: NullVector =>
      case v: StructVector => v.setNull(slot)
      case v: ListVector => v.setNull(slot)
      case v: LargeListVector => v.setNull(slot)
      case v: FixedSizeListVector => v.setNull(slot)
      case other => throw new IllegalStateException(s"no null for ${other.getClass}")
    }
    /**
     * A slot no reader sees (a deleted row's): null, NOT NULL columns included; a struct is present with vacant
     * fields, as file version 2.0 stores no struct validity.
     */
    def vacant(slot: Int): Unit = setNull(slot)
    def set(in: SpecializedGetters, ordinal: Int, slot: Int): Unit
    def finish(count: Int): Unit = vector.setValueCount(count)
    def reset(): Unit = ()
  }

  private def setChildNull(v: ValueVector, slot: Int): Unit = v match {
    case b: BaseVariableWidthVector => b.setNull(slot)
    case b: BaseLargeVariableWidthVector => b.setNull(slot)
    case other => throw new IllegalStateException(s"no null for ${other.getClass}")
  }

  private def fail(column: String, what: String): Nothing =
    throw new LanceSparkException(new ValueOutOfRangeException(s"Cannot write column '$column': $what."))

  def writerFor(vector: ValueVector, dt: DataType, column: String, invalidUtf8: InvalidUtf8 = InvalidUtf8.Refuse): ValueWriter = {
    def unsupported(): Nothing = throw new LanceSparkException(new UnsupportedFeatureException(
      s"Cannot write Spark values of type ${dt.sql} to column '$column' of Lance type ${vector.getField.getType}. " +
        "Cast the column to the table's type first."))
    (vector, dt) match {
      case (_, st: StructType) if BlobHandling.isDescriptor(st) => BlobHandling.refuseWrite(column)
      case (v: BitVector, BooleanType) => new ValueWriter(v) {
        def set(in: SpecializedGetters, o: Int, s: Int): Unit = v.setSafe(s, if (in.getBoolean(o)) 1 else 0)
      }
      case (v: TinyIntVector, ByteType) => new ValueWriter(v) {
        def set(in: SpecializedGetters, o: Int, s: Int): Unit = v.setSafe(s, in.getByte(o))
      }
      case (v: SmallIntVector, ShortType) => new ValueWriter(v) {
        def set(in: SpecializedGetters, o: Int, s: Int): Unit = v.setSafe(s, in.getShort(o))
      }
      case (v: IntVector, IntegerType) => new ValueWriter(v) {
        def set(in: SpecializedGetters, o: Int, s: Int): Unit = v.setSafe(s, in.getInt(o))
      }
      case (v: BigIntVector, LongType) => new ValueWriter(v) {
        def set(in: SpecializedGetters, o: Int, s: Int): Unit = v.setSafe(s, in.getLong(o))
      }
      case (v: UInt1Vector, ShortType) => new ValueWriter(v) {
        def set(in: SpecializedGetters, o: Int, s: Int): Unit = {
          val x = in.getShort(o)
          if (x < 0 || x > 255) fail(column, s"$x is outside the range of uint8")
          v.setSafe(s, x.toInt)
        }
      }
      case (v: UInt2Vector, IntegerType) => new ValueWriter(v) {
        def set(in: SpecializedGetters, o: Int, s: Int): Unit = {
          val x = in.getInt(o)
          if (x < 0 || x > 65535) fail(column, s"$x is outside the range of uint16")
          v.setSafe(s, x)
        }
      }
      case (v: UInt4Vector, LongType) => new ValueWriter(v) {
        def set(in: SpecializedGetters, o: Int, s: Int): Unit = {
          val x = in.getLong(o)
          if (x < 0 || x > 0xFFFFFFFFL) fail(column, s"$x is outside the range of uint32")
          v.setSafe(s, x.toInt)
        }
      }
      case (v: UInt8Vector, d: DecimalType) => new ValueWriter(v) {
        private val max = new JBigDecimal("18446744073709551615")
        def set(in: SpecializedGetters, o: Int, s: Int): Unit = {
          val x = in.getDecimal(o, d.precision, d.scale).toJavaBigDecimal
          if (x.signum < 0 || x.compareTo(max) > 0 || x.stripTrailingZeros.scale > 0) fail(column, s"$x is not a uint64")
          v.setSafe(s, x.toBigInteger.longValue())
        }
      }
      case (v: Float4Vector, FloatType) => new ValueWriter(v) {
        def set(in: SpecializedGetters, o: Int, s: Int): Unit = v.setSafe(s, in.getFloat(o))
      }
      case (v: Float8Vector, DoubleType) => new ValueWriter(v) {
        def set(in: SpecializedGetters, o: Int, s: Int): Unit = v.setSafe(s, in.getDouble(o))
      }
      case (v, FloatType) if HalfFloats.holds(v) => new ValueWriter(v) {
        def set(in: SpecializedGetters, o: Int, s: Int): Unit = HalfFloats.set(v, s, in.getFloat(o))
      }
      case (v, DoubleType) if HalfFloats.holds(v) => new ValueWriter(v) {
        // Through float32, as Arrow Java (and so the other connector) narrows: ties to even at each step.
        def set(in: SpecializedGetters, o: Int, s: Int): Unit = HalfFloats.set(v, s, in.getDouble(o).toFloat)
      }
      case (v: FixedSizeBinaryVector, FloatType) if v.getByteWidth == 2 => new ValueWriter(v) {
        // bfloat16: the high 16 bits of the float32, rounded to nearest even; a NaN stays a (quiet) NaN.
        private val two = new Array[Byte](2)
        def set(in: SpecializedGetters, o: Int, s: Int): Unit = {
          val f = in.getFloat(o)
          val bits = java.lang.Float.floatToRawIntBits(f)
          val half = if (f.isNaN) (bits >>> 16) | 0x40 else (bits + 0x7FFF + ((bits >>> 16) & 1)) >>> 16
          two(0) = (half & 0xFF).toByte; two(1) = ((half >>> 8) & 0xFF).toByte
          v.setSafe(s, two)
        }
      }
      case (v: VarCharVector, StringType) => new ValueWriter(v) {
        def set(in: SpecializedGetters, o: Int, s: Int): Unit = v.setSafe(s, utf8(in.getUTF8String(o), column, invalidUtf8))
      }
      case (v: LargeVarCharVector, StringType) => new ValueWriter(v) {
        def set(in: SpecializedGetters, o: Int, s: Int): Unit = v.setSafe(s, utf8(in.getUTF8String(o), column, invalidUtf8))
      }
      case (v: VarBinaryVector, BinaryType) => new ValueWriter(v) {
        def set(in: SpecializedGetters, o: Int, s: Int): Unit = v.setSafe(s, in.getBinary(o))
      }
      case (v: LargeVarBinaryVector, BinaryType) => new ValueWriter(v) {
        def set(in: SpecializedGetters, o: Int, s: Int): Unit = v.setSafe(s, in.getBinary(o))
      }
      case (v: FixedSizeBinaryVector, BinaryType) => new ValueWriter(v) {
        def set(in: SpecializedGetters, o: Int, s: Int): Unit = {
          val b = in.getBinary(o)
          if (b.length != v.getByteWidth) fail(column, s"a value of ${b.length} bytes in a fixed_size_binary:${v.getByteWidth} column")
          v.setSafe(s, b)
        }
      }
      case (v: DecimalVector, d: DecimalType) => new ValueWriter(v) {
        def set(in: SpecializedGetters, o: Int, s: Int): Unit = {
          val x = in.getDecimal(o, d.precision, d.scale).toJavaBigDecimal.setScale(v.getScale)
          if (x.precision > v.getPrecision) fail(column, s"$x does not fit decimal(${v.getPrecision},${v.getScale})")
          v.setSafe(s, x)
        }
      }
      case (v: Decimal256Vector, d: DecimalType) => new ValueWriter(v) {
        def set(in: SpecializedGetters, o: Int, s: Int): Unit =
          v.setSafe(s, in.getDecimal(o, d.precision, d.scale).toJavaBigDecimal.setScale(v.getScale))
      }
      case (v: Decimal256Vector, StringType) => new ValueWriter(v) {
        def set(in: SpecializedGetters, o: Int, s: Int): Unit = {
          val text = in.getUTF8String(o).toString
          val x = try new JBigDecimal(text) catch { case _: NumberFormatException => fail(column, s"'$text' is not a decimal") }
          if (x.scale > v.getScale) fail(column, s"$text has more than ${v.getScale} decimal places")
          v.setSafe(s, x.setScale(v.getScale))
        }
      }
      case (v: DateDayVector, DateType) => new ValueWriter(v) {
        def set(in: SpecializedGetters, o: Int, s: Int): Unit = v.setSafe(s, in.getInt(o))
      }
      case (v: DateMilliVector, DateType) => new ValueWriter(v) {
        def set(in: SpecializedGetters, o: Int, s: Int): Unit = v.setSafe(s, in.getInt(o).toLong * 86400000L)
      }
      case (v: TimeStampVector, TimestampType | TimestampNTZType) =>
        val unit = v.getField.getType.asInstanceOf[org.apache.arrow.vector.types.pojo.ArrowType.Timestamp].getUnit
        new ValueWriter(v) {
          def set(in: SpecializedGetters, o: Int, s: Int): Unit = v.setSafe(s, fromMicros(in.getLong(o), unit, column))
        }
      case (v: TimeStampVector, LongType) => new ValueWriter(v) {
        def set(in: SpecializedGetters, o: Int, s: Int): Unit = v.setSafe(s, in.getLong(o))
      }
      case (v: DurationVector, _: DayTimeIntervalType) => new ValueWriter(v) {
        def set(in: SpecializedGetters, o: Int, s: Int): Unit = v.setSafe(s, fromMicros(in.getLong(o), v.getUnit, column))
      }
      case (v: DurationVector, LongType) => new ValueWriter(v) {
        def set(in: SpecializedGetters, o: Int, s: Int): Unit = v.setSafe(s, in.getLong(o))
      }
      case (v: TimeSecVector, dt) if TimeTypes.holdsTime(dt) => new ValueWriter(v) {
        def set(in: SpecializedGetters, o: Int, s: Int): Unit = v.setSafe(s, exactDiv(in.getLong(o), 1000000000L, column).toInt)
      }
      case (v: TimeMilliVector, dt) if TimeTypes.holdsTime(dt) => new ValueWriter(v) {
        def set(in: SpecializedGetters, o: Int, s: Int): Unit = v.setSafe(s, exactDiv(in.getLong(o), 1000000L, column).toInt)
      }
      case (v: TimeMicroVector, dt) if TimeTypes.holdsTime(dt) => new ValueWriter(v) {
        def set(in: SpecializedGetters, o: Int, s: Int): Unit = v.setSafe(s, exactDiv(in.getLong(o), 1000L, column))
      }
      case (v: TimeNanoVector, dt) if TimeTypes.holdsTime(dt) => new ValueWriter(v) {
        def set(in: SpecializedGetters, o: Int, s: Int): Unit = v.setSafe(s, in.getLong(o))
      }
      case (v: NullVector, _) => new ValueWriter(v) {
        def set(in: SpecializedGetters, o: Int, s: Int): Unit = fail(column, "a non-null value in a column of Lance type null")
      }
      // A blob v2 column filled from BINARY values (a table created with a blob property from a BINARY column):
      // the bytes are the blob's data, and it names no external blob.
      case (v: StructVector, BinaryType) if v.getChild("data").isInstanceOf[LargeVarBinaryVector] && v.getChild("uri") != null =>
        val data = v.getChild("data").asInstanceOf[LargeVarBinaryVector]
        val uri = v.getChild("uri")
        new ValueWriter(v) {
          override def setNull(slot: Int): Unit = { data.setNull(slot); setChildNull(uri, slot); v.setNull(slot) }
          override def vacant(slot: Int): Unit = { data.setNull(slot); setChildNull(uri, slot); v.setIndexDefined(slot) }
          def set(in: SpecializedGetters, o: Int, s: Int): Unit = {
            data.setSafe(s, in.getBinary(o))
            setChildNull(uri, s)
            v.setIndexDefined(s)
          }
          override def finish(count: Int): Unit = { data.setValueCount(count); uri.setValueCount(count); v.setValueCount(count) }
        }
      case (v: StructVector, st: StructType) =>
        val children = st.fields.map { f =>
          val child = v.getChild(f.name)
          if (child == null) unsupported()
          writerFor(child, f.dataType, s"$column.${f.name}", invalidUtf8)
        }
        new ValueWriter(v) {
          override def setNull(slot: Int): Unit = {
            var i = 0
            while (i < children.length) { children(i).setNull(slot); i += 1 }
            v.setNull(slot)
          }
          override def vacant(slot: Int): Unit = {
            var i = 0
            while (i < children.length) { children(i).vacant(slot); i += 1 }
            v.setIndexDefined(slot)
          }
          def set(in: SpecializedGetters, o: Int, s: Int): Unit = {
            val row = in.getStruct(o, children.length)
            var i = 0
            while (i < children.length) { children(i).write(row, i, s); i += 1 }
            v.setIndexDefined(s)
          }
          override def finish(count: Int): Unit = { children.foreach(_.finish(count)); v.setValueCount(count) }
          // A list below the struct counts its elements per batch: it must start again at 0.
          override def reset(): Unit = children.foreach(_.reset())
        }
      case (v: MapVector, mt: MapType) =>
        val entries = v.getDataVector.asInstanceOf[StructVector]
        val key = writerFor(entries.getChildrenFromFields.get(0), mt.keyType, s"$column.key", invalidUtf8)
        val value = writerFor(entries.getChildrenFromFields.get(1), mt.valueType, s"$column.value", invalidUtf8)
        new ValueWriter(v) {
          private var next = 0
          override def setNull(slot: Int): Unit = { v.startNewValue(slot); v.endValue(slot, 0); v.setNull(slot) }
          def set(in: SpecializedGetters, o: Int, s: Int): Unit = {
            val m = in.getMap(o)
            v.startNewValue(s)
            var i = 0
            while (i < m.numElements()) {
              key.write(m.keyArray(), i, next)
              value.write(m.valueArray(), i, next)
              entries.setIndexDefined(next)
              next += 1
              i += 1
            }
            v.endValue(s, m.numElements())
          }
          override def finish(count: Int): Unit = {
            key.finish(next); value.finish(next); entries.setValueCount(next); v.setValueCount(count)
          }
          override def reset(): Unit = { next = 0; key.reset(); value.reset() }
        }
      case (v: ListVector, ArrayType(et, _)) =>
        new Lists(v, i => { v.startNewValue(i); () }, (i, n) => v.endValue(i, n), writerFor(v.getDataVector, et, s"$column.element", invalidUtf8))
      case (v: LargeListVector, ArrayType(et, _)) =>
        new Lists(v, i => { v.startNewValue(i.toLong); () }, (i, n) => v.endValue(i, n), writerFor(v.getDataVector, et, s"$column.element", invalidUtf8))
      case (v: FixedSizeListVector, ArrayType(et, _)) =>
        val dim = v.getListSize
        val elem = writerFor(v.getDataVector, et, s"$column.element", invalidUtf8)
        new ValueWriter(v) {
          override def setNull(slot: Int): Unit = {
            var i = 0
            while (i < dim) { elem.setNull(slot * dim + i); i += 1 }
            v.setNull(slot)
          }
          def set(in: SpecializedGetters, o: Int, s: Int): Unit = {
            val a = in.getArray(o)
            if (a.numElements() != dim) {
              fail(column, s"an array of ${a.numElements()} elements in a column of fixed-size lists of $dim")
            }
            var i = 0
            while (i < dim) { elem.write(a, i, s * dim + i); i += 1 }
            v.setNotNull(s)
          }
          override def finish(count: Int): Unit = { elem.finish(count * dim); v.setValueCount(count) }
          override def reset(): Unit = elem.reset()
        }
      case _ => unsupported()
    }
  }

  /** Arrays into a list or large list vector: the elements go to the data vector, one after another. */
  private final class Lists(v: ValueVector, start: Int => Unit, end: (Int, Int) => Unit, elem: ValueWriter)
      extends ValueWriter(v) {
    private var next = 0
    override def setNull(slot: Int): Unit = { start(slot); end(slot, 0); super.setNull(slot) }
    def set(in: SpecializedGetters, o: Int, s: Int): Unit = {
      val a = in.getArray(o)
      start(s)
      var i = 0
      while (i < a.numElements()) { elem.write(a, i, next); next += 1; i += 1 }
      end(s, a.numElements())
    }
    override def finish(count: Int): Unit = { elem.finish(next); v.setValueCount(count) }
    override def reset(): Unit = { next = 0; elem.reset() }
  }

  private def fromMicros(micros: Long, unit: TimeUnit, column: String): Long = unit match {
    case TimeUnit.SECOND => Math.floorDiv(micros, 1000000L)
    case TimeUnit.MILLISECOND => Math.floorDiv(micros, 1000L)
    case TimeUnit.MICROSECOND => micros
    case TimeUnit.NANOSECOND =>
      try Math.multiplyExact(micros, 1000L)
      catch { case _: ArithmeticException => fail(column, s"$micros microseconds overflow a nanosecond column") }
  }

  private def exactDiv(nanos: Long, unit: Long, column: String): Long = {
    if (nanos % unit != 0) {
      throw new LanceSparkException(new InvalidArgumentException(s"Cannot write column '$column': the time " +
        s"$nanos ns has more precision than the column keeps. Truncate it first."))
    }
    nanos / unit
  }
}
