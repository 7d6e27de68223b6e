package io.sparklance.core.table

import java.util.{Locale, UUID}

import scala.util.control.NonFatal

import org.apache.arrow.memory.{BufferAllocator, RootAllocator}
import org.apache.arrow.vector.VectorSchemaRoot
import org.roaringbitmap.RoaringBitmap

import io.sparklance.core.{InvalidArgumentException, MetadataColumn, UnsupportedFeatureException}
import io.sparklance.core.file.LanceFileReader
import io.sparklance.core.format.{Fragment, FragmentFiles, TableLayout}
import io.sparklance.core.index.{BitmapWriter, BloomFilterIndex, BloomFilterWriter, BTreeIndex, BTreeWriter, HeldRuns,
  IndexAppend, IndexKind, IndexMetadata, KeyOrder, LabelListWriter, NGramIndex, NGramWriter, RTreeWriter, ZoneMapIndex,
  ZoneMapWriter, ZoneRuns}
import io.sparklance.core.scan.FragmentReader
import io.sparklance.core.schema.{LanceField, LanceSchema}
import io.sparklance.core.storage.Storage
import io.sparklance.core.txn.{Committer, Operation, Transaction}

/**
 * A scalar index being built on one column of a pinned version ([[Table.newIndex]]), committed as one CreateIndex
 * version. The work is split in [[tasks]], plain data an engine runs anywhere with [[IndexBuild.run]] (for a B-tree,
 * each sorts one fragment's keys into a run file in the index directory); [[commit]] then finishes the index on
 * one machine (merges the runs into the index files) and commits it. Nothing is visible until the commit; [[abort]]
 * removes what was written.
 *
 * Built over an existing index of the same name (`base`, its segments: [[Table.newIndexUpdate]], OPTIMIZE INDEX),
 * the tasks read only the fragments the old index does not cover, and the commit merges the old index's rows with
 * theirs ([[IndexAppend]]), as upstream's `optimize_indices` does: the new index covers every fragment of the
 * version, under a new uuid, in place of the old segments. Rows of fragments no longer in the table are left out
 * (those the index holds by row address); rows deleted since stay, dropped at read time by the deletion files.
 * With segments `unmerged` (OPTIMIZE INDEX ... WITH (num_indices_to_merge = n), [[IndexSegments]]), only `base` (the
 * newest n) is merged and replaced; the unmerged segments stay, and the new one covers what `base` covered and the
 * fragments no segment covers (with no `base`, those fragments alone: a delta segment).
 *
 * Built without `train` (pylance's `train=False`, lance-spark's `WITH (train = false)`), no task reads anything and the
 * index is committed empty, covering no fragment, until OPTIMIZE INDEX fills it.
 *
 * Kinds and parameters (`WITH (...)`, names as the other Lance connector and pylance take them):
 *  - BTREE: `zone_size`, rows per page (default 4096; `batch_size` is accepted too). Each task sorts one fragment's
 *    keys into a run file; the driver merges the runs into the pages.
 *  - BITMAP: no parameters. Built from the same sorted runs; on tables with stable row ids it holds row ids, as
 *    upstream's does.
 *  - ZONEMAP: `rows_per_zone` (default 8192). Each task computes its fragment's zones; the driver concatenates them.
 *  - LABEL_LIST: on a list column, a bitmap of each item's rows; no parameters. Built like a bitmap, from runs of
 *    the fragments' items.
 *  - BLOOMFILTER: `number_of_items` (rows per zone, default 8192) and `probability` (of a false positive, default
 *    0.00057), which size each zone's filter as upstream sizes it. Built like a zone map.
 *  - NGRAM: on a string column, the rows of each trigram of the lower-cased, ASCII-folded text; no parameters. Each
 *    task writes its fragment's posting lists as a run; the driver unions them by trigram ([[NGramWriter]]). Like
 *    upstream's (index version 0), it holds stable row ids on tables that have them, row addresses otherwise.
 *    OPTIMIZE INDEX merges an index of row addresses with the new fragments' rows, keeping its rows (deleted ones
 *    too, as upstream does; those of fragments no longer in the table are left out); one of stable row ids is rebuilt
 *    over every fragment, as pylance 14 does.
 *  - RTREE: `page_size`, entries per R-tree page (default 4096, at least 2), on a WKB binary column or a GeoArrow
 *    point struct. Each task writes its fragment's bounding boxes as a run; the driver sorts them in Hilbert order
 *    and writes the pages ([[RTreeWriter]]). Like upstream's (index version 0), it holds stable row ids on tables that
 *    have them, row addresses otherwise; OPTIMIZE INDEX merges an index of row addresses with the new fragments'
 *    boxes and rebuilds one of stable row ids over every fragment.
 */
final class IndexBuild private[table] (table: Table, snapshot: Snapshot, val name: String, val column: LanceField,
    val kind: IndexKind.Scalar, params: Map[String, String], replace: Boolean, base: Seq[IndexMetadata] = Nil,
    train: Boolean = true, unmerged: Seq[IndexMetadata] = Nil) extends PendingCommit(table) {

  retriesFrom(snapshot)

  /** The table's root. */
  def root: String = table.root

  val uuid: UUID = UUID.randomUUID()

  private val dir = Storage.join(table.root, s"_indices/$uuid")

  private val batchSize: Int = IndexBuild.positive(params, Seq("zone_size", "batch_size"), BTreeIndex.DefaultBatchSize)

  private val rowsPerZone: Int =
    if (kind == IndexKind.BloomFilter) IndexBuild.positive(params, Seq("number_of_items"), BloomFilterWriter.DefaultItems)
    else IndexBuild.positive(params, Seq("rows_per_zone"), ZoneMapWriter.DefaultRowsPerZone)

  private val pageSize: Int = if (kind == IndexKind.RTree) RTreeWriter.pageSize(params) else RTreeWriter.DefaultPageSize

  private val probability: Double = params.get("probability").map { v =>
    scala.util.Try(v.trim.toDouble).toOption.filter(p => p > 0 && p < 1).getOrElse(throw new InvalidArgumentException(
      s"Index option probability must be a number between 0 and 1 (exclusive), not '$v'."))
  }.getOrElse(BloomFilterWriter.DefaultProbability)

  /** Whether the kind is built from per-fragment zones (a zone map, a bloom filter), not sorted runs. */
  private def zones: Boolean = kind == IndexKind.ZoneMap || kind == IndexKind.BloomFilter

  /**
   * Bitmaps, NGRAM and RTREE indexes of tables with stable row ids hold row ids (upstream's choice); every other
   * index row addresses.
   */
  private val rowIds = (kind == IndexKind.Bitmap || kind == IndexKind.LabelList || kind == IndexKind.NGram ||
    kind == IndexKind.RTree) && snapshot.hasStableRowIds

  /** The indexes of this name the new one replaces (with `replace`, or the segments it merges). */
  private val replaced: Seq[IndexMetadata] =
    IndexSegments.replaced(snapshot.indexes, name, unmerged)

  /** The fragments the unmerged segments cover. */
  private val unmergedCoverage = IndexSegments.coverage(unmerged)

  /** The fragments of the version, by id. */
  private val present = RoaringBitmap.bitmapOf(snapshot.fragments.map(_.id.toInt): _*)

  /** The fragments the old index covers, when merging with it. */
  private val covered = IndexSegments.coverage(base)

  /** The fragments whose column the tasks read: every fragment, or those no segment of the old index covers. */
  val fragments: IndexedSeq[io.sparklance.core.format.Fragment] =
    if (!train) IndexedSeq.empty
    else if (base.isEmpty && unmerged.isEmpty) snapshot.fragments
    else snapshot.fragments.filter(f => !covered.contains(f.id.toInt) && !unmergedCoverage.contains(f.id.toInt))

  /** Whether the build merges an existing index with the fragments it does not cover, rather than reading all. */
  def merges: Boolean = base.nonEmpty

  /**
   * Whether committing would change nothing: no fragment is left uncovered and the segments merged are one covering
   * no fragment that is gone, or none. [[commit]] then returns the newest segment as it is.
   */
  def upToDate: Boolean = fragments.isEmpty && ((base.size == 1 && RoaringBitmap.andNot(covered, present).isEmpty) ||
    (base.isEmpty && unmerged.nonEmpty))

  /** One task per fragment to read, to run anywhere ([[IndexBuild.run]]): each writes its result to a file. */
  def tasks: Seq[IndexBuild.Task] = newTasks(holdRuns = false)

  /**
   * The [[tasks]], to run in this process (as Spark's local mode runs them) with [[IndexBuild.runInThisProcess]],
   * until [[commit]] or [[abort]]: a B-tree's or bitmap's sorted runs stay in memory for [[commit]] to merge, as far as
   * their budget allows ([[io.sparklance.core.index.HeldRuns]]), and the tasks use this build's storage.
   */
  def tasksInThisProcess: Seq[IndexBuild.Task] = {
    synchronized {
      if (held.isEmpty) {
        held = Some(HeldRuns.open())
        IndexBuild.inThisProcess.put(uuid.toString, this)
      }
    }
    newTasks(holdRuns = true)
  }

  private def storage: Storage = table.storage

  /** Runs held in memory for the tasks in this process, from [[tasksInThisProcess]] until [[release]]. */
  private var held: Option[HeldRuns] = None

  /** Ends the tasks in this process: frees the runs still held, and their tasks no longer find the build. */
  private def release(): Unit = synchronized {
    IndexBuild.inThisProcess.remove(uuid.toString)
    try held.foreach(_.close()) finally held = None
  }

  private def newTasks(holdRuns: Boolean): Seq[IndexBuild.Task] = fragments.map { f =>
    IndexBuild.Task(snapshot.layout, snapshot.manifest.path, f.proto.toByteArray,
      LanceSchema(IndexedSeq(column), Map.empty).toBytes, Storage.join(dir, s"run-${f.id}.lance"), kind.name,
      rowsPerZone, probability, rowIds, holdRuns, uuid.toString)
  }

  /** Finishes the index from the tasks' results (run files) and commits it; returns its metadata. */
  def commit(results: Seq[String]): IndexMetadata = if (upToDate) { release(); (unmerged ++ base).last } else committing {
    val meta = written(results)
    table.commit(Transaction.create(snapshot.version, Operation.CreateIndex(Seq(meta), replaced.map(_.proto))),
      Committer.Options(maxRetries = commitRetries))
    new IndexMetadata(meta, snapshot.manifest.path)
  }

  /**
   * Runs every task here and writes the index files, committing nothing: the new index's metadata, for a compaction
   * to commit in its Rewrite ([[Compaction]]). [[abort]] removes the files.
   */
  private[table] def writeHere(): io.sparklance.proto.TableProtos.IndexMetadata =
    written(tasksInThisProcess.map(IndexBuild.runInThisProcess))

  /** Writes the index files from the tasks' results (run files); the new index's metadata, not committed. */
  private def written(results: Seq[String]): io.sparklance.proto.TableProtos.IndexMetadata = {
    val allocator = new RootAllocator()
    val keys = LanceFileReader.readField(column).getType
    // Runs written here, removed once merged (an old B-tree's pages are read in place).
    val written = scala.collection.mutable.ArrayBuffer.empty[String] ++= results
    // One old bitmap or label list is merged key by key; several (pylance's delta segments) as sorted runs.
    val bitmaps = if (base.size == 1 && (kind == IndexKind.Bitmap || kind == IndexKind.LabelList)) {
      Some(new IndexAppend.Bitmaps(table.storage, snapshot.indexDir(base.head), liveRowIds, kept, physicalRows, allocator))
    } else None
    val files = try {
      val old = if (bitmaps.isDefined) Nil else oldRuns(allocator)
      written ++= old.filter(_ => kind != IndexKind.BTree && kind != IndexKind.NGram)
      val runs = old.map(-1L -> _) ++ fragments.map(_.id).zip(results)
      kind match {
        case IndexKind.BTree => BTreeWriter.merge(table.storage, runs.map(_._2), dir, keys, batchSize, allocator,
          if (merges) Some(kept) else None, held)
        case IndexKind.Bitmap => BitmapWriter.merge(table.storage, runs.map(_._2), dir, keys, allocator, old = bitmaps,
          held = held)
        case IndexKind.LabelList => LabelListWriter.merge(table.storage, runs, dir, allocator,
          LanceFileReader.readField(column.children.head).getType, bitmaps)
        case IndexKind.ZoneMap => ZoneMapWriter.merge(table.storage, runs, dir, keys, rowsPerZone, allocator)
        case IndexKind.NGram => NGramWriter.merge(table.storage, runs.map(_._2), old.toSet,
          if (rowIds) _ => true else kept, dir, allocator)
        case IndexKind.RTree => RTreeWriter.merge(table.storage, runs.map(_._2), dir, pageSize, allocator)
        case _ => BloomFilterWriter.merge(table.storage, runs, dir, rowsPerZone, probability, allocator)
      }
    } finally {
      try release() finally try bitmaps.foreach(_.close()) finally allocator.close()
    }
    written.foreach { r =>
      if (zones || kind == IndexKind.LabelList || kind == IndexKind.RTree) ZoneRuns.delete(table.storage, r) else table.storage.delete(r)
    }
    val details = if (kind == IndexKind.ZoneMap) ZoneMapWriter.details(rowsPerZone) else com.google.protobuf.ByteString.EMPTY
    // A merged index keeps the version its oldest segment was built at, as pylance 14's optimize_indices records it
    // (docs/dev/scalar-indexes.md §7), except that zone maps, bloom filters and label lists merged from several
    // segments record the read version, as pylance 14 does.
    val builtAt =
      if (!merges || (base.size > 1 && (zones || kind == IndexKind.LabelList))) snapshot.version
      else base.map(_.datasetVersion).min
    val covers = if (train) RoaringBitmap.andNot(present, unmergedCoverage) else new RoaringBitmap()
    IndexMetadata.create(uuid, name, Seq(column.id), builtAt, covers, kind, details,
      indexVersion = if ((snapshot.hasStableRowIds && kind == IndexKind.BTree) || kind == IndexKind.LabelList) 1 else 0, files)
  }

  /**
   * Whether a fragment (by id) is in the version: asked for every row of an old index merged, so looked up in an
   * array where the ids are small enough (they usually are), else in the bitmap.
   */
  private val kept: Long => Boolean = {
    val last = if (present.isEmpty) -1L else present.last & 0xFFFFFFFFL
    if (last < (1 << 20)) {
      val in = new Array[Boolean]((last + 1).toInt)
      present.forEach((id: Int) => in(id) = true)
      id => id >= 0 && id < in.length && in(id.toInt)
    } else id => id <= 0xFFFFFFFFL && present.contains(id.toInt)
  }

  /**
   * For bitmaps of stable row ids: the row ids live in the fragments the old index covers (from their row id
   * sequences and deletion files, not their data), which alone its rows are kept for ([[IndexAppend.RowIds]]).
   */
  private lazy val liveRowIds: Option[IndexAppend.RowIds] = if (!rowIds) None else Some {
    val live = new io.sparklance.core.index.RowSelection.Builder(exact = true)
    snapshot.fragments.filter(f => covered.contains(f.id.toInt)).foreach { f =>
      val deleted = snapshot.deletionVector(f)
      snapshot.rowIds(f).foreach { seq =>
        var j = 0
        while (j < seq.length) { if (!deleted.contains(j)) live.addAddress(seq(j)); j += 1 }
      }
    }
    live.result().byFragment
  }

  private val physicalRows: Long => Long = {
    val rows = snapshot.fragments.map(f => f.id -> f.physicalRows).toMap
    id => rows.getOrElse(id, 0L)
  }

  /** The old index's rows as runs the merge takes, in the order of `base` ([[IndexAppend]]). */
  private def oldRuns(allocator: RootAllocator): Seq[String] = {
    base.zipWithIndex.map { case (index, n) =>
      val from = snapshot.indexDir(index)
      val run = Storage.join(dir, s"old-$n.lance")
      kind match {
        case IndexKind.BTree => IndexAppend.btreeRun(from)
        case IndexKind.Bitmap | IndexKind.LabelList => IndexAppend.bitmapRun(table.storage, from, run,
          labelList = kind == IndexKind.LabelList, liveRowIds, kept, physicalRows, allocator)
        case IndexKind.ZoneMap => IndexAppend.zoneRun(table.storage, from, ZoneMapIndex.File, run, kept, allocator)
        case IndexKind.NGram => Storage.join(from, NGramIndex.File)
        case IndexKind.RTree => RTreeWriter.oldRun(table.storage, from, run, rowIds, kept, allocator)
        case _ => IndexAppend.zoneRun(table.storage, from, BloomFilterIndex.File, run, kept, allocator)
      }
    }
  }

  /** Removes the index directory written so far (unless a commit's outcome is unknown). */
  def abort(): Unit = {
    release()
    abort(table.storage.list(dir).map(_.path) :+ dir)
  }

  /** Runs every task here and commits: the index built by one process. */
  def runAndCommit(): IndexMetadata =
    try commit(tasksInThisProcess.map(IndexBuild.runInThisProcess))
    catch { case NonFatal(e) => abort(); throw e }
}

object IndexBuild {

  /**
   * The work on one fragment of build `build` (its uuid): where the version's files are, the fragment and column, and
   * the run to write (or, with `holdRun`, to keep in the build's memory where it fits, when run in its process).
   */
  final case class Task(layout: TableLayout, manifestPath: String, fragment: Array[Byte], column: Array[Byte],
      runPath: String, kind: String, rowsPerZone: Int, probability: Double, rowIds: Boolean, holdRun: Boolean,
      build: String)

  /** The builds whose tasks run in this process ([[IndexBuild.tasksInThisProcess]]) until their commit or abort, by uuid. */
  private val inThisProcess = new java.util.concurrent.ConcurrentHashMap[String, IndexBuild]()

  /**
   * Runs a task of [[IndexBuild.tasksInThisProcess]] in the process of its build, with the build's storage, holding
   * its run in the build's memory where it fits. Fails if the build is no longer running here.
   */
  def runInThisProcess(task: Task): String = {
    val build = Option(inThisProcess.get(task.build)).getOrElse(throw new IllegalStateException(
      s"Index build ${task.build} is not running in this process (committed, aborted, or made elsewhere): run its " +
        "tasks from IndexBuild.tasks with IndexBuild.run."))
    run(build.storage, task, build.synchronized(build.held))
  }

  /**
   * Runs a task (anywhere): the fragment's live keys and row addresses (or row ids), sorted, into its run file; for
   * a zone map, the fragment's zones.
   */
  def run(storage: Storage, task: Task): String = run(storage, task, None)

  private def run(storage: Storage, task: Task, held: Option[HeldRuns]): String = {
    val fragment = new Fragment(io.sparklance.proto.TableProtos.DataFragment.parseFrom(task.fragment))
    val allocator = new RootAllocator()
    try {
      readIndexed(storage, task.layout, task.manifestPath, fragment, task.column, task.rowIds, 0, fragment.physicalRows,
        allocator) { root =>
        val addresses = root.getVector(1).asInstanceOf[org.apache.arrow.vector.BigIntVector]
        if (task.kind == IndexKind.ZoneMap.name) {
          ZoneMapWriter.writeZones(storage, task.runPath, fragment.id, root.getVector(0), addresses, task.rowsPerZone, allocator)
        } else if (task.kind == IndexKind.LabelList.name) {
          LabelListWriter.writeRun(storage, task.runPath, root.getVector(0), addresses, allocator)
        } else if (task.kind == IndexKind.NGram.name) {
          NGramWriter.writeRun(storage, task.runPath, root.getVector(0), addresses, allocator)
        } else if (task.kind == IndexKind.RTree.name) {
          RTreeWriter.writeRun(storage, task.runPath, root.getVector(0).getName, root.getVector(0), addresses, allocator)
        } else if (task.kind == IndexKind.BloomFilter.name) {
          BloomFilterWriter.writeZones(storage, task.runPath, fragment.id, root.getVector(0), addresses, task.rowsPerZone,
            task.probability, allocator)
        } else if (task.holdRun && held.isDefined) {
          BTreeWriter.holdRun(storage, task.runPath, root.getVector(0), addresses, held.get)
        } else {
          BTreeWriter.writeRun(storage, task.runPath, root.getVector(0), addresses, allocator)
        }
      }
    } finally allocator.close()
    task.runPath
  }

  /**
   * Rows [from, to) of the indexed `column` (a schema's bytes) of `fragment`, its live rows only, read with their row
   * addresses (or stable row ids) as a batch of two columns, handed to `f` and closed after it.
   */
  private[table] def readIndexed[T](storage: Storage, layout: TableLayout, manifestPath: String, fragment: Fragment,
      column: Array[Byte], rowIds: Boolean, from: Long, to: Long, allocator: BufferAllocator)(f: VectorSchemaRoot => T): T = {
    val sequence = if (rowIds) FragmentFiles.rowIds(storage, layout.root, manifestPath, fragment, hasStableRowIds = true) else None
    read(storage, layout, manifestPath, fragment, column, FragmentFiles.deletionVector(storage, layout, fragment),
      sequence, from, to, allocator)(f)
  }

  /** [[readIndexed]] of every row, deleted ones included, with their row addresses. */
  private[table] def readPhysical[T](storage: Storage, layout: TableLayout, manifestPath: String, fragment: Fragment,
      column: Array[Byte], from: Long, to: Long, allocator: BufferAllocator)(f: VectorSchemaRoot => T): T =
    read(storage, layout, manifestPath, fragment, column, io.sparklance.core.format.DeletionVector.Empty, None, from, to,
      allocator)(f)

  private def read[T](storage: Storage, layout: TableLayout, manifestPath: String, fragment: Fragment,
      column: Array[Byte], deletions: io.sparklance.core.format.DeletionVector,
      sequence: Option[io.sparklance.core.format.RowIdSequence], from: Long, to: Long,
      allocator: BufferAllocator)(f: VectorSchemaRoot => T): T = {
    val field = LanceSchema.fromBytes(manifestPath, column).fields.head
    val ids = if (sequence.isDefined) MetadataColumn.RowId else MetadataColumn.RowAddress
    val reader = new FragmentReader(storage, layout, fragment, Seq(field), Seq(ids), deletions, sequence)
    try {
      val root = reader.read(from, to, allocator)
      try f(root) finally root.close()
    } finally reader.close()
  }

  /**
   * Checks that an RTREE index can be built on `field`: a binary column of WKB (pylance reads one without extension
   * metadata as WKB, or one marked `geoarrow.wkb`), or a GeoArrow point (a struct of float64 `x`, `y`, marked
   * `geoarrow.point`).
   */
  private def checkGeometry(root: String, column: String, field: LanceField): Unit = {
    import org.apache.arrow.vector.types.pojo.ArrowType
    val arrow = LanceFileReader.readField(field).getType
    val ext = field.extensionName
    val wkb = (arrow.isInstanceOf[ArrowType.Binary] || arrow.isInstanceOf[ArrowType.LargeBinary]) &&
      ext.forall(_ == RTreeWriter.WkbExtension)
    def float64(name: String) = field.child(name).exists(c => LanceFileReader.readField(c).getType ==
      new ArrowType.FloatingPoint(org.apache.arrow.vector.types.FloatingPointPrecision.DOUBLE))
    val point = arrow.isInstanceOf[ArrowType.Struct] && float64("x") && float64("y")
    if (point && !ext.contains(RTreeWriter.PointExtension)) {
      throw new UnsupportedFeatureException(s"Cannot create an RTREE index on column '$column' of $root: it is a " +
        "struct of x and y without the field metadata ARROW:extension:name = geoarrow.point, without which pylance " +
        "does not read it as a point (nor build or use the index). Store the geometries as WKB in a BINARY column, " +
        "or write the column with that metadata from pylance.")
    }
    if (!wkb && !point) {
      throw new UnsupportedFeatureException(s"Cannot create an RTREE index on column '$column' of $root: its type " +
        s"$arrow${ext.map(e => s" ($e)").getOrElse("")} is not a geometry sparklance indexes; RTREE indexes take WKB " +
        "in BINARY columns and GeoArrow points (structs of double x, y marked geoarrow.point).")
    }
  }

  private def positive(params: Map[String, String], keys: Seq[String], default: Int): Int =
    keys.flatMap(k => params.get(k).map(k -> _)).headOption.map { case (k, v) =>
      scala.util.Try(v.trim.toInt).toOption.filter(_ > 0).getOrElse(
        throw new InvalidArgumentException(s"Index option $k must be a positive number of rows, not '$v'."))
    }.getOrElse(default)

  /** The options an index was built with, as CREATE INDEX takes them (read from its files). */
  private[table] def optionsOf(snapshot: Snapshot, index: IndexMetadata): Map[String, String] = {
    val dir = snapshot.indexDir(index)
    index.kind match {
      case IndexKind.BTree => Map("zone_size" -> BTreeIndex.batchSize(snapshot.storage, dir).toString)
      case IndexKind.ZoneMap => ZoneMapIndex.rowsPerZone(snapshot.storage, dir).map(n => "rows_per_zone" -> n.toString).toMap
      case IndexKind.BloomFilter => BloomFilterIndex.parameters(snapshot.storage, dir)
      case IndexKind.RTree => RTreeWriter.pageSizeOf(snapshot.storage, dir).map(n => "page_size" -> n.toString).toMap
      case _ => Map.empty
    }
  }

  /** The options each kind takes; any other is an error, never ignored. */
  private val Options: Map[IndexKind, Set[String]] = Map(IndexKind.BTree -> Set("zone_size", "batch_size"),
    IndexKind.Bitmap -> Set.empty, IndexKind.ZoneMap -> Set("rows_per_zone"),
    IndexKind.BloomFilter -> Set("number_of_items", "probability"), IndexKind.LabelList -> Set.empty,
    IndexKind.NGram -> Set.empty, IndexKind.RTree -> Set("page_size"))

  /** Checks a new index's name, column, kind and options against `snapshot`; the checked column. */
  private[table] def check(snapshot: Snapshot, name: String, column: String, kind: String, params: Map[String, String],
      replace: Boolean): (LanceField, IndexKind.Scalar) = {
    val root = snapshot.root
    // Refused before any task writes a file, not at the commit.
    io.sparklance.core.format.FeatureFlags.checkWritable(root, snapshot.version, snapshot.manifest.proto.getWriterFeatureFlags)
    if (name.isEmpty || name.exists(c => c.isControl || c == '/')) {
      throw new InvalidArgumentException(s"'$name' is not a valid index name: use letters, digits and underscores.")
    }
    if (FullTextIndexBuild.isFullText(kind)) {
      throw new InvalidArgumentException(s"Cannot create index '$name' on $root as a scalar index: a full-text " +
        "(INVERTED) index is built by Table.newFullTextIndex (CREATE INDEX ... USING fts).")
    }
    val k = IndexKind.buildableNamed(kind).getOrElse(throw new UnsupportedFeatureException(
      s"Cannot create index '$name' on $root: sparklance does not build ${kind.toUpperCase(Locale.ROOT)} indexes; it " +
        s"builds ${IndexKind.buildable.map(_.name).mkString(", ")}, full-text (INVERTED) indexes and the vector " +
        s"indexes ${VectorIndexBuild.Types.mkString(", ")}. Create other kinds with pylance " +
        "(create_scalar_index); sparklance keeps them."))
    val field = snapshot.schema.field(column).getOrElse(throw new InvalidArgumentException(
      s"Cannot create index '$name' on $root: it has no column '$column' (its columns: " +
        s"${snapshot.schema.fields.map(_.name).mkString(", ")})."))
    val keyField = if (k == IndexKind.LabelList) field.children.headOption.filter(_ => field.logicalType match {
      case io.sparklance.core.schema.LogicalType.List(_, false) => true
      case _ => false
    }).getOrElse(throw new UnsupportedFeatureException(s"Cannot create a " +
      s"LABEL_LIST index on column '$column' of $root: it is not a list; LABEL_LIST indexes take lists of numbers, " +
      "strings, binaries, booleans, dates or timestamps.")) else field
    val arrow = LanceFileReader.readField(keyField).getType
    if (k == IndexKind.NGram && !(arrow.isInstanceOf[org.apache.arrow.vector.types.pojo.ArrowType.Utf8] ||
        arrow.isInstanceOf[org.apache.arrow.vector.types.pojo.ArrowType.LargeUtf8])) {
      throw new UnsupportedFeatureException(s"Cannot create an NGRAM index on column '$column' of $root: its type " +
        s"$arrow is not a string; NGRAM indexes take string and large string columns.")
    }
    if (k == IndexKind.RTree) checkGeometry(root, column, field)
    else if (!KeyOrder.supports(arrow)) {
      throw new UnsupportedFeatureException(s"Cannot create a ${k.name} index on column '$column' of $root: its type " +
        s"$arrow cannot be indexed; ${k.name} indexes take numbers, strings, binaries, booleans, dates and timestamps.")
    }
    if (k == IndexKind.BloomFilter && arrow.isInstanceOf[org.apache.arrow.vector.types.pojo.ArrowType.Bool]) {
      throw new UnsupportedFeatureException(s"Cannot create a BLOOMFILTER index on column '$column' of $root: it is a " +
        "boolean, which upstream's bloom filters do not take. Use a BITMAP index.")
    }
    val known = Options.getOrElse(k, Set.empty)
    val unknown = params.keySet.map(_.toLowerCase(Locale.ROOT)) -- known
    if (unknown.nonEmpty) {
      throw new InvalidArgumentException(s"Unknown option${if (unknown.size > 1) "s" else ""} " +
        s"${unknown.toSeq.sorted.mkString(", ")} for a ${k.name} index; " +
        (if (known.isEmpty) "it takes none." else s"it takes: ${known.toSeq.sorted.mkString(", ")}."))
    }
    if (!replace && snapshot.indexes.exists(_.name == name)) {
      throw new InvalidArgumentException(s"Table $root already has an index named '$name'. Drop it first " +
        "(DROP INDEX), or create it with replace = true.")
    }
    (field, k)
  }
}
