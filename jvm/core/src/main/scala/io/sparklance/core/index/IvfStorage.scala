package io.sparklance.core.index

import org.apache.arrow.vector.{FieldVector, Float4Vector, Float8Vector, UInt1Vector}
import org.apache.arrow.vector.types.FloatingPointPrecision
import org.apache.arrow.vector.types.pojo.ArrowType
import org.apache.arrow.vector.complex.FixedSizeListVector

import io.sparklance.core.CorruptFileException

/**
 * How an IVF index's `auxiliary.idx` holds the vectors of a partition (docs/dev/vector-index-format.md §1.4, §2.3,
 * §2.4), and the distance of a query to each of them as pylance's index search computes it (§4 step 3). A
 * partition's payload is decoded from the file's code column into a plain array: floats for FLAT, one code per
 * sub-vector (0 to 2^nbits - 1) for PQ, sub-vector by sub-vector (`[m][rows]`, so that distances are summed over
 * contiguous codes), one byte per dimension for SQ.
 */
private[index] sealed abstract class IvfStorage {
  /** The file's column holding the vectors or their codes. */
  def column: String

  /** The partition's `rows` vectors from the column's values (a fixed-size list), decoded. */
  def decode(path: String, values: FieldVector, rows: Int): AnyRef

  /**
   * The distance of the (preprocessed: normalized for cosine) query `q` to each of the `rows` vectors of `payload`,
   * for partition `centroid` (the partition's centroid, for residual quantizers).
   */
  def distances(q: Array[Float], centroid: Array[Float], payload: AnyRef, rows: Int): Array[Float]

  /**
   * The distance of the query to one row at a time, equal to what [[distances]] gives for that row: for a graph
   * search, which measures only the rows it visits.
   */
  def nodeDistance(q: Array[Float], centroid: Array[Float], payload: AnyRef, rows: Int): IvfStorage.NodeDistance
}

private[index] object IvfStorage {

  /** The distance of one query to the row at a position of a partition. */
  abstract class NodeDistance {
    def apply(row: Int): Float
  }

  /** Exact vectors (IVF_FLAT); for cosine they are stored normalized. */
  final case class Flat(dim: Int, distance: Distance) extends IvfStorage {
    def column: String = "flat"

    def decode(path: String, values: FieldVector, rows: Int): AnyRef = {
      val child = listValues(path, values, dim, rows)
      val out = new Array[Float](rows * dim)
      var i = 0
      child match {
        case f: Float4Vector => while (i < out.length) { out(i) = f.get(i); i += 1 }
        case f: Float8Vector => while (i < out.length) { out(i) = f.get(i).toFloat; i += 1 }
        // uint8 vectors (hamming): their byte values.
        case u: UInt1Vector => while (i < out.length) { out(i) = (u.get(i) & 0xFF).toFloat; i += 1 }
        // Half floats by their bits: the Arrow of the Spark 3.x builds has no Float2Vector.
        case f if f.getField.getType == new ArrowType.FloatingPoint(FloatingPointPrecision.HALF) =>
          val buf = f.getDataBuffer
          while (i < out.length) { out(i) = halfToFloat(buf.getShort(i * 2L)); i += 1 }
        case other => throw new CorruptFileException(path, s"its column '$column' holds ${other.getField.getType}, not floats")
      }
      out
    }

    def distances(q: Array[Float], centroid: Array[Float], payload: AnyRef, rows: Int): Array[Float] = {
      val v = payload.asInstanceOf[Array[Float]]
      val out = new Array[Float](rows)
      val qd = q.map(_.toDouble)
      var r = 0
      while (r < rows) {
        out(r) = distance.between(qd, v, r * dim).toFloat
        r += 1
      }
      out
    }

    def nodeDistance(q: Array[Float], centroid: Array[Float], payload: AnyRef, rows: Int): NodeDistance = {
      val v = payload.asInstanceOf[Array[Float]]
      val qd = q.map(_.toDouble)
      new NodeDistance { def apply(row: Int): Float = distance.between(qd, v, row * dim).toFloat }
    }
  }

  /**
   * Product quantization (IVF_PQ): `m` sub-vectors of `dim / m` values, each coded by `nbits` bits as the nearest of
   * the sub-vector's `2^nbits` codewords. `codebook` is `[m][2^nbits][dim / m]` (§2.3). For l2 and cosine the codes
   * are of the residual to the partition's centroid; for dot of the vector itself.
   *
   * A row's distance is the sum of its sub-vectors' entries in the query's table, in float32 as pylance 14 sums them
   * (§6.5): for 8-bit codes sub-vector by sub-vector; for 4-bit codes byte by byte, each byte's two entries (low
   * nibble, high nibble) added together first, and for dot from entries `1 - q·c` less `m - 1`. pylance 14 measures
   * every row of a 4-bit partition so (the byte-quantized table of Lance's older `compute_pq_distance_4bit` is not
   * what it returns: checked by `integration/research/vector-index/pq4_search.py`).
   */
  final case class Pq(dim: Int, m: Int, nbits: Int, codebook: Array[Float], transposed: Boolean, distance: Distance)
      extends IvfStorage {
    def column: String = "__pq_code"
    private val bytesPerRow = m * nbits / 8
    private val codewords = 1 << nbits
    private val subDim = dim / m

    /** The codes of sub-vector `j` of row `i` at `j * rows + i`. */
    def decode(path: String, values: FieldVector, rows: Int): AnyRef = {
      val child = uint8Lists(path, column, values, bytesPerRow, rows)
      val raw = new Array[Byte](rows * bytesPerRow)
      child.getDataBuffer.getBytes(0, raw, 0, raw.length)
      // Transposed (§2.3): the partition's bytes are [bytesPerRow][rows], which is the decoded layout for 8 bits.
      if (nbits == 8 && transposed) raw
      else {
        val codes = new Array[Byte](rows * m)
        var i = 0
        while (i < rows) {
          var b = 0
          while (b < bytesPerRow) {
            val byte = raw(if (transposed) b * rows + i else i * bytesPerRow + b)
            if (nbits == 8) codes(b * rows + i) = byte
            else {
              codes(2 * b * rows + i) = (byte & 0x0F).toByte
              codes((2 * b + 1) * rows + i) = ((byte >> 4) & 0x0F).toByte
            }
            b += 1
          }
          i += 1
        }
        codes
      }
    }

    /**
     * The table of each sub-vector's distance to each codeword, in float32 as pylance computes it (§4 step 3): for
     * l2 and cosine the squared distance of the residual `q − centroid` to the codeword, for dot `1 − q·codeword`,
     * each summed as [[PqTableSums]] does.
     */
    private def table(q: Array[Float], centroid: Array[Float]): Array[Float] = {
      val table = new Array[Float](m * codewords)
      val dot = distance == Distance.DOT
      val x = if (dot) q else {
        val r = new Array[Float](dim)
        var d = 0
        while (d < dim) { r(d) = q(d) - centroid(d); d += 1 }
        r
      }
      var i = 0
      while (i < m) {
        var c = 0
        while (c < codewords) {
          val base = (i * codewords + c) * subDim
          table(i * codewords + c) =
            if (dot) 1.0f - PqTableSums.dot(x, i * subDim, codebook, base, subDim)
            else PqTableSums.squaredL2(x, i * subDim, codebook, base, subDim)
          c += 1
        }
        i += 1
      }
      table
    }

    /** What pylance subtracts from a dot distance's sum of `m` table entries (each `1 − q_j·c_j`) to give `1 − q·c`. */
    private val dotOffset = (m - 1).toFloat

    def nodeDistance(q: Array[Float], centroid: Array[Float], payload: AnyRef, rows: Int): NodeDistance = {
      val codes = payload.asInstanceOf[Array[Byte]]
      val t = table(q, centroid)
      val dot = distance == Distance.DOT
      if (nbits == 4) new NodeDistance {
        def apply(row: Int): Float = pairSum(t, codes, rows, row)
      }
      else new NodeDistance {
        def apply(row: Int): Float = {
          var s = 0.0f
          var at = row
          var base = 0
          while (base < t.length) {
            s += t(base + (codes(at) & 0xFF))
            at += rows
            base += codewords
          }
          if (dot) s - dotOffset else s
        }
      }
    }

    /**
     * The distance of row `row` to 4-bit codes: byte by byte, the entries of its two sub-vectors added first; for dot
     * less `m - 1` (the table holds `1 - q·c`).
     */
    private def pairSum(t: Array[Float], codes: Array[Byte], rows: Int, row: Int): Float = {
      var s = 0.0f
      var j = 0
      while (j < m) {
        s += t(j * codewords + codes(j * rows + row)) + t((j + 1) * codewords + codes((j + 1) * rows + row))
        j += 2
      }
      if (distance == Distance.DOT) s - dotOffset else s
    }

    def distances(q: Array[Float], centroid: Array[Float], payload: AnyRef, rows: Int): Array[Float] =
      if (nbits == 4) {
        val codes = payload.asInstanceOf[Array[Byte]]
        val t = table(q, centroid)
        val out = new Array[Float](rows)
        var r = 0
        while (r < rows) { out(r) = pairSum(t, codes, rows, r); r += 1 }
        out
      } else distances8(q, centroid, payload, rows)

    private def distances8(q: Array[Float], centroid: Array[Float], payload: AnyRef, rows: Int): Array[Float] = {
      val codes = payload.asInstanceOf[Array[Byte]]
      val table = this.table(q, centroid)
      val dot = distance == Distance.DOT
      // Each row's sum runs over its sub-vectors in order, as pylance's does (so the float32 sums are its sums): one
      // pass per sub-vector adds its distances to every row's sum, reading that sub-vector's codes in order.
      val out = new Array[Float](rows)
      var j = 0
      while (j < m) {
        val base = j * codewords
        val at = j * rows
        var r = 0
        while (r < rows) {
          out(r) += table(base + (codes(at + r) & 0xFF))
          r += 1
        }
        j += 1
      }
      if (dot) {
        var r = 0
        while (r < rows) { out(r) = out(r) - dotOffset; r += 1 }
      }
      out
    }
  }

  /**
   * Scalar quantization (IVF_SQ): each value coded by 8 bits over the global range [start, end] (§2.4); the distance
   * is the squared difference of the codes, scaled back (§4 step 3, l2).
   */
  final case class Sq(dim: Int, start: Double, end: Double, distance: Distance) extends IvfStorage {
    def column: String = "__sq_code"

    def decode(path: String, values: FieldVector, rows: Int): AnyRef = {
      val child = uint8Lists(path, column, values, dim, rows)
      val codes = new Array[Byte](rows * dim)
      var i = 0
      while (i < codes.length) { codes(i) = child.get(i); i += 1 }
      codes
    }

    /** The query's codes: `floor((x - start) * 255 / (end - start))` in double, saturated to 0..255. */
    def quantize(q: Array[Float]): Array[Int] = q.map { x =>
      val c = math.floor((x.toDouble - start) * 255.0 / (end - start))
      if (c.isNaN || c < 0) 0 else if (c > 255) 255 else c.toInt
    }

    def distances(q: Array[Float], centroid: Array[Float], payload: AnyRef, rows: Int): Array[Float] = {
      val one = nodeDistance(q, centroid, payload, rows)
      val out = new Array[Float](rows)
      var r = 0
      while (r < rows) { out(r) = one(r); r += 1 }
      out
    }

    def nodeDistance(q: Array[Float], centroid: Array[Float], payload: AnyRef, rows: Int): NodeDistance = {
      val codes = payload.asInstanceOf[Array[Byte]]
      val qc = quantize(q)
      val scale = ((end - start) * (end - start) / (255.0 * 255.0)).toFloat
      new NodeDistance {
        def apply(row: Int): Float = {
          var s = 0L
          var d = 0
          while (d < dim) {
            val diff = (codes(row * dim + d) & 0xFF) - qc(d)
            s += diff * diff
            d += 1
          }
          s.toFloat * scale
        }
      }
    }
  }

  /** The float32 value of IEEE 754 half-precision bits (exact: every half float is a float). */
  def halfToFloat(h: Short): Float = {
    val bits = h & 0xFFFF
    val sign = (bits >>> 15) << 31
    val exponent = (bits >>> 10) & 0x1F
    val mantissa = bits & 0x3FF
    if (exponent == 0) {
      val v = mantissa * java.lang.Float.intBitsToFloat(0x33800000) // 2^-24
      if (sign != 0) -v else v
    } else if (exponent == 31) java.lang.Float.intBitsToFloat(sign | 0x7F800000 | (mantissa << 13))
    else java.lang.Float.intBitsToFloat(sign | ((exponent + 112) << 23) | (mantissa << 13))
  }

  /**
   * The values of a fixed-size list column of `width` values per row as stored: `rows × width` values of the child's
   * type, little-endian, row by row (IVF_FLAT's vectors in the column's type, kept exactly when an index is merged).
   */
  def rawValues(path: String, values: FieldVector, width: Int, rows: Int): Array[Byte] = {
    val child = listValues(path, values, width, rows)
    val bytes = child.getField.getType match {
      case f: ArrowType.FloatingPoint => f.getPrecision match {
        case FloatingPointPrecision.HALF => 2
        case FloatingPointPrecision.SINGLE => 4
        case _ => 8
      }
      case i: ArrowType.Int if i.getBitWidth == 8 => 1
      case other => throw new CorruptFileException(path, s"its vectors hold $other, not floats or bytes")
    }
    val out = new Array[Byte](rows * width * bytes)
    child.getDataBuffer.getBytes(0, out, 0, out.length)
    out
  }

  /** The uint8 codes of column `column`: lists of `width` codes per row. */
  private def uint8Lists(path: String, column: String, values: FieldVector, width: Int, rows: Int): UInt1Vector =
    listValues(path, values, width, rows) match {
      case u: UInt1Vector => u
      case other => throw new CorruptFileException(path, s"its column '$column' holds ${other.getField.getType}, not uint8 codes")
    }

  /** The child values of a fixed-size list column of `width` values per row, checked to hold `rows` rows. */
  private def listValues(path: String, values: FieldVector, width: Int, rows: Int): FieldVector = values match {
    case l: FixedSizeListVector =>
      if (l.getListSize != width) {
        throw new CorruptFileException(path, s"its column '${l.getName}' holds lists of ${l.getListSize} values, not $width")
      }
      val child = l.getDataVector
      if (child.getValueCount < rows.toLong * width) {
        throw new CorruptFileException(path, s"its column '${l.getName}' has ${child.getValueCount} values for $rows rows of $width")
      }
      child
    case other => throw new CorruptFileException(path, s"its column '${other.getName}' is ${other.getField.getType}, not a fixed-size list")
  }
}
