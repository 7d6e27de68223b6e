package io.sparklance.core.scan

import java.io.Closeable

import scala.collection.mutable
import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.{BigIntVector, BitVectorHelper, FieldVector, VectorSchemaRoot}
import org.apache.arrow.vector.complex.StructVector
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType}

import io.sparklance.core.{MetadataColumn, UnsupportedFeatureException}
import io.sparklance.core.file.{ArrowAssembler, LanceFileReader}
import io.sparklance.core.format.{DataFile, DeletionVector, Fragment, RowIdSequence, TableLayout}
import io.sparklance.core.schema.{BlobColumns, LanceField, LogicalType}
import io.sparklance.core.storage.Storage

/**
 * Reads rows of one fragment for a projection of the table schema: each field from the data file that holds it
 * (a fragment's columns may be spread over several files after schema evolution), fields no file holds as nulls,
 * deleted rows skipped, and the metadata columns asked for appended.
 *
 * Rows are addressed by physical offset in the fragment; a read of [from, to) returns the live rows among them.
 * Not thread safe; one reader per task, closed by the task.
 */
final class FragmentReader(
    storage: Storage,
    layout: TableLayout,
    fragment: Fragment,
    projection: Seq[LanceField],
    metadataColumns: Seq[MetadataColumn],
    deletions: DeletionVector,
    rowIds: Option[RowIdSequence]) extends Closeable {

  private val readers = mutable.HashMap.empty[String, LanceFileReader]
  // The Arrow field of each projected field (by id and the children kept: a blob v2 column may be read in parts,
  // BlobColumns.view), built once rather than per batch.
  private val targets = mutable.HashMap.empty[(Int, Seq[String]), Field]

  /** The reader of a data file, which must hold as many rows as the manifest says the fragment has. */
  private def reader(file: DataFile): LanceFileReader = {
    val path = layout.dataFilePath(file)
    readers.getOrElseUpdate(path, {
      val r = LanceFileReader.openImmutable(storage, path, file.fileSizeBytes.getOrElse(-1L))
      if (r.numRows != fragment.physicalRows) {
        r.close()
        throw new io.sparklance.core.CorruptFileException(path, s"it holds ${r.numRows} rows, but the manifest of " +
          s"version ${layout.version} says fragment ${fragment.id} has ${fragment.physicalRows}")
      }
      r
    })
  }

  /** Live rows among physical offsets [from, to), as a new root owned by the caller. */
  def read(from: Long, to: Long, allocator: BufferAllocator): VectorSchemaRoot =
    read(from, to, allocator, projection, withMetadata = true)

  /**
   * Live rows among [from, to) of some of the projected fields (in the order given), followed by the metadata
   * columns if asked for: a caller can read the columns a filter needs first, and the others only for the rows it
   * keeps. The rows are those of every other read of the same range.
   */
  def read(from: Long, to: Long, allocator: BufferAllocator, fields: Seq[LanceField], withMetadata: Boolean): VectorSchemaRoot = {
    require(from >= 0 && to >= from && to <= fragment.physicalRows, s"rows [$from, $to) of fragment ${fragment.id}")
    readLive(from, to, deletions.liveOffsets(from, to), allocator, fields, withMetadata)
  }

  // Per field read as codes: the dictionary object of the last read and the vector of its values made from it.
  private val codedValues = mutable.HashMap.empty[Int, (AnyRef, FieldVector, Long)]

  /**
   * Live rows among physical offsets [from, to) of projected field `f` as positions in a vector of its distinct
   * values ([[CodedColumn]]), when the field is one leaf column of one data file whose pages there are all
   * dictionary-encoded; None otherwise. The vector belongs to this reader and lives until the next call for the
   * field or `close`; rows read from it are those `read` returns.
   */
  def codes(f: LanceField, from: Long, to: Long, allocator: BufferAllocator): Option[CodedColumn] = {
    require(from >= 0 && to >= from && to <= fragment.physicalRows, s"rows [$from, $to) of fragment ${fragment.id}")
    filesHolding(f) match {
      case Seq(file) if !isBlobV2(f) && holdsAll(file, f) =>
        val r = reader(file)
        r.metadata.schema.field(f.id).flatMap(ff => r.dictionaryCodes(prune(ff, f, r.path), from, to)).flatMap { c =>
          val target = targets.getOrElseUpdate((f.id, f.children.map(_.name)), LanceFileReader.readField(f))
          val nullSlot = c.items.numValues
          val live = deletions.liveOffsets(from, to)
          val ids = live match {
            case None => c.ids
            case Some(rows) =>
              val out = new Array[Int](rows.length)
              var i = 0
              while (i < rows.length) { out(i) = c.ids((rows(i) - from).toInt); i += 1 }
              out
          }
          var nulls = false
          var i = 0
          while (i < ids.length) { if (ids(i) < 0) { ids(i) = nullSlot; nulls = true }; i += 1 }
          if (nulls && !target.isNullable) None
          else {
            val (values, serial) = codedValues.get(f.id) match {
              case Some((d, v, s)) if d eq c.dictionary => (v, s)
              case previous =>
                previous.foreach(_._2.close())
                codedValues.remove(f.id)
                val v = dictionaryValues(target, c, allocator)
                val s = CodedColumn.nextSerial()
                codedValues(f.id) = (c.dictionary, v, s)
                (v, s)
            }
            Some(new CodedColumn(values, nullSlot, ids, serial))
          }
        }
      case _ => None
    }
  }

  /** The items of `c` in a vector of type `target`, and a null after them. */
  private def dictionaryValues(target: Field, c: io.sparklance.core.file.DictionaryCodes, allocator: BufferAllocator): FieldVector = {
    val v = target.createVector(allocator)
    try {
      ArrowAssembler.fillLeafValues(v, c.items, null)
      val n = c.items.numValues
      v match {
        case f: org.apache.arrow.vector.BaseFixedWidthVector => f.setNull(n)
        case w: org.apache.arrow.vector.BaseVariableWidthVector => w.setNull(n)
        case w: org.apache.arrow.vector.BaseLargeVariableWidthVector => w.setNull(n)
        case other => throw new IllegalStateException(s"dictionary values in a ${other.getClass.getSimpleName}")
      }
      v.setValueCount(n + 1)
      v
    } catch { case NonFatal(e) => v.close(); throw e }
  }

  /** The live rows among physical offsets `offsets` of the whole projection, then the metadata columns. */
  def readRows(offsets: Array[Long], allocator: BufferAllocator): VectorSchemaRoot = readRows(offsets, allocator, projection)

  /**
   * The rows at the given physical offsets of some of the projected fields (in the order given), followed by the
   * metadata columns: a read of rows chosen elsewhere (by a filter on other columns, by an index). The offsets
   * must be ascending and distinct, within the fragment; deleted rows among them are skipped, so the result holds
   * the live ones, in order, and `_rowaddr` (or `_rowid`) says which each is. Pages are read only where they hold
   * the rows (on storage that does not coalesce requests, only the chunks that hold them).
   */
  def readRows(offsets: Array[Long], allocator: BufferAllocator, fields: Seq[LanceField]): VectorSchemaRoot = {
    var i = 0
    while (i < offsets.length) {
      val o = offsets(i)
      if (o < 0 || o >= fragment.physicalRows || (i > 0 && o <= offsets(i - 1))) {
        throw new IllegalArgumentException(s"row offsets of fragment ${fragment.id} (${fragment.physicalRows} rows) must " +
          s"be ascending, distinct and within it: offset $o at position $i")
      }
      i += 1
    }
    val live = if (deletions.isEmpty) offsets else offsets.filter(o => !deletions.contains(o.toInt))
    val (from, to) = if (live.isEmpty) (0L, 0L) else (live.head, live.last + 1)
    readLive(from, to, Some(live), allocator, fields, withMetadata = true)
  }

  /** Rows `live` (all of [from, to) when None) of `fields`, then the metadata columns if asked for. */
  private def readLive(from: Long, to: Long, live: Option[Array[Long]], allocator: BufferAllocator, fields: Seq[LanceField],
      withMetadata: Boolean): VectorSchemaRoot = {
    val count = live.map(_.length).getOrElse((to - from).toInt)
    val vectors = mutable.ArrayBuffer.empty[FieldVector]
    try {
      prefetch(fields, from, to, live)
      fields.foreach(f => vectors += readField(f, from, to, live, count, allocator))
      (if (withMetadata) metadataColumns else Nil).foreach { m =>
        val v = new BigIntVector(FragmentReader.arrowField(m), allocator)
        vectors += v
        v.allocateNew(count)
        fillMetadata(m, v, from, live.orNull, count)
        v.setValueCount(count)
      }
      new VectorSchemaRoot(vectors.map(_.getField).asJava, vectors.asJava, count)
    } catch {
      case NonFatal(e) => vectors.foreach(_.close()); throw e
    }
  }

  /**
   * Lets each data file fetch the pages of all the projected fields it holds at once (fields are then read one by
   * one): on an object store, one request for a batch's pages instead of one per page.
   */
  private def prefetch(fields: Seq[LanceField], from: Long, to: Long, live: Option[Array[Long]]): Unit = {
    val plan = prefetchPlans.getOrElseUpdate(fields.map(_.id), planPrefetch(fields))
    if (plan.isEmpty) return
    val (lo, hi) = live match {
      case Some(rows) if rows.nonEmpty => (rows.head, rows.last + 1)
      case Some(_) => return
      case None => (from, to)
    }
    plan.foreach { case (r, fileFields) => r.prefetch(fileFields, lo, hi) }
  }

  // Per set of fields read, the files that coalesce reads (object stores) with the file fields each holds; empty on
  // local disk. Kept for the reader's life: the plan depends only on the fields and the fragment's files.
  private val prefetchPlans = mutable.HashMap.empty[Seq[Int], Seq[(LanceFileReader, Seq[LanceField])]]

  private def planPrefetch(fields: Seq[LanceField]): Seq[(LanceFileReader, Seq[LanceField])] =
    fields.filterNot(isBlobV2).flatMap(f => filesHolding(f) match {
      case Seq(file) if holdsAll(file, f) => Some(file -> f)
      case _ => None
    }).groupBy(_._1).toSeq.map { case (file, held) =>
      val r = reader(file)
      r -> held.flatMap { case (_, f) => r.metadata.schema.field(f.id).map(prune(_, f, r.path)) }
    }.filter(_._1.coalesces)

  /** The data files holding some of a field's ids (live, not tombstoned), in fragment order. */
  private def filesHolding(f: LanceField): Seq[DataFile] = {
    val ids = f.flatten.map(_.id).toSet
    fragment.files.filter(_.liveFields.exists(ids.contains))
  }

  private def readField(f: LanceField, from: Long, to: Long, live: Option[Array[Long]], count: Int,
      allocator: BufferAllocator): FieldVector = {
    val target = targets.getOrElseUpdate((f.id, f.children.map(_.name)), LanceFileReader.readField(f))
    filesHolding(f) match {
      case Seq() => nulls(target, count, allocator)
      case Seq(file) if isBlobV2(f) => blobV2(reader(file), f, target, from, to, live, count, allocator)
      case Seq(file) if holdsAll(file, f) =>
        val r = reader(file)
        val fileField = prune(r.metadata.schema.field(f.id).getOrElse(throw new io.sparklance.core.CorruptFileException(
          r.path, s"the file has no field with id ${f.id} ('${f.name}'), which the manifest says it holds")), f, r.path)
        val root = live match {
          case None => r.read(Seq(fileField), from, to, allocator)
          case Some(rows) => r.take(Seq(fileField), rows, allocator)
        }
        try {
          val out = FragmentReader.moveTo(root.getVector(0), target, allocator)
          val unmasked = ArrowAssembler.unmaskedNull(out, null)
          if (unmasked != null) {
            out.close()
            throw new io.sparklance.core.CorruptFileException(r.path, s"field '$unmasked' holds nulls, but the table " +
              "schema declares it not nullable")
          }
          out
        } finally root.close()
      case several if f.logicalType == LogicalType.Struct && !f.isPacked =>
        // A struct whose children are not all in one file (children added later, in files of their own or in
        // none): each child from where it is, and the struct's own nulls from the first file that holds it.
        val out = target.createVector(allocator).asInstanceOf[StructVector]
        try {
          out.allocateNew()
          out.getChildrenFromFields.asScala.zip(f.children).foreach { case (cv, cf) =>
            val child = readField(cf, from, to, live, count, allocator)
            try child.makeTransferPair(cv).transfer() finally child.close()
          }
          structNulls(several.head, f, from, to, live, allocator) match {
            case Some(valid) =>
              try { (0 until count).foreach(i => if (valid.isNull(i)) out.setNull(i) else out.setIndexDefined(i)) }
              finally valid.close()
            case None => (0 until count).foreach(out.setIndexDefined)
          }
          out.setValueCount(count)
          out
        } catch { case NonFatal(e) => out.close(); throw e }
      case Seq(file) if missingItem(file, f).isDefined =>
        val item = missingItem(file, f).get
        throw new io.sparklance.core.CorruptFileException(layout.dataFilePath(file), s"the manifest of version " +
          s"${layout.version} lists field '${f.name}' (id ${f.id}) in it but not its child '${item.name}' (id " +
          s"${item.id}), and no other data file of fragment ${fragment.id} holds that child: the items of a list, " +
          "map or fixed-size list are stored with it")
      case several =>
        throw new UnsupportedFeatureException(s"Cannot read field '${f.name}' of fragment ${fragment.id} of table " +
          s"${layout.root}: its values are spread over ${several.size} data files (" +
          s"${several.map(_.path).mkString(", ")}), which this version of sparklance does not support for this type. " +
          "Compact the table with pylance to rewrite it.")
    }
  }

  /**
   * The struct `f` as the file stores it, with only the first of the children the file holds: its validity is
   * the struct's (in 2.1 and later it lives in the levels of every child column, so any one child carries it).
   * None when the file does not store the struct itself.
   */
  private def structNulls(file: DataFile, f: LanceField, from: Long, to: Long, live: Option[Array[Long]],
      allocator: BufferAllocator): Option[FieldVector] = {
    val r = reader(file)
    r.metadata.schema.field(f.id).filter(_.children.nonEmpty).map { stored =>
      val one = stored.copy(children = stored.children.take(1))
      val root = live match {
        case None => r.read(Seq(one), from, to, allocator)
        case Some(rows) => r.take(Seq(one), rows, allocator)
      }
      val v = root.getVector(0)
      val out = v.getField.createVector(allocator)
      v.makeTransferPair(out).transfer()
      root.close()
      out
    }
  }

  private def isBlobV2(f: LanceField): Boolean = f.isBlobV2

  /**
   * A blob v2 column (file version 2.2), whose table type is a struct of `data: large_binary`, `uri: string` and,
   * in tables pylance 14 makes with `lance.blob_field`, `position: uint64` and `size: uint64`: the file stores a
   * descriptor per row (kind, position, size, blob id, uri). Each child the projection keeps is filled by name:
   * `data` with the blob's bytes (read from the data file, a sidecar or the external uri only when `data` is
   * projected), `uri` with the descriptor's uri (null when empty), `position` and `size` with where the bytes are
   * in the object that holds them and their length. Null blobs are null. A projection with a `kind` child
   * ([[BlobColumns.descriptors]]) reads the descriptors as stored: `kind`, `position`, `size`, `blob_id` and
   * `blob_uri` (empty for blobs that are not external), external blobs included.
   */
  private def blobV2(r: LanceFileReader, f: LanceField, target: Field, from: Long, to: Long, live: Option[Array[Long]],
      count: Int, allocator: BufferAllocator): FieldVector = {
    val fileField = r.metadata.schema.field(f.id).getOrElse(throw new io.sparklance.core.CorruptFileException(
      r.path, s"the file has no field with id ${f.id} ('${f.name}'), which the manifest says it holds"))
    val root = live match {
      case None => r.read(Seq(fileField), from, to, allocator)
      case Some(rows) => r.take(Seq(fileField), rows, allocator)
    }
    try {
      val d = root.getVector(0).asInstanceOf[StructVector]
      def child(name: String) = Option(d.getChild(name)).getOrElse(throw new io.sparklance.core.CorruptFileException(
        r.path, s"blob column '${f.name}' has no descriptor field '$name'"))
      val (kind, position, size, blobId, uri) = (child("kind"), child("position"), child("size"), child("blob_id"), child("blob_uri"))
      def num(v: FieldVector, i: Int): Long = v.getObject(i).asInstanceOf[Number].longValue()
      def uriOf(i: Int): String = Option(uri.getObject(i)).map(_.toString).getOrElse("")
      val out = target.createVector(allocator).asInstanceOf[StructVector]
      val asStored = out.getChild(BlobColumns.Kind) != null
      try {
        out.allocateNew()
        var i = 0
        while (i < count) {
          if (d.isNull(i)) out.setNull(i) else out.setIndexDefined(i)
          i += 1
        }
        out.getChildrenFromFields.asScala.foreach { c =>
          i = 0
          while (i < count) {
            if (d.isNull(i)) c.setNull(i)
            else (c, c.getName) match {
              case (v: org.apache.arrow.vector.LargeVarBinaryVector, "data") =>
                v.setSafe(i, r.blobBytes(num(kind, i).toInt, num(position, i), num(size, i), num(blobId, i), uriOf(i)))
              case (v: org.apache.arrow.vector.BaseVariableWidthVector, "uri") =>
                val u = uriOf(i)
                if (u.isEmpty) v.setNull(i) else v.setSafe(i, u.getBytes(java.nio.charset.StandardCharsets.UTF_8))
              // An external blob's descriptor says nothing of the object's size (pylance leaves 0 for a whole
              // object): refused as its bytes are, never a made-up size.
              case (v: org.apache.arrow.vector.UInt1Vector, BlobColumns.Kind) => v.setSafe(i, num(kind, i).toInt)
              case (v: org.apache.arrow.vector.UInt4Vector, "blob_id") => v.setSafe(i, num(blobId, i).toInt)
              case (v: org.apache.arrow.vector.VarCharVector, "blob_uri") =>
                v.setSafe(i, uriOf(i).getBytes(java.nio.charset.StandardCharsets.UTF_8))
              case (_: org.apache.arrow.vector.UInt8Vector, part) if !asStored && uriOf(i).nonEmpty =>
                throw new UnsupportedFeatureException(s"Cannot read the $part of a blob of blob column '${f.name}' " +
                  s"in ${r.path}: it lives at the external URI ${uriOf(i)}, which this version of sparklance does " +
                  "not fetch. Leave the column out, or filter out rows whose blobs are external.")
              case (v: org.apache.arrow.vector.UInt8Vector, "position") => v.setSafe(i, num(position, i))
              case (v: org.apache.arrow.vector.UInt8Vector, "size") => v.setSafe(i, num(size, i))
              case (v, name) => throw new UnsupportedFeatureException(s"Cannot read field '$name' " +
                s"(${v.getField.getType}) of blob column '${f.name}' in ${r.path}: blob v2 columns have data " +
                "(large_binary), uri (string), position and size (uint64), and descriptors of kind (uint8), " +
                "position, size (uint64), blob_id (uint32) and blob_uri (string).")
            }
            i += 1
          }
          c.setValueCount(count)
        }
        out.setValueCount(count)
        out
      } catch { case NonFatal(e) => out.close(); throw e }
    } finally root.close()
  }

  /** A leaf of `f` that `file` lacks although it holds the leaf's parent, a field that is not a struct (a list's items). */
  private def missingItem(file: DataFile, f: LanceField): Option[LanceField] = {
    val have = file.liveFields.toSet
    f.flatten.filter(p => p.logicalType != LogicalType.Struct && have.contains(p.id))
      .flatMap(_.children).find(c => !have.contains(c.id) && LanceFileReader.leavesOf(c).forall(l => !have.contains(l.id)))
  }

  private def holdsAll(file: DataFile, f: LanceField): Boolean = {
    val have = file.liveFields.toSet
    // The ids every file version lists for a field: its leaf columns (2.0 files list parents too).
    val leaves = LanceFileReader.leavesOf(f)
    (if (leaves.isEmpty) Seq(f.id) else leaves.map(_.id)).forall(have.contains)
  }

  /**
   * The file's field pruned to the children the projection kept (matched by id) and named as in the table schema:
   * a field renamed since the file was written is read under its new name (vectors are moved by name).
   */
  private def prune(fileField: LanceField, wanted: LanceField, path: String): LanceField =
    if (fileField.logicalType != LogicalType.Struct || fileField.isPacked) fileField.copy(name = wanted.name)
    else {
      // Called for files that hold every leaf of `wanted` (the manifest says so): a child the file's schema lacks
      // means the two disagree, and reading on would return the child as nulls.
      wanted.children.find(w => !fileField.children.exists(_.id == w.id)).foreach { w =>
        throw new io.sparklance.core.CorruptFileException(path, s"its schema has no field with id ${w.id} " +
          s"('${wanted.name}.${w.name}'), which the table's manifest says the file holds")
      }
      val keep = wanted.children.map(_.id).toSet
      fileField.copy(name = wanted.name, children = fileField.children.filter(c => keep.contains(c.id)).map { c =>
        prune(c, wanted.children.find(_.id == c.id).get, path)
      })
    }

  private def nulls(target: Field, count: Int, allocator: BufferAllocator): FieldVector = {
    val v = target.createVector(allocator)
    v.setInitialCapacity(count)
    v.allocateNew()
    v.setValueCount(count)
    v
  }

  /**
   * Sets rows [0, count) of `v` (allocated for them) to column `m` at offsets `live` (or, when null, the offsets
   * from `from`): values written straight to its data buffer, one loop per case, and the validity set by bytes.
   */
  private def fillMetadata(m: MetadataColumn, v: BigIntVector, from: Long, live: Array[Long], count: Int): Unit = {
    val high = fragment.id << 32
    val ids: RowIdSequence = if (m == MetadataColumn.RowId) rowIds.orNull else null
    val data = v.getDataBuffer
    var i = 0
    if (m == MetadataColumn.FragmentId) {
      while (i < count) { data.setLong(8L * i, fragment.id); i += 1 }
    } else if (ids != null) {
      while (i < count) { data.setLong(8L * i, ids(if (live == null) (from + i).toInt else live(i).toInt)); i += 1 }
    } else if (live == null) {
      while (i < count) { data.setLong(8L * i, high | (from + i)); i += 1 }
    } else {
      while (i < count) { data.setLong(8L * i, high | live(i)); i += 1 }
    }
    val validity = v.getValidityBuffer
    validity.setOne(0L, count / 8L)
    i = count & ~7
    while (i < count) { BitVectorHelper.setBit(validity, i); i += 1 }
  }

  override def close(): Unit = {
    codedValues.values.foreach(_._2.close())
    codedValues.clear()
    readers.values.foreach(r => try r.close() catch { case NonFatal(_) => () })
    readers.clear()
  }
}

object FragmentReader {
  /**
   * `v` moved into a new vector of `target`'s shape. A packed struct is read whole (its children share one column),
   * so the children a projection left out are dropped here, in structs at any depth; other vectors move as they are.
   */
  private[scan] def moveTo(v: FieldVector, target: Field, allocator: BufferAllocator): FieldVector = v match {
    case s: StructVector if narrower(s, target) =>
      val out = target.createVector(allocator).asInstanceOf[StructVector]
      try {
        val n = s.getValueCount
        out.setInitialCapacity(n)
        out.allocateNew()
        target.getChildren.asScala.foreach { t =>
          val from = Option(s.getChild(t.getName)).getOrElse(throw new UnsupportedFeatureException(s"Cannot read " +
            s"field '${t.getName}' of struct '${target.getName}': the data file's struct has no child of that name " +
            s"(it has ${s.getChildrenFromFields.asScala.map(_.getName).mkString(", ")})."))
          val moved = moveTo(from, t, allocator)
          try moved.makeTransferPair(out.getChild(t.getName)).transfer() finally moved.close()
        }
        (0 until n).foreach(i => if (s.isNull(i)) out.setNull(i) else out.setIndexDefined(i))
        out.setValueCount(n)
        out
      } catch { case NonFatal(e) => out.close(); throw e }
    case _ =>
      val out = target.createVector(allocator)
      v.makeTransferPair(out).transfer()
      out
  }

  /** Whether struct `s` holds children `target` (a struct) does not want, at any depth of structs. */
  private def narrower(s: StructVector, target: Field): Boolean = {
    val children = s.getChildrenFromFields.asScala
    children.size > target.getChildren.size || children.exists {
      case c: StructVector => target.getChildren.asScala.find(_.getName == c.getName).exists(narrower(c, _))
      case _ => false
    }
  }

  /** The Arrow field of a metadata column: a non-null signed 64-bit integer. */
  def arrowField(m: MetadataColumn): Field = new Field(m.name, new FieldType(false, new ArrowType.Int(64, true), null), null)

}
