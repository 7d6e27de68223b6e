package io.sparklance.core.table

import org.apache.arrow.memory.RootAllocator
import org.roaringbitmap.RoaringBitmap

import io.sparklance.core.format.{Fragment, FragmentFiles}
import io.sparklance.core.scan.FragmentReader

/**
 * An estimate, for a planner, of the share of a scan's rows that its data filters keep: an upper bound, since a
 * planner that takes a side for smaller than it is broadcasts it (and Spark's adaptive execution never undoes a
 * broadcast planned), while one that takes it for larger only misses an optimisation.
 *
 * @param share   the share of the rows read that the filters keep, at most (in [0, 1])
 * @param exact   whether every row read was evaluated, so `share` is what the filters keep
 * @param sampled the live rows evaluated
 * @param matched the rows among them the filters keep
 * @param ranges  the row ranges read to evaluate them
 */
final case class FilterSelectivity(share: Double, exact: Boolean, sampled: Long, matched: Long, ranges: Int) {
  override def toString: String =
    if (exact) f"exactly $matched of $sampled rows" else f"at most ${share * 100}%.3f%% ($matched of $sampled rows sampled in $ranges ranges)"
}

object FilterSelectivity {
  /** No filter to evaluate: every row read is kept. */
  val All: FilterSelectivity = FilterSelectivity(1.0, exact = true, 0, 0, 0)

  /** The rows a sample evaluates, at most; a scan of no more rows than this is evaluated whole, exactly. */
  val SampleRows = 16384

  /** The rows of one sampled range: many short ranges spread out, since data is often sorted or clustered. */
  val RangeRows = 64

  /** The fragments a sample reads from, at most, spread evenly over those a scan reads (each opens its files). */
  val SampleFragments = 16

  /** The estimates kept for reuse ([[cached]]), at most. */
  val CachedEstimates = 512

  private val cache = new java.util.LinkedHashMap[Any, FilterSelectivity](64, 0.75f, true) {
    override def removeEldestEntry(e: java.util.Map.Entry[Any, FilterSelectivity]): Boolean = size() > CachedEstimates
  }

  /**
   * The estimate kept for `key` (a version's manifest, the fragments and rows read, the filters: what decides the
   * estimate, since a version's files never change), else `estimate`'s, then kept: a query planned again, or run
   * again, samples no file. The [[CachedEstimates]] last used are kept.
   */
  def cached(key: Any)(estimate: => FilterSelectivity): FilterSelectivity = {
    val known = cache.synchronized(Option(cache.get(key)))
    known.getOrElse {
      val made = estimate
      cache.synchronized(cache.put(key, made))
      made
    }
  }

  /** The standard errors above the sampled share that the estimate adds, as an upper confidence bound. */
  val Deviations = 3.0

  /**
   * The share of the rows of `fragments` (each with the physical offsets a scan reads of it, or None for all its
   * live rows) that `predicates` keep, evaluated by the readers' own batch filter ([[BatchPredicate]]: what a scan
   * keeps of a batch) on the filtered columns alone. Where the fragments hold at most [[SampleRows]] rows to read,
   * all are evaluated and the share is exact. Otherwise about [[SampleRows]] rows are read, in ranges of
   * [[RangeRows]] spread evenly over each of up to [[SampleFragments]] fragments spread evenly over those given
   * (ranges of the offsets read, where a fragment's rows are selected), as many in each as its share of the sampled
   * fragments' rows, and the share is an upper bound: the sampled share plus
   * [[Deviations]] standard errors, each range counted as one draw (rows of a range are alike where data is
   * clustered), and at least the Wilson bound of the rows sampled (a share above 0 when none matched) and the share
   * of one gap between ranges (a run of matching values, sorted data, can lie between two of them).
   *
   * The cost: the files of up to [[SampleFragments]] fragments opened (their metadata, as a scan opens them), and
   * the pages of the filtered columns that hold the sampled ranges read.
   */
  def estimate(snapshot: Snapshot, fragments: Seq[(Fragment, Option[RoaringBitmap])], predicates: Seq[Predicate]): FilterSelectivity = {
    val columns = predicates.flatMap(_.columns).distinct
    val fields = columns.flatMap(c => snapshot.schema.field(c).toSeq)
    val units = fragments.map { case (f, s) => s.map(_.getLongCardinality).getOrElse(f.numRows) }
    val kept = fragments.zip(units).filter(_._2 > 0)
    if (predicates.isEmpty || fields.size != columns.size || kept.isEmpty) return All
    val exact = units.sum <= SampleRows
    val sampled =
      if (exact || kept.size <= SampleFragments) kept
      else (0 until SampleFragments).map(i => kept((i.toLong * kept.size / SampleFragments).toInt))
    // Ranges in proportion to the fragments' rows, so that each sampled row stands for as many of the scan's.
    val sampledUnits = sampled.map(_._2).sum.toDouble
    def rangesIn(units: Long): Int = math.max(1, math.round(SampleRows / RangeRows * units / sampledUnits).toInt)
    val predicate = BatchPredicate.compile(predicates, fields)
    val allocator = new RootAllocator(Long.MaxValue)
    val counts = scala.collection.mutable.ArrayBuffer.empty[(Int, Int)]
    try {
      sampled.foreach { case ((fragment, selection), units) =>
        val ranges = if (exact) None else Some(rangesIn(units))
        val deletions = FragmentFiles.deletionVector(snapshot.storage, snapshot.layout, fragment)
        // The live offsets of each range, read in one call: a read decodes each page's dictionary and chunks once,
        // not once per range.
        val live: Seq[Array[Long]] = selection match {
          case Some(rows) =>
            val offsets = rows.toArray.map(_.toLong)
            rangesOf(offsets.length.toLong, ranges).map { case (from, to) =>
              java.util.Arrays.copyOfRange(offsets, from.toInt, to.toInt).filterNot(o => deletions.contains(o.toInt))
            }
          case None =>
            rangesOf(fragment.physicalRows, ranges).map { case (from, to) =>
              deletions.liveOffsets(from, to).getOrElse(Array.range(from.toInt, to.toInt).map(_.toLong))
            }
        }
        val offsets = live.flatten.toArray
        if (offsets.nonEmpty) {
          val reader = new FragmentReader(snapshot.storage, snapshot.layout, fragment, fields, Nil, deletions, None)
          val root = try reader.readRows(offsets, allocator, fields) finally reader.close()
          try {
            val n = root.getRowCount
            if (n != offsets.length) throw new IllegalStateException(
              s"fragment ${fragment.id} of ${snapshot.root} gave $n of the ${offsets.length} live rows sampled")
            val kept = new Array[Int](n)
            val matched = predicate.select(root.getVector(_: String), n, kept)
            // The matches of each range: kept holds the matching rows' positions, ascending.
            var k = 0
            var end = 0
            live.foreach { range =>
              end += range.length
              var m = 0
              while (k < matched && kept(k) < end) { m += 1; k += 1 }
              counts += ((range.length, m))
            }
          } finally root.close()
        }
      }
    } finally allocator.close()
    bound(counts.toSeq, exact)
  }

  /**
   * Row ranges [from, to) of `rows` rows: with `count`, that many of [[RangeRows]] rows spread evenly (all rows in
   * ranges of that size when they are no more); without, all of them in ranges of [[SampleRows]].
   */
  private def rangesOf(rows: Long, count: Option[Int]): Seq[(Long, Long)] = count match {
    case Some(c) if rows > c.toLong * RangeRows =>
      (0 until c).map { i => val from = i * rows / c; (from, from + RangeRows) }
    case Some(_) => (0L until rows by RangeRows.toLong).map(from => (from, math.min(rows, from + RangeRows)))
    case None => (0L until rows by SampleRows.toLong).map(from => (from, math.min(rows, from + SampleRows)))
  }

  /** The estimate from the (rows, matches) of each range evaluated: exact, or an upper bound of a sample's share. */
  private[table] def bound(counts: Seq[(Int, Int)], exact: Boolean): FilterSelectivity = {
    val rows = counts.map(_._1.toLong).sum
    val matched = counts.map(_._2.toLong).sum
    if (rows == 0) All.copy(exact = exact, ranges = counts.size)
    else if (exact) FilterSelectivity(matched.toDouble / rows, exact = true, rows, matched, counts.size)
    else {
      val p = matched.toDouble / rows
      val z = Deviations
      val m = counts.count(_._1 > 0)
      val clustered = if (m < 2) 1.0 else {
        val mean = rows.toDouble / m
        val squares = counts.filter(_._1 > 0).map { case (n, k) => val d = (k - p * n) / mean; d * d }.sum
        p + z * math.sqrt(squares / (m.toDouble * (m - 1)))
      }
      val wilson = (p + z * z / (2 * rows) + z * math.sqrt(p * (1 - p) / rows + z * z / (4.0 * rows * rows))) / (1 + z * z / rows)
      val gap = 1.0 / math.max(1, m)
      FilterSelectivity(math.min(1.0, math.max(clustered, math.max(wilson, gap))), exact = false, rows, matched, counts.size)
    }
  }
}
