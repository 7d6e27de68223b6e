package io.sparklance.spark

import java.util

import org.apache.spark.sql.connector.catalog.{Column, Identifier, StagedTable, StagingTableCatalog, Table}
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.types.{Metadata, StructType}

/**
 * Spark 3 calls a catalog's table-creating methods with a StructType (the `Column[]` forms, which the catalog
 * implements, came in 3.4 and delegate the other way): they are passed on as columns.
 */
trait CatalogShim extends StagingTableCatalog {
  override def createTable(ident: Identifier, schema: StructType, partitions: Array[Transform],
      properties: util.Map[String, String]): Table =
    createTable(ident, CatalogShim.columns(schema), partitions, properties)

  override def stageCreate(ident: Identifier, schema: StructType, partitions: Array[Transform],
      properties: util.Map[String, String]): StagedTable =
    stageCreate(ident, CatalogShim.columns(schema), partitions, properties)

  override def stageReplace(ident: Identifier, schema: StructType, partitions: Array[Transform],
      properties: util.Map[String, String]): StagedTable =
    stageReplace(ident, CatalogShim.columns(schema), partitions, properties)

  override def stageCreateOrReplace(ident: Identifier, schema: StructType, partitions: Array[Transform],
      properties: util.Map[String, String]): StagedTable =
    stageCreateOrReplace(ident, CatalogShim.columns(schema), partitions, properties)
}

object CatalogShim {
  /** The schema's fields as catalog columns, metadata (comments, Lance properties) included. */
  def columns(schema: StructType): Array[Column] = schema.fields.map { f =>
    Column.create(f.name, f.dataType, f.nullable, f.getComment().orNull, if (f.metadata == Metadata.empty) null else f.metadata.json)
  }
}
