package io.sparklance.core.write

import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.{BigIntVector, FieldVector, VectorSchemaRoot}

import io.sparklance.core.scan.FragmentReader
import io.sparklance.core.schema.{ArrowSchemas, LanceSchema}
import io.sparklance.core.storage.Storage
import io.sparklance.core.table.Dataset

/** Tables of one int64 `id` column for the write suites: batches of ids, and the ids a version holds. */
object IdTables {
  val root = "mem://t.lance"

  val schema: LanceSchema = ArrowSchemas.fromArrow(new org.apache.arrow.vector.types.pojo.Schema(java.util.List.of(
    org.apache.arrow.vector.types.pojo.Field.nullable("id", new org.apache.arrow.vector.types.pojo.ArrowType.Int(64, true)))))

  /** A batch of the ids [from, from + n); the caller closes it. */
  def batch(allocator: BufferAllocator, from: Long, n: Int): VectorSchemaRoot = {
    val v = new BigIntVector("id", allocator)
    v.allocateNew(n)
    (0 until n).foreach(i => v.set(i, from + i))
    v.setValueCount(n)
    new VectorSchemaRoot(java.util.List.of(v.getField), java.util.List.of[FieldVector](v), n)
  }

  /** The live ids of a version (the latest by default), read through the fragment reader, in fragment order. */
  def ids(storage: Storage, allocator: BufferAllocator, version: Option[Long] = None): Seq[Long] = {
    val ds = Dataset.open(storage, root)
    val s = version.map(ds.checkout).getOrElse(ds.checkoutLatest())
    s.fragments.flatMap { f =>
      val r = new FragmentReader(storage, s.layout, f, s.schema.fields, Nil, s.deletionVector(f), None)
      try {
        val got = r.read(0, f.physicalRows, allocator)
        try (0 until got.getRowCount).map(i => got.getVector(0).asInstanceOf[BigIntVector].get(i)) finally got.close()
      } finally r.close()
    }
  }
}
