package io.sparklance.core.namespace

import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.UnsupportedFeatureException

/**
 * Settings a Hive namespace refuses before it calls the metastore. tests/test_hive_namespace.py runs the namespace
 * against a real Hive Metastore (and Hive 3's catalog calls against a stand-in that adds them).
 */
class HiveNamespaceSuite extends AnyFunSuite {

  test("a metastore with SASL (Kerberos) is refused, naming the Hadoop setting that asks for it") {
    for (setting <- Seq("hive.metastore.sasl.enabled", "metastore.sasl.enabled"); impl <- Seq("hive2", "hive3")) {
      val conf = new Configuration(false)
      conf.set(setting, "true")
      val e = intercept[UnsupportedFeatureException](LanceNamespace.connect(
        Map("impl" -> impl, "uri" -> "thrift://127.0.0.1:9083"), conf))
      assert(e.getMessage.contains(s"Hadoop setting $setting = true") && e.getMessage.contains("not supported") &&
        e.getMessage.contains(s"$impl namespace"), e.getMessage)
    }
    val off = new Configuration(false)
    off.set("hive.metastore.sasl.enabled", "false")
    assert(LanceNamespace.connect(Map("impl" -> "hive2", "uri" -> "thrift://127.0.0.1:9083"), off).describe
      .contains("thrift://127.0.0.1:9083"))
  }
}
