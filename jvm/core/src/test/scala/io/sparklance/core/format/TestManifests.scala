package io.sparklance.core.format

import java.time.Instant

import com.google.protobuf.Timestamp

import io.sparklance.core.storage.{InMemoryStorage, Storage}
import io.sparklance.proto.{FileProtos, TableProtos}

/** Builders of manifests and tables for tests. */
object TestManifests {

  def field(id: Int, parent: Int, name: String, logicalType: String, nullable: Boolean = true): FileProtos.Field =
    FileProtos.Field.newBuilder().setId(id).setParentId(parent).setName(name).setLogicalType(logicalType)
      .setNullable(nullable).build()

  val simpleFields: Seq[FileProtos.Field] = Seq(field(0, -1, "a", "int64"), field(1, -1, "b", "string"))

  def fragment(id: Long, rows: Long): TableProtos.DataFragment =
    TableProtos.DataFragment.newBuilder().setId(id).setPhysicalRows(rows)
      .addFiles(TableProtos.DataFile.newBuilder().setPath(s"f$id.lance").addFields(0).addFields(1)
        .addColumnIndices(0).addColumnIndices(1).setFileMajorVersion(2).setFileMinorVersion(2))
      .build()

  def manifest(version: Long, at: Instant, fragments: Seq[TableProtos.DataFragment] = Seq(fragment(0, 10)),
      readerFlags: Long = 0): TableProtos.Manifest = {
    val b = TableProtos.Manifest.newBuilder().setVersion(version)
      .setTimestamp(Timestamp.newBuilder().setSeconds(at.getEpochSecond).setNanos(at.getNano))
      .setReaderFeatureFlags(readerFlags).setWriterFeatureFlags(readerFlags)
      .setDataFormat(TableProtos.Manifest.DataStorageFormat.newBuilder().setFileFormat("lance").setVersion("2.2"))
    simpleFields.foreach(b.addFields)
    fragments.foreach(b.addFragments)
    if (fragments.nonEmpty) b.setMaxFragmentId(fragments.map(_.getId).max.toInt)
    b.build()
  }

  /** Writes a manifest to `root/_versions/` with the given naming scheme. */
  def commit(storage: Storage, root: String, m: TableProtos.Manifest, naming: ManifestNaming = ManifestNaming.V2): Unit =
    storage.create(Storage.join(root, s"_versions/${naming.fileName(m.getVersion)}"), ManifestFile.encode(m, None))

  /** A table of `n` versions, one second apart from 2026-01-01T00:00:00Z, version v having v fragments. */
  def table(n: Int, naming: ManifestNaming = ManifestNaming.V2): (InMemoryStorage, String) = {
    val storage = new InMemoryStorage
    val root = "mem://t.lance"
    (1 to n).foreach { v =>
      commit(storage, root, manifest(v, t0.plusSeconds(v - 1), (0 until v).map(i => fragment(i, 10))), naming)
    }
    (storage, root)
  }

  val t0: Instant = Instant.parse("2026-01-01T00:00:00Z")
}
