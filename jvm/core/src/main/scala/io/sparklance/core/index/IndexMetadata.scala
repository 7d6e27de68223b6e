package io.sparklance.core.index

import java.nio.ByteBuffer
import java.util.UUID

import scala.jdk.CollectionConverters._

import com.google.protobuf.ByteString
import org.roaringbitmap.RoaringBitmap

import io.sparklance.core.CorruptFileException
import io.sparklance.proto.TableProtos

/**
 * One index of a table version, as its manifest's index section lists it (table.proto `IndexMetadata`): a uuid
 * naming its directory `_indices/<uuid>/`, a name several delta indexes may share, the field ids it indexes, the
 * fragments it covers (`fragment_bitmap`, a portable Roaring bitmap of fragment ids) and its kind (the type of
 * `index_details`). The protobuf is kept whole, so that what a newer writer set survives a rewrite of the section.
 */
final class IndexMetadata(val proto: TableProtos.IndexMetadata, manifestPath: String) {

  val uuid: String = IndexMetadata.uuidString(manifestPath, proto.getUuid.getUuid)

  def name: String = proto.getName

  def fieldIds: Seq[Int] = proto.getFieldsList.asScala.map(_.intValue).toSeq

  def datasetVersion: Long = proto.getDatasetVersion

  def kind: IndexKind = IndexKind.of(proto)

  /** When the index was created, if recorded. */
  def createdAt: Option[java.time.Instant] =
    if (proto.hasCreatedAt) Some(java.time.Instant.ofEpochMilli(proto.getCreatedAt)) else None

  /** The index format version its writer records (`index_version`), 0 when absent. */
  def indexVersion: Int = if (proto.hasIndexVersion) proto.getIndexVersion else 0

  /** The fragments whose rows the index covers; rows of other fragments must be read to be found. */
  lazy val fragmentBitmap: RoaringBitmap =
    if (proto.getFragmentBitmap.isEmpty) new RoaringBitmap()
    else try {
      val b = new RoaringBitmap()
      b.deserialize(ByteBuffer.wrap(proto.getFragmentBitmap.toByteArray))
      b
    } catch {
      case e: Exception => throw new CorruptFileException(manifestPath, s"the fragment bitmap of index '$name' " +
        s"($uuid) is not a valid Roaring bitmap: ${e.getMessage}", e)
    }

  def covers(fragmentId: Long): Boolean = fragmentId <= 0xFFFFFFFFL && fragmentBitmap.contains(fragmentId.toInt)

  /** The base path (`Manifest.base_paths` id) whose `_indices/` holds the index's files, if not the table root. */
  def baseId: Option[Int] = if (proto.hasBaseId) Some(proto.getBaseId) else None

  override def toString: String = s"$name ($kind, $uuid)"
}

object IndexMetadata {

  /** The metadata a new index records; `details` is its kind's `index_details` message, encoded. */
  def create(uuid: UUID, name: String, fieldIds: Seq[Int], datasetVersion: Long, fragments: RoaringBitmap,
      kind: IndexKind, details: ByteString, indexVersion: Int, files: Seq[(String, Long)]): TableProtos.IndexMetadata = {
    val b = TableProtos.IndexMetadata.newBuilder()
      .setUuid(TableProtos.UUID.newBuilder().setUuid(ByteString.copyFrom(uuidBytes(uuid))))
      .setName(name)
      .addAllFields(fieldIds.map(Integer.valueOf).asJava)
      .setDatasetVersion(datasetVersion)
      .setFragmentBitmap(bitmapBytes(fragments))
      .setIndexDetails(kind.details.toBuilder.setValue(details))
      .setIndexVersion(indexVersion)
      .setCreatedAt(System.currentTimeMillis())
    files.foreach { case (path, size) => b.addFiles(TableProtos.IndexFile.newBuilder().setPath(path).setSizeBytes(size)) }
    b.build()
  }

  /** The protobuf with another fragment bitmap. */
  def withFragments(p: TableProtos.IndexMetadata, fragments: RoaringBitmap): TableProtos.IndexMetadata =
    p.toBuilder.setFragmentBitmap(bitmapBytes(fragments)).build()

  def bitmapBytes(b: RoaringBitmap): ByteString = {
    b.runOptimize()
    val buf = ByteBuffer.allocate(b.serializedSizeInBytes())
    b.serialize(buf)
    ByteString.copyFrom(buf.array())
  }

  private def uuidBytes(u: UUID): Array[Byte] =
    ByteBuffer.allocate(16).putLong(u.getMostSignificantBits).putLong(u.getLeastSignificantBits).array()

  /** A uuid of 16 bytes in its hyphenated text form, as the index directory is named. */
  private[core] def uuidString(path: String, bytes: ByteString): String = {
    if (bytes.size != 16) throw new CorruptFileException(path, s"an index uuid has ${bytes.size} bytes, not 16")
    val b = ByteBuffer.wrap(bytes.toByteArray)
    new UUID(b.getLong, b.getLong).toString
  }
}
