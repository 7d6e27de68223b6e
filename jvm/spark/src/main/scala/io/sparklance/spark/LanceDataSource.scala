package io.sparklance.spark

import java.util

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.catalog.{Table, TableProvider}
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.sources.DataSourceRegister
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.sparklance.core.InvalidArgumentException

/**
 * The `lance` data source: `spark.read.format("lance").option("version", 3).load(path)`. The table version is
 * pinned when the DataFrame is created. Options are listed in [[ReadOptions]] and [[TimeTravel]].
 */
final class LanceDataSource extends TableProvider with DataSourceRegister {

  override def shortName(): String = "lance"

  override def inferSchema(options: CaseInsensitiveStringMap): StructType = table(options.asScala.toMap).schema

  override def getTable(schema: StructType, partitioning: Array[Transform], properties: util.Map[String, String]): Table =
    table(properties.asScala.toMap)

  override def supportsExternalMetadata(): Boolean = false

  private def table(options: Map[String, String]): LanceTable = {
    val lower = options.map { case (k, v) => k.toLowerCase -> v }
    val path = lower.getOrElse("path", throw new LanceSparkException(new InvalidArgumentException(
      "No path given: use spark.read.format(\"lance\").load(\"/path/to/table.lance\").")))
    val conf = SparkSession.active.sessionState.newHadoopConf()
    val tt = LanceSparkException.translate(TimeTravel.fromOptions(options))
    new LanceTable(path, LanceTables.load(conf, path, tt), conf, ReadOptions.nanoseconds(options))
  }
}
