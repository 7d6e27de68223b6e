package io.sparklance.spark

import org.apache.spark.sql.types.{ArrayType, MetadataBuilder, StructField, StructType}

import io.sparklance.core.{InvalidArgumentException, UnsupportedFeatureException}
import io.sparklance.core.util.Parse

/**
 * Column properties of a table being created: the other Lance connector shapes columns with TBLPROPERTIES
 * `<column>.arrow.<key>` and `<column>.lance.<key>` (and with Spark field metadata such as `lance-encoding:blob`).
 * Each is honoured or refused, never stored as table config and forgotten:
 *  - `<column>.arrow.fixed-size-list.size = n` on an `ARRAY` column: a fixed-size list (a vector) of n items, as
 *    the field metadata `arrow.fixed-size-list.size` does;
 *  - anything else of that form (blob encoding, large strings, float16 vectors, per-column compression) is refused
 *    as not supported, naming the property;
 *  - field metadata keys of Lance's encodings (`lance-encoding:*`) and `arrow:large-var-char` are refused the same
 *    way, since a new table would silently lose them.
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
    val columns = schema.fields.map(f => f.name.toLowerCase -> f.name).toMap
    val (mine, rest) = properties.partition { case (key, _) => isColumnProperty(key, schema.fieldNames.toSeq) }
    val sizes = mine.collect { case (key @ ColumnKey(column, kind, name), value) =>
      if (kind.toLowerCase != "arrow" || name.toLowerCase != "fixed-size-list.size") refuse(key)
      val size = Parse.int(value.trim).filter(_ > 0).getOrElse(throw new LanceSparkException(
        new InvalidArgumentException(s"Table property $key must be a positive number of items, not '$value'.")))
      columns(column.toLowerCase) -> size
    }
    val shaped = StructType(schema.fields.map { f =>
      checkMetadata(f)
      sizes.get(f.name) match {
        case None => f
        case Some(n) if f.dataType.isInstanceOf[ArrayType] =>
          f.copy(metadata = new MetadataBuilder().withMetadata(f.metadata).putLong(SparkSchemas.FixedSizeListKey, n).build())
        case Some(_) => throw new LanceSparkException(new InvalidArgumentException(s"Table property " +
          s"${f.name}.arrow.fixed-size-list.size applies to ARRAY columns, and ${f.name} is ${f.dataType.sql}."))
      }
    })
    (shaped, rest)
  }

  private def checkMetadata(f: StructField): Unit = {
    val json = f.metadata.json
    val keys = Seq("lance-encoding:", "arrow:large-var-char").filter(k => json.contains("\"" + k))
    if (keys.nonEmpty) {
      throw new LanceSparkException(new UnsupportedFeatureException(s"Column ${f.name} carries field metadata " +
        s"${keys.mkString(", ")}..., which sparklance does not apply when it creates a table (blob columns, " +
        "per-column encodings and large strings are made by pylance). Create the table with pylance and write " +
        "to it from Spark, or drop the metadata."))
    }
  }

  private def refuse(key: String): Nothing = throw new LanceSparkException(new UnsupportedFeatureException(
    s"Table property $key is not supported: sparklance shapes columns only with <column>.arrow.fixed-size-list.size. " +
      "Blob columns, per-column encodings, large strings and float16 vectors are made by pylance: create the table " +
      "with pylance and write to it from Spark."))
}
