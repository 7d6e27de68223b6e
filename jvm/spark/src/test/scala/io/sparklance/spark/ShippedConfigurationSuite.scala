package io.sparklance.spark

import scala.reflect.ClassTag

import org.apache.hadoop.conf.Configuration
import org.apache.spark.SparkConf
import org.apache.spark.serializer.{JavaSerializer, KryoSerializer, Serializer}
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.FileVersion
import io.sparklance.core.schema.LanceSchema

/**
 * The Hadoop configuration scans broadcast to executors (`ScanContext.conf`) and writes ship in their tasks
 * (`WriteSpec.conf`). Broadcasts go through `spark.serializer`, which clusters often set to Kryo; Kryo ignores
 * `writeObject`/`readObject`, so a wrapper Spark does not know arrives with its transient configuration null.
 * Local mode never deserializes a broadcast and cannot show this.
 */
class ShippedConfigurationSuite extends AnyFunSuite {

  private def roundTrip[T: ClassTag](serializer: Serializer, value: T): T = {
    val instance = serializer.newInstance()
    instance.deserialize[T](instance.serialize(value))
  }

  private val conf = new Configuration(false)
  conf.set("fs.sparklance.test", "kept")

  private val spec = WriteSpec("/t.lance", LanceSchema.fromProtos("/t.lance", Nil, Map.empty), FileVersion.V2_2,
    WriteOptions(Map.empty, Map.empty), conf)

  test("a write task's spec keeps the configuration (tasks always use Java serialization)") {
    assert(roundTrip(new JavaSerializer(new SparkConf()), spec).conf.value.get("fs.sparklance.test") == "kept")
  }

  for (serializer <- Seq(new JavaSerializer(new SparkConf()), new KryoSerializer(new SparkConf()))) {
    test(s"the broadcast configuration survives ${serializer.getClass.getSimpleName}") {
      val shipped = roundTrip(serializer, spec.conf)
      assert(shipped.value != null, "the configuration arrived null")
      assert(shipped.value.get("fs.sparklance.test") == "kept")
    }
  }
}
