package io.sparklance.core.table

import java.net.{URLDecoder, URLEncoder}
import java.nio.charset.StandardCharsets
import java.time.Instant

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

import io.sparklance.core.CorruptFileException

/**
 * A branch: a line of versions of its own, kept by pylance 14 as a table under `tree/<name>/` of the root (its
 * first version a shallow clone of `parentVersion` of `parentBranch`, None for main), and described by
 * `_refs/branches/<name>.json` (`/` in the name written `%2F`), which is the source of truth for whether it exists:
 * `{"parentBranch": null, "identifier": {"version_mapping": [[1, "<uuid>"]]}, "parentVersion": 1, "createAt":
 * <unix seconds>, "manifestSize": 369, "metadata": {}}`.
 *
 * `lineage` is pylance's `identifier.version_mapping`: the parent's lineage followed by (parentVersion, a new id of
 * this branch). A branch whose lineage holds another's id was made from it, directly or not, and keeps it from
 * being deleted.
 */
final case class Branch(name: String, parentBranch: Option[String], parentVersion: Long, createdAt: Option[Instant],
    manifestSize: Option[Long], lineage: Seq[(Long, String)]) {

  /** The id this branch's own entry of its lineage carries, if the file records one. */
  def id: Option[String] = lineage.lastOption.map(_._2)

  /** Whether `other` was made from this branch (directly, or from a branch made from it). */
  def isAncestorOf(other: Branch): Boolean =
    other.name != name && (other.parentBranch.contains(name) || id.exists(i => other.lineage.init.exists(_._2 == i)))
}

object Branch {
  val Dir = "_refs/branches"

  private val mapper = new ObjectMapper()

  /** The branch file of `name`, relative to the table root. */
  def relativePath(name: String): String =
    s"$Dir/${URLEncoder.encode(name, StandardCharsets.UTF_8).replace("+", "%20")}.json"

  /** The branch name a branch file is named for. */
  def nameOf(fileName: String): String =
    URLDecoder.decode(fileName.stripSuffix(".json").replace("+", "%2B"), StandardCharsets.UTF_8)

  /** The directory of branch `name`'s table, relative to the table root. */
  def relativeRoot(name: String): String = s"tree/$name"

  def decode(path: String, name: String, bytes: Array[Byte]): Branch = {
    val node: JsonNode =
      try mapper.readTree(bytes)
      catch { case NonFatal(e) => throw new CorruptFileException(path, s"it is not valid JSON (${e.getMessage})", e) }
    if (node == null || !node.isObject || !node.path("parentVersion").canConvertToLong ||
        node.path("parentVersion").asLong() < 1) {
      throw new CorruptFileException(path, "a branch file must be a JSON object with a positive integer \"parentVersion\"")
    }
    val parent = Option(node.get("parentBranch")).filter(_.isTextual).map(_.asText())
    val created = Option(node.get("createAt")).filter(_.canConvertToLong).map(n => Instant.ofEpochSecond(n.asLong()))
    val lineage = node.path("identifier").path("version_mapping").elements().asScala.collect {
      case e if e.isArray && e.size() == 2 && e.get(0).canConvertToLong && e.get(1).isTextual =>
        e.get(0).asLong() -> e.get(1).asText()
    }.toSeq
    Branch(name, parent, node.get("parentVersion").asLong(), created,
      Option(node.get("manifestSize")).filter(_.canConvertToLong).map(_.asLong()), lineage)
  }

  def encode(branch: Branch): Array[Byte] = {
    val node = mapper.createObjectNode()
    branch.parentBranch match { case Some(b) => node.put("parentBranch", b); case None => node.putNull("parentBranch") }
    val mapping = node.putObject("identifier").putArray("version_mapping")
    branch.lineage.foreach { case (v, id) => mapping.addArray().add(v).add(id) }
    node.put("parentVersion", branch.parentVersion)
    branch.createdAt.foreach(t => node.put("createAt", t.getEpochSecond))
    branch.manifestSize.foreach(s => node.put("manifestSize", s))
    node.putObject("metadata")
    mapper.writerWithDefaultPrettyPrinter().writeValueAsString(node).getBytes(StandardCharsets.UTF_8)
  }
}
