package io.sparklance.core.namespace

import java.net.URI
import java.nio.charset.StandardCharsets.UTF_8
import java.time.{ZoneOffset, ZonedDateTime}

import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.InvalidArgumentException

class GlueNamespaceSuite extends AnyFunSuite {

  test("requests are signed as botocore's SigV4Auth signs them") {
    // botocore 1.44.8's SigV4Auth("glue", "eu-west-1") over this request gave this Authorization header.
    val headers = GlueNamespace.sign(
      GlueNamespace.Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", Some("token123")),
      "eu-west-1", URI.create("http://127.0.0.1:5000/"), "AWSGlue.GetDatabase",
      """{"CatalogId":"123456789012","Name":"db1"}""".getBytes(UTF_8), ZonedDateTime.of(2026, 11, 27, 0, 33, 14, 0, ZoneOffset.UTC)).toMap
    assert(headers("x-amz-date") == "20261127T003314Z")
    assert(headers("host") == "127.0.0.1:5000")
    assert(headers("authorization") == "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261127/eu-west-1/glue/aws4_request, " +
      "SignedHeaders=content-type;host;x-amz-date;x-amz-security-token;x-amz-target, " +
      "Signature=9a3b8f66b7f7388f0c5f16723eec12bdc0e95f0dbd4262743a40d0dc3f0181db")
  }

  test("properties are checked: region needed, keys in pairs, unknown ones refused by name") {
    val none: String => Option[String] = _ => None
    def connect(p: (String, String)*) = GlueNamespace(p.toMap, new Configuration(false), none)
    assert(intercept[InvalidArgumentException](connect()).getMessage.contains("needs property region"))
    assert(intercept[InvalidArgumentException](connect("region" -> "us-east-1", "access_key_id" -> "k"))
      .getMessage.contains("access_key_id and secret_access_key together"))
    assert(intercept[InvalidArgumentException](connect("region" -> "us-east-1", "catalog" -> "x"))
      .getMessage.contains("Unknown glue namespace property 'catalog'"))
    assert(intercept[InvalidArgumentException](connect("region" -> "us-east-1", "endpoint" -> "glue.local"))
      .getMessage.contains("not an http:// or https:// URL"))
    val env = Map("AWS_REGION" -> "eu-west-1")
    assert(GlueNamespace(Map.empty, new Configuration(false), env.get).describe.contains("https://glue.eu-west-1.amazonaws.com"))
  }
}
