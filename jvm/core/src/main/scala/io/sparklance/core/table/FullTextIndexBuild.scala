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
 * Built as the update of an existing index (`base`: [[Table.newIndexUpdate]], OPTIMIZE INDEX), as pylance 14's
 * `optimize_indices` updates one: only the fragments `base` does not cover are read (one task each), their partitions
 * take the ids after `base`'s, and the new index (a new uuid, `base`'s analysis, details and dataset version) holds
 * `base`'s partitions, copied as they are, and the new ones, covering every fragment; it replaces `base` in one
 * commit. Documents deleted since `base` was built stay in its partitions' statistics, as they do in pylance's
 * (which may also merge the old partitions into one; the documents are the same), except on tables with stable row
 * ids, where pylance drops them and every fragment is read again (`reused`). An index covering every fragment is
 * left as it is.
 */
final class FullTextIndexBuild private[table] (table: Table, snapshot: Snapshot, val name: String,
    val column: io.sparklance.core.schema.LanceField, val params: FtsParams, base: Option[IndexMetadata] = None)
    extends PendingCommit(table) {

  retriesFrom(snapshot)

  def root: String = table.root

  val uuid: UUID = UUID.randomUUID()

  private val dir = Storage.join(table.root, s"_indices/$uuid")

  private val replaced: Seq[IndexMetadata] = snapshot.indexes.filter(_.name == name)

  /** Whether an update has fragments to add: one whose fragments are all covered commits nothing. */
  private val stale: Boolean = base.forall(b => snapshot.fragments.exists(f => !b.covers(f.id)))

  /**
   * Whether an update keeps `base`'s partitions. On a table with stable row ids pylance 14 drops the documents of
   * deleted rows from the old partitions as it updates them, so when a covered fragment has deleted rows every
   * fragment's live rows are read again (the same documents, scored the same).
   */
  private val reused: Boolean = base.exists(b => !(snapshot.hasStableRowIds &&
    snapshot.fragments.exists(f => b.covers(f.id) && f.numDeletedRows > 0)))

  /** The partition ids of `base`, kept by an update. */
  private val kept: Seq[Int] = base.filter(_ => reused)
    .map(b => InvertedIndex.open(snapshot.storage, snapshot.indexDir(b), name).partitions.map(_.id)).getOrElse(Nil)

  /** The fragments read: every one, or those `base` does not cover. */
  private val read: Seq[Fragment] = snapshot.fragments.filterNot(f => reused && base.exists(_.covers(f.id)))

  /**
   * One task per fragment read, to run anywhere ([[FullTextIndexBuild.run]]); partition ids follow the fragments'
   * order, after those kept.
   */
  def tasks: Seq[FullTextIndexBuild.Task] = if (!stale) Nil else {
    val first = if (kept.isEmpty) 0 else kept.max + 1
    read.zipWithIndex.map { case (f, i) =>
      FullTextIndexBuild.Task(snapshot.layout, snapshot.manifest.path, f.proto.toByteArray,
        LanceSchema(IndexedSeq(column), Map.empty).toBytes, dir, first + i, InvertedIndexWriter.paramsJson(params),
        snapshot.hasStableRowIds)
    }
  }

  /**
   * Writes `metadata.lance` for the partitions the tasks wrote (their results: the partition's files and sizes, or
   * nothing for a fragment without documents) and commits the index; returns its metadata. An update with no
   * fragment to read commits nothing and returns `base`.
   */
  def commit(results: Seq[String]): IndexMetadata = base.filter(_ => !stale).getOrElse(committing {
    val first = if (kept.isEmpty) 0 else kept.max + 1
    val copied = kept.flatMap { id =>
      Seq(InvertedIndex.TokensFile, InvertedIndex.InvertFile, InvertedIndex.DocsFile).map { pattern =>
        val file = pattern.format(id)
        val bytes = table.storage.readAll(Storage.join(snapshot.indexDir(base.get), file))
        table.storage.create(Storage.join(dir, file), bytes)
        file -> bytes.length.toLong
      }
    }
    val files = copied ++ results.filter(_.nonEmpty).flatMap(FullTextIndexBuild.decodeFiles)
    val partitions = kept ++ results.zipWithIndex.filter(_._1.nonEmpty).map(first + _._2)
    val allocator = new RootAllocator()
    val metadata = try InvertedIndexWriter.writeMetadata(table.storage, dir, params, partitions, allocator)
      finally allocator.close()
    val present = RoaringBitmap.bitmapOf(snapshot.fragments.map(_.id.toInt): _*)
    val meta = base match {
      case Some(b) => IndexMetadata.create(uuid, name, Seq(column.id), b.datasetVersion, present, IndexKind.Inverted,
        b.proto.getIndexDetails.getValue, b.indexVersion, (files :+ metadata).sortBy(_._1))
      case None => IndexMetadata.create(uuid, name, Seq(column.id), snapshot.version, present, IndexKind.Inverted,
        InvertedIndexWriter.details(params), indexVersion = 2, (files :+ metadata).sortBy(_._1))
    }
    table.commit(Transaction.create(snapshot.version, Operation.CreateIndex(Seq(meta), replaced.map(_.proto))),
      Committer.Options(maxRetries = commitRetries))
    new IndexMetadata(meta, snapshot.manifest.path)
  })

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
   * partition to write and the analysis (`params`, as JSON).
   */
  final case class Task(layout: TableLayout, manifestPath: String, fragment: Array[Byte], column: Array[Byte],
      dir: String, partition: Int, params: String, rowIds: Boolean)

  /** Runs a task (anywhere): the partition's files and sizes as one string for [[FullTextIndexBuild.commit]]. */
  def run(storage: Storage, task: Task): String = {
    val fragment = new Fragment(io.sparklance.proto.TableProtos.DataFragment.parseFrom(task.fragment))
    val params = FtsParams.parse(task.params, "a full-text index being built", task.dir)
    val partition = new InvertedIndexWriter.Partition(params)
    val allocator = new RootAllocator()
    try {
      // A fragment is read in slices, so a large one never sits in memory as text.
      val slice = 65536L
      var from = 0L
      while (from < fragment.physicalRows) {
        val to = math.min(fragment.physicalRows, from + slice)
        IndexBuild.readIndexed(storage, task.layout, task.manifestPath, fragment, task.column, task.rowIds, from, to,
          allocator) { root =>
          val texts = root.getVector(0)
          val ids = root.getVector(1).asInstanceOf[BigIntVector]
          var i = 0
          while (i < root.getRowCount) {
            if (!texts.isNull(i)) partition.add(ids.get(i), text(texts, i))
            i += 1
          }
        }
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
   * The update of full-text index `name` of `snapshot` (OPTIMIZE INDEX), checked before anything is written. What
   * this writer cannot update as pylance 14 does is an [[UnsupportedFeatureException]]: an index of several segments,
   * and one covering a fragment no longer in the table (pylance then drops that fragment's documents as it merges
   * the partitions, which changes scores; sparklance does not rewrite partitions).
   */
  private[table] def update(table: Table, snapshot: Snapshot, name: String, base: IndexMetadata,
      requested: Map[String, String]): FullTextIndexBuild = {
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
    val segments = snapshot.indexes.filter(_.name == name)
    if (segments.size > 1) throw refuse(s"it has ${segments.size} segments, which sparklance does not merge.")
    val field = (base.fieldIds match {
      case Seq(id) => snapshot.schema.field(id)
      case _ => None
    }).getOrElse(throw refuse("it does not index one column of the table."))
    val present = snapshot.fragments.map(_.id).toSet
    val gone = base.fragmentBitmap.toArray.map(_.toLong).filterNot(present.contains)
    if (gone.nonEmpty) {
      throw refuse(s"it covers fragment${if (gone.length > 1) "s" else ""} ${gone.take(5).mkString(", ")} that the " +
        "table no longer holds (deleted or compacted away); pylance drops their documents, which sparklance does " +
        "not do yet.")
    }
    val params = FtsParams.read(snapshot.storage, snapshot.indexDir(base), name)
    new FullTextIndexBuild(table, snapshot, name, field, params, Some(base))
  }
}
