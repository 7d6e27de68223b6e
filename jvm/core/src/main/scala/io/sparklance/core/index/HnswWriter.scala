package io.sparklance.core.index

import scala.jdk.CollectionConverters._
import com.fasterxml.jackson.databind.ObjectMapper
import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.{Float4Vector, UInt4Vector, VectorSchemaRoot}
import org.apache.arrow.vector.complex.ListVector
import org.apache.arrow.vector.types.FloatingPointPrecision
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType, Schema}

import io.sparklance.core.{CorruptFileException, FileVersion}
import io.sparklance.core.file.{LanceFileReader, LanceFileWriter}
import io.sparklance.core.schema.ArrowSchemas
import io.sparklance.core.storage.Storage

/**
 * Writes HNSW graphs in Lance's layout (docs/dev/vector-index-format.md §1.3, §2.5): a build task writes one
 * partition's graph as a graph run ([[writeGraph]]): the rows `__vector_id: uint32`, `__neighbors: list<uint32>`,
 * `_distance: list<float32>`, level 0 first, each level's nodes ascending, and the partition's `lance:hnsw` entry in
 * its schema metadata. [[writeIndexFile]] concatenates the partitions' graph runs into `index.idx`.
 */
object HnswWriter {
  private val json = new ObjectMapper()
  private val U32 = new ArrowType.Int(32, false)
  private val F32 = new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)

  /** Levels of a graph by default, as pylance writes them (`max_level`). */
  val MaxLevel = 7

  private val schema: Schema = new Schema(Seq(
    new Field("__vector_id", FieldType.nullable(U32), null),
    new Field("__neighbors", FieldType.nullable(ArrowType.List.INSTANCE),
      java.util.Collections.singletonList(new Field("item", FieldType.nullable(U32), null))),
    new Field("_distance", FieldType.nullable(ArrowType.List.INSTANCE),
      java.util.Collections.singletonList(new Field("item", FieldType.nullable(F32), null)))).asJava)

  private def meta(values: Map[String, String]): Map[String, Array[Byte]] = values.map { case (k, v) => k -> v.getBytes("UTF-8") }

  /** A partition's `lance:hnsw` entry: entry point, build parameters, where each level's rows start. */
  def metadata(entryPoint: Int, m: Int, efConstruction: Int, maxLevel: Int, levelOffsets: Seq[Int]): String = {
    val node = json.createObjectNode().put("entry_point", entryPoint)
    node.putObject("params").put("max_level", maxLevel).put("m", m).put("ef_construction", efConstruction)
      .put("prefetch_distance", 2)
    val offsets = node.putArray("level_offsets")
    levelOffsets.foreach(o => offsets.add(o))
    json.writeValueAsString(node)
  }

  /** Writes the graph of `builder` (built with `m`, `efConstruction`, `maxLevel`) to `path`, in file format 2.2. */
  def writeGraph(storage: Storage, path: String, builder: HnswBuilder, m: Int, efConstruction: Int, maxLevel: Int,
      allocator: BufferAllocator): Unit = {
    val levels = (0 until maxLevel).map(builder.nodesOn)
    val offsets = levels.scanLeft(0)(_ + _.length)
    val root = VectorSchemaRoot.create(schema, allocator)
    try {
      val ids = root.getVector(0).asInstanceOf[UInt4Vector]
      val neighbors = root.getVector(1).asInstanceOf[ListVector]
      val distances = root.getVector(2).asInstanceOf[ListVector]
      val rows = offsets.last
      ids.allocateNew(rows)
      neighbors.allocateNew()
      distances.allocateNew()
      val nv = neighbors.getDataVector.asInstanceOf[UInt4Vector]
      val dv = distances.getDataVector.asInstanceOf[Float4Vector]
      var row = 0
      var at = 0
      levels.zipWithIndex.foreach { case (nodes, level) =>
        nodes.foreach { node =>
          val (ns, ds) = builder.neighbors(level, node)
          ids.setSafe(row, node)
          neighbors.startNewValue(row)
          distances.startNewValue(row)
          var i = 0
          while (i < ns.length) { nv.setSafe(at + i, ns(i)); dv.setSafe(at + i, ds(i)); i += 1 }
          at += ns.length
          neighbors.endValue(row, ns.length)
          distances.endValue(row, ns.length)
          row += 1
        }
      }
      ids.setValueCount(rows)
      nv.setValueCount(at)
      dv.setValueCount(at)
      neighbors.setValueCount(rows)
      distances.setValueCount(rows)
      root.setRowCount(rows)
      val entry = metadata(builder.entryPoint, m, efConstruction, maxLevel, offsets)
      val w = LanceFileWriter.create(storage, path,
        ArrowSchemas.fromArrow(schema).copy(metadata = meta(Map("lance:hnsw" -> entry))), FileVersion.V2_2)
      try {
        if (rows > 0) w.write(root)
        w.finish()
      } finally w.close()
    } finally root.close()
  }

  /**
   * Writes `index.idx` of an IVF_HNSW_* index under `dir` in file format `version`: every partition's graph run (in
   * partition order; `None` for an empty partition) concatenated, the IVF message with each partition's rows, the
   * centroids and the k-means loss, and the `lance:hnsw` array. Returns its size.
   */
  def writeIndexFile(storage: Storage, dir: String, model: IvfModel, indexType: String, graphs: Seq[Option[String]],
      version: FileVersion, allocator: BufferAllocator): Long = {
    val parts = model.numPartitions
    val lengths = new Array[Int](parts)
    val entries = new Array[String](parts)
    val index = json.createObjectNode().put("type", indexType).put("distance_type", model.distance.lanceName())
    val path = Storage.join(dir, IvfIndex.IndexFile)
    val readers = graphs.map(_.map(LanceFileReader.openImmutable(storage, _)))
    try {
      readers.zipWithIndex.foreach { case (r, p) =>
        entries(p) = r.fold("") { reader =>
          lengths(p) = reader.numRows.toInt
          reader.metadata.schema.metadata.get("lance:hnsw").map(new String(_, "UTF-8")).getOrElse(
            throw new CorruptFileException(reader.path, "the graph run has no 'lance:hnsw' metadata"))
        }
      }
      val metadata = Map("lance:index" -> json.writeValueAsString(index), "lance:ivf" -> "1",
        "lance:hnsw" -> json.writeValueAsString(entries.toSeq.asJava))
      val w = LanceFileWriter.create(storage, path, ArrowSchemas.fromArrow(schema).copy(metadata = meta(metadata)), version)
      try {
        readers.foreach(_.foreach { reader =>
          if (reader.numRows > 0) {
            val root = reader.read(reader.metadata.schema.fields, 0, reader.numRows, allocator)
            try w.write(root) finally root.close()
          }
        })
        val offsets = lengths.scanLeft(0L)(_ + _).take(parts)
        w.addGlobalBuffer(IvfWriter.ivfBuffer(offsets, lengths).setCentroidsTensor(
          model.stored.map(_.centroids).getOrElse(IvfWriter.tensor(model.centroids, parts, model.dim, model.element)))
          .setLoss(model.loss).build().toByteArray)
        w.finish()
      } finally w.close()
    } finally readers.foreach(_.foreach(_.close()))
  }
}
