package io.sparklance.core.table

import scala.jdk.CollectionConverters._

import com.google.protobuf.ByteString

import io.sparklance.core.FileVersion
import io.sparklance.core.format.{DataFile, DeletionVector, FeatureFlags, Fragment, FragmentFiles, Manifest, ManifestFile, ManifestNaming, RowIdSequence, RowVersionSequence, TableLayout}
import io.sparklance.core.index.{IndexKind, IndexMetadata, IvfIndex}
import io.sparklance.core.schema.LanceSchema
import io.sparklance.core.storage.Storage
import io.sparklance.proto.TableProtos

/**
 * One version of a table, pinned: its manifest and how to find the files it references. Everything read through a
 * snapshot belongs to that version, whatever is committed meanwhile.
 */
final class Snapshot(val dataset: Dataset, val manifest: Manifest, val naming: ManifestNaming) {

  def root: String = dataset.root

  def storage: Storage = dataset.storage

  /** The table (or branch) this version belongs to. */
  def table: Table = Table.open(storage, dataset.commits, root)

  def version: Long = manifest.version

  def schema: LanceSchema = manifest.schema

  def fragments: IndexedSeq[Fragment] = manifest.fragments

  /** The ids of the version's fragments, in manifest order. */
  def fragmentIds: IndexedSeq[Long] = fragments.map(_.id)

  /** When this version was committed. */
  def timestamp: java.time.Instant = manifest.timestamp

  /** The table config (table properties) of this version. */
  def config: Map[String, String] = manifest.config

  /** Rows in this version (physical rows minus deleted rows). */
  def numRows: Long = manifest.numRows

  /** Whether rows keep a stable row id across updates and compaction. */
  def hasStableRowIds: Boolean = manifest.hasStableRowIds

  /**
   * The Lance file version data files of this table are written in: the one its manifest records (pylance's
   * `data_storage_version`), else 2.2.
   */
  def fileVersion: FileVersion = manifest.dataStorageVersion.flatMap(FileVersion.parse).getOrElse(FileVersion.V2_2)

  /** Attempts at a new version for a change of this version: its `commit_retries` table property, else 20. */
  private[table] def commitRetries: Int = WriteSettings.commitRetries(Settings.of(Map.empty, config))

  /** The latest version of the table (or of the branch) this snapshot belongs to, looked up now. */
  def latestVersion(): Long = dataset.latestVersion()

  /** Edits of this version's schema; new field ids start past every id its schema or data files ever used. */
  private[table] def schemaChanges: io.sparklance.core.schema.SchemaChanges =
    io.sparklance.core.schema.SchemaChanges.of(manifest.path, manifest.proto.getFieldsList.asScala.toSeq,
      manifest.fragments.flatMap(_.files.flatMap(_.fields)))

  /**
   * The indexes of this version (its manifest's index section, read on first use): every kind, scalar, vector and
   * system, in the order the section lists them.
   */
  lazy val indexes: Seq[IndexMetadata] = {
    val bytes = storage.readAll(manifest.path)
    ManifestFile.decodeIndexSection(manifest.path, bytes, manifest.proto).toSeq
      .flatMap(_.getIndicesList.asScala.map(new IndexMetadata(_, manifest.path)))
  }

  /** The directory of `index`'s files: under the table root, or under the base path it names. */
  def indexDir(index: IndexMetadata): String = layout.indexDir(index.baseId, index.uuid)

  /** How many of this version's fragments `index` covers (its bitmap may name fragments compacted since). */
  def fragmentsCovered(index: IndexMetadata): Int = fragments.count(f => index.covers(f.id))

  /**
   * How much of this version the segments of index `name` cover, as pylance 14's index statistics count it: the
   * fragments some segment covers and their live rows, and the fragments none covers, their live rows and their ids.
   */
  def indexCoverage(name: String): Snapshot.IndexCoverage = {
    val segments = indexes.filter(_.name == name)
    val (indexed, unindexed) = fragments.partition(f => segments.exists(_.covers(f.id)))
    Snapshot.IndexCoverage(indexed.size.toLong, indexed.map(_.numRows).sum, unindexed.size.toLong, unindexed.map(_.numRows).sum,
      unindexed.map(_.id))
  }

  /**
   * The type of `index` as pylance 14 names it in its statistics (`index_type`): `BTree`, `Bitmap`, `ZoneMap`,
   * `BloomFilter`, `LabelList`, `NGram`, `RTree`, `Inverted`, or a vector index's type read from its file (`IVF_PQ`,
   * `IVF_HNSW_SQ`, ...; `Vector` when the file cannot be read).
   */
  def indexTypeName(index: IndexMetadata): String = index.kind match {
    case IndexKind.Vector =>
      try IvfIndex.describe(storage, indexDir(index))._1 catch { case scala.util.control.NonFatal(_) => "Vector" }
    case k => Snapshot.TypeNames.getOrElse(k, k.name)
  }

  /** A scan of every column of this version; narrow it with the scan's `with...` methods. */
  def newScan(): Scan = Scan.of(this)

  /**
   * What describes this version to a user (`DESCRIBE TABLE EXTENDED`): location, version, commit time, fragments,
   * rows, file version, manifest naming, feature flags, writer, and the table config under its own keys (as
   * `config.<key>` where a key is one of those).
   */
  def properties: Map[String, String] = {
    val m = manifest
    val described = Map(
      "location" -> root,
      "version" -> version.toString,
      "committed_at" -> m.timestamp.toString,
      "fragments" -> m.fragments.size.toString,
      "rows" -> m.numRows.toString,
      "file_format_version" -> m.dataStorageVersion.getOrElse("legacy"),
      "manifest_naming" -> naming.name,
      "reader_feature_flags" -> FeatureFlags.describe(m.readerFeatureFlags).mkString(","),
      "writer_feature_flags" -> FeatureFlags.describe(m.writerFeatureFlags).mkString(",")) ++
      m.writerLibrary.map("written_by" -> _)
    described ++ m.config.map { case (k, v) => (if (described.contains(k)) s"config.$k" else k) -> v }
  }

  /** Where this version's files live. */
  lazy val layout: TableLayout = TableLayout.of(root, manifest)

  /** The absolute path of a data file. */
  def dataFilePath(file: DataFile): String = layout.dataFilePath(file)

  /** The absolute path of a fragment's deletion file, if it has one. */
  def deletionFilePath(fragment: Fragment): Option[String] =
    fragment.deletionFile.map(d => layout.deletionFilePath(fragment.id, d))

  /** The deleted row offsets of a fragment (empty if it has no deletion file). */
  def deletionVector(fragment: Fragment): DeletionVector = FragmentFiles.deletionVector(storage, layout, fragment)

  /** The stable row ids of a fragment's rows, if the table has stable row ids. */
  def rowIds(fragment: Fragment): Option[RowIdSequence] =
    FragmentFiles.rowIds(storage, root, manifest.path, fragment, manifest.hasStableRowIds)

  /** The version each row of a fragment was created at, if recorded. */
  def createdAtVersions(fragment: Fragment): Option[RowVersionSequence] = {
    val p = fragment.proto
    versions(fragment,
      if (p.hasInlineCreatedAtVersions) Some(p.getInlineCreatedAtVersions) else None,
      if (p.hasExternalCreatedAtVersions) Some(p.getExternalCreatedAtVersions) else None)
  }

  /** The version each row of a fragment was last updated at, if recorded. */
  def lastUpdatedAtVersions(fragment: Fragment): Option[RowVersionSequence] = {
    val p = fragment.proto
    versions(fragment,
      if (p.hasInlineLastUpdatedAtVersions) Some(p.getInlineLastUpdatedAtVersions) else None,
      if (p.hasExternalLastUpdatedAtVersions) Some(p.getExternalLastUpdatedAtVersions) else None)
  }

  /** A row version sequence stored inline in the manifest or in a section of another file. */
  private def versions(fragment: Fragment, inline: Option[ByteString],
      external: Option[TableProtos.ExternalFile]): Option[RowVersionSequence] =
    inline.map(RowVersionSequence.decode(manifest.path, _, fragment.physicalRows)).orElse(external.map { f =>
      val (path, bytes) = FragmentFiles.external(storage, root, f)
      RowVersionSequence.decode(path, bytes, fragment.physicalRows)
    })

  override def toString: String = s"Snapshot($root@$version)"
}

object Snapshot {

  /** What [[Snapshot.indexCoverage]] counts. */
  final case class IndexCoverage(indexedFragments: Long, indexedRows: Long, unindexedFragments: Long, unindexedRows: Long,
      unindexed: Seq[Long])

  private val TypeNames: Map[IndexKind, String] = Map(IndexKind.BTree -> "BTree", IndexKind.Bitmap -> "Bitmap",
    IndexKind.ZoneMap -> "ZoneMap", IndexKind.BloomFilter -> "BloomFilter", IndexKind.LabelList -> "LabelList",
    IndexKind.NGram -> "NGram", IndexKind.RTree -> "RTree", IndexKind.Inverted -> "Inverted")
}
