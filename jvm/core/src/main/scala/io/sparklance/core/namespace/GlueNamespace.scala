package io.sparklance.core.namespace

import java.io.IOException
import java.net.URI
import java.net.http.{HttpClient, HttpRequest}
import java.nio.charset.StandardCharsets.UTF_8
import java.security.MessageDigest
import java.time.{Duration, ZoneOffset, ZonedDateTime}
import java.time.format.DateTimeFormatter
import javax.crypto.Mac
import javax.crypto.spec.SecretKeySpec

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import com.fasterxml.jackson.databind.node.ObjectNode
import org.apache.hadoop.conf.Configuration

import io.sparklance.core.{InvalidArgumentException, StorageException, UnsupportedFeatureException}
import io.sparklance.core.storage.{HadoopStorage, Storage}

/**
 * The AWS Glue Data Catalog as a Lance Namespace, laid out as lance-namespace-impls' `glue` implementation keeps it
 * (its spec, docs/src/glue.md): the catalog is the root namespace, each Glue database a namespace below it (no deeper
 * levels), and a Lance table a Glue table whose `Parameters` hold `table_type = lance` (any case) and whose
 * `StorageDescriptor.Location` is the table's directory. Glue tables of other types are not listed. A new table's
 * directory is `<database LocationUri>/<name>.lance`, or `<root>/<database>/<name>.lance` when the database has no
 * location.
 *
 * The catalog is reached through Glue's JSON API (`AWSGlue.<operation>` over HTTPS, requests signed with AWS
 * Signature Version 4), so no AWS SDK is needed. Properties (lance-namespace's names): `region` (else AWS_REGION or
 * AWS_DEFAULT_REGION), `endpoint` (default `https://glue.<region>.amazonaws.com`), `catalog_id` (default: the
 * account's), `access_key_id` / `secret_access_key` / `session_token` (else the AWS SDK's default credentials chain
 * when the SDK is on the class path, as it is with hadoop-aws, else AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
 * AWS_SESSION_TOKEN), `root` (where tables of databases without a location go).
 */
final class GlueNamespace private (endpoint: URI, region: String, catalogId: Option[String], credentials: () => GlueNamespace.Credentials,
    root: Option[String], conf: Configuration) extends LanceNamespace {
  import GlueNamespace._

  override def describe: String = s"Glue catalog ${catalogId.getOrElse("of the account")} at $endpoint"

  private val client = HttpClient.newBuilder().connectTimeout(Timeout).build()
  private lazy val storage: Storage = new HadoopStorage(conf)

  /** Glue's answer to `operation` with `request` (the catalog id added), or the error Glue reports, by its type. */
  private def call(operation: String, what: String)(fill: ObjectNode => Unit): Either[(String, String), JsonNode] = {
    val body = Json.createObjectNode()
    catalogId.foreach(body.put("CatalogId", _))
    fill(body)
    val bytes = Json.writeValueAsBytes(body)
    val signed = sign(credentials(), region, endpoint, s"AWSGlue.$operation", bytes, ZonedDateTime.now(ZoneOffset.UTC))
    val builder = HttpRequest.newBuilder(endpoint).timeout(Timeout)
    signed.foreach { case (k, v) => if (k != "host") builder.header(k, v) }
    val request = builder.POST(HttpRequest.BodyPublishers.ofByteArray(bytes)).build()
    val response = LanceNamespace.send(client, request, endpoint.toString, what)
    val text = Option(response.body()).getOrElse("")
    val json = try { if (text.trim.isEmpty) Json.createObjectNode() else Json.readTree(text) } catch {
      case e: IOException => throw new StorageException(endpoint.toString, what, new IOException(
        s"Glue answered HTTP ${response.statusCode()} with a body that is not JSON: ${text.take(200)}", e))
    }
    if (response.statusCode() / 100 == 2) Right(json)
    else {
      // The error's type: `__type` (maybe prefixed with a namespace and '#'), or the x-amzn-ErrorType header.
      val header = response.headers().firstValue("x-amzn-ErrorType")
      val kind = Option(json.get("__type")).map(_.asText).orElse(if (header.isPresent) Some(header.get) else None)
        .map(t => t.substring(t.lastIndexOf('#') + 1).takeWhile(_ != ':')).getOrElse("")
      val message = Seq("message", "Message").flatMap(k => Option(json.get(k))).headOption.map(_.asText).getOrElse(text.take(200))
      Left(kind -> s"HTTP ${response.statusCode()} $kind: $message")
    }
  }

  private def failure(kind: String, message: String, what: String): Exception = kind match {
    case "AccessDeniedException" | "UnrecognizedClientException" | "InvalidSignatureException" |
         "ExpiredTokenException" | "InvalidInputException" | "ValidationException" =>
      new InvalidArgumentException(s"$describe refused to $what: $message")
    case _ => new StorageException(endpoint.toString, what, new IOException(message))
  }

  private def database(id: Seq[String], what: String): String = id match {
    case Seq(db) => db
    case Seq() => throw new InvalidArgumentException(s"$describe cannot $what the root namespace: it is the catalog.")
    case _ => throw new UnsupportedFeatureException(s"Namespace ${id.mkString(".")} is not supported by $describe: " +
      "Glue has one level of namespaces (its databases).")
  }

  private def tableId(id: Seq[String]): (String, String) = id match {
    case Seq(db, t) => (db, t)
    case _ => throw new UnsupportedFeatureException(s"Table ${id.mkString(".")} is not supported by $describe: a " +
      "Glue table is in a database (database.table).")
  }

  /** Every page of a list operation's `field`; `missing` if Glue does not find what is listed. */
  private def pages(operation: String, what: String, field: String, missing: => Exception)(fill: ObjectNode => Unit): Seq[JsonNode] = {
    val out = Seq.newBuilder[JsonNode]
    var token: Option[String] = None
    do {
      val json = call(operation, what) { b => fill(b); token.foreach(b.put("NextToken", _)) } match {
        case Right(j) => j
        case Left(("EntityNotFoundException", _)) => throw missing
        case Left((kind, message)) => throw failure(kind, message, what)
      }
      Option(json.get(field)).filter(_.isArray).foreach(_.elements().asScala.foreach(out += _))
      token = Option(json.get("NextToken")).filter(n => n.isTextual && n.asText.nonEmpty).map(_.asText)
    } while (token.isDefined)
    out.result()
  }

  override def listNamespaces(parent: Seq[String]): Seq[String] =
    if (parent.nonEmpty) { // a database holds no namespaces
      database(parent, "list the namespaces of")
      if (namespaceExists(parent)) Nil else throw new NamespaceNotFoundException(parent, describe)
    } else {
      pages("GetDatabases", "list the databases", "DatabaseList", new NamespaceNotFoundException(Nil, describe))(_ => ())
        .map(_.get("Name").asText).distinct.sorted
    }

  private def getDatabase(db: String): Option[JsonNode] =
    call("GetDatabase", s"describe database $db")(_.put("Name", db)) match {
      case Right(json) => Option(json.get("Database"))
      case Left(("EntityNotFoundException", _)) => None
      case Left((kind, message)) => throw failure(kind, message, s"describe database $db")
    }

  override def namespaceExists(id: Seq[String]): Boolean =
    id.isEmpty || (id.size == 1 && getDatabase(id.head).isDefined)

  override def namespaceProperties(id: Seq[String]): Map[String, String] = {
    if (id.isEmpty) return Map.empty
    val db = getDatabase(database(id, "describe")).getOrElse(throw new NamespaceNotFoundException(id, describe))
    val params = Option(db.get("Parameters")).filter(_.isObject).map(LanceNamespace.textMap).getOrElse(Map.empty)
    params ++ Option(db.get("LocationUri")).map("location" -> _.asText) ++ Option(db.get("Description")).map("description" -> _.asText)
  }

  /** A database's `LocationUri`: its new tables go below it. */
  override def takesLocation: Boolean = true

  override def createNamespace(id: Seq[String], properties: Map[String, String]): Unit = {
    val db = LanceNamespace.checkName(database(id, "create"), "namespace")
    call("CreateDatabase", s"create database $db") { b =>
      val input = b.putObject("DatabaseInput")
      input.put("Name", db)
      properties.get("location").foreach(l => input.put("LocationUri", l.stripSuffix("/")))
      properties.get("description").foreach(input.put("Description", _))
      val rest = properties -- Seq("location", "description")
      if (rest.nonEmpty) { val p = input.putObject("Parameters"); rest.foreach { case (k, v) => p.put(k, v) } }
    } match {
      case Right(_) => ()
      case Left(("AlreadyExistsException", _)) => throw new NamespaceExistsException(id, describe)
      case Left((kind, message)) => throw failure(kind, message, s"create database $db")
    }
  }

  override def dropNamespace(id: Seq[String]): Unit = {
    val db = database(id, "drop")
    if (getDatabase(db).isEmpty) throw new NamespaceNotFoundException(id, describe)
    // Glue would drop the database's tables with it, Lance's or not: refuse while it holds any.
    val tables = glueTables(id, db)
    if (tables.nonEmpty) throw new NamespaceNotEmptyException(id, describe,
      s"database $db holds ${tables.size} table(s) (${tables.map(_.get("Name").asText).take(5).mkString(", ")})")
    call("DeleteDatabase", s"drop database $db")(_.put("Name", db)) match {
      case Right(_) => ()
      case Left(("EntityNotFoundException", _)) => throw new NamespaceNotFoundException(id, describe)
      case Left((kind, message)) => throw failure(kind, message, s"drop database $db")
    }
  }

  private def glueTables(id: Seq[String], db: String): Seq[JsonNode] =
    pages("GetTables", s"list the tables of database $db", "TableList", new NamespaceNotFoundException(id, describe))(
      _.put("DatabaseName", db))

  override def listTables(namespace: Seq[String]): Seq[String] =
    if (namespace.isEmpty) Nil // Glue's tables are all in databases
    else glueTables(namespace, database(namespace, "list the tables of")).filter(isLance).map(_.get("Name").asText).distinct.sorted

  private def getTable(db: String, name: String): Option[JsonNode] =
    call("GetTable", s"describe table $db.$name") { b => b.put("DatabaseName", db); b.put("Name", name) } match {
      case Right(json) => Option(json.get("Table")).filter(isLance)
      case Left(("EntityNotFoundException", _)) => None
      case Left((kind, message)) => throw failure(kind, message, s"describe table $db.$name")
    }

  override def tableLocation(id: Seq[String]): Option[String] = {
    if (id.size != 2) return None
    val (db, name) = tableId(id)
    getTable(db, name).map { t =>
      // managed_by = impl: the table's versions are committed through Glue (its `version` parameter), which
      // sparklance does not do; reading or writing its files directly would bypass them.
      Option(t.get("Parameters")).flatMap(p => Option(p.get("managed_by"))).map(_.asText).filter(_.equalsIgnoreCase("impl"))
        .foreach { _ => throw new UnsupportedFeatureException(s"Glue table $db.$name of $describe has managed_by = " +
          "impl (its versions are committed through Glue), which sparklance does not support: it reads and commits " +
          "tables whose versions the storage keeps (managed_by = storage, or unset).") }
      locationOf(t).getOrElse(throw new UnsupportedFeatureException(s"Glue table $db.$name " +
        s"of $describe has no StorageDescriptor.Location; sparklance reads and writes a table at its location."))
    }
  }

  private def createTable(id: Seq[String], location: String, parameters: Map[String, String]): Unit = {
    val (db, name) = tableId(id)
    id.foreach(LanceNamespace.checkName(_, "namespace or table"))
    call("CreateTable", s"create table $db.$name") { b =>
      b.put("DatabaseName", db)
      val input = b.putObject("TableInput")
      input.put("Name", name)
      input.put("TableType", "EXTERNAL_TABLE")
      val params = parameters ++ Map(TableTypeKey -> LanceType, "managed_by" -> "storage")
      val p = input.putObject("Parameters")
      params.foreach { case (k, v) => p.put(k, v) }
      val sd = input.putObject("StorageDescriptor")
      sd.put("Location", location)
      val sp = sd.putObject("Parameters")
      params.foreach { case (k, v) => sp.put(k, v) }
    } match {
      case Right(_) => ()
      case Left(("AlreadyExistsException", _)) => throw new TableInNamespaceExistsException(id, describe)
      case Left(("EntityNotFoundException", _)) => throw new NamespaceNotFoundException(Seq(db), describe)
      case Left((kind, message)) => throw failure(kind, message, s"create table $db.$name")
    }
  }

  override def declareTable(id: Seq[String]): String = {
    val (db, name) = tableId(id)
    val base = getDatabase(db).getOrElse(throw new NamespaceNotFoundException(Seq(db), describe))
    val location = Option(base.get("LocationUri")).map(_.asText.stripSuffix("/")).filter(_.nonEmpty) match {
      case Some(dir) => s"$dir/$name.lance"
      case None => s"${root.getOrElse(throw new InvalidArgumentException(s"$describe needs property root to place " +
        s"table $db.$name: database $db has no LocationUri."))}/$db/$name.lance"
    }
    createTable(id, location, Map.empty)
    location
  }

  override def registerTable(id: Seq[String], location: String): String = {
    createTable(id, location.stripSuffix("/"), Map.empty)
    location.stripSuffix("/")
  }

  private def deleteTable(db: String, name: String): Boolean =
    call("DeleteTable", s"drop table $db.$name") { b => b.put("DatabaseName", db); b.put("Name", name) } match {
      case Right(_) => true
      case Left(("EntityNotFoundException", _)) => false
      case Left((kind, message)) => throw failure(kind, message, s"drop table $db.$name")
    }

  override def deregisterTable(id: Seq[String]): Option[String] = {
    val location = tableLocation(id)
    location.foreach { _ => val (db, name) = tableId(id); deleteTable(db, name) }
    location
  }

  /**
   * Glue has no rename: the table is created under the new name (its parameters and location kept), then the old
   * entry is deleted. Should the delete fail, both names point at the one table and the error says so.
   */
  override def renameTable(id: Seq[String], newId: Seq[String]): Unit = {
    val (db, name) = tableId(id)
    val table = getTable(db, name).getOrElse(throw new TableNotFoundException(id, describe))
    val location = locationOf(table).getOrElse(throw new UnsupportedFeatureException(s"Glue table $db.$name has no location."))
    val params = Option(table.get("Parameters")).filter(_.isObject).map(LanceNamespace.textMap).getOrElse(Map.empty)
    createTable(newId, location, params)
    try deleteTable(db, name)
    catch { case e: Exception => throw new StorageException(endpoint.toString, s"remove the old name of table " +
      s"$db.$name after it was added as ${newId.mkString(".")} (both names now show the table; drop $db.$name with " +
      "DEREGISTER or in Glue)", new IOException(e.getMessage, e)) }
    ()
  }

  override def dropTable(id: Seq[String]): Boolean = {
    val location = deregisterTable(id)
    location.foreach(LanceNamespace.deleteTree(storage, _))
    location.isDefined
  }
}

object GlueNamespace {
  private val Json = new ObjectMapper()
  private val Timeout = Duration.ofSeconds(60)
  private val TableTypeKey = "table_type"
  private val LanceType = "lance"

  /** The properties of lance-namespace-impls' `glue` implementation that this one takes. */
  val Properties: Set[String] =
    Set("region", "endpoint", "catalog_id", "access_key_id", "secret_access_key", "session_token", "root")

  /** AWS credentials: a key, its secret, and a session token for temporary ones. */
  final case class Credentials(accessKey: String, secretKey: String, sessionToken: Option[String]) {
    override def toString: String = s"Credentials($accessKey, ***)"
  }

  private def isLance(table: JsonNode): Boolean =
    Option(table.get("Parameters")).flatMap(p => Option(p.get(TableTypeKey))).exists(_.asText.equalsIgnoreCase(LanceType))

  private def locationOf(table: JsonNode): Option[String] =
    Option(table.get("StorageDescriptor")).flatMap(sd => Option(sd.get("Location"))).map(_.asText.stripSuffix("/")).filter(_.nonEmpty)

  def apply(properties: Map[String, String], conf: Configuration): GlueNamespace =
    apply(properties, conf, k => Option(System.getenv(k)))

  private[namespace] def apply(properties: Map[String, String], conf: Configuration, env: String => Option[String]): GlueNamespace = {
    properties.keys.filterNot(k => Properties.contains(k) || k.startsWith("storage.")).toSeq.sorted.headOption.foreach { k =>
      throw new InvalidArgumentException(s"Unknown glue namespace property '$k': a glue namespace takes " +
        s"${Properties.toSeq.sorted.mkString(", ")}.")
    }
    def prop(k: String) = properties.get(k).map(_.trim).filter(_.nonEmpty)
    val region = prop("region").orElse(env("AWS_REGION")).orElse(env("AWS_DEFAULT_REGION")).getOrElse(
      throw new InvalidArgumentException("A glue namespace needs property region (or AWS_REGION in the environment): " +
        "the AWS region of the Glue catalog, e.g. us-east-1."))
    val endpoint = prop("endpoint").getOrElse(s"https://glue.$region.amazonaws.com").stripSuffix("/")
    if (!(endpoint.startsWith("http://") || endpoint.startsWith("https://"))) {
      throw new InvalidArgumentException(s"Glue namespace endpoint '$endpoint' is not an http:// or https:// URL.")
    }
    val credentials: () => Credentials = (prop("access_key_id"), prop("secret_access_key")) match {
      case (Some(key), Some(secret)) =>
        val fixed = Credentials(key, secret, prop("session_token")); () => fixed
      case (Some(_), None) | (None, Some(_)) => throw new InvalidArgumentException("A glue namespace takes " +
        "access_key_id and secret_access_key together; give both, or neither to use the default AWS credentials.")
      case _ => () => defaultCredentials(env)
    }
    new GlueNamespace(URI.create(endpoint + "/"), region, prop("catalog_id"), credentials,
      prop("root").map(_.stripSuffix("/")), conf)
  }

  /** The AWS SDK's default credentials chain when the SDK is on the class path, else the environment's keys. */
  private def defaultCredentials(env: String => Option[String]): Credentials = {
    val sdk = try {
      val provider = Class.forName("software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider")
        .getMethod("create").invoke(null)
      val resolved = provider.getClass.getMethod("resolveCredentials").invoke(provider)
      def text(m: String) = resolved.getClass.getMethod(m).invoke(resolved).asInstanceOf[String]
      val token = try Option(text("sessionToken")) catch { case _: NoSuchMethodException => None }
      Some(Credentials(text("accessKeyId"), text("secretAccessKey"), token))
    } catch {
      case _: ClassNotFoundException | _: LinkageError => None
      case e: java.lang.reflect.InvocationTargetException => env("AWS_ACCESS_KEY_ID") match {
        case Some(_) => None
        case None => throw new InvalidArgumentException("A glue namespace found no AWS credentials: give " +
          s"access_key_id and secret_access_key, or configure the default chain (${e.getCause.getMessage}).")
      }
    }
    sdk.orElse((env("AWS_ACCESS_KEY_ID"), env("AWS_SECRET_ACCESS_KEY")) match {
      case (Some(k), Some(s)) => Some(Credentials(k, s, env("AWS_SESSION_TOKEN")))
      case _ => None
    }).getOrElse(throw new InvalidArgumentException("A glue namespace found no AWS credentials: give properties " +
      "access_key_id and secret_access_key, set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or put the AWS SDK " +
      "(hadoop-aws brings it) on the class path for its default credentials chain."))
  }

  private val AmzDate = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'")

  /**
   * The headers of a Glue JSON request signed with AWS Signature Version 4 (service `glue`, `POST`, no query),
   * `host` among them as signed; the caller sends the others, the HTTP client sets Host itself.
   */
  private[namespace] def sign(credentials: Credentials, region: String, endpoint: URI, target: String, body: Array[Byte],
      now: ZonedDateTime): Seq[(String, String)] = {
    val amzDate = AmzDate.format(now.withZoneSameInstant(ZoneOffset.UTC))
    val day = amzDate.take(8)
    val host = if (endpoint.getPort == -1) endpoint.getHost else s"${endpoint.getHost}:${endpoint.getPort}"
    val headers = (Seq("content-type" -> "application/x-amz-json-1.1", "host" -> host, "x-amz-date" -> amzDate,
      "x-amz-target" -> target) ++ credentials.sessionToken.map("x-amz-security-token" -> _)).sortBy(_._1)
    val signedHeaders = headers.map(_._1).mkString(";")
    val path = Option(endpoint.getRawPath).filter(_.nonEmpty).getOrElse("/")
    val canonical = Seq("POST", path, "", headers.map { case (k, v) => s"$k:${v.trim}\n" }.mkString, signedHeaders,
      hex(sha256(body))).mkString("\n")
    val scope = s"$day/$region/glue/aws4_request"
    val toSign = Seq("AWS4-HMAC-SHA256", amzDate, scope, hex(sha256(canonical.getBytes(UTF_8)))).mkString("\n")
    val key = Seq(region, "glue", "aws4_request").foldLeft(hmac(("AWS4" + credentials.secretKey).getBytes(UTF_8), day))(hmac)
    val signature = hex(hmac(key, toSign))
    val authorization = s"AWS4-HMAC-SHA256 Credential=${credentials.accessKey}/$scope, " +
      s"SignedHeaders=$signedHeaders, Signature=$signature"
    headers :+ ("authorization" -> authorization)
  }

  private def sha256(bytes: Array[Byte]): Array[Byte] = MessageDigest.getInstance("SHA-256").digest(bytes)

  private def hmac(key: Array[Byte], data: String): Array[Byte] = {
    val mac = Mac.getInstance("HmacSHA256")
    mac.init(new SecretKeySpec(key, "HmacSHA256"))
    mac.doFinal(data.getBytes(UTF_8))
  }

  private def hex(bytes: Array[Byte]): String = bytes.map(b => f"${b & 0xff}%02x").mkString
}
