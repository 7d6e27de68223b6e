package io.sparklance.core.storage

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.{InvalidArgumentException, UnsupportedFeatureException}

class StorageOptionsSuite extends AnyFunSuite {

  test("Lance's S3 options, with or without aws_, become S3A settings; an endpoint means path-style requests") {
    val s = StorageOptions.hadoopSettings(Map("aws_access_key_id" -> "k", "Secret_Access_Key" -> "s",
      "endpoint" -> "http://minio:9000", "aws_allow_http" -> "true", "region" -> "eu-west-1"), "test")
    assert(s == Map("fs.s3a.access.key" -> "k", "fs.s3a.secret.key" -> "s", "fs.s3a.endpoint" -> "http://minio:9000",
      "fs.s3a.connection.ssl.enabled" -> "false", "fs.s3a.endpoint.region" -> "eu-west-1",
      "fs.s3a.path.style.access" -> "true"))
    val token = StorageOptions.hadoopSettings(Map("session_token" -> "t", "virtual_hosted_style_request" -> "true",
      "allow_http" -> "false"), "test")
    assert(token == Map("fs.s3a.session.token" -> "t", "fs.s3a.path.style.access" -> "false",
      "fs.s3a.aws.credentials.provider" -> "org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider"))
  }

  test("other storage options and bad switches are refused, naming them") {
    val e = intercept[UnsupportedFeatureException](StorageOptions.hadoopSettings(
      Map("region" -> "x", "google_service_account" -> "y"), "catalog 'c'"))
    assert(e.getMessage.contains("Storage option google_service_account of catalog 'c' is not supported"))
    assert(intercept[InvalidArgumentException](StorageOptions.hadoopSettings(Map("allow_http" -> "sometimes"), "c"))
      .getMessage.contains("must be true or false, not 'sometimes'"))
  }

  test("s3:// is served by S3A unless the configuration maps it elsewhere") {
    val s3 = new org.apache.hadoop.fs.Path("s3://bucket/t.lance")
    val callers = new org.apache.hadoop.conf.Configuration(false)
    val storage = new HadoopStorage(callers)
    assert(storage.confFor(s3).get("fs.s3.impl") == "org.apache.hadoop.fs.s3a.S3AFileSystem")
    assert(callers.get("fs.s3.impl") == null, "the caller's configuration was changed")
    assert(storage.confFor(new org.apache.hadoop.fs.Path("s3a://bucket/t.lance")) eq callers)
    callers.set("fs.s3.impl", "com.example.Other")
    assert(new HadoopStorage(callers).confFor(s3).get("fs.s3.impl") == "com.example.Other")
  }
}
