package io.sparklance.core.namespace

import java.nio.charset.StandardCharsets.UTF_8

import scala.jdk.CollectionConverters._

import org.apache.arrow.memory.{BufferAllocator, RootAllocator}
import org.apache.arrow.vector.{VarCharVector, VectorSchemaRoot}
import org.apache.arrow.vector.complex.ListVector
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType, Schema}

import io.sparklance.core.{CommitConflictException, FileVersion, InconsistentTableException, UnsupportedFeatureException}
import io.sparklance.core.schema.{ArrowSchemas, LanceSchema}
import io.sparklance.core.table.{Snapshot, Table}

/**
 * The `__manifest` table of a directory namespace (docs/dev/namespaces.md): one row per namespace and table, with
 * columns `object_id` (the names joined by `$`), `object_type` (`namespace` or `table`), `location` (a table's
 * directory, relative to the root), `metadata` (a namespace's properties as a JSON object) and `base_objects` (the
 * objects a view is built on; kept as read). pylance 14 commits every change as an Overwrite of all rows in one
 * data file, and so does this class, each commit only on top of the version it read: a change made from rows that
 * another writer replaced meanwhile is computed again from the new rows, never rebased (an Overwrite rebased over
 * another would drop that writer's rows).
 */
private[namespace] final class ManifestTable(table: Table) {
  import ManifestTable._

  /**
   * The rows last read, and the version they are of: a version never changes, so listing the same latest version
   * again needs no read of its data (the commit's transaction file name and time tell a table made again apart).
   */
  @volatile private var lastRead: Option[(VersionKey, IndexedSeq[Entry])] = None

  /** The rows of the latest version (none if the table does not exist yet). */
  def entries(): IndexedSeq[Entry] = table.latestIfExists().map(rowsOf).getOrElse(IndexedSeq.empty)

  private def rowsOf(snapshot: Snapshot): IndexedSeq[Entry] = {
    val key = VersionKey(snapshot.version, snapshot.manifest.transactionFile, snapshot.timestamp)
    lastRead.collect { case (k, rows) if k == key => rows }.getOrElse {
      val rows = read(snapshot)
      lastRead = Some(key -> rows)
      rows
    }
  }

  /**
   * Replaces the rows with what `change` makes of the latest ones, committed as the version after the one read;
   * when another writer commits first, reads again and applies `change` again, up to `attempts` times. `change`
   * may throw to refuse (e.g. a name taken meanwhile). Nothing is committed when it returns the rows unchanged.
   */
  def update(attempts: Int)(change: IndexedSeq[Entry] => IndexedSeq[Entry]): Unit = {
    var left = attempts
    var done = false
    while (!done) {
      val snapshot = table.latestIfExists()
      val before = snapshot.map(rowsOf).getOrElse(IndexedSeq.empty)
      val after = change(before)
      if (after == before) done = true
      else {
        try { write(snapshot, after); done = true }
        catch {
          case e: CommitConflictException =>
            left -= 1
            if (left <= 0) throw e
        }
      }
    }
  }

  private def read(snapshot: Snapshot): IndexedSeq[Entry] = {
    val schema = snapshot.schema
    Seq("object_id", "object_type", "location", "metadata").foreach { c =>
      if (schema.field(c).isEmpty) throw new InconsistentTableException(snapshot.root, s"its schema has no column " +
        s"'$c' (a namespace's __manifest has ${Columns.mkString(", ")})")
    }
    val allocator = new RootAllocator()
    try {
      val scan = snapshot.newScan().withProjection(Columns.flatMap(c => schema.field(c)))
      val rows = IndexedSeq.newBuilder[Entry]
      scan.planTasks(Long.MaxValue).foreach { task =>
        val reader = table.read(task, allocator)
        try {
          Iterator.continually(reader.next()).takeWhile(_.isDefined).flatten.foreach { batch =>
            try rows ++= entriesOf(batch) finally batch.close()
          }
        } finally reader.close()
      }
      rows.result()
    } finally allocator.close()
  }

  private def write(snapshot: Option[Snapshot], rows: IndexedSeq[Entry]): Unit = {
    val schema = snapshot.map(_.schema).getOrElse(NewSchema)
    // Columns this class does not know would be rewritten as nulls: refuse rather than lose their values.
    val unknown = schema.fields.map(_.name).filterNot(Columns.contains)
    if (unknown.nonEmpty || rows.exists(_.baseObjects.exists(_.contains(null)))) {
      throw new UnsupportedFeatureException(s"Cannot change the namespace table ${table.root}: it has " +
        (if (unknown.nonEmpty) s"columns ${unknown.mkString(", ")}, which this version of sparklance does not know"
         else "a null in base_objects") + ", and rewriting it would lose them. Change the namespace with pylance.")
    }
    val version = snapshot.map(_.fileVersion).getOrElse(FileVersion.V2_2)
    val commit = table.newOverwrite(snapshot.map(_.version).getOrElse(0L), schema, version,
      snapshot.map(_.config).getOrElse(Map.empty)).onlyAfterReadVersion().withCommitRetries(1)
    val allocator = new RootAllocator()
    val writer = table.newDataWriter(schema, version, Long.MaxValue, 1L << 20, commit.fileTag)
    try {
      if (rows.nonEmpty) {
        val batch = batchOf(schema, rows, allocator)
        try writer.write(batch) finally batch.close()
      }
      val written = writer.finish()
      try commit.commit(Seq(written))
      catch {
        case e: io.sparklance.core.LanceException =>
          commit.abort(written.files)
          throw e
      }
    } finally {
      writer.close()
      allocator.close()
    }
  }
}

private[namespace] object ManifestTable {

  private final case class VersionKey(version: Long, transactionFile: Option[String], committedAt: java.time.Instant)

  /** One row: a namespace (no location) or a table (its directory, relative to the namespace root). */
  final case class Entry(objectId: String, objectType: String, location: Option[String], metadata: Option[String],
      baseObjects: Option[Seq[String]]) {
    def isTable: Boolean = objectType == TableType
    def isNamespace: Boolean = objectType == NamespaceType
    /** The names of the object id. */
    def id: Seq[String] = objectId.split(java.util.regex.Pattern.quote(LanceNamespace.Delimiter), -1).toSeq
  }

  val TableType = "table"
  val NamespaceType = "namespace"

  private val Columns = Seq("object_id", "object_type", "location", "metadata", "base_objects")

  /** The schema pylance 14 gives a new `__manifest`: `object_id` is its (unenforced) primary key. */
  private val NewSchema: LanceSchema = {
    def text(name: String, nullable: Boolean, meta: Map[String, String] = Map.empty) =
      new Field(name, new FieldType(nullable, ArrowType.Utf8.INSTANCE, null, meta.asJava), null)
    ArrowSchemas.fromArrow(new Schema(java.util.Arrays.asList(
      text("object_id", nullable = false, Map("lance-schema:unenforced-primary-key:position" -> "0")),
      text("object_type", nullable = false),
      text("location", nullable = true),
      text("metadata", nullable = true),
      new Field("base_objects", FieldType.nullable(ArrowType.List.INSTANCE),
        java.util.Collections.singletonList(text("object_id", nullable = true))))))
  }

  private def entriesOf(batch: VectorSchemaRoot): IndexedSeq[Entry] = {
    def strings(name: String): Int => Option[String] = batch.getVector(name) match {
      case v: VarCharVector => i => if (v.isNull(i)) None else Some(new String(v.get(i), UTF_8))
      case null => _ => None
      case v => throw new IllegalStateException(s"__manifest column $name read as ${v.getClass.getSimpleName}")
    }
    val objectId = strings("object_id")
    val objectType = strings("object_type")
    val location = strings("location")
    val metadata = strings("metadata")
    val bases: Int => Option[Seq[String]] = batch.getVector("base_objects") match {
      case l: ListVector =>
        i => if (l.isNull(i)) None else Some(l.getObject(i).asScala.map(v => Option(v).map(_.toString).orNull).toSeq)
      case _ => _ => None
    }
    (0 until batch.getRowCount).map { i =>
      Entry(objectId(i).getOrElse(""), objectType(i).getOrElse(""), location(i), metadata(i), bases(i))
    }
  }

  private def batchOf(schema: LanceSchema, rows: IndexedSeq[Entry], allocator: BufferAllocator): VectorSchemaRoot = {
    val root = VectorSchemaRoot.create(ArrowSchemas.toArrow(schema), allocator)
    root.allocateNew()
    def fill(name: String, value: Entry => Option[String]): Unit = root.getVector(name) match {
      case v: VarCharVector => rows.indices.foreach(i => value(rows(i)).foreach(s => v.setSafe(i, s.getBytes(UTF_8))))
      case _ =>
    }
    fill("object_id", e => Some(e.objectId))
    fill("object_type", e => Some(e.objectType))
    fill("location", _.location)
    fill("metadata", _.metadata)
    root.getVector("base_objects") match {
      case l: ListVector =>
        val w = l.getWriter
        rows.indices.foreach { i =>
          rows(i).baseObjects.foreach { items =>
            w.setPosition(i)
            w.startList()
            items.foreach { s =>
              val bytes = s.getBytes(UTF_8)
              val buf = allocator.buffer(bytes.length.toLong.max(1L))
              try { buf.setBytes(0, bytes); w.varChar().writeVarChar(0, bytes.length, buf) } finally buf.close()
            }
            w.endList()
          }
        }
      case _ =>
    }
    root.setRowCount(rows.size)
    root
  }
}
