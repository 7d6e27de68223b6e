package io.sparklance.core.namespace

import java.nio.charset.StandardCharsets.UTF_8
import java.security.MessageDigest

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import org.apache.hadoop.conf.Configuration

import io.sparklance.core.{InvalidArgumentException, StorageException, UnsupportedFeatureException}
import io.sparklance.core.namespace.ManifestTable.Entry
import io.sparklance.core.storage.{HadoopStorage, Storage}
import io.sparklance.core.table.Table

/**
 * A directory namespace as lance-namespace's `dir` implementation lays it out (docs/dev/namespaces.md): under
 * `root`, a Lance table `__manifest` lists every namespace and table with its location; a table of the root
 * namespace lives in `<root>/<name>.lance`, one of a child namespace (or of the root, when directory listing is
 * off) in `<root>/<hash>_<object id>`. With directory listing on, `<root>/<name>.lance` directories that the
 * manifest does not list are tables of the root namespace too (tables written by pylance without a namespace).
 * With the manifest off, only those exist and child namespaces are refused.
 *
 * Properties (lance-namespace's names): `root` (required), `manifest_enabled` and `dir_listing_enabled` (default
 * true), `inline_optimization_enabled` (accepted; sparklance builds no index on `__manifest`).
 */
final class DirectoryNamespace private (val root: String, storage: Storage, conf: Configuration,
    manifestEnabled: Boolean, dirListingEnabled: Boolean) extends LanceNamespace {
  import DirectoryNamespace._
  import LanceNamespace.{checkName, objectId}

  override def describe: String = s"directory namespace $root"

  private lazy val manifest = new ManifestTable(Table.forPath(Storage.join(root, ManifestName), conf))

  private def entries(): IndexedSeq[Entry] = if (manifestEnabled) manifest.entries() else IndexedSeq.empty

  private def update(change: IndexedSeq[Entry] => IndexedSeq[Entry]): Unit = manifest.update(CommitAttempts)(change)

  private def absolute(location: String): String =
    if (location.contains("://") || location.startsWith("/")) location else Storage.join(root, location)

  /** A location as entries are compared by: absolute, without a trailing slash. */
  private def place(location: String): String = absolute(location).stripSuffix("/")

  /** The directory of root table `name` that directory listing finds: `<root>/<name>.lance`. */
  private def listedDir(name: String): String = Storage.join(root, name + Suffix)

  /** The entry whose location is `dir` (an absolute place), if any: one location has one name. */
  private def holderOf(all: IndexedSeq[Entry], dir: String): Option[Entry] =
    all.find(e => e.location.exists(l => place(l) == dir))

  private def requireManifest(what: String): Unit = if (!manifestEnabled) {
    throw new UnsupportedFeatureException(s"$what is not supported by $describe with manifest_enabled = false: " +
      "without the __manifest table a directory namespace has only the root namespace. Enable the manifest.")
  }

  private def isNamespace(all: IndexedSeq[Entry], id: Seq[String]): Boolean =
    id.isEmpty || all.exists(e => e.isNamespace && e.objectId == objectId(id))

  private def checkNamespace(all: IndexedSeq[Entry], id: Seq[String]): Unit =
    if (!isNamespace(all, id)) throw new NamespaceNotFoundException(id, describe)

  /** The entries directly in namespace `parent` (names one longer, starting with its names). */
  private def children(all: IndexedSeq[Entry], parent: Seq[String]): IndexedSeq[Entry] =
    all.filter(e => e.id.length == parent.length + 1 && e.id.startsWith(parent))

  // ------------------------------------------------------------------------------------------------ namespaces

  override def listNamespaces(parent: Seq[String]): Seq[String] = {
    val all = entries()
    checkNamespace(all, parent)
    children(all, parent).filter(_.isNamespace).map(_.id.last).sorted
  }

  override def namespaceExists(id: Seq[String]): Boolean = id.isEmpty || isNamespace(entries(), id)

  override def namespaceProperties(id: Seq[String]): Map[String, String] = {
    if (id.isEmpty) Map.empty
    else {
      val entry = entries().find(e => e.isNamespace && e.objectId == objectId(id))
        .getOrElse(throw new NamespaceNotFoundException(id, describe))
      entry.metadata.map(propertiesOf(objectId(id), _)).getOrElse(Map.empty)
    }
  }

  override def createNamespace(id: Seq[String], properties: Map[String, String]): Unit = {
    if (id.isEmpty) throw new NamespaceExistsException(id, describe)
    requireManifest(s"Creating namespace ${id.mkString(".")}")
    id.foreach(checkName(_, "namespace"))
    val metadata = if (properties.isEmpty) None else Some(Json.writeValueAsString(new java.util.TreeMap[String, String](properties.asJava)))
    update { all =>
      checkNamespace(all, id.init)
      if (all.exists(_.objectId == objectId(id))) throw new NamespaceExistsException(id, describe)
      all :+ Entry(objectId(id), ManifestTable.NamespaceType, None, metadata, None)
    }
  }

  override def dropNamespace(id: Seq[String]): Unit = {
    if (id.isEmpty) throw new UnsupportedFeatureException(s"The root namespace of $describe cannot be dropped.")
    requireManifest(s"Dropping namespace ${id.mkString(".")}")
    update { all =>
      checkNamespace(all, id)
      val within = all.filter(e => e.id.length > id.length && e.id.startsWith(id))
      if (within.nonEmpty) {
        throw new NamespaceNotEmptyException(id, describe, s"it holds ${within.map(_.objectId).sorted.mkString(", ")}")
      }
      all.filterNot(_.objectId == objectId(id))
    }
  }

  // ------------------------------------------------------------------------------------------------ tables

  /** `<name>.lance` directories of the root that the manifest does not list (directory listing). */
  private def listedDirectories(all: IndexedSeq[Entry]): Seq[String] = if (!dirListingEnabled) Nil else {
    val known = all.flatMap(_.location).map(place).toSet
    storage.list(root).filter(e => e.isDirectory && e.name.endsWith(Suffix) && e.name.length > Suffix.length)
      .filterNot(e => known.contains(Storage.join(root, e.name)))
      .map(_.name.stripSuffix(Suffix))
  }

  override def listTables(namespace: Seq[String]): Seq[String] = {
    val all = entries()
    if (namespace.nonEmpty) {
      requireManifest(s"Listing the tables of namespace ${namespace.mkString(".")}")
      checkNamespace(all, namespace)
    }
    val registered = children(all, namespace).filter(_.isTable).map(_.id.last)
    (registered ++ (if (namespace.isEmpty) listedDirectories(all) else Nil)).distinct.sorted
  }

  override def tableLocation(id: Seq[String]): Option[String] = {
    if (id.isEmpty) None
    else {
      if (id.length > 1) requireManifest(s"Table ${id.mkString(".")} in a child namespace")
      entries().find(e => e.isTable && e.objectId == objectId(id)).flatMap(_.location).map(absolute).orElse {
        if (id.length == 1 && (dirListingEnabled || !manifestEnabled)) {
          val dir = listedDir(checkName(id.head, "table"))
          if (storage.exists(dir)) Some(dir) else None
        } else None
      }
    }
  }

  override def declareTable(id: Seq[String]): String = {
    if (id.isEmpty) throw new InvalidArgumentException(s"A table of $describe needs a name.")
    id.foreach(checkName(_, "namespace or table"))
    if (!manifestEnabled) {
      if (id.length > 1) requireManifest(s"Creating table ${id.mkString(".")} in a child namespace")
      val dir = listedDir(id.head)
      if (storage.exists(Storage.join(dir, "_versions"))) throw new TableInNamespaceExistsException(id, describe)
      dir
    } else {
      // A root table keeps the flat name other tools look for when directory listing is on; a table there that
      // the manifest does not list yet is taken as existing.
      val dir =
        if (id.length == 1 && dirListingEnabled) id.head + Suffix
        else newDirectoryName(objectId(id))
      update { all =>
        checkNamespace(all, id.init)
        if (all.exists(_.objectId == objectId(id)) || (id.length == 1 && listedDirectories(all).contains(id.head))) {
          throw new TableInNamespaceExistsException(id, describe)
        }
        // A renamed root table keeps its <name>.lance directory: that place is taken.
        holderOf(all, Storage.join(root, dir)).foreach { e =>
          throw new InvalidArgumentException(s"Cannot create table ${id.mkString(".")} in $describe: its directory " +
            s"${Storage.join(root, dir)} is the location of table ${e.id.mkString(".")}. Choose another name.")
        }
        all :+ Entry(objectId(id), ManifestTable.TableType, Some(dir), None, None)
      }
      Storage.join(root, dir)
    }
  }

  /**
   * Registers the table at `location`, which must be under the root (as lance-namespace requires: it stores
   * locations relative to the root); a location another entry has is refused, since dropping one name with PURGE
   * would delete the other's files.
   */
  override def registerTable(id: Seq[String], location: String): String = {
    if (id.isEmpty) throw new InvalidArgumentException(s"A table of $describe needs a name.")
    id.foreach(checkName(_, "namespace or table"))
    requireManifest(s"Registering table ${id.mkString(".")}")
    val relative = relativeToRoot(location, id)
    checkRootPlace(id, relative, s"Cannot register table ${id.mkString(".")} at '$location' in $describe")
    update { all =>
      checkNamespace(all, id.init)
      if (all.exists(_.objectId == objectId(id)) || (id.length == 1 && listedDirectories(all).contains(id.head))) {
        throw new TableInNamespaceExistsException(id, describe)
      }
      holderOf(all, place(relative)).foreach { e =>
        throw new InvalidArgumentException(s"Cannot register table ${id.mkString(".")} at $location in $describe: " +
          s"it is the location of table ${e.id.mkString(".")} already. A table has one name in a namespace.")
      }
      all :+ Entry(objectId(id), ManifestTable.TableType, Some(relative), None, None)
    }
    absolute(relative)
  }

  /**
   * With directory listing on, lance-namespace finds a table of the root namespace by its directory,
   * `<root>/<name>.lance`, and nowhere else: a root table anywhere else would be invisible to it, and is refused.
   */
  private def checkRootPlace(id: Seq[String], location: String, what: String): Unit =
    if (id.length == 1 && dirListingEnabled && place(location) != listedDir(id.head)) {
      throw new UnsupportedFeatureException(s"$what: with directory listing on (dir_listing_enabled), a table of the " +
        s"root namespace is the directory ${listedDir(id.head)}, where other tools look for it. " +
        "Put the table in a child namespace, or use that directory.")
    }

  /**
   * `location` relative to the root: a relative path as it is, an absolute one under the root without the root's
   * part. Locations outside the root, `.`/`..` segments and the manifest's own directory are refused.
   */
  private def relativeToRoot(location: String, id: Seq[String]): String = {
    val loc = location.trim.stripSuffix("/")
    def refuse(why: String) = throw new InvalidArgumentException(s"Cannot register table ${id.mkString(".")} at " +
      s"'$location' in $describe: $why")
    val relative =
      if (!(loc.startsWith("/") || loc.matches("(?s)[A-Za-z][A-Za-z0-9+.-]*:.*"))) loc
      else {
        val (q, r) = (qualified(loc), qualified(root))
        if (q.startsWith(r + "/")) q.substring(r.length + 1)
        else refuse(s"a dir namespace keeps its tables under its root $root. Give a location under the root (or " +
          "relative to it), or name the table by path instead.")
      }
    val parts = relative.split("/", -1)
    if (relative.isEmpty || parts.exists(p => p.isEmpty || p == "." || p == "..")) {
      refuse("the location must be a path under the root, without empty, '.' or '..' parts.")
    }
    if (parts.head == ManifestName) refuse(s"$ManifestName is the namespace's own table.")
    relative
  }

  /** `location` as `scheme://authority/path`, one spelling per place (`file:/x` and `file:///x` are one). */
  private def qualified(location: String): String = {
    val path = new org.apache.hadoop.fs.Path(location)
    val uri =
      try path.getFileSystem(conf).makeQualified(path).toUri.normalize
      catch { case e: java.io.IOException => throw new StorageException(location, "resolve the location", e) }
    s"${uri.getScheme}://${Option(uri.getAuthority).getOrElse("")}${uri.getPath.stripSuffix("/")}"
  }

  /**
   * Removes the table's entry and keeps its directory. A root table that directory listing would still find
   * without its entry (`<root>/<name>.lance`) cannot leave the namespace this way: it is refused, where
   * lance-namespace removes the entry and goes on listing the table.
   */
  override def deregisterTable(id: Seq[String]): Option[String] = {
    if (id.isEmpty) None
    else {
      def stillListed = id.length == 1 && dirListingEnabled && storage.exists(listedDir(id.head))
      def refuse() = throw new UnsupportedFeatureException(s"Table ${id.mkString(".")} of $describe cannot be " +
        s"deregistered while keeping its files: its directory ${listedDir(id.head)} is " +
        (if (manifestEnabled) "found by directory listing (dir_listing_enabled)" else "the table (manifest_enabled = false)") +
        ", so the table would stay. Drop it with its files (DROP TABLE ... PURGE), or move the directory first.")
      if (!manifestEnabled) { if (tableLocation(id).isDefined) refuse() else None }
      else {
        var location: Option[String] = None
        update { all =>
          all.find(e => e.isTable && e.objectId == objectId(id)) match {
            case Some(entry) =>
              if (stillListed && entry.location.exists(l => place(l) == listedDir(id.head))) refuse()
              location = entry.location.map(absolute)
              all.filterNot(_ eq entry)
            case None =>
              if (stillListed) refuse()
              location = None
              all
          }
        }
        location
      }
    }
  }

  /**
   * Gives the table's row the object id of `newId`; its location stays, so its files do not move and readers, who
   * take the location from the row, follow. (lance-namespace 14.0.2 does not implement renaming.) A root table that
   * only directory listing knows has no row, and is refused.
   */
  override def renameTable(id: Seq[String], newId: Seq[String]): Unit = {
    if (id.isEmpty || newId.isEmpty) throw new InvalidArgumentException(s"A table of $describe needs a name.")
    newId.foreach(checkName(_, "namespace or table"))
    requireManifest(s"Renaming table ${id.mkString(".")}")
    update { all =>
      if (id.length == 1 && dirListingEnabled) {
        throw new UnsupportedFeatureException(s"Table ${id.mkString(".")} of $describe cannot be renamed: with " +
          s"directory listing on (dir_listing_enabled), a table of the root namespace is named by its directory " +
          s"${listedDir(id.head)}, and other tools would go on listing it under its old name. " +
          "Copy it with CREATE TABLE ... AS SELECT instead.")
      }
      val entry = all.find(e => e.isTable && e.objectId == objectId(id)).getOrElse {
        if (id.length == 1 && listedDirectories(all).contains(id.head)) {
          throw new UnsupportedFeatureException(s"Table ${id.mkString(".")} of $describe cannot be renamed: only " +
            s"directory listing knows it (${listedDir(id.head)}), so its name is its directory's. " +
            "Rename the directory instead.")
        }
        throw new TableNotFoundException(id, describe)
      }
      checkNamespace(all, newId.init)
      if (all.exists(_.objectId == objectId(newId)) || (newId.length == 1 && listedDirectories(all).contains(newId.head))) {
        throw new TableInNamespaceExistsException(newId, describe)
      }
      entry.location.foreach(l => checkRootPlace(newId, l, s"Cannot rename table ${id.mkString(".")} to " +
        s"${newId.mkString(".")} in $describe"))
      all.map(e => if (e eq entry) e.copy(objectId = objectId(newId)) else e)
    }
  }

  override def dropTable(id: Seq[String]): Boolean = {
    val location = tableLocation(id)
    location.foreach { dir =>
      if (manifestEnabled) update(_.filterNot(e => e.isTable && e.objectId == objectId(id)))
      deleteTree(dir)
    }
    location.isDefined
  }

  /** Deletes a directory and everything under it, files first. */
  private def deleteTree(dir: String): Unit = {
    storage.list(dir).foreach(e => if (e.isDirectory) deleteTree(e.path) else storage.delete(e.path))
    storage.delete(dir)
  }

  private def propertiesOf(id: String, json: String): Map[String, String] = {
    val node = try Json.readTree(json) catch {
      case e: java.io.IOException => throw new InvalidArgumentException(s"The properties of namespace $id in " +
        s"$describe are not a JSON object: ${e.getMessage}")
    }
    if (!node.isObject) throw new InvalidArgumentException(s"The properties of namespace $id in $describe are not " +
      s"a JSON object: $json")
    LanceNamespace.textMap(node)
  }
}

object DirectoryNamespace {
  private val ManifestName = "__manifest"
  private val Suffix = ".lance"
  private val CommitAttempts = 20
  private val Json = new ObjectMapper()

  /** The properties of lance-namespace's `dir` implementation that this one takes. */
  val Properties: Set[String] = Set("root", "manifest_enabled", "dir_listing_enabled", "inline_optimization_enabled")

  def apply(properties: Map[String, String], conf: Configuration): DirectoryNamespace = {
    properties.keys.filterNot(Properties.contains).toSeq.sorted.headOption.foreach { k =>
      throw new InvalidArgumentException(s"Unknown directory namespace property '$k': a dir namespace takes " +
        s"${Properties.toSeq.sorted.mkString(", ")}.")
    }
    val root = properties.get("root").map(_.trim.stripSuffix("/")).filter(_.nonEmpty).getOrElse(
      throw new InvalidArgumentException("A dir namespace needs property root: the directory or URI that holds it."))
    val flags = Seq("manifest_enabled", "dir_listing_enabled", "inline_optimization_enabled")
      .map(k => k -> LanceNamespace.flag(properties, k, default = true)).toMap
    new DirectoryNamespace(root, new HadoopStorage(conf), conf, flags("manifest_enabled"), flags("dir_listing_enabled"))
  }

  /**
   * The directory of a new table: `<8 hex digits>_<object id>`, as lance-namespace names them. Its hash mixes in a
   * random number, so ours is random too: a table dropped and made again gets a new directory, and the location
   * comes from the manifest, never from the name.
   */
  private[namespace] def newDirectoryName(objectId: String): String = {
    val digest = MessageDigest.getInstance("SHA-256")
    digest.update(java.util.UUID.randomUUID().toString.getBytes(UTF_8))
    val hash = digest.digest(objectId.getBytes(UTF_8))
    f"${((hash(0) & 0xff) << 24 | (hash(1) & 0xff) << 16 | (hash(2) & 0xff) << 8 | (hash(3) & 0xff)).toLong & 0xffffffffL}%08x_$objectId"
  }
}
