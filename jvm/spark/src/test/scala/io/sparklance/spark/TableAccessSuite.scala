package io.sparklance.spark

import java.nio.file.Paths

import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite

class TableAccessSuite extends AnyFunSuite {

  private val conf = new Configuration()

  test("a relative path is resolved against the driver's working directory") {
    val cwd = Paths.get(System.getProperty("user.dir")).toAbsolutePath
    assert(TableAccess.qualify(conf, "t.lance") == s"file:${cwd.resolve("t.lance")}")
    assert(TableAccess.qualify(conf, "../wh/db") == s"file:${cwd.getParent.resolve("wh/db")}")
  }

  test("absolute paths and URIs are kept as given") {
    Seq("/data/t.lance", "file:/data/t.lance", "file:///data/t.lance", "hdfs://nn:8020/wh/t.lance",
      "s3a://bucket/wh/t.lance").foreach(p => assert(TableAccess.qualify(conf, p) == p, p))
  }

  test("what is not a path is left for opening it to report") {
    assert(TableAccess.qualify(conf, "") == "")
  }
}
