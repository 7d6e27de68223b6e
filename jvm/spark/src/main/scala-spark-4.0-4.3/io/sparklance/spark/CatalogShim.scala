package io.sparklance.spark

import org.apache.spark.sql.connector.catalog.StagingTableCatalog

/** Spark 4 calls a catalog's table-creating methods with columns (`Column[]`), which the catalog implements. */
trait CatalogShim extends StagingTableCatalog
