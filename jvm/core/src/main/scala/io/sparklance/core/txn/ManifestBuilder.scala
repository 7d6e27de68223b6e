package io.sparklance.core.txn

import java.time.Instant

import scala.jdk.CollectionConverters._

import com.google.protobuf.Timestamp

import io.sparklance.core.InvalidArgumentException
import io.sparklance.core.format.{FeatureFlags, Manifest, RowVersionSequence}
import io.sparklance.core.index.{IndexKind, IndexMetadata}
import io.sparklance.core.schema.PrimaryKey
import io.sparklance.proto.{RowIdProtos, TableProtos}

/**
 * The pure step of a commit: the next manifest from the current one and a transaction. Everything it needs comes
 * in as arguments (for a [[Operation.Restore]], the restored version's manifest), so it reads nothing.
 */
object ManifestBuilder {
  /** The Manifest field where pylance 14 keeps the file position of the inline transaction. */
  private[core] val InlineTransactionField = 23

  /**
   * The manifest of `version`: `current` (None for a new table) changed by `txn`. `restored` is the manifest of the
   * version a Restore brings back, and is needed for a Restore only.
   */
  def next(current: Option[Manifest], txn: Transaction, version: Long, now: Instant, options: Committer.Options,
      restored: Option[TableProtos.Manifest] = None): TableProtos.Manifest = {
    val b = header(current, txn, version, now, options)
    val ids = new Ids(current.flatMap(_.maxFragmentId).map(_ + 1).getOrElse(0L), b.getNextRowId,
      current.map(_.hasStableRowIds).getOrElse(options.stableRowIds.contains(true)), version)
    txn.operation match {
      case op: Operation.Append => b.addAllFragments(op.fragments.map(ids.add).asJava)
      case op: Operation.Overwrite => overwrite(b, op, ids)
      case op: Operation.Delete => replaceFragments(b, op.updatedFragments, op.deletedFragmentIds.toSet)
      case op: Operation.Update => update(b, op, ids)
      case op: Operation.Project => b.clearFields().addAllFields(op.schema.asJava)
      case op: Operation.Merge => b.clearFragments().addAllFragments(op.fragments.asJava).clearFields().addAllFields(op.schema.asJava)
      case op: Operation.Restore =>
        restore(b, restored.getOrElse(throw new IllegalArgumentException(
          s"restore of version ${op.version} without its manifest")))
      case op: Operation.Rewrite => rewrite(b, op, ids)
      case op: Operation.ReserveFragments =>
        // Upstream's rule: max_fragment_id becomes the current one (0 when unset) plus the fragments reserved.
        ids.nextFragmentId = current.flatMap(_.maxFragmentId).getOrElse(0L) + op.numFragments + 1
      case _: Operation.CreateIndex => ()
      case op: Operation.UpdateConfig =>
        if (op.otherUpdates) throw new IllegalArgumentException("sparklance commits config key updates only")
        op.deletes.foreach(b.removeConfig)
        b.putAllConfig(op.upserts.asJava)
        setFieldMetadata(b, op.fieldMetadata)
      case Operation.Other(n) => throw new IllegalArgumentException(s"sparklance does not commit $n transactions")
    }
    if (ids.nextFragmentId > 0) b.setMaxFragmentId((ids.nextFragmentId - 1).toInt)
    b.setNextRowId(ids.nextRowId)
    // Fragments in id order, as upstream keeps them (its validate() refuses others): a compaction's new fragments,
    // which take new ids, move to the end.
    val sorted = b.getFragmentsList.asScala.sortBy(_.getId)
    b.clearFragments().addAllFragments(sorted.asJava)
    setFeatureFlags(b)
    b.build()
  }

  /**
   * Sets metadata keys on fields (by id). The unenforced primary key's two keys also set the field's
   * `unenforced_primary_key` flags, as pylance keeps them; a key once set is never changed (pylance refuses that too).
   */
  private def setFieldMetadata(b: TableProtos.Manifest.Builder, updates: Map[Int, Map[String, String]]): Unit =
    if (updates.nonEmpty) {
      val fields = b.getFieldsBuilderList.asScala
      if (updates.values.exists(_.keySet.exists(PrimaryKey.isKey)) && fields.exists(PrimaryKey.isPart(_))) {
        throw new InvalidArgumentException(s"The table already has an unenforced primary key " +
          s"(${PrimaryKey.columns(fields.map(_.build()).toSeq).mkString(", ")}); it cannot be changed once set.")
      }
      updates.foreach { case (id, kv) =>
        val f = fields.find(_.getId == id).getOrElse(throw new InvalidArgumentException(
          s"Field id $id is no longer in the table's schema: set its metadata again."))
        kv.foreach { case (k, v) =>
          f.putMetadata(k, com.google.protobuf.ByteString.copyFromUtf8(v))
          if (k == PrimaryKey.Key) f.setUnenforcedPrimaryKey(PrimaryKey.truthy(v))
          if (k == PrimaryKey.PositionKey) f.setUnenforcedPrimaryKeyPosition(v.toInt)
        }
      }
    }

  /**
   * The index section the next manifest carries, from the current one (`current`, of manifest `base`):
   *  - a CreateIndex removes the indexes it names (by uuid) and adds its new ones;
   *  - reserved fragment ids and config changes keep every index as it is;
   *  - appends, deletes and merges keep every index: new fragments are not in an index's fragment bitmap, so they are
   *    read to be searched, and deleted rows are filtered by deletion files, as upstream does;
   *  - an update keeps them too, but a fragment whose data files it replaced leaves every bitmap (its indexed values
   *    may have changed); a schema change drops the indexes of fields it removed;
   *  - a rewrite (compaction) on a table with stable row ids moves each full-text index from a group's old fragments
   *    to its new ones when it covered all of them (its documents are row ids, which the rows keep), as upstream's
   *    `recalculate_fragment_bitmap` does; one covering only some of a group's fragments stops covering them (their
   *    rows are then read to be searched). Other indexes, and every index without stable row ids, may hold row
   *    addresses, which the rewrite changed. Those the rewrite remapped (`rewritten_indices`: their files written
   *    again for the new row addresses) take their new uuid, details, version and files, and their bitmaps trade each
   *    group's old fragments for its new ones, as upstream's `handle_rewrite_indices` does; the others' bitmaps are
   *    kept as they are, naming fragments that no longer exist, so the new fragments' rows are read to be searched
   *    until the index is optimized;
   *  - a restore brings back the old version's; an overwrite replaces the data they indexed, so none survive.
   */
  def indexSection(op: Operation, base: Option[Manifest], current: Option[TableProtos.IndexSection],
      restored: Option[TableProtos.IndexSection]): Option[TableProtos.IndexSection] = {
    def keep(f: TableProtos.IndexMetadata => Option[TableProtos.IndexMetadata]) =
      current.map(s => TableProtos.IndexSection.newBuilder().addAllIndices(s.getIndicesList.asScala.flatMap(f(_)).asJava).build())
    def without(fragmentIds: Set[Long])(i: TableProtos.IndexMetadata): Option[TableProtos.IndexMetadata] =
      if (fragmentIds.isEmpty) Some(i)
      else {
        val bitmap = new IndexMetadata(i, base.map(_.path).getOrElse("")).fragmentBitmap.clone()
        fragmentIds.foreach(id => if (id <= 0xFFFFFFFFL) bitmap.remove(id.toInt))
        Some(IndexMetadata.withFragments(i, bitmap))
      }
    op match {
      case Operation.CreateIndex(added, removed) =>
        val gone = removed.map(_.getUuid).toSet
        val kept = current.map(_.getIndicesList.asScala.filterNot(i => gone.contains(i.getUuid)).toSeq).getOrElse(Nil)
        Some(TableProtos.IndexSection.newBuilder().addAllIndices((kept ++ added).asJava).build())
      case _: Operation.Append | _: Operation.Delete | _: Operation.Merge | _: Operation.ReserveFragments |
          _: Operation.UpdateConfig => current
      case Operation.Update(_, updated, _, _) =>
        val before = base.map(_.fragments.map(f => f.id -> f.proto.getFilesList).toMap).getOrElse(Map.empty)
        val replaced = updated.filter(f => before.get(f.getId).exists(_ != f.getFilesList)).map(_.getId).toSet
        keep(without(replaced))
      case Operation.Project(schema) =>
        val ids = schema.map(_.getId).toSet
        keep(i => if (i.getFieldsList.asScala.forall(id => ids.contains(id.intValue))) Some(i) else None)
      case op: Operation.Rewrite if base.exists(_.hasStableRowIds) =>
        val moves = rewrittenIds(base, op)
        keep { i =>
          val meta = new IndexMetadata(i, base.map(_.path).getOrElse(""))
          if (meta.kind != IndexKind.Inverted) Some(i)
          else {
            val bitmap = meta.fragmentBitmap.clone()
            moves.foreach { case (olds, news) =>
              val covered = olds.count(meta.covers)
              olds.foreach(id => if (id <= 0xFFFFFFFFL) bitmap.remove(id.toInt))
              if (olds.nonEmpty && covered == olds.size) news.foreach(id => bitmap.add(id.toInt))
            }
            Some(IndexMetadata.withFragments(i, bitmap))
          }
        }
      case op: Operation.Rewrite if op.rewrittenIndices.nonEmpty =>
        val byOld = op.rewrittenIndices.map(r => r.getOldId.getUuid -> r).toMap
        val present = current.map(_.getIndicesList.asScala.map(_.getUuid.getUuid).toSet).getOrElse(Set.empty)
        byOld.keys.find(u => !present.contains(u)).foreach { u =>
          throw new IllegalArgumentException(s"a rewrite remaps index ${IndexMetadata.uuidString("", u)}, which the table " +
            "no longer has")
        }
        val moves = rewrittenIds(base, op)
        keep { i =>
          byOld.get(i.getUuid.getUuid).map { r =>
            val bitmap = new IndexMetadata(i, base.map(_.path).getOrElse("")).fragmentBitmap.clone()
            moves.foreach { case (olds, news) =>
              if (olds.exists(id => id <= 0xFFFFFFFFL && bitmap.contains(id.toInt))) {
                olds.foreach(id => bitmap.remove(id.toInt))
                news.foreach(id => bitmap.add(id.toInt))
              }
            }
            val b = IndexMetadata.withFragments(i, bitmap).toBuilder.setUuid(r.getNewId)
            if (r.hasNewIndexDetails) b.setIndexDetails(r.getNewIndexDetails)
            if (r.getNewIndexFilesCount > 0) b.clearFiles().addAllFiles(r.getNewIndexFilesList)
            if (r.getNewIndexVersion > 0) b.setIndexVersion(r.getNewIndexVersion)
            b.build()
          }.orElse(Some(i))
        }
      case _: Operation.Rewrite => current
      case _: Operation.Restore => restored
      case _ => None
    }
  }

  /** The current manifest (or a new table's) with this version's number, time, transaction and writer. */
  private def header(current: Option[Manifest], txn: Transaction, version: Long, now: Instant,
      options: Committer.Options): TableProtos.Manifest.Builder = {
    current.filter(c => options.stableRowIds.exists(_ != c.hasStableRowIds)).foreach { c =>
      throw new InvalidArgumentException(s"The table ${if (c.hasStableRowIds) "has" else "has no"} stable row ids, " +
        "and they cannot be turned on or off for a table that exists: they are chosen when a table is created.")
    }
    val b = current.map(_.proto.toBuilder).getOrElse {
      val flags = if (options.stableRowIds.contains(true)) FeatureFlags.StableRowIds else 0L
      TableProtos.Manifest.newBuilder().setDataFormat(dataFormat(options.newTableFileVersion))
        .setReaderFeatureFlags(flags).setWriterFeatureFlags(flags)
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
        .clearField(InlineTransactionField).build())
      .clearTag()
  }

  private def dataFormat(fileVersion: String): TableProtos.Manifest.DataStorageFormat.Builder =
    TableProtos.Manifest.DataStorageFormat.newBuilder().setFileFormat("lance").setVersion(fileVersion)

  private def overwrite(b: TableProtos.Manifest.Builder, op: Operation.Overwrite, ids: Ids): Unit = {
    b.clearFragments().addAllFragments(op.fragments.map(ids.add).asJava)
    op.fileVersion.foreach(v => b.setDataFormat(dataFormat(v)))
    b.clearFields().addAllFields(op.schema.asJava)
    b.clearSchemaMetadata()
    op.schemaMetadata.foreach { case (k, v) => b.putSchemaMetadata(k, com.google.protobuf.ByteString.copyFrom(v)) }
    b.putAllConfig(op.config.asJava)
  }

  /**
   * New versions of updated rows keep the row ids they carry (stable row ids) and were last updated now; inserted
   * rows get new ids.
   */
  private def update(b: TableProtos.Manifest.Builder, op: Operation.Update, ids: Ids): Unit = {
    replaceFragments(b, op.updatedFragments, op.removedFragmentIds.toSet)
    b.addAllFragments(op.newFragments.map { f =>
      if (ids.stable && f.hasInlineRowIds) {
        ids.renumber(f).toBuilder.setInlineLastUpdatedAtVersions(RowVersionSequence.encode(
          Array.fill(f.getPhysicalRows.toInt)(ids.version)).toByteString).build()
      } else ids.add(f)
    }.asJava)
  }

  /** The old version's fragments, schema, config and flags; ids and row ids keep counting from the latest. */
  private def restore(b: TableProtos.Manifest.Builder, old: TableProtos.Manifest): Unit = {
    b.clearFragments().addAllFragments(old.getFragmentsList)
    b.clearFields().addAllFields(old.getFieldsList)
    b.clearSchemaMetadata().putAllSchemaMetadata(old.getSchemaMetadataMap)
    b.clearConfig().putAllConfig(old.getConfigMap)
    b.setReaderFeatureFlags(old.getReaderFeatureFlags).setWriterFeatureFlags(old.getWriterFeatureFlags)
    if (old.hasDataFormat) b.setDataFormat(old.getDataFormat)
  }

  /**
   * The ids of each rewrite group's old fragments and of its new ones, as [[next]] gives them (the next fragment ids
   * after the table's highest, in the groups' order).
   */
  private def rewrittenIds(base: Option[Manifest], op: Operation.Rewrite): Seq[(Seq[Long], Seq[Long])] = {
    var next = base.flatMap(_.maxFragmentId).map(_ + 1).getOrElse(0L)
    op.groups.map { case (olds, news) =>
      val ids = news.map { f =>
        if (f.getId != 0) f.getId
        else { next += 1; next - 1 }
      }
      (olds.map(_.getId), ids)
    }
  }

  /**
   * Each group's new fragments replace its old ones; they keep the row ids they carry, and the ids they carry when
   * not 0 (reserved ones).
   */
  private def rewrite(b: TableProtos.Manifest.Builder, op: Operation.Rewrite, ids: Ids): Unit = {
    val gone = op.groups.flatMap(_._1.map(_.getId)).toSet
    val kept = b.getFragmentsList.asScala.toSeq.filterNot(f => gone.contains(f.getId))
    val added = op.groups.flatMap(_._2.map(f => if (f.getId != 0) f else ids.renumber(f)))
    val ids0 = kept.map(_.getId).toSet
    val clash = added.map(_.getId).diff(added.map(_.getId).distinct) ++ added.map(_.getId).filter(ids0.contains)
    clash.headOption.foreach(id => throw new IllegalArgumentException(s"a rewrite's new fragment id $id is already taken"))
    b.clearFragments().addAllFragments((kept ++ added).asJava)
  }

  /** Replaces fragments by id with their updated versions and drops the removed ones, keeping the order. */
  private def replaceFragments(b: TableProtos.Manifest.Builder, updated: Seq[TableProtos.DataFragment],
      removed: Set[Long]): Unit = {
    val byId = updated.map(f => f.getId -> f).toMap
    val kept = b.getFragmentsList.asScala.toSeq.filterNot(f => removed.contains(f.getId)).map(f => byId.getOrElse(f.getId, f))
    b.clearFragments().addAllFragments(kept.asJava)
  }

  /** Deletion files and table config are reader and writer features: set exactly when the manifest has them. */
  private def setFeatureFlags(b: TableProtos.Manifest.Builder): Unit = {
    val hasDeletions = b.getFragmentsList.asScala.exists(_.hasDeletionFile)
    def flags(f: Long): Long = {
      var x = if (hasDeletions) f | FeatureFlags.DeletionFiles else f & ~FeatureFlags.DeletionFiles
      if (b.getConfigCount > 0) x |= FeatureFlags.TableConfig
      x
    }
    b.setReaderFeatureFlags(flags(b.getReaderFeatureFlags)).setWriterFeatureFlags(flags(b.getWriterFeatureFlags))
  }

  /**
   * What a new version hands out: fragment ids, and with stable row ids, row ids (new rows were created and last
   * updated at `version`).
   */
  private final class Ids(var nextFragmentId: Long, var nextRowId: Long, val stable: Boolean, val version: Long) {

    /** The fragment with the next id, keeping everything else. */
    def renumber(f: TableProtos.DataFragment): TableProtos.DataFragment = {
      val out = f.toBuilder.setId(nextFragmentId).build()
      nextFragmentId += 1
      out
    }

    /** A new fragment: the next id, and with stable row ids, the next row ids. */
    def add(f: TableProtos.DataFragment): TableProtos.DataFragment = {
      val fb = f.toBuilder.setId(nextFragmentId)
      nextFragmentId += 1
      if (stable) {
        val n = f.getPhysicalRows
        fb.setInlineRowIds(RowIdProtos.RowIdSequence.newBuilder().addSegments(range(nextRowId, nextRowId + n))
          .build().toByteString)
        val versions = RowIdProtos.RowDatasetVersionSequence.newBuilder().addRuns(RowIdProtos.RowDatasetVersionRun
          .newBuilder().setSpan(range(0, n)).setVersion(version)).build().toByteString
        fb.setInlineCreatedAtVersions(versions).setInlineLastUpdatedAtVersions(versions)
        nextRowId += n
      }
      fb.build()
    }

    private def range(start: Long, end: Long): RowIdProtos.U64Segment.Builder =
      RowIdProtos.U64Segment.newBuilder().setRange(RowIdProtos.U64Segment.Range.newBuilder().setStart(start).setEnd(end))
  }
}
