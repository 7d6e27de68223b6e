package io.sparklance.core.schema

import scala.jdk.CollectionConverters._

import io.sparklance.core.{CorruptFileException, UnsupportedFeatureException}
import io.sparklance.core.util.Printable
import io.sparklance.proto.FileProtos

/**
 * One field of a Lance schema with its children: a column, a struct member, a list element or map entry.
 *
 * The shape comes from `logicalType` and the parent links, not from `Field.type`, which pylance sets to PARENT for
 * every field (shared/research/table-facts.md).
 */
final case class LanceField(
    id: Int,
    parentId: Int,
    name: String,
    logicalType: LogicalType,
    nullable: Boolean,
    metadata: Map[String, Array[Byte]],
    children: IndexedSeq[LanceField],
    proto: FileProtos.Field) {

  /** The field and its descendants, depth first. */
  def flatten: IndexedSeq[LanceField] = this +: children.flatMap(_.flatten)

  /** A blob column (v1): large binary values stored out of line (`lance-encoding:blob` metadata). */
  def isBlob: Boolean = metadataStrings.get("lance-encoding:blob").exists(_.equalsIgnoreCase("true"))

  /** A blob v2 column: the `lance.blob.v2` extension type (`struct<data, uri>` in the manifest). */
  def isBlobV2: Boolean = extensionName.contains(LanceField.BlobV2Extension)

  /** A packed struct: its children stored together in one column (`packed` / `lance-encoding:packed` metadata). */
  def isPacked: Boolean = logicalType == LogicalType.Struct &&
    LanceField.PackedKeys.exists(k => metadataStrings.get(k).exists(_.equalsIgnoreCase("true")))

  /** The field with only `kept` as its children (a projection of a struct). */
  def withChildren(kept: IndexedSeq[LanceField]): LanceField = copy(children = kept)

  /** The logical type as the schema stores it (e.g. `large_list`, `timestamp:us:UTC`). */
  def logicalTypeName: String = proto.getLogicalType

  def child(name: String): Option[LanceField] = children.find(_.name == name)

  /** Field metadata as text (Lance stores bytes; the values pylance writes are UTF-8). */
  def metadataStrings: Map[String, String] =
    metadata.map { case (k, v) => k -> new String(v, java.nio.charset.StandardCharsets.UTF_8) }

  /** The Arrow extension name, from the field's `extension_name` or `ARROW:extension:name` metadata. */
  def extensionName: Option[String] =
    Option(proto.getExtensionName).filter(_.nonEmpty).orElse(metadataStrings.get("ARROW:extension:name"))
}

/** A Lance schema: its top-level fields (each with its subtree) and schema metadata. */
final case class LanceSchema(fields: IndexedSeq[LanceField], metadata: Map[String, Array[Byte]]) {

  /** Every field, depth first, in the order the manifest lists them. */
  lazy val allFields: IndexedSeq[LanceField] = fields.flatMap(_.flatten)

  private lazy val byId: Map[Int, LanceField] = allFields.map(f => f.id -> f).toMap

  def field(id: Int): Option[LanceField] = byId.get(id)

  def field(name: String): Option[LanceField] = fields.find(_.name == name)

  def maxFieldId: Int = if (allFields.isEmpty) -1 else allFields.map(_.id).max

  /**
   * The fields on the given paths, pruned to what the paths ask for: `"a"` is the whole field `a`, `"s.x"` the
   * struct `s` with only its child `x`. Paths naming children of the same field merge; top-level order follows
   * the schema. Unknown paths are an [[InvalidArgumentException]] naming them.
   */
  def project(paths: Seq[String]): IndexedSeq[LanceField] = {
    def prune(f: LanceField, rest: Seq[Seq[String]]): LanceField =
      if (rest.exists(_.isEmpty) || f.logicalType != LogicalType.Struct) f
      else {
        val byChild = rest.groupBy(_.head)
        byChild.keys.foreach { c =>
          if (f.child(c).isEmpty) {
            throw new io.sparklance.core.InvalidArgumentException(s"Field '${f.name}' has no child '$c'; its children " +
              s"are ${f.children.map(_.name).mkString(", ")}.")
          }
        }
        f.copy(children = f.children.filter(c => byChild.contains(c.name)).map(c => prune(c, byChild(c.name).map(_.tail))))
      }
    val split = paths.map(_.split('.').toSeq)
    split.foreach { p =>
      if (field(p.head).isEmpty) {
        throw new io.sparklance.core.InvalidArgumentException(s"No field '${p.mkString(".")}': the schema's top-level " +
          s"fields are ${fields.map(_.name).mkString(", ")}.")
      }
    }
    val byTop = split.groupBy(_.head)
    fields.filter(f => byTop.contains(f.name)).map(f => prune(f, byTop(f.name).map(_.tail)))
  }

  /** The flat protobuf field list (depth first), as stored in manifests and data files. */
  def toProtos: IndexedSeq[FileProtos.Field] = allFields.map(_.proto)

  /** The schema as bytes (a protobuf `Schema`), to ship to other machines; read back with [[LanceSchema.fromBytes]]. */
  def toBytes: Array[Byte] = {
    val s = FileProtos.Schema.newBuilder().addAllFields(toProtos.asJava)
    metadata.foreach { case (k, v) => s.putMetadata(k, com.google.protobuf.ByteString.copyFrom(v)) }
    s.build().toByteArray
  }
}

object LanceField {
  /** The Arrow extension name of blob v2 columns. */
  val BlobV2Extension = "lance.blob.v2"

  /** The field metadata keys that mark a struct as packed (`true`): pylance reads either. */
  val PackedKeys: Seq[String] = Seq("lance-encoding:packed", "packed")
}

object LanceSchema {

  /** One field of a flat, depth-first field list, as [[fromFlat]] takes it; `parentId` -1 for a top-level field. */
  final case class FlatField(id: Int, parentId: Int, name: String, logicalType: String, nullable: Boolean,
      metadata: Map[String, String] = Map.empty)

  /** The schema of a flat field list (checked as [[fromProtos]] checks a manifest's); `source` names it for errors. */
  def fromFlat(source: String, fields: Seq[FlatField]): LanceSchema = fromProtos(source, fields.map { f =>
    val b = FileProtos.Field.newBuilder().setName(f.name).setId(f.id).setParentId(f.parentId)
      .setLogicalType(f.logicalType).setNullable(f.nullable)
    f.metadata.foreach { case (k, v) => b.putMetadata(k, com.google.protobuf.ByteString.copyFromUtf8(v)) }
    b.build()
  }, Map.empty)

  /** A schema from [[LanceSchema.toBytes]]; `source` names where the bytes came from, for errors. */
  def fromBytes(source: String, bytes: Array[Byte]): LanceSchema = {
    val s = FileProtos.Schema.parseFrom(bytes)
    fromProtos(source, s.getFieldsList.asScala.toSeq, s.getMetadataMap.asScala.map { case (k, v) => k -> v.toByteArray }.toMap)
  }

  /**
   * Builds the schema tree from the flat, depth-first field list of a manifest or data file. `source` names the
   * file, for errors: duplicate ids, unknown parents, or children under a type that has none are corruption.
   */
  def fromProtos(source: String, protos: Seq[FileProtos.Field], metadata: Map[String, Array[Byte]]): LanceSchema = {
    val ids = scala.collection.mutable.HashSet.empty[Int]
    protos.foreach { p =>
      if (!ids.add(p.getId)) throw new CorruptFileException(source, s"the schema lists field id ${p.getId} twice")
      if (!Printable.isName(p.getName)) {
        throw new CorruptFileException(source, s"field id ${p.getId} has the name '${Printable.of(p.getName)}' (empty or " +
          "with control characters)")
      }
      // Lance refuses `.` in top-level names (it separates the parts of a nested field's path).
      if (p.getParentId == -1 && p.getName.contains('.')) {
        throw new CorruptFileException(source, s"top-level field id ${p.getId} has the name '${p.getName}', but " +
          "top-level names cannot contain '.'")
      }
    }
    val childrenOf = protos.groupBy(_.getParentId)
    protos.foreach { p =>
      if (p.getParentId != -1 && !ids.contains(p.getParentId)) {
        throw new CorruptFileException(source,
          s"field '${p.getName}' (id ${p.getId}) names parent id ${p.getParentId}, which is not in the schema")
      }
    }
    def build(p: FileProtos.Field, depth: Int): LanceField = {
      if (depth > 64) throw new CorruptFileException(source, s"the schema nests deeper than 64 levels at '${p.getName}'")
      val lt = try LogicalType.parse(p.getLogicalType) catch {
        case _: UnsupportedFeatureException if !LogicalType.isUnknownTypeName(p.getLogicalType) =>
          throw new CorruptFileException(source, s"field '${Printable.of(p.getName)}' (id ${p.getId}) has " +
            s"logical type '${Printable.of(p.getLogicalType)}', which is not a well-formed Lance logical type")
        case _: UnsupportedFeatureException =>
          throw new UnsupportedFeatureException(s"Cannot read $source: field '${p.getName}' (id ${p.getId}) has " +
            s"logical type '${p.getLogicalType}', which this version of sparklance does not support. Upgrade " +
            "sparklance, or drop the column with pylance.")
      }
      val kids = childrenOf.getOrElse(p.getId, Seq.empty).toIndexedSeq.map(build(_, depth + 1))
      checkArity(source, p, lt, kids.size)
      LanceField(p.getId, p.getParentId, p.getName, lt, p.getNullable,
        p.getMetadataMap.asScala.map { case (k, v) => k -> v.toByteArray }.toMap, kids, p)
    }
    val top = childrenOf.getOrElse(-1, Seq.empty).toIndexedSeq.map(build(_, 0))
    val reached = top.flatMap(_.flatten).size
    if (reached != protos.size) {
      throw new CorruptFileException(source, s"${protos.size - reached} schema field(s) are not reachable from a " +
        "top-level field (a cycle in parent ids?)")
    }
    LanceSchema(top, metadata)
  }

  private def checkArity(source: String, p: FileProtos.Field, lt: LogicalType, n: Int): Unit = {
    val ok = lt match {
      case LogicalType.Struct => true
      case _: LogicalType.List | LogicalType.Map => n == 1
      case _ => n == 0
    }
    if (!ok) {
      throw new CorruptFileException(source,
        s"field '${p.getName}' (id ${p.getId}) of type '${p.getLogicalType}' has $n child field(s)")
    }
  }
}
