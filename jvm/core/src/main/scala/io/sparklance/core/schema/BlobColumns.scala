package io.sparklance.core.schema

import io.sparklance.core.{FileVersion, UnsupportedFeatureException}
import io.sparklance.proto.FileProtos

/**
 * The blob columns of a new table in the shape its file version stores them, as pylance 14 creates them: a
 * top-level `large_binary` field marked `lance-encoding:blob` stays so in file versions 2.0 and 2.1, and in 2.2
 * becomes a blob v2 column, a `struct<data: large_binary, uri: string>` with the `lance.blob.v2` extension
 * (docs/dev/file-format-2.1.md §6). Field ids are assigned again depth first from the first one, as a new schema's.
 */
object BlobColumns {

  def forVersion(schema: LanceSchema, version: FileVersion): LanceSchema =
    if (version != FileVersion.V2_2 || !schema.fields.exists(isBlobV1)) schema
    else {
      val protos = IndexedSeq.newBuilder[FileProtos.Field]
      val ids = schema.allFields.map(_.id)
      val next = Iterator.from(if (ids.isEmpty) 0 else ids.min)
      def add(f: LanceField, parent: Int): Unit = {
        val id = next.next()
        if (isBlobV1(f)) {
          protos += f.proto.toBuilder.setId(id).setParentId(parent).setLogicalType("struct").clearEncoding()
            .removeMetadata("lance-encoding:blob")
            .putMetadata("ARROW:extension:name", com.google.protobuf.ByteString.copyFromUtf8(LanceField.BlobV2Extension))
            .build()
          Seq("data" -> "large_binary", "uri" -> "string").foreach { case (name, t) =>
            protos += FileProtos.Field.newBuilder().setName(name).setId(next.next()).setParentId(id).setLogicalType(t)
              .setNullable(true).build()
          }
        } else {
          protos += f.proto.toBuilder.setId(id).setParentId(parent).build()
          f.children.foreach(add(_, id))
        }
      }
      schema.fields.foreach(add(_, -1))
      LanceSchema.fromProtos("a new table's schema", protos.result(), schema.metadata)
    }

  private def isBlobV1(f: LanceField): Boolean = f.parentId == -1 && f.isBlob && f.logicalType == LogicalType.Binary(true)

  /** The part of a blob v2 value that holds its bytes (large_binary). */
  val Data = "data"
  /** The part of a blob v2 descriptor that says where its bytes start in the object holding them (uint64). */
  val Position = "position"
  /** The part of a blob v2 descriptor that says how many bytes it has (uint64). */
  val Size = "size"

  /** The name suffix of the virtual column giving a blob column's positions, as lance-spark names it. */
  val PositionSuffix = "__blob_pos"
  /** The name suffix of the virtual column giving a blob column's sizes, as lance-spark names it. */
  val SizeSuffix = "__blob_size"

  /** The top-level blob columns of a schema: blob-marked large binaries (v1) and blob v2 columns. */
  def of(schema: LanceSchema): Seq[LanceField] = schema.fields.filter(f => isBlobV1(f) || f.isBlobV2)

  /**
   * A projection of blob v2 column `field` that reads one `part` of each value (as a struct with that one child,
   * null where the blob is null): its bytes ([[Data]]), or from its descriptor alone, without reading the bytes,
   * their position ([[Position]]) or size ([[Size]]). Tables pylance 14 makes with `lance.blob_field` list
   * position and size among the column's children; other blob v2 columns do not, and the part is then a child of
   * a negative id, which only the read fills (`FragmentReader` fills a blob v2 column's children by name).
   */
  def view(field: LanceField, part: String): LanceField = {
    require(field.isBlobV2 && Seq(Data, Position, Size).contains(part), s"part $part of blob column ${field.name}")
    val child = field.child(part).getOrElse {
      // An id no field has (ids are not negative), unique within the projection of this one field.
      val id = -2 - Seq(Data, Position, Size).indexOf(part)
      val proto = FileProtos.Field.newBuilder().setName(part).setId(id).setParentId(field.id)
        .setLogicalType(if (part == Data) "large_binary" else "uint64").setNullable(true).build()
      LanceField(id, field.id, part, if (part == Data) LogicalType.Binary(true) else LogicalType.Int(64, false),
        nullable = true, Map.empty, IndexedSeq.empty, proto)
    }
    field.withChildren(IndexedSeq(child))
  }

  /**
   * The descriptor of each blob of a blob v2 column as the data file stores it, and as pylance 14 shows it by
   * default (`blob_handling = "blobs_descriptions"`) and lance-spark always: its parts in this order, each with its
   * Lance type (docs/dev/file-format-2.1.md §6):
   *  - `kind` (uint8): 0 inline (the bytes are in the data file), 1 packed (in the shared sidecar `blob_id`),
   *    2 dedicated (the whole sidecar `blob_id`), 3 external (at `blob_uri`);
   *  - `position` and `size` (uint64): where the bytes start in the object holding them and how many there are (0
   *    and 0 for an external blob that is a whole object, whose size the descriptor does not record);
   *  - `blob_id` (uint32): the sidecar's id (0 for inline and external blobs);
   *  - `blob_uri` (string): the external object's URI, empty for the other kinds.
   */
  val DescriptorParts: Seq[(String, LogicalType, String)] = Seq(
    ("kind", LogicalType.Int(8, signed = false), "uint8"),
    (Position, LogicalType.Int(64, signed = false), "uint64"),
    (Size, LogicalType.Int(64, signed = false), "uint64"),
    ("blob_id", LogicalType.Int(32, signed = false), "uint32"),
    ("blob_uri", LogicalType.Utf8(large = false), "string"))

  /**
   * A projection of blob v2 column `field` that reads its descriptors ([[DescriptorParts]]) as stored, without
   * reading any blob's bytes: a struct of the five parts, null where the blob is null. Unlike [[view]], external
   * blobs are read too (their kind and URI). The parts are children of negative ids (the table lists none of
   * them, or only position and size), which only the read fills (`FragmentReader` fills a blob v2 column's
   * children by name, and reads a projection with a `kind` child as descriptors).
   */
  def descriptors(field: LanceField): LanceField = {
    require(field.isBlobV2, s"descriptors of blob column ${field.name}")
    val parts = DescriptorParts.zipWithIndex.map { case ((name, t, logical), i) =>
      val id = -5 - i // below the ids of view's parts (-2 to -4)
      val proto = FileProtos.Field.newBuilder().setName(name).setId(id).setParentId(field.id).setLogicalType(logical)
        .setNullable(true).build()
      LanceField(id, field.id, name, t, nullable = true, Map.empty, IndexedSeq.empty, proto)
    }
    field.withChildren(parts.toIndexedSeq)
  }

  /** The name of the first part of a blob v2 descriptor: a projection with a child of this name reads descriptors. */
  val Kind = "kind"

  /**
   * The projection that reads virtual column `name` of a schema, `<blob column>__blob_pos` or
   * `<blob column>__blob_size` (lance-spark's names): the positions or sizes of a blob v2 column's values
   * ([[view]]); None when `name` is no such column. Blob columns of file versions 2.0 and 2.1 have none: their
   * descriptors are not read apart from their bytes, which is refused.
   */
  def virtualColumn(schema: LanceSchema, name: String): Option[LanceField] = {
    val parts = Seq(PositionSuffix -> Position, SizeSuffix -> Size)
    parts.collectFirst { case (suffix, part) if name.endsWith(suffix) =>
      schema.field(name.stripSuffix(suffix)).filter(f => isBlobV1(f) || f.isBlobV2).map { f =>
        if (!f.isBlobV2) {
          throw new UnsupportedFeatureException(s"Cannot read column '$name': blob column '${f.name}' is a blob " +
            "column of file version 2.0 or 2.1, whose positions and sizes this version of sparklance does not read " +
            s"apart from the bytes. Read length(${f.name}) for the sizes, or use file version 2.2.")
        }
        view(f, part)
      }
    }.flatten
  }
}
