package io.sparklance.spark

import java.util

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.analysis.{NamespaceAlreadyExistsException, NoSuchNamespaceException, NoSuchTableException, NonEmptyNamespaceException, TableAlreadyExistsException}
import org.apache.spark.sql.connector.catalog.{Column, Identifier, NamespaceChange, StagedTable, SupportsNamespaces, Table, TableCatalog, TableChange}
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.types.{Metadata, StructField, StructType}
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.sparklance.core.{InvalidArgumentException, NotATableException, UnsupportedFeatureException, table => lance}
import io.sparklance.core.table.TimeTravel

/**
 * A Spark catalog over a warehouse directory: namespaces are directories, and `lance.db.tbl` is the Lance table
 * `<warehouse>/db/tbl.lance` (tables made by pylance or LanceDB there show up as they are). An absolute path or
 * URI in the root namespace names a table by location: ``lance.`/data/t.lance` ``. With `impl = dir` or `impl =
 * rest` it is a Lance Namespace instead ([[NamespaceCatalog]]): the namespace lists the namespaces and tables and
 * gives each table's location.
 *
 * Configuration: `spark.sql.catalog.<name> = io.sparklance.spark.LanceCatalog` and
 * `spark.sql.catalog.<name>.warehouse = <directory or URI>` (or `impl` and the namespace's properties). Time travel: `VERSION AS OF <n>`, `VERSION AS OF
 * '<tag>'`, `TIMESTAMP AS OF <timestamp>`.
 */
final class LanceCatalog extends CatalogShim with SupportsNamespaces {

  private var catalogName: String = _
  private var warehouse: String = _
  private var conf: Configuration = _
  /** The Lance Namespace that keeps the tables when the catalog names an `impl` (dir, rest, glue, hive2, hive3); else directories. */
  private var namespaces: Option[NamespaceCatalog] = None
  /** How its tables' blob v2 columns read (`blob_handling`): as bytes (the default) or as descriptors. */
  private var blobHandling: BlobHandling = BlobHandling.Bytes
  /** Read options the catalog sets for its tables' reads (`runtime_filter_push_down`), below a read's own. */
  private var readDefaults: Map[String, String] = Map.empty

  override def name(): String = catalogName

  override def initialize(name: String, options: CaseInsensitiveStringMap): Unit = {
    catalogName = name
    val passed = options.asCaseSensitiveMap().asScala.toMap
    LanceCatalog.checkOptions(name, passed)
    conf = TableAccess.hadoopConf(SparkSession.active, passed, LanceCatalog.storageOptionsOf(name))
    blobHandling = BlobHandling.parse(Option(options.get(BlobHandling.Key)), s"Option spark.sql.catalog.$name.${BlobHandling.Key}")
    readDefaults = ReadOptions.CatalogKeys.flatMap(key => Option(options.get(key)).map { v =>
      if (!Set("true", "false").contains(v.trim.toLowerCase)) {
        throw new LanceSparkException(new InvalidArgumentException(s"Option spark.sql.catalog.$name.$key must be " +
          s"true or false, not '$v'."))
      }
      key -> v.trim
    }).toMap
    namespaces = NamespaceCatalog.connect(name, passed, conf)
    // A relative warehouse is resolved on the driver: executors write the tables' files too. `root` is the other
    // Lance connector's name for it, and a directory namespace's (impl = dir); a REST namespace has none.
    val location = Option(options.get("warehouse")).orElse(Option(options.get("root")))
    warehouse = location.map(w => TableAccess.qualify(conf, w.stripSuffix("/"))).orElse(namespaces.map(_ => "")).getOrElse(
      throw new LanceSparkException(new InvalidArgumentException(s"Catalog '$name' has no warehouse: set " +
        s"spark.sql.catalog.$name.warehouse to the directory or URI that holds its tables.")))
  }

  // ------------------------------------------------------------------------------------------------ directories

  private def hadoopPath(path: String) = new org.apache.hadoop.fs.Path(path)

  private def fileSystem(path: String) = hadoopPath(path).getFileSystem(conf)

  private def storageError(path: String, what: String)(e: java.io.IOException) =
    new LanceSparkException(new io.sparklance.core.StorageException(path, what, e))

  private def exists(path: String): Boolean =
    try fileSystem(path).exists(hadoopPath(path))
    catch { case e: java.io.IOException => throw storageError(path, "check the existence of")(e) }

  /** The directories directly under `dir` (none when it does not exist), and whether it has any entry at all. */
  private def children(dir: String): (Seq[String], Boolean) =
    try {
      val all = fileSystem(dir).listStatus(hadoopPath(dir)).toSeq
      (all.filter(_.isDirectory).map(_.getPath.getName), all.nonEmpty)
    } catch {
      case _: java.io.FileNotFoundException => (Nil, false)
      case e: java.io.IOException => throw storageError(dir, "list")(e)
    }

  private def join(dir: String, name: String): String = if (dir.endsWith("/")) dir + name else s"$dir/$name"

  // ------------------------------------------------------------------------------------------------ names

  private val Suffix = ".lance"

  private def validName(part: String): Boolean =
    !(part.isEmpty || part == "." || part == ".." || part.exists(c => c == '/' || c == '\\' || c == '\u0000') ||
      part.startsWith("."))

  private def checkName(part: String, what: String): String = {
    if (!validName(part)) {
      throw new LanceSparkException(new InvalidArgumentException(s"'$part' is not a valid $what name in catalog " +
        s"'$catalogName': names are single path components, not empty, not starting with '.', without '/' or '\\'."))
    }
    part
  }

  private def namespacePath(namespace: Array[String]): String =
    namespace.foldLeft(warehouse)((dir, part) => join(dir, checkName(part, "namespace")))

  private def isPathIdentifier(ident: Identifier): Boolean =
    ident.namespace().isEmpty && (ident.name().startsWith("/") || ident.name().contains("://") || ident.name().startsWith("file:"))

  private def tablePath(ident: Identifier): String = branchOf(ident) match {
    case Some((table, branch)) => join(plainPath(table), s"tree/$branch")
    case None => plainPath(ident)
  }

  private def plainPath(ident: Identifier): String =
    if (isPathIdentifier(ident)) TableAccess.qualify(conf, ident.name())
    else namespaces match {
      case Some(ns) => ns.location(ident).getOrElse(throw new NoSuchTableException(ident))
      case None => join(namespacePath(ident.namespace()), checkName(ident.name(), "table") + Suffix)
    }

  private def plainExists(ident: Identifier): Boolean =
    try isTableDir(plainPath(ident)) catch { case _: NoSuchTableException => false }

  /**
   * Where a new table goes (`path`), and how to take it back if its creation fails (`undo`). In the warehouse: its
   * directory, nothing to take back. In a Lance Namespace: the location the namespace declares (taken back by
   * dropping the table, files and all), or the statement's LOCATION, registered there (taken back by deregistering
   * it: files at a location the user gave are not the catalog's to delete).
   */
  private final class NewPlace(val path: String, val undo: () => Unit, val registered: Boolean)

  private def placeNew(ident: Identifier, properties: Map[String, String]): NewPlace = namespaces match {
    case None => new NewPlace(tablePath(ident), () => (), registered = false)
    case Some(ns) => properties.get(TableCatalog.PROP_LOCATION).map(_.trim).filter(_.nonEmpty) match {
      case Some(location) => new NewPlace(ns.register(ident, location), () => ns.deregister(ident), registered = true)
      case None => new NewPlace(ns.declare(ident), () => ns.purge(ident), registered = false)
    }
  }

  /** Runs the creation of a table at `place`; if it fails, the place is taken back. */
  private def creating[T](place: NewPlace)(body: => T): T =
    try body
    catch {
      case e: Exception =>
        try place.undo() catch { case d: Exception => e.addSuppressed(d) }
        throw e
    }

  private val BranchSuffix = "(?s)(.+)__branch__(.+)".r

  /**
   * The table and branch a branch identifier names: `t.branch_<b>` (Iceberg's form; `t` must be a table, so a
   * namespace `t` with a table `branch_x` keeps its meaning) or `t__branch__<b>` (the other Lance connector's).
   */
  private def branchOf(ident: Identifier): Option[(Identifier, String)] = ident.name() match {
    case BranchSuffix(t, b) if !isPathIdentifier(ident) => Some(Identifier.of(ident.namespace(), t) -> b)
    case n if n.startsWith("branch_") && n.length > "branch_".length && ident.namespace().nonEmpty =>
      val table = Identifier.of(ident.namespace().init, ident.namespace().last)
      if (isPathIdentifier(table) || (table.namespace().forall(validName) && validName(table.name()) &&
          plainExists(table))) Some(table -> n.stripPrefix("branch_"))
      else None
    case _ => None
  }

  private def refuseBranch(ident: Identifier, what: String): Unit = branchOf(ident).foreach { case (t, b) =>
    throw new LanceSparkException(new UnsupportedFeatureException(s"$what ${qualified(ident)} is not supported: it " +
      s"names branch '$b' of ${qualified(t)}. Create a branch with ALTER TABLE ${qualified(t)} CREATE BRANCH $b, drop " +
      s"one with ALTER TABLE ${qualified(t)} DROP BRANCH $b."))
  }

  /** Where the table an identifier names lives (whether or not it exists). */
  def locationOf(ident: Identifier): String = tablePath(ident)

  private def isTableDir(path: String): Boolean = exists(join(path, "_versions"))

  // ---------------------------------------------------------------------------------------------- tables

  override def listTables(namespace: Array[String]): Array[Identifier] =
    namespaces.map(_.listTables(namespace)).getOrElse(directoryTables(namespace))

  private def directoryTables(namespace: Array[String]): Array[Identifier] = LanceSparkException.translate {
    val dir = namespacePath(namespace)
    if (namespace.nonEmpty && !exists(dir)) throw new NoSuchNamespaceException(namespace)
    // Only names that can be queried back are listed.
    children(dir)._1.filter(n => n.endsWith(Suffix) && validName(n.stripSuffix(Suffix)))
      .map(n => Identifier.of(namespace, n.stripSuffix(Suffix))).sortBy(_.name()).toArray
  }

  override def loadTable(ident: Identifier): Table = load(ident, TimeTravel.Latest)

  /**
   * `VERSION AS OF 3` (unsigned: detached versions are above 2^63), `VERSION AS OF 'tag'`, or (Iceberg's form)
   * `VERSION AS OF 'branch'`, the latest version of a branch, when no tag has that name.
   */
  override def loadTable(ident: Identifier, version: String): Table = TimeTravel.versionOrTag(version) match {
    case TimeTravel.AtTag(name) if branchOf(ident).isEmpty && !hasTag(ident, name) && hasBranch(ident, name) =>
      load(ident, TimeTravel.OnBranch(name, TimeTravel.Latest))
    case tt => load(ident, tt)
  }

  private def hasTag(ident: Identifier, name: String): Boolean =
    LanceSparkException.translate(lance.Table.forPath(tablePath(ident), conf).tags().contains(name))

  private def hasBranch(ident: Identifier, name: String): Boolean =
    LanceSparkException.translate(lance.Table.forPath(tablePath(ident), conf).branches().contains(name))

  /**
   * `TIMESTAMP AS OF <expr>`: Spark hands the instant in microseconds. A number is cast by Spark as seconds since
   * the epoch, and one too large for that (e.g. epoch microseconds) reaches here clamped to the largest or smallest
   * timestamp: that is refused, since the instant meant is lost.
   */
  override def loadTable(ident: Identifier, timestamp: Long): Table = {
    if (timestamp == Long.MaxValue || timestamp == Long.MinValue) {
      throw new LanceSparkException(new InvalidArgumentException(s"TIMESTAMP AS OF for ${qualified(ident)} is out of " +
        "range: Spark reads a number there as seconds since the epoch, and this one is beyond the years a " +
        "timestamp holds. For epoch microseconds write TIMESTAMP AS OF timestamp_micros(<n>), for milliseconds " +
        "timestamp_millis(<n>), or give a timestamp such as '2024-01-15 10:30:00'."))
    }
    load(ident, TimeTravel.AsOf(java.time.Instant.EPOCH.plus(timestamp, java.time.temporal.ChronoUnit.MICROS)))
  }

  private def load(ident: Identifier, tt: TimeTravel): Table = {
    val path = tablePath(ident)
    // A missing branch is named as such, with the branches there are.
    branchOf(ident).foreach { case (t, b) =>
      LanceSparkException.translate(lance.Table.forPath(plainPath(t), conf).branch(b))
    }
    val snapshot =
      try TableAccess.load(conf, path, tt)
      catch {
        case e: LanceSparkException if e.cause.isInstanceOf[NotATableException] && !isPathIdentifier(ident) =>
          throw new NoSuchTableException(ident)
      }
    new LanceTable(qualified(ident), snapshot, conf, writable = true, blobHandling = blobHandling, readDefaults = readDefaults)
  }

  override def tableExists(ident: Identifier): Boolean =
    try isTableDir(tablePath(ident)) catch { case _: NoSuchTableException => false }

  /**
   * CREATE TABLE: commits version 1 of a table with no rows. TBLPROPERTIES `file_format_version` picks the Lance
   * file version (default 2.2); other properties are stored in the table's config. In a Lance Namespace the table
   * is declared there first, at the location it gives, and dropped again if the commit fails.
   */
  override def createTable(ident: Identifier, columns: Array[Column], partitions: Array[Transform],
      properties: util.Map[String, String]): Table = {
    refuseBranch(ident, "CREATE TABLE")
    if (tableExists(ident)) throw new TableAlreadyExistsException(ident)
    NewTable.checkNoPartitioning(partitions)
    val props = properties.asScala.toMap
    val place = placeNew(ident, props)
    creating(place) {
      if (place.registered && isTableDir(place.path)) checkRegisteredSchema(ident, place.path, columns)
      else {
        LanceSparkException.translate(lance.Table.checkCanCreate(place.path, conf))
        val table = NewTable(place.path, structOf(columns), if (place.registered) props - TableCatalog.PROP_LOCATION else props)
        table.commitEmpty(conf, 0L, WriteOptions(props, Map.empty))
      }
    }
    loadTable(ident)
  }

  /**
   * CREATE TABLE ... LOCATION of a Lance table that exists: the table is registered as it is. Columns, if the
   * statement gives any, must be the table's (names and types), or the statement is refused.
   */
  private def checkRegisteredSchema(ident: Identifier, path: String, columns: Array[Column]): Unit = if (columns.nonEmpty) {
    val actual = SparkSchemas.toSpark(TableAccess.load(conf, path, TimeTravel.Latest).schema)
    val stated = structOf(columns)
    def shape(s: StructType) = SparkSchemas.asNullable(s).fields.map(f => f.name.toLowerCase -> f.dataType.catalogString).toSeq
    if (shape(actual) != shape(stated)) {
      throw new LanceSparkException(new io.sparklance.core.InvalidArgumentException(s"CREATE TABLE ${qualified(ident)} " +
        s"LOCATION '$path' names columns ${stated.toDDL}, but the Lance table there has ${actual.toDDL}. Leave the " +
        "columns out to register the table as it is."))
    }
  }

  override def stageCreate(ident: Identifier, columns: Array[Column], partitions: Array[Transform],
      properties: util.Map[String, String]): StagedTable = {
    if (tableExists(ident)) throw new TableAlreadyExistsException(ident)
    stage(ident, columns, partitions, properties, None)
  }

  override def stageReplace(ident: Identifier, columns: Array[Column], partitions: Array[Transform],
      properties: util.Map[String, String]): StagedTable = {
    val path = tablePath(ident)
    if (!isTableDir(path)) throw new NoSuchTableException(ident)
    stage(ident, columns, partitions, properties, Some(TableAccess.load(conf, path, TimeTravel.Latest)))
  }

  override def stageCreateOrReplace(ident: Identifier, columns: Array[Column], partitions: Array[Transform],
      properties: util.Map[String, String]): StagedTable = {
    stage(ident, columns, partitions, properties,
      if (tableExists(ident)) Some(TableAccess.load(conf, tablePath(ident), TimeTravel.Latest)) else None)
  }

  /** A table to create (`replaced` None) or to replace, whose file version it keeps unless the properties name one. */
  private def stage(ident: Identifier, columns: Array[Column], partitions: Array[Transform],
      properties: util.Map[String, String], replaced: Option[lance.Snapshot]): StagedTable = {
    refuseBranch(ident, if (replaced.isDefined) "REPLACE TABLE" else "CREATE TABLE")
    NewTable.checkNoPartitioning(partitions)
    val props = properties.asScala.toMap
    // A table replaced stays where it is, and stays whatever happens to the replacement.
    val place = if (replaced.isEmpty) placeNew(ident, props) else new NewPlace(tablePath(ident), () => (), registered = false)
    // A table placed in a namespace for this CTAS leaves it again if the write is aborted.
    val onAbort = place.undo
    creating(place) {
      if (place.registered && isTableDir(place.path)) {
        throw new LanceSparkException(new io.sparklance.core.InvalidArgumentException(s"CREATE TABLE " +
          s"${qualified(ident)} ... AS SELECT cannot write to LOCATION '${place.path}': a Lance table is there " +
          s"already. Register it with CREATE TABLE ${qualified(ident)} LOCATION '...' (without AS SELECT), then " +
          "INSERT into it."))
      }
      if (replaced.isEmpty) LanceSparkException.translate(lance.Table.checkCanCreate(place.path, conf))
      val table = NewTable(place.path, structOf(columns), if (place.registered) props - TableCatalog.PROP_LOCATION else props,
        replaced.map(_.fileVersion))
      new LanceStagedTable(qualified(ident), table, replaced.map(_.version).getOrElse(0L), conf,
        WriteOptions(props, Map.empty), onAbort)
    }
  }

  private def structOf(columns: Array[Column]): StructType = StructType(columns.map { c =>
    val meta = Option(c.metadataInJSON()).map(Metadata.fromJson).getOrElse(Metadata.empty)
    StructField(c.name(), c.dataType(), c.nullable(), meta)
  })

  private def qualified(ident: Identifier): String = s"$catalogName.${(ident.namespace() :+ ident.name()).mkString(".")}"

  /**
   * ALTER TABLE: ADD COLUMN(S) (nullable; rows already written read null), DROP COLUMN, RENAME COLUMN and ALTER
   * COLUMN ... DROP NOT NULL, committed together as one new version that changes the schema only (a Project
   * transaction; data files are untouched, field ids never reused). SET and UNSET TBLPROPERTIES set and remove keys
   * of the table's config, as one version of their own (an UpdateConfig transaction, as pylance's `update_config`).
   * Other changes are refused.
   */
  override def alterTable(ident: Identifier, changes: TableChange*): Table = {
    val path = tablePath(ident)
    if (!isTableDir(path)) throw new NoSuchTableException(ident)
    LanceSparkException.translate {
      val snapshot = TableAccess.load(conf, path, TimeTravel.Latest)
      val (properties, columns) = changes.partition(c => c.isInstanceOf[TableChange.SetProperty] || c.isInstanceOf[TableChange.RemoveProperty])
      if (properties.nonEmpty && columns.nonEmpty) notYet("ALTER TABLE changing table properties and columns together")
      if (properties.nonEmpty) {
        val upserts = properties.collect { case c: TableChange.SetProperty => c.property() -> c.value() }.toMap
        val deletes = properties.collect { case c: TableChange.RemoveProperty => c.property() }.toSet
        NewTable.checkCanAlter(upserts, deletes, snapshot.schema.fields.map(_.name).toSeq, qualified(ident))
        // The read options a property may also set must parse (the core checks its own settings).
        ReadOptions(Map.empty[String, String], snapshot.config -- deletes ++ upserts)
        snapshot.table.updateConfig(upserts, deletes)
      } else {
        val edit = snapshot.table.newSchemaChange(snapshot)
        columns.foreach {
          case c: TableChange.AddColumn =>
            if (c.position() != null) notYet("ALTER TABLE ... ADD COLUMN ... FIRST/AFTER")
            if (c.defaultValue() != null) notYet("ALTER TABLE ... ADD COLUMN ... DEFAULT")
            val names = c.fieldNames().toSeq
            val added = StructType(Seq(StructField(names.last, c.dataType(), c.isNullable)))
            edit.add(names.init, SparkSchemas.toLance(if (names.size > 1) added else shapedByConfig(added, snapshot, "ADD COLUMN")))
          case c: TableChange.DeleteColumn =>
            try edit.drop(c.fieldNames().toSeq)
            catch { case _: io.sparklance.core.InvalidArgumentException if c.ifExists() => }
          case c: TableChange.RenameColumn => edit.rename(c.fieldNames().toSeq, c.newName())
          case c: TableChange.UpdateColumnNullability => edit.setNullable(c.fieldNames().toSeq, c.nullable())
          case other => notYet(s"ALTER TABLE (${other.getClass.getSimpleName})")
        }
        edit.commit()
      }
    }
    loadTable(ident)
  }

  /**
   * New top-level columns with the column properties kept in the table's config applied ([[ColumnProperties]]).
   * ADD COLUMN adds a column without values, so a blob column is refused there: its values come with ADD COLUMNS
   * ... FROM.
   */
  private def shapedByConfig(columns: StructType, snapshot: lance.Snapshot, statement: String): StructType = {
    val shaped = ColumnProperties(columns, snapshot.config)._1
    shaped.fields.find(f => ColumnProperties.encodingMetadata(f.metadata).contains(ColumnProperties.BlobKey)).foreach { f =>
      throw new LanceSparkException(new UnsupportedFeatureException(s"$statement ${f.name}: the table's property " +
        s"${f.name}.lance.encoding = blob makes it a blob column, and a blob column is not added without values. " +
        s"Add it with ALTER TABLE ... ADD COLUMNS ${f.name} FROM <view of _rowaddr and ${f.name}>."))
    }
    shaped
  }

  /**
   * DROP TABLE. In the warehouse a table is its directory, so dropping it deletes the directory with every version
   * (DROP TABLE ... PURGE does the same). In a Lance Namespace the table leaves the namespace and its files stay, as
   * with the other Lance connector; PURGE deletes them too. Path identifiers are refused: drop such a table by
   * deleting its directory.
   */
  override def dropTable(ident: Identifier): Boolean = dropping(ident, purge = false)

  override def purgeTable(ident: Identifier): Boolean = dropping(ident, purge = true)

  private def dropping(ident: Identifier, purge: Boolean): Boolean = {
    refuseBranch(ident, "DROP TABLE")
    if (isPathIdentifier(ident)) {
      throw new LanceSparkException(new UnsupportedFeatureException(s"DROP TABLE of a table named by its path " +
        s"(${ident.name()}) is not supported: it is not a table of catalog '$catalogName'. Delete the directory instead."))
    }
    namespaces match {
      case Some(ns) => if (purge) ns.purge(ident) else ns.deregister(ident)
      case None =>
        val path = tablePath(ident)
        isTableDir(path) && LanceSparkException.translate {
          val fs = new org.apache.hadoop.fs.Path(path).getFileSystem(conf)
          try fs.delete(new org.apache.hadoop.fs.Path(path), true)
          catch { case e: java.io.IOException => throw new io.sparklance.core.StorageException(path, "delete the table directory", e) }
        }
    }
  }

  /**
   * ALTER TABLE ... RENAME TO. A new name without a namespace stays in the table's namespace. In the warehouse the
   * table's directory is renamed, where the file system renames atomically (local, HDFS); object stores, which copy
   * file by file, are refused, and so are tables with branches (their versions name the directory). Shallow clones
   * made elsewhere from the table also name its directory, and cannot be found from it: renaming breaks them, as
   * moving the directory would. In a Lance Namespace the namespace renames it and the files stay.
   */
  override def renameTable(oldIdent: Identifier, newIdent: Identifier): Unit = {
    refuseBranch(oldIdent, "ALTER TABLE ... RENAME")
    val target = if (newIdent.namespace().isEmpty) Identifier.of(oldIdent.namespace(), newIdent.name()) else newIdent
    refuseBranch(target, "ALTER TABLE ... RENAME TO")
    if (isPathIdentifier(oldIdent) || isPathIdentifier(target)) {
      throw new LanceSparkException(new UnsupportedFeatureException(s"ALTER TABLE ... RENAME of a table named by its " +
        s"path is not supported: it is not a table of catalog '$catalogName'. Move the directory instead."))
    }
    namespaces match {
      case Some(ns) => ns.rename(oldIdent, target)
      case None =>
        val from = tablePath(oldIdent)
        if (!isTableDir(from)) throw new NoSuchTableException(oldIdent)
        if (!namespaceExists(target.namespace())) throw new NoSuchNamespaceException(target.namespace())
        val to = tablePath(target)
        if (exists(to)) throw new TableAlreadyExistsException(target)
        val fs = fileSystem(from)
        if (!Set("file", "hdfs", "viewfs").contains(fs.getScheme)) {
          throw new LanceSparkException(new UnsupportedFeatureException(s"ALTER TABLE ${qualified(oldIdent)} RENAME is " +
            s"not supported on ${fs.getScheme}: the store renames a directory by copying its files one by one, which " +
            "is not atomic. Copy the table with CREATE TABLE ... AS SELECT (or a shallow clone) instead."))
        }
        // A branch's versions name the table's directory (a base path), and would no longer find their files.
        val branches = LanceSparkException.translate(lance.Table.forPath(from, conf).branches()).keys
        if (branches.nonEmpty) {
          throw new LanceSparkException(new UnsupportedFeatureException(s"ALTER TABLE ${qualified(oldIdent)} RENAME " +
            s"is not supported: the table has branches (${branches.mkString(", ")}), whose versions name its directory " +
            s"$from. Drop the branches first, or copy the table with CREATE TABLE ... AS SELECT."))
        }
        val moved =
          try fs.rename(hadoopPath(from), hadoopPath(to))
          catch { case e: java.io.IOException => throw storageError(from, s"rename to $to")(e) }
        if (!moved) {
          throw storageError(from, s"rename to $to")(new java.io.IOException("the file system refused the rename"))
        }
    }
  }

  private def notYet(what: String): Nothing = throw new LanceSparkException(new UnsupportedFeatureException(
    s"$what is not supported by this version of sparklance's catalog '$catalogName' yet. Change the table with " +
      "pylance for now."))

  // ------------------------------------------------------------------------------------------ namespaces

  private def childNamespaces(dir: String): Seq[String] =
    children(dir)._1.filter(n => !n.endsWith(Suffix) && validName(n) && !n.startsWith("_")).sorted

  override def listNamespaces(): Array[Array[String]] = namespaces.map(_.listNamespaces(Array.empty)).getOrElse(
    LanceSparkException.translate(childNamespaces(warehouse).map(n => Array(n)).toArray))

  override def listNamespaces(namespace: Array[String]): Array[Array[String]] =
    namespaces.map(_.listNamespaces(namespace)).getOrElse(directoryNamespaces(namespace))

  private def directoryNamespaces(namespace: Array[String]): Array[Array[String]] = LanceSparkException.translate {
    val dir = namespacePath(namespace)
    if (!exists(dir)) throw new NoSuchNamespaceException(namespace)
    childNamespaces(dir).map(n => namespace :+ n).toArray
  }

  override def namespaceExists(namespace: Array[String]): Boolean = namespaces.map(_.namespaceExists(namespace)).getOrElse(
    namespace.isEmpty || (exists(namespacePath(namespace)) && !isTableDir(namespacePath(namespace))))

  override def loadNamespaceMetadata(namespace: Array[String]): util.Map[String, String] = namespaces match {
    case Some(ns) => ns.namespaceMetadata(namespace)
    case None =>
      if (!namespaceExists(namespace)) throw new NoSuchNamespaceException(namespace)
      Map("location" -> namespacePath(namespace)).asJava
  }

  /**
   * CREATE NAMESPACE: a directory under the warehouse. A namespace keeps no properties, so LOCATION (other than its
   * own directory), COMMENT and WITH PROPERTIES are refused rather than dropped. In a Lance Namespace, COMMENT and
   * WITH PROPERTIES are the namespace's properties ([[NamespaceCatalog.createNamespace]]).
   */
  override def createNamespace(namespace: Array[String], metadata: util.Map[String, String]): Unit =
    namespaces.map(_.createNamespace(namespace, metadata)).getOrElse(createDirectory(namespace, metadata))

  private def createDirectory(namespace: Array[String], metadata: util.Map[String, String]): Unit = {
    val dir = namespacePath(namespace)
    metadata.asScala.foreach {
      case ("owner", _) => // set by Spark on every CREATE NAMESPACE
      case ("location", l) if sameLocation(l, dir) =>
      case ("location", l) =>
        throw new LanceSparkException(new UnsupportedFeatureException(s"LOCATION '$l' is not supported: namespace " +
          s"${namespace.mkString(".")} of catalog '$catalogName' is the directory $dir. Create it without LOCATION, " +
          s"or configure another catalog whose warehouse is '$l'."))
      case (key, _) =>
        throw new LanceSparkException(new UnsupportedFeatureException(s"Namespace property '$key' is not " +
          s"supported: namespaces of catalog '$catalogName' are directories and keep no properties. Create the " +
          "namespace without COMMENT or WITH PROPERTIES."))
    }
    if (exists(dir)) throw new NamespaceAlreadyExistsException(namespace)
    val fs = new org.apache.hadoop.fs.Path(dir).getFileSystem(conf)
    if (!fs.mkdirs(new org.apache.hadoop.fs.Path(dir))) {
      throw new LanceSparkException(new io.sparklance.core.StorageException(dir, "create the namespace directory",
        new java.io.IOException("mkdirs returned false")))
    }
  }

  private def sameLocation(a: String, b: String): Boolean = LanceSparkException.translate {
    def qualified(p: String) = {
      val path = new org.apache.hadoop.fs.Path(p.stripSuffix("/"))
      try path.getFileSystem(conf).makeQualified(path)
      catch { case e: java.io.IOException => throw new io.sparklance.core.StorageException(p, "resolve", e) }
    }
    qualified(a) == qualified(b)
  }

  override def alterNamespace(namespace: Array[String], changes: NamespaceChange*): Unit =
    throw new LanceSparkException(new UnsupportedFeatureException(
      if (namespaces.isDefined) s"Changing the properties of namespace ${namespace.mkString(".")} of catalog " +
        s"'$catalogName' is not supported: the Lance Namespace spec has no operation for it."
      else s"Namespaces of catalog '$catalogName' are directories and have no properties to change."))

  /** DROP NAMESPACE; with CASCADE it deletes the tables and namespaces below it, like DROP TABLE does. */
  override def dropNamespace(namespace: Array[String], cascade: Boolean): Boolean =
    namespaces.map(_.dropNamespace(namespace, cascade)).getOrElse(dropDirectory(namespace, cascade))

  private def dropDirectory(namespace: Array[String], cascade: Boolean): Boolean = {
    val dir = namespacePath(namespace)
    if (!exists(dir)) throw new NoSuchNamespaceException(namespace)
    if (children(dir)._2 && !cascade) throw new NonEmptyNamespaceException(namespace)
    LanceSparkException.translate {
      val fs = new org.apache.hadoop.fs.Path(dir).getFileSystem(conf)
      try fs.delete(new org.apache.hadoop.fs.Path(dir), true)
      catch { case e: java.io.IOException => throw new io.sparklance.core.StorageException(dir, "delete the namespace directory", e) }
    }
  }
}

object LanceCatalog {
  /** Catalog options besides settings (`fs.*`, `hadoop.*`, `sparklance.*`); `root` is the other connector's name. */
  private val Known = Set("warehouse", "root", "impl", BlobHandling.Key) ++ ReadOptions.CatalogKeys ++ Set(NamespaceCatalog.SingleLevel, NamespaceCatalog.Parent,
    NamespaceCatalog.ParentDelimiter) ++ NamespaceCatalog.Properties

  /** Catalog `name` in messages about its storage options (`storage.<key>`). */
  private def storageOptionsOf(name: String): String = s"catalog '$name' (spark.sql.catalog.$name.storage.*)"

  /** The options of Lance catalog `name` (`spark.sql.catalog.<name>.<key>`). */
  def options(spark: SparkSession, name: String): Map[String, String] = {
    val prefix = s"spark.sql.catalog.$name."
    spark.sessionState.conf.getAllConfs.collect { case (k, v) if k.startsWith(prefix) => k.stripPrefix(prefix) -> v }
  }

  /**
   * The settings that apply to the table at `path`: those of the Lance catalog whose warehouse holds it (the one
   * with the longest warehouse, if several do), else the session's. So maintenance of a catalog's table (OPTIMIZE,
   * VACUUM, tags, restore, from SQL or Python) uses the catalog's object-store and commit settings, as its reads
   * and writes do.
   */
  def settingsFor(spark: SparkSession, path: String): Configuration = {
    val catalogs = spark.sessionState.conf.getAllConfs.collect {
      case (k, v) if k.startsWith("spark.sql.catalog.") && k.count(_ == '.') == 3 && v == classOf[LanceCatalog].getName =>
        k.stripPrefix("spark.sql.catalog.")
    }
    val session = spark.sessionState.newHadoopConf()
    val holding = catalogs.toSeq.flatMap { name =>
      val o = options(spark, name)
      o.get("warehouse").orElse(o.get("root")).map { w =>
        val conf = TableAccess.hadoopConf(spark, o, storageOptionsOf(name))
        (TableAccess.qualify(conf, w.stripSuffix("/")) + "/", conf)
      }
    }.filter { case (warehouse, _) => path.startsWith(warehouse) }
    if (holding.isEmpty) session else holding.maxBy(_._1.length)._2
  }

  /**
   * Checks a catalog's options (`spark.sql.catalog.<name>.<key>`) as [[LanceOptions]] checks those of a read: a
   * Lance Namespace (`impl` and its properties, the other connector's names, `parent` among them) and Lance's S3
   * options (`storage.<key>`) are accepted; a namespace property without `impl`, other namespaces and other storage
   * options are refused, since they would be ignored.
   */
  def checkOptions(name: String, options: Map[String, String]): Unit =
    options.toSeq.sortBy { case (k, _) => !k.equalsIgnoreCase("impl") }.foreach { case (key, value) => // impl first
    val k = key.toLowerCase
    def refuse(why: String): Nothing = throw new LanceSparkException(new UnsupportedFeatureException(
      s"Option spark.sql.catalog.$name.$key is not supported: $why."))
    if (k != "root" && NamespaceCatalog.isProperty(k) && !options.keys.exists(_.equalsIgnoreCase("impl"))) {
      throw new LanceSparkException(new InvalidArgumentException(s"Option spark.sql.catalog.$name.$key is a " +
        s"property of a Lance Namespace, but catalog '$name' names no impl: set spark.sql.catalog.$name.impl to dir, " +
        "rest, glue, hive2 or hive3 (docs/reading.md, \"Lance Namespaces\"), or remove the option."))
    } else if (k == "impl" && !io.sparklance.core.namespace.LanceNamespace.Impls.contains(value.trim)) {
      refuse(s"catalog '$name' keeps its tables in a directory, or in a Lance Namespace of impl dir, rest, glue, " +
        s"hive2 or hive3; namespaces '$value' are not supported")
    } else if (k.startsWith("storage.")) {
      () // checked and mapped with the catalog's other settings, by TableAccess.hadoopConf
    } else if (!Known.contains(k) && !Seq("fs.", "hadoop.", "sparklance.", "header.", "headers.").exists(k.startsWith)) {
      throw new LanceSparkException(new InvalidArgumentException(s"Unknown option spark.sql.catalog.$name.$key. " +
        s"A Lance catalog takes warehouse (or root), ${BlobHandling.Key}, ${ReadOptions.CatalogKeys.mkString(", ")}, a Lance Namespace's impl (dir, rest, glue, hive2, hive3) and its " +
        s"properties (${NamespaceCatalog.Properties.toSeq.sorted.mkString(", ")}, header.<name> or headers.<name>, " +
        s"${NamespaceCatalog.SingleLevel}, ${NamespaceCatalog.Parent}, ${NamespaceCatalog.ParentDelimiter}), and " +
        "settings as fs.<key>, " +
        "hadoop.<key> or sparklance.<key> (docs/configuration.md)."))
    }
  }
}
