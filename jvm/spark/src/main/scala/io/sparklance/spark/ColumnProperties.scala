package io.sparklance.spark

import org.apache.spark.sql.types.{ArrayType, BinaryType, DoubleType, FloatType, Metadata, MetadataBuilder, StringType, StructField, StructType}

import io.sparklance.core.{InvalidArgumentException, UnsupportedFeatureException}
import io.sparklance.core.util.Parse

/**
 * Column properties of a table being created, or of columns added to a table later: the other Lance connector shapes columns with TBLPROPERTIES
 * `<column>.arrow.<key>` and `<column>.lance.<key>`, and with the Spark field metadata they stand for. Each is
 * applied to the new table's column as Spark field metadata (which [[SparkSchemas.toLance]] turns into the Lance
 * type and field metadata pylance writes for the same Arrow field), or refused, never stored as table config and
 * forgotten. Set on an existing table, a property naming no column yet is kept in the table's config and shapes the
 * column of that name that ADD COLUMNS ... FROM or ADD COLUMN adds later:
 *
 * | property                              | field metadata                     | column             |
 * |---------------------------------------|------------------------------------|--------------------|
 * | `arrow.fixed-size-list.size = n`      | `arrow.fixed-size-list.size`       | `ARRAY`: a vector  |
 * | `arrow.float16 = true`                | `arrow.float16`                    | `ARRAY<FLOAT>` or `ARRAY<DOUBLE>` vector: float16 items |
 * | `arrow.large_var_char = true`         | `arrow:large-var-char`             | `STRING`: large_string |
 * | `lance.encoding = blob`               | `lance-encoding:blob`              | `BINARY`: a blob column |
 * | `lance.compression`, `lance.compression-level`, `lance.structural-encoding`, `lance.rle-threshold`, `lance.bss` | `lance-encoding:<key>` | any |
 *
 * A double becomes a float16 item as the other connector's Arrow writer makes it: rounded to the nearest float32,
 * then to the nearest float16 (ties to even both times), since Arrow Java narrows to half precision from a float only.
 *
 * The other keys of that form (`lance.dict-*`, `lance.minichunk-size`, ...) are refused as not supported, naming the
 * property. Field metadata given directly on a DataFrame's columns is checked the same way.
 */
object ColumnProperties {
  private val ColumnKey = """(?i)(.+)\.(arrow|lance)\.(.+)""".r

  /**
   * Whether `key` has the form of a column property the other connector applies when it writes a column
   * (`<column>.arrow.<key>`, `<column>.lance.encoding`, ...), whatever columns the table has now.
   */
  def isColumnPropertyForm(key: String): Boolean = key match {
    case ColumnKey(column, _, name) => !column.equalsIgnoreCase("sparklance") && ColumnKeys.exists(name.toLowerCase.startsWith)
    case _ => false
  }

  /** The keys after `<column>.arrow.` and `<column>.lance.` that the other connector documents. */
  private val ColumnKeys = Seq("fixed-size-list.size", "float16", "large_var_char", "encoding", "compression",
    "structural-encoding", "rle-threshold", "bss", "dict-", "minichunk-size")

  /** Spark field metadata: a vector column's items are float16 (Spark has no such type; they read as FLOAT). */
  val Float16Key = "arrow.float16"
  /** Spark field metadata: a `STRING` column stored as Arrow's large_string (64-bit offsets). */
  val LargeVarCharKey = "arrow:large-var-char"
  /** Spark field metadata (and Lance field metadata): a blob column. */
  val BlobKey = "lance-encoding:blob"

  /** The Lance encoding hints taken from `<column>.lance.<key>`, with a check of their value. */
  private val EncodingHints: Map[String, String => Boolean] = Map(
    "compression" -> (v => Set("zstd", "lz4", "fsst", "none").contains(v.toLowerCase)),
    "compression-level" -> (v => Parse.int(v).isDefined),
    "structural-encoding" -> (v => Set("miniblock", "fullzip").contains(v.toLowerCase)),
    "rle-threshold" -> (v => scala.util.Try(v.trim.toDouble).toOption.exists(d => d > 0 && d <= 1)),
    "bss" -> (v => Set("off", "on", "auto").contains(v.toLowerCase)))
  private val HintValues = Map("compression" -> "zstd, lz4, fsst or none", "compression-level" -> "an integer",
    "structural-encoding" -> "miniblock or fullzip", "rle-threshold" -> "a number in (0, 1]", "bss" -> "off, on or auto")

  /** Whether `key` is a column property of one of `columns` (top-level column names). */
  def isColumnProperty(key: String, columns: Seq[String]): Boolean = key match {
    case ColumnKey(column, _, _) => columns.exists(_.equalsIgnoreCase(column))
    case _ => false
  }

  /**
   * The schema with the column properties among `properties` applied to its top-level columns, and the other
   * properties. A property whose prefix names no column is left among the others (it is table config).
   */
  def apply(schema: StructType, properties: Map[String, String]): (StructType, Map[String, String]) = {
    val (mine, rest) = properties.partition { case (key, _) => isColumnProperty(key, schema.fieldNames.toSeq) }
    val byColumn = mine.toSeq.collect { case (key @ ColumnKey(column, kind, name), value) =>
      (column.toLowerCase, (key, kind.toLowerCase, name.toLowerCase, value.trim))
    }.groupBy(_._1).map { case (column, props) => column -> props.map(_._2) }
    val shaped = StructType(schema.fields.map { f =>
      val props = byColumn.getOrElse(f.name.toLowerCase, Nil)
      val meta = new MetadataBuilder().withMetadata(f.metadata)
      props.sortBy(_._1).foreach { case (key, kind, name, value) => put(meta, key, kind, name, value) }
      check(f.copy(metadata = meta.build()))
    })
    (shaped, rest)
  }

  /**
   * Checks a column property set on an existing table (ALTER TABLE ... SET TBLPROPERTIES), which is kept in the
   * table's config and shapes a column of that name added later (ADD COLUMNS ... FROM, ADD COLUMN), as the other
   * connector does. A property of a column the table has is refused: its files fix that column's type and encoding.
   */
  def checkSetOnExistingTable(key: String, value: Option[String], columns: Seq[String], table: String): Unit = key match {
    case ColumnKey(column, kind, name) =>
      columns.find(_.equalsIgnoreCase(column)).foreach { c =>
        throw new LanceSparkException(new UnsupportedFeatureException(s"Table property $key cannot be set or " +
          s"removed on $table: column $c exists, and its files fix its type and encoding. Add a new column with the " +
          "property set first, or rewrite the table (CREATE OR REPLACE TABLE ... AS SELECT) with it."))
      }
      value.foreach(v => put(new MetadataBuilder(), key, kind.toLowerCase, name.toLowerCase, v.trim))
    case _ =>
  }

  /** Puts the field metadata that property `key` (`<column>.<kind>.<name>` = `value`) stands for, or refuses it. */
  private def put(meta: MetadataBuilder, key: String, kind: String, name: String, value: String): Unit = (kind, name) match {
    case ("arrow", "fixed-size-list.size") =>
      val size = Parse.int(value).filter(_ > 0).getOrElse(invalid(s"Table property $key must be a positive " +
        s"number of items, not '$value'."))
      meta.putLong(SparkSchemas.FixedSizeListKey, size)
    case ("arrow", "float16") => if (flag(key, value)) meta.putString(Float16Key, "true")
    case ("arrow", "large_var_char") => if (flag(key, value)) meta.putString(LargeVarCharKey, "true")
    case ("lance", "encoding") =>
      if (!value.equalsIgnoreCase("blob")) invalid(s"Table property $key must be 'blob', not '$value'.")
      meta.putString(BlobKey, "true")
    case ("lance", hint) if EncodingHints.contains(hint) =>
      if (!EncodingHints(hint)(value)) invalid(s"Table property $key must be ${HintValues(hint)}, not '$value'.")
      meta.putString("lance-encoding:" + hint, value.toLowerCase)
    case _ => refuse(key)
  }

  /** The field, after checking that its shaping metadata fits its type and is supported. */
  private def check(f: StructField): StructField = {
    val m = f.metadata
    def is(key: String) = m.contains(key) && string(m, key).equalsIgnoreCase("true")
    def wrongType(what: String, want: String): Nothing = invalid(s"Column ${f.name}: $what applies to $want " +
      s"columns, and ${f.name} is ${f.dataType.sql}.")
    if (m.contains(SparkSchemas.FixedSizeListKey) && !f.dataType.isInstanceOf[ArrayType]) {
      wrongType(SparkSchemas.FixedSizeListKey, "ARRAY")
    }
    if (is(Float16Key)) {
      if (!Seq(FloatType, DoubleType).exists(t => f.dataType == ArrayType(t, true) || f.dataType == ArrayType(t, false))) {
        wrongType(Float16Key, "ARRAY<FLOAT> and ARRAY<DOUBLE>")
      }
      if (!m.contains(SparkSchemas.FixedSizeListKey)) invalid(s"Column ${f.name}: $Float16Key makes float16 vectors " +
        s"and needs the vector's size as well (${f.name}.arrow.fixed-size-list.size).")
      if (!HalfFloats.supported) throw new LanceSparkException(new UnsupportedFeatureException(s"Column ${f.name}: " +
        "float16 vectors need the Arrow library of Spark 4.0 or later (Spark 3.x's has no half-precision floats)."))
    }
    if (is(LargeVarCharKey) && f.dataType != StringType) wrongType(LargeVarCharKey, "STRING")
    if (is(BlobKey) && f.dataType != BinaryType) wrongType(BlobKey, "BINARY")
    val json = m.json
    val unknown = """"(lance-encoding:[^"]*)"""".r.findAllMatchIn(json).map(_.group(1))
      .filterNot(k => k == BlobKey || EncodingHints.contains(k.stripPrefix("lance-encoding:"))).toSeq
    if (unknown.nonEmpty) {
      throw new LanceSparkException(new UnsupportedFeatureException(s"Column ${f.name} carries field metadata " +
        s"${unknown.mkString(", ")}, which sparklance does not apply when it creates a table. Create the table with " +
        "pylance and write to it from Spark, or drop the metadata."))
    }
    f
  }

  /** The Lance encoding metadata (`lance-encoding:*`, blob and the hints above) among a Spark field's metadata. */
  def encodingMetadata(m: Metadata): Map[String, String] =
    (BlobKey +: EncodingHints.keys.map("lance-encoding:" + _).toSeq).filter(m.contains).map(k => k -> string(m, k))
      .filter { case (k, v) => k != BlobKey || v.equalsIgnoreCase("true") }.toMap

  private def string(m: Metadata, key: String): String =
    scala.util.Try(m.getString(key)).getOrElse(scala.util.Try(m.getBoolean(key).toString).getOrElse(""))

  private def flag(key: String, value: String): Boolean = value.toLowerCase match {
    case "true" => true
    case "false" => false
    case _ => invalid(s"Table property $key must be 'true' or 'false', not '$value'.")
  }

  private def invalid(message: String): Nothing = throw new LanceSparkException(new InvalidArgumentException(message))

  private def refuse(key: String): Nothing = throw new LanceSparkException(new UnsupportedFeatureException(
    s"Table property $key is not supported: sparklance shapes columns with <column>.arrow.fixed-size-list.size, " +
      "<column>.arrow.float16, <column>.arrow.large_var_char, <column>.lance.encoding = blob and <column>.lance." +
      "compression / compression-level / structural-encoding / rle-threshold / bss. Create the table with pylance " +
      "for other encodings and write to it from Spark."))
}
