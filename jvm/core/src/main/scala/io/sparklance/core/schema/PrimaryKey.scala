package io.sparklance.core.schema

import io.sparklance.proto.FileProtos

/**
 * A table's unenforced primary key: fields marked with `lance-schema:unenforced-primary-key` metadata (and the
 * `unenforced_primary_key` flag of the field's protobuf), ordered by `lance-schema:unenforced-primary-key:position`
 * (from 1; fields without a position follow, by field id), as pylance 14 orders them. Lance records the key and never
 * checks it: rows with equal keys are accepted.
 */
object PrimaryKey {
  val Key = "lance-schema:unenforced-primary-key"
  val PositionKey = "lance-schema:unenforced-primary-key:position"

  def isKey(k: String): Boolean = k == Key || k == PositionKey

  /** pylance's reading of the key's value. */
  def truthy(v: String): Boolean = Set("true", "1", "yes").contains(v.toLowerCase(java.util.Locale.ROOT))

  def isPart(f: FileProtos.FieldOrBuilder): Boolean =
    f.getUnenforcedPrimaryKey || Option(f.getMetadataMap.get(Key)).exists(v => truthy(v.toStringUtf8))

  private def position(f: FileProtos.FieldOrBuilder): Int =
    if (f.getUnenforcedPrimaryKeyPosition > 0) f.getUnenforcedPrimaryKeyPosition
    else Option(f.getMetadataMap.get(PositionKey)).flatMap(v => scala.util.Try(v.toStringUtf8.trim.toInt).toOption).getOrElse(0)

  /** The key's fields, in key order. */
  def fields(schema: LanceSchema): Seq[LanceField] = ordered(schema.allFields)(_.proto)

  /** The names of the key's fields in a flat field list (as a manifest stores them), in key order. */
  def columns(protos: Seq[FileProtos.Field]): Seq[String] = ordered(protos)(identity).map(_.getName)

  private def ordered[A](all: Seq[A])(proto: A => FileProtos.FieldOrBuilder): Seq[A] =
    all.filter(a => isPart(proto(a))).sortBy { a =>
      val p = proto(a)
      val at = position(p)
      if (at > 0) (0, at, p.getId) else (1, p.getId, p.getId)
    }
}
