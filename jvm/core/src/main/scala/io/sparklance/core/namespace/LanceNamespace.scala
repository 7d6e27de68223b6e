package io.sparklance.core.namespace

import org.apache.hadoop.conf.Configuration

import io.sparklance.core.{InvalidArgumentException, LanceException, UnsupportedFeatureException}

/**
 * A Lance Namespace (the Lance Namespace spec that lance-namespace 0.13 and pylance 14 implement): a tree of
 * namespaces holding tables, each table a Lance table at a location the namespace gives. An identifier is the path
 * of names from the root: the root namespace is the empty path, `Seq("db", "t")` is table `t` of namespace `db`.
 *
 * Implementations: [[DirectoryNamespace]] (`impl = dir`: a `__manifest` table under a root directory) and
 * [[RestNamespace]] (`impl = rest`: a server speaking the REST spec), [[GlueNamespace]] (`impl = glue`: AWS Glue's
 * Data Catalog), [[HiveNamespace]] (`impl = hive2` or `hive3`: a Hive Metastore). Missing namespaces and tables are reported as
 * [[NamespaceNotFoundException]] and [[TableNotFoundException]], names taken as [[NamespaceExistsException]] and
 * [[TableInNamespaceExistsException]], so that engines can map them to their own errors.
 */
trait LanceNamespace {

  /** The names of the namespaces directly in namespace `parent`, sorted. */
  def listNamespaces(parent: Seq[String]): Seq[String]

  def namespaceExists(id: Seq[String]): Boolean

  /** The properties namespace `id` was created with. */
  def namespaceProperties(id: Seq[String]): Map[String, String]

  /** Creates namespace `id` (its parent must exist) with `properties`. */
  def createNamespace(id: Seq[String], properties: Map[String, String]): Unit

  /** Whether a namespace created with property `location` puts its tables there (else the implementation decides). */
  def takesLocation: Boolean = false

  /** Drops namespace `id`, which must hold no table and no namespace ([[NamespaceNotEmptyException]]). */
  def dropNamespace(id: Seq[String]): Unit

  /**
   * Refuses, before anything is dropped, to drop namespace `id` with its contents (an engine's DROP ... CASCADE,
   * which drops the namespaces and tables below first) where this implementation drops it only when it is empty.
   */
  def checkDropWithContents(id: Seq[String]): Unit = ()

  /** The names of the tables directly in namespace `namespace`, sorted. */
  def listTables(namespace: Seq[String]): Seq[String]

  /** Where table `id` is (a Lance table, or the place one is being created), if the namespace has it. */
  def tableLocation(id: Seq[String]): Option[String]

  /**
   * Adds table `id` to its namespace without data and returns its location, where the caller then commits the
   * table's first version (the spec's DeclareTable). Fails if the namespace has a table of that name.
   */
  def declareTable(id: Seq[String]): String

  /**
   * Adds the table at `location` to its namespace under `id` (the spec's RegisterTable) and returns the location as
   * the namespace resolves it: an existing Lance table, or the place where the caller then commits a new table's
   * first version. Fails if the namespace has a table of that name.
   */
  def registerTable(id: Seq[String], location: String): String

  /**
   * Removes table `id` from its namespace and keeps its files (the spec's DeregisterTable); the location it had,
   * or None if there is no such table.
   */
  def deregisterTable(id: Seq[String]): Option[String]

  /** Gives table `id` the name `newId` (maybe in another namespace, which must exist); its files stay where they are. */
  def renameTable(id: Seq[String], newId: Seq[String]): Unit

  /** Removes table `id` from its namespace and deletes its files; false if there is no such table. */
  def dropTable(id: Seq[String]): Boolean

  /** What this namespace is, for messages: its implementation and root or URI. */
  def describe: String
}

object LanceNamespace {

  /** The separator of the names in an object id (the spec's default delimiter). */
  val Delimiter = "$"

  /** An identifier as the spec's string form: names joined by [[Delimiter]]. */
  def objectId(id: Seq[String]): String = id.mkString(Delimiter)

  /** The implementations, by the `impl` property's value. */
  val Impls: Seq[String] = Seq("dir", "rest", "glue", "hive2", "hive3")

  /**
   * The namespace that `properties` configure (`impl` = dir, rest, glue, hive2 or hive3, and that implementation's properties as
   * lance-namespace names them); `conf` holds the file-system settings tables are read and written with. Unknown
   * properties and malformed values are an [[InvalidArgumentException]] naming them.
   */
  def connect(properties: Map[String, String], conf: Configuration): LanceNamespace =
    properties.get("impl").map(_.trim) match {
      case Some("dir") => DirectoryNamespace(properties - "impl", conf)
      case Some("rest") => RestNamespace(properties - "impl")
      case Some("glue") => GlueNamespace(properties - "impl", conf)
      case Some("hive2") => HiveNamespace.hive2(properties - "impl", conf)
      case Some("hive3") => HiveNamespace.hive3(properties - "impl", conf)
      case other => throw new UnsupportedFeatureException(s"Lance namespace impl '${other.getOrElse("")}' is not " +
        s"supported: use one of ${Impls.mkString(", ")}.")
    }

  /**
   * Checks a name of a namespace or table: not empty, not `.` or `..`, without the delimiter `$`, `/`, `\` or NUL
   * (a name becomes part of an object id and of a directory name).
   */
  def checkName(name: String, what: String): String = {
    if (name.isEmpty || name == "." || name == ".." || name.exists(c => c == '$' || c == '/' || c == '\\' || c == '\u0000')) {
      throw new InvalidArgumentException(s"'$name' is not a valid $what name in a Lance namespace: names are not " +
        "empty, not '.' or '..', and hold no '$', '/' or '\\' ('$' separates the names of an object id).")
    }
    name
  }

  /** A boolean property: `true` or `false` (any case); anything else is refused, naming the property. */
  private[namespace] def flag(properties: Map[String, String], key: String, default: Boolean): Boolean =
    properties.get(key).map(_.trim.toLowerCase) match {
      case None => default
      case Some("true") => true
      case Some("false") => false
      case Some(v) => throw new InvalidArgumentException(s"Namespace property $key must be true or false, not '$v'.")
    }

  /** A JSON object's members as text (a string member as it is, any other value as JSON). */
  private[namespace] def textMap(node: com.fasterxml.jackson.databind.JsonNode): Map[String, String] = {
    val out = Map.newBuilder[String, String]
    val names = TextMapper.convertValue(node, classOf[java.util.Map[String, Object]]).keySet().iterator()
    while (names.hasNext) {
      val name = names.next()
      val value = node.get(name)
      out += name -> (if (value.isTextual) value.asText else value.toString)
    }
    out.result()
  }

  /** Sends an HTTP request of a namespace client; failing to reach `where` is a storage error naming `what`. */
  private[namespace] def send(client: java.net.http.HttpClient, request: java.net.http.HttpRequest, where: String,
      what: String): java.net.http.HttpResponse[String] =
    try client.send(request, java.net.http.HttpResponse.BodyHandlers.ofString(java.nio.charset.StandardCharsets.UTF_8))
    catch {
      case e: java.io.IOException => throw new io.sparklance.core.StorageException(where, what, e)
      case e: InterruptedException =>
        Thread.currentThread().interrupt()
        throw new io.sparklance.core.StorageException(where, what, new java.io.IOException("interrupted", e))
    }

  /**
   * Deletes directory `dir` and everything below it (a dropped table's files); a directory that cannot be listed
   * (already gone) is only deleted itself.
   */
  private[namespace] def deleteTree(storage: io.sparklance.core.storage.Storage, dir: String): Unit = {
    val entries = try storage.list(dir) catch { case _: io.sparklance.core.StorageException => Nil }
    entries.foreach(e => if (e.isDirectory) deleteTree(storage, e.path) else storage.delete(e.path))
    storage.delete(dir)
  }

  private val TextMapper = new com.fasterxml.jackson.databind.ObjectMapper()

  private[namespace] def show(id: Seq[String]): String = if (id.isEmpty) "the root namespace" else id.mkString(".")
}

/** A namespace asked for does not exist. */
final class NamespaceNotFoundException(val id: Seq[String], where: String)
    extends LanceException("LANCE_NAMESPACE_NOT_FOUND", "42704",
      s"Namespace ${id.mkString(".")} does not exist in $where.", null)

/** A namespace to create exists. */
final class NamespaceExistsException(val id: Seq[String], where: String)
    extends LanceException("LANCE_NAMESPACE_EXISTS", "42P06",
      s"Namespace ${id.mkString(".")} already exists in $where.", null)

/** A namespace to drop holds tables or namespaces. */
final class NamespaceNotEmptyException(val id: Seq[String], where: String, detail: String)
    extends LanceException("LANCE_NAMESPACE_NOT_EMPTY", "2BP01",
      s"Namespace ${id.mkString(".")} of $where is not empty: $detail. Drop its tables and namespaces first.", null)

/** A table asked for is not in its namespace. */
final class TableNotFoundException(val id: Seq[String], where: String)
    extends LanceException("LANCE_TABLE_NOT_FOUND", "42P01", s"Table ${id.mkString(".")} does not exist in $where.", null)

/** A table to create is in its namespace already. */
final class TableInNamespaceExistsException(val id: Seq[String], where: String)
    extends LanceException("LANCE_TABLE_EXISTS", "42P07", s"Table ${id.mkString(".")} already exists in $where.", null)
