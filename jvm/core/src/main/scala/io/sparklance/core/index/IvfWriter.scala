package io.sparklance.core.index

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.ObjectMapper
import com.google.protobuf.ByteString
import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.{FieldVector, UInt1Vector, UInt8Vector, VectorSchemaRoot}
import org.apache.arrow.vector.complex.FixedSizeListVector
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType, Schema}

import io.sparklance.core.{CorruptFileException, FileVersion}
import io.sparklance.core.file.{LanceFileReader, LanceFileWriter}
import io.sparklance.core.schema.ArrowSchemas
import io.sparklance.core.storage.Storage
import io.sparklance.proto.IndexProtos

/**
 * Writes the files of an IVF index segment in Lance's layout (docs/dev/vector-index-format.md §1–§2): each build
 * task writes a run, the rows of a slice of a fragment grouped by partition ([[writeRun]]), and [[merge]] writes
 * `auxiliary.idx` (every run's rows of partition 0, then of partition 1, ...) and `index.idx` (the centroids) from
 * them.
 *
 * A run is a Lance file of `_rowid: uint64` and `code: fixed_size_list<uint8>[width]` (each row's payload, as
 * [[IvfModel.encode]] writes it) whose global buffer 1 is an IVF message with the run's partition offsets and
 * lengths, as `auxiliary.idx` has.
 */
object IvfWriter {
  private val U64 = new ArrowType.Int(64, false)
  private val U8 = new ArrowType.Int(8, false)
  private val json = new ObjectMapper()

  private def listField(name: String, width: Int, item: ArrowType): Field =
    new Field(name, FieldType.notNullable(new ArrowType.FixedSizeList(width)),
      java.util.Collections.singletonList(new Field("item", FieldType.notNullable(item), null)))

  private def ids(name: String): Field = new Field(name, FieldType.notNullable(U64), null)

  private[index] def ivfBuffer(offsets: Array[Long], lengths: Array[Int]): IndexProtos.IVF.Builder = {
    val b = IndexProtos.IVF.newBuilder()
    offsets.foreach(o => b.addOffsets(o))
    lengths.foreach(l => b.addLengths(l))
    b
  }

  /**
   * Writes the run of `n` rows (their row ids, partitions, and payloads of `model.width` bytes each, in row order) to
   * `path`, grouped by partition, each partition's rows in the order given.
   */
  def writeRun(storage: Storage, path: String, model: IvfModel, rowIds: Array[Long], partitions: Array[Int],
      payload: Array[Byte], n: Int, allocator: BufferAllocator): Unit = {
    val parts = model.numPartitions
    val width = model.width
    val lengths = new Array[Int](parts)
    var i = 0
    while (i < n) { lengths(partitions(i)) += 1; i += 1 }
    val offsets = lengths.scanLeft(0L)(_ + _).take(parts)
    val next = offsets.map(_.toInt)
    val sortedIds = new Array[Long](n)
    val sortedPayload = new Array[Byte](n * width)
    i = 0
    while (i < n) {
      val at = next(partitions(i))
      next(partitions(i)) += 1
      sortedIds(at) = rowIds(i)
      System.arraycopy(payload, i * width, sortedPayload, at * width, width)
      i += 1
    }
    val schema = new Schema(Seq(ids("_rowid"), listField("code", width, U8)).asJava)
    val w = LanceFileWriter.create(storage, path, ArrowSchemas.fromArrow(schema), FileVersion.V2_2)
    try {
      if (n > 0) {
        val root = batch(schema, sortedIds, sortedPayload, n, width, allocator)
        try w.write(root) finally root.close()
      }
      w.addGlobalBuffer(ivfBuffer(offsets, lengths).build().toByteArray)
      w.finish()
    } finally w.close()
  }

  /** A batch of `rows` row ids and payloads of `width` bytes (uint8 codes, or vectors of the type the schema says). */
  private def batch(schema: Schema, rowIds: Array[Long], payload: Array[Byte], rows: Int, width: Int,
      allocator: BufferAllocator): VectorSchemaRoot = {
    val root = VectorSchemaRoot.create(schema, allocator)
    try {
      val idv = root.getVector(0).asInstanceOf[UInt8Vector]
      idv.allocateNew(rows)
      var i = 0
      while (i < rows) { idv.set(i, rowIds(i)); i += 1 }
      idv.setValueCount(rows)
      val list = root.getVector(1).asInstanceOf[FixedSizeListVector]
      list.setInitialCapacity(rows)
      list.allocateNew()
      val child = list.getDataVector.asInstanceOf[FieldVector]
      val values = rows.toLong * list.getListSize
      child.setInitialCapacity(values.toInt)
      child.allocateNew()
      child.getDataBuffer.setBytes(0, payload, 0, rows.toLong * width)
      child.getValidityBuffer.setOne(0, (values + 7) / 8)
      child.setValueCount(values.toInt)
      list.getValidityBuffer.setOne(0, (rows + 7L) / 8)
      list.setValueCount(rows)
      root.setRowCount(rows)
      root
    } catch { case NonFatal(e) => root.close(); throw e }
  }

  /** A run being merged: its reader and where each partition's rows are. */
  private final class Run(val reader: LanceFileReader, val offsets: Array[Long], val lengths: Array[Int])

  private def openRun(storage: Storage, path: String, parts: Int): Run = {
    val reader = LanceFileReader.openImmutable(storage, path)
    try {
      val ivf = IndexProtos.IVF.parseFrom(reader.globalBuffer(1))
      val lengths = ivf.getLengthsList.asScala.map(_.intValue).toArray
      val offsets = ivf.getOffsetsList.asScala.map(_.longValue).toArray
      if (lengths.length != parts || offsets.length != parts || lengths.zip(offsets).exists { case (l, o) => l < 0 || o + l > reader.numRows }) {
        throw new CorruptFileException(path, s"its partitions do not fit the $parts partitions of the index being built")
      }
      new Run(reader, offsets, lengths)
    } catch { case NonFatal(e) => reader.close(); throw e }
  }

  /**
   * Partition `p`'s rows in the runs, in the order [[merge]] writes them (run by run): their row ids and payloads of
   * `model.width` bytes.
   */
  def readPartition(storage: Storage, runs: Seq[String], p: Int, model: IvfModel,
      allocator: BufferAllocator): (Array[Long], Array[Byte]) = {
    val opened = scala.collection.mutable.ArrayBuffer.empty[Run]
    try {
      runs.foreach(r => opened += openRun(storage, r, model.numPartitions))
      partitionRows(opened.toSeq, p, model.width, allocator)
    } finally opened.foreach(_.reader.close())
  }

  private def partitionRows(opened: Seq[Run], p: Int, width: Int, allocator: BufferAllocator): (Array[Long], Array[Byte]) = {
    val n = opened.map(_.lengths(p)).sum
    val rowIds = new Array[Long](n)
    val payload = new Array[Byte](n * width)
    var at = 0
    opened.foreach { run =>
      val len = run.lengths(p)
      if (len > 0) {
        val fields = run.reader.metadata.schema.fields
        val root = run.reader.read(fields, run.offsets(p), run.offsets(p) + len, allocator)
        try {
          val idv = root.getVector(0).asInstanceOf[UInt8Vector]
          var i = 0
          while (i < len) { rowIds(at + i) = idv.get(i); i += 1 }
          val codes = root.getVector(1).asInstanceOf[FixedSizeListVector].getDataVector.asInstanceOf[UInt1Vector]
          codes.getDataBuffer.getBytes(0, payload, at * width, len * width)
        } finally root.close()
        at += len
      }
    }
    (rowIds, payload)
  }

  /**
   * Writes `auxiliary.idx` and `index.idx` of `model` under `dir` from the runs, in file format `version` (the
   * table's, §1.1); the files written with their sizes, `auxiliary.idx` first (as the manifest lists them, §3).
   * `carried` gives more rows of each partition, in a run's form (an old segment's, when an index is optimized:
   * [[IvfIndex.payloadRows]]), written before the runs' rows.
   */
  def merge(storage: Storage, runs: Seq[String], carried: Seq[Int => (Array[Long], Array[Byte])], dir: String,
      model: IvfModel, version: FileVersion, allocator: BufferAllocator): Seq[(String, Long)] =
    mergeWith(storage, runs, carried, dir, model, version, allocator)(writeIndexFile(storage, dir, model, version))

  /** [[merge]] with `index.idx` written by `indexFile` (which returns its size), after `auxiliary.idx`. */
  def mergeWith(storage: Storage, runs: Seq[String], carried: Seq[Int => (Array[Long], Array[Byte])], dir: String,
      model: IvfModel, version: FileVersion, allocator: BufferAllocator)(indexFile: => Long): Seq[(String, Long)] = {
    val parts = model.numPartitions
    val width = model.width
    val opened = scala.collection.mutable.ArrayBuffer.empty[Run]
    try {
      runs.foreach(r => opened += openRun(storage, r, parts))
      val (column, item, listSize) = model.indexType match {
        case "IVF_FLAT" => ("flat", model.element.arrowType, model.dim)
        case "IVF_PQ" => ("__pq_code", U8, model.width)
        case _ => ("__sq_code", U8, model.dim)
      }
      val schema = new Schema(Seq(ids("_rowid"), listField(column, listSize, item)).asJava)
      val auxPath = Storage.join(dir, IvfIndex.AuxiliaryFile)
      val meta = Map("distance_type" -> model.distance.lanceName(), "lance:ivf" -> "1",
        "storage_metadata" -> json.writeValueAsString(java.util.Collections.singletonList(storageMetadata(model))))
      val aux = LanceFileWriter.create(storage, auxPath,
        ArrowSchemas.fromArrow(schema).copy(metadata = meta.map { case (k, v) => k -> v.getBytes("UTF-8") }), version)
      val lengths = new Array[Int](parts)
      val auxSize = try {
        var p = 0
        while (p < parts) {
          val (rowIds, payload) = if (carried.isEmpty) partitionRows(opened.toSeq, p, width, allocator) else {
            val parts = carried.map(_(p)) :+ partitionRows(opened.toSeq, p, width, allocator)
            (Array.concat(parts.map(_._1): _*), Array.concat(parts.map(_._2): _*))
          }
          val n = rowIds.length
          lengths(p) = n
          if (n > 0) {
            val stored = if (model.indexType == "IVF_PQ") transpose(payload, n, width) else payload
            val root = batch(schema, rowIds, stored, n, width, allocator)
            try aux.write(root) finally root.close()
          }
          p += 1
        }
        val offsets = lengths.scanLeft(0L)(_ + _).take(parts)
        aux.addGlobalBuffer(ivfBuffer(offsets, lengths).build().toByteArray)
        if (model.indexType == "IVF_PQ") {
          aux.addGlobalBuffer(model.stored.flatMap(_.codebook)
            .getOrElse(tensor(model.codebook, model.codewords, model.dim, model.element)).toByteArray)
        }
        aux.finish()
      } finally aux.close()
      Seq(IvfIndex.AuxiliaryFile -> auxSize, IvfIndex.IndexFile -> indexFile)
    } finally opened.foreach(_.reader.close())
  }

  /**
   * The PQ codes of a partition's `n` rows of `m` bytes, column-major (`[m][n]`), as pylance stores them with
   * `"transposed": true` (§2.3); for 4-bit codes the bytes (two codes each) are transposed, not the codes.
   */
  def transpose(codes: Array[Byte], n: Int, m: Int): Array[Byte] = {
    val out = new Array[Byte](codes.length)
    var i = 0
    while (i < n) {
      var b = 0
      while (b < m) { out(b * n + i) = codes(i * m + b); b += 1 }
      i += 1
    }
    out
  }

  /** The quantizer's metadata, the one element of `storage_metadata` (§1.4). */
  private def storageMetadata(model: IvfModel): String = {
    val node = json.createObjectNode()
    model.indexType match {
      case "IVF_FLAT" => node.put("dim", model.dim)
      case "IVF_PQ" =>
        node.put("codebook_position", 2).put("nbits", model.numBits).put("num_sub_vectors", model.numSubVectors)
          .put("dimension", model.dim)
        node.putArray("codebook_tensor")
        node.put("transposed", true)
      case _ =>
        node.put("dim", model.dim).put("num_bits", 8)
        node.putObject("bounds").put("start", model.sqStart).put("end", model.sqEnd)
    }
    json.writeValueAsString(node)
  }

  /** A `[rows][cols]` tensor of `values` stored in `element`, the column's type (as pylance stores centroids, codebooks). */
  private[index] def tensor(values: Array[Float], rows: Int, cols: Int, element: VectorElement): IndexProtos.Tensor = {
    val bytes = new Array[Byte](values.length * element.bytes)
    var i = 0
    while (i < values.length) { element.put(values(i), bytes, i * element.bytes); i += 1 }
    IndexProtos.Tensor.newBuilder().setDataType(element.tensorType).addShape(rows).addShape(cols)
      .setData(ByteString.copyFrom(bytes)).build()
  }

  /**
   * `index.idx` of an IVF index with the FLAT sub-index (§1.3): no rows, the index type and distance, and the IVF
   * message with the centroids and the k-means loss. Returns its size.
   */
  private def writeIndexFile(storage: Storage, dir: String, model: IvfModel, version: FileVersion): Long = {
    val parts = model.numPartitions
    val schema = new Schema(Seq(ids("__flat_marker")).asJava)
    val index = json.createObjectNode().put("type", model.indexType).put("distance_type", model.distance.lanceName())
    val meta = Map("lance:index" -> json.writeValueAsString(index), "lance:ivf" -> "1",
      "lance:flat" -> json.writeValueAsString(java.util.Collections.nCopies(parts, "")))
    val w = LanceFileWriter.create(storage, Storage.join(dir, IvfIndex.IndexFile),
      ArrowSchemas.fromArrow(schema).copy(metadata = meta.map { case (k, v) => k -> v.getBytes("UTF-8") }), version)
    try {
      w.addGlobalBuffer(ivfBuffer(new Array[Long](parts), new Array[Int](parts))
        .setCentroidsTensor(model.stored.map(_.centroids).getOrElse(tensor(model.centroids, parts, model.dim, model.element))).setLoss(model.loss).build().toByteArray)
      w.finish()
    } finally w.close()
  }
}
