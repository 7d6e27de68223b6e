package io.sparklance.core.storage

import io.sparklance.core.UnsupportedFeatureException

/**
 * Lance's object-store options (pylance's `storage_options`, the other Lance connector's `storage.<key>` catalog
 * options) as the Hadoop settings of S3A, which serves S3 here. Keys are Lance's, with or without their `aws_`
 * prefix, case-insensitive:
 *
 * | Lance option | S3A setting |
 * |---|---|
 * | `access_key_id`, `secret_access_key` | `fs.s3a.access.key`, `fs.s3a.secret.key` |
 * | `session_token` (or `token`) | `fs.s3a.session.token`, with S3A's temporary-credentials provider |
 * | `region` | `fs.s3a.endpoint.region` |
 * | `endpoint` (or `endpoint_url`) | `fs.s3a.endpoint`; path-style requests, as Lance makes them, unless `virtual_hosted_style_request` |
 * | `allow_http` = true | `fs.s3a.connection.ssl.enabled` = false |
 * | `virtual_hosted_style_request` | `fs.s3a.path.style.access` = its negation |
 *
 * Any other key (Google Cloud's and Azure's, Lance's client tuning) is refused, naming it: it would be ignored.
 */
object StorageOptions {
  private val TemporaryCredentials = "org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider"

  private val Keys: Map[String, String] = Map(
    "access_key_id" -> "fs.s3a.access.key",
    "secret_access_key" -> "fs.s3a.secret.key",
    "session_token" -> "fs.s3a.session.token",
    "token" -> "fs.s3a.session.token",
    "region" -> "fs.s3a.endpoint.region",
    "endpoint" -> "fs.s3a.endpoint",
    "endpoint_url" -> "fs.s3a.endpoint")
  private val Switches = Set("allow_http", "virtual_hosted_style_request")

  /** The names taken, without the `aws_` prefix. */
  val Names: Seq[String] = (Keys.keySet ++ Switches).toSeq.sorted

  private def name(key: String): String = key.trim.toLowerCase(java.util.Locale.ROOT).stripPrefix("aws_")

  /** Whether `key` is one of the options taken. */
  def isKnown(key: String): Boolean = Names.contains(name(key))

  /** The Hadoop settings `options` stand for; `where` names where they were given, for errors. */
  def hadoopSettings(options: Map[String, String], where: String): Map[String, String] = {
    val byName = options.map { case (k, v) => name(k) -> ((k, v)) }
    byName.values.toSeq.sortBy(_._1).find { case (k, _) => !isKnown(k) }.foreach { case (k, _) =>
      throw new UnsupportedFeatureException(s"Storage option $k of $where is not supported: sparklance reaches object " +
        s"stores through Hadoop (S3 through S3A), and takes the S3 options ${Names.mkString(", ")} (with or without " +
        "aws_), or any Hadoop setting as fs.<key> (docs/object-stores.md).")
    }
    def flag(n: String): Option[Boolean] = byName.get(n).map { case (k, v) =>
      io.sparklance.core.util.Parse.boolean(v).getOrElse(throw new io.sparklance.core.InvalidArgumentException(
        s"Storage option $k of $where must be true or false, not '$v'."))
    }
    val direct = byName.collect { case (n, (_, v)) if Keys.contains(n) => Keys(n) -> v }
    val credentials = if (direct.contains("fs.s3a.session.token")) Map("fs.s3a.aws.credentials.provider" -> TemporaryCredentials) else Map.empty
    val http = flag("allow_http").filter(identity).map(_ => "fs.s3a.connection.ssl.enabled" -> "false")
    val pathStyle = flag("virtual_hosted_style_request").map(v => !v)
      .orElse(if (direct.contains("fs.s3a.endpoint")) Some(true) else None)
      .map(v => "fs.s3a.path.style.access" -> v.toString)
    direct ++ credentials ++ http ++ pathStyle
  }
}
