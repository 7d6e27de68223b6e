package io.sparklance.core.commit

import java.net.URI

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import software.amazon.awssdk.auth.credentials.{AwsBasicCredentials, AwsCredentialsProvider, AwsSessionCredentials, DefaultCredentialsProvider, StaticCredentialsProvider}
import software.amazon.awssdk.regions.Region
import software.amazon.awssdk.services.dynamodb.DynamoDbClient
import software.amazon.awssdk.services.dynamodb.model.{AttributeValue, ConditionalCheckFailedException, DescribeTableRequest, KeyType, PutItemRequest, QueryRequest, ResourceNotFoundException}

import io.sparklance.core.InvalidArgumentException

/**
 * An [[ExternalManifestStore]] in a DynamoDB table, laid out as pylance lays out its own (so both can commit to one
 * table through it): partition key `base_uri` (string), sort key `version` (number), attributes `path` (string),
 * `size` (number) and `committer` (string). Every read is strongly consistent; put-if-absent is a conditional
 * PutItem.
 *
 * Settings (Hadoop configuration, e.g. `spark.hadoop.sparklance.commit.dynamodb.table`):
 *  - `sparklance.commit.dynamodb.table` - the table (required; create it with the key schema above);
 *  - `sparklance.commit.dynamodb.region` - default: `fs.s3a.endpoint.region`, else the AWS SDK's region chain;
 *  - `sparklance.commit.dynamodb.endpoint` - a non-AWS endpoint (a local stand-in);
 *  - credentials: S3A's `fs.s3a.access.key`, `fs.s3a.secret.key` and `fs.s3a.session.token` when set, else the AWS
 *    SDK's default chain.
 */
final class DynamoDbManifestStore(conf: Configuration) extends ExternalManifestStore {
  import DynamoDbManifestStore._

  private val tableName = Option(conf.get(TableKey)).map(_.trim).filter(_.nonEmpty).getOrElse(
    throw new InvalidArgumentException(s"${ExternalManifestStore.Kind} is 'dynamodb' but $TableKey is not set: set it " +
      "to the DynamoDB table that records the versions (partition key base_uri of type string, sort key version of " +
      "type number)."))

  // One client (with its connection pool) per table, region, endpoint and credentials for the whole JVM: a store
  // is made for every storage object, i.e. for every commit and scan. The key schema is checked once per client.
  private lazy val client: DynamoDbClient = {
    val region = Option(conf.get(RegionKey)).orElse(Option(conf.get("fs.s3a.endpoint.region"))).map(_.trim).filter(_.nonEmpty)
    val endpoint = Option(conf.get(EndpointKey)).map(_.trim).filter(_.nonEmpty)
    val keys = (secret(conf, "fs.s3a.access.key"), secret(conf, "fs.s3a.secret.key"), secret(conf, "fs.s3a.session.token"))
    clients.computeIfAbsent(ClientKey(tableName, region, endpoint, keys.hashCode), _ => {
      val b = DynamoDbClient.builder().credentialsProvider(credentials(keys))
      region.foreach(r => b.region(Region.of(r)))
      endpoint.foreach(e => b.endpointOverride(URI.create(e)))
      val c = b.build()
      try checkKeySchema(c) catch { case NonFatal(e) => c.close(); throw e }
      c
    })
  }

  private def checkKeySchema(c: DynamoDbClient): Unit = {
    val keys =
      try c.describeTable(DescribeTableRequest.builder().tableName(tableName).build()).table().keySchema().asScala
      catch {
        case _: ResourceNotFoundException => throw new InvalidArgumentException(s"The DynamoDB table '$tableName' " +
          s"($TableKey) does not exist: create it with partition key base_uri (string) and sort key version (number).")
      }
    val found = keys.map(k => k.attributeName() -> k.keyType()).toMap
    if (found != Map(BaseUri -> KeyType.HASH, Version -> KeyType.RANGE)) {
      throw new InvalidArgumentException(s"The DynamoDB table '$tableName' ($TableKey) has the key schema " +
        s"${keys.map(k => s"${k.attributeName()} ${k.keyType()}").mkString(", ")}; a manifest store needs partition " +
        "key base_uri (string) and sort key version (number).")
    }
  }

  private def item(table: String, version: Long, path: String, size: Long) = Map(
    BaseUri -> AttributeValue.fromS(table), Version -> AttributeValue.fromN(version.toString),
    Path -> AttributeValue.fromS(path), Size -> AttributeValue.fromN(size.toString),
    Committer -> AttributeValue.fromS("sparklance")).asJava

  override def putIfNotExists(table: String, version: Long, path: String, size: Long): Boolean =
    try {
      client.putItem(PutItemRequest.builder().tableName(tableName).item(item(table, version, path, size))
        .conditionExpression(s"attribute_not_exists($BaseUri) AND attribute_not_exists($Version)").build())
      true
    } catch { case _: ConditionalCheckFailedException => false }

  override def putIfExists(table: String, version: Long, path: String, size: Long): Unit =
    client.putItem(PutItemRequest.builder().tableName(tableName).item(item(table, version, path, size))
      .conditionExpression(s"attribute_exists($BaseUri) AND attribute_exists($Version)").build())

  override def latest(table: String): Option[(Long, String)] = {
    val items = client.query(QueryRequest.builder().tableName(tableName).consistentRead(true)
      .keyConditionExpression(s"$BaseUri = :t").expressionAttributeValues(Map(":t" -> AttributeValue.fromS(table)).asJava)
      .scanIndexForward(false).limit(1).build()).items().asScala
    items.headOption.map { i =>
      val v = Option(i.get(Version)).flatMap(a => Option(a.n())).getOrElse(throw new IllegalStateException(
        s"DynamoDB table '$tableName' has an entry for $table without a numeric version"))
      val p = Option(i.get(Path)).flatMap(a => Option(a.s())).getOrElse(throw new IllegalStateException(
        s"DynamoDB table '$tableName' has an entry for $table version $v without a path"))
      v.toLong -> p
    }
  }
}

object DynamoDbManifestStore {
  // Constants (`final val`), inlined where they are used: checking settings must not load this object, whose
  // class needs the AWS SDK, which is on the class path only where DynamoDB is used.
  final val TableKey = "sparklance.commit.dynamodb.table"
  final val RegionKey = "sparklance.commit.dynamodb.region"
  final val EndpointKey = "sparklance.commit.dynamodb.endpoint"

  private val BaseUri = "base_uri"
  private val Version = "version"
  private val Path = "path"
  private val Size = "size"
  private val Committer = "committer"

  private def secret(conf: Configuration, key: String): Option[String] =
    Option(conf.getPassword(key)).map(new String(_)).map(_.trim).filter(_.nonEmpty)

  /** What tells clients apart; credentials only by a hash, so that no key is kept in the map. */
  private final case class ClientKey(table: String, region: Option[String], endpoint: Option[String], credentials: Int)

  private val clients = new java.util.concurrent.ConcurrentHashMap[ClientKey, DynamoDbClient]()

  private def credentials(keys: (Option[String], Option[String], Option[String])): AwsCredentialsProvider =
    keys match {
      case (Some(a), Some(s), Some(t)) => StaticCredentialsProvider.create(AwsSessionCredentials.create(a, s, t))
      case (Some(a), Some(s), None) => StaticCredentialsProvider.create(AwsBasicCredentials.create(a, s))
      case _ => DefaultCredentialsProvider.builder().build()
    }
}
