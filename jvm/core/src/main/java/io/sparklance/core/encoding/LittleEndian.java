package io.sparklance.core.encoding;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/** Little-endian reads and writes of primitives in byte arrays, without bounds beyond the array's own. */
public final class LittleEndian {
  private LittleEndian() {}

  private static final VarHandle SHORT = MethodHandles.byteArrayViewVarHandle(short[].class, ByteOrder.LITTLE_ENDIAN);
  private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
  private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

  public static short getShort(byte[] b, int off) { return (short) SHORT.get(b, off); }
  public static int getUnsignedShort(byte[] b, int off) { return ((short) SHORT.get(b, off)) & 0xFFFF; }
  public static int getInt(byte[] b, int off) { return (int) INT.get(b, off); }
  public static long getUnsignedInt(byte[] b, int off) { return ((int) INT.get(b, off)) & 0xFFFFFFFFL; }
  public static long getLong(byte[] b, int off) { return (long) LONG.get(b, off); }

  public static void putShort(byte[] b, int off, short v) { SHORT.set(b, off, v); }
  public static void putInt(byte[] b, int off, int v) { INT.set(b, off, v); }
  public static void putLong(byte[] b, int off, long v) { LONG.set(b, off, v); }

  /** Reads an unsigned little-endian integer of `bytes` (1, 2, 4 or 8) bytes. */
  public static long getUnsigned(byte[] b, int off, int bytes) {
    switch (bytes) {
      case 1: return b[off] & 0xFFL;
      case 2: return getUnsignedShort(b, off);
      case 4: return getUnsignedInt(b, off);
      case 8: return getLong(b, off);
      default: throw new IllegalArgumentException("integer width " + bytes);
    }
  }
}
