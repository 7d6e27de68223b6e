package io.sparklance.core.schema

import io.sparklance.core.FileVersion
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
}
