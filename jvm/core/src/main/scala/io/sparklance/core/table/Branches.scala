package io.sparklance.core.table

import java.time.Instant
import java.util.UUID

import scala.jdk.CollectionConverters._

import com.google.protobuf.Timestamp

import io.sparklance.core.{CommitConflictException, InvalidArgumentException, VersionNotFoundException}
import io.sparklance.core.commit.{FileSystemCommitHandler, ManifestPut}
import io.sparklance.core.format.{FeatureFlags, ManifestFile, TableLayout}
import io.sparklance.core.storage.Storage
import io.sparklance.core.txn.ManifestBuilder
import io.sparklance.proto.{TableProtos, TransactionProtos}

/**
 * Creating and deleting branches as pylance 14 does (`create_branch`, `branches.delete`).
 *
 * A new branch is a shallow clone of its source version: its first manifest, under `tree/<name>/_versions/`, has the
 * source's version number, fragments and indexes, with every file the source keeps at its own root reached through
 * a new base path (`base_paths`, a dataset root) naming the source's root; later versions of the branch write their
 * files under `tree/<name>/` and number on from there. The branch file under `_refs/branches/` is written last: it
 * is what makes the branch exist.
 */
object Branches {

  /**
   * Creates branch `name` from `source` (a version of main or of another branch) of the table whose main root is
   * `mainRoot`; a branch of that name must not exist. Returns the branch.
   */
  def create(storage: Storage, mainRoot: String, name: String, source: Snapshot): Branch = {
    Dataset.validateBranch(mainRoot, name)
    if (name == "main") {
      throw new InvalidArgumentException(s"'main' is the name of the main branch of $mainRoot; give a new branch another name.")
    }
    readBranch(storage, mainRoot, name).foreach { b =>
      throw new InvalidArgumentException(s"Table $mainRoot already has a branch '$name' (made from version " +
        s"${b.parentVersion}${b.parentBranch.map(p => s" of branch '$p'").getOrElse("")}). " +
        "Drop it first, or give the new branch another name.")
    }
    val root = Storage.join(mainRoot, Branch.relativeRoot(name))
    if (storage.list(TableLayout.versionsDir(root)).nonEmpty) {
      throw new InvalidArgumentException(s"Cannot create branch '$name' of $mainRoot: $root/_versions/ already holds " +
        "manifests of a branch whose creation did not finish. Remove that directory, or give the branch another name.")
    }
    val sourceBranch = source.dataset.branchName
    val sourceManifest = source.manifest
    val baseId = if (sourceManifest.basePaths.isEmpty) 0 else sourceManifest.basePaths.keys.max + 1
    val clone = TransactionProtos.Transaction.Clone.newBuilder().setIsShallow(true).setRefVersion(source.version)
      .setRefPath(source.root).setBranchName(name)
    sourceBranch.foreach(clone.setRefName)
    val txn = TransactionProtos.Transaction.newBuilder().setReadVersion(source.version)
      .setUuid(UUID.randomUUID().toString).setClone(clone).build()
    val txnFile = s"${source.version}-${txn.getUuid}.txn"
    storage.create(TableLayout.transactionPath(root, txnFile), txn.toByteArray)

    val manifest = cloneManifest(sourceManifest.proto, baseId, source.root, sourceBranch, name, txnFile)
    val indexes = if (source.indexes.isEmpty) None else Some(TableProtos.IndexSection.newBuilder()
      .addAllIndices(source.indexes.map(i => if (i.proto.hasBaseId) i.proto else i.proto.toBuilder.setBaseId(baseId).build()).asJava)
      .build())
    val commits = source.dataset.commits
    commits.putManifest(root, source.version, source.naming.fileName(source.version), ManifestFile.encode(manifest, indexes)) match {
      case ManifestPut.Committed => ()
      case ManifestPut.Lost => throw new CommitConflictException(mainRoot, s"another writer is creating branch '$name' " +
        "at the same time.")
      case ManifestPut.Unknown(cause) => throw new io.sparklance.core.CommitStateUnknownException(mainRoot,
        s"writing the first manifest of branch '$name' failed (${cause.getMessage})", cause)
    }
    val lineage = sourceBranch.flatMap(readBranch(storage, mainRoot, _)).map(_.lineage).getOrElse(Nil) :+
      (source.version -> UUID.randomUUID().toString.replace("-", ""))
    val branch = Branch(name, sourceBranch, source.version, Some(Instant.now()),
      Some(storage.open(sourceManifest.path).length), lineage)
    if (!FileSystemCommitHandler.forStorage(storage).createIfAbsent(Storage.join(mainRoot, Branch.relativePath(name)), Branch.encode(branch))) {
      throw new InvalidArgumentException(s"Table $mainRoot already has a branch '$name': another writer created it at the same time.")
    }
    branch
  }

  /** Branch `name`'s file, if the branch exists (one read, not a listing of every branch). */
  private def readBranch(storage: Storage, mainRoot: String, name: String): Option[Branch] = {
    val path = Storage.join(mainRoot, Branch.relativePath(name))
    try Some(Branch.decode(path, name, storage.readAll(path)))
    catch { case e: Exception if Storage.isNotFound(e) => None }
  }

  /** The source manifest as the first of the branch: its files reached through base path `baseId`. */
  private def cloneManifest(source: TableProtos.Manifest, baseId: Int, sourceRoot: String, sourceBranch: Option[String],
      name: String, txnFile: String): TableProtos.Manifest = {
    val b = source.toBuilder
    val fragments = source.getFragmentsList.asScala.map { f =>
      val fb = f.toBuilder
      fb.getFilesBuilderList.asScala.foreach(d => if (!d.hasBaseId) d.setBaseId(baseId))
      if (fb.hasDeletionFile && !fb.getDeletionFile.hasBaseId) fb.getDeletionFileBuilder.setBaseId(baseId)
      fb.build()
    }
    val base = TableProtos.BasePath.newBuilder().setId(baseId).setIsDatasetRoot(true).setPath(sourceRoot)
    sourceBranch.foreach(base.setName)
    val now = Instant.now()
    b.clearFragments().addAllFragments(fragments.asJava).addBasePaths(base).setBranch(name).clearTag()
      .setTransactionFile(txnFile).clearIndexSection().clearTransactionSection()
      .setTimestamp(Timestamp.newBuilder().setSeconds(now.getEpochSecond).setNanos(now.getNano))
      .setReaderFeatureFlags(source.getReaderFeatureFlags | FeatureFlags.BasePaths)
      .setWriterFeatureFlags(source.getWriterFeatureFlags | FeatureFlags.BasePaths)
    // The source's inline transaction belongs to its version (see ManifestBuilder.header).
    b.setUnknownFields(com.google.protobuf.UnknownFieldSet.newBuilder(b.getUnknownFields)
      .clearField(ManifestBuilder.InlineTransactionField).build())
    b.build()
  }

  /**
   * Deletes branch `name` of the table whose main root is `mainRoot`: its branch file, then its directory (but the
   * directories of branches nested under its name, `name/...`). As pylance does, a branch another branch was made
   * from cannot be deleted while that one exists: its files are theirs too. Nor can a branch a tag points to, as
   * pylance 14 refuses ("Branch b is referenced by tags"): the tag would name files this deletes.
   */
  def delete(storage: Storage, mainRoot: String, name: String): Unit = {
    Dataset.validateBranch(mainRoot, name)
    val dataset = Dataset.open(storage, mainRoot)
    val all = dataset.branches()
    val branch = all.getOrElse(name, throw new VersionNotFoundException(mainRoot, s"branch '$name' does not exist. " +
      s"Its branches: ${if (all.isEmpty) "none" else all.keys.mkString(", ")}."))
    val dependents = all.values.filter(branch.isAncestorOf).map(_.name).toSeq.sorted
    if (dependents.nonEmpty) {
      throw new InvalidArgumentException(s"Cannot drop branch '$name' of $mainRoot: branch " +
        s"${dependents.mkString(", ")} ${if (dependents.size == 1) "was" else "were"} made from it and read its " +
        "files. Drop those branches first.")
    }
    val tags = dataset.tags().values.filter(_.branch.contains(name)).map(t => s"${t.name} (version ${t.version})").toSeq
    if (tags.nonEmpty) {
      throw new InvalidArgumentException(s"Cannot drop branch '$name' of $mainRoot: tag${if (tags.size == 1) "" else "s"} " +
        s"${tags.mkString(", ")} point${if (tags.size == 1) "s" else ""} to its versions. Drop those tags first.")
    }
    storage.delete(Storage.join(mainRoot, Branch.relativePath(name)))
    val nested = all.keys.filter(_.startsWith(name + "/")).map(n => Storage.join(mainRoot, Branch.relativeRoot(n))).toSet
    val dir = Storage.join(mainRoot, Branch.relativeRoot(name))
    if (deleteTree(storage, dir, nested)) storage.delete(dir)
  }

  /** Deletes the files under `dir` and its directories but those in `keep`; whether `dir` is left empty. */
  private def deleteTree(storage: Storage, dir: String, keep: Set[String]): Boolean =
    storage.list(dir).map { e =>
      if (!e.isDirectory) { storage.delete(e.path); true }
      else if (keep.exists(k => sameDir(k, e.path))) false
      else deleteTree(storage, e.path, keep) && { storage.delete(e.path); true }
    }.forall(identity)

  private def sameDir(a: String, b: String): Boolean =
    a.stripPrefix("file:").replaceAll("/+", "/").stripSuffix("/") == b.stripPrefix("file:").replaceAll("/+", "/").stripSuffix("/")
}
