package io.sparklance.core.txn

import java.nio.charset.StandardCharsets
import java.time.Instant

import scala.util.control.NonFatal

import io.sparklance.core.{CommitConflictException, CommitStateUnknownException, NotATableException}
import io.sparklance.core.commit.{CommitHandler, ManifestPut}
import io.sparklance.core.file.LegacyFragmentCounts
import io.sparklance.core.format.{FeatureFlags, Manifest, ManifestFile, ManifestNaming, TableLayout, VersionEntry, VersionListing}
import io.sparklance.core.storage.Storage
import io.sparklance.proto.{TableProtos, TransactionProtos}

/**
 * The commit protocol (shared/spec/table-format.md, "Conflict Resolution"): write the transaction file, then put
 * the next version's manifest through the table's [[CommitHandler]]; when other writers committed first, rebase
 * over their transactions if the conflict rules allow it (merging deletion files of fragments both changed) and
 * try the next version, a bounded number of times.
 */
object Committer {

  /**
   * `maxRetries`: how many attempts may lose the race for a version before the commit gives up as a conflict.
   * `rebases`: whether the transaction may be rebased over versions committed since it read the table; when not,
   * any such version is a conflict (for a change computed from every row it read, such as a namespace's
   * `__manifest` rewritten whole, which a rebased Overwrite would silently undo). `stableRowIds`: whether a table
   * this commit creates has stable row ids (pylance's `enable_stable_row_ids`; None: not); an existing table must
   * have them or not as asked.
   */
  final case class Options(maxRetries: Int = 20, newTableFileVersion: String = "2.2",
      writerLibrary: String = "sparklance", writerVersion: String = "0.1.0", rebases: Boolean = true,
      stableRowIds: Option[Boolean] = None)

  /**
   * Commits `txn` to the table at `root`, deciding versions as [[CommitHandler.forStorage]] does for `storage`;
   * returns the new version.
   */
  def commit(storage: Storage, root: String, txn: Transaction, options: Options = Options()): Long =
    commit(storage, CommitHandler.forStorage(storage), root, txn, options)

  /**
   * Commits `txn` to the table at `root`, whose versions `commits` decides; returns the new version.
   *
   * Every attempt reads the latest version, checks the transaction against the versions committed since it read
   * the table, and puts the next manifest. A commit ends in one of these ways:
   *  (1) committed: the put won; deletion files of earlier rebases that the last one replaced are removed.
   *  (2) conflict that can be rebased: other writers committed first (versions found on reading the latest, or a
   *      lost put), and ours applies on top of each of theirs, once its deletion files are merged with theirs where
   *      both changed a fragment: the next attempt commits the rebased transaction, with a transaction file of its
   *      own, on the version after theirs. At most `options.maxRetries` attempts lose the race.
   *  (3) conflict that cannot be rebased, or the retry limit reached: [[CommitConflictException]]; the deletion
   *      files rebases wrote are removed (no committed version references them).
   *  (4) state unknown: the put failed without saying whether the version is ours: [[CommitStateUnknownException]],
   *      and nothing is removed, since a committed version may reference any of it.
   */
  def commit(storage: Storage, commits: CommitHandler, root: String, txn: Transaction, options: Options): Long = {
    val restored = restoredVersion(storage, commits, root, txn.operation)
    writeTransaction(storage, root, txn)
    val rebaseFiles = new RebaseFiles(storage)
    var current = txn
    var checkedUpTo = txn.readVersion
    var lostRaces = 0
    var committed: Option[Long] = None
    try {
      while (committed.isEmpty) {
        val latest = readLatest(storage, commits, root)
        val latestVersion = latest.map(_.manifest.version).getOrElse(0L)
        if (!options.rebases && latestVersion != txn.readVersion) {
          // (3) for a transaction that must not be rebased.
          throw new CommitConflictException(root, s"version $latestVersion was committed since this " +
            s"${txn.operation.name} read version ${txn.readVersion}, and it must apply to the version it read. Read " +
            "the table again and redo the change.")
        }
        // (2) or (3): versions checked on an earlier attempt are not read again.
        current = rebase(storage, root, txn.readVersion, current, checkedUpTo, latest, rebaseFiles)
        checkedUpTo = latestVersion
        val version = latestVersion + 1
        val fileName = latest.map(_.listing.naming).getOrElse(ManifestNaming.V2).fileName(version)
        val manifest = ManifestBuilder.next(latest.map(_.manifest), current, version, Instant.now(), options,
          restored.map(_.manifest))
        val indexSection = ManifestBuilder.indexSection(current.operation, latest.map(_.manifest), latest.flatMap(_.indexSection),
          restored.flatMap(_.indexSection))
        commits.putManifest(root, version, fileName, ManifestFile.encode(manifest, indexSection)) match {
          case ManifestPut.Committed =>
            // (1)
            writeHint(storage, root, version)
            rebaseFiles.removeSuperseded()
            committed = Some(version)
          case ManifestPut.Lost =>
            // (2) Another writer took this version: the next attempt checks it and rebases over it; or (3).
            lostRaces += 1
            if (lostRaces >= options.maxRetries) {
              throw new CommitConflictException(root, s"lost the race for a new version $lostRaces times; the table " +
                "is being written by many writers at once. Retry later, or raise the commit retry limit.")
            }
          case ManifestPut.Unknown(cause) =>
            // (4) Never delete anything here.
            throw new CommitStateUnknownException(root, s"writing ${TableLayout.manifestPath(root, fileName)} failed " +
              s"(${cause.getMessage})", cause)
        }
      }
    } catch {
      case e: CommitConflictException =>
        rebaseFiles.removeAll()
        throw e
    }
    committed.get
  }

  /**
   * The transaction to put on `latest`: `txn` once every version committed after `checkedUpTo` is checked against
   * it (2), rebased where deletion files must be merged; a [[CommitConflictException]] if one of them conflicts (3).
   */
  private def rebase(storage: Storage, root: String, readVersion: Long, txn: Transaction, checkedUpTo: Long,
      latest: Option[Latest], files: RebaseFiles): Transaction = {
    val latestVersion = latest.map(_.manifest.version).getOrElse(0L)
    val entries = latest.toSeq.flatMap(_.listing.entries).map(e => e.version -> e).toMap
    val toMerge = ((checkedUpTo + 1) to latestVersion).flatMap { v =>
      // A version missing from the listing (removed meanwhile) cannot be checked, so it conflicts.
      val theirs = entries.get(v).flatMap(committedOperation(storage, root, _))
      ConflictRules.check(txn.operation, theirs) match {
        case ConflictRules.Verdict.Compatible => Set.empty[Long]
        case ConflictRules.Verdict.MergeDeletions(ids) => ids
        case ConflictRules.Verdict.Conflict(reason) =>
          throw new CommitConflictException(root, s"version $v, committed since this ${txn.operation.name} read " +
            s"version $readVersion, is ${theirs.map(o => s"a ${o.name}").getOrElse("of unknown kind")}, " +
            s"$reason. Read the table again and redo the change.")
      }
    }.toSet
    if (toMerge.isEmpty) txn
    else {
      // Our deletion files of fragments whose deletion files were also changed meanwhile are merged with the ones
      // now in the table, and the rebased transaction, which now reads the latest version, gets a transaction file
      // of its own (as upstream writes one per attempt).
      val merged = DeletionMerge.rebase(storage, root, txn.operation, toMerge, latest.get.manifest, readVersion)
      files.replaceWith(merged.files)
      val rebased = txn.copy(readVersion = latestVersion, operation = merged.operation)
      writeTransaction(storage, root, rebased)
      rebased
    }
  }

  /**
   * Deletion files written by rebases: those of the latest rebase, and those of earlier ones that it replaced.
   * None is referenced by a committed version until an attempt wins: on a conflict all go, after a win the
   * replaced ones.
   */
  private final class RebaseFiles(storage: Storage) {
    private var latest = Seq.empty[String]
    private var superseded = Seq.empty[String]

    def replaceWith(files: Seq[String]): Unit = { superseded ++= latest; latest = files }
    def removeSuperseded(): Unit = superseded.foreach(deleteQuietly)
    def removeAll(): Unit = (superseded ++ latest).foreach(deleteQuietly)

    private def deleteQuietly(path: String): Unit = try storage.delete(path) catch { case NonFatal(_) => () }
  }

  private def writeTransaction(storage: Storage, root: String, txn: Transaction): Unit =
    storage.create(TableLayout.transactionPath(root, txn.fileName), txn.toProto.toByteArray)

  /** A version's manifest with its index section. */
  private final case class ManifestWithIndexes(manifest: TableProtos.Manifest, indexSection: Option[TableProtos.IndexSection])

  /** For a Restore, the version it brings back, read through the table (it fails if there is no such version). */
  private def restoredVersion(storage: Storage, commits: CommitHandler, root: String,
      op: Operation): Option[ManifestWithIndexes] = op match {
    case Operation.Restore(version) =>
      val listing = VersionListing.of(root, commits.listManifests(root), storage.list(root).isEmpty)
      val entry = listing.entry(storage, root, version)
      val (bytes, old) = entry.read(storage, root)
      FeatureFlags.checkReadable(root, version, old.getReaderFeatureFlags)
      Some(ManifestWithIndexes(LegacyFragmentCounts.complete(storage, root, entry.path, old),
        ManifestFile.decodeIndexSection(entry.path, bytes, old)))
    case _ => None
  }

  /** What a commit attempt builds on: the table's versions, and the latest manifest with its index section. */
  private final case class Latest(listing: VersionListing, manifest: Manifest, indexSection: Option[TableProtos.IndexSection])

  /** The latest state of the table; None for a table that does not exist yet. */
  private def readLatest(storage: Storage, commits: CommitHandler, root: String): Option[Latest] =
    try {
      val listing = VersionListing.of(root, commits.listManifests(root), storage.list(root).isEmpty)
      val entry = listing.entries.last
      val bytes = storage.readAll(entry.path, entry.size)
      val proto = ManifestFile.decode(entry.path, bytes)
      FeatureFlags.checkWritable(root, proto.getVersion, proto.getWriterFeatureFlags)
      Some(Latest(listing, new Manifest(LegacyFragmentCounts.complete(storage, root, entry.path, proto), entry.path),
        ManifestFile.decodeIndexSection(entry.path, bytes, proto)))
    } catch { case _: NotATableException => None }

  /** The operation that produced a version, from its transaction file; None when there is none to read. */
  private def committedOperation(storage: Storage, root: String, entry: VersionEntry): Option[Operation] = {
    val manifest = new Manifest(ManifestFile.decode(entry.path, storage.readAll(entry.path, entry.size)), entry.path)
    manifest.transactionFile.flatMap { name =>
      try Some(Transaction.fromProto(TransactionProtos.Transaction.parseFrom(
        storage.readAll(TableLayout.transactionPath(root, name)))).operation)
      catch { case NonFatal(_) => None }
    }
  }

  private def writeHint(storage: Storage, root: String, version: Long): Unit =
    try storage.overwrite(TableLayout.manifestPath(root, "latest_version_hint.json"),
      s"""{"version":$version}""".getBytes(StandardCharsets.UTF_8))
    catch { case NonFatal(_) => () } // only a hint: readers list _versions/ anyway
}
