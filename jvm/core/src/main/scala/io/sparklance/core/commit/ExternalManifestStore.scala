package io.sparklance.core.commit

import java.net.URI

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration

import io.sparklance.core.InvalidArgumentException

/**
 * A key-value store with put-if-absent that decides which writer gets a table version, for object stores that
 * cannot (shared/spec/table-format.md, "External Manifest Store"). It maps (table, version) to the path of that
 * version's manifest: first the staged copy a writer uploaded, then the final `_versions/` file.
 *
 * Tables and paths are named as pylance names them, so that both can share one store: the table is its root's
 * path inside the bucket (`warehouse/db/t.lance`, no scheme, bucket or leading slash), a manifest is its path
 * inside the bucket.
 */
trait ExternalManifestStore {

  /** Records `path` for the version if nothing is recorded for it; false, recording nothing, otherwise. */
  def putIfNotExists(table: String, version: Long, path: String, size: Long): Boolean

  /** Replaces the record of a version that is recorded (the final path once the manifest is in place). */
  def putIfExists(table: String, version: Long, path: String, size: Long): Unit

  /** The recorded path of the table's latest version, if any. */
  def latest(table: String): Option[(Long, String)]
}

object ExternalManifestStore {

  /** Hadoop configuration key: `dynamodb`, or the class name of an [[ExternalManifestStore]] with a
   *  `(Configuration)` constructor. Unset: no external store. */
  val Kind = "sparklance.commit.external-store"

  def fromConf(conf: Configuration): Option[ExternalManifestStore] =
    Option(conf.get(Kind)).map(_.trim).filter(_.nonEmpty).map {
      case "dynamodb" => new DynamoDbManifestStore(conf)
      case className => storeClass(className).getConstructor(classOf[Configuration]).newInstance(conf)
    }

  /** Checks a value of [[Kind]] without making a store: `dynamodb`, or a store class on the classpath. */
  def checkKind(kind: String): Unit = if (kind != "dynamodb") storeClass(kind)

  private def storeClass(className: String): Class[_ <: ExternalManifestStore] = {
    val cls =
      try Class.forName(className, false, Option(Thread.currentThread().getContextClassLoader).getOrElse(getClass.getClassLoader))
      catch {
        case _: ClassNotFoundException | _: LinkageError => throw new InvalidArgumentException(s"$Kind is " +
          s"'$className', which is neither 'dynamodb' nor a class on the classpath. Set it to 'dynamodb' or to the " +
          "class name of an io.sparklance.core.commit.ExternalManifestStore.")
      }
    if (!classOf[ExternalManifestStore].isAssignableFrom(cls)) {
      throw new InvalidArgumentException(s"$Kind is '$className', which is not an " +
        "io.sparklance.core.commit.ExternalManifestStore. Set it to 'dynamodb' or to the class name of one.")
    }
    cls.asSubclass(classOf[ExternalManifestStore])
  }

  /** A path's key in its bucket or file system: the URI path without the leading slash. */
  def keyOf(path: String): String = {
    val p = try new URI(path).getPath catch { case NonFatal(_) => path }
    Option(p).getOrElse(path).stripPrefix("/").stripSuffix("/")
  }
}
