package io.sparklance.core.index

import java.util.Locale

import com.google.protobuf.{Any => AnyProto, ByteString}

import io.sparklance.proto.TableProtos

/**
 * The kind of an index, told by the type of its `index_details` (a `google.protobuf.Any`). The scalar kinds'
 * details messages are empty (protos `index_old.proto`), so the type URL alone says what the files hold.
 */
sealed abstract class IndexKind(val name: String, val typeName: String) {
  /** The `index_details` a new index of this kind records. */
  def details: AnyProto = AnyProto.newBuilder().setTypeUrl(s"/$typeName").setValue(ByteString.EMPTY).build()

  /** Whether sparklance reads this kind to answer filters. */
  def isScalar: Boolean = false

  override def toString: String = name
}

object IndexKind {
  sealed abstract class Scalar(name: String, typeName: String) extends IndexKind(name, typeName) {
    override def isScalar: Boolean = true
  }
  case object BTree extends Scalar("BTREE", "lance.table.BTreeIndexDetails")
  case object Bitmap extends Scalar("BITMAP", "lance.table.BitmapIndexDetails")
  case object ZoneMap extends Scalar("ZONEMAP", "lance.table.ZoneMapIndexDetails")
  case object BloomFilter extends Scalar("BLOOMFILTER", "lance.index.pb.BloomFilterIndexDetails")
  case object LabelList extends Scalar("LABEL_LIST", "lance.table.LabelListIndexDetails")
  case object Inverted extends IndexKind("INVERTED", "lance.table.InvertedIndexDetails")
  case object NGram extends Scalar("NGRAM", "lance.table.NGramIndexDetails")
  /** pylance 14's spatial index (`RTreeIndexDetails`, empty); built, never read to answer filters. */
  case object RTree extends Scalar("RTREE", "lance.index.pb.RTreeIndexDetails")
  /** A vector index; pylance 14 records its details as `lance.index.pb.VectorIndexDetails`. */
  case object Vector extends IndexKind("VECTOR", "lance.index.pb.VectorIndexDetails")
  /** An index sparklance does not know (a system index, or a newer kind); kept, never read. */
  final case class Other(typeUrl: String) extends IndexKind(typeUrl.substring(typeUrl.lastIndexOf('/') + 1), "")

  private val known: Seq[IndexKind] = Seq(BTree, Bitmap, ZoneMap, BloomFilter, LabelList, Inverted, NGram, RTree, Vector)

  /** The scalar kinds `CREATE INDEX ... USING <kind>` builds, by the name users give. */
  val buildable: Seq[Scalar] = Seq(BTree, Bitmap, ZoneMap, BloomFilter, LabelList, NGram, RTree)

  def of(p: TableProtos.IndexMetadata): IndexKind =
    if (!p.hasIndexDetails) {
      // Indexes written before index_details existed were vector indexes.
      Vector
    } else {
      val url = p.getIndexDetails.getTypeUrl
      val typeName = url.substring(url.lastIndexOf('/') + 1)
      known.find(k => k.typeName == typeName || typeName.endsWith("." + k.typeName.split('.').last))
        .getOrElse(Other(url))
    }

  /** The buildable kind a user names (case-insensitive), if any. */
  def buildableNamed(name: String): Option[Scalar] = {
    val n = name.toUpperCase(Locale.ROOT).replace("-", "_")
    buildable.find(k => k.name == n || (n == "BLOOM_FILTER" && k == BloomFilter) || (n == "LABELLIST" && k == LabelList))
  }
}
