package io.sparklance.core.file

import java.nio.file.{Files, Path}
import java.nio.file.attribute.FileTime

import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector.{BigIntVector, FieldVector, VectorSchemaRoot}
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, Schema}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.FileVersion
import io.sparklance.core.schema.ArrowSchemas
import io.sparklance.core.storage.{HadoopStorage, InMemoryStorage, Storage}

/**
 * [[FileMetadataCache]]: a file opened again is not parsed again; a file written again at the same path (another
 * size or modification time) is; files whose storage does not tell a modification time are never held; the bytes
 * held stay under the bound, the least recently used going first.
 */
class FileMetadataCacheSuite extends AnyFunSuite with BeforeAndAfterAll {
  private val allocator = new RootAllocator()
  private val dir: Path = Files.createTempDirectory("metadata-cache")
  override def afterAll(): Unit = allocator.close()

  private def write(storage: Storage, path: String, rows: Int): Unit = {
    val v = new BigIntVector("id", allocator)
    v.allocateNew(rows)
    (0 until rows).foreach(i => v.set(i, i.toLong))
    v.setValueCount(rows)
    val root = new VectorSchemaRoot(java.util.List.of[FieldVector](v))
    val schema = new Schema(java.util.List.of(Field.notNullable("id", new ArrowType.Int(64, true))))
    if (storage.exists(path)) storage.delete(path)
    val w = LanceFileWriter.create(storage, path, ArrowSchemas.fromArrow(schema), FileVersion.V2_2)
    try { w.write(root); w.finish() } finally { w.close(); root.close() }
  }

  private def metadata(cache: FileMetadataCache, storage: Storage, path: String): FileMetadata = {
    val in = storage.open(path)
    try cache(in)(FileMetadata.read(in)) finally in.close()
  }

  test("a file opened again comes from the cache; one written again at its path does not") {
    val storage = new HadoopStorage()
    val cache = new FileMetadataCache(1L << 20)
    val path = dir.resolve("a.lance").toString
    write(storage, path, 100)
    val first = metadata(cache, storage, path)
    assert(metadata(cache, storage, path) eq first)
    assert(cache.size == 1)
    // The same size, another modification time: read again.
    Files.setLastModifiedTime(Path.of(path), FileTime.fromMillis(Files.getLastModifiedTime(Path.of(path)).toMillis - 5000))
    val again = metadata(cache, storage, path)
    assert(!(again eq first) && again.numRows == 100)
    // Another size: read again, and the new content shows.
    write(storage, path, 200)
    assert(metadata(cache, storage, path).numRows == 200)
    // Through the reader: openImmutable shares the metadata, open does not.
    val a = LanceFileReader.openImmutable(storage, path)
    val b = LanceFileReader.openImmutable(storage, path)
    val c = LanceFileReader.open(storage, path)
    try {
      assert(a.metadata eq b.metadata)
      assert(!(c.metadata eq a.metadata))
      assert(a.numRows == 200)
    } finally { a.close(); b.close(); c.close() }
  }

  test("files without a known modification time are not held") {
    val storage = new InMemoryStorage
    val cache = new FileMetadataCache(1L << 20)
    write(storage, "mem://t/a.lance", 10)
    val first = metadata(cache, storage, "mem://t/a.lance")
    assert(!(metadata(cache, storage, "mem://t/a.lance") eq first))
    assert(cache.size == 0)
  }

  test("the bytes held stay under the bound; the least recently used file goes first") {
    val storage = new HadoopStorage()
    val paths = (0 until 5).map(i => dir.resolve(s"b$i.lance").toString)
    paths.foreach(write(storage, _, 10))
    val one = FileMetadataCache.weight(metadata(new FileMetadataCache(1L << 20), storage, paths.head))
    val cache = new FileMetadataCache(3 * one)
    val held = paths.take(3).map(metadata(cache, storage, _))
    assert(metadata(cache, storage, paths.head) eq held.head)   // now the most recently used; paths(1) the least
    metadata(cache, storage, paths(3))
    assert(cache.size == 3 && cache.bytes <= 3 * one)
    assert(metadata(cache, storage, paths.head) eq held.head)
    assert(metadata(cache, storage, paths(2)) eq held(2))
    assert(!(metadata(cache, storage, paths(1)) eq held(1)))
    assert(cache.size == 3 && cache.bytes <= 3 * one)
  }
}
