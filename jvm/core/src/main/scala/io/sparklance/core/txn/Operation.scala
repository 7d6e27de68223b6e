package io.sparklance.core.txn

import java.util.UUID

import scala.jdk.CollectionConverters._

import org.roaringbitmap.RoaringBitmap

import io.sparklance.core.schema.LanceSchema
import io.sparklance.proto.{FileProtos, TableProtos, TransactionProtos}

/**
 * What a commit does, as data (transaction.proto `Transaction.operation`). Only the operations this version of
 * sparklance commits are modelled; any other operation read from a transaction file is [[Operation.Other]], which
 * the conflict rules treat as conflicting with everything.
 */
sealed trait Operation {
  def name: String
}

object Operation {
  /** New fragments added to the table (ids are assigned at commit). */
  final case class Append(fragments: Seq[TableProtos.DataFragment]) extends Operation { def name = "Append" }

  /**
   * The table replaced by new fragments and a schema (also how a table is created). `fileVersion` is the Lance file
   * version the new fragments were written with (e.g. "2.1"): the next manifest records it as the table's data
   * storage version, so that replacing a table can never leave files of one version under a manifest naming another
   * (as pylance's overwrite does). None keeps the version the table records; it is not part of the transaction file.
   */
  final case class Overwrite(fragments: Seq[TableProtos.DataFragment], schema: Seq[FileProtos.Field],
      schemaMetadata: Map[String, Array[Byte]], config: Map[String, String], fileVersion: Option[String] = None)
      extends Operation { def name = "Overwrite" }

  /**
   * Rows deleted: fragments whose deletion files changed (replacing the fragments of the same id) and fragments
   * whose every row is gone (removed). `predicate` is informational (the SQL condition).
   *
   * `deletedRows` holds, per fragment of `updatedFragments`, the row offsets this delete deleted (not those deleted
   * before it read the table): with them, a concurrent change of the same fragments' deletion files is merged
   * instead of conflicting ([[DeletionMerge]]). It is not part of the transaction file (empty when read from one).
   */
  final case class Delete(updatedFragments: Seq[TableProtos.DataFragment], deletedFragmentIds: Seq[Long],
      predicate: String, deletedRows: Map[Long, RoaringBitmap] = Map.empty) extends Operation { def name = "Delete" }

  /**
   * Rows changed: like [[Delete]] for the old versions of the rows (`deletedRows` as there), plus new fragments
   * holding their new versions (and, for MERGE, inserted rows).
   */
  final case class Update(removedFragmentIds: Seq[Long], updatedFragments: Seq[TableProtos.DataFragment],
      newFragments: Seq[TableProtos.DataFragment], deletedRows: Map[Long, RoaringBitmap] = Map.empty)
      extends Operation { def name = "Update" }

  /** The schema replaced (columns added, dropped, renamed, made nullable) without touching data files. */
  final case class Project(schema: Seq[FileProtos.Field]) extends Operation { def name = "Project" }

  /**
   * The table as it was at an earlier version, committed as a new version: that version's fragments, schema,
   * config and indexes, which the committer reads from its manifest.
   */
  final case class Restore(version: Long) extends Operation { def name = "Restore" }

  /**
   * Fragments rewritten (compaction): each group's old fragments are replaced by new fragments holding the same live
   * rows, which take new ids (and so come after the others: fragments are kept in id order); a new fragment whose id
   * is not 0 keeps it (ids reserved by a [[ReserveFragments]], as upstream's `fragments_with_ids` keeps them). New
   * fragments carry their rows' stable ids when the table has them.
   *
   * `rewrittenIndices` (transaction.proto `Rewrite.rewritten_indices`): indexes whose files were written again for
   * the new fragments' row addresses, each replacing the index of `old_id` under `new_id` with its details, version
   * and files (field 5, as pylance 14 writes it); its fragment bitmap trades each group's old fragments for the new.
   */
  final case class Rewrite(groups: Seq[(Seq[TableProtos.DataFragment], Seq[TableProtos.DataFragment])],
      rewrittenIndices: Seq[TransactionProtos.Transaction.Rewrite.RewrittenIndex] = Nil)
      extends Operation { def name = "Rewrite" }

  /**
   * Fragment ids set aside (transaction.proto `ReserveFragments`): the table's `max_fragment_id` grows by
   * `numFragments`, so that a compaction knows its new fragments' ids, and so their row addresses, before it commits.
   */
  final case class ReserveFragments(numFragments: Int) extends Operation { def name = "ReserveFragments" }

  /**
   * Columns added with values (data evolution): every fragment, with a new data file holding the new columns, and
   * the new schema. Other data files are not rewritten.
   */
  final case class Merge(fragments: Seq[TableProtos.DataFragment], schema: Seq[FileProtos.Field]) extends Operation {
    def name = "Merge"
  }

  /**
   * Indexes added and removed (metadata only; the new indexes' files are written before the commit). Dropping an
   * index is a CreateIndex that only removes; replacing one removes the old and adds the new in one version.
   */
  final case class CreateIndex(newIndices: Seq[TableProtos.IndexMetadata], removedIndices: Seq[TableProtos.IndexMetadata])
      extends Operation { def name = "CreateIndex" }

  /**
   * Table config keys set and removed (`ALTER TABLE ... SET/UNSET TBLPROPERTIES`, pylance's `update_config` and
   * `delete_config_keys`), written as pylance 14 writes them: one `config_updates` map whose entries without a value
   * remove their key. `otherUpdates` marks one read from a transaction file that also replaced the whole config or
   * changed table, schema or field metadata, which sparklance does not commit; `fieldMetadata` is the one metadata
   * change sparklance commits (keys set on fields, by field id: an unenforced primary key), written as pylance's
   * `update_field_metadata` writes it.
   */
  final case class UpdateConfig(upserts: Map[String, String], deletes: Set[String], otherUpdates: Boolean = false,
      fieldMetadata: Map[Int, Map[String, String]] = Map.empty) extends Operation {
    def name = "UpdateConfig"
    def keys: Set[String] = upserts.keySet ++ deletes
  }

  /** A committed operation of another kind, read from a transaction file. */
  final case class Other(name: String) extends Operation

  def overwrite(fragments: Seq[TableProtos.DataFragment], schema: LanceSchema): Overwrite =
    Overwrite(fragments, schema.toProtos, schema.metadata, Map.empty)
}

/**
 * A transaction: the version it read, a unique id, its operation, and free-form properties kept in its file
 * (Lance's `transaction_properties`; e.g. which batch of a streaming query it commits).
 */
final case class Transaction(readVersion: Long, uuid: String, operation: Operation,
    properties: Map[String, String] = Map.empty) {

  /** The transaction file name under `_transactions/`: `{read_version}-{uuid}.txn`. */
  def fileName: String = s"$readVersion-$uuid.txn"

  def toProto: TransactionProtos.Transaction = {
    val b = TransactionProtos.Transaction.newBuilder().setReadVersion(readVersion).setUuid(uuid)
      .putAllTransactionProperties(properties.asJava)
    operation match {
      case Operation.Append(fs) => b.setAppend(TransactionProtos.Transaction.Append.newBuilder().addAllFragments(fs.asJava))
      case Operation.Overwrite(fs, schema, meta, config, _) =>
        val o = TransactionProtos.Transaction.Overwrite.newBuilder().addAllFragments(fs.asJava).addAllSchema(schema.asJava)
          .putAllConfigUpsertValues(config.asJava)
        meta.foreach { case (k, v) => o.putSchemaMetadata(k, com.google.protobuf.ByteString.copyFrom(v)) }
        b.setOverwrite(o)
      case Operation.Delete(updated, deleted, predicate, _) =>
        b.setDelete(TransactionProtos.Transaction.Delete.newBuilder().addAllUpdatedFragments(updated.asJava)
          .addAllDeletedFragmentIds(deleted.map(java.lang.Long.valueOf).asJava).setPredicate(predicate))
      case Operation.Update(removed, updated, added, _) =>
        b.setUpdate(TransactionProtos.Transaction.Update.newBuilder()
          .addAllRemovedFragmentIds(removed.map(java.lang.Long.valueOf).asJava)
          .addAllUpdatedFragments(updated.asJava).addAllNewFragments(added.asJava))
      case Operation.Project(schema) =>
        b.setProject(TransactionProtos.Transaction.Project.newBuilder().addAllSchema(schema.asJava))
      case Operation.Restore(version) =>
        b.setRestore(TransactionProtos.Transaction.Restore.newBuilder().setVersion(version))
      case Operation.Rewrite(groups, rewrittenIndices) =>
        val r = TransactionProtos.Transaction.Rewrite.newBuilder()
        groups.foreach { case (olds, news) =>
          r.addGroups(TransactionProtos.Transaction.Rewrite.RewriteGroup.newBuilder()
            .addAllOldFragments(olds.asJava).addAllNewFragments(news.asJava))
        }
        b.setRewrite(r.addAllRewrittenIndices(rewrittenIndices.asJava))
      case Operation.ReserveFragments(n) =>
        b.setReserveFragments(TransactionProtos.Transaction.ReserveFragments.newBuilder().setNumFragments(n))
      case Operation.Merge(fragments, schema) =>
        b.setMerge(TransactionProtos.Transaction.Merge.newBuilder().addAllFragments(fragments.asJava).addAllSchema(schema.asJava))
      case Operation.CreateIndex(added, removed) =>
        b.setCreateIndex(TransactionProtos.Transaction.CreateIndex.newBuilder().addAllNewIndices(added.asJava)
          .addAllRemovedIndices(removed.asJava))
      case Operation.UpdateConfig(upserts, deletes, _, fieldMetadata) =>
        def entry(k: String, v: Option[String]) = {
          val e = TransactionProtos.Transaction.UpdateMapEntry.newBuilder().setKey(k)
          v.foreach(e.setValue)
          e.build()
        }
        val entries = upserts.toSeq.sorted.map { case (k, v) => entry(k, Some(v)) } ++ deletes.toSeq.sorted.map(entry(_, None))
        val u = TransactionProtos.Transaction.UpdateConfig.newBuilder()
        if (entries.nonEmpty || fieldMetadata.isEmpty) {
          u.setConfigUpdates(TransactionProtos.Transaction.UpdateMap.newBuilder().addAllUpdateEntries(entries.asJava))
        }
        fieldMetadata.foreach { case (id, kv) =>
          u.putFieldMetadataUpdates(id, TransactionProtos.Transaction.UpdateMap.newBuilder()
            .addAllUpdateEntries(kv.toSeq.sorted.map { case (k, v) => entry(k, Some(v)) }.asJava).build())
        }
        b.setUpdateConfig(u)
      case Operation.Other(n) => throw new IllegalArgumentException(s"cannot write a $n transaction")
    }
    b.build()
  }
}

object Transaction {
  def create(readVersion: Long, operation: Operation): Transaction =
    Transaction(readVersion, UUID.randomUUID().toString, operation)

  def fromProto(p: TransactionProtos.Transaction): Transaction = {
    import TransactionProtos.Transaction.OperationCase._
    val op = p.getOperationCase match {
      case APPEND => Operation.Append(p.getAppend.getFragmentsList.asScala.toSeq)
      case OVERWRITE =>
        val o = p.getOverwrite
        Operation.Overwrite(o.getFragmentsList.asScala.toSeq, o.getSchemaList.asScala.toSeq,
          o.getSchemaMetadataMap.asScala.map { case (k, v) => k -> v.toByteArray }.toMap,
          o.getConfigUpsertValuesMap.asScala.toMap)
      case DELETE =>
        val d = p.getDelete
        Operation.Delete(d.getUpdatedFragmentsList.asScala.toSeq, d.getDeletedFragmentIdsList.asScala.map(_.longValue).toSeq,
          d.getPredicate)
      case UPDATE =>
        val u = p.getUpdate
        Operation.Update(u.getRemovedFragmentIdsList.asScala.map(_.longValue).toSeq, u.getUpdatedFragmentsList.asScala.toSeq,
          u.getNewFragmentsList.asScala.toSeq)
      case PROJECT => Operation.Project(p.getProject.getSchemaList.asScala.toSeq)
      case RESTORE => Operation.Restore(p.getRestore.getVersion)
      case MERGE => Operation.Merge(p.getMerge.getFragmentsList.asScala.toSeq, p.getMerge.getSchemaList.asScala.toSeq)
      case REWRITE =>
        val r = p.getRewrite
        val groups = r.getGroupsList.asScala.toSeq.map(g => (g.getOldFragmentsList.asScala.toSeq, g.getNewFragmentsList.asScala.toSeq))
        Operation.Rewrite(if (groups.nonEmpty) groups
          else Seq((r.getOldFragmentsList.asScala.toSeq, r.getNewFragmentsList.asScala.toSeq)),
          r.getRewrittenIndicesList.asScala.toSeq)
      case RESERVE_FRAGMENTS => Operation.ReserveFragments(p.getReserveFragments.getNumFragments)
      case CREATE_INDEX =>
        Operation.CreateIndex(p.getCreateIndex.getNewIndicesList.asScala.toSeq, p.getCreateIndex.getRemovedIndicesList.asScala.toSeq)
      case UPDATE_CONFIG => updateConfig(p.getUpdateConfig)
      case OPERATION_NOT_SET => Operation.Other("unknown")
      case other => Operation.Other(other.name.toLowerCase)
    }
    Transaction(p.getReadVersion, p.getUuid, op, p.getTransactionPropertiesMap.asScala.toMap)
  }

  /** An UpdateConfig as pylance 14 writes it (`config_updates`) or as older writers did (upserts, deleted keys). */
  private def updateConfig(u: TransactionProtos.Transaction.UpdateConfig): Operation.UpdateConfig = {
    val entries = u.getConfigUpdates.getUpdateEntriesList.asScala.toSeq
    val upserts = u.getUpsertValuesMap.asScala.toMap ++ entries.filter(_.hasValue).map(e => e.getKey -> e.getValue)
    val deletes = u.getDeleteKeysList.asScala.toSet ++ entries.filterNot(_.hasValue).map(_.getKey)
    val fields = u.getFieldMetadataUpdatesMap.asScala.toMap
    // Field keys set (not removed, not replacing a field's whole map) are what sparklance itself commits.
    val settable = fields.values.forall(m => !m.getReplace && m.getUpdateEntriesList.asScala.forall(_.hasValue))
    val other = u.getConfigUpdates.getReplace || u.hasTableMetadataUpdates || u.hasSchemaMetadataUpdates ||
      !settable || u.getSchemaMetadataCount > 0 || u.getFieldMetadataCount > 0
    Operation.UpdateConfig(upserts, deletes, other, fields.map { case (id, m) =>
      id.intValue -> m.getUpdateEntriesList.asScala.filter(_.hasValue).map(e => e.getKey -> e.getValue).toMap
    })
  }
}
