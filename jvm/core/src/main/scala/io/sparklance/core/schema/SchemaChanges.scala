package io.sparklance.core.schema

import io.sparklance.core.{InvalidArgumentException, UnsupportedFeatureException}
import io.sparklance.proto.FileProtos

/**
 * Schema evolution as edits of the flat, depth-first field list of a manifest (shared/spec/schema-format.md):
 * adding, dropping and renaming columns and making them nullable. Data files are never touched: a dropped field's
 * values stay in its files but are no longer read, an added field reads as null in fragments without it. Field ids
 * are never reused: new ids start past every id the schema or any data file of the version ever used.
 */
final class SchemaChanges private (source: String, private var fields: IndexedSeq[FileProtos.Field], idsInFiles: Seq[Int]) {

  private var nextId: Int = (fields.map(_.getId) ++ idsInFiles :+ -1).max + 1

  def result: Seq[FileProtos.Field] = fields

  /** The fields (with their ids) of the columns added so far, as a schema of their own. */
  def addedSince(before: Seq[FileProtos.Field]): LanceSchema = {
    val old = before.map(_.getId).toSet
    LanceSchema.fromProtos(source, fields.filterNot(f => old.contains(f.getId)), Map.empty)
  }

  private def schema: LanceSchema = LanceSchema.fromProtos(source, fields, Map.empty)

  /** The field at a dotted path (top-level name, then child names), or an error listing what exists. */
  private def field(path: Seq[String]): LanceField = {
    val top = schema.field(path.head).getOrElse(throw new InvalidArgumentException(
      s"No column '${path.head}': the table's columns are ${schema.fields.map(_.name).mkString(", ")}."))
    path.tail.foldLeft(top) { (f, name) =>
      val children = f.logicalType match {
        case _: LogicalType.List | LogicalType.Map => f.children.flatMap(c => c +: c.children)
        case _ => f.children
      }
      children.find(_.name == name).getOrElse(throw new InvalidArgumentException(
        s"Column '${path.mkString(".")}' does not exist: '${f.name}' has ${children.map(_.name).mkString(", ")}."))
    }
  }

  /**
   * Adds a column (with its children, given as a schema of one top-level field whose ids this assigns) under the
   * struct at `parent` (empty for a top-level column). New columns are nullable: rows already written have none.
   */
  def add(parent: Seq[String], column: LanceSchema): this.type = {
    val f = column.fields match {
      case Seq(one) => one
      case other => throw new IllegalArgumentException(s"one column at a time, not ${other.size}")
    }
    if (!f.nullable) {
      throw new UnsupportedFeatureException(s"Cannot add column '${(parent :+ f.name).mkString(".")}' as NOT NULL: " +
        "the rows already in the table have no value for it. Add it as nullable.")
    }
    val parentField = if (parent.isEmpty) None else Some(field(parent))
    parentField.foreach { p =>
      if (p.logicalType != LogicalType.Struct) {
        throw new UnsupportedFeatureException(s"Cannot add a field to '${parent.mkString(".")}': it is a ${p.logicalType}, " +
          "not a struct.")
      }
    }
    val siblings = parentField.map(_.children).getOrElse(schema.fields)
    if (siblings.exists(_.name == f.name)) {
      throw new InvalidArgumentException(s"Column '${(parent :+ f.name).mkString(".")}' already exists.")
    }
    val ids = f.flatten.map(_.id).zipWithIndex.map { case (old, i) => old -> (nextId + i) }.toMap
    val added = f.flatten.map { c =>
      c.proto.toBuilder.setId(ids(c.id)).setParentId(if (c.id == f.id) parentField.map(_.id).getOrElse(-1) else ids(c.parentId)).build()
    }
    nextId += added.size
    // Depth first: the new subtree goes after the parent's last descendant (or at the end for a top-level column).
    val at = parentField.map(p => fields.indexWhere(_.getId == p.flatten.last.id) + 1).getOrElse(fields.size)
    fields = (fields.take(at) ++ added) ++ fields.drop(at)
    this
  }

  /** Drops a column and everything below it. The last column of the table cannot be dropped. */
  def drop(path: Seq[String]): this.type = {
    val f = field(path)
    val gone = f.flatten.map(_.id).toSet
    if (path.size == 1 && schema.fields.size == 1) {
      throw new UnsupportedFeatureException(s"Cannot drop '${path.head}': it is the table's only column.")
    }
    fields = fields.filterNot(p => gone.contains(p.getId))
    this
  }

  def rename(path: Seq[String], newName: String): this.type = {
    val f = field(path)
    if (newName.isEmpty || newName.contains('.')) {
      throw new InvalidArgumentException(s"Cannot rename '${path.mkString(".")}' to '$newName': names are not empty and have no '.'.")
    }
    val siblings = if (path.size == 1) schema.fields else field(path.init).children
    if (siblings.exists(s => s.name == newName && s.id != f.id)) {
      throw new InvalidArgumentException(s"Cannot rename '${path.mkString(".")}' to '$newName': that name is taken.")
    }
    fields = fields.map(p => if (p.getId == f.id) p.toBuilder.setName(newName).build() else p)
    this
  }

  /** Makes a column nullable (ALTER COLUMN ... DROP NOT NULL). Making a column NOT NULL is refused. */
  def setNullable(path: Seq[String], nullable: Boolean): this.type = {
    val f = field(path)
    if (!nullable && f.nullable) {
      throw new UnsupportedFeatureException(s"Cannot make '${path.mkString(".")}' NOT NULL: rows already written may " +
        "hold nulls, and checking them is not supported.")
    }
    fields = fields.map(p => if (p.getId == f.id) p.toBuilder.setNullable(nullable).build() else p)
    this
  }
}

object SchemaChanges {
  /**
   * Edits of the field list `fields` of a version (from `source`, for errors) whose data files hold the field ids
   * `idsInFiles`: new ids start past all of them.
   */
  def of(source: String, fields: Seq[FileProtos.Field], idsInFiles: Seq[Int]): SchemaChanges =
    new SchemaChanges(source, fields.toIndexedSeq, idsInFiles)
}
