package io.sparklance.core.table

import scala.collection.mutable.ArrayBuffer

import org.apache.arrow.memory.BufferAllocator
import org.roaringbitmap.RoaringBitmap

import io.sparklance.core.{MetadataColumn, UnsupportedFeatureException}
import io.sparklance.core.file.LanceFileReader
import io.sparklance.core.format.{Fragment, TableLayout}
import io.sparklance.core.schema.{LanceField, LanceSchema, LogicalType}
import io.sparklance.proto.TableProtos

/**
 * A read of one pinned table version, planned on the driver: which columns (nested fields pruned), which metadata
 * columns, which fragments, which predicates the readers use to skip batches, and how many rows at most. Immutable;
 * each `with...` returns a new scan. [[planTasks]] splits it into [[ScanTask]]s, plain data that
 * [[Table.read]] reads anywhere.
 */
final class Scan private[table] (
    val snapshot: Snapshot,
    val projection: Seq[LanceField],
    val metadataColumns: Seq[MetadataColumn],
    val fragmentFilters: Seq[Predicate],
    val dataFilters: Seq[Predicate],
    val limit: Option[Int],
    val batchRows: Int,
    val topN: Option[TopN]) {

  private def copy(projection: Seq[LanceField] = projection, metadataColumns: Seq[MetadataColumn] = metadataColumns,
      fragmentFilters: Seq[Predicate] = fragmentFilters, dataFilters: Seq[Predicate] = dataFilters,
      limit: Option[Int] = limit, batchRows: Int = batchRows, topN: Option[TopN] = topN): Scan =
    new Scan(snapshot, projection, metadataColumns, fragmentFilters, dataFilters, limit, batchRows, topN)

  /** Reads these fields of the table (pruned as given) in this order. */
  def withProjection(fields: Seq[LanceField]): Scan = copy(projection = fields)

  def withMetadataColumns(columns: Seq[MetadataColumn]): Scan = copy(metadataColumns = columns)

  /**
   * Uses the predicates the scan can use ([[Scan.filterUse]]); the others are ignored and left to the caller, as
   * are the batch-skipping ones, which only skip rows the caller would drop.
   */
  def withFilters(predicates: Seq[Predicate]): Scan = {
    val fragment = predicates.filter(Scan.filterUse(snapshot.schema, _) == Scan.FilterUse.SelectsFragments)
    val data = predicates.filter { p =>
      val use = Scan.filterUse(snapshot.schema, p)
      use == Scan.FilterUse.SkipsBatches || use == Scan.FilterUse.SelectsRows
    }
    if (topN.isDefined && data.nonEmpty) refuseTopNWithFilters(data)
    copy(fragmentFilters = fragment, dataFilters = data)
  }

  /**
   * Returns, per task, only the task's first `topN.k` rows in `topN`'s order, sorted (a caller takes the first `k`
   * of all tasks' rows); where a B-tree index on the first key covers fragments read, only the rows of those
   * fragments that can be among the first `k` are read ([[BTreeOrder.topN]]), else where a zone map index on it
   * bounds what those rows can be, zones that cannot hold one are not read ([[TopNZones]]). Every key must be a column the scan orders ([[TopN.orders]]) and read
   * (in the projection). Not with data filters: batches keep rows a filter may still drop, and those would crowd
   * out rows that belong in the top `k`.
   */
  def withTopN(order: TopN): Scan = {
    order.keys.find(k => !TopN.orders(snapshot.schema, k.column)).foreach { k =>
      throw new UnsupportedFeatureException(s"Cannot read the first rows of ${snapshot.root} ordered by '${k.column}': " +
        "a scan orders rows only by top-level columns of integer, float, boolean, string, binary, date, timestamp or " +
        "decimal type. Sort the rows read instead.")
    }
    if (dataFilters.nonEmpty) refuseTopNWithFilters(dataFilters)
    copy(topN = Some(order), limit = None)
  }

  private def refuseTopNWithFilters(filters: Seq[Predicate]): Nothing =
    throw new UnsupportedFeatureException(s"Cannot read the first rows of ${snapshot.root} in an order with filters on " +
      s"its data (${filters.mkString(" and ")}): the scan does not drop every row the filters drop. Filter and sort the rows read instead.")

  /**
   * The rows of a top-N's first key's zone map that can hold one of the top rows ([[TopNZones]]), read on first
   * use. None without a top-N or with filters on data.
   */
  private[table] lazy val topNZones: TopNZones = topN match {
    case Some(t) if dataFilters.isEmpty && topNBTree.isEmpty => TopNZones.plan(snapshot, filteredFragments, t)
    case _ => TopNZones.None
  }

  /** The rows a B-tree on a top-N's first key selects ([[BTreeOrder.topN]]), walked on first use. */
  private[table] lazy val topNBTree: Option[TopNBTree] = topN match {
    case Some(t) if dataFilters.isEmpty => BTreeOrder.topN(snapshot, filteredFragments, t)
    case _ => scala.None
  }

  /** What index narrows the rows of a top-N (`b-tree 'v_idx' selects 12 rows of 3 fragments`, ...), for a plan. */
  def topNIndexUse: Option[String] =
    topNBTree.map(_.toString).orElse(topNZones.index.map(_ => topNZones.toString))

  def withLimit(rows: Int): Scan = copy(limit = Some(rows), topN = None)

  def withBatchRows(rows: Int): Scan = copy(batchRows = rows)

  /**
   * The scalar indexes the data filters use ([[IndexUse]]), searched on first use: the rows of indexed fragments
   * that can match. Searching reads index files; plan where that is cheap (the driver).
   */
  lazy val indexUse: IndexUse = if (dataFilters.isEmpty) IndexUse.None else IndexUse.plan(snapshot, dataFilters)

  /** The rows the predicates on `_rowid` and `_rowaddr` select ([[Take]]), if there are such predicates. */
  private lazy val take: Option[Take] = {
    val predicates = dataFilters.filter(Take.selectsRows)
    if (predicates.isEmpty) None else Some(Take(snapshot, predicates))
  }

  /** Whether the scan reads only rows selected by offset: by an index ([[indexUse]]), or by row ids or addresses. */
  def selectsRows: Boolean = !indexUse.isEmpty || take.isDefined

  /** Per fragment of the version, the physical offsets to read (those both an index and [[take]] select), or None for all. */
  private lazy val selected: Map[Long, Option[RoaringBitmap]] = snapshot.fragments.map { f =>
    val byIndex = indexUse.rows(f.id)
    val taken = take.flatMap(_.rows(f))
    val selection = if (byIndex.isEmpty) taken else if (taken.isEmpty) byIndex else Some(RoaringBitmap.and(byIndex.get, taken.get))
    val byTopN = if (topN.isEmpty) scala.None else topNBTree.fold(topNZones.rows.get(f.id))(_.rows.get(f.id))
    f.id -> (if (topN.isEmpty) selection else (selection, byTopN) match {
      case (Some(a), Some(b)) => Some(RoaringBitmap.and(a, b))
      case (a, b) => a.orElse(b)
    })
  }.toMap

  private def selectedRows(f: Fragment): Option[RoaringBitmap] = selected.getOrElse(f.id, None)

  /**
   * The fragments the scan reads: those every fragment filter keeps, but those in which the indexes used, or the
   * row ids asked, select no row.
   */
  def fragments: Seq[Fragment] = filteredFragments.filter(f => !selectedRows(f).exists(_.isEmpty))

  /** The fragments every fragment filter keeps. */
  private def filteredFragments: Seq[Fragment] = snapshot.fragments.filter(f => fragmentFilters.forall(Scan.keepsFragment(_, f.id)))

  /** The ids of the fragments the scan reads. */
  def fragmentIds: Seq[Long] = fragments.map(_.id)

  /** The live rows of the selected fragments, from the manifest alone. */
  def countRows(): Long = fragments.map(_.numRows).sum

  /**
   * The `aggregates` of the scan's rows from the table's metadata and indexes alone ([[MetadataAggregates]]): one
   * row with a column per aggregate and what answered them ([[AggregateAnswer]]); None unless they answer every
   * one of them exactly.
   */
  def aggregateFromMetadata(aggregates: Seq[Aggregate], allocator: BufferAllocator): Option[AggregateAnswer] =
    MetadataAggregates.answer(snapshot, fragments, dataFilters, aggregates, allocator)

  /** The bytes of `f`'s data files: their recorded sizes, or `defaultRowBytes` per physical row where one is not recorded. */
  private def fileBytes(f: Fragment, defaultRowBytes: Long): Double = {
    val sizes = f.files.map(_.fileSizeBytes)
    if (sizes.forall(_.isDefined)) sizes.flatten.sum.toDouble else f.physicalRows.toDouble * defaultRowBytes
  }

  /**
   * The share of the bytes of the fragments' data files that the columns the scan reads take: the sizes of those
   * columns' page and column buffers (the files' column metadata, [[io.sparklance.core.file.FileMetadata.columnBytes]]) against the files'
   * sizes, over the data files of up to [[Scan.ColumnSizeSample]] fragments spread evenly over those the scan reads.
   * One writer gives a table's fragments the same columns and encodings, so a few tell the rest, and the files
   * opened to plan stay few (a ranged read of each one's end, none where [[io.sparklance.core.file.FileMetadataCache]] holds it). None when
   * a sampled file's manifest entry lists no column indices (older writers), or the samples hold no bytes.
   */
  lazy val columnShare: Option[Double] = {
    val kept = fragments
    val sample = if (kept.size <= Scan.ColumnSizeSample) kept
      else (0 until Scan.ColumnSizeSample).map(i => kept((i.toLong * kept.size / Scan.ColumnSizeSample).toInt))
    val ids = projection.flatMap(_.flatten).map(_.id).toSet
    var read = 0L
    var total = 0L
    var told = true
    sample.foreach(_.files.foreach { file =>
      if (file.columnIndices.size != file.fields.size) told = false
      else {
        val reader = LanceFileReader.openImmutable(snapshot.storage, snapshot.dataFilePath(file), file.fileSizeBytes.getOrElse(-1L))
        try {
          val m = reader.metadata
          total += m.fileSize
          file.fields.zip(file.columnIndices).foreach { case (id, column) =>
            if (ids(id) && column >= 0 && column < m.columns.size) read += m.columnBytes(column)
          }
        } finally reader.close()
      }
    })
    if (!told || total <= 0) None else Some(math.min(1.0, read.toDouble / total))
  }

  /**
   * The bytes the scan reads of fragment `f` for `rows` of its physical rows: its data files' bytes in proportion
   * to those rows, times the share its columns take ([[columnShare]], or `estimatedShare` where the files do not
   * tell), plus 8 bytes per row for each metadata column, and at least a byte per row. A fragment whose file sizes
   * the manifest does not record counts `defaultRowBytes` per row times `estimatedShare`: both are the caller's
   * estimates of a row, which a share of real files would not fit.
   */
  private def readBytes(f: Fragment, rows: Long, defaultRowBytes: Long, estimatedShare: Double): Double = {
    val recorded = f.files.forall(_.fileSizeBytes.isDefined)
    val share = if (recorded) columnShare.getOrElse(estimatedShare) else estimatedShare
    val columns = fileBytes(f, defaultRowBytes) * share * rows / math.max(1L, f.physicalRows)
    math.max(rows.toDouble, columns + 8.0 * metadataColumns.size * rows)
  }

  /** The values a row of the scan holds: its leaf columns (a struct's fields, a list's items) and metadata columns. */
  private def valuesPerRow: Int = projection.flatMap(_.flatten).count(_.children.isEmpty) + metadataColumns.size

  /**
   * The rows the scan reads before its data filters and their bytes, for a planner: per fragment kept, its live rows (or those an index
   * selected) and the bytes of the columns read for them ([[readBytes]]: from the files' column sizes, else
   * `estimatedShare` of the files' sizes; a fragment whose sizes the manifest does not record counts
   * `defaultRowBytes` per physical row), and at least a byte per value read: runs, constant pages and small
   * dictionaries can store millions of values in a few bytes, which a planner must not take for the size of the rows
   * it would hold in memory (a broadcast).
   */
  def estimateRead(defaultRowBytes: Long, estimatedShare: Double): (Long, Long) = {
    var rows = 0L
    var bytes = 0.0
    val values = math.max(1, valuesPerRow)
    fragments.foreach { f =>
      val selected = selectedRows(f).map(_.getLongCardinality).getOrElse(f.numRows)
      rows += selected
      bytes += math.max(readBytes(f, selected, defaultRowBytes, estimatedShare), values.toDouble * selected)
    }
    (rows, bytes.toLong)
  }

  /**
   * The rows the scan returns after its data filters and their bytes, for a planner: [[estimateRead]]'s rows and
   * bytes times [[filterSelectivity]]'s share (an upper bound), rounded up, and as read where no filter is sampled.
   */
  def estimate(defaultRowBytes: Long, estimatedShare: Double): (Long, Long) = {
    val (rows, bytes) = estimateRead(defaultRowBytes, estimatedShare)
    val share = filterSelectivity.share
    if (share >= 1.0) (rows, bytes)
    else (math.min(rows, math.ceil(rows * share).toLong), math.min(bytes, math.ceil(bytes * share).toLong))
  }

  /**
   * The data filters whose share of rows [[filterSelectivity]] estimates: those the readers' batch filter
   * evaluates (not the ones on `_rowid` or `_rowaddr`, which select the rows read, nor those on a list's items or
   * full-text queries), but those on a column an index used searched: its selection is already the rows read.
   */
  private def estimatedFilters: Seq[Predicate] = {
    val indexed = (indexUse.used.map(_._2) ++ indexUse.usedText.map(_._2)).toSet
    dataFilters.filter(p => !Take.selectsRows(p) && evaluatedByBatches(p) && !p.columns.exists(indexed))
  }

  /**
   * The share of the rows the scan reads (live, or those an index or row ids select) that its data filters keep,
   * estimated on first use by evaluating them on a sample of the filtered columns ([[FilterSelectivity.estimate]]:
   * exact for a scan of few rows, else an upper bound; it reads files). Every row without such filters.
   */
  lazy val filterSelectivity: FilterSelectivity = {
    val filters = estimatedFilters
    if (filters.isEmpty) FilterSelectivity.All
    else {
      val read = fragments.map(f => f -> selectedRows(f))
      val key = (snapshot.root, snapshot.manifest.path, read.map { case (f, s) => (f.id, s.map(_.getLongCardinality)) }, filters)
      FilterSelectivity.cached(key)(FilterSelectivity.estimate(snapshot, read, filters))
    }
  }

  /**
   * The rows the scan reads and the bytes of the data files they stand for: per fragment kept, its live rows (or
   * those an index selected) and its data files' sizes in proportion to them, whatever columns the scan reads (a
   * fragment whose sizes the manifest does not record counts `defaultRowBytes` per physical row).
   */
  def estimateFileBytes(defaultRowBytes: Long): (Long, Long) = {
    var rows = 0L
    var bytes = 0.0
    fragments.foreach { f =>
      val selected = selectedRows(f).map(_.getLongCardinality).getOrElse(f.numRows)
      rows += selected
      bytes += fileBytes(f, defaultRowBytes) * selected / math.max(1L, f.physicalRows)
    }
    (rows, bytes.toLong)
  }

  /** Whether batches evaluate `p`: not a list's items nor a full-text query, which indexes alone use. */
  private def evaluatedByBatches(p: Predicate): Boolean =
    !p.isInstanceOf[Predicate.ListHasAny] && !p.isInstanceOf[Predicate.FullTextMatch]

  private def context: ScanTask.Context = {
    // One schema per projected field: a field may be projected more than once (the parts of a blob column).
    val fieldsBytes = projection.map(f => LanceSchema(IndexedSeq(f), Map.empty).toBytes)
    val readable = dataFilters.filter(p => evaluatedByBatches(p) && p.columns.forall(c => projection.exists(_.name == c)))
    ScanTask.Context(snapshot.layout, snapshot.manifest.path, fieldsBytes, metadataColumns.map(_.name),
      snapshot.manifest.hasStableRowIds, batchRows, limit, readable, topN)
  }

  /**
   * The tasks of the scan: large fragments split into row ranges, small ranges packed together, each task about
   * `rowsPerTask` physical rows.
   */
  def planTasks(rowsPerTask: Long): Seq[ScanTask] = {
    val shared = context
    val slices = fragments.flatMap { fragment =>
      val bytes = fragment.proto.toByteArray
      selectedRows(fragment) match {
        case Some(offsets) =>
          // Rows selected: read by offset, in slices of at most rowsPerTask of them.
          offsets.toArray.grouped(math.max(1L, math.min(rowsPerTask, Int.MaxValue)).toInt).map { offsets =>
            ScanTask.Slice(bytes, offsets.head.toLong, offsets.last.toLong + 1, Some(offsets))
          }.toSeq
        case None =>
          (0L until fragment.physicalRows by rowsPerTask).map { from =>
            ScanTask.Slice(bytes, from, math.min(fragment.physicalRows, from + rowsPerTask))
          }
      }
    }
    val tasks = ArrayBuffer.empty[ScanTask]
    var current = Vector.empty[ScanTask.Slice]
    var rows = 0L
    slices.foreach { s =>
      if (current.nonEmpty && rows + s.rows > rowsPerTask) {
        tasks += ScanTask(current, shared); current = Vector.empty; rows = 0
      }
      current :+= s
      rows += s.rows
    }
    if (current.nonEmpty) tasks += ScanTask(current, shared)
    tasks.toSeq
  }

  /**
   * The tasks of the scan sized by the bytes of data files they read ([[Scan.TaskSizing]]): the bytes of the columns
   * read in the fragments ([[readBytes]], as [[estimate]] counts them), in
   * order, are cut into tasks of equal bytes, each of at most `maxBytes`, of at least `minBytes` unless the scan has
   * fewer, and at least `parallelism` of them when that leaves each task `minBytes`. A cut inside a fragment splits
   * it by rows (or by the offsets an index selected), its bytes standing evenly for its physical rows; whole
   * fragments between cuts share a task. A scan whose `spreadBytes` fill `parallelism` tasks of `minBytes` takes
   * that many tasks at least, however few bytes its columns' pages hold.
   */
  def planTasks(sizing: Scan.TaskSizing): Seq[ScanTask] = {
    val shared = context
    val kept = fragments.flatMap { f =>
      val offsets = selectedRows(f).map(_.toArray)
      val units = offsets.map(_.length.toLong).getOrElse(f.physicalRows)
      if (units == 0) None
      else Some((f, offsets, units, readBytes(f, units, sizing.defaultRowBytes, sizing.readShare)))
    }
    val total = kept.map(_._4).sum
    val target = math.min(sizing.maxBytes.toDouble, math.max(sizing.minBytes.toDouble, total / math.max(1, sizing.parallelism)))
    val spread = math.min(sizing.parallelism.toLong, math.ceil(sizing.spreadBytes / math.max(1L, sizing.minBytes)).toLong)
    val count = math.max(spread, math.max(1L, math.ceil(total / math.max(1.0, target)).toLong))
    val perTask = total / count
    val tasks = ArrayBuffer.empty[ScanTask]
    var current = Vector.empty[ScanTask.Slice]
    def close(): Unit = if (current.nonEmpty) { tasks += ScanTask(current, shared); current = Vector.empty }
    var before = 0.0 // the bytes of the fragments already cut
    var cut = 1L // the next cut falls after cut * perTask bytes
    kept.foreach { case (f, offsets, units, bytes) =>
      val proto = f.proto.toByteArray
      def add(from: Long, to: Long): Unit = current :+= (offsets match {
        case Some(all) =>
          val part = java.util.Arrays.copyOfRange(all, from.toInt, to.toInt)
          ScanTask.Slice(proto, part.head.toLong, part.last.toLong + 1, Some(part))
        case None => ScanTask.Slice(proto, from, to)
      })
      val unitBytes = bytes / units
      var start = 0L
      while (cut < count && cut * perTask < before + bytes) {
        val at = if (unitBytes <= 0) start else math.max(start, math.min(units, math.round((cut * perTask - before) / unitBytes)))
        if (at > start) { add(start, at); start = at }
        close()
        cut += 1
      }
      if (start < units) add(start, units)
      before += bytes
    }
    close()
    tasks.toSeq
  }

  override def toString: String =
    s"Scan(${snapshot.root}@${snapshot.version}, columns=[${(projection.map(_.name) ++ metadataColumns.map(_.name)).mkString(", ")}]" +
      limit.map(l => s", limit=$l").getOrElse("") +
      topN.map(t => s", $t per task").getOrElse("") +
      (if (fragmentFilters.nonEmpty) s", fragments where ${fragmentFilters.mkString(" and ")}" else "") +
      (if (dataFilters.nonEmpty) s", batches where ${dataFilters.mkString(" and ")}" else "") +
      (if (!indexUse.isEmpty) s", using $indexUse" else "") +
      topNIndexUse.map(u => s", $u").getOrElse("") +
      (if (take.isDefined) s", taking ${fragments.map(f => selectedRows(f).fold(f.numRows)(_.getLongCardinality)).sum} rows by id" else "") + ")"
}

object Scan {
  /** The fragments whose data files' column sizes [[Scan.columnShare]] reads, at most. */
  val ColumnSizeSample = 8

  private[table] def of(snapshot: Snapshot): Scan =
    new Scan(snapshot, snapshot.schema.fields, Nil, Nil, Nil, None, 8192, None)

  /**
   * How [[Scan.planTasks]] sizes tasks by bytes, as Spark sizes the splits of its file sources: at most `maxBytes`
   * of data files per task (Spark's `spark.sql.files.maxPartitionBytes`), at least `minBytes` (its
   * `openCostInBytes`: below that, another task costs more than it saves), and the scan spread over `parallelism`
   * tasks (its `minPartitionNum`, by default the cores) when it is small. A fragment whose file sizes the manifest
   * does not record counts `defaultRowBytes` per row. A task is sized by the bytes of the columns it reads, not by
   * columns it leaves unread, such as a long comment column: their share of the files comes from the files' column
   * sizes ([[Scan.columnShare]]); `readShare` (in (0, 1]) is the caller's estimate of it for files that do not tell.
   * `spreadBytes` is the scan's size as the caller's engine judges whether it fills the `parallelism` tasks (Spark
   * spreads a Parquet scan by its files' bytes, whatever columns it reads): decoding costs about as much per value
   * whether the pages compress well or not, so a scan of keys whose pages are small (sorted or narrow integers)
   * still takes a task per core when its `spreadBytes` would give Parquet's scan as many. 0 leaves the count to
   * the pages' bytes.
   */
  final case class TaskSizing(maxBytes: Long, minBytes: Long, parallelism: Int, defaultRowBytes: Long,
      readShare: Double = 1.0, spreadBytes: Double = 0) {
    require(readShare > 0 && readShare <= 1, s"readShare $readShare is not in (0, 1]")
    require(spreadBytes >= 0, s"spreadBytes $spreadBytes is negative")
  }

  /** What a scan does with a predicate. */
  sealed trait FilterUse
  object FilterUse {
    /** A predicate on `_fragid`: the scan reads exactly the fragments it keeps; nobody needs to evaluate it again. */
    case object SelectsFragments extends FilterUse
    /**
     * A predicate on data columns: rows where it cannot hold are skipped (whole batches, or all but the matching
     * rows of a batch: [[TaskReader]]); rows it does not hold on may still come back, so the caller evaluates it.
     */
    case object SkipsBatches extends FilterUse
    /**
     * A predicate on `_rowid` or `_rowaddr` (with `_fragid`, in `AND`/`OR`): the scan reads only the rows it names,
     * by offset ([[Take]]); the caller evaluates it on the rows returned.
     */
    case object SelectsRows extends FilterUse
    case object Unused extends FilterUse
  }

  /**
   * What a scan of a table with `schema` does with `p`. Row skipping takes `=`, `<`, `<=`, `>`, `>=` and `IN` of a
   * top-level column with literals it can compare ([[Predicate.comparable]]), `IS NULL` and `IS NOT NULL` of a
   * top-level column of one of those types, [[Predicate.StringMatch]] of a top-level string column, and `AND`/`OR`
   * of those; [[Predicate.ListHasAny]] of a top-level
   * list column with literals its items compare with, which only a label list index uses (batches do not evaluate
   * it); and [[Predicate.FullTextMatch]] of top-level string columns, which only full-text indexes use.
   */
  def filterUse(schema: LanceSchema, p: Predicate): FilterUse =
    if (selectsFragments(p)) FilterUse.SelectsFragments
    else if (Take.selectsRows(p)) FilterUse.SelectsRows
    else if (skipsBatches(schema, p)) FilterUse.SkipsBatches
    else FilterUse.Unused

  private val FragmentColumn = MetadataColumn.FragmentId.name

  private def selectsFragments(p: Predicate): Boolean = p match {
    case Predicate.Compare(FragmentColumn, _, v) => Predicate.fragmentId(v).isDefined
    case Predicate.In(FragmentColumn, vs) => vs.forall(v => Predicate.fragmentId(v).isDefined)
    case _ => false
  }

  private def column(schema: LanceSchema, name: String): Option[LogicalType] =
    if (name.contains('.')) None else schema.field(name).map(_.logicalType)

  private def columnOk(schema: LanceSchema, name: String): Boolean = column(schema, name).exists {
    case LogicalType.Int(_, true) | LogicalType.Float | LogicalType.Double | LogicalType.Bool | LogicalType.Utf8(_) |
         LogicalType.Date32 | LogicalType.Date64 | LogicalType.Timestamp(_, _) => true
    case LogicalType.Decimal(128, p, _) => p <= Predicate.MaxLongDecimalPrecision
    case _ => false
  }

  private def skipsBatches(schema: LanceSchema, p: Predicate): Boolean = p match {
    case Predicate.Compare(c, _, v) => column(schema, c).exists(Predicate.comparable(_, v))
    case Predicate.In(c, vs) => vs.nonEmpty && column(schema, c).exists(t => vs.forall(Predicate.comparable(t, _)))
    case Predicate.IsNull(c) => columnOk(schema, c)
    case Predicate.IsNotNull(c) => columnOk(schema, c)
    case Predicate.StringMatch(c, _, _) => column(schema, c).exists(_.isInstanceOf[LogicalType.Utf8])
    case Predicate.ListHasAny(c, vs) => vs.nonEmpty && column(schema, c).exists(_.isInstanceOf[LogicalType.List]) &&
      schema.field(c).flatMap(_.children.headOption).exists(item => vs.forall(Predicate.comparable(item.logicalType, _)))
    case Predicate.FullTextMatch(targets) => targets.nonEmpty &&
      targets.forall { case (c, _) => column(schema, c).exists(_.isInstanceOf[LogicalType.Utf8]) }
    case Predicate.And(l, r) => skipsBatches(schema, l) && skipsBatches(schema, r)
    case Predicate.Or(l, r) => skipsBatches(schema, l) && skipsBatches(schema, r)
  }

  /** Whether a fragment predicate keeps fragment `id`. */
  def keepsFragment(p: Predicate, id: Long): Boolean = p match {
    case Predicate.Compare(_, op, v) => Predicate.fragmentId(v).exists { x =>
      op match {
        case Predicate.Op.Eq => id == x
        case Predicate.Op.Lt => id < x
        case Predicate.Op.Le => id <= x
        case Predicate.Op.Gt => id > x
        case Predicate.Op.Ge => id >= x
      }
    }
    case Predicate.In(_, vs) => vs.exists(v => Predicate.fragmentId(v).contains(id))
    case _ => true
  }
}

/** One unit of a scan's work, read in order by one reader: slices of one or more fragments. Plain data. */
final case class ScanTask(slices: Seq[ScanTask.Slice], context: ScanTask.Context) {
  def rows: Long = slices.map(_.rows).sum
}

object ScanTask {
  /**
   * Rows [from, to) of one fragment (its `DataFragment` protobuf); with `selected`, only those physical offsets
   * (ascending, within the range), which an index chose.
   */
  final case class Slice(fragment: Array[Byte], from: Long, to: Long, selected: Option[Array[Int]] = None) {
    private[table] def parsed: Fragment = new Fragment(TableProtos.DataFragment.parseFrom(fragment))
    def rows: Long = selected.map(_.length.toLong).getOrElse(to - from)
  }

  /** What every task of a scan shares: where the version's files are, the projection and the read settings. */
  final case class Context(
      layout: TableLayout,
      manifestPath: String,
      fields: Seq[Array[Byte]],
      metadataColumns: Seq[String],
      stableRowIds: Boolean,
      batchRows: Int,
      limit: Option[Int],
      filters: Seq[Predicate],
      topN: Option[TopN] = None) {
    private[table] def projection: IndexedSeq[LanceField] =
      fields.toIndexedSeq.flatMap(LanceSchema.fromBytes(manifestPath, _).fields)
  }
}
