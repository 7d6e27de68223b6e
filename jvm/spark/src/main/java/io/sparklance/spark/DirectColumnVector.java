package io.sparklance.spark;

import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BaseLargeVariableWidthVector;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.LargeVarCharVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TimeStampMicroTZVector;
import org.apache.arrow.vector.TimeStampMicroVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.LargeVarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarArray;
import org.apache.spark.sql.vectorized.ColumnarMap;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * A Spark column vector over an Arrow vector's buffers, read at their memory addresses: what Spark's
 * {@code ArrowColumnVector} does for the same types, without the per-value reference-count and bounds checks of
 * Arrow's getters, which show in scan-heavy queries. Only for vectors the reader built and owns, whose buffers stay
 * valid and unchanged while Spark reads the batch. Used for fixed-width numbers, dates, microsecond timestamps,
 * decimals of up to 18 digits, strings, binaries and lists of those ({@link #of} falls back to
 * {@code ArrowColumnVector} for anything else).
 */
public final class DirectColumnVector extends ColumnVector {
  private final FieldVector vector;
  private final int count;
  private final long validity;
  private final boolean hasNulls;
  private final long data;
  /** Offsets address of variable-width and list vectors; 0 otherwise. */
  private final long offsets;
  private final boolean largeOffsets;
  private final DirectColumnVector child;

  private DirectColumnVector(DataType type, FieldVector vector, DirectColumnVector child) {
    super(type);
    this.vector = vector;
    this.count = vector.getValueCount();
    this.hasNulls = vector.getNullCount() > 0;
    this.validity = count == 0 ? 0 : vector.getValidityBuffer().memoryAddress();
    this.child = child;
    if (vector instanceof BaseFixedWidthVector) {
      data = count == 0 ? 0 : ((BaseFixedWidthVector) vector).getDataBuffer().memoryAddress();
      offsets = 0;
      largeOffsets = false;
    } else if (vector instanceof BaseVariableWidthVector) {
      data = ((BaseVariableWidthVector) vector).getDataBuffer().memoryAddress();
      offsets = ((BaseVariableWidthVector) vector).getOffsetBuffer().memoryAddress();
      largeOffsets = false;
    } else if (vector instanceof BaseLargeVariableWidthVector) {
      data = ((BaseLargeVariableWidthVector) vector).getDataBuffer().memoryAddress();
      offsets = ((BaseLargeVariableWidthVector) vector).getOffsetBuffer().memoryAddress();
      largeOffsets = true;
    } else if (vector instanceof ListVector) {
      data = 0;
      offsets = ((ListVector) vector).getOffsetBuffer().memoryAddress();
      largeOffsets = false;
    } else {
      throw new IllegalArgumentException("no direct access to " + vector.getClass().getSimpleName());
    }
  }

  /** A column vector for `vector` read as `type`: direct access where supported, Spark's Arrow vector otherwise. */
  public static ColumnVector of(DataType type, FieldVector vector) {
    if (vector.getValueCount() == 0) return new ArrowColumnVector(vector);
    if (vector instanceof ListVector && type instanceof ArrayType) {
      FieldVector data = ((ListVector) vector).getDataVector();
      ColumnVector c = of(((ArrayType) type).elementType(), data);
      if (c instanceof DirectColumnVector) return new DirectColumnVector(type, vector, (DirectColumnVector) c);
      return new ArrowColumnVector(vector);
    }
    boolean direct = vector instanceof BigIntVector || vector instanceof IntVector || vector instanceof Float8Vector
        || vector instanceof Float4Vector || vector instanceof SmallIntVector || vector instanceof TinyIntVector
        || vector instanceof DateDayVector || vector instanceof TimeStampMicroVector || vector instanceof TimeStampMicroTZVector
        || vector instanceof VarCharVector || vector instanceof LargeVarCharVector || vector instanceof VarBinaryVector
        || vector instanceof LargeVarBinaryVector
        || (vector instanceof DecimalVector && type instanceof DecimalType
            && ((DecimalType) type).precision() <= Decimal.MAX_LONG_DIGITS()
            && ((DecimalType) type).scale() == ((DecimalVector) vector).getScale());
    return direct ? new DirectColumnVector(type, vector, null) : new ArrowColumnVector(vector);
  }

  @Override public void close() { vector.close(); }

  @Override public boolean hasNull() { return hasNulls; }

  @Override public int numNulls() { return vector.getNullCount(); }

  @Override
  public boolean isNullAt(int rowId) {
    return hasNulls && (Platform.getByte(null, validity + (rowId >>> 3)) & (1 << (rowId & 7))) == 0;
  }

  @Override public boolean getBoolean(int rowId) { throw new UnsupportedOperationException(); }
  @Override public byte getByte(int rowId) { return Platform.getByte(null, data + rowId); }
  @Override public short getShort(int rowId) { return Platform.getShort(null, data + 2L * rowId); }
  @Override public int getInt(int rowId) { return Platform.getInt(null, data + 4L * rowId); }
  @Override public long getLong(int rowId) { return Platform.getLong(null, data + 8L * rowId); }
  @Override public float getFloat(int rowId) { return Platform.getFloat(null, data + 4L * rowId); }
  @Override public double getDouble(int rowId) { return Platform.getDouble(null, data + 8L * rowId); }

  private long start(int rowId) {
    return largeOffsets ? Platform.getLong(null, offsets + 8L * rowId) : Platform.getInt(null, offsets + 4L * rowId);
  }

  private long end(int rowId) {
    return largeOffsets ? Platform.getLong(null, offsets + 8L * (rowId + 1)) : Platform.getInt(null, offsets + 4L * (rowId + 1));
  }

  @Override
  public UTF8String getUTF8String(int rowId) {
    if (isNullAt(rowId)) return null;
    long s = start(rowId);
    return UTF8String.fromAddress(null, data + s, (int) (end(rowId) - s));
  }

  @Override
  public byte[] getBinary(int rowId) {
    if (isNullAt(rowId)) return null;
    long s = start(rowId);
    byte[] out = new byte[(int) (end(rowId) - s)];
    Platform.copyMemory(null, data + s, out, Platform.BYTE_ARRAY_OFFSET, out.length);
    return out;
  }

  @Override
  public ColumnarArray getArray(int rowId) {
    if (isNullAt(rowId)) return null;
    int s = (int) start(rowId);
    return new ColumnarArray(child, s, (int) end(rowId) - s);
  }

  @Override public ColumnarMap getMap(int ordinal) { throw new UnsupportedOperationException(); }
  /**
   * A decimal of up to 18 digits, whose unscaled value fits the low 8 of its 16 little-endian bytes (the high 8 are
   * then their sign): read as Spark's Parquet reader reads such decimals, without a BigDecimal per value. A value
   * that does not fit (damaged data) goes the slow way, where Spark refuses it as too wide for the type.
   */
  @Override
  public Decimal getDecimal(int rowId, int precision, int scale) {
    if (isNullAt(rowId)) return null;
    long low = Platform.getLong(null, data + 16L * rowId);
    long high = Platform.getLong(null, data + 16L * rowId + 8);
    if (high == (low >> 63)) return Decimal.createUnsafe(low, precision, scale);
    return Decimal.apply(((DecimalVector) vector).getObject(rowId), precision, scale);
  }
  @Override public ColumnVector getChild(int ordinal) { throw new UnsupportedOperationException(); }
}
