package io.sparklance.spark

import java.util

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.analysis.{NamespaceAlreadyExistsException, NoSuchNamespaceException, NoSuchTableException, NonEmptyNamespaceException, TableAlreadyExistsException}
import org.apache.spark.sql.connector.catalog.{Column, Identifier, NamespaceChange, StagedTable, StagingTableCatalog, SupportsNamespaces, Table, TableChange}
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.types.{Metadata, StructField, StructType}
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.sparklance.core.{InvalidArgumentException, NotATableException, UnsupportedFeatureException}
import io.sparklance.core.storage.{HadoopStorage, Storage}

/**
 * A Spark catalog over a warehouse directory: namespaces are directories, and `lance.db.tbl` is the Lance table
 * `<warehouse>/db/tbl.lance` (tables made by pylance or LanceDB there show up as they are). An absolute path or
 * URI in the root namespace names a table by location: ``lance.`/data/t.lance` ``.
 *
 * Configuration: `spark.sql.catalog.<name> = io.sparklance.spark.LanceCatalog` and
 * `spark.sql.catalog.<name>.warehouse = <directory or URI>`. Time travel: `VERSION AS OF <n>`, `VERSION AS OF
 * '<tag>'`, `TIMESTAMP AS OF <timestamp>`.
 */
final class LanceCatalog extends StagingTableCatalog with SupportsNamespaces {

  private var catalogName: String = _
  private var warehouse: String = _
  private var conf: Configuration = _
  private var storage: Storage = _

  override def name(): String = catalogName

  override def initialize(name: String, options: CaseInsensitiveStringMap): Unit = {
    catalogName = name
    conf = LanceTables.hadoopConf(SparkSession.active, options.asCaseSensitiveMap().asScala.toMap)
    // A relative warehouse is resolved on the driver: executors write the tables' files too.
    warehouse = Option(options.get("warehouse")).map(w => LanceTables.qualify(conf, w.stripSuffix("/"))).getOrElse(
      throw new LanceSparkException(new InvalidArgumentException(s"Catalog '$name' has no warehouse: set " +
        s"spark.sql.catalog.$name.warehouse to the directory or URI that holds its tables.")))
    storage = new HadoopStorage(conf)
  }

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
    namespace.foldLeft(warehouse)((dir, part) => Storage.join(dir, checkName(part, "namespace")))

  private def isPathIdentifier(ident: Identifier): Boolean =
    ident.namespace().isEmpty && (ident.name().startsWith("/") || ident.name().contains("://") || ident.name().startsWith("file:"))

  private def tablePath(ident: Identifier): String =
    if (isPathIdentifier(ident)) LanceTables.qualify(conf, ident.name())
    else Storage.join(namespacePath(ident.namespace()), checkName(ident.name(), "table") + Suffix)

  /** Where the table an identifier names lives (whether or not it exists). */
  def locationOf(ident: Identifier): String = tablePath(ident)

  private def isTableDir(path: String): Boolean = storage.exists(Storage.join(path, "_versions"))

  // ---------------------------------------------------------------------------------------------- tables

  override def listTables(namespace: Array[String]): Array[Identifier] = LanceSparkException.translate {
    val dir = namespacePath(namespace)
    if (namespace.nonEmpty && !storage.exists(dir)) throw new NoSuchNamespaceException(namespace)
    // Only names that can be queried back are listed.
    storage.list(dir).filter(e => e.isDirectory && e.name.endsWith(Suffix) && validName(e.name.stripSuffix(Suffix)))
      .map(e => Identifier.of(namespace, e.name.stripSuffix(Suffix))).sortBy(_.name()).toArray
  }

  override def loadTable(ident: Identifier): Table = load(ident, TimeTravel.Latest)

  override def loadTable(ident: Identifier, version: String): Table = {
    val tt = version.trim.toLongOption.map(TimeTravel.AtVersion).getOrElse(TimeTravel.AtTag(version))
    load(ident, tt)
  }

  override def loadTable(ident: Identifier, timestamp: Long): Table =
    load(ident, TimeTravel.AsOf(java.time.Instant.EPOCH.plusNanos(Math.multiplyExact(timestamp, 1000L))))

  private def load(ident: Identifier, tt: TimeTravel): Table = {
    val path = tablePath(ident)
    val snapshot =
      try LanceTables.load(conf, path, tt)
      catch {
        case e: LanceSparkException if e.cause.isInstanceOf[NotATableException] && !isPathIdentifier(ident) =>
          throw new NoSuchTableException(ident)
      }
    new LanceTable(qualified(ident), snapshot, conf, writable = true)
  }

  override def tableExists(ident: Identifier): Boolean = isTableDir(tablePath(ident))

  /**
   * CREATE TABLE: commits version 1 of a table with no rows. TBLPROPERTIES `file_format_version` picks the Lance
   * file version (default 2.2); other properties are stored in the table's config.
   */
  override def createTable(ident: Identifier, columns: Array[Column], partitions: Array[Transform],
      properties: util.Map[String, String]): Table = {
    val path = tablePath(ident)
    if (isTableDir(path)) throw new TableAlreadyExistsException(ident)
    NewTable.checkNoPartitioning(partitions)
    val table = NewTable(path, structOf(columns), properties.asScala.toMap)
    table.commitEmpty(conf, 0L, WriteOptions(properties.asScala.toMap, Map.empty))
    loadTable(ident)
  }

  override def stageCreate(ident: Identifier, columns: Array[Column], partitions: Array[Transform],
      properties: util.Map[String, String]): StagedTable = {
    if (isTableDir(tablePath(ident))) throw new TableAlreadyExistsException(ident)
    stage(ident, columns, partitions, properties, 0L)
  }

  override def stageReplace(ident: Identifier, columns: Array[Column], partitions: Array[Transform],
      properties: util.Map[String, String]): StagedTable = {
    val path = tablePath(ident)
    if (!isTableDir(path)) throw new NoSuchTableException(ident)
    stage(ident, columns, partitions, properties, LanceTables.latestVersion(conf, path))
  }

  override def stageCreateOrReplace(ident: Identifier, columns: Array[Column], partitions: Array[Transform],
      properties: util.Map[String, String]): StagedTable = {
    val path = tablePath(ident)
    stage(ident, columns, partitions, properties, if (isTableDir(path)) LanceTables.latestVersion(conf, path) else 0L)
  }

  private def stage(ident: Identifier, columns: Array[Column], partitions: Array[Transform],
      properties: util.Map[String, String], readVersion: Long): StagedTable = {
    NewTable.checkNoPartitioning(partitions)
    val props = properties.asScala.toMap
    val table = NewTable(tablePath(ident), structOf(columns), props)
    new LanceStagedTable(qualified(ident), table, readVersion, conf, WriteOptions(props, Map.empty))
  }

  private def structOf(columns: Array[Column]): StructType = StructType(columns.map { c =>
    val meta = Option(c.metadataInJSON()).map(Metadata.fromJson).getOrElse(Metadata.empty)
    StructField(c.name(), c.dataType(), c.nullable(), meta)
  })

  private def qualified(ident: Identifier): String = s"$catalogName.${(ident.namespace() :+ ident.name()).mkString(".")}"

  /**
   * ALTER TABLE: ADD COLUMN(S) (nullable; rows already written read null), DROP COLUMN, RENAME COLUMN and ALTER
   * COLUMN ... DROP NOT NULL, committed together as one new version that changes the schema only (a Project
   * transaction; data files are untouched, field ids never reused). Other changes are refused.
   */
  override def alterTable(ident: Identifier, changes: TableChange*): Table = {
    val path = tablePath(ident)
    if (!isTableDir(path)) throw new NoSuchTableException(ident)
    LanceSparkException.translate {
      val snapshot = LanceTables.load(conf, path, TimeTravel.Latest)
      val edit = io.sparklance.core.schema.SchemaChanges.of(snapshot.manifest)
      changes.foreach {
        case c: TableChange.AddColumn =>
          if (c.position() != null) notYet("ALTER TABLE ... ADD COLUMN ... FIRST/AFTER")
          if (c.defaultValue() != null) notYet("ALTER TABLE ... ADD COLUMN ... DEFAULT")
          val names = c.fieldNames().toSeq
          edit.add(names.init, SparkSchemas.toLance(StructType(Seq(StructField(names.last, c.dataType(), c.isNullable)))))
        case c: TableChange.DeleteColumn =>
          try edit.drop(c.fieldNames().toSeq)
          catch { case _: io.sparklance.core.InvalidArgumentException if c.ifExists() => }
        case c: TableChange.RenameColumn => edit.rename(c.fieldNames().toSeq, c.newName())
        case c: TableChange.UpdateColumnNullability => edit.setNullable(c.fieldNames().toSeq, c.nullable())
        case other => notYet(s"ALTER TABLE (${other.getClass.getSimpleName})")
      }
      io.sparklance.core.txn.Committer.commit(new HadoopStorage(conf), path, io.sparklance.core.txn.Transaction.create(
        snapshot.version, io.sparklance.core.txn.Operation.Project(edit.result)))
    }
    loadTable(ident)
  }

  /**
   * DROP TABLE: a table of this catalog is its directory, so dropping it deletes the directory with every version
   * (DROP TABLE ... PURGE does the same). Path identifiers are refused: drop such a table by deleting its directory.
   */
  override def dropTable(ident: Identifier): Boolean = {
    if (isPathIdentifier(ident)) {
      throw new LanceSparkException(new UnsupportedFeatureException(s"DROP TABLE of a table named by its path " +
        s"(${ident.name()}) is not supported: it is not a table of catalog '$catalogName'. Delete the directory instead."))
    }
    val path = tablePath(ident)
    if (!isTableDir(path)) return false
    LanceSparkException.translate {
      val fs = new org.apache.hadoop.fs.Path(path).getFileSystem(conf)
      try fs.delete(new org.apache.hadoop.fs.Path(path), true)
      catch { case e: java.io.IOException => throw new io.sparklance.core.StorageException(path, "delete the table directory", e) }
    }
  }

  override def purgeTable(ident: Identifier): Boolean = dropTable(ident)

  override def renameTable(oldIdent: Identifier, newIdent: Identifier): Unit = notYet("ALTER TABLE ... RENAME")

  private def notYet(what: String): Nothing = throw new LanceSparkException(new UnsupportedFeatureException(
    s"$what is not supported by this version of sparklance's catalog '$catalogName' yet. Change the table with " +
      "pylance for now."))

  // ------------------------------------------------------------------------------------------ namespaces

  private def childNamespaces(dir: String): Seq[String] =
    storage.list(dir).filter(e => e.isDirectory && !e.name.endsWith(Suffix) && validName(e.name) &&
      !e.name.startsWith("_")).map(_.name).sorted

  override def listNamespaces(): Array[Array[String]] =
    LanceSparkException.translate(childNamespaces(warehouse).map(n => Array(n)).toArray)

  override def listNamespaces(namespace: Array[String]): Array[Array[String]] = LanceSparkException.translate {
    val dir = namespacePath(namespace)
    if (!storage.exists(dir)) throw new NoSuchNamespaceException(namespace)
    childNamespaces(dir).map(n => namespace :+ n).toArray
  }

  override def namespaceExists(namespace: Array[String]): Boolean =
    namespace.isEmpty || (storage.exists(namespacePath(namespace)) && !isTableDir(namespacePath(namespace)))

  override def loadNamespaceMetadata(namespace: Array[String]): util.Map[String, String] = {
    if (!namespaceExists(namespace)) throw new NoSuchNamespaceException(namespace)
    Map("location" -> namespacePath(namespace)).asJava
  }

  override def createNamespace(namespace: Array[String], metadata: util.Map[String, String]): Unit = {
    val dir = namespacePath(namespace)
    if (storage.exists(dir)) throw new NamespaceAlreadyExistsException(namespace)
    val fs = new org.apache.hadoop.fs.Path(dir).getFileSystem(conf)
    if (!fs.mkdirs(new org.apache.hadoop.fs.Path(dir))) {
      throw new LanceSparkException(new io.sparklance.core.StorageException(dir, "create the namespace directory",
        new java.io.IOException("mkdirs returned false")))
    }
  }

  override def alterNamespace(namespace: Array[String], changes: NamespaceChange*): Unit =
    throw new LanceSparkException(new UnsupportedFeatureException(
      s"Namespaces of catalog '$catalogName' are directories and have no properties to change."))

  /** DROP NAMESPACE; with CASCADE it deletes the tables and namespaces below it, like DROP TABLE does. */
  override def dropNamespace(namespace: Array[String], cascade: Boolean): Boolean = {
    val dir = namespacePath(namespace)
    if (!storage.exists(dir)) throw new NoSuchNamespaceException(namespace)
    if (storage.list(dir).nonEmpty && !cascade) throw new NonEmptyNamespaceException(namespace)
    LanceSparkException.translate {
      val fs = new org.apache.hadoop.fs.Path(dir).getFileSystem(conf)
      try fs.delete(new org.apache.hadoop.fs.Path(dir), true)
      catch { case e: java.io.IOException => throw new io.sparklance.core.StorageException(dir, "delete the namespace directory", e) }
    }
  }
}
