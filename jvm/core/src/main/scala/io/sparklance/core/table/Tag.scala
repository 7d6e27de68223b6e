package io.sparklance.core.table

import java.nio.charset.StandardCharsets
import java.time.Instant

import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

import io.sparklance.core.{CorruptFileException, InvalidArgumentException}

/**
 * A tag: a name for a version, stored as `_refs/tags/<name>.json` in the layout pylance writes
 * (`{"branch": null, "version": 1, "createdAt": ..., "updatedAt": ..., "manifestSize": 434, "metadata": {}}`).
 */
final case class Tag(name: String, version: Long, branch: Option[String], createdAt: Option[Instant],
    updatedAt: Option[Instant], manifestSize: Option[Long])

object Tag {
  val Dir = "_refs/tags"

  private val mapper = new ObjectMapper()

  /** Tag names are one path component: letters, digits and `._-`, not starting with a dot. */
  def validateName(name: String): Unit = {
    val ok = name.nonEmpty && name.length <= 255 && !name.startsWith(".") &&
      name.forall(c => c.isLetterOrDigit || c == '.' || c == '_' || c == '-')
    if (!ok) {
      throw new InvalidArgumentException(s"'$name' is not a valid tag name: use letters, digits, '.', '_' and '-', " +
        "not starting with '.'.")
    }
  }

  def relativePath(name: String): String = s"$Dir/$name.json"

  def decode(path: String, name: String, bytes: Array[Byte]): Tag = {
    val node: JsonNode =
      try mapper.readTree(bytes)
      catch { case NonFatal(e) => throw new CorruptFileException(path, s"it is not valid JSON (${e.getMessage})", e) }
    if (node == null || !node.isObject || !node.path("version").canConvertToLong || node.path("version").asLong() < 1) {
      throw new CorruptFileException(path, "a tag file must be a JSON object with a positive integer \"version\"")
    }
    def text(k: String): Option[String] = Option(node.get(k)).filter(_.isTextual).map(_.asText())
    def instant(k: String): Option[Instant] = text(k).flatMap(s => try Some(Instant.parse(s)) catch { case NonFatal(_) => None })
    Tag(name, node.get("version").asLong(), text("branch"), instant("createdAt"), instant("updatedAt"),
      Option(node.get("manifestSize")).filter(_.canConvertToLong).map(_.asLong()))
  }

  def encode(tag: Tag): Array[Byte] = {
    val node = mapper.createObjectNode()
    tag.branch match { case Some(b) => node.put("branch", b); case None => node.putNull("branch") }
    node.put("version", tag.version)
    tag.createdAt.foreach(t => node.put("createdAt", t.toString))
    tag.updatedAt.foreach(t => node.put("updatedAt", t.toString))
    tag.manifestSize.foreach(s => node.put("manifestSize", s))
    node.putObject("metadata")
    mapper.writerWithDefaultPrettyPrinter().writeValueAsString(node).getBytes(StandardCharsets.UTF_8)
  }
}
