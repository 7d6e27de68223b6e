package io.sparklance.core.table

import java.time.Instant

import scala.collection.immutable.SortedMap

import io.sparklance.core.{InvalidArgumentException, NotATableException, TagNotFoundException, VersionNotFoundException}
import io.sparklance.core.commit.CommitHandler
import io.sparklance.core.file.LegacyFragmentCounts
import io.sparklance.core.format.{FeatureFlags, Manifest, ManifestNaming, TableLayout, VersionEntry, VersionListing}
import io.sparklance.core.storage.Storage

/**
 * A Lance table (a "dataset" in Lance's words) at a root directory: its versions, tags and snapshots.
 *
 * Holds no cached state: each call looks at the store again, so it always sees the latest commits. The latest
 * version is found with one listing of `_versions/` through the table's [[CommitHandler]] (which first finishes a
 * committed version whose writer stopped); `latest_version_hint.json` is not trusted.
 */
final class Dataset private (val storage: Storage, val commits: CommitHandler, val root: String,
    knownRef: Option[Option[(String, String)]]) {

  /**
   * The main table's root and this branch's name when this table is a branch (`<main root>/tree/<name>`, with a
   * branch file at the main root); None for the main table. Known when opened through [[branch]], else looked up once.
   */
  lazy val branchRef: Option[(String, String)] = knownRef.getOrElse(Dataset.branchOf(storage, root))

  /** The root of the main table: this table's, or the one this branch belongs to. */
  def mainRoot: String = branchRef.map(_._1).getOrElse(root)

  /** This table's branch name; None for main. */
  def branchName: Option[String] = branchRef.map(_._2)

  private def main: Dataset = if (branchRef.isEmpty) this else Dataset.open(storage, mainRoot, commits)

  val versionsDir: String = TableLayout.versionsDir(root)

  // The listing `open` made to check that a table is there: the first call that needs a listing, right after
  // opening, uses it instead of listing again (on an object store each listing is a request).
  private val fromOpen = new java.util.concurrent.atomic.AtomicReference[VersionListing]()

  /** The manifests under `_versions/`, ascending by version, and the naming scheme they share. */
  def listVersions(): VersionListing = Option(fromOpen.getAndSet(null)).getOrElse(listFresh())

  private def listFresh(): VersionListing =
    VersionListing.of(root, commits.listManifests(root), storage.list(root).isEmpty)

  def latestVersion(): Long = listVersions().entries.last.version

  def checkoutLatest(): Snapshot = {
    val listing = listVersions()
    load(listing.naming, listing.entries.last)
  }

  /** The snapshot of a version (also of a detached version: see [[VersionListing.entry]]). */
  def checkout(version: Long): Snapshot = {
    val listing = listVersions()
    load(listing.naming, listing.entry(storage, root, version))
  }

  /**
   * The table of a branch: pylance keeps branch `name` as a table of its own under `tree/<name>/` of the root, whose
   * manifests reference the parent's data files through a base path.
   */
  def branch(name: String): Dataset = {
    Dataset.validateBranch(mainRoot, name)
    val dir = Storage.join(mainRoot, Branch.relativeRoot(name))
    try Dataset.open(storage, dir, commits, Some(Some(mainRoot -> name)))
    catch {
      case _: NotATableException =>
        throw new VersionNotFoundException(mainRoot, s"branch '$name' does not exist (no manifests under " +
          s"$dir/_versions/). Its branches: ${Option(branches().keys.mkString(", ")).filter(_.nonEmpty).getOrElse("none")}.")
    }
  }

  /** Every branch of the table (from `_refs/branches/` of the main root), by name. */
  def branches(): SortedMap[String, Branch] = {
    val dir = Storage.join(mainRoot, Branch.Dir)
    SortedMap(storage.list(dir).filter(e => !e.isDirectory && e.name.endsWith(".json")).map { e =>
      val name = Branch.nameOf(e.name)
      name -> Branch.decode(e.path, name, storage.readAll(e.path, e.size))
    }: _*)
  }

  /** The latest version committed at or before `instant`. */
  def checkoutAsOf(instant: Instant): Snapshot = {
    val listing = listVersions()
    val found = listing.entries.reverseIterator.map(e => load(listing.naming, e)).find(!_.manifest.timestamp.isAfter(instant))
    found.getOrElse {
      val first = load(listing.naming, listing.entries.head)
      throw new VersionNotFoundException(root, s"no version was committed at or before $instant; the first " +
        s"version, ${first.version}, was committed at ${first.manifest.timestamp}.")
    }
  }

  def checkoutTag(name: String): Snapshot = {
    val all = tags()
    val tag = all.getOrElse(name, throw new TagNotFoundException(root, name, all.keys))
    // A tag may name a version of a branch (pylance 14 writes `"branch": "<name>"`): that branch's version.
    try tag.branch.map(branch).getOrElse(main).checkout(tag.version)
    catch {
      case e: VersionNotFoundException =>
        val where = tag.branch.map(b => s" of branch '$b'").getOrElse("")
        throw new VersionNotFoundException(root, s"tag '$name' points to version ${tag.version}$where, which no " +
          s"longer exists (${e.getMessage}).")
    }
  }

  /** Every tag of the table, of any branch (tags live under `_refs/tags/` of the main root), by name. */
  def tags(): SortedMap[String, Tag] = {
    val dir = Storage.join(mainRoot, Tag.Dir)
    SortedMap(storage.list(dir).filter(e => !e.isDirectory && e.name.endsWith(".json")).map { e =>
      val name = e.name.stripSuffix(".json")
      name -> Tag.decode(e.path, name, storage.readAll(e.path, e.size))
    }: _*)
  }

  /** Every version with its commit time, ascending. Reads every manifest. */
  def history(): IndexedSeq[Snapshot] = {
    val listing = listVersions()
    listing.entries.map(load(listing.naming, _))
  }

  /** Every version, newest first, each read only when the iterator reaches it. */
  def newestFirst(): Iterator[Snapshot] = {
    val listing = listVersions()
    listing.entries.reverseIterator.map(load(listing.naming, _))
  }

  private def load(naming: ManifestNaming, entry: VersionEntry): Snapshot = {
    val proto = entry.read(storage, root)._2
    FeatureFlags.checkReadable(root, proto.getVersion, proto.getReaderFeatureFlags)
    val manifest = new Manifest(LegacyFragmentCounts.complete(storage, root, entry.path, proto), entry.path)
    new Snapshot(this, manifest, naming)
  }

  override def toString: String = s"Dataset($root)"
}

object Dataset {

  /**
   * Branch names as pylance allows them: path components of letters, digits and `._-`, separated by `/`, none of
   * them empty, `.` or `..`. Checked before a name read from a tag file or an option becomes part of a path.
   */
  def validateBranch(root: String, name: String): Unit = {
    if (!validBranch(name)) {
      throw new InvalidArgumentException(s"'$name' is not a valid branch name of $root: use path components of " +
        "letters, digits, '.', '_' and '-', separated by '/'.")
    }
  }

  private def validBranch(name: String): Boolean =
    name.nonEmpty && name.length <= 255 && name.split("/", -1).forall { part =>
      part.nonEmpty && part != "." && part != ".." && part.forall(c => c.isLetterOrDigit || c == '.' || c == '_' || c == '-')
    }

  /** What a table directory holds (shared/spec/table-format.md, "Directory Layout", and pylance's `tree/`). */
  private val TableEntries = Set("_versions", "_transactions", "_deletions", "_indices", "_refs", "data", "tree")

  /**
   * Checks that a new table may be created at `root`: the directory is missing, empty, or holds only what a Lance
   * table holds (e.g. data files of a write that did not commit). Any other file means the directory is something
   * else (a Parquet table, a folder of documents), and a Lance table beside it would mix the two.
   */
  def checkCanCreate(storage: Storage, root: String): Unit = {
    val foreign = storage.list(root).map(_.name).filterNot(n => TableEntries.contains(n) || n.startsWith(".")).sorted
    if (foreign.nonEmpty) {
      val shown = foreign.take(5).mkString(", ") + (if (foreign.size > 5) s", ... (${foreign.size} in all)" else "")
      throw new InvalidArgumentException(s"Cannot create a Lance table at $root: the directory already holds " +
        s"other files ($shown), which are not a Lance table. Write the table to a new or empty directory.")
    }
  }

  /**
   * Opens the table at `root`, committed to as [[CommitHandler.forStorage]] says; fails with
   * [[NotATableException]] if there is none.
   */
  def open(storage: Storage, root: String): Dataset = open(storage, root, CommitHandler.forStorage(storage))

  /** Opens the table at `root`, whose versions `commits` decides; fails with [[NotATableException]] if there is none. */
  def open(storage: Storage, root: String, commits: CommitHandler): Dataset = open(storage, root, commits, None)

  private def open(storage: Storage, root: String, commits: CommitHandler,
      ref: Option[Option[(String, String)]]): Dataset = {
    val ds = new Dataset(storage, commits, root.stripSuffix("/"), ref)
    ds.fromOpen.set(ds.listFresh())
    ds
  }

  /**
   * Whether the table at `root` is a branch: `root` is `<main>/tree/<name>` and `<main>` has a branch file for
   * `<name>` (a path may hold `/tree/` for other reasons; the branch file decides). The main root and the name.
   */
  def branchOf(storage: Storage, root: String): Option[(String, String)] = {
    val r = root.stripSuffix("/")
    val marker = "/tree/"
    Iterator.iterate(r.indexOf(marker))(i => r.indexOf(marker, i + 1)).takeWhile(_ >= 0).map { i =>
      (r.substring(0, i), r.substring(i + marker.length))
    }.find { case (main, name) =>
      validBranch(name) && storage.exists(Storage.join(main, Branch.relativePath(name)))
    }
  }
}
