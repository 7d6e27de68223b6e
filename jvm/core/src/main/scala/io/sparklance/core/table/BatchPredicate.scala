package io.sparklance.core.table

import java.nio.charset.StandardCharsets

import org.apache.arrow.vector._

import io.sparklance.core.scan.CodedColumn
import io.sparklance.core.schema.{LanceField, LogicalType}

/**
 * Predicates compiled for Arrow batches: selects the rows of a batch where all of them hold, with the semantics of
 * Spark SQL (the engines that hand predicates to the core): nulls match nothing but `IS NULL`; NaN equals NaN and
 * is larger than every other value; `-0.0 = 0.0`; strings compare by their unsigned UTF-8 bytes. Which literal
 * each column type compares with, and how, is [[Predicate.comparable]]'s table.
 *
 * Each batch is evaluated predicate by predicate with one plain loop per kind of column over the vectors' buffers,
 * narrowing an array of selected row indices: an `AND` evaluates its right side only on the rows its left side
 * kept. A comparison the table does not cover keeps every row, so a selection never misses a matching row.
 *
 * A column the caller has as a [[CodedColumn]] (positions in a vector of its distinct values, from the page
 * dictionaries) is not compared row by row: each comparison on it is evaluated once on the distinct values (the
 * null slot among them, so nulls fare as they do in a vector), then rows are kept by the position of their value.
 * The result is what the same comparison on the column's vector selects.
 * Compiled once per task; not thread safe (it keeps scratch arrays from batch to batch).
 */
final class BatchPredicate private (root: BatchPredicate.Node) {
  private var identity = new Array[Int](0)

  /**
   * Writes the indices of the rows among the first `rows` of the vectors `column` names where the predicates hold
   * into `out`, ascending, and returns how many there are. `out` must hold at least `rows` indices.
   */
  def select(column: String => FieldVector, rows: Int, out: Array[Int]): Int = select(column, _ => None, rows, out)

  /**
   * As `select`, reading the columns `coded` has as coded columns (of `rows` rows) from them, and the others from
   * `column`, which is called only for those.
   */
  def select(column: String => FieldVector, coded: String => Option[CodedColumn], rows: Int, out: Array[Int]): Int = {
    require(out.length >= rows, s"a selection of ${out.length} rows for a batch of $rows")
    if (identity.length < rows) {
      identity = new Array[Int](math.max(rows, identity.length * 2))
      var i = 0
      while (i < identity.length) { identity(i) = i; i += 1 }
    }
    root.filter(new BatchPredicate.Columns(column, coded), identity, rows, out)
  }

  override def toString: String = root.toString
}

object BatchPredicate {

  /** All of `predicates`, over columns of the given fields (top-level, by name). */
  def compile(predicates: Seq[Predicate], fields: Seq[LanceField]): BatchPredicate = {
    val types = fields.map(f => f.name -> f.logicalType).toMap
    val nodes = predicates.map(node(_, types))
    new BatchPredicate(if (nodes.isEmpty) Everything else nodes.reduceLeft(And.apply))
  }

  /**
   * A compiled predicate: `filter` keeps the rows of `sel(0 until n)` (ascending indices) where it holds, writing
   * them to `out` and returning their count. `out` may be `sel` itself: rows are written at or before the position
   * they are read from.
   */
  private[table] sealed abstract class Node {
    def filter(column: Columns, sel: Array[Int], n: Int, out: Array[Int]): Int
  }

  /** The columns of a batch: each as a vector, or as a coded column where the caller has one. */
  private[table] final class Columns(val vector: String => FieldVector, val coded: String => Option[CodedColumn])

  /**
   * A predicate on one column. On a vector, `filterVector` keeps the rows where it holds; on a coded column, it
   * does so once over all the column's distinct values (null slot included), kept for as long as the values are
   * the same ([[CodedColumn.serial]]), and rows are kept by the position of their value.
   */
  private abstract class ColumnNode(c: String) extends Node {
    private var maskSerial = -1L
    private var mask = new Array[Boolean](0)
    private var anyMatch = false

    protected def filterVector(v: FieldVector, sel: Array[Int], n: Int, out: Array[Int]): Int

    final override def filter(column: Columns, sel: Array[Int], n: Int, out: Array[Int]): Int =
      if (n == 0) 0
      else column.coded(c) match {
        case None => filterVector(column.vector(c), sel, n, out)
        case Some(coded) =>
          if (coded.serial != maskSerial) {
            val slots = coded.values.getValueCount
            val all = Array.tabulate(slots)(i => i)
            val kept = filterVector(coded.values, all, slots, all)
            mask = new Array[Boolean](slots)
            var j = 0
            while (j < kept) { mask(all(j)) = true; j += 1 }
            anyMatch = kept > 0
            maskSerial = coded.serial
          }
          if (!anyMatch) 0
          else {
            val ids = coded.ids
            val m = mask
            var kept = 0
            var k = 0
            while (k < n) {
              val row = sel(k)
              out(kept) = row
              if (m(ids(row))) kept += 1
              k += 1
            }
            kept
          }
      }
  }

  private def node(p: Predicate, types: Map[String, LogicalType]): Node = p match {
    case Predicate.And(l, r) => And(node(l, types), node(r, types))
    case Predicate.Or(l, r) => Or(node(l, types), node(r, types))
    case Predicate.IsNull(c) => Nulls(c, wanted = true)
    case Predicate.IsNotNull(c) => Nulls(c, wanted = false)
    case Predicate.Compare(c, op, v) => types.get(c).map(t => compare(c, t, op, v)).getOrElse(Everything)
    case Predicate.In(c, vs) => types.get(c).map(t => in(c, t, vs)).getOrElse(Everything)
    case Predicate.StringMatch(c, op, text) => types.get(c) match {
      case Some(LogicalType.Utf8(_)) => StringPattern(c, op, text.getBytes(StandardCharsets.UTF_8))
      case _ => Everything
    }
    case Predicate.ListHasAny(_, _) | Predicate.FullTextMatch(_) => Everything
  }

  private def compare(c: String, t: LogicalType, op: Predicate.Op, v: Any): Node =
    if (!Predicate.comparable(t, v)) Everything
    else Keys.of(t, v) match {
      case Keys.Exact(domain, k) => Range(c, domain, Keys.range(op, k))
      case Keys.Between(domain, floor, ceil) => Range(c, domain, Keys.range(op, floor, ceil))
      case Keys.Bytes(b) => op match {
        case Predicate.Op.Eq => Strings(c, Array(b))
        case Predicate.Op.Lt => StringRange(c, null, lowInclusive = false, b, highInclusive = false)
        case Predicate.Op.Le => StringRange(c, null, lowInclusive = false, b, highInclusive = true)
        case Predicate.Op.Gt => StringRange(c, b, lowInclusive = false, null, highInclusive = false)
        case Predicate.Op.Ge => StringRange(c, b, lowInclusive = true, null, highInclusive = false)
      }
    }

  /** `IN`: one membership test per key domain the values fall in, OR-ed. */
  private def in(c: String, t: LogicalType, vs: Seq[Any]): Node =
    if (!vs.forall(Predicate.comparable(t, _))) Everything
    else {
      val keys = vs.map(Keys.of(t, _))
      val strings = keys.collect { case Keys.Bytes(b) => b }
      val exact = keys.collect { case e: Keys.Exact => e }.groupBy(_.domain).toSeq.map { case (d, ks) =>
        val sorted = ks.iterator.map(_.key).toArray
        java.util.Arrays.sort(sorted)
        Members(c, d, distinct(sorted)): Node
      }
      val parts = exact ++ (if (strings.isEmpty) Nil else Seq(Strings(c, strings.toArray)))
      if (parts.isEmpty) Nothing else parts.reduceLeft(Or.apply)
    }

  /**
   * How a literal compares with a column's values: as one key (a long) of a domain in which keys order as the
   * values do, or as a key between two adjacent ones (a literal between two representable values), or as bytes.
   */
  private[table] object Keys {
    sealed trait Key
    final case class Exact(domain: Domain, key: Long) extends Key
    /** A literal strictly between keys `floor` and `floor + 1 = ceil` (or beyond the domain's range). */
    final case class Between(domain: Domain, floor: Long, ceil: Long) extends Key
    final case class Bytes(bytes: Array[Byte]) extends Key

    def of(t: LogicalType, v: Any): Key = (t, v) match {
      case (_, s: String) => Bytes(s.getBytes(StandardCharsets.UTF_8))
      case (_, b: java.lang.Boolean) => Exact(Domain.Raw, if (b) 1L else 0L)
      case (LogicalType.Float | LogicalType.Double, n: java.lang.Number) => Exact(Domain.DoubleKey, doubleKey(n.doubleValue()))
      case (_, n @ (_: java.lang.Double | _: java.lang.Float)) => Exact(Domain.DoubleKey, doubleKey(n.asInstanceOf[Number].doubleValue()))
      case (LogicalType.Decimal(_, _, scale), d: java.math.BigDecimal) => decimal(d.movePointRight(scale))
      case (_, n: java.lang.Number) => Exact(Domain.Raw, n.longValue())
      case other => throw new IllegalArgumentException(s"no key for $other")
    }

    /** An exact decimal value (unscaled to the column's scale) as a raw key, or the keys around it. */
    private def decimal(d: java.math.BigDecimal): Key = {
      val floor = d.setScale(0, java.math.RoundingMode.FLOOR).toBigInteger
      val min = java.math.BigInteger.valueOf(Long.MinValue)
      val max = java.math.BigInteger.valueOf(Long.MaxValue)
      if (floor.compareTo(max) > 0) Between(Domain.Raw, Long.MaxValue, Long.MaxValue)
      else if (floor.compareTo(min) < 0) Between(Domain.Raw, Long.MinValue, Long.MinValue)
      else if (d.signum == 0 || d.stripTrailingZeros.scale <= 0) Exact(Domain.Raw, floor.longValueExact)
      else if (floor.longValueExact == Long.MaxValue) Between(Domain.Raw, Long.MaxValue, Long.MaxValue)
      else Between(Domain.Raw, floor.longValueExact, floor.longValueExact + 1)
    }

    /**
     * The key of a double in Spark's order (NaN above +Infinity, every NaN equal, -0.0 equal to 0.0) as a long that
     * orders the same way as signed longs: the IEEE bits, with the magnitude bits of negatives flipped.
     */
    def doubleKey(d: Double): Long = {
      val bits = java.lang.Double.doubleToLongBits(d + 0.0) // + 0.0 turns -0.0 into 0.0; NaNs get one bit pattern
      bits ^ ((bits >> 63) & Long.MaxValue)
    }

    /** The keys [low, high] `key op k` keeps (low > high when none). */
    def range(op: Predicate.Op, k: Long): (Long, Long) = op match {
      case Predicate.Op.Eq => (k, k)
      case Predicate.Op.Le => (Long.MinValue, k)
      case Predicate.Op.Ge => (k, Long.MaxValue)
      case Predicate.Op.Lt => if (k == Long.MinValue) (1L, 0L) else (Long.MinValue, k - 1)
      case Predicate.Op.Gt => if (k == Long.MaxValue) (1L, 0L) else (k + 1, Long.MaxValue)
    }

    /**
     * The keys [low, high] `value op x` keeps for a literal x strictly between keys `floor` and `ceil`. At the ends
     * of the domain (`floor == ceil`), x lies beyond every key: above them all at Long.MaxValue, below at MinValue.
     */
    def range(op: Predicate.Op, floor: Long, ceil: Long): (Long, Long) =
      if (floor == ceil && floor == Long.MaxValue) op match {
        case Predicate.Op.Lt | Predicate.Op.Le => (Long.MinValue, Long.MaxValue)
        case _ => (1L, 0L)
      } else if (floor == ceil) op match {
        case Predicate.Op.Gt | Predicate.Op.Ge => (Long.MinValue, Long.MaxValue)
        case _ => (1L, 0L)
      } else op match {
        case Predicate.Op.Eq => (1L, 0L)
        case Predicate.Op.Lt | Predicate.Op.Le => (Long.MinValue, floor)
        case Predicate.Op.Gt | Predicate.Op.Ge => (ceil, Long.MaxValue)
      }
  }

  /** What a column's values become before they are compared with keys. */
  private[table] sealed trait Domain
  private[table] object Domain {
    /** The stored integer: signed integers, dates, timestamps, unscaled decimals, booleans as 0 and 1. */
    case object Raw extends Domain
    /** [[Keys.doubleKey]] of the value as a double (floating columns, or integers compared with a float literal). */
    case object DoubleKey extends Domain
  }

  private case object Everything extends Node {
    override def filter(column: Columns, sel: Array[Int], n: Int, out: Array[Int]): Int = keepAll(sel, n, out)
    override def toString = "true"
  }

  private case object Nothing extends Node {
    override def filter(column: Columns, sel: Array[Int], n: Int, out: Array[Int]): Int = 0
    override def toString = "false"
  }

  private final case class And(left: Node, right: Node) extends Node {
    override def filter(column: Columns, sel: Array[Int], n: Int, out: Array[Int]): Int =
      right.filter(column, out, left.filter(column, sel, n, out), out)
  }

  /** The rows the left side keeps, and those the right side keeps among the others, merged in order. */
  private final case class Or(left: Node, right: Node) extends Node {
    private var kept = new Array[Int](0)
    private var others = new Array[Int](0)

    override def filter(column: Columns, sel: Array[Int], n: Int, out: Array[Int]): Int = {
      if (kept.length < n) { kept = new Array[Int](n); others = new Array[Int](n) }
      val a = left.filter(column, sel, n, kept)
      var rest = 0
      var i = 0
      var j = 0
      while (i < n) {
        val row = sel(i)
        if (j < a && kept(j) == row) j += 1 else { others(rest) = row; rest += 1 }
        i += 1
      }
      val b = right.filter(column, others, rest, others)
      i = 0; j = 0
      var m = 0
      while (i < a || j < b) {
        if (j >= b || (i < a && kept(i) < others(j))) { out(m) = kept(i); i += 1 }
        else { out(m) = others(j); j += 1 }
        m += 1
      }
      m
    }
  }

  private final case class Nulls(c: String, wanted: Boolean) extends ColumnNode(c) {
    override protected def filterVector(v: FieldVector, sel: Array[Int], n: Int, out: Array[Int]): Int = {
      if (v.getNullCount == 0) { if (wanted) 0 else keepAll(sel, n, out) }
      else if (!wanted) nonNull(v, sel, n, out)
      else {
        var m = 0
        var k = 0
        while (k < n) {
          val row = sel(k)
          out(m) = row
          if (v.isNull(row)) m += 1
          k += 1
        }
        m
      }
    }
    override def toString = s"$c IS${if (wanted) "" else " NOT"} NULL"
  }

  /** All the rows of `sel`, into `out`. */
  private def keepAll(sel: Array[Int], n: Int, out: Array[Int]): Int = {
    if (sel ne out) System.arraycopy(sel, 0, out, 0, n)
    n
  }

  /** The rows of `sel` whose value is not null, into `out`; `sel` itself when the vector has no nulls. */
  private def nonNull(v: FieldVector, sel: Array[Int], n: Int, out: Array[Int]): Int =
    if (v.getNullCount == 0) {
      if (sel ne out) System.arraycopy(sel, 0, out, 0, n)
      n
    } else {
      var m = 0
      var k = 0
      while (k < n) {
        val row = sel(k)
        out(m) = row
        if (!v.isNull(row)) m += 1
        k += 1
      }
      m
    }

  /**
   * Numeric comparisons: the selected rows' values as keys of a domain, in a scratch array the node keeps. False
   * for a vector the domain does not know (every row is then kept).
   */
  private abstract class Numeric(c: String, domain: Domain) extends ColumnNode(c) {
    private var keys = new Array[Long](0)

    /** Keeps the rows of `sel` (not null, with their keys in `keys`) where `matches` holds. */
    protected def keep(keys: Array[Long], sel: Array[Int], n: Int, out: Array[Int]): Int

    override protected def filterVector(v: FieldVector, sel: Array[Int], n: Int, out: Array[Int]): Int = {
      if (!reads(v, domain)) keepAll(sel, n, out)
      else {
        val m = nonNull(v, sel, n, out)
        if (keys.length < m) keys = new Array[Long](math.max(m, 1024))
        gather(v, domain, out, m, keys)
        keep(keys, out, m, out)
      }
    }
  }

  /** Keys in [low, high]. */
  private final case class Range(c: String, domain: Domain, bounds: (Long, Long)) extends Numeric(c, domain) {
    private val (low, high) = bounds

    override protected def keep(keys: Array[Long], sel: Array[Int], n: Int, out: Array[Int]): Int = {
      var m = 0
      var k = 0
      while (k < n) {
        val key = keys(k)
        out(m) = sel(k)
        if (key >= low && key <= high) m += 1
        k += 1
      }
      m
    }
    override def toString = s"$c in [$low, $high] ($domain)"
  }

  /** The distinct values of sorted `a`, in order. */
  private def distinct(a: Array[Long]): Array[Long] = {
    var n = 0
    var i = 0
    while (i < a.length) {
      if (n == 0 || a(n - 1) != a(i)) { a(n) = a(i); n += 1 }
      i += 1
    }
    if (n == a.length) a else java.util.Arrays.copyOf(a, n)
  }

  /**
   * Keys in a sorted set of distinct keys: compared one by one when there are few, else looked up in an
   * open-addressing hash table of them (an `IN` of a join's keys, handed to the scan at run time, may hold a million
   * keys, where a binary search costs a cache miss per step).
   */
  private final case class Members(c: String, domain: Domain, set: Array[Long]) extends Numeric(c, domain) {
    private val linear = set.length <= 8
    // A power-of-two table at most half full; `empty` marks a free slot, and is itself a member when `hasEmpty`.
    private val empty = Long.MinValue
    private val hasEmpty = set.length > 0 && set(0) == empty
    private val slots: Array[Long] = if (linear) Array.emptyLongArray else {
      var size = 16
      while (size < set.length * 2) size <<= 1
      val table = Array.fill(size)(empty)
      set.foreach { key =>
        if (key != empty) {
          var s = Members.slot(key, size - 1)
          while (table(s) != empty) s = (s + 1) & (size - 1)
          table(s) = key
        }
      }
      table
    }

    private def contains(key: Long): Boolean =
      if (key == empty) hasEmpty
      else {
        val mask = slots.length - 1
        var s = Members.slot(key, mask)
        while (slots(s) != empty && slots(s) != key) s = (s + 1) & mask
        slots(s) == key
      }

    override protected def keep(keys: Array[Long], sel: Array[Int], n: Int, out: Array[Int]): Int = {
      var m = 0
      var k = 0
      while (k < n) {
        val key = keys(k)
        out(m) = sel(k)
        val hit =
          if (linear) {
            var j = 0
            while (j < set.length && set(j) != key) j += 1
            j < set.length
          } else contains(key)
        if (hit) m += 1
        k += 1
      }
      m
    }
    override def toString =
      s"$c in {${set.take(16).mkString(", ")}${if (set.length > 16) s", ... (${set.length} keys)" else ""}} ($domain)"
  }

  private object Members {
    /** The slot of `key` in a table of `mask + 1` slots: its bits mixed (murmur3's 64-bit finalizer). */
    def slot(key: Long, mask: Int): Int = {
      var h = key
      h ^= h >>> 33
      h *= 0xff51afd7ed558ccdL
      h ^= h >>> 33
      h *= 0xc4ceb93e53a1c2e3L
      h ^= h >>> 33
      (h & mask).toInt
    }
  }

  /** Whether `gather` reads keys of `domain` from vector `v`. */
  private def reads(v: FieldVector, domain: Domain): Boolean = v match {
    case _: BigIntVector | _: TimeStampVector | _: DateMilliVector | _: IntVector | _: DateDayVector | _: SmallIntVector |
         _: TinyIntVector => true
    case _: Float8Vector | _: Float4Vector => domain == Domain.DoubleKey
    case d: DecimalVector => domain == Domain.Raw && d.getPrecision <= Predicate.MaxLongDecimalPrecision
    case _: BitVector => domain == Domain.Raw
    case _ => false
  }

  /** Writes the keys in `domain` of rows `sel(0 until n)` of `v`, a vector `reads` accepts, to `keys`. */
  private def gather(v: FieldVector, domain: Domain, sel: Array[Int], n: Int, keys: Array[Long]): Unit = {
    val raw = domain == Domain.Raw
    val b = v.getDataBuffer
    var k = 0
    v match {
      case _: BigIntVector | _: TimeStampVector | _: DateMilliVector =>
        if (raw) while (k < n) { keys(k) = b.getLong(sel(k).toLong << 3); k += 1 }
        else while (k < n) { keys(k) = Keys.doubleKey(b.getLong(sel(k).toLong << 3).toDouble); k += 1 }
      case _: IntVector | _: DateDayVector =>
        if (raw) while (k < n) { keys(k) = b.getInt(sel(k).toLong << 2); k += 1 }
        else while (k < n) { keys(k) = Keys.doubleKey(b.getInt(sel(k).toLong << 2).toDouble); k += 1 }
      case _: SmallIntVector =>
        if (raw) while (k < n) { keys(k) = b.getShort(sel(k).toLong << 1); k += 1 }
        else while (k < n) { keys(k) = Keys.doubleKey(b.getShort(sel(k).toLong << 1).toDouble); k += 1 }
      case _: TinyIntVector =>
        if (raw) while (k < n) { keys(k) = b.getByte(sel(k).toLong); k += 1 }
        else while (k < n) { keys(k) = Keys.doubleKey(b.getByte(sel(k).toLong).toDouble); k += 1 }
      case _: Float8Vector =>
        while (k < n) { keys(k) = Keys.doubleKey(b.getDouble(sel(k).toLong << 3)); k += 1 }
      case _: Float4Vector =>
        while (k < n) { keys(k) = Keys.doubleKey(b.getFloat(sel(k).toLong << 2).toDouble); k += 1 }
      case _: DecimalVector =>
        // Decimal128 values are little-endian two's complement; up to 18 digits they fit the low eight bytes.
        while (k < n) { keys(k) = b.getLong(sel(k).toLong << 4); k += 1 }
      case bits: BitVector =>
        while (k < n) { keys(k) = bits.get(sel(k)); k += 1 }
      case other => throw new IllegalStateException(s"no keys in $domain from ${other.getClass.getSimpleName}")
    }
  }

  /**
   * Strings equal to one of `values`: compared one by one when they are few, else looked up in an open-addressing
   * hash table of them (an `IN` of a join's keys, handed to the scan at run time, may hold a million values).
   */
  private final case class Strings(c: String, values: Array[Array[Byte]]) extends ColumnNode(c) {
    private val strings = new Utf8Values
    private val hashed = values.length > 8
    // Slots of a power-of-two table at most half full: the index of a value plus one, 0 for an empty slot.
    private val slots: Array[Int] = if (!hashed) Array.emptyIntArray else {
      var size = 16
      while (size < values.length * 2) size <<= 1
      val table = new Array[Int](size)
      var i = 0
      while (i < values.length) {
        var s = Strings.hash(values(i), 0, values(i).length) & (size - 1)
        while (table(s) != 0) s = (s + 1) & (size - 1)
        table(s) = i + 1
        i += 1
      }
      table
    }

    /** Whether bytes [start, start + len) of `data` are one of the values, by the hash table. */
    private def lookup(data: Array[Byte], start: Int, len: Int): Boolean = {
      val mask = slots.length - 1
      var s = Strings.hash(data, start, len) & mask
      var found = false
      while (!found && slots(s) != 0) {
        val want = values(slots(s) - 1)
        found = want.length == len && java.util.Arrays.equals(data, start, start + len, want, 0, len)
        s = (s + 1) & mask
      }
      found
    }

    override protected def filterVector(v: FieldVector, sel: Array[Int], n: Int, out: Array[Int]): Int = {
      if (!strings.load(v)) return keepAll(sel, n, out)
      val m = nonNull(v, sel, n, out)
      val data = strings.data
      val offsets = strings.offsets
      var kept = 0
      var k = 0
      while (k < m) {
        val row = out(k)
        val start = offsets(row)
        val len = offsets(row + 1) - start
        var hit = hashed && lookup(data, start, len)
        var j = if (hashed) values.length else 0
        while (!hit && j < values.length) {
          val want = values(j)
          // The first byte rules out most values without a call to Arrays.equals.
          hit = want.length == len && (len == 0 || data(start) == want(0)) &&
            java.util.Arrays.equals(data, start, start + len, want, 0, len)
          j += 1
        }
        out(kept) = row
        if (hit) kept += 1
        k += 1
      }
      kept
    }
    override def toString = s"$c in {${values.take(16).map(new String(_, StandardCharsets.UTF_8)).mkString("'", "', '", "'")}" +
      s"${if (values.length > 16) s", ... (${values.length} strings)" else ""}}"
  }

  private object Strings {
    /** A hash of bytes [start, start + len) of `data`, its bits mixed so that the low ones spread (murmur3's finalizer). */
    def hash(data: Array[Byte], start: Int, len: Int): Int = {
      var h = len
      var i = start
      val end = start + len
      while (i < end) { h = 31 * h + data(i); i += 1 }
      h ^= h >>> 16
      h *= 0x85ebca6b
      h ^= h >>> 13
      h *= 0xc2b2ae35
      h ^ (h >>> 16)
    }
  }

  /** Strings between two bounds (null: unbounded), in the order of their unsigned bytes. */
  private final case class StringRange(c: String, low: Array[Byte], lowInclusive: Boolean, high: Array[Byte],
      highInclusive: Boolean) extends ColumnNode(c) {
    private val strings = new Utf8Values

    override protected def filterVector(v: FieldVector, sel: Array[Int], n: Int, out: Array[Int]): Int = {
      if (!strings.load(v)) return keepAll(sel, n, out)
      val m = nonNull(v, sel, n, out)
      val data = strings.data
      val offsets = strings.offsets
      var kept = 0
      var k = 0
      while (k < m) {
        val row = out(k)
        val start = offsets(row)
        val end = offsets(row + 1)
        val aboveLow = low == null || {
          val cmp = java.util.Arrays.compareUnsigned(data, start, end, low, 0, low.length)
          cmp > 0 || (cmp == 0 && lowInclusive)
        }
        val belowHigh = high == null || {
          val cmp = java.util.Arrays.compareUnsigned(data, start, end, high, 0, high.length)
          cmp < 0 || (cmp == 0 && highInclusive)
        }
        out(kept) = row
        if (aboveLow && belowHigh) kept += 1
        k += 1
      }
      kept
    }
  }

  /** Strings that start with, end with or contain `text`, byte for byte. */
  private final case class StringPattern(c: String, op: Predicate.StringOp, text: Array[Byte]) extends ColumnNode(c) {
    private val strings = new Utf8Values

    override protected def filterVector(v: FieldVector, sel: Array[Int], n: Int, out: Array[Int]): Int = {
      if (!strings.load(v)) return keepAll(sel, n, out)
      val m = nonNull(v, sel, n, out)
      val data = strings.data
      val offsets = strings.offsets
      val t = text.length
      var kept = 0
      var k = 0
      while (k < m) {
        val row = out(k)
        val start = offsets(row)
        val end = offsets(row + 1)
        val hit = end - start >= t && (op match {
          case Predicate.StringOp.StartsWith => java.util.Arrays.equals(data, start, start + t, text, 0, t)
          case Predicate.StringOp.EndsWith => java.util.Arrays.equals(data, end - t, end, text, 0, t)
          case Predicate.StringOp.Contains => contains(data, start, end)
        })
        out(kept) = row
        if (hit) kept += 1
        k += 1
      }
      kept
    }

    /** Whether bytes [start, end) of `data` hold `text`. */
    private def contains(data: Array[Byte], start: Int, end: Int): Boolean = {
      val t = text.length
      if (t == 0) true
      else {
        val first = text(0)
        var i = start
        var found = false
        while (!found && i <= end - t) {
          found = data(i) == first && java.util.Arrays.equals(data, i, i + t, text, 0, t)
          i += 1
        }
        found
      }
    }
    override def toString = s"$op($c, '${new String(text, StandardCharsets.UTF_8)}')"
  }

  /**
   * The values of a string vector copied to heap arrays, offsets and bytes (one copy of its data buffer per
   * batch), into arrays reused from batch to batch.
   */
  private final class Utf8Values {
    var offsets = new Array[Int](0)
    var data = new Array[Byte](0)

    /** Loads the values of `v`; false if it is not a string vector, or holds more bytes than an array can. */
    def load(v: FieldVector): Boolean = {
      val rows = v.getValueCount
      if (offsets.length < rows + 1) offsets = new Array[Int](math.max(rows + 1, offsets.length * 2))
      val large = v match {
        case _: VarCharVector => Some(false)
        case _: LargeVarCharVector => Some(true)
        case _ => None
      }
      large.exists { isLarge =>
        val o = v.getOffsetBuffer
        def offset(i: Int): Long = if (rows == 0) 0L else if (isLarge) o.getLong(8L * i) else o.getInt(4L * i).toLong
        val first = offset(0)
        val total = offset(rows) - first
        total >= 0 && total <= Int.MaxValue - 64 && {
          var i = 0
          if (isLarge) while (i <= rows) { offsets(i) = (o.getLong(8L * i) - first).toInt; i += 1 }
          else if (rows > 0) while (i <= rows) { offsets(i) = o.getInt(4L * i) - first.toInt; i += 1 }
          else offsets(0) = 0
          if (data.length < total) data = new Array[Byte](math.max(total.toInt, data.length * 2))
          if (total > 0) v.getDataBuffer.getBytes(first, data, 0, total.toInt)
          true
        }
      }
    }
  }
}
