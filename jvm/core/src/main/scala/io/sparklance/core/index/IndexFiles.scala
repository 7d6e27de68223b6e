package io.sparklance.core.index

import java.nio.charset.StandardCharsets

import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.{FieldVector, VectorSchemaRoot}

import io.sparklance.core.CorruptFileException
import io.sparklance.core.file.LanceFileReader
import io.sparklance.core.schema.LanceField
import io.sparklance.core.storage.Storage

/** Reading the Lance files an index directory holds: columns by name, schema metadata, checked as data files are. */
private[index] object IndexFiles {

  def withReader[T](storage: Storage, path: String)(body: LanceFileReader => T): T = {
    val reader = LanceFileReader.openImmutable(storage, path)
    try body(reader) finally reader.close()
  }

  /** Every row of every column of the file at `path`, for `body` to use before the vectors are freed. */
  def withAll[T](storage: Storage, path: String, allocator: BufferAllocator)(body: (LanceFileReader, VectorSchemaRoot) => T): T =
    withReader(storage, path) { reader =>
      val root = reader.read(reader.metadata.schema.fields, 0, reader.numRows, allocator)
      try body(reader, root) finally root.close()
    }

  /** The file's top-level fields of these names, in this order. */
  def fields(reader: LanceFileReader, names: String*): Seq[LanceField] = names.map { n =>
    reader.metadata.schema.fields.find(_.name == n).getOrElse(throw new CorruptFileException(reader.path,
      s"the index file has no column '$n' (its columns: ${reader.metadata.schema.fields.map(_.name).mkString(", ")})"))
  }

  def column(path: String, root: VectorSchemaRoot, name: String): FieldVector =
    Option(root.getVector(name)).getOrElse(throw new CorruptFileException(path, s"the index file has no column '$name'"))

  /** Adds the rows of zone `i` (physical rows [from, from + length) of a fragment), checked, to `builder`. */
  def addZone(path: String, i: Int, fragment: Long, from: Long, length: Long, builder: RowSelection.Builder): Unit = {
    if (from < 0 || length < 0 || from + length > 0xFFFFFFFFL) {
      throw new CorruptFileException(path, s"zone $i spans rows [$from, ${from + length}) of fragment $fragment")
    }
    builder.addRange(fragment, from, from + length)
  }

  def positiveInt(path: String, key: String, value: String): Int =
    scala.util.Try(value.trim.toInt).toOption.filter(_ > 0).getOrElse(throw new CorruptFileException(path,
      s"its schema metadata '$key' is '$value', not a positive number"))

  implicit final class SchemaMetadata(reader: LanceFileReader) {
    def schemaMetadataString(key: String): Option[String] =
      reader.metadata.schema.metadata.get(key).map(new String(_, StandardCharsets.UTF_8))
  }
}
