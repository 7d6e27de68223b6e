package io.sparklance.core.table

import java.util.{Locale, UUID}

import scala.util.control.NonFatal

import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector.{BigIntVector, LargeVarCharVector, VarCharVector}
import org.roaringbitmap.RoaringBitmap

import io.sparklance.core.{InvalidArgumentException, UnsupportedFeatureException}
import io.sparklance.core.format.{Fragment, TableLayout}
import io.sparklance.core.index.{FtsParams, IndexKind, IndexMetadata, InvertedIndex, InvertedIndexWriter}
import io.sparklance.core.schema.{LanceSchema, LogicalType}
import io.sparklance.core.storage.Storage
import io.sparklance.core.txn.{Committer, Operation, Transaction}

/**
 * A full-text (INVERTED) index being built on one string column of a pinned version ([[Table.newFullTextIndex]]),
 * committed as one CreateIndex version in pylance 14's layout (docs/dev/fts-index-format.md). Each [[tasks]] entry
 * analyses one fragment's live rows and writes them as one partition of the index (its documents, token dictionary
 * and posting lists, with their BM25 bounds computed from the partition, as pylance computes a partition's);
 * [[commit]] writes `metadata.lance` naming the partitions and commits. Queries score with the statistics of every
 * partition together, so the partitioning changes no score. Nothing is visible until the commit; [[abort]] removes
 * what was written. A build under the name of an existing index replaces it in the same commit (`replace`).
 *
 * Options (`WITH (...)`, pylance's names and defaults): `base_tokenizer` (simple; whitespace, raw), `language`
 * (English), `with_position` (false), `max_token_length` (40), `lower_case`, `stem`, `remove_stop_words`,
 * `ascii_folding` (true); `language` in any case, recorded as pylance spells it. Analyses the JVM does not
 * implement (stemming the languages [[io.sparklance.core.index.FtsStemmer]] does not stem, n-grams) are refused.
 *
 * Built as the update of an existing index (`base`, its segments: [[Table.newFullTextIndexUpdate]], OPTIMIZE INDEX),
 * as pylance 14's `optimize_indices` updates one, the new index (a new uuid, the analysis, details and first dataset
 * version of `base`) covers every fragment and replaces every segment in one commit. It holds the documents pylance's
 * would hold, so every score is the same:
 *  - the documents of the old partitions, except those of rows no longer in the table (a fragment deleted whole or
 *    compacted away, or no longer covered by the segment holding them); a partition with none of those is copied as
 *    it is, the kept documents of the others are analysed again from the rows' text, deleted rows included (pylance
 *    keeps those: they stay in the statistics and are never returned);
 *  - on tables with stable row ids, pylance drops the documents of deleted rows too, so when an old partition holds
 *    one every fragment's live rows are analysed again instead;
 *  - the live rows of the fragments no segment covers, in new partitions (one per fragment).
 * pylance may merge old partitions into one, or keep an index in several segments; the documents, and so the scores,
 * are the same. An index of one segment covering every fragment of the table and none that is gone is left as it is.
 * With segments `unmerged` (OPTIMIZE INDEX ... WITH (num_indices_to_merge = n), [[IndexSegments]]), only `base` (the newest
 * n) is merged and replaced; the unmerged segments stay, and the new one covers what `base` covered and the fragments no
 * segment covers (with no `base`, those fragments alone: a delta segment, with the analysis of the unmerged ones).
 */
final class FullTextIndexBuild private[table] (table: Table, snapshot: Snapshot, val name: String,
    val column: io.sparklance.core.schema.LanceField, val params: FtsParams, base: Seq[IndexMetadata] = Nil,
    unmerged: Seq[IndexMetadata] = Nil) extends PendingCommit(table) {

  retriesFrom(snapshot)

  def root: String = table.root

  val uuid: UUID = UUID.randomUUID()

  private val dir = Storage.join(table.root, s"_indices/$uuid")

  private val replaced: Seq[IndexMetadata] =
    IndexSegments.replaced(snapshot.indexes, name, unmerged)

  /** The fragments the unmerged segments cover: not read, and not covered by the new segment. */
  private val unmergedCoverage = IndexSegments.coverage(unmerged)

  private val present: RoaringBitmap = RoaringBitmap.bitmapOf(snapshot.fragments.map(_.id.toInt): _*)

  /** The fragments the new segment covers: every fragment of the version but those of the unmerged segments. */
  private val covers: RoaringBitmap = RoaringBitmap.andNot(present, unmergedCoverage)

  private def covered(f: Fragment): Boolean = base.exists(_.covers(f.id))

  /** Each segment's partitions (an update's), in the segments' order. */
  private val old: Seq[(IndexMetadata, InvertedIndex.Partition)] =
    base.flatMap(b => InvertedIndex.open(snapshot.storage, snapshot.indexDir(b), name).partitions.map(b -> _))

  /** Whether a document of `segment` (its row id) is of a row still in a fragment the segment covers. */
  private val kept: (IndexMetadata, Long) => Boolean =
    if (snapshot.hasStableRowIds) {
      val live = LiveRowIds.of(snapshot, covered)
      (_, id) => live.contains(id)
    } else (segment, id) => present.contains((id >>> 32).toInt) && segment.covers(id >>> 32)

  /** The old partitions holding a document to drop. */
  private val dirty: Set[(IndexMetadata, Int)] = old.collect {
    case (b, p) if (0 until p.numDocs).exists(d => !kept(b, p.rowId(d))) => (b, p.id)
  }.toSet

  /** Whether an update has anything to do: one covering every fragment, in one segment, with nothing gone, does not. */
  private val stale: Boolean = (base.isEmpty && unmerged.isEmpty) || base.size > 1 || dirty.nonEmpty ||
    snapshot.fragments.exists(f => !covered(f) && !unmergedCoverage.contains(f.id.toInt))

  /** Whether the update keeps the old documents: not on tables with stable row ids that dropped some (see above). */
  private val reused: Boolean = base.nonEmpty && !(snapshot.hasStableRowIds && dirty.nonEmpty)

  /** The old partitions copied as they are, with their ids in the new index: the first segment's keep theirs. */
  private val copied: Seq[(IndexMetadata, Int, Int)] = if (!reused) Nil else {
    val clean = old.filterNot { case (b, p) => dirty.contains((b, p.id)) }
    val own = clean.filter(_._1 == base.head).map(_._2.id)
    var next = if (own.isEmpty) 0 else own.max + 1
    clean.map { case (b, p) =>
      if (b == base.head) (b, p.id, p.id)
      else { next += 1; (b, p.id, next - 1) }
    }
  }

  /**
   * The rows to analyse: per fragment, its live rows (None) or, for the kept documents of dirty partitions, those
   * rows' offsets (deleted ones included).
   */
  private val read: Seq[(Fragment, Option[Array[Long]])] = {
    val offsets = if (!reused) Map.empty[Long, Array[Long]] else old.filter { case (b, p) => dirty.contains((b, p.id)) }
      .flatMap { case (b, p) => (0 until p.numDocs).map(p.rowId).filter(kept(b, _)) }
      .groupBy(_ >>> 32).map { case (f, ids) => f -> ids.map(_ & 0xFFFFFFFFL).sorted.toArray }
    snapshot.fragments.filter(f => !unmergedCoverage.contains(f.id.toInt)).flatMap { f =>
      if (!reused || !covered(f)) Some(f -> None) else offsets.get(f.id).map(o => f -> Some(o))
    }
  }

  private val first: Int = if (copied.isEmpty) 0 else copied.map(_._3).max + 1

  /** One task per fragment read, to run anywhere ([[FullTextIndexBuild.run]]); partition ids after those copied. */
  def tasks: Seq[FullTextIndexBuild.Task] = if (!stale) Nil else {
    read.zipWithIndex.map { case ((f, offsets), i) =>
      FullTextIndexBuild.Task(snapshot.layout, snapshot.manifest.path, f.proto.toByteArray,
        LanceSchema(IndexedSeq(column), Map.empty).toBytes, dir, first + i, InvertedIndexWriter.paramsJson(params),
        snapshot.hasStableRowIds, offsets)
    }
  }

  /**
   * Writes `metadata.lance` for the partitions the tasks wrote (their results: the partition's files and sizes, or
   * nothing for a fragment without documents) and commits the index; returns its metadata. An update with nothing
   * to do commits nothing and returns `base`.
   */
  def commit(results: Seq[String]): IndexMetadata = (unmerged ++ base).lastOption.filter(_ => !stale).getOrElse(committing {
    val meta = written(results)
    table.commit(Transaction.create(snapshot.version, Operation.CreateIndex(Seq(meta), replaced.map(_.proto))),
      Committer.Options(maxRetries = commitRetries))
    new IndexMetadata(meta, snapshot.manifest.path)
  })

  /**
   * Runs every task here and writes the index files, committing nothing: the new index's metadata, for a compaction
   * to commit in its Rewrite ([[Compaction]]). [[abort]] removes the files.
   */
  private[table] def writeHere(): io.sparklance.proto.TableProtos.IndexMetadata =
    written(tasks.map(FullTextIndexBuild.run(table.storage, _)))

  /** Writes `metadata.lance` for the partitions the tasks wrote; the new index's metadata, not committed. */
  private def written(results: Seq[String]): io.sparklance.proto.TableProtos.IndexMetadata = {
    val files = copied.flatMap { case (b, from, to) =>
      Seq(InvertedIndex.TokensFile, InvertedIndex.InvertFile, InvertedIndex.DocsFile).map { pattern =>
        val bytes = table.storage.readAll(Storage.join(snapshot.indexDir(b), pattern.format(from)))
        table.storage.create(Storage.join(dir, pattern.format(to)), bytes)
        pattern.format(to) -> bytes.length.toLong
      }
    } ++ results.filter(_.nonEmpty).flatMap(FullTextIndexBuild.decodeFiles)
    val partitions = copied.map(_._3) ++ results.zipWithIndex.filter(_._1.nonEmpty).map(first + _._2)
    val allocator = new RootAllocator()
    val metadata = try InvertedIndexWriter.writeMetadata(table.storage, dir, params, partitions, allocator)
      finally allocator.close()
    (base ++ unmerged).headOption match {
      case Some(b) => IndexMetadata.create(uuid, name, Seq(column.id),
        if (base.isEmpty) snapshot.version else base.map(_.datasetVersion).min, covers,
        IndexKind.Inverted, b.proto.getIndexDetails.getValue, b.indexVersion, (files :+ metadata).sortBy(_._1))
      case None => IndexMetadata.create(uuid, name, Seq(column.id), snapshot.version, covers, IndexKind.Inverted,
        InvertedIndexWriter.details(params), indexVersion = 2, (files :+ metadata).sortBy(_._1))
    }
  }

  /** Removes the index directory written so far (unless a commit's outcome is unknown). */
  def abort(): Unit = abort(table.storage.list(dir).map(_.path) :+ dir)

  /** Runs every task here and commits: the index built by one process. */
  def runAndCommit(): IndexMetadata =
    try commit(tasks.map(FullTextIndexBuild.run(table.storage, _)))
    catch { case NonFatal(e) => abort(); throw e }
}

object FullTextIndexBuild {

  /** The names CREATE INDEX takes for this kind. */
  def isFullText(kind: String): Boolean = Set("FTS", "INVERTED").contains(kind.toUpperCase(Locale.ROOT))

  /** The options it takes, with pylance's defaults. */
  private val Defaults: Map[String, String] = Map("base_tokenizer" -> "simple", "language" -> "English",
    "with_position" -> "false", "max_token_length" -> "40", "lower_case" -> "true", "stem" -> "true",
    "remove_stop_words" -> "true", "ascii_folding" -> "true")

  /**
   * The work on one fragment: where the version's files are, the fragment and column, the index directory, the
   * partition to write, the analysis (`params`, as JSON) and the rows: the live ones, or the physical `offsets`
   * given (deleted rows included: an update keeps the documents of an old partition's deleted rows).
   */
  final case class Task(layout: TableLayout, manifestPath: String, fragment: Array[Byte], column: Array[Byte],
      dir: String, partition: Int, params: String, rowIds: Boolean, offsets: Option[Array[Long]] = None)

  /** Runs a task (anywhere): the partition's files and sizes as one string for [[FullTextIndexBuild.commit]]. */
  def run(storage: Storage, task: Task): String = {
    val fragment = new Fragment(io.sparklance.proto.TableProtos.DataFragment.parseFrom(task.fragment))
    val params = FtsParams.parse(task.params, "a full-text index being built", task.dir)
    val partition = new InvertedIndexWriter.Partition(params)
    val allocator = new RootAllocator()
    try {
      val wanted = task.offsets.map { o =>
        val b = new RoaringBitmap()
        o.foreach(x => b.add(x.toInt))
        b
      }
      // A fragment is read in slices, so a large one never sits in memory as text.
      val slice = 65536L
      var from = 0L
      while (from < fragment.physicalRows) {
        val to = math.min(fragment.physicalRows, from + slice)
        val add: org.apache.arrow.vector.VectorSchemaRoot => Unit = { root =>
          val texts = root.getVector(0)
          val ids = root.getVector(1).asInstanceOf[BigIntVector]
          var i = 0
          while (i < root.getRowCount) {
            if (!texts.isNull(i) && wanted.forall(_.contains((ids.get(i) & 0xFFFFFFFFL).toInt))) {
              partition.add(ids.get(i), text(texts, i))
            }
            i += 1
          }
        }
        if (wanted.isEmpty) IndexBuild.readIndexed(storage, task.layout, task.manifestPath, fragment, task.column,
          task.rowIds, from, to, allocator)(add)
        else if (wanted.exists(w => w.rangeCardinality(from, to) > 0)) IndexBuild.readPhysical(storage, task.layout,
          task.manifestPath, fragment, task.column, from, to, allocator)(add)
        from = to
      }
      if (partition.numDocs == 0) ""
      else encodeFiles(partition.write(storage, task.dir, task.partition, allocator))
    } finally allocator.close()
  }

  /** Row `i` of a string vector (utf8 or large_utf8) as text. */
  private[table] def text(v: org.apache.arrow.vector.FieldVector, i: Int): String = {
    val bytes = v match {
      case s: VarCharVector => s.get(i)
      case l: LargeVarCharVector => l.get(i)
      case other => throw new IllegalStateException(s"a full-text index reads strings, not ${other.getField.getType}")
    }
    new String(bytes, java.nio.charset.StandardCharsets.UTF_8)
  }

  private def encodeFiles(files: Seq[(String, Long)]): String = files.map { case (n, s) => s"$n:$s" }.mkString(",")

  private def decodeFiles(s: String): Seq[(String, Long)] = s.split(',').toSeq.map { f =>
    val at = f.lastIndexOf(':')
    f.substring(0, at) -> f.substring(at + 1).toLong
  }

  /** Checks a new full-text index's name, column and options against `snapshot`; the build. */
  private[table] def create(table: Table, snapshot: Snapshot, name: String, column: String, options: Map[String, String],
      replace: Boolean): FullTextIndexBuild = {
    val root = snapshot.root
    io.sparklance.core.format.FeatureFlags.checkWritable(root, snapshot.version, snapshot.manifest.proto.getWriterFeatureFlags)
    if (name.isEmpty || name.exists(c => c.isControl || c == '/')) {
      throw new InvalidArgumentException(s"'$name' is not a valid index name: use letters, digits and underscores.")
    }
    val field = snapshot.schema.field(column).getOrElse(throw new InvalidArgumentException(
      s"Cannot create index '$name' on $root: it has no column '$column' (its columns: " +
        s"${snapshot.schema.fields.map(_.name).mkString(", ")})."))
    field.logicalType match {
      case LogicalType.Utf8(_) =>
      case other => throw new UnsupportedFeatureException(s"Cannot create full-text index '$name' on column " +
        s"'$column' of $root: it is $other; full-text (FTS / INVERTED) indexes take string columns.")
    }
    val unknown = options.keySet -- Defaults.keySet
    if (unknown.nonEmpty) {
      throw new InvalidArgumentException(s"Unknown option${if (unknown.size > 1) "s" else ""} " +
        s"${unknown.toSeq.sorted.mkString(", ")} for full-text index '$name'; it takes: " +
        s"${Defaults.keySet.toSeq.sorted.mkString(", ")}.")
    }
    val settings = Defaults ++ options
    val json = new com.fasterxml.jackson.databind.ObjectMapper().createObjectNode()
    settings.foreach { case (k, v) =>
      if (k == "base_tokenizer") json.put(k, v.trim)
      else if (k == "language") {
        json.put(k, FtsParams.Languages.find(_.equalsIgnoreCase(v.trim)).getOrElse(throw new InvalidArgumentException(
          s"Option language of full-text index '$name' must be one of ${FtsParams.Languages.mkString(", ")}, not '$v'.")))
      }
      else if (k == "max_token_length") {
        val n = scala.util.Try(v.trim.toInt).toOption.filter(_ > 0).getOrElse(throw new InvalidArgumentException(
          s"Option max_token_length of full-text index '$name' must be a positive whole number, not '$v'."))
        json.put(k, n)
      } else {
        val b = v.trim.toLowerCase(Locale.ROOT) match {
          case "true" => true
          case "false" => false
          case _ => throw new InvalidArgumentException(s"Option $k of full-text index '$name' must be true or false, not '$v'.")
        }
        json.put(k, b)
      }
    }
    val params = FtsParams.parse(json.toString, s"Full-text index '$name' (to create on $root)", root)
    if (!replace && snapshot.indexes.exists(_.name == name)) {
      throw new InvalidArgumentException(s"Table $root already has an index named '$name'. Drop it first " +
        "(DROP INDEX), or create it with replace = true.")
    }
    new FullTextIndexBuild(table, snapshot, name, field, params)
  }

  /**
   * The update of full-text index `name` of `snapshot` (OPTIMIZE INDEX), its segments `base` (every index of that
   * name), checked before anything is written. Options are refused: the analysis is kept.
   */
  private[table] def update(table: Table, snapshot: Snapshot, name: String, base: Seq[IndexMetadata],
      unmerged: Seq[IndexMetadata], requested: Map[String, String]): FullTextIndexBuild = {
    val root = snapshot.root
    io.sparklance.core.format.FeatureFlags.checkWritable(root, snapshot.version, snapshot.manifest.proto.getWriterFeatureFlags)
    def refuse(why: String) = new UnsupportedFeatureException(s"Cannot optimize full-text index '$name' of $root: " +
      s"$why Rebuild it over every fragment with CREATE INDEX ... USING fts ... WITH (replace = true), or optimize it " +
      "with pylance (optimize_indices).")
    if (requested.nonEmpty) {
      throw new InvalidArgumentException(s"Cannot optimize full-text index '$name' of $root with options " +
        s"${requested.keys.toSeq.sorted.mkString(", ")}: OPTIMIZE INDEX keeps the analysis it was built with. Leave " +
        "them out, or rebuild it with CREATE INDEX ... USING fts ... WITH (replace = true, ...).")
    }
    val segments = unmerged ++ base
    if (segments.exists(b => b.kind != IndexKind.Inverted || b.fieldIds != segments.head.fieldIds)) {
      throw refuse("its segments are not all full-text indexes of one column.")
    }
    val field = (segments.head.fieldIds match {
      case Seq(id) => snapshot.schema.field(id)
      case _ => None
    }).getOrElse(throw refuse("it does not index one column of the table."))
    val params = segments.map(b => FtsParams.read(snapshot.storage, snapshot.indexDir(b), name))
    if (params.distinct.size > 1) throw refuse(s"its ${segments.size} segments analyse text differently.")
    new FullTextIndexBuild(table, snapshot, name, field, params.head, base, unmerged)
  }
}
