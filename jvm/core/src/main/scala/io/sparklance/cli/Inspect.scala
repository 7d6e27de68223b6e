package io.sparklance.cli

import java.io.{ByteArrayOutputStream, PrintStream}
import java.nio.channels.Channels
import java.util.Base64

import scala.util.control.NonFatal

import com.fasterxml.jackson.core.{JsonFactory, JsonGenerator}
import org.apache.arrow.vector.ipc.WriteChannel
import org.apache.arrow.vector.ipc.message.MessageSerializer

import io.sparklance.core.{InvalidArgumentException, LanceException}
import io.sparklance.core.schema.{ArrowSchemas, LanceField}
import io.sparklance.core.storage.HadoopStorage
import io.sparklance.core.table.{Dataset, Snapshot}
import io.sparklance.core.util.{Parse, Timestamps}

/**
 * `sparklance inspect PATH [--version N | --tag NAME | --as-of TIMESTAMP] [--json]`: a table's history, schema
 * and fragments as the JVM core reads them. Exit code 0 on success, 1 on a table error, 2 on a usage error.
 */
object Inspect {

  final case class Args(path: String, version: Option[Long] = None, tag: Option[String] = None,
      asOf: Option[String] = None, json: Boolean = false)

  private val Usage = "usage: sparklance inspect PATH [--version N | --tag NAME | --as-of TIMESTAMP] [--json]"

  def main(argv: Array[String]): Unit = sys.exit(run(argv.toSeq, System.out, System.err))

  def run(argv: Seq[String], out: PrintStream, err: PrintStream): Int = {
    val args =
      try parse(argv.toList, None)
      catch { case e: IllegalArgumentException => err.println(s"${e.getMessage}\n$Usage"); return 2 }
    try {
      val dataset = Dataset.open(new HadoopStorage(), args.path)
      val snapshot = (args.version, args.tag, args.asOf) match {
        case (Some(v), None, None) => dataset.checkout(v)
        case (None, Some(t), None) => dataset.checkoutTag(t)
        case (None, None, Some(ts)) => dataset.checkoutAsOf(Timestamps.parse(ts))
        case (None, None, None) => dataset.checkoutLatest()
        case _ => throw new InvalidArgumentException("Give at most one of --version, --tag and --as-of.")
      }
      if (args.json) writeJson(snapshot, out) else writeText(snapshot, out)
      out.flush()
      0
    } catch {
      case e: LanceException => err.println(s"error [${e.errorClass}]: ${e.getMessage}"); 1
      case NonFatal(e) =>
        err.println(s"error [LANCE_INTERNAL_ERROR]: ${e.getClass.getName}: ${e.getMessage}. This is a bug in " +
          "sparklance; please report it with the table's manifest.")
        1
    }
  }

  private def parse(rest: List[String], acc: Option[Args]): Args = rest match {
    case Nil => acc.filter(_.path != null).getOrElse(throw new IllegalArgumentException("missing PATH"))
    case "--json" :: tail => parse(tail, Some(need(acc).copy(json = true)))
    case "--version" :: v :: tail =>
      parse(tail, Some(need(acc).copy(version = Some(Parse.long(v).getOrElse(
        throw new IllegalArgumentException(s"--version takes a number, not '$v'"))))))
    case "--tag" :: t :: tail => parse(tail, Some(need(acc).copy(tag = Some(t))))
    case "--as-of" :: t :: tail => parse(tail, Some(need(acc).copy(asOf = Some(t))))
    case flag :: Nil if flag.startsWith("--") => throw new IllegalArgumentException(s"$flag needs a value")
    case flag :: _ if flag.startsWith("--") => throw new IllegalArgumentException(s"unknown option $flag")
    case path :: tail if acc.forall(_.path == null) => parse(tail, Some(need(acc).copy(path = path)))
    case extra :: _ => throw new IllegalArgumentException(s"unexpected argument '$extra'")
  }

  // Options may come before PATH; PATH is filled in when it arrives.
  private def need(acc: Option[Args]): Args = acc.getOrElse(Args(path = null))

  private def writeJson(s: Snapshot, out: PrintStream): Unit = {
    val history = s.dataset.history()
    val g = new JsonFactory().createGenerator(out)
    g.writeStartObject()
    g.writeStringField("root", s.root)
    g.writeNumberField("version", s.version)
    g.writeNumberField("latest_version", history.last.version)
    g.writeStringField("naming_scheme", s.naming.name)
    g.writeNumberField("timestamp_us", Timestamps.micros(s.manifest.timestamp))
    g.writeArrayFieldStart("versions")
    history.foreach { h =>
      g.writeStartObject()
      g.writeNumberField("version", h.version)
      g.writeNumberField("timestamp_us", Timestamps.micros(h.manifest.timestamp))
      g.writeEndObject()
    }
    g.writeEndArray()
    g.writeObjectFieldStart("tags")
    s.dataset.tags().foreach { case (name, tag) => g.writeNumberField(name, tag.version) }
    g.writeEndObject()
    g.writeNumberField("reader_feature_flags", s.manifest.readerFeatureFlags)
    g.writeNumberField("writer_feature_flags", s.manifest.writerFeatureFlags)
    nullable(g, "data_storage_version", s.manifest.dataStorageVersion)(g.writeString)
    nullable(g, "max_fragment_id", s.manifest.maxFragmentId)(g.writeNumber)
    g.writeNumberField("next_row_id", s.manifest.nextRowId)
    g.writeArrayFieldStart("schema")
    s.schema.allFields.foreach { f =>
      g.writeStartObject()
      g.writeNumberField("id", f.id)
      g.writeNumberField("parent_id", f.parentId)
      g.writeStringField("name", f.name)
      g.writeStringField("logical_type", f.proto.getLogicalType)
      g.writeBooleanField("nullable", f.nullable)
      g.writeEndObject()
    }
    g.writeEndArray()
    g.writeStringField("arrow_schema_ipc_base64", Base64.getEncoder.encodeToString(arrowSchemaIpc(s)))
    g.writeArrayFieldStart("fragments")
    s.fragments.foreach { f =>
      g.writeStartObject()
      g.writeNumberField("id", f.id)
      g.writeNumberField("physical_rows", f.physicalRows)
      g.writeNumberField("num_deleted_rows", f.numDeletedRows)
      longs(g, "deleted_offsets", Some(s.deletionVector(f).toSortedArray.map(_.toLong)))
      g.writeFieldName("deletion_file")
      (f.deletionFile, s.deletionFilePath(f)) match {
        case (Some(d), Some(path)) =>
          g.writeStartObject()
          g.writeStringField("type", d.fileType.name)
          g.writeNumberField("read_version", d.readVersion)
          g.writeFieldName("id")
          g.writeNumber(new java.math.BigInteger(java.lang.Long.toUnsignedString(d.id)))
          g.writeNumberField("num_deleted_rows", d.numDeletedRows)
          g.writeStringField("path", d.relativePath(f.id))
          g.writeStringField("absolute_path", path)
          g.writeEndObject()
        case _ => g.writeNull()
      }
      g.writeArrayFieldStart("files")
      f.files.foreach { d =>
        g.writeStartObject()
        g.writeStringField("path", d.path)
        longs(g, "fields", Some(d.fields.map(_.toLong).toArray))
        longs(g, "column_indices", Some(d.columnIndices.map(_.toLong).toArray))
        g.writeNumberField("file_major_version", d.fileMajorVersion)
        g.writeNumberField("file_minor_version", d.fileMinorVersion)
        nullable(g, "file_size_bytes", d.fileSizeBytes)(g.writeNumber)
        g.writeEndObject()
      }
      g.writeEndArray()
      longs(g, "row_ids", s.rowIds(f).map(_.toArray))
      longs(g, "created_at_versions", s.createdAtVersions(f).map(_.toArray))
      longs(g, "last_updated_at_versions", s.lastUpdatedAtVersions(f).map(_.toArray))
      g.writeEndObject()
    }
    g.writeEndArray()
    g.writeEndObject()
    g.flush()
    out.println()
  }

  private def nullable[T](g: JsonGenerator, name: String, v: Option[T])(write: T => Unit): Unit = {
    g.writeFieldName(name)
    v match { case Some(x) => write(x); case None => g.writeNull() }
  }

  private def longs(g: JsonGenerator, name: String, values: Option[Array[Long]]): Unit = {
    g.writeFieldName(name)
    values match {
      case Some(a) => g.writeArray(a, 0, a.length)
      case None => g.writeNull()
    }
  }

  private def arrowSchemaIpc(s: Snapshot): Array[Byte] = {
    val bytes = new ByteArrayOutputStream()
    MessageSerializer.serialize(new WriteChannel(Channels.newChannel(bytes)), ArrowSchemas.toArrow(s.schema))
    bytes.toByteArray
  }

  private def writeText(s: Snapshot, out: PrintStream): Unit = {
    val m = s.manifest
    out.println(s"Table     ${s.root}")
    out.println(s"Version   ${s.version} of ${s.dataset.latestVersion()}, committed ${m.timestamp} " +
      s"(manifest naming ${s.naming.name})")
    out.println(s"Format    data files ${m.dataStorageVersion.getOrElse("legacy")}, written by " +
      s"${m.writerLibrary.getOrElse("unknown")}")
    out.println(s"Features  reader [${io.sparklance.core.format.FeatureFlags.describe(m.readerFeatureFlags).mkString(", ")}]" +
      s", writer [${io.sparklance.core.format.FeatureFlags.describe(m.writerFeatureFlags).mkString(", ")}]")
    out.println(s"Rows      ${m.numRows} in ${s.fragments.size} fragment(s)")
    out.println()
    out.println("History")
    val tagsByVersion = s.dataset.tags().values.groupBy(_.version)
    s.dataset.history().foreach { h =>
      val tags = tagsByVersion.get(h.version).map(ts => ts.map(_.name).toSeq.sorted.mkString(" [tags: ", ", ", "]")).getOrElse("")
      val mark = if (h.version == s.version) "*" else " "
      out.println(f" $mark v${h.version}%-6d ${h.manifest.timestamp}  ${h.manifest.numRows}%10d rows  " +
        f"${h.fragments.size}%5d fragments$tags")
    }
    out.println()
    out.println("Schema")
    def field(f: LanceField, depth: Int): Unit = {
      out.println(s"${"  " * (depth + 1)}${f.name}: ${f.proto.getLogicalType}${if (f.nullable) "" else " not null"} " +
        s"(id ${f.id})")
      f.children.foreach(field(_, depth + 1))
    }
    s.schema.fields.foreach(field(_, 0))
    out.println()
    out.println("Fragments")
    s.fragments.foreach { f =>
      val dv = f.deletionFile.map(d => s", ${d.numDeletedRows} deleted (${d.relativePath(f.id)})").getOrElse("")
      out.println(s"  #${f.id}: ${f.physicalRows} rows$dv")
      f.files.foreach { d =>
        out.println(s"      data/${d.path}  v${d.fileMajorVersion}.${d.fileMinorVersion}  fields ${d.fields.mkString("[", ",", "]")}")
      }
      s.rowIds(f).foreach { ids =>
        val shown = if (ids.length == 0) "none" else s"${ids(0)} .. ${ids(ids.length - 1)}"
        out.println(s"      row ids $shown")
      }
    }
  }
}
