package io.sparklance.core.txn

import java.nio.charset.StandardCharsets
import java.time.Instant

import scala.collection.mutable
import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import com.google.protobuf.Timestamp
import org.roaringbitmap.RoaringBitmap

import io.sparklance.core.{CommitConflictException, CommitStateUnknownException, NotATableException, StorageException}
import io.sparklance.core.storage.Storage
import io.sparklance.core.table.{Dataset, FeatureFlags, Manifest, ManifestFile, ManifestNaming, VersionEntry, VersionListing}
import io.sparklance.proto.{RowIdProtos, TableProtos, TransactionProtos}

/**
 * The commit protocol (shared/spec/table-format.md, "Conflict Resolution"): write the transaction file, then
 * write the next version's manifest with put-if-absent; when other writers committed first, rebase over their
 * transactions if the conflict rules allow it (merging deletion files of fragments both changed) and try the next
 * version, a bounded number of times.
 */
object Committer {

  final case class Options(maxRetries: Int = 20, newTableFileVersion: String = "2.2",
      writerLibrary: String = "sparklance", writerVersion: String = "0.1.0")

  /**
   * Commits `txn` to the table at `root`; returns the new version. `deletedRows` holds, for a Delete or Update, the
   * row offsets it deleted per fragment (not those deleted before it read the table): with them, a concurrent change
   * of the same fragments' deletion files is merged instead of conflicting ([[DeletionMerge]]).
   */
  def commit(storage: Storage, root: String, txn: Transaction, options: Options = Options(),
      deletedRows: Map[Long, RoaringBitmap] = Map.empty): Long = {
    storage.create(transactionPath(root, txn), txn.toProto.toByteArray)
    // Deletion files written by rebases: those of the latest rebase (`merged`) and those of earlier ones that it
    // replaced (`superseded`). None is referenced by a committed version until an attempt wins, so on a conflict
    // all go, and after a win the superseded ones.
    val merged = mutable.ArrayBuffer.empty[String]
    val superseded = mutable.ArrayBuffer.empty[String]
    try attempts(storage, root, txn, options, deletedRows, merged, superseded)
    catch {
      case e: CommitConflictException =>
        (superseded ++ merged).foreach(deleteQuietly(storage, _))
        throw e
    }
  }

  private def deleteQuietly(storage: Storage, path: String): Unit =
    try storage.delete(path) catch { case NonFatal(_) => () }

  private def attempts(storage: Storage, root: String, original: Transaction, options: Options,
      deletedRows: Map[Long, RoaringBitmap], merged: mutable.ArrayBuffer[String],
      superseded: mutable.ArrayBuffer[String]): Long = {
    var txn = original
    var attempt = 0
    var checkedUpTo = txn.readVersion
    while (true) {
      attempt += 1
      val current = latest(storage, root)
      val latestVersion = current.map(_.manifest.version).getOrElse(0L)
      // (1) Every version committed since ours was read must be one we can rebase over; versions checked on an
      // earlier attempt are not read again.
      val entries = current.toSeq.flatMap(_.listing.entries).map(e => e.version -> e).toMap
      val toMerge = mutable.Set.empty[Long]
      ((checkedUpTo + 1) to latestVersion).foreach { v =>
        // A version missing from the listing (removed meanwhile) cannot be checked, so it conflicts.
        val theirs = entries.get(v).flatMap(committedOperation(storage, root, _))
        ConflictRules.check(txn.operation, theirs) match {
          case ConflictRules.Verdict.Compatible =>
          case ConflictRules.Verdict.MergeDeletions(ids) => toMerge ++= ids
          case ConflictRules.Verdict.Conflict(reason) =>
            throw new CommitConflictException(root, s"version $v, committed since this ${txn.operation.name} read " +
              s"version ${original.readVersion}, is ${theirs.map(o => s"a ${o.name}").getOrElse("of unknown kind")}, " +
              s"$reason. Read the table again and redo the change.")
        }
      }
      checkedUpTo = latestVersion
      // (2) Rebase: our deletion files of fragments whose deletion files were also changed meanwhile are merged
      // with the ones now in the table (conflicting if both deleted a row), and the rebased transaction, which now
      // reads the latest version, gets a transaction file of its own (as upstream writes one per attempt).
      if (toMerge.nonEmpty) {
        val rebase = DeletionMerge.rebase(storage, root, txn.operation, toMerge.toSet, deletedRows,
          current.get.manifest, original.readVersion)
        superseded ++= merged
        merged.clear()
        merged ++= rebase.files
        txn = txn.copy(readVersion = latestVersion, operation = rebase.operation)
        storage.create(transactionPath(root, txn), txn.toProto.toByteArray)
      }
      // (3) The next manifest, built on the latest one.
      val version = latestVersion + 1
      val naming = current.map(_.listing.naming).getOrElse(ManifestNaming.V2)
      val next = ManifestBuilder.next(current.map(_.manifest), txn, version, Instant.now(), options)
      // Indexes carry over appends, deletes, updates and schema changes (rows they index that are gone are
      // filtered by deletion files, as upstream does); a restore brings back the old version's; an overwrite
      // replaces the data they indexed. Compaction refuses indexed tables (it would have to remap them).
      val indexSection = txn.operation match {
        case _: Operation.Append | _: Operation.Delete | _: Operation.Update | _: Operation.Project | _: Operation.Merge =>
          current.flatMap(_.indexSection)
        case r: Operation.Restore => r.indexSection
        case _ => None
      }
      val bytes = ManifestFile.encode(next, indexSection)
      val path = Storage.join(root, s"_versions/${naming.fileName(version)}")
      // (4) Put-if-absent decides between racing writers.
      val won =
        try storage.putIfAbsent(path, bytes)
        catch {
          case e: StorageException =>
            // (5) State unknown: the manifest may have been written. Never delete anything here.
            throw new CommitStateUnknownException(root, s"writing $path failed (${e.getMessage})", e)
        }
      if (won) {
        writeHint(storage, root, version)
        superseded.foreach(deleteQuietly(storage, _))
        return version
      }
      // (6) Another writer took this version: check it and try the next one, a bounded number of times.
      if (attempt >= options.maxRetries) {
        throw new CommitConflictException(root, s"lost the race for a new version $attempt times; the table is " +
          "being written by many writers at once. Retry later, or raise the commit retry limit.")
      }
    }
    throw new IllegalStateException("unreachable")
  }

  private def transactionPath(root: String, txn: Transaction): String =
    Storage.join(root, s"_transactions/${txn.fileName}")

  /** What a commit attempt builds on: the table's versions, and the latest manifest with its index section. */
  private final case class Latest(listing: VersionListing, manifest: Manifest, indexSection: Option[TableProtos.IndexSection])

  /** The latest state of the table; None for a table that does not exist yet. */
  private def latest(storage: Storage, root: String): Option[Latest] =
    try {
      val listing = Dataset.open(storage, root).listVersions()
      val entry = listing.entries.last
      val bytes = storage.readAll(entry.path, entry.size)
      val proto = ManifestFile.decode(entry.path, bytes)
      FeatureFlags.checkWritable(root, proto.getVersion, proto.getWriterFeatureFlags)
      Some(Latest(listing, new Manifest(proto, entry.path), ManifestFile.decodeIndexSection(entry.path, bytes, proto)))
    } catch { case _: NotATableException => None }

  /** The operation that produced a version, from its transaction file; None when there is none to read. */
  private def committedOperation(storage: Storage, root: String, entry: VersionEntry): Option[Operation] = {
    val manifest = new Manifest(ManifestFile.decode(entry.path, storage.readAll(entry.path, entry.size)), entry.path)
    manifest.transactionFile.flatMap { name =>
      try Some(Transaction.fromProto(TransactionProtos.Transaction.parseFrom(
        storage.readAll(Storage.join(root, s"_transactions/$name")))).operation)
      catch { case NonFatal(_) => None }
    }
  }

  private def writeHint(storage: Storage, root: String, version: Long): Unit =
    try storage.overwrite(Storage.join(root, "_versions/latest_version_hint.json"),
      s"""{"version":$version}""".getBytes(StandardCharsets.UTF_8))
    catch { case NonFatal(_) => () } // only a hint: readers list _versions/ anyway
}

/** The pure step of a commit: the next manifest from the current one and a transaction. */
object ManifestBuilder {
  /** The Manifest field where pylance 14 keeps the file position of the inline transaction. */
  private[txn] val InlineTransactionField = 23

  /** Replaces fragments by id with their updated versions and drops the removed ones, keeping the order. */
  private def replaceFragments(b: TableProtos.Manifest.Builder, updated: Seq[TableProtos.DataFragment],
      removed: Set[Long]): Unit = {
    val byId = updated.map(f => f.getId -> f).toMap
    val kept = b.getFragmentsList.asScala.toSeq.filterNot(f => removed.contains(f.getId)).map(f => byId.getOrElse(f.getId, f))
    b.clearFragments().addAllFragments(kept.asJava)
  }

  def next(current: Option[Manifest], txn: Transaction, version: Long, now: Instant,
      options: Committer.Options): TableProtos.Manifest = {
    val b = current.map(_.proto.toBuilder).getOrElse {
      TableProtos.Manifest.newBuilder().setDataFormat(TableProtos.Manifest.DataStorageFormat.newBuilder()
        .setFileFormat("lance").setVersion(options.newTableFileVersion))
    }
    b.setVersion(version)
      .setTimestamp(Timestamp.newBuilder().setSeconds(now.getEpochSecond).setNanos(now.getNano))
      .setTransactionFile(txn.fileName)
      .setWriterVersion(TableProtos.Manifest.WriterVersion.newBuilder().setLibrary(options.writerLibrary)
        .setVersion(options.writerVersion))
      .clearIndexSection()
      // The current manifest's inline transaction belongs to its version; ours is in the transaction file. pylance
      // 14 records the position of its inline transaction in field 23, which a copy would point at other bytes.
      .clearTransactionSection()
      .setUnknownFields(com.google.protobuf.UnknownFieldSet.newBuilder(b.getUnknownFields)
        .clearField(ManifestBuilder.InlineTransactionField).build())
      .clearTag()
    var nextFragmentId = current.flatMap(_.maxFragmentId).map(_ + 1).getOrElse(0L)
    val stable = current.exists(_.hasStableRowIds)
    var nextRowId = b.getNextRowId

    def assign(fs: Seq[TableProtos.DataFragment]): Seq[TableProtos.DataFragment] = fs.map { f =>
      val fb = f.toBuilder.setId(nextFragmentId)
      nextFragmentId += 1
      if (stable) {
        val n = f.getPhysicalRows
        val range = RowIdProtos.U64Segment.newBuilder().setRange(RowIdProtos.U64Segment.Range.newBuilder()
          .setStart(nextRowId).setEnd(nextRowId + n))
        fb.setInlineRowIds(RowIdProtos.RowIdSequence.newBuilder().addSegments(range).build().toByteString)
        val versions = RowIdProtos.RowDatasetVersionSequence.newBuilder().addRuns(RowIdProtos.RowDatasetVersionRun
          .newBuilder().setSpan(RowIdProtos.U64Segment.newBuilder().setRange(RowIdProtos.U64Segment.Range.newBuilder()
            .setStart(0).setEnd(n))).setVersion(version)).build().toByteString
        fb.setInlineCreatedAtVersions(versions).setInlineLastUpdatedAtVersions(versions)
        nextRowId += n
      }
      fb.build()
    }

    txn.operation match {
      case Operation.Append(fragments) =>
        b.addAllFragments(assign(fragments).asJava)
      case Operation.Overwrite(fragments, schema, meta, config, fileVersion) =>
        b.clearFragments().addAllFragments(assign(fragments).asJava)
        fileVersion.foreach(v => b.setDataFormat(TableProtos.Manifest.DataStorageFormat.newBuilder()
          .setFileFormat("lance").setVersion(v)))
        b.clearFields().addAllFields(schema.asJava)
        b.clearSchemaMetadata()
        meta.foreach { case (k, v) => b.putSchemaMetadata(k, com.google.protobuf.ByteString.copyFrom(v)) }
        b.putAllConfig(config.asJava)
      case Operation.Delete(updated, deleted, _) =>
        replaceFragments(b, updated, deleted.toSet)
      case Operation.Update(removed, updated, added) =>
        replaceFragments(b, updated, removed.toSet)
        // New versions of updated rows keep the row ids they carry (stable row ids) and were last updated now;
        // inserted rows get new ids.
        b.addAllFragments(added.map { f =>
          if (stable && f.hasInlineRowIds) {
            val fb = f.toBuilder.setId(nextFragmentId)
            nextFragmentId += 1
            fb.setInlineLastUpdatedAtVersions(io.sparklance.core.write.Compaction.encodeVersions(
              Array.fill(f.getPhysicalRows.toInt)(version)).toByteString).build()
          } else assign(Seq(f)).head
        }.asJava)
      case Operation.Project(schema) =>
        b.clearFields().addAllFields(schema.asJava)
      case Operation.Merge(fragments, schema) =>
        b.clearFragments().addAllFragments(fragments.asJava)
        b.clearFields().addAllFields(schema.asJava)
      case Operation.Restore(v, restored, _) =>
        // The old version's fragments, schema, config and flags; ids and row ids keep counting from the latest.
        val old = restored.getOrElse(throw new IllegalArgumentException(s"restore of version $v without its manifest"))
        b.clearFragments().addAllFragments(old.getFragmentsList)
        b.clearFields().addAllFields(old.getFieldsList)
        b.clearSchemaMetadata().putAllSchemaMetadata(old.getSchemaMetadataMap)
        b.clearConfig().putAllConfig(old.getConfigMap)
        b.setReaderFeatureFlags(old.getReaderFeatureFlags).setWriterFeatureFlags(old.getWriterFeatureFlags)
        if (old.hasDataFormat) b.setDataFormat(old.getDataFormat)
      case Operation.Rewrite(groups) =>
        // Each group's new fragments take the place of its first old fragment; they keep the row ids they carry.
        val firstOld = groups.map(g => g._1.head.getId -> g._2).toMap
        val gone = groups.flatMap(_._1.map(_.getId)).toSet
        val rebuilt = b.getFragmentsList.asScala.toSeq.flatMap { f =>
          firstOld.get(f.getId).map(news => news.map { n =>
            val nb = n.toBuilder.setId(nextFragmentId)
            nextFragmentId += 1
            nb.build()
          }).getOrElse(if (gone.contains(f.getId)) Nil else Seq(f))
        }
        b.clearFragments().addAllFragments(rebuilt.asJava)
      case Operation.Other(n) => throw new IllegalArgumentException(s"sparklance does not commit $n transactions")
    }
    if (nextFragmentId > 0) b.setMaxFragmentId((nextFragmentId - 1).toInt)
    b.setNextRowId(nextRowId)
    val hasDeletions = b.getFragmentsList.asScala.exists(_.hasDeletionFile)
    def flags(f: Long): Long = {
      var x = if (hasDeletions) f | FeatureFlags.DeletionFiles else f & ~FeatureFlags.DeletionFiles
      if (b.getConfigCount > 0) x |= FeatureFlags.TableConfig
      x
    }
    b.setReaderFeatureFlags(flags(b.getReaderFeatureFlags)).setWriterFeatureFlags(flags(b.getWriterFeatureFlags))
    b.build()
  }
}
