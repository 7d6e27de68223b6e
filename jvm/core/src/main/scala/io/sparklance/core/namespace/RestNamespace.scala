package io.sparklance.core.namespace

import java.io.IOException
import java.net.URI
import java.net.http.{HttpClient, HttpRequest}
import java.nio.charset.StandardCharsets.UTF_8
import java.time.Duration

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import com.fasterxml.jackson.databind.node.ObjectNode

import io.sparklance.core.{InvalidArgumentException, StorageException, UnsupportedFeatureException}

/**
 * A client of a Lance Namespace REST server (the REST spec's `/v1/namespace/{id}/...` and `/v1/table/{id}/...`
 * operations, JSON in and out, as lance-namespace-urllib3-client 0.13 sends them): the server keeps the namespaces
 * and tables and gives each table's location; the tables' files are read and written directly there.
 *
 * Properties (lance-namespace's names): `uri` (required: the server, e.g. `http://host:2333`), `delimiter` (of the
 * string form of an identifier, default `$`), `header.<name>` (an HTTP header sent with every request, e.g.
 * `header.Authorization`). Errors the server reports with the spec's error codes become the namespace errors of
 * [[LanceNamespace]]; others name the operation, the HTTP status and the server's message.
 */
final class RestNamespace private (endpoint: String, delimiter: String, headers: Map[String, String])
    extends LanceNamespace {
  import RestNamespace._

  override def describe: String = s"REST namespace $endpoint"

  private val client = HttpClient.newBuilder().connectTimeout(Timeout).build()

  private def idString(id: Seq[String]): String = if (id.isEmpty) delimiter else id.mkString(delimiter)

  private def encode(s: String): String = java.net.URLEncoder.encode(s, UTF_8).replace("+", "%20")

  private def url(kind: String, id: Seq[String], action: String, query: Seq[(String, String)]): URI = {
    val q = (("delimiter" -> delimiter) +: query).map { case (k, v) => s"${encode(k)}=${encode(v)}" }.mkString("&")
    URI.create(s"$endpoint/v1/$kind/${encode(idString(id))}/$action?$q")
  }

  /** The server's answer: its status and body as JSON (an empty object for an empty body). */
  private def call(method: String, uri: URI, body: Option[ObjectNode], what: String): (Int, JsonNode) = {
    val builder = HttpRequest.newBuilder(uri).timeout(Timeout).header("Accept", "application/json")
    headers.foreach { case (k, v) => builder.header(k, v) }
    val request = body match {
      case Some(sent) => builder.header("Content-Type", "application/json")
        .method(method, HttpRequest.BodyPublishers.ofString(Json.writeValueAsString(sent), UTF_8)).build()
      case None => builder.method(method, HttpRequest.BodyPublishers.noBody()).build()
    }
    val response = LanceNamespace.send(client, request, uri.toString, what)
    val text = Option(response.body()).getOrElse("")
    val json =
      if (text.trim.isEmpty) Json.createObjectNode()
      else try Json.readTree(text) catch {
        case e: IOException => throw new StorageException(uri.toString, what, new IOException(s"the server answered " +
          s"HTTP ${response.statusCode()} with a body that is not JSON: ${text.take(200)}", e))
      }
    (response.statusCode(), json)
  }

  private def body(id: Seq[String]): ObjectNode = {
    val node = Json.createObjectNode()
    val ids = node.putArray("id")
    id.foreach(ids.add)
    node
  }

  /**
   * `body` of a successful call; a spec error code becomes the matching namespace error, anything else a
   * [[StorageException]] naming the operation, status and message.
   */
  private def ok(id: Seq[String], uri: URI, what: String)(answer: (Int, JsonNode)): JsonNode = {
    val (status, json) = answer
    if (status / 100 == 2) json
    else {
      val code = Option(json.get("code")).filter(_.canConvertToInt).map(_.asInt)
      val message = Option(json.get("error")).map(_.asText).getOrElse(json.toString)
      code match {
        case Some(0) => throw new UnsupportedFeatureException(s"$describe does not support the call to $what: $message")
        case Some(1) => throw new NamespaceNotFoundException(id, describe)
        case Some(2) => throw new NamespaceExistsException(id, describe)
        case Some(3) => throw new NamespaceNotEmptyException(id, describe, message)
        case Some(4) => throw new TableNotFoundException(id, describe)
        case Some(5) => throw new TableInNamespaceExistsException(id, describe)
        case Some(13) => throw new InvalidArgumentException(s"$describe refused to $what: $message")
        case _ => throw new StorageException(uri.toString, what, new IOException(s"HTTP $status" +
          code.map(c => s", error code $c").getOrElse("") + s": $message"))
      }
    }
  }

  private def post(kind: String, id: Seq[String], action: String, what: String,
      extra: ObjectNode => Unit = _ => ()): JsonNode = {
    val uri = url(kind, id, action, Nil)
    val b = body(id)
    extra(b)
    ok(id, uri, what)(call("POST", uri, Some(b), what))
  }

  /** Every page of a list operation's `field`. */
  private def list(id: Seq[String], action: String, field: String, what: String): Seq[String] = {
    val out = Seq.newBuilder[String]
    var token: Option[String] = None
    var more = true
    while (more) {
      val uri = url("namespace", id, action, token.map("page_token" -> _).toSeq)
      val json = ok(id, uri, what)(call("GET", uri, None, what))
      Option(json.get(field)).filter(_.isArray).foreach(_.elements().asScala.foreach(n => out += n.asText))
      token = Option(json.get("page_token")).filter(n => n.isTextual && n.asText.nonEmpty).map(_.asText)
      more = token.isDefined
    }
    out.result().distinct.sorted
  }

  override def listNamespaces(parent: Seq[String]): Seq[String] =
    list(parent, "list", "namespaces", s"list the namespaces of ${LanceNamespace.show(parent)}")

  override def namespaceExists(id: Seq[String]): Boolean =
    id.isEmpty || (try { post("namespace", id, "exists", s"check namespace ${id.mkString(".")}"); true }
      catch { case _: NamespaceNotFoundException => false })

  override def namespaceProperties(id: Seq[String]): Map[String, String] = {
    val json = post("namespace", id, "describe", s"describe namespace ${id.mkString(".")}")
    Option(json.get("properties")).filter(_.isObject).map(LanceNamespace.textMap).getOrElse(Map.empty)
  }

  override def createNamespace(id: Seq[String], properties: Map[String, String]): Unit = {
    id.foreach(LanceNamespace.checkName(_, "namespace"))
    post("namespace", id, "create", s"create namespace ${id.mkString(".")}", b => {
      val p = b.putObject("properties")
      properties.foreach { case (k, v) => p.put(k, v) }
    })
    ()
  }

  override def dropNamespace(id: Seq[String]): Unit = {
    post("namespace", id, "drop", s"drop namespace ${id.mkString(".")}")
    ()
  }

  override def listTables(namespace: Seq[String]): Seq[String] =
    list(namespace, "table/list", "tables", s"list the tables of ${LanceNamespace.show(namespace)}")

  override def tableLocation(id: Seq[String]): Option[String] =
    try {
      val json = post("table", id, "describe", s"describe table ${id.mkString(".")}")
      Some(location(json, id, "describe"))
    } catch { case _: TableNotFoundException | _: NamespaceNotFoundException => None }

  override def declareTable(id: Seq[String]): String = {
    id.foreach(LanceNamespace.checkName(_, "namespace or table"))
    location(post("table", id, "declare", s"declare table ${id.mkString(".")}"), id, "declare")
  }

  override def registerTable(id: Seq[String], location: String): String = {
    id.foreach(LanceNamespace.checkName(_, "namespace or table"))
    post("table", id, "register", s"register table ${id.mkString(".")} at $location", _.put("location", location))
    // The server may answer with the location as it was sent (relative to its root): describe resolves it.
    tableLocation(id).getOrElse(location)
  }

  override def deregisterTable(id: Seq[String]): Option[String] =
    try Some(location(post("table", id, "deregister", s"deregister table ${id.mkString(".")}"), id, "deregister"))
    catch { case _: TableNotFoundException => None }

  override def renameTable(id: Seq[String], newId: Seq[String]): Unit = {
    newId.foreach(LanceNamespace.checkName(_, "namespace or table"))
    post("table", id, "rename", s"rename table ${id.mkString(".")} to ${newId.mkString(".")}", b => {
      b.put("new_table_name", newId.last)
      val ns = b.putArray("new_namespace_id")
      newId.init.foreach(ns.add)
    })
    ()
  }

  override def dropTable(id: Seq[String]): Boolean =
    try { post("table", id, "drop", s"drop table ${id.mkString(".")}"); true }
    catch { case _: TableNotFoundException => false }

  private def location(json: JsonNode, id: Seq[String], op: String): String =
    Option(json.get("location")).filter(n => n.isTextual && n.asText.nonEmpty).map(_.asText.stripSuffix("/")).getOrElse(
      throw new UnsupportedFeatureException(s"$describe answered $op of table ${id.mkString(".")} without a " +
        "location; sparklance reads and writes a namespace's tables at their locations."))
}

object RestNamespace {
  private val Json = new ObjectMapper()
  private val Timeout = Duration.ofSeconds(60)

  /** The properties of lance-namespace's `rest` implementation that this client takes (and `header.*`). */
  val Properties: Set[String] = Set("uri", "delimiter")

  def apply(properties: Map[String, String]): RestNamespace = {
    properties.keys.filterNot(k => Properties.contains(k) || k.startsWith("header.")).toSeq.sorted.headOption.foreach { k =>
      val why = if (k.startsWith("tls.")) "TLS is configured through the JVM's trust and key stores " +
        "(javax.net.ssl.* system properties)" else s"a rest namespace takes uri, delimiter and header.<name>"
      throw new InvalidArgumentException(s"Unknown rest namespace property '$k': $why.")
    }
    val uri = properties.get("uri").map(_.trim.stripSuffix("/")).filter(_.nonEmpty).getOrElse(
      throw new InvalidArgumentException("A rest namespace needs property uri: the server's URL, e.g. http://host:2333."))
    if (!(uri.startsWith("http://") || uri.startsWith("https://"))) {
      throw new InvalidArgumentException(s"Rest namespace uri '$uri' is not an http:// or https:// URL.")
    }
    val delimiter = properties.getOrElse("delimiter", LanceNamespace.Delimiter)
    if (delimiter.isEmpty) throw new InvalidArgumentException("Rest namespace property delimiter must not be empty.")
    new RestNamespace(uri, delimiter, properties.collect { case (k, v) if k.startsWith("header.") => k.stripPrefix("header.") -> v })
  }
}
