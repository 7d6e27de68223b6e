package io.sparklance.core.table

import scala.jdk.CollectionConverters._

import io.sparklance.core.{InvalidArgumentException, UnsupportedFeatureException}
import io.sparklance.core.format.DataFile
import io.sparklance.core.schema.LanceSchema
import io.sparklance.core.txn.{Committer, Operation, Transaction}
import io.sparklance.proto.TableProtos

/**
 * Columns rewritten in place (`ALTER TABLE t UPDATE COLUMNS c FROM view`, Lance's `Fragment.update_columns`): for
 * each fragment whose values change, one new data file holding the columns for every physical row of the fragment
 * (written by [[Table.newColumnWriter]] from [[spec]]), which takes over the columns' field ids; the fragment's older
 * files keep their bytes, with those ids tombstoned (-2) in their field lists. Other columns and fragments are not
 * touched; the schema does not change. Committed as one Update transaction that replaces the changed fragments, so
 * indexes stop covering them.
 */
final class ColumnUpdate private[table] (table: Table, snapshot: Snapshot, names: Seq[String]) extends PendingCommit(table) {
  retriesFrom(snapshot)

  /** The columns updated, top-level fields of the table with their ids and children: what each new file holds. */
  val schema: LanceSchema = {
    if (names.isEmpty) throw new InvalidArgumentException("No columns to update: name at least one column.")
    names.groupBy(identity).collectFirst { case (n, all) if all.size > 1 => n }.foreach { n =>
      throw new InvalidArgumentException(s"Column '$n' is named twice among the columns to update.")
    }
    val fields = names.map { n =>
      snapshot.schema.field(n).getOrElse(throw new InvalidArgumentException(s"Table ${snapshot.root} has no column " +
        s"'$n' to update (its columns: ${snapshot.schema.fields.map(_.name).mkString(", ")})."))
    }
    fields.find(_.flatten.exists(f => f.isBlob || f.isBlobV2)).foreach { f =>
      throw new UnsupportedFeatureException(s"Updating blob column '${f.name}' in place is not supported.")
    }
    LanceSchema(fields.toIndexedSeq, Map.empty)
  }

  /** What the writers of the new files need, as plain data. */
  def spec: NewColumns.Spec = NewColumns.Spec.of(schema, snapshot, fileTag)

  /** Commits the new files (one per changed fragment); returns the new version. */
  def commit(files: Seq[NewColumns.File]): Long = committing {
    val ids = schema.allFields.map(_.id).toSet
    val byId = snapshot.fragments.map(f => f.id -> f).toMap
    val updated = files.map { n =>
      val fragment = byId(n.fragmentId).proto.toBuilder
      fragment.getFilesBuilderList.asScala.foreach { file =>
        (0 until file.getFieldsCount).foreach { i =>
          if (ids.contains(file.getFields(i))) file.setFields(i, DataFile.TombstoneFieldId)
        }
      }
      fragment.addFiles(TableProtos.DataFile.parseFrom(n.dataFile)).build()
    }
    table.commit(Transaction.create(snapshot.version, Operation.Update(Nil, updated, Nil)),
      Committer.Options(maxRetries = commitRetries))
  }
}
