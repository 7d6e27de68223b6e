package io.sparklance.spark


import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{Row, SparkSession, SparkSessionExtensions}
import org.apache.spark.sql.catalyst.{FunctionIdentifier, TableIdentifier}
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference, Expression, ExpressionInfo}
import org.apache.spark.sql.catalyst.parser.ParserInterface
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.connector.catalog.Identifier
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types._
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.sparklance.core.{InvalidArgumentException, UnsupportedFeatureException}
import io.sparklance.core.util.Parse

/**
 * sparklance's SQL extensions (`spark.sql.extensions = io.sparklance.spark.LanceSqlExtensions`): maintenance
 * statements on tables of a Lance catalog (`lance.db.t`, or ``lance.`/path/t.lance` ``):
 *
 * {{{
 *   OPTIMIZE t [WITH (target_rows_per_fragment = 1048576, ...)] -- compaction; one new version
 *   VACUUM t [RETAIN 168 HOURS] [WITH (before_version = 5, ...)] [DRY RUN] -- remove old versions and their files
 *   DESCRIBE HISTORY t
 *   ALTER TABLE t CREATE [OR REPLACE] TAG [IF NOT EXISTS] name [AS OF VERSION 3 | AS OF TAG other
 *     | AS OF BRANCH b [VERSION 3]]
 *   ALTER TABLE t REPLACE TAG name [AS OF ...]                   -- tags, as pylance keeps them
 *   ALTER TABLE t DROP TAG [IF EXISTS] name
 *   SHOW TAGS t                                                   -- or SHOW TAG, [IN | FROM] t
 *   ALTER TABLE t CREATE BRANCH [IF NOT EXISTS] b [AS OF VERSION 3 | AS OF TAG tg | AS OF BRANCH src [VERSION 3]]
 *   ALTER TABLE t CREATE BRANCH b VERSION AS OF BRANCH src [3]    -- or MAIN [3], TAG tg; FROM for VERSION AS OF
 *   ALTER TABLE t DROP BRANCH [IF EXISTS] b
 *   SHOW BRANCHES t                                               -- or SHOW BRANCH; a branch is t.branch_b
 *   RESTORE TABLE t TO VERSION AS OF 3                           -- or AS OF 'tag'; the old version as a new one
 *   ALTER TABLE t CREATE INDEX name USING btree (col) [WITH (zone_size = 4096, replace = true)] -- one column
 *   ALTER TABLE t ADD COLUMNS c1, c2 FROM view                    -- backfill by _rowaddr (data evolution)
 *   ALTER TABLE t UPDATE COLUMNS c1, c2 FROM view                 -- rewrite columns in place, by _rowaddr
 *   ALTER TABLE t OPTIMIZE INDEX [name] [WITH (...)]              -- new fragments merged in (every index without a name)
 *   ALTER TABLE t REFRESH INDEX name [WITH (...)]                 -- the same for one index
 *   SHOW INDEXES FROM t                                           -- or IN t
 *   DROP INDEX name ON t                                          -- or ALTER TABLE t DROP INDEX name
 *   ALTER TABLE t SET UNENFORCED PRIMARY KEY (c1, c2)             -- recorded in the schema, never checked; set once
 *   REPLACE t WHERE cond AS SELECT ...                           -- rows matching cond replaced, one version ([[ReplaceWhere]])
 * }}}
 * A statement may start with `--` comment lines.
 * Anything else goes to Spark's parser. The extensions also add the table function `vector_search` (nearest neighbours,
 * [[VectorSearch]]), the other connector's full-text filters `lance_match`, `lance_match_phrase` and
 * `lance_multi_match` and its ranked `search` and `hybrid_search` table functions ([[RankedSearch]]), and let reads of Lance tables search label list indexes with
 * `array_contains` and `arrays_overlap` conditions ([[ListItemFilters]]), which Spark does not push to scans, and
 * run index lookups that read a few rows on the driver, without a job ([[DriverLookups]]).
 */
final class LanceSqlExtensions extends (SparkSessionExtensions => Unit) {
  override def apply(e: SparkSessionExtensions): Unit = {
    e.injectParser((_: SparkSession, delegate: ParserInterface) => new LanceSqlParser(delegate))
    e.injectPlannerStrategy(_ => ListItemFilters)
    e.injectPlannerStrategy(_ => DriverLookups)
    e.injectTableFunction((FunctionIdentifier(VectorSearch.Name),
      new ExpressionInfo(VectorSearch.getClass.getCanonicalName, VectorSearch.Name), VectorSearch.plan _))
    FullTextSearch.Functions.foreach { name =>
      e.injectFunction((FunctionIdentifier(name), FullTextSearch.info(name), FullTextSearch.call(name) _))
    }
    e.injectResolutionRule(_ => FullTextSearch.Resolution)
    e.injectTableFunction((FunctionIdentifier(RankedSearch.SearchName),
      new ExpressionInfo(RankedSearch.getClass.getCanonicalName, RankedSearch.SearchName), RankedSearch.searchPlan _))
    e.injectTableFunction((FunctionIdentifier(RankedSearch.HybridName),
      new ExpressionInfo(RankedSearch.getClass.getCanonicalName, RankedSearch.HybridName), RankedSearch.hybridPlan _))
  }
}

final class LanceSqlParser(delegate: ParserInterface) extends ParserShim(delegate) {
  import LanceSqlParser._

  override def parsePlan(sqlText: String): LogicalPlan = lance(sqlText).getOrElse(delegate.parsePlan(sqlText))

  override protected def lance(sqlText: String): Option[LogicalPlan] = {
    val text = LeadingComments.replaceFirstIn(sqlText.trim, "").trim.stripSuffix(";").trim
    def ident(t: String): Seq[String] = delegate.parseMultipartIdentifier(t)
    text match {
      case Optimize(t, options) => Some(OptimizeCommand(ident(t), Option(options).map(parseOptions(_, "OPTIMIZE")).getOrElse(Map.empty)))
      case Vacuum(t, hours, options, dry) => Some(VacuumCommand(ident(t), Option(hours).map(_.toDouble), dry != null,
        Option(options).map(parseOptions(_, "VACUUM")).getOrElse(Map.empty)))
      case History(t) => Some(HistoryCommand(ident(t)))
      case CreateTag(t, verb, ifNotExists, name, version, fromTag, branch, branchVersion) =>
        val mode = verb.toUpperCase(java.util.Locale.ROOT).split("\\s+").mkString(" ") match {
          case "REPLACE" => TagMode.Replace
          case "CREATE OR REPLACE" => TagMode.CreateOrReplace
          case _ if ifNotExists != null => TagMode.CreateIfNotExists
          case _ => TagMode.Create
        }
        if (ifNotExists != null && mode != TagMode.CreateIfNotExists) {
          throw new LanceSparkException(new InvalidArgumentException(s"$verb TAG ... IF NOT EXISTS is contradictory: " +
            "use CREATE TAG IF NOT EXISTS, or CREATE OR REPLACE TAG."))
        }
        Some(CreateTagCommand(ident(t), unquote(name), Option(version).orElse(Option(branchVersion)).map(_.toLong),
          Option(fromTag).map(unquote), Option(branch).map(unquote), mode))
      case DropTag(t, ifExists, name) => Some(DropTagCommand(ident(t), unquote(name), ifExists != null))
      case ShowTags(t) => Some(ShowTagsCommand(ident(t)))
      case CreateBranch(t, ifNotExists, name, version, tag, source, sourceVersion) =>
        Some(CreateBranchCommand(ident(t), unquote(name), Option(source).map(unquote),
          Option(version).orElse(Option(sourceVersion)).map(_.toLong), Option(tag).map(unquote), ifNotExists != null))
      case CreateBranchFrom(t, ifNotExists, name, mainVersion, source, sourceVersion, tag) =>
        // MAIN is the one alternative that names neither a branch nor a tag.
        val from = Option(source).map(unquote).orElse(if (tag == null) Some("main") else None)
        Some(CreateBranchCommand(ident(t), unquote(name), from,
          Option(mainVersion).orElse(Option(sourceVersion)).map(_.toLong), Option(tag).map(unquote), ifNotExists != null))
      case DropBranch(t, ifExists, name) => Some(DropBranchCommand(ident(t), unquote(name), ifExists != null))
      case ShowBranches(t) => Some(ShowBranchesCommand(ident(t)))
      case Restore(t, to) => Some(RestoreCommand(ident(t), unquote(to)))
      case CreateIndex(t, name, kind, columns, options) =>
        val names = columns.split(",").toSeq.map(c => unquote(c.trim))
        if (names.size != 1 || names.head.isEmpty) {
          throw new LanceSparkException(new UnsupportedFeatureException(s"Index ${unquote(name)} on ($columns): an " +
            "index of sparklance (as every scalar and vector index of Lance) covers exactly one column. Create one " +
            "index per column."))
        }
        Some(CreateIndexCommand(ident(t), unquote(name), kind, names.head, Option(options).map(parseOptions(_, "index")).getOrElse(Map.empty)))
      case ColumnsFrom(t, verb, inParens, bare, source) =>
        val names = Option(inParens).getOrElse(bare).split(",").toSeq.map(n => unquote(n.trim))
        Some(ColumnsFromCommand(ident(t), verb.toUpperCase(java.util.Locale.ROOT) == "UPDATE", names, ident(source)))
      case OptimizeIndex(t, verb, name, options) =>
        if (name == null && verb.equalsIgnoreCase("REFRESH")) {
          throw new LanceSparkException(new InvalidArgumentException("REFRESH INDEX needs the name of the index: " +
            "ALTER TABLE t REFRESH INDEX name (ALTER TABLE t OPTIMIZE INDEX brings every index up to date)."))
        }
        Some(OptimizeIndexCommand(ident(t), Option(name).map(unquote),
          Option(options).map(parseOptions(_, s"${verb.toUpperCase(java.util.Locale.ROOT)} INDEX")).getOrElse(Map.empty),
          refreshVerb = verb.equalsIgnoreCase("REFRESH")))
      case ShowIndexes(t) => Some(ShowIndexesCommand(ident(t)))
      case DropIndex(name, t) => Some(DropIndexCommand(ident(t), unquote(name)))
      case AlterDropIndex(t, name) => Some(DropIndexCommand(ident(t), unquote(name)))
      case ReplaceWhereStatement(t, rest) => Some(delegate.parsePlan(ReplaceWhere.merge(t, rest)))
      case PrimaryKey(t, columns) =>
        Some(PrimaryKeyCommand(ident(t), columns.split(",").toSeq.map(c => unquote(c.trim))))
      case AnyPrimaryKey(t) => throw new LanceSparkException(new InvalidArgumentException(s"Cannot read the columns " +
        s"of ALTER TABLE $t SET UNENFORCED PRIMARY KEY: list them in parentheses, separated by commas, e.g. " +
        "SET UNENFORCED PRIMARY KEY (id, name)."))
      case _ => None
    }
  }

  override def parseExpression(sqlText: String): Expression = delegate.parseExpression(sqlText)
  override def parseTableIdentifier(sqlText: String): TableIdentifier = delegate.parseTableIdentifier(sqlText)
  override def parseFunctionIdentifier(sqlText: String): FunctionIdentifier = delegate.parseFunctionIdentifier(sqlText)
  override def parseMultipartIdentifier(sqlText: String): Seq[String] = delegate.parseMultipartIdentifier(sqlText)
  override def parseQuery(sqlText: String): LogicalPlan = delegate.parseQuery(sqlText)
  override def parseTableSchema(sqlText: String): StructType = delegate.parseTableSchema(sqlText)
  override def parseDataType(sqlText: String): DataType = delegate.parseDataType(sqlText)
}

object LanceSqlParser {
  private val Table = """((?:`[^`]+`|[\w]+)(?:\.(?:`[^`]+`|[\w]+))*)"""
  private val Name = """(`[^`]+`|'[^']+'|[\w.-]+)"""
  private val Optimize = (s"(?is)OPTIMIZE\\s+$Table(?:\\s+WITH\\s*\\((.*)\\))?").r
  private val Vacuum = (s"(?is)VACUUM\\s+$Table(?:\\s+RETAIN\\s+(\\d+(?:\\.\\d+)?)\\s+HOURS)?" +
    s"(?:\\s+WITH\\s*\\(([^)]*)\\))?(\\s+DRY\\s+RUN)?").r
  private val History = (s"(?is)DESCRIBE\\s+HISTORY\\s+$Table").r
  // A comment line or more before a statement, as the other connector's documentation writes them.
  private val LeadingComments = """^(?:--[^\n]*(?:\n\s*|$))+""".r
  // AS OF VERSION n | AS OF TAG t | AS OF BRANCH b [VERSION n]: the version a tag or branch is made from.
  private val AsOf = s"(?:\\s+AS\\s+OF\\s+(?:VERSION\\s+(\\d+)|TAG\\s+$Name|BRANCH\\s+$Name(?:\\s+VERSION\\s+(\\d+))?))?"
  private val CreateTag = (s"(?is)ALTER\\s+TABLE\\s+$Table\\s+(CREATE(?:\\s+OR\\s+REPLACE)?|REPLACE)\\s+TAG\\s+" +
    s"(IF\\s+NOT\\s+EXISTS\\s+)?$Name$AsOf").r
  private val DropTag = (s"(?is)ALTER\\s+TABLE\\s+$Table\\s+DROP\\s+TAG\\s+(IF\\s+EXISTS\\s+)?$Name").r
  private val ShowTags = (s"(?is)SHOW\\s+TAGS?\\s+(?:(?:IN|FROM)\\s+)?$Table").r
  private val CreateBranch = (s"(?is)ALTER\\s+TABLE\\s+$Table\\s+CREATE\\s+BRANCH\\s+(IF\\s+NOT\\s+EXISTS\\s+)?$Name$AsOf").r
  // The forms proposed for the other Lance connector: VERSION AS OF MAIN [n] | BRANCH src [n] | TAG t (or FROM ...).
  private val CreateBranchFrom = (s"(?is)ALTER\\s+TABLE\\s+$Table\\s+CREATE\\s+BRANCH\\s+(IF\\s+NOT\\s+EXISTS\\s+)?$Name" +
    s"\\s+(?:VERSION\\s+AS\\s+OF|FROM)\\s+(?:MAIN(?:\\s+(\\d+))?|BRANCH\\s+$Name(?:\\s+(\\d+))?|TAG\\s+$Name)").r
  private val DropBranch = (s"(?is)ALTER\\s+TABLE\\s+$Table\\s+DROP\\s+BRANCH\\s+(IF\\s+EXISTS\\s+)?$Name").r
  private val ShowBranches = (s"(?is)SHOW\\s+BRANCH(?:ES)?\\s+(?:(?:IN|FROM)\\s+)?$Table").r
  private val Restore = (s"(?is)RESTORE\\s+TABLE\\s+$Table\\s+TO\\s+VERSION\\s+AS\\s+OF\\s+$Name").r

  private val CreateIndex = (s"(?is)ALTER\\s+TABLE\\s+$Table\\s+CREATE\\s+INDEX\\s+$Name\\s+USING\\s+(\\w+)\\s*" +
    s"\\(([^)]*)\\)(?:\\s+WITH\\s*\\((.*)\\))?").r
  private val OptimizeIndex = (s"(?is)ALTER\\s+TABLE\\s+$Table\\s+(OPTIMIZE|REFRESH)\\s+INDEX(?:ES)?(?:\\s+$Name)?" +
    s"(?:\\s+WITH\\s*\\((.*)\\))?").r
  private val ShowIndexes = (s"(?is)SHOW\\s+INDEX(?:ES)?\\s+(?:(?:IN|FROM|ON)\\s+)?$Table").r
  private val DropIndex = (s"(?is)DROP\\s+INDEX\\s+$Name\\s+ON\\s+$Table").r
  private val AlterDropIndex = (s"(?is)ALTER\\s+TABLE\\s+$Table\\s+DROP\\s+INDEX\\s+$Name").r
  private val ReplaceWhereStatement = (s"(?is)REPLACE\\s+$Table\\s+WHERE\\s+(.+)").r
  private val Columns = """((?:`[^`]+`|\w+)(?:\s*,\s*(?:`[^`]+`|\w+))*)"""
  private val Paths = """((?:`[^`]+`|[\w.]+)(?:\s*,\s*(?:`[^`]+`|[\w.]+))*)"""
  private val AnyPrimaryKey = (s"(?is)ALTER\\s+TABLE\\s+$Table\\s+SET\\s+UNENFORCED\\s+PRIMARY\\s+KEY\\b.*").r
  private val PrimaryKey = (s"(?is)ALTER\\s+TABLE\\s+$Table\\s+SET\\s+UNENFORCED\\s+PRIMARY\\s+KEY\\s*\\(\\s*$Paths\\s*\\)").r
  private val ColumnsFrom = (s"(?is)ALTER\\s+TABLE\\s+$Table\\s+(ADD|UPDATE)\\s+COLUMNS?\\s+(?:\\(\\s*$Columns\\s*\\)|$Columns)" +
    s"\\s+FROM\\s+$Table").r
  private val OptionPair = """(?s)\s*(`[^`]+`|[\w.]+)\s*=\s*('(?:[^']|'')*'|"[^"]*"|[^,\s]+)\s*""".r

  /** `k = v, k2 = 'v2'` as a map (keys lower case); anything else is an error naming what could not be read. */
  private def parseOptions(text: String, what: String): Map[String, String] =
    if (text.trim.isEmpty) Map.empty
    else text.split(",(?=(?:[^']*'[^']*')*[^']*$)").toSeq.map {
      case OptionPair(k, v) => unquote(k).toLowerCase(java.util.Locale.ROOT) -> unquote(v.stripPrefix("\"").stripSuffix("\""))
      case other => throw new LanceSparkException(new InvalidArgumentException(s"Cannot read $what option '${other.trim}': " +
        "write options as name = value, separated by commas, e.g. WITH (zone_size = 4096)."))
    }.toMap

  private def unquote(s: String): String =
    if (s.length >= 2 && (s.head == '`' || s.head == '\'') && s.last == s.head) s.substring(1, s.length - 1) else s

  /**
   * The path of the table a multi-part name gives, resolved as Spark resolves names: a first part that names a
   * configured catalog is that catalog; otherwise the name is in the current catalog, and a one-part name in its
   * current namespace too (after `USE lance.db`, `OPTIMIZE t` is `lance.db.t`). The catalog must be a
   * [[LanceCatalog]].
   */
  def location(spark: SparkSession, parts: Seq[String]): String = {
    val conf = spark.sessionState.conf
    def isCatalog(name: String): Boolean = conf.contains(s"spark.sql.catalog.$name")
    val (catalogName, name) =
      if (parts.size > 1 && isCatalog(parts.head)) (parts.head, parts.tail)
      else {
        val current = spark.catalog.currentCatalog()
        val namespace = spark.sessionState.sqlParser.parseMultipartIdentifier(spark.catalog.currentDatabase)
        (current, if (parts.size == 1) namespace :+ parts.head else parts)
      }
    val catalogClass = classOf[LanceCatalog].getName
    if (!conf.getConfString(s"spark.sql.catalog.$catalogName", "").equals(catalogClass) ||
        (name.size < 2 && !name.headOption.exists(n => n.startsWith("/") || n.contains(":")))) {
      throw new LanceSparkException(new InvalidArgumentException(s"${parts.mkString(".")} is not a table of a Lance " +
        s"catalog (it resolves to catalog '$catalogName'): name it as <catalog>.<namespace>.<table> with a catalog " +
        s"configured as $catalogClass, by path as <catalog>.`/path/to/table.lance`, or after USE <catalog>.<namespace> " +
        "by its name alone."))
    }
    val prefix = s"spark.sql.catalog.$catalogName."
    val options = conf.getAllConfs.collect { case (k, v) if k.startsWith(prefix) => k.stripPrefix(prefix) -> v }
    val catalog = new LanceCatalog
    catalog.initialize(catalogName, new CaseInsensitiveStringMap(options.asJava))
    catalog.locationOf(Identifier.of(name.init.toArray, name.last))
  }

  private def attr(name: String, dt: DataType, nullable: Boolean = false): AttributeReference =
    AttributeReference(name, dt, nullable)()

  /**
   * OPTIMIZE (compaction): one row of lance-spark's columns (`fragments_removed`, `fragments_added`, `files_removed`,
   * `files_added`, counted as pylance's `CompactionMetrics`), then sparklance's `version` (null when nothing was done).
   */
  case class OptimizeCommand(table: Seq[String], options: Map[String, String]) extends LeafRunnableCommand {
    override val output: Seq[Attribute] = Seq(attr("fragments_removed", LongType), attr("fragments_added", LongType),
      attr("files_removed", LongType), attr("files_added", LongType), attr("version", LongType, nullable = true))
    override def run(spark: SparkSession): Seq[Row] = {
      val r = LanceTableOps.compact(spark, location(spark, table), options)
      Seq(Row(r.fragmentsRemoved.toLong, r.fragmentsAdded.toLong, r.filesRemoved, r.filesAdded, r.version.orNull))
    }
  }

  /**
   * VACUUM: one row of lance-spark's columns (`bytes_removed`, `old_versions`: how many versions went), then
   * sparklance's `versions` (their numbers) and `paths` (the files removed; with DRY RUN, those that would be).
   */
  case class VacuumCommand(table: Seq[String], hours: Option[Double], dryRun: Boolean, options: Map[String, String])
      extends LeafRunnableCommand {
    override val output: Seq[Attribute] = Seq(attr("bytes_removed", LongType), attr("old_versions", LongType),
      attr("versions", ArrayType(LongType, containsNull = false)), attr("paths", ArrayType(StringType, containsNull = false)))
    override def run(spark: SparkSession): Seq[Row] = {
      val r = LanceTableOps.cleanup(spark, location(spark, table), hours, dryRun, options)
      Seq(Row(r.removedBytes, r.removedVersions.size.toLong, r.removedVersions, r.removedFiles))
    }
  }

  case class HistoryCommand(table: Seq[String]) extends LeafRunnableCommand {
    override val output: Seq[Attribute] = Seq(attr("version", LongType), attr("timestamp", TimestampType),
      attr("operation", StringType), attr("rows", LongType), attr("fragments", IntegerType), attr("rows_added", LongType),
      attr("rows_deleted", LongType), attr("written_by", StringType))
    override def run(spark: SparkSession): Seq[Row] = LanceTableOps.history(spark, location(spark, table)).collect().toSeq
  }

  /**
   * Columns backfilled from a query's rows, matched by `_rowaddr` (the other Lance connector's data evolution): new
   * columns (`ADD COLUMNS c FROM view`, [[AddColumns.fromSource]]) or existing ones set for the rows the query has
   * (`UPDATE COLUMNS c FROM view`, [[AddColumns.updateFromSource]]). `source` names a view or table holding
   * `_rowaddr` and the columns.
   */
  case class ColumnsFromCommand(table: Seq[String], update: Boolean, names: Seq[String], source: Seq[String])
      extends LeafRunnableCommand {
    override val output: Seq[Attribute] = Seq(attr("version", LongType))
    override def run(spark: SparkSession): Seq[Row] = {
      val (path, name) = (location(spark, table), quoted(source))
      Seq(Row(if (update) AddColumns.updateFromSource(spark, path, names, spark.table(name), name)
        else AddColumns.fromSource(spark, path, names, spark.table(name), name)))
    }
  }

  private def quoted(name: Seq[String]): String =
    name.map(p => if (p.matches("\\w+")) p else s"`${p.replace("`", "``")}`").mkString(".")

  /** How CREATE / REPLACE TAG treats a tag of that name. */
  sealed trait TagMode
  object TagMode {
    case object Create extends TagMode
    case object CreateIfNotExists extends TagMode
    case object CreateOrReplace extends TagMode
    case object Replace extends TagMode
  }

  /**
   * A tag for a version: the one given, the one another tag points to, or the latest; of main, or of branch `branch`
   * (the tag then names the branch). CREATE refuses an existing tag, CREATE ... IF NOT EXISTS leaves it, REPLACE
   * moves it (and refuses a missing one), CREATE OR REPLACE does either.
   */
  case class CreateTagCommand(table: Seq[String], name: String, version: Option[Long], fromTag: Option[String],
      branch: Option[String], mode: TagMode) extends LeafRunnableCommand {
    override val output: Seq[Attribute] = Seq(attr("name", StringType))
    override def run(spark: SparkSession): Seq[Row] = {
      val main = location(spark, table)
      val tags = LanceTableOps.tagVersions(spark, main)
      val path = branch.map(LanceTableOps.branchPath(spark, main, _)).getOrElse(main)
      val v = version.orElse(fromTag.map(t => tags.getOrElse(t, throw new LanceSparkException(
          new io.sparklance.core.TagNotFoundException(main, t, tags.keys.toSeq.sorted)))))
        .getOrElse(TableAccess.latestVersion(spark.sessionState.newHadoopConf(), path))
      val exists = tags.contains(name)
      mode match {
        case TagMode.CreateIfNotExists if exists => ()
        case TagMode.Replace | TagMode.CreateOrReplace if exists => LanceTableOps.replaceTag(spark, path, name, v)
        case TagMode.Replace => LanceTableOps.replaceTag(spark, path, name, v) // fails, naming the tags there are
        case _ => LanceTableOps.createTag(spark, path, name, v)
      }
      Seq(Row(name))
    }
  }

  case class DropTagCommand(table: Seq[String], name: String, ifExists: Boolean) extends LeafRunnableCommand {
    override def run(spark: SparkSession): Seq[Row] = {
      val path = location(spark, table)
      if (!ifExists || LanceTableOps.tagVersions(spark, path).contains(name)) LanceTableOps.deleteTag(spark, path, name)
      Nil
    }
  }

  /**
   * SHOW TAGS: lance-spark's columns, `name`, `branch` (null for main), `version`, `created_at` and `updated_at` (Unix
   * epoch seconds) and `manifest_size`, as the tag files record them (null where one does not).
   */
  case class ShowTagsCommand(table: Seq[String]) extends LeafRunnableCommand {
    override val output: Seq[Attribute] = Seq(attr("name", StringType), attr("branch", StringType, nullable = true),
      attr("version", LongType), attr("created_at", LongType, nullable = true),
      attr("updated_at", LongType, nullable = true), attr("manifest_size", IntegerType, nullable = true))
    override def run(spark: SparkSession): Seq[Row] = LanceTableOps.tagList(spark, location(spark, table)).map { t =>
      Row(t.name, t.branch.orNull, t.version, t.createdAt.map(i => Long.box(i.getEpochSecond)).orNull,
        t.updatedAt.map(i => Long.box(i.getEpochSecond)).orNull, t.manifestSize.map(s => Int.box(s.toInt)).orNull)
    }
  }

  /**
   * A branch from the latest version of `table` (main, or the branch `t.branch_b` names) or of branch `source` of
   * it, from one of its versions, or from the version a tag points to. With IF NOT EXISTS an existing branch is
   * left as it is.
   */
  case class CreateBranchCommand(table: Seq[String], name: String, source: Option[String], version: Option[Long],
      tag: Option[String], ifNotExists: Boolean) extends LeafRunnableCommand {
    override val output: Seq[Attribute] = Seq(attr("name", StringType))
    override def run(spark: SparkSession): Seq[Row] = {
      val path = location(spark, table)
      if (!ifNotExists || LanceTableOps.branches(spark, path).where(org.apache.spark.sql.functions.col("name") === name).isEmpty) {
        val from = source.map(LanceTableOps.branchPath(spark, path, _)).getOrElse(path)
        LanceTableOps.createBranch(spark, from, name, version, tag)
      }
      Seq(Row(name))
    }
  }

  case class DropBranchCommand(table: Seq[String], name: String, ifExists: Boolean) extends LeafRunnableCommand {
    override def run(spark: SparkSession): Seq[Row] = {
      val path = location(spark, table)
      if (!ifExists || !LanceTableOps.branches(spark, path).where(org.apache.spark.sql.functions.col("name") === name).isEmpty) {
        LanceTableOps.deleteBranch(spark, path, name)
      }
      Nil
    }
  }

  /**
   * SHOW BRANCHES: lance-spark's columns, `name`, `parent_branch` (null for main), `parent_version`, `created_at`
   * (Unix epoch seconds, as the branch file records it) and `manifest_size` (null where a file does not record them).
   */
  case class ShowBranchesCommand(table: Seq[String]) extends LeafRunnableCommand {
    override val output: Seq[Attribute] = Seq(attr("name", StringType), attr("parent_branch", StringType, nullable = true),
      attr("parent_version", LongType), attr("created_at", LongType, nullable = true),
      attr("manifest_size", IntegerType, nullable = true))
    override def run(spark: SparkSession): Seq[Row] = LanceTableOps.branchList(spark, location(spark, table)).map { b =>
      Row(b.name, b.parentBranch.orNull, b.parentVersion, b.createdAt.map(i => Long.box(i.getEpochSecond)).orNull,
        b.manifestSize.map(s => Int.box(s.toInt)).orNull)
    }
  }

  /**
   * CREATE INDEX. Of the other connector's build options, `num_segments` (how many tasks build it) is accepted and
   * not used (sparklance builds one task per fragment), and `train = false` creates a scalar index empty, covering
   * no fragment until OPTIMIZE INDEX fills it (refused for vector and full-text indexes). The vector index options
   * earlier versions of the other connector's CREATE INDEX page name in camel case (`numPartitions`, `numSubVectors`,
   * ...) are its names for pylance's ([[VectorOptionNames]]).
   */
  case class CreateIndexCommand(table: Seq[String], name: String, kind: String, column: String,
      options: Map[String, String]) extends LeafRunnableCommand {
    override val output: Seq[Attribute] = attrs(LanceIndexes.segmentColumns)
    override def run(spark: SparkSession): Seq[Row] = {
      val replace = flag(options, "replace", "Index option").getOrElse(false)
      val train = flag(options, "train", "Index option").getOrElse(true)
      unusedOption(options, "num_segments", s"index $name")
      val buildOptions = if (kind.equalsIgnoreCase("btree")) btreeBuildOptions(options, name) else Nil
      if (kind.equalsIgnoreCase("zonemap")) zoneMapSetting(spark, name)
      LanceIndexes.create(spark, location(spark, table), name, kind, column,
        vectorOptionNames(options -- Seq("replace", "train", "num_segments") -- buildOptions, name), replace, train)
    }
  }

  /** The other connector's session setting choosing how its zone map builds commit their segments. */
  private val ZoneMapConsolidate = "spark.lance.zonemap.consolidate.enabled"

  /** Logs that [[ZoneMapConsolidate]], when set, has no effect on zone map `index`. */
  private def zoneMapSetting(spark: SparkSession, index: String): Unit =
    spark.conf.getOption(ZoneMapConsolidate).foreach { v =>
      log.warn(s"Setting $ZoneMapConsolidate = $v has no effect on index $index: sparklance writes a zone map as " +
        "one segment over every fragment, as pylance does (the other connector's consolidated layout).")
    }

  /**
   * Checks the other connector's B-tree build options, which choose how its tasks split the work: `build_mode`
   * (`fragment` or `range`) and `rows_per_range` (a whole number). Either way the index is one B-tree over every row,
   * as sparklance builds it (each task sorts a fragment's keys, the driver merges them), so they are accepted, logged
   * and not used. Returns the keys given.
   */
  private def btreeBuildOptions(options: Map[String, String], index: String): Seq[String] = {
    options.get("build_mode").foreach { v =>
      if (!Seq("fragment", "range").contains(v.trim.toLowerCase(java.util.Locale.ROOT))) {
        throw new LanceSparkException(new InvalidArgumentException(s"Index $index: option build_mode must be " +
          s"'fragment' or 'range', not '$v'."))
      }
      log.warn(s"Option build_mode = $v of index $index is accepted and not used: sparklance sorts each fragment's " +
        "keys in a task and merges them on the driver, which builds the same B-tree.")
    }
    count(options, "rows_per_range", s"index $index").foreach { v =>
      log.warn(s"Option rows_per_range = $v of index $index is accepted and not used: sparklance builds B-trees by " +
        "fragment.")
    }
    Seq("build_mode", "rows_per_range").filter(options.contains)
  }

  /** The other connector's camel-case vector index options (lower case, as parsed) -> pylance's names. */
  private val VectorOptionNames = Map("numpartitions" -> "num_partitions", "numsubvectors" -> "num_sub_vectors",
    "numbits" -> "num_bits", "samplerate" -> "sample_rate", "maxiters" -> "max_iters", "distancetype" -> "distance_type")

  /** `options` with [[VectorOptionNames]] renamed; an option given under both names is an error. */
  private def vectorOptionNames(options: Map[String, String], index: String): Map[String, String] = {
    options.keys.filter(VectorOptionNames.contains).foreach { k =>
      if (options.contains(VectorOptionNames(k))) {
        throw new LanceSparkException(new InvalidArgumentException(s"Index $index: option $k is another name for " +
          s"${VectorOptionNames(k)}, and both are given. Give one of them."))
      }
    }
    options.map { case (k, v) => VectorOptionNames.getOrElse(k, k) -> v }
  }

  private def flag(options: Map[String, String], key: String, what: String): Option[Boolean] =
    options.get(key).map(v => Parse.boolean(v).getOrElse(throw new LanceSparkException(
      new InvalidArgumentException(s"$what $key must be true or false, not '$v'."))))

  /** Option `key` of `what`, a whole number of at least 0 (refused otherwise). */
  private def count(options: Map[String, String], key: String, what: String): Option[Int] =
    options.get(key).map { v =>
      Parse.long(v).filter(n => n >= 0 && n <= Int.MaxValue).map(_.toInt).getOrElse(throw new LanceSparkException(
        new InvalidArgumentException(s"Option $key of $what must be a whole number of at least 0, not '$v'.")))
    }

  /** Checks a tuning option of the other connector that sparklance accepts and does not use (it logs that). */
  private def unusedOption(options: Map[String, String], key: String, what: String): Unit =
    count(options, key, what).foreach { v =>
      log.warn(s"Option $key = $v of $what is accepted and not used: sparklance builds index entries in one task " +
        "per fragment and merges them into one segment.")
    }

  private val log = org.slf4j.LoggerFactory.getLogger(classOf[LanceSqlParser])

  /**
   * OPTIMIZE INDEX, or REFRESH INDEX (`refreshVerb`), of one index or (OPTIMIZE INDEX without a name) of every index:
   * the fragments it does not cover are indexed. Options:
   *  - `num_indices_to_merge = n` (pylance's and lance-spark's): the newest n segments are merged with them into
   *    one; 0 adds them as a new delta segment. Without it, every segment is merged into one.
   *  - `num_segments = n` (lance-spark's REFRESH INDEX: the segments added, at most one per uncovered fragment): the
   *    uncovered fragments are added as a new segment, no segment merged (as `num_indices_to_merge = 0`); more than
   *    one segment added at once is refused (not supported).
   *  - `retrain = false` is what it does (`true` is refused); the index's own options (`rows_per_zone`, ...) must be
   *    the ones it was built with.
   * One row per index: OPTIMIZE INDEX returns lance-spark's `index_name`, `fragments_indexed`, `segments_before`,
   * `segments_after`, REFRESH INDEX its `fragments_indexed`, `segments_added`, `index_name`; then both the index's
   * newest segment as CREATE INDEX describes it (less its name).
   */
  case class OptimizeIndexCommand(table: Seq[String], name: Option[String], options: Map[String, String] = Map.empty,
      refreshVerb: Boolean = false) extends LeafRunnableCommand {
    private val segment = attrs(LanceIndexes.segmentColumns).tail
    override val output: Seq[Attribute] =
      if (refreshVerb) Seq(attr("fragments_indexed", LongType), attr("segments_added", LongType),
        attr("index_name", StringType)) ++ segment
      else Seq(attr("index_name", StringType), attr("fragments_indexed", LongType), attr("segments_before", LongType),
        attr("segments_after", LongType)) ++ segment
    override def run(spark: SparkSession): Seq[Row] = {
      val what = s"index ${name.getOrElse("(every index)")}"
      if (flag(options, "retrain", "Index option").getOrElse(false)) {
        throw new LanceSparkException(new UnsupportedFeatureException(s"Option retrain = true of $what is not " +
          "supported: sparklance extends an index with the parameters it was built with. Rebuild it with CREATE " +
          "INDEX ... WITH (replace = true) instead."))
      }
      val toMerge = count(options, "num_indices_to_merge", what)
      val segments = count(options, "num_segments", what)
      if (segments.contains(0)) {
        throw new LanceSparkException(new InvalidArgumentException(s"Option num_segments of $what must be at least 1 " +
          "(the segments added), not 0."))
      }
      if (segments.isDefined && toMerge.exists(_ > 0)) {
        throw new LanceSparkException(new InvalidArgumentException(s"Options num_segments and num_indices_to_merge = " +
          s"${toMerge.get} of $what contradict each other: num_segments adds segments without merging any. Give one."))
      }
      val merge = if (segments.isDefined) Some(0) else toMerge
      val own = options -- Seq("retrain", "num_segments", "num_indices_to_merge")
      val path = location(spark, table)
      val names = name.map(Seq(_)).getOrElse {
        if (own.nonEmpty) {
          throw new LanceSparkException(new InvalidArgumentException(s"Options ${own.keys.toSeq.sorted.mkString(", ")} " +
            "name the options of one index: give its name (ALTER TABLE t OPTIMIZE INDEX name WITH (...))."))
        }
        LanceIndexes.indexNames(spark, path)
      }
      segments.filter(_ > 1).foreach { n =>
        names.find(LanceIndexes.uncoveredFragments(spark, path, _) > 1).foreach { index =>
          throw new LanceSparkException(new UnsupportedFeatureException(s"Option num_segments = $n of index $index is " +
            "not supported: sparklance adds the fragments an index does not cover as one segment, not several in one " +
            "refresh. Use num_segments = 1 (or num_indices_to_merge = 0), or leave it out to merge them into the index."))
        }
      }
      names.map(LanceIndexes.optimize(spark, path, _, own, merge)).map { m =>
        val rest = m.newest.toSeq.tail
        val head: Seq[Any] =
          if (refreshVerb) Seq(m.fragmentsIndexed, m.segmentsAdded, m.name)
          else Seq(m.name, m.fragmentsIndexed, m.segmentsBefore, m.segmentsAfter)
        Row.fromSeq(head ++ rest)
      }
    }
  }

  /** SHOW INDEXES: one row per index, lance-spark's columns then sparklance's ([[LanceIndexes.indexColumns]]). */
  case class ShowIndexesCommand(table: Seq[String]) extends LeafRunnableCommand {
    override val output: Seq[Attribute] = attrs(LanceIndexes.indexColumns)
    override def run(spark: SparkSession): Seq[Row] = LanceIndexes.list(spark, location(spark, table))
  }

  case class DropIndexCommand(table: Seq[String], name: String) extends LeafRunnableCommand {
    override val output: Seq[Attribute] = Seq(attr("version", LongType))
    override def run(spark: SparkSession): Seq[Row] = Seq(Row(LanceIndexes.drop(spark, location(spark, table), name)))
  }

  private def attrs(schema: StructType): Seq[Attribute] = schema.fields.toSeq.map(f => attr(f.name, f.dataType, f.nullable))

  /**
   * `ALTER TABLE t SET UNENFORCED PRIMARY KEY (c1, c2)`: the table's primary key recorded in its schema, as lance-spark
   * does it (a row of `status` and the columns, in key order); see `Table.setPrimaryKey`.
   */
  case class PrimaryKeyCommand(table: Seq[String], columns: Seq[String]) extends LeafRunnableCommand {
    override val output: Seq[Attribute] = Seq(attr("status", StringType), attr("primary_key_columns", StringType))
    override def run(spark: SparkSession): Seq[Row] = {
      LanceTableOps.setPrimaryKey(spark, location(spark, table), columns)
      Seq(Row("OK", columns.mkString(",")))
    }
  }

  case class RestoreCommand(table: Seq[String], to: String) extends LeafRunnableCommand {
    override val output: Seq[Attribute] = Seq(attr("version", LongType))
    override def run(spark: SparkSession): Seq[Row] = {
      val path = location(spark, table)
      val v = Parse.long(to).map(LanceTableOps.restore(spark, path, _)).getOrElse(LanceTableOps.restoreTag(spark, path, to))
      Seq(Row(v))
    }
  }

}
