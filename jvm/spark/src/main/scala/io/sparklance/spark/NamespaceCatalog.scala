package io.sparklance.spark

import java.util

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.catalyst.analysis.{NamespaceAlreadyExistsException, NoSuchNamespaceException, NoSuchTableException, NonEmptyNamespaceException, TableAlreadyExistsException}
import org.apache.spark.sql.connector.catalog.Identifier

import io.sparklance.core.{LanceException, UnsupportedFeatureException}
import io.sparklance.core.namespace.{DirectoryNamespace, GlueNamespace, HiveNamespace, LanceNamespace, NamespaceExistsException, NamespaceNotEmptyException, NamespaceNotFoundException, RestNamespace, TableInNamespaceExistsException, TableNotFoundException}

/**
 * The namespaces and tables of a [[LanceCatalog]] configured with a Lance Namespace (`impl = dir`, `rest`, `glue`,
 * `hive2` or `hive3`, docs/reading.md "Lance Namespaces"): Spark's namespace and table operations as calls of the
 * core's [[LanceNamespace]], its errors as Spark's (no such table, namespace exists, ...). Tables are then read and
 * written at the locations the namespace gives, as any table of the catalog. With a `parent` (the other
 * connector's option), Spark's namespaces are those below that namespace (e.g. the databases of Hive 3's catalog
 * `hive`), not below the root.
 */
private[spark] final class NamespaceCatalog(catalogName: String, namespace: LanceNamespace, singleLevel: Boolean,
    parent: Seq[String]) {
  import NamespaceCatalog.VirtualNamespace

  /**
   * The namespace's id of Spark namespace `ns`. With `single_level_ns` (the other connector's option, for
   * namespaces of root tables only) Spark sees one virtual namespace, `default`, which is the namespace's root.
   */
  private def nsId(ns: Array[String]): Seq[String] =
    if (!singleLevel) parent ++ ns
    else if (ns.sameElements(VirtualNamespace)) parent
    else throw new NoSuchNamespaceException(ns)

  private def id(ident: Identifier): Seq[String] = nsId(ident.namespace()) :+ ident.name()

  private def refuseInSingleLevel(ns: Array[String], what: String): Unit = if (singleLevel) {
    throw new LanceSparkException(new UnsupportedFeatureException(s"$what ${ns.mkString(".")} is not supported in " +
      s"catalog '$catalogName': it has single_level_ns = true, so its only namespace is the virtual 'default' (the " +
      "root of its Lance Namespace). Set single_level_ns to false to create and drop namespaces."))
  }

  /** Runs `body`, with the namespace's errors as Spark's, about table `ident` or namespace `ns`. */
  private def calling[T](ident: Option[Identifier], ns: Array[String])(body: => T): T =
    try body
    catch {
      case e: NamespaceNotFoundException => throw new NoSuchNamespaceException(sparkName(e.id))
      case e: NamespaceExistsException => throw new NamespaceAlreadyExistsException(sparkName(e.id))
      case e: NamespaceNotEmptyException => throw new NonEmptyNamespaceException(sparkName(e.id))
      case e: TableNotFoundException => throw new NoSuchTableException(ident.getOrElse(Identifier.of(e.id.init.toArray, e.id.last)))
      case e: TableInNamespaceExistsException =>
        throw new TableAlreadyExistsException(ident.getOrElse(Identifier.of(e.id.init.toArray, e.id.last)))
      case e: LanceException => throw new LanceSparkException(e)
    }

  /** Spark's name of namespace `id` (below the parent, when it is in it). */
  private def sparkName(id: Seq[String]): Array[String] = (if (id.startsWith(parent)) id.drop(parent.size) else id).toArray

  /** Where table `ident` is, if the namespace has it. */
  def location(ident: Identifier): Option[String] = calling(Some(ident), ident.namespace())(namespace.tableLocation(id(ident)))

  def listTables(ns: Array[String]): Array[Identifier] =
    calling(None, ns)(namespace.listTables(nsId(ns)).map(t => Identifier.of(ns, t)).toArray)

  def listNamespaces(parent: Array[String]): Array[Array[String]] =
    if (singleLevel) { if (parent.isEmpty) Array(VirtualNamespace) else { nsId(parent); Array.empty } }
    else calling(None, parent)(namespace.listNamespaces(nsId(parent)).map(n => parent :+ n).toArray)

  def namespaceExists(ns: Array[String]): Boolean =
    if (singleLevel) ns.sameElements(VirtualNamespace) else calling(None, ns)(namespace.namespaceExists(nsId(ns)))

  def namespaceMetadata(ns: Array[String]): util.Map[String, String] =
    calling(None, ns)(namespace.namespaceProperties(nsId(ns))).asJava

  /**
   * CREATE NAMESPACE: its COMMENT and properties are the namespace's properties (other tools see them);
   * LOCATION is refused where the namespace decides where tables go (dir, rest), and kept where it takes one (glue).
   */
  def createNamespace(ns: Array[String], metadata: util.Map[String, String]): Unit = {
    refuseInSingleLevel(ns, "CREATE NAMESPACE")
    metadata.asScala.get("location").filterNot(_ => namespace.takesLocation).foreach { l =>
      throw new LanceSparkException(new UnsupportedFeatureException(s"LOCATION '$l' is not supported for namespace " +
        s"${ns.mkString(".")} of catalog '$catalogName': its ${namespace.describe} decides where tables go. Create " +
        "the namespace without LOCATION."))
    }
    calling(None, ns)(namespace.createNamespace(nsId(ns), metadata.asScala.toMap))
  }

  /**
   * DROP NAMESPACE; with CASCADE its namespaces are dropped first, deepest first, and its tables deregistered (their
   * files kept, as DROP TABLE keeps them).
   */
  def dropNamespace(ns: Array[String], cascade: Boolean): Boolean = calling(None, ns) {
    refuseInSingleLevel(ns, "DROP NAMESPACE")
    if (!namespace.namespaceExists(nsId(ns))) throw new NoSuchNamespaceException(ns)
    if (cascade) {
      namespace.checkDropWithContents(nsId(ns))
      dropContents(nsId(ns))
    }
    namespace.dropNamespace(nsId(ns))
    true
  }

  private def dropContents(ns: Seq[String]): Unit = {
    namespace.listNamespaces(ns).foreach { child =>
      dropContents(ns :+ child)
      namespace.dropNamespace(ns :+ child)
    }
    namespace.listTables(ns).foreach(t => namespace.deregisterTable(ns :+ t))
  }

  /** Adds table `ident` to its namespace for a CREATE TABLE; its location, where the first version goes. */
  def declare(ident: Identifier): String = calling(Some(ident), ident.namespace())(namespace.declareTable(id(ident)))

  /**
   * Adds the table at `location` (CREATE TABLE ... LOCATION: an existing Lance table, or where a new one's first
   * version goes) to the namespace as `ident`; the location as the namespace resolves it.
   */
  def register(ident: Identifier, location: String): String =
    calling(Some(ident), ident.namespace())(namespace.registerTable(id(ident), location))

  /**
   * DROP TABLE: removes table `ident` from its namespace and keeps its files, as the other connector does (the table
   * can be registered again with CREATE TABLE ... LOCATION); false if the namespace has no such table.
   */
  def deregister(ident: Identifier): Boolean =
    calling(Some(ident), ident.namespace())(namespace.deregisterTable(id(ident)).isDefined)

  /** ALTER TABLE ... RENAME TO: the namespace renames the table; its files stay where they are. */
  def rename(from: Identifier, to: Identifier): Unit =
    calling(Some(from), from.namespace()) {
      try namespace.renameTable(id(from), id(to))
      catch { case e: TableInNamespaceExistsException => throw new TableAlreadyExistsException(to) }
    }

  /** DROP TABLE ... PURGE: removes table `ident` and deletes its files; false if the namespace has no such table. */
  def purge(ident: Identifier): Boolean = calling(Some(ident), ident.namespace())(namespace.dropTable(id(ident)))
}

private[spark] object NamespaceCatalog {

  /** The catalog options that configure a namespace (besides `impl`): lance-namespace's property names. */
  val Properties: Set[String] =
    DirectoryNamespace.Properties ++ RestNamespace.Properties ++ GlueNamespace.Properties ++ HiveNamespace.Properties

  /** Spark's one namespace of a catalog with `single_level_ns = true`. */
  val VirtualNamespace: Array[String] = Array("default")

  /** The other connector's catalog option for a namespace of root tables only (seen by Spark as `default`). */
  val SingleLevel = "single_level_ns"

  /** The other connector's catalog options for the namespace Spark's namespaces are below, and its delimiter. */
  val Parent = "parent"
  val ParentDelimiter = "parent_delimiter"

  /**
   * Whether a catalog option is a property of its namespace (`header.*` of a REST one included, also spelt
   * `headers.*` as the other connector does), or [[SingleLevel]].
   */
  def isProperty(key: String): Boolean =
    Properties.contains(key) || key == SingleLevel || key == Parent || key == ParentDelimiter || key.startsWith("header.") || key.startsWith("headers.")

  /**
   * The namespace catalog that catalog `name`'s options configure, if they name an `impl`; `warehouse` stands for
   * a dir namespace's `root`. Its properties are checked by the namespace (unknown ones refused, by name).
   */
  def connect(name: String, options: Map[String, String], conf: Configuration): Option[NamespaceCatalog] =
    options.collectFirst { case (k, v) if k.equalsIgnoreCase("impl") => v.trim }.map { impl =>
      val props = options.collect {
        case (k, v) if k.equalsIgnoreCase("warehouse") || k.equalsIgnoreCase("root") => "root" -> TableAccess.qualify(conf, v.trim.stripSuffix("/"))
        case (k, v) if k.toLowerCase.startsWith("header.") => "header." + k.substring("header.".length) -> v
        case (k, v) if k.toLowerCase.startsWith("headers.") => "header." + k.substring("headers.".length) -> v
        case (k, v) if isProperty(k.toLowerCase) && !Seq(SingleLevel, Parent, ParentDelimiter).exists(k.equalsIgnoreCase) =>
          k.toLowerCase -> v
      }
      val singleLevel = options.collectFirst { case (k, v) if k.equalsIgnoreCase(SingleLevel) => v.trim.toLowerCase } match {
        case None | Some("false") => false
        case Some("true") => true
        case Some(other) => throw new LanceSparkException(new io.sparklance.core.InvalidArgumentException(
          s"Catalog '$name' option $SingleLevel must be true or false, not '$other'."))
      }
      def option(key: String) = options.collectFirst { case (k, v) if k.equalsIgnoreCase(key) => v }
      val delimiter = option(ParentDelimiter).filter(_.nonEmpty).getOrElse(".")
      val parent = option(Parent).map(_.trim).filter(_.nonEmpty)
        .map(_.split(java.util.regex.Pattern.quote(delimiter), -1).map(_.trim).toSeq).getOrElse(Nil)
      if (parent.exists(_.isEmpty)) throw new LanceSparkException(new io.sparklance.core.InvalidArgumentException(
        s"Catalog '$name' option $Parent '${option(Parent).getOrElse("")}' has an empty name between its " +
          s"'$delimiter' delimiters."))
      val ns = LanceSparkException.translate(LanceNamespace.connect(props + ("impl" -> impl), conf))
      if (parent.nonEmpty && !LanceSparkException.translate(ns.namespaceExists(parent))) {
        throw new LanceSparkException(new io.sparklance.core.namespace.NamespaceNotFoundException(parent,
          s"${ns.describe} (catalog '$name' option $Parent)"))
      }
      new NamespaceCatalog(name, ns, singleLevel, parent)
    }
}
