package io.sparklance.core.namespace

import java.io.IOException
import java.net.URI

import org.apache.hadoop.conf.Configuration

import io.sparklance.core.{InvalidArgumentException, StorageException, UnsupportedFeatureException}
import io.sparklance.core.namespace.HiveMetastoreClient.{ApplicationException, Bin, Bool, I32, ListOf, Struct, TString, TStruct, Text, TextMap}
import io.sparklance.core.storage.{HadoopStorage, Storage}

/**
 * A Hive Metastore as a Lance Namespace, laid out as lance-namespace-impls' `hive2` and `hive3` implementations keep
 * it (their specs, docs/src/hive2.md and hive3.md): the metastore is the root namespace; with `hive2` each database
 * is a namespace below it, with `hive3` each catalog is, and its databases are below the catalog. A Lance table is
 * a Hive table of type `EXTERNAL_TABLE` whose parameters hold `table_type = lance` (any case) and whose storage
 * descriptor's location is the table's directory; other Hive tables are not listed, and refused by name. New tables
 * get `managed_by = storage` (their versions are the storage's) and `EXTERNAL = TRUE` (which keeps a Hive 2
 * metastore from recording them as managed tables, whose files it would move or delete). A new table's directory is
 * `<root>/<database>.db/<table>` (`<root>/<catalog>/<database>.db/<table>` in a catalog other than `hive`), or
 * `<database location>/<table>` without `root`.
 *
 * The metastore is reached through its Thrift API ([[HiveMetastoreClient]]). With `hive3` the databases of catalog
 * `hive` (the metastore's default) are named plainly, which a Hive 2 metastore serves too; those of other catalogs
 * as Hive 3 names them, `@<catalog>#<database>`, which needs a Hive 3 metastore. A catalog is created and dropped
 * with Hive 3's `create_catalog` and `drop_catalog`, as lance-namespace-impls' `hive3` does: its COMMENT is the
 * catalog's description, its location `location` (or `catalog.location.uri`), else `<root>/<catalog>`; it is
 * dropped only when empty (RESTRICT), and not while files are below its location (Hive 3 deletes the location with
 * the catalog, and tables dropped without PURGE keep their files there). A metastore with SASL (Kerberos,
 * `hive.metastore.sasl.enabled`) is refused by name: this client speaks plain Thrift.
 *
 * Properties: `uri` (the metastore, `thrift://host:port`; else the Hadoop setting `hive.metastore.uris`, the first of
 * its URIs), `root`, `ugi` (`user:group1,group2`, sent with Hive's `set_ugi`), `client.pool-size` (accepted; each
 * call opens its own connection).
 */
final class HiveNamespace private (client: HiveMetastoreClient, catalogs: Boolean, root: Option[String],
    conf: Configuration) extends LanceNamespace {
  import HiveNamespace._

  private val impl = if (catalogs) "hive3" else "hive2"

  override def describe: String = s"$impl namespace of the Hive Metastore ${client.uri}"

  private lazy val storage: Storage = new HadoopStorage(conf)

  /** A database's name in this namespace's messages: `catalog.database` with catalogs, else `database`. */
  private def show(db: Database): String =
    (if (catalogs) Seq(db.catalog.getOrElse(DefaultCatalog), db.name) else Seq(db.name)).mkString(".")

  private def catalogOf(name: String): Option[String] =
    if (name.equalsIgnoreCase(DefaultCatalog)) None else Some(name.toLowerCase)

  /** The database namespace `id` is, if it is one (a catalog, the root and deeper ids are not). */
  private def databaseOf(id: Seq[String]): Option[Database] = (catalogs, id) match {
    case (false, Seq(db)) => Some(Database(None, db))
    case (true, Seq(c, db)) => Some(Database(catalogOf(c), db))
    case _ => None
  }

  private def database(id: Seq[String], what: String): Database = databaseOf(id).getOrElse {
    val levels = if (catalogs) "catalog.database" else "database"
    throw new UnsupportedFeatureException(s"Cannot $what ${LanceNamespace.show(id)} of $describe: its namespaces " +
      s"that hold tables are $levels.")
  }

  private def tableId(id: Seq[String]): (Database, String) =
    if (id.nonEmpty) databaseOf(id.init).map(_ -> id.last).getOrElse(throw new UnsupportedFeatureException(
      s"Table ${id.mkString(".")} is not supported by $describe: a table is in a " +
        (if (catalogs) "database of a catalog (catalog.database.table)." else "database (database.table).")))
    else throw new InvalidArgumentException(s"An empty table identifier is not a table of $describe.")

  /** The metastore's answer to `method`; `declared` names its declared exceptions by field id. */
  private def call(method: String, what: String, args: (Short, HiveMetastoreClient.Value)*)(
      declared: PartialFunction[(Int, String), Exception]): Option[HiveMetastoreClient.Value] =
    client.call(method, args: _*) match {
      case Right(v) => v
      case Left(e) if declared.isDefinedAt(e) => throw declared(e)
      case Left((_, message)) => throw new StorageException(client.uri.toString, what, new IOException(message))
    }

  private def arg(id: Int, value: HiveMetastoreClient.Value): (Short, HiveMetastoreClient.Value) = id.toShort -> value

  private def strings(v: Option[HiveMetastoreClient.Value]): Seq[String] =
    v.collect { case l: ListOf => l.items.collect { case b: Bin => b.text } }.getOrElse(Nil)

  // ------------------------------------------------------------------------------------------------ namespaces

  /** The metastore's catalogs; a metastore without catalogs (Hive 2) has the default one only. */
  private def catalogNames(): Seq[String] =
    try {
      call("get_catalogs", "list the catalogs of")(PartialFunction.empty).collect { case s: Struct => s }
        .map(s => strings(s.field(1))).getOrElse(Nil)
    } catch { case e: ApplicationException if e.kind == HiveMetastoreClient.UnknownMethod => Seq(DefaultCatalog) }

  private def catalogExists(name: String): Boolean = catalogNames().exists(_.equalsIgnoreCase(name))

  /** Catalog `name` (Hive 3's `Catalog`: 1 name, 2 description, 3 locationUri), if the metastore has it. */
  private def getCatalog(name: String): Option[Struct] =
    try {
      client.call("get_catalog", arg(1, Struct(Seq(arg(1, Text(name.toLowerCase)))))) match {
        case Right(v) => v.collect { case s: Struct => s }.flatMap(_.struct(1))
        case Left((1, _)) => None // NoSuchObjectException
        case Left((_, message)) => throw new StorageException(client.uri.toString, s"describe catalog $name of",
          new IOException(message))
      }
    } catch { case e: ApplicationException if e.kind == HiveMetastoreClient.UnknownMethod =>
      if (name.equalsIgnoreCase(DefaultCatalog)) Some(Struct(Seq(arg(1, Text(DefaultCatalog))))) else None
    }

  private def databaseNames(catalog: Option[String]): Seq[String] = catalog match {
    case None => strings(call("get_all_databases", "list the databases of")(PartialFunction.empty))
    case Some(c) => strings(call("get_databases", s"list the databases of catalog $c of", arg(1, Text(s"@$c#")))(
      PartialFunction.empty))
  }

  private def getDatabase(db: Database): Option[Struct] =
    try {
      client.call("get_database", arg(1, Text(db.wire))) match {
        case Right(v) => v.collect { case s: Struct => s }
        case Left((1, _)) => None // NoSuchObjectException
        case Left((_, message)) => throw new StorageException(client.uri.toString, s"describe database ${show(db)} of",
          new IOException(message))
      }
    } catch { case _: ApplicationException if db.catalog.isDefined => None } // a Hive 2 metastore: no such catalog

  override def listNamespaces(parent: Seq[String]): Seq[String] = (catalogs, parent) match {
    case (_, Seq()) => (if (catalogs) catalogNames() else databaseNames(None)).sorted
    case (true, Seq(c)) =>
      if (!catalogExists(c)) throw new NamespaceNotFoundException(parent, describe)
      databaseNames(catalogOf(c)).sorted
    case _ =>
      if (!namespaceExists(parent)) throw new NamespaceNotFoundException(parent, describe)
      Nil
  }

  override def namespaceExists(id: Seq[String]): Boolean = (catalogs, id) match {
    case (_, Seq()) => true
    case (true, Seq(c)) => catalogExists(c)
    case _ => databaseOf(id).exists(db => getDatabase(db).isDefined)
  }

  override def namespaceProperties(id: Seq[String]): Map[String, String] = (catalogs, id) match {
    case (_, Seq()) => Map.empty
    case (true, Seq(c)) =>
      val catalog = getCatalog(c).getOrElse(throw new NamespaceNotFoundException(id, describe))
      catalog.text(2).filter(_.nonEmpty).map("comment" -> _).toMap ++ catalog.text(3).map("location" -> _)
    case _ =>
      val db = getDatabase(database(id, "describe")).getOrElse(throw new NamespaceNotFoundException(id, describe))
      db.textMap(4) ++ db.text(3).map("location" -> _) ++ db.text(2).filter(_.nonEmpty).map("comment" -> _) ++
        db.text(6).filter(_.nonEmpty).map("owner" -> _)
  }

  /** A database's location: its tables go below it when there is no `root`. */
  override def takesLocation: Boolean = true

  override def createNamespace(id: Seq[String], properties: Map[String, String]): Unit =
    if (catalogs && id.size == 1) createCatalog(id.head, properties) else createDatabase(id, properties)

  private def createDatabase(id: Seq[String], properties: Map[String, String]): Unit = {
    val db = database(id, "create")
    LanceNamespace.checkName(db.name, "namespace")
    if (catalogs && !catalogExists(id.head)) throw new NamespaceNotFoundException(id.init, describe)
    val location = properties.get("location").map(_.stripSuffix("/"))
      .orElse(root.map(r => db.catalog.fold(s"$r/${db.name}.db")(c => s"$r/$c/${db.name}.db")))
    val fields = Seq(arg(1, Text(db.name)), arg(2, Text(properties.getOrElse("comment", ""))),
      arg(4, TextMap(properties -- Seq("comment", "owner", "location")))) ++
      location.map(l => arg(3, Text(l))) ++
      Seq(arg(6, Text(properties.getOrElse("owner", System.getProperty("user.name", "")))), arg(7, I32(UserPrincipal))) ++
      db.catalog.map(c => arg(8, Text(c)))
    call("create_database", s"create database ${show(db)} in", arg(1, Struct(fields.sortBy(_._1)))) {
      case (1, _) => new NamespaceExistsException(id, describe)
      case (2, message) => new InvalidArgumentException(s"$describe refused to create database ${show(db)}: $message")
    }
    ()
  }

  override def dropNamespace(id: Seq[String]): Unit =
    if (catalogs && id.size == 1) dropCatalog(id.head) else dropDatabase(id)

  private def dropDatabase(id: Seq[String]): Unit = {
    val db = database(id, "drop")
    if (getDatabase(db).isEmpty) throw new NamespaceNotFoundException(id, describe)
    // The metastore would drop the database's tables with it, Lance's or not: refuse while it holds any.
    val tables = hiveTableNames(db)
    if (tables.nonEmpty) throw new NamespaceNotEmptyException(id, describe,
      s"database ${show(db)} holds ${tables.size} table(s) (${tables.take(5).mkString(", ")})")
    call("drop_database", s"drop database ${show(db)} of", arg(1, Text(db.wire)), arg(2, Bool(false)), arg(3, Bool(false))) {
      case (1, _) => new NamespaceNotFoundException(id, describe)
      case (2, message) => new NamespaceNotEmptyException(id, describe, message)
    }
    ()
  }

  /** A catalog is dropped only when empty (lance-namespace-impls' RESTRICT): refused before CASCADE drops anything. */
  override def checkDropWithContents(id: Seq[String]): Unit = if (catalogs && id.size == 1) {
    catalogContents(id.head).foreach { what => throw new UnsupportedFeatureException(s"Dropping Hive catalog " +
      s"${id.head} of $describe with its contents (CASCADE) is not supported: $what, and a catalog is dropped only " +
      "when it is empty, as lance-namespace-impls' hive3 drops it. Drop its databases first (DROP NAMESPACE " +
      s"${id.head}.<database> CASCADE), then the catalog.") }
  }

  /**
   * What catalog `name` holds that keeps it from being dropped, if anything: a database other than its `default`
   * (which Hive 3 creates with a catalog and drops with it), or a table in that one.
   */
  private def catalogContents(name: String): Option[String] = {
    val databases = databaseNames(catalogOf(name))
    val others = databases.filterNot(_ == DefaultDatabase)
    if (others.nonEmpty) Some(s"catalog $name holds ${others.size} database(s) (${others.sorted.take(5).mkString(", ")})")
    else if (!databases.contains(DefaultDatabase)) None
    else {
      val tables = hiveTableNames(Database(catalogOf(name), DefaultDatabase))
      if (tables.isEmpty) None
      else Some(s"its database $DefaultDatabase holds ${tables.size} table(s) (${tables.take(5).mkString(", ")})")
    }
  }

  /** Hive 3's `create_catalog`; a Hive 2 metastore has no catalogs. */
  private def createCatalog(name: String, properties: Map[String, String]): Unit = {
    LanceNamespace.checkName(name, "namespace")
    def first(keys: String*) = keys.flatMap(properties.get).map(_.trim).find(_.nonEmpty)
    // Spark adds `owner` to every CREATE NAMESPACE; a Hive catalog has no owner, nor other properties.
    (properties.keySet -- Seq("comment", "description", "location", "catalog.location.uri", "owner")).toSeq.sorted
      .headOption.foreach { k => throw new UnsupportedFeatureException(s"Property $k of Hive catalog $name is not " +
        s"supported by $describe: a Hive catalog holds a description (COMMENT) and a location (LOCATION) only.") }
    val location = first("location", "catalog.location.uri").map(_.stripSuffix("/"))
      .orElse(root.map(r => s"$r/${name.toLowerCase}")).getOrElse(throw new InvalidArgumentException(s"Hive catalog " +
        s"$name needs a location: create it with LOCATION '<directory>', or give $describe property root."))
    val catalog = Struct(Seq(arg(1, Text(name.toLowerCase))) ++ first("comment", "description").map(d => arg(2, Text(d))) ++
      Seq(arg(3, Text(location))))
    try {
      call("create_catalog", s"create catalog $name in", arg(1, Struct(Seq(arg(1, catalog))))) {
        case (1, _) => new NamespaceExistsException(Seq(name), describe)
        case (2, message) => new InvalidArgumentException(s"$describe refused to create catalog $name: $message")
      }
    } catch { case e: ApplicationException if e.kind == HiveMetastoreClient.UnknownMethod =>
      throw new UnsupportedFeatureException(s"Creating Hive catalog $name is not supported by $describe: the " +
        "metastore has no catalogs (a Hive 2 metastore); with Hive 3's metastore, catalogs are created here.")
    }
    ()
  }

  /**
   * Hive 3's `drop_catalog`, for an empty catalog ([[catalogContents]]). Hive 3 deletes the catalog's location (and the
   * `default` database's) with it, so files below them (tables dropped without PURGE) are refused, naming one.
   */
  private def dropCatalog(name: String): Unit = {
    if (name.equalsIgnoreCase(DefaultCatalog)) throw new UnsupportedFeatureException(s"Dropping Hive catalog " +
      s"$DefaultCatalog of $describe is not supported: it is the metastore's default catalog, which Hive keeps.")
    val catalog = getCatalog(name).getOrElse(throw new NamespaceNotFoundException(Seq(name), describe))
    catalogContents(name).foreach(what => throw new NamespaceNotEmptyException(Seq(name), describe, what))
    val defaultDb = getDatabase(Database(catalogOf(name), DefaultDatabase))
    (catalog.text(3).toSeq ++ defaultDb.flatMap(_.text(3))).map(_.stripSuffix("/")).filter(_.nonEmpty).distinct
      .foreach { location =>
        firstFile(location, 0).foreach { file => throw new UnsupportedFeatureException(s"Dropping Hive catalog " +
          s"$name of $describe is not supported while files are below its location $location (e.g. $file): the " +
          "metastore deletes the location with the catalog. Purge or move them (tables dropped without PURGE keep " +
          "their files), then drop the catalog.") }
      }
    call("drop_catalog", s"drop catalog $name of", arg(1, Struct(Seq(arg(1, Text(name.toLowerCase)))))) {
      case (1, _) => new NamespaceNotFoundException(Seq(name), describe)
      case (2, message) => new NamespaceNotEmptyException(Seq(name), describe, message)
    }
    ()
  }

  /** A file somewhere below directory `dir`, if there is one (depth-first, bounded in depth). */
  private def firstFile(dir: String, depth: Int): Option[String] =
    if (depth > MaxDepth) Some(dir)
    else {
      val entries = storage.list(dir)
      entries.find(!_.isDirectory).map(_.path)
        .orElse(entries.iterator.filter(_.isDirectory).map(e => firstFile(e.path, depth + 1)).collectFirst { case Some(f) => f })
    }

  // ------------------------------------------------------------------------------------------------ tables

  private def hiveTableNames(db: Database): Seq[String] =
    strings(call("get_all_tables", s"list the tables of database ${show(db)} of", arg(1, Text(db.wire)))(PartialFunction.empty))

  override def listTables(namespace: Seq[String]): Seq[String] = databaseOf(namespace) match {
    case None =>
      if (!namespaceExists(namespace)) throw new NamespaceNotFoundException(namespace, describe)
      Nil // the root and catalogs hold no tables
    case Some(db) =>
      if (getDatabase(db).isEmpty) throw new NamespaceNotFoundException(namespace, describe)
      hiveTableNames(db).flatMap(t => getTable(db, t)).filter(isLance).flatMap(_.text(1)).distinct.sorted
  }

  private def getTable(db: Database, name: String): Option[Struct] =
    try {
      client.call("get_table", arg(1, Text(db.wire)), arg(2, Text(name))) match {
        case Right(v) => v.collect { case s: Struct => s }
        case Left((2, _)) => None // NoSuchObjectException
        case Left((_, message)) => throw new StorageException(client.uri.toString,
          s"describe table ${show(db)}.$name of", new IOException(message))
      }
    } catch { case _: ApplicationException if db.catalog.isDefined => None }

  /** Table `id` if the metastore has it; a Hive table that is not Lance's is refused, naming it. */
  private def lanceTable(id: Seq[String]): Option[(Database, String, Struct)] = {
    val (db, name) = tableId(id)
    getTable(db, name).map { t =>
      if (!isLance(t)) throw new UnsupportedFeatureException(s"Hive table ${id.mkString(".")} of $describe is not a " +
        s"Lance table (its parameters have table_type = ${t.textMap(9).collectFirst { case (k, v) if
          k.equalsIgnoreCase(TableTypeKey) => v }.getOrElse("(none)")}, not lance): sparklance reads and writes Lance " +
        "tables only. Read it with Spark's Hive catalog.")
      (db, name, t)
    }
  }

  override def tableLocation(id: Seq[String]): Option[String] = {
    if (databaseOf(id.dropRight(1)).isEmpty) return None
    lanceTable(id).map { case (_, _, t) =>
      // managed_by = impl: the table's versions are committed through the metastore, which sparklance does not do.
      if (t.textMap(9).exists { case (k, v) => k.equalsIgnoreCase("managed_by") && v.equalsIgnoreCase("impl") }) {
        throw new UnsupportedFeatureException(s"Hive table ${id.mkString(".")} of $describe has managed_by = impl " +
          "(its versions are committed through the metastore), which sparklance does not support: it reads and " +
          "commits tables whose versions the storage keeps (managed_by = storage, or unset).")
      }
      locationOf(t).getOrElse(throw new UnsupportedFeatureException(s"Hive table ${id.mkString(".")} of $describe " +
        "has no storage location; sparklance reads and writes a table at its location."))
    }
  }

  private def createTable(id: Seq[String], location: String): Unit = {
    val (db, name) = tableId(id)
    id.foreach(LanceNamespace.checkName(_, "namespace or table"))
    if (getDatabase(db).isEmpty) throw new NamespaceNotFoundException(id.init, describe)
    val parameters = Map(TableTypeKey -> LanceType, "managed_by" -> "storage", "EXTERNAL" -> "TRUE")
    val sd = Struct(Seq(arg(1, ListOf(TStruct, Nil)), arg(2, Text(location)), arg(3, Text(InputFormat)),
      arg(4, Text(OutputFormat)), arg(5, Bool(false)), arg(6, I32(-1)),
      arg(7, Struct(Seq(arg(2, Text(SerDe)), arg(3, TextMap(Map.empty))))), arg(8, ListOf(TString, Nil)),
      arg(9, ListOf(TStruct, Nil)), arg(10, TextMap(Map.empty))))
    val now = (System.currentTimeMillis() / 1000).toInt
    val table = Struct(Seq(arg(1, Text(name)), arg(2, Text(db.name)), arg(3, Text(System.getProperty("user.name", ""))),
      arg(4, I32(now)), arg(5, I32(0)), arg(6, I32(0)), arg(7, sd), arg(8, ListOf(TStruct, Nil)),
      arg(9, TextMap(parameters)), arg(12, Text(ExternalTable))) ++ db.catalog.map(c => arg(17, Text(c))))
    call("create_table", s"create table ${id.mkString(".")} in", arg(1, table)) {
      case (1, _) => new TableInNamespaceExistsException(id, describe)
      case (4, _) => new NamespaceNotFoundException(id.init, describe)
      case (2, message) => new InvalidArgumentException(s"$describe refused to create table ${id.mkString(".")}: $message")
    }
    ()
  }

  override def declareTable(id: Seq[String]): String = {
    val (db, name) = tableId(id)
    val location = root match {
      case Some(r) => db.catalog.fold(s"$r/${db.name}.db/$name")(c => s"$r/$c/${db.name}.db/$name")
      case None =>
        val base = getDatabase(db).getOrElse(throw new NamespaceNotFoundException(id.init, describe))
        base.text(3).map(_.stripSuffix("/")).filter(_.nonEmpty).map(d => s"$d/$name").getOrElse(
          throw new InvalidArgumentException(s"$describe needs property root to place table ${id.mkString(".")}: " +
            s"database ${show(db)} has no location."))
    }
    createTable(id, location)
    location
  }

  override def registerTable(id: Seq[String], location: String): String = {
    createTable(id, location.stripSuffix("/"))
    location.stripSuffix("/")
  }

  override def deregisterTable(id: Seq[String]): Option[String] = {
    if (databaseOf(id.dropRight(1)).isEmpty) return None
    lanceTable(id).map { case (db, name, t) =>
      call("drop_table", s"drop table ${id.mkString(".")} of", arg(1, Text(db.wire)), arg(2, Text(name)),
        arg(3, Bool(false))) { case (1, _) => new TableNotFoundException(id, describe) }
      locationOf(t).getOrElse("")
    }
  }

  /** The metastore renames the table (`alter_table`); the location stays, as it does for an external table. */
  override def renameTable(id: Seq[String], newId: Seq[String]): Unit = {
    val (db, name, table) = lanceTable(id).getOrElse(throw new TableNotFoundException(id, describe))
    val (newDb, newName) = tableId(newId)
    newId.foreach(LanceNamespace.checkName(_, "namespace or table"))
    if (newDb.catalog != db.catalog) throw new UnsupportedFeatureException(s"Cannot rename table ${id.mkString(".")} " +
      s"to ${newId.mkString(".")} in $describe: a Hive table stays in its catalog.")
    if (getDatabase(newDb).isEmpty) throw new NamespaceNotFoundException(newId.init, describe)
    if (getTable(newDb, newName).isDefined) throw new TableInNamespaceExistsException(newId, describe)
    call("alter_table", s"rename table ${id.mkString(".")} of", arg(1, Text(db.wire)), arg(2, Text(name)),
      arg(3, table.updated(1, Text(newName)).updated(2, Text(newDb.name)))) {
      case (1, message) => new InvalidArgumentException(s"$describe refused to rename table ${id.mkString(".")}: $message")
    }
    ()
  }

  override def dropTable(id: Seq[String]): Boolean = {
    val location = deregisterTable(id)
    location.filter(_.nonEmpty).foreach(LanceNamespace.deleteTree(storage, _))
    location.isDefined
  }
}

object HiveNamespace {

  /** A database as a namespace names it: its catalog (None: the metastore's default) and name. */
  private final case class Database(catalog: Option[String], name: String) {
    /** The name the metastore's calls take: plain in the default catalog, else `@catalog#name` (Hive 3). */
    def wire: String = catalog.fold(name)(c => s"@$c#$name")
  }

  private val DefaultCatalog = "hive"
  /** The database Hive 3 creates in every new catalog (and drops with it). */
  private val DefaultDatabase = "default"
  /** How deep below a catalog's location files are looked for before it is dropped. */
  private val MaxDepth = 32
  private val TableTypeKey = "table_type"
  private val LanceType = "lance"
  private val ExternalTable = "EXTERNAL_TABLE"
  private val UserPrincipal = 1
  // The storage descriptor's formats as lance-namespace-impls' Hive namespaces record them (Hive's text formats).
  private val InputFormat = "org.apache.hadoop.mapred.TextInputFormat"
  private val OutputFormat = "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat"
  private val SerDe = "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"

  /** The settings that turn on SASL for Hive's metastore clients: Hive 2's name, and Hive 3's standalone metastore's. */
  private val SaslSettings = Seq("hive.metastore.sasl.enabled", "metastore.sasl.enabled")

  /** The properties of lance-namespace-impls' `hive2` and `hive3` implementations that this one takes. */
  val Properties: Set[String] = Set("uri", "root", "ugi", "client.pool-size")

  private def isLance(table: Struct): Boolean =
    table.textMap(9).exists { case (k, v) => k.equalsIgnoreCase(TableTypeKey) && v.equalsIgnoreCase(LanceType) }

  private def locationOf(table: Struct): Option[String] =
    table.struct(7).flatMap(_.text(2)).map(_.stripSuffix("/")).filter(_.nonEmpty)

  /** A `hive2` namespace (databases below the root). */
  def hive2(properties: Map[String, String], conf: Configuration): HiveNamespace = apply("hive2", properties, conf, catalogs = false)

  /** A `hive3` namespace (catalogs below the root, databases below them). */
  def hive3(properties: Map[String, String], conf: Configuration): HiveNamespace = apply("hive3", properties, conf, catalogs = true)

  private def apply(impl: String, properties: Map[String, String], conf: Configuration, catalogs: Boolean): HiveNamespace = {
    properties.keys.filterNot(k => Properties.contains(k) || k.startsWith("storage.")).toSeq.sorted.headOption.foreach { k =>
      throw new InvalidArgumentException(s"Unknown $impl namespace property '$k': a $impl namespace takes " +
        s"${Properties.toSeq.sorted.mkString(", ")} (and the metastore's URI as the Hadoop setting hive.metastore.uris).")
    }
    def prop(k: String) = properties.get(k).map(_.trim).filter(_.nonEmpty)
    SaslSettings.find(k => conf.getBoolean(k, false)).foreach { k =>
      throw new UnsupportedFeatureException(s"A Hive Metastore with SASL (Hadoop setting $k = true: Kerberos) is not " +
        s"supported by the $impl namespace: sparklance's metastore client speaks plain Thrift. Use a metastore " +
        "without SASL (hive.metastore.sasl.enabled = false), or remove the setting if the metastore has none.")
    }
    val uri = prop("uri").orElse(Option(conf.get("hive.metastore.uris")).flatMap(_.split(",").map(_.trim).find(_.nonEmpty)))
      .getOrElse(throw new InvalidArgumentException(s"A $impl namespace needs the Hive Metastore's URI: set property " +
        "uri or the Hadoop setting hive.metastore.uris (as a catalog option, hadoop.hive.metastore.uris), e.g. " +
        "thrift://metastore:9083."))
    val parsed = try new URI(uri) catch { case e: java.net.URISyntaxException =>
      throw new InvalidArgumentException(s"Hive Metastore URI '$uri' is not a URI: ${e.getMessage}.") }
    if (!"thrift".equalsIgnoreCase(parsed.getScheme)) {
      throw new InvalidArgumentException(s"Hive Metastore URI '$uri' is not a thrift:// URI.")
    }
    prop("client.pool-size").foreach { n =>
      if (!n.forall(Character.isDigit) || n.isEmpty || n.length > 6 || n.toInt < 1) {
        throw new InvalidArgumentException(s"Namespace property client.pool-size must be a positive integer, not '$n'.")
      }
    }
    val ugi = prop("ugi").map { u =>
      val (user, groups) = u.span(_ != ':')
      if (user.isEmpty) throw new InvalidArgumentException(s"Namespace property ugi '$u' names no user: give it as " +
        "user or user:group1,group2.")
      user -> groups.drop(1).split(",").map(_.trim).filter(_.nonEmpty).toSeq
    }
    new HiveNamespace(new HiveMetastoreClient(parsed, ugi), catalogs, prop("root").map(_.stripSuffix("/")), conf)
  }
}
