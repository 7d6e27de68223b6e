package io.sparklance.core.table

import java.nio.charset.StandardCharsets.UTF_8

import scala.jdk.CollectionConverters._
import scala.util.Random

import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector.{BigIntVector, FieldVector, Float8Vector, VarCharVector, VectorSchemaRoot}
import org.apache.arrow.vector.types.FloatingPointPrecision
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, Schema}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.{CommitStateUnknownException, FileVersion, MetadataColumn}
import io.sparklance.core.commit.CommitHandler
import io.sparklance.core.index.IndexKind
import io.sparklance.core.schema.{ArrowSchemas, LanceSchema}
import io.sparklance.core.storage.InMemoryStorage

/**
 * The front door end to end over an in-memory store, against a model: tables built from seeded random appends and
 * deletes, then scanned with random predicates, fragment selections, limits and task sizes. Every row that matches
 * a predicate must come back; every row that comes back must be a live row of the version.
 */
class TableSuite extends AnyFunSuite with BeforeAndAfterAll {
  import TableSuite.Row

  private val allocator = new RootAllocator()
  override def afterAll(): Unit = allocator.close()

  private val schema: LanceSchema = ArrowSchemas.fromArrow(new Schema(java.util.List.of(
    Field.nullable("id", new ArrowType.Int(64, true)),
    Field.nullable("x", new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE)),
    Field.nullable("s", ArrowType.Utf8.INSTANCE))))

  // A NaN with the sign bit set sorts first in IEEE total order (index keys), last in SQL's.
  private val doubles = Seq(0.0, -0.0, 1.5, -1.5, Double.NaN, Double.PositiveInfinity, Double.NegativeInfinity, 7.0,
    java.lang.Double.longBitsToDouble(0xfff8000000000001L))
  private val strings = Seq("", "a", "b", "ab", "é", "z", "\u00ff", "日本")

  private def randomRow(r: Random): Row = Row.of(
    Option.when(r.nextInt(8) != 0)(r.nextInt(40).toLong - 20),
    Option.when(r.nextInt(6) != 0)(doubles(r.nextInt(doubles.size))),
    Option.when(r.nextInt(7) != 0)(strings(r.nextInt(strings.size))))

  private def batch(rows: Seq[Row]): VectorSchemaRoot = {
    val id = new BigIntVector("id", allocator)
    val x = new Float8Vector("x", allocator)
    val s = new VarCharVector("s", allocator)
    id.allocateNew(rows.size); x.allocateNew(rows.size); s.allocateNew()
    rows.zipWithIndex.foreach { case (row, i) =>
      row.id.fold(id.setNull(i))(id.set(i, _))
      row.x.fold(x.setNull(i))(x.set(i, _))
      row.s.fold(s.setNull(i))(v => s.setSafe(i, v.getBytes(UTF_8)))
    }
    Seq[FieldVector](id, x, s).foreach(_.setValueCount(rows.size))
    new VectorSchemaRoot(java.util.List.of[FieldVector](id, x, s))
  }

  private def write(table: Table, rows: Seq[Row], maxRowsPerFile: Long): WrittenFiles = {
    val w = table.newDataWriter(schema, FileVersion.V2_2, maxRowsPerFile, 1L << 20)
    try {
      rows.grouped(37).foreach { g => val b = batch(g); try w.write(b) finally b.close() }
      w.finish()
    } finally w.close()
  }

  /** Appends `n` random rows in files of 20 to 170 rows (the first write creates the table). */
  private def appendRandom(table: Table, r: Random, n: Int): Unit = {
    val written = write(table, Seq.fill(n)(randomRow(r)), maxRowsPerFile = 20 + r.nextInt(150))
    if (table.latestIfExists().isEmpty) table.newOverwrite(0, schema, FileVersion.V2_2, Map.empty).commit(Seq(written))
    else table.newAppend(table.latestVersion()).commit(Seq(written))
  }

  /**
   * Deletes up to a third of the live rows at random, plus one draw in two (with `wholeFragments`) every row of one
   * fragment instead, which drops it.
   */
  private def deleteRandom(table: Table, r: Random, wholeFragments: Boolean): Unit = {
    val live = read(table, table.latest().newScan(), 1L << 20).map(_._1)
    if (live.nonEmpty) {
      val doomed = new DeletedRows
      val picked = if (wholeFragments && r.nextBoolean()) live.filter(_ >>> 32 == live(r.nextInt(live.size)) >>> 32)
        else r.shuffle(live).take(1 + r.nextInt(live.size / 3 + 1))
      picked.foreach(doomed.add)
      table.newDelete(table.latest()).delete(DeletedRows.fromBytes(doomed.toBytes)).commit()
    }
  }

  /**
   * The rows of `scan` with their addresses, read in tasks of at most `rowsPerTask` rows when it is even, else in
   * tasks sized by bytes from it (so the seeded reads exercise both ways of planning).
   */
  private def read(table: Table, scan: Scan, rowsPerTask: Long): Seq[(Long, Row)] = {
    val withAddress = scan.withMetadataColumns(Seq(MetadataColumn.RowAddress))
    val tasks = if (rowsPerTask % 2 == 0) withAddress.planTasks(rowsPerTask)
      else withAddress.planTasks(Scan.TaskSizing(rowsPerTask * 40, rowsPerTask * 4, 1 + (rowsPerTask % 5).toInt, 16))
    ScanRows(table, tasks, allocator) { (root, i) =>
      val id = root.getVector("id").asInstanceOf[BigIntVector]
      val x = root.getVector("x").asInstanceOf[Float8Vector]
      val s = root.getVector("s").asInstanceOf[VarCharVector]
      Row.of(Option.when(!id.isNull(i))(id.get(i)), Option.when(!x.isNull(i))(x.get(i)),
        Option.when(!s.isNull(i))(new String(s.get(i), UTF_8)))
    }
  }

  // The model's predicate semantics (Spark's): nulls match nothing but IS NULL; NaN equals NaN and is above all.
  private def cmpDouble(a: Double, b: Double): Int =
    if (a.isNaN && b.isNaN) 0 else if (a.isNaN) 1 else if (b.isNaN) -1 else if (a == b) 0 else java.lang.Double.compare(a, b)

  private def value(row: Row, column: String): Option[Any] = column match {
    case "id" => row.id
    case "x" => row.x
    case "s" => row.s
  }

  private def compare(v: Any, literal: Any): Int = (v, literal) match {
    case (a: Long, b: java.lang.Long) => java.lang.Long.compare(a, b)
    case (a: Long, b: java.lang.Double) => cmpDouble(a.toDouble, b)
    case (a: Double, b: java.lang.Number) => cmpDouble(a, b.doubleValue())
    case (a: String, b: String) => Integer.signum(java.util.Arrays.compareUnsigned(a.getBytes(UTF_8), b.getBytes(UTF_8)))
    case other => fail(s"no comparison for $other")
  }

  private def matches(p: Predicate, row: Row): Boolean =
    PredicateModel.matches(p, value(row, _), (_, v, literal) => compare(v, literal))

  private def randomPredicate(r: Random, depth: Int = 0): Predicate = {
    val ops = Seq(Predicate.Op.Eq, Predicate.Op.Lt, Predicate.Op.Le, Predicate.Op.Gt, Predicate.Op.Ge)
    def literal(c: String): Any = c match {
      case "id" => if (r.nextBoolean()) java.lang.Long.valueOf(r.nextInt(40) - 20L) else java.lang.Double.valueOf(r.nextInt(40) - 20.5)
      case "x" => java.lang.Double.valueOf(doubles(r.nextInt(doubles.size)))
      case "s" => strings(r.nextInt(strings.size))
    }
    val c = Seq("id", "x", "s")(r.nextInt(3))
    r.nextInt(if (depth < 2) 7 else 4) match {
      case 0 | 1 => Predicate.Compare(c, ops(r.nextInt(ops.size)), literal(c))
      case 2 => if (r.nextBoolean()) Predicate.IsNull(c) else Predicate.IsNotNull(c)
      case 3 => Predicate.In(c, Seq.fill(1 + r.nextInt(3))(literal(c)))
      case 4 | 5 => Predicate.And(randomPredicate(r, depth + 1), randomPredicate(r, depth + 1))
      case _ => Predicate.Or(randomPredicate(r, depth + 1), randomPredicate(r, depth + 1))
    }
  }

  private def newTable(): (InMemoryStorage, Table) = {
    val storage = new InMemoryStorage
    (storage, Table.open(storage, CommitHandler.forStorage(storage), "mem://t.lance"))
  }

  test("seeded tables of appends and deletes read back through scans, predicates and fragment selections") {
    (1 to 12).foreach { seed =>
      val r = new Random(seed)
      val (_, table) = newTable()
      var model = Map.empty[Long, Row] // row address -> row
      (0 until 1 + r.nextInt(4)).foreach { k =>
        val rows = Seq.fill(1 + r.nextInt(300))(randomRow(r))
        val written = write(table, rows, maxRowsPerFile = 20 + r.nextInt(200))
        if (k == 0) table.newOverwrite(0, schema, FileVersion.V2_2, Map.empty).commit(Seq(written))
        else table.newAppend(table.latestVersion()).commit(Seq(written))
        val before = model
        model = read(table, table.latest().newScan(), 1L << 20).toMap
        assert(model.size == before.size + rows.size && before.forall { case (a, row) => model.get(a).contains(row) },
          s"seed $seed: an append changed rows already there")
        assert(model.values.toSeq.diff(before.values.toSeq).map(_.toString).sorted == rows.map(_.toString).sorted,
          s"seed $seed: the appended rows read back differently")
        if (r.nextBoolean() && model.nonEmpty) {
          val doomed = new DeletedRows
          val addresses = r.shuffle(model.keys.toSeq).take(r.nextInt(model.size) + 1)
          addresses.foreach(doomed.add)
          table.newDelete(table.latest()).delete(DeletedRows.fromBytes(doomed.toBytes)).commit()
          model = model -- addresses
        }
      }
      val snapshot = table.latest()
      assert(read(table, snapshot.newScan(), 1 + r.nextInt(500)).toMap == model, s"seed $seed: full scan")
      assert(snapshot.newScan().countRows() == model.size)
      (0 until 20).foreach { _ =>
        val p = randomPredicate(r)
        val scan = snapshot.newScan().withFilters(Seq(p)).withBatchRows(1 + r.nextInt(64))
        assert(Scan.filterUse(snapshot.schema, p) == Scan.FilterUse.SkipsBatches, p)
        val got = read(table, scan, 1 + r.nextInt(300))
        val gotMap = got.toMap
        assert(got.size == gotMap.size, s"seed $seed, $p: a row came back twice")
        got.foreach { case (a, row) => assert(model.get(a).contains(row), s"seed $seed, $p: $a is not a live row") }
        val want = model.filter { case (_, row) => matches(p, row) }
        assert(want.keySet.subsetOf(gotMap.keySet), s"seed $seed, $p: rows lost ${want.keySet -- gotMap.keySet}")
      }
      val ids = snapshot.fragments.map(_.id)
      if (ids.nonEmpty) {
        val pick = ids(r.nextInt(ids.size))
        val byFragment = Predicate.Compare(MetadataColumn.FragmentId.name, Predicate.Op.Ge, java.lang.Long.valueOf(pick))
        val scan = snapshot.newScan().withFilters(Seq(byFragment))
        assert(scan.fragmentIds == ids.filter(_ >= pick))
        assert(read(table, scan, 100).toMap == model.filter { case (a, _) => (a >>> 32) >= pick })
        assert(scan.countRows() == model.count { case (a, _) => (a >>> 32) >= pick })
      }
      val limit = 1 + r.nextInt(50)
      assert(read(table, snapshot.newScan().withLimit(limit).withBatchRows(16), 1L << 20).size >= math.min(limit, model.size))
    }
  }

  test("tasks sized by bytes: seeded tables are cut into equal tasks of at most the bytes asked (those of the columns read), a task per core at least where the caller's size fills them, every live row read once") {
    (1 to 16).foreach { seed =>
      val r = new Random(seed * 7)
      val (_, table) = newTable()
      (0 until 1 + r.nextInt(5)).foreach(_ => appendRandom(table, r, 1 + r.nextInt(400)))
      if (r.nextBoolean()) deleteRandom(table, r, wholeFragments = true)
      val snapshot = table.latest()
      val model = read(table, snapshot.newScan(), 1L << 20).toMap
      val projection = r.shuffle(schema.fields).take(1 + r.nextInt(schema.fields.size))
      val scan = snapshot.newScan().withProjection(projection).withMetadataColumns(Seq(MetadataColumn.RowAddress))
      // The columns' share of the files, and 8 bytes per row for the row address.
      val share = scan.columnShare.getOrElse(1.0)
      assert(scan.columnShare.isDefined == snapshot.fragments.nonEmpty, s"seed $seed")
      val fileBytes = snapshot.fragments.map(f => f.id -> (share * f.files.flatMap(_.fileSizeBytes).sum / f.physicalRows + 8)).toMap
      val total = snapshot.fragments.map(f => fileBytes(f.id) * f.physicalRows).sum
      assert(snapshot.fragments.forall(_.files.forall(_.fileSizeBytes.exists(_ > 0))), s"seed $seed: file sizes not recorded")
      // The caller's estimate of the share is not used where the files tell it.
      // Half the tables are judged by a size of the caller's (Spark's scale) for spreading over `parallelism` tasks.
      val spreadBytes = if (r.nextBoolean()) 0.0 else r.nextInt(40000).toDouble
      val sizing = Scan.TaskSizing(maxBytes = 1 + r.nextInt(20000), minBytes = r.nextInt(3000), 1 + r.nextInt(4), 16, 0.01, spreadBytes)
      val tasks = scan.planTasks(sizing)
      val target = math.min(sizing.maxBytes.toDouble, math.max(sizing.minBytes.toDouble, total / sizing.parallelism))
      val spread = math.min(sizing.parallelism, math.ceil(spreadBytes / math.max(1, sizing.minBytes)).toInt)
      val count = math.max(spread, math.max(1, math.ceil(total / target).toInt))
      val rowBytes = if (fileBytes.isEmpty) 0.0 else fileBytes.values.max
      val taskBytes = tasks.map(_.slices.map(s => fileBytes(s.parsed.id) * s.rows).sum)
      val context = s"seed $seed, $sizing, $total bytes, tasks of ${taskBytes.map(_.toLong).mkString(", ")}"
      // Cut at whole rows into `count` equal parts: a task is off by less than a row at each end; none is empty,
      // and all `count` are there when a part holds more than two rows.
      taskBytes.foreach(b => assert(b <= total / count + 2 * rowBytes + 1e-6 && b <= target + 2 * rowBytes + 1e-6, context))
      assert(tasks.size <= count, context)
      if (total / count > 2 * rowBytes + 1e-6) assert(tasks.size == count, context)
      if (total >= 2 * sizing.minBytes + 4 * rowBytes && sizing.parallelism > 1) assert(tasks.size >= 2, context)
      assert(tasks.forall(_.slices.nonEmpty), context)
      val got = ScanRows(table, tasks, allocator)((_, _) => ())
      assert(got.map(_._1).sorted == model.keys.toSeq.sorted, context)
    }
  }

  test("a scan's share of the data files is the bytes of its columns' pages: sampled from 8 fragments, additive over columns, the caller's estimate for files that do not tell") {
    (1 to 8).foreach { seed =>
      val r = new Random(seed * 11)
      val (_, table) = newTable()
      (0 until 1 + r.nextInt(4)).foreach(_ => appendRandom(table, r, 200 + r.nextInt(1500)))
      val snapshot = table.latest()
      def share(names: String*) = snapshot.newScan().withProjection(names.map(n => schema.field(n).get)).columnShare.get
      val all = share("id", "x", "s")
      assert(math.abs(share("id") + share("x") + share("s") - all) < 1e-12, s"seed $seed")
      assert(share() == 0.0 && all > 0 && all < 1, s"seed $seed: $all")
      // The bytes of the sampled fragments' pages, read from their files here.
      val kept = snapshot.fragments
      val sample = if (kept.size <= Scan.ColumnSizeSample) kept
        else (0 until Scan.ColumnSizeSample).map(i => kept(i * kept.size / Scan.ColumnSizeSample))
      val (pages, files) = sample.flatMap(_.files).map { file =>
        val reader = io.sparklance.core.file.LanceFileReader.open(snapshot.storage, snapshot.dataFilePath(file))
        try {
          val m = reader.metadata
          val sizes = m.columns.map(c => c.getPagesList.asScala.map(_.getBufferSizesList.asScala.map(_.longValue).sum).sum +
            c.getBufferSizesList.asScala.map(_.longValue).sum)
          (sizes.sum, m.fileSize)
        } finally reader.close()
      }.unzip
      assert(kept.size <= Scan.ColumnSizeSample || sample.size == Scan.ColumnSizeSample, s"seed $seed")
      assert(math.abs(all - pages.sum.toDouble / files.sum) < 1e-12, s"seed $seed: $all of ${files.sum} bytes")
      // Estimated bytes: the share of the kept fragments' files, 8 bytes per row for a metadata column.
      val scan = snapshot.newScan().withProjection(Seq(schema.field("s").get)).withMetadataColumns(Seq(MetadataColumn.RowAddress))
      val (rows, bytes) = scan.estimate(16, 0.5)
      assert(rows == snapshot.numRows)
      val want = kept.map(f => share("s") * f.files.flatMap(_.fileSizeBytes).sum + 8.0 * f.numRows).sum
      assert(math.abs(bytes - want) <= kept.size, s"seed $seed: $bytes, $want")
    }
  }

  test("seeded tables with B-tree, bitmap, zone map and bloom filter indexes on integers, doubles (NaN, -0.0) and strings: indexed scans return every matching row, through appends, deletes and compaction") {
    (1 to 24).foreach { seed =>
      val r = new Random(seed * 31)
      val (_, table) = newTable()
      def append(n: Int): Unit = appendRandom(table, r, n)
      def deleteSome(): Unit = deleteRandom(table, r, wholeFragments = false)
      append(50 + r.nextInt(400))
      if (r.nextBoolean()) deleteSome()
      val kinds = Seq("btree", "bitmap", "zonemap", "bloomfilter")
      Seq("id", "x", "s").foreach { c =>
        val kind = kinds(r.nextInt(kinds.size))
        val options = kind match {
          case "btree" => Map("zone_size" -> (1 + r.nextInt(40)).toString)
          case "zonemap" => Map("rows_per_zone" -> (1 + r.nextInt(40)).toString)
          case "bloomfilter" => Map("number_of_items" -> (1 + r.nextInt(40)).toString, "probability" -> "0.01")
          case _ => Map.empty[String, String]
        }
        table.newIndex(table.latest(), s"${c}_idx", c, kind, options, replace = false).runAndCommit()
      }
      if (r.nextBoolean()) append(1 + r.nextInt(100))
      if (r.nextBoolean()) deleteSome()
      if (r.nextInt(3) == 0) {
        // A compaction remaps B-trees and bitmaps: no live row they covered becomes unindexed.
        def unindexed(s: Snapshot, name: String) = s.fragments.filterNot(f => s.indexes.exists(i => i.name == name &&
          i.covers(f.id))).map(f => f.physicalRows - f.deletionFile.map(_.numDeletedRows).getOrElse(0L)).sum
        val before = table.latest()
        table.compact(50 + r.nextInt(300))
        val after = table.latest()
        before.indexes.filter(i => i.kind == IndexKind.BTree || i.kind == IndexKind.Bitmap).foreach { i =>
          assert(unindexed(after, i.name) <= unindexed(before, i.name), s"seed $seed: $i")
          if (after.version > before.version && before.fragments.exists(f => i.covers(f.id) &&
              !after.fragments.exists(_.id == f.id))) {
            assert(!after.indexes.exists(_.uuid == i.uuid), s"seed $seed: $i was not remapped")
          }
        }
      }
      val snapshot = table.latest()
      assert(snapshot.indexes.map(_.name).sorted == Seq("id_idx", "s_idx", "x_idx"), s"seed $seed")
      val model = read(table, snapshot.newScan(), 1L << 20).toMap
      var used = 0
      (0 until 30).foreach { _ =>
        val c = Seq("id", "x", "s")(r.nextInt(3))
        def literal(): Any = c match {
          case "id" => java.lang.Long.valueOf(r.nextInt(40) - 20L)
          case "x" => if (r.nextInt(5) == 0) java.lang.Long.valueOf(r.nextInt(5) - 2L) else java.lang.Double.valueOf(doubles(r.nextInt(doubles.size)))
          case _ => strings(r.nextInt(strings.size))
        }
        val ops = Seq(Predicate.Op.Eq, Predicate.Op.Lt, Predicate.Op.Le, Predicate.Op.Gt, Predicate.Op.Ge)
        val conjuncts: Seq[Predicate] = Seq.fill(1 + r.nextInt(2))(r.nextInt(4) match {
          case 0 | 1 => Predicate.Compare(c, ops(r.nextInt(ops.size)), literal())
          case 2 => Predicate.IsNull(c)
          case _ => Predicate.In(c, Seq.fill(1 + r.nextInt(3))(literal()))
        })
        val p = conjuncts.reduce((a, b) => Predicate.And(a, b))
        val scan = snapshot.newScan().withFilters(Seq(p)).withBatchRows(1 + r.nextInt(64))
        if (!scan.indexUse.isEmpty) used += 1
        val got = read(table, scan, 1 + r.nextInt(300))
        got.foreach { case (a, row) => assert(model.get(a).contains(row), s"seed $seed, $p: $a is not a live row") }
        assert(got.size == got.toMap.size, s"seed $seed, $p: a row came back twice")
        val want = model.filter { case (_, row) => matches(p, row) }.keySet
        assert(want.subsetOf(got.map(_._1).toSet), s"seed $seed, $p (${scan.indexUse}): rows lost ${want -- got.map(_._1)}")
      }
      // A compaction takes the fragments it rewrote out of the indexes; one that rewrote all leaves nothing indexed.
      val covering = snapshot.indexes.exists(i => snapshot.fragments.exists(f => i.covers(f.id)))
      assert(used > 0 || !covering, s"seed $seed: no scan used an index")
    }
  }

  test("OPTIMIZE INDEX merges each kind's old index with the fragments it does not cover, reading only theirs: seeded appends, deletes and compactions") {
    (1 to 16).foreach { seed =>
      val r = new Random(seed * 17)
      val (storage, table) = newTable()
      def append(n: Int): Unit = appendRandom(table, r, n)
      def deleteSome(): Unit = deleteRandom(table, r, wholeFragments = true)
      append(50 + r.nextInt(300))
      val kinds = Seq("btree", "bitmap", "zonemap", "bloomfilter")
      val kindOf = Seq("id", "x", "s").map { c =>
        val kind = kinds(r.nextInt(kinds.size))
        val options = kind match {
          case "btree" => Map("zone_size" -> (1 + r.nextInt(40)).toString)
          case "zonemap" => Map("rows_per_zone" -> (1 + r.nextInt(40)).toString)
          case "bloomfilter" => Map("number_of_items" -> (1 + r.nextInt(40)).toString, "probability" -> "0.01")
          case _ => Map.empty[String, String]
        }
        table.newIndex(table.latest(), s"${c}_idx", c, kind, options, replace = false).runAndCommit()
        c -> kind
      }.toMap
      (0 until 3).foreach { round =>
        (0 until 1 + r.nextInt(3)).foreach { _ =>
          r.nextInt(4) match {
            case 0 | 1 => append(1 + r.nextInt(150))
            case 2 => deleteSome()
            case _ => table.compact(50 + r.nextInt(300))
          }
        }
        Seq("id", "x", "s").foreach { c =>
          val before = table.latest()
          val old = before.indexes.filter(_.name == s"${c}_idx")
          val covered = old.flatMap(i => before.fragments.filter(f => i.covers(f.id)).map(_.id)).toSet
          val update = table.newIndexUpdate(before, s"${c}_idx")
          assert(update.merges, s"seed $seed: ${kindOf(c)} index on $c is rebuilt, not merged")
          val fresh = before.fragments.filterNot(f => covered(f.id))
          assert(update.fragments.map(_.id) == fresh.map(_.id), s"seed $seed, round $round: the update reads other fragments")
          storage.opened.clear()
          val made = update.runAndCommit()
          val dataRead = storage.opened.asScala.filter(_.contains("/data/")).toSet
          assert(dataRead == fresh.flatMap(_.files.map(f => before.dataFilePath(f))).toSet,
            s"seed $seed, round $round: the update read data files $dataRead")
          val after = table.latest()
          val now = after.indexes.filter(_.name == s"${c}_idx")
          assert(now.size == 1 && after.fragments.forall(f => now.head.covers(f.id)), s"seed $seed: $now")
          assert(now.head.fragmentBitmap.getCardinality == after.fragments.size, s"seed $seed: gone fragments still covered")
          if (update.upToDate) assert(after.version == before.version && made.uuid == old.head.uuid)
          else assert(after.version == before.version + 1 && !old.exists(_.uuid == made.uuid))
        }
        // Every scan through the merged indexes returns every matching row; B-trees and bitmaps select exactly
        // the matching live rows of the fragments they cover.
        val snapshot = table.latest()
        val model = read(table, snapshot.newScan(), 1L << 20).toMap
        (0 until 20).foreach { _ =>
          val c = Seq("id", "x", "s")(r.nextInt(3))
          val literal: Any = c match {
            case "id" => java.lang.Long.valueOf(r.nextInt(40) - 20L)
            case "x" => java.lang.Double.valueOf(doubles(r.nextInt(doubles.size)))
            case _ => strings(r.nextInt(strings.size))
          }
          val p: Predicate = r.nextInt(3) match {
            case 0 => Predicate.IsNull(c)
            case 1 => Predicate.In(c, Seq(literal))
            case _ => Predicate.Compare(c, Seq(Predicate.Op.Eq, Predicate.Op.Lt, Predicate.Op.Ge)(r.nextInt(3)), literal)
          }
          val scan = snapshot.newScan().withFilters(Seq(p))
          val got = read(table, scan, 1 + r.nextInt(300)).map(_._1).toSet
          val want = model.filter { case (_, row) => matches(p, row) }.keySet
          assert(want.subsetOf(got), s"seed $seed, $p (${scan.indexUse}): rows lost ${want -- got}")
          if (Set("btree", "bitmap")(kindOf(c)) && snapshot.fragments.nonEmpty) {
            assert(!scan.indexUse.isEmpty, s"seed $seed, $p: no index used")
            snapshot.fragments.foreach { f =>
              val selected = scan.indexUse.rows(f.id).getOrElse(fail(s"seed $seed: fragment ${f.id} not covered"))
              val live = model.keySet.filter(_ >>> 32 == f.id)
              val found = live.filter(a => selected.contains((a & 0xFFFFFFFFL).toInt))
              assert(found == want.filter(_ >>> 32 == f.id), s"seed $seed, $p: fragment ${f.id} selects $found")
            }
          }
        }
      }
    }
  }

  test("float keys: a B-tree page or zone whose first keys are nulls then sign-bit NaNs is searched as SQL orders NaN (last)") {
    val negativeNaN = java.lang.Double.longBitsToDouble(0xfff8000000000001L)
    // Sorted: null, -NaN | -inf, -0.0, 0.0, 1.5 | 2.0, 7.0, NaN, NaN: the first page's max is -NaN; with zone_size 3
    // a page is [null, -NaN, -inf], whose min is null and max a number.
    val xs = Seq(Some(1.5), None, Some(negativeNaN), Some(Double.NegativeInfinity), Some(-0.0), Some(0.0), Some(2.0),
      Some(7.0), Some(Double.NaN), Some(Double.NaN))
    Seq(("btree", Map("zone_size" -> "3")), ("btree", Map("zone_size" -> "4")), ("bitmap", Map.empty[String, String]),
        ("zonemap", Map("rows_per_zone" -> "2")), ("bloomfilter", Map("number_of_items" -> "2"))).foreach { case (kind, options) =>
      val (_, table) = newTable()
      val written = write(table, xs.zipWithIndex.map { case (x, i) => Row.of(Some(i.toLong), x, None) }, maxRowsPerFile = 100)
      table.newOverwrite(0, schema, FileVersion.V2_2, Map.empty).commit(Seq(written))
      table.newIndex(table.latest(), "x_idx", "x", kind, options, replace = false).runAndCommit()
      val snapshot = table.latest()
      val model = read(table, snapshot.newScan(), 1L << 20).toMap
      Seq(Predicate.Compare("x", Predicate.Op.Eq, java.lang.Double.valueOf(Double.NaN)),
        Predicate.Compare("x", Predicate.Op.Gt, java.lang.Double.valueOf(1.0)),
        Predicate.Compare("x", Predicate.Op.Ge, java.lang.Double.valueOf(Double.PositiveInfinity)),
        Predicate.Compare("x", Predicate.Op.Lt, java.lang.Double.valueOf(0.0)),
        Predicate.Compare("x", Predicate.Op.Eq, java.lang.Double.valueOf(-0.0)),
        Predicate.In("x", Seq(java.lang.Double.valueOf(0.0), java.lang.Double.valueOf(7.0))),
        Predicate.IsNull("x")).foreach { p =>
        val scan = snapshot.newScan().withFilters(Seq(p))
        val got = read(table, scan, 1L << 20).map(_._1).toSet
        val want = model.filter { case (_, row) => matches(p, row) }.keySet
        assert(want.subsetOf(got), s"$kind $options, $p (${scan.indexUse}): rows lost ${want -- got}")
        val bloomAnswers = p match {
          case Predicate.IsNull(_) | Predicate.In(_, _) => true
          case Predicate.Compare(_, Predicate.Op.Eq, v: java.lang.Double) => !v.isNaN
          case _ => false
        }
        assert(!scan.indexUse.isEmpty || (kind == "bloomfilter" && !bloomAnswers), s"$kind, $p: no index used")
      }
    }
  }

  test("a build's tasks in this process hold their runs until its commit or abort, and then no longer find the build") {
    Seq(true, false).foreach { commits =>
      val (storage, table) = newTable()
      val written = write(table, (0 until 300).map(i => Row.of(Some(i.toLong), Some(i * 0.5), None)), maxRowsPerFile = 100)
      table.newOverwrite(0, schema, FileVersion.V2_2, Map.empty).commit(Seq(written))
      val before = io.sparklance.core.index.HeldRuns.heldBytes
      val build = table.newIndex(table.latest(), "x_idx", "x", "btree", Map.empty, replace = false)
      val tasks = build.tasksInThisProcess
      val runs = tasks.map(IndexBuild.runInThisProcess)
      assert(tasks.size == 3 && runs.forall(r => !storage.exists(r)), s"runs held in memory: $runs")
      assert(io.sparklance.core.index.HeldRuns.heldBytes > before)
      if (commits) build.commit(runs) else build.abort()
      assert(io.sparklance.core.index.HeldRuns.heldBytes == before, s"commit $commits freed the held runs")
      val e = intercept[IllegalStateException](IndexBuild.runInThisProcess(tasks.head))
      assert(e.getMessage.startsWith(s"Index build ${build.uuid} is not running in this process"))
      assert(table.latest().indexes.exists(_.name == "x_idx") == commits)
    }
  }

  test("index options, names, columns and kinds are checked before anything is written; DROP INDEX removes every segment") {
    val (storage, table) = newTable()
    table.newOverwrite(0, schema, FileVersion.V2_2, Map.empty).commit(Seq(write(table, Seq.fill(30)(randomRow(new Random(1))), 10)))
    def error(f: => Any): String = intercept[io.sparklance.core.LanceException](f).getMessage
    val s = table.latest()
    assert(error(table.newIndex(s, "i", "nope", "btree", Map.empty, replace = false)).contains("has no column 'nope'"))
    assert(error(table.newIndex(s, "i", "id", "btree", Map("zone_sise" -> "3"), replace = false))
      .contains("Unknown option zone_sise for a BTREE index; it takes: batch_size, zone_size."))
    assert(error(table.newIndex(s, "i", "id", "btree", Map("zone_size" -> "0"), replace = false))
      .contains("zone_size must be a positive number"))
    assert(error(table.newIndex(s, "i", "id", "inverted", Map.empty, replace = false))
      .contains("a full-text (INVERTED) index is built by Table.newFullTextIndex"))
    assert(error(table.newIndex(s, "i", "id", "minhashlsh", Map.empty, replace = false)).contains("does not build " +
      "MINHASHLSH indexes; it builds BTREE, BITMAP, ZONEMAP, BLOOMFILTER, LABEL_LIST, NGRAM, RTREE, full-text " +
      "(INVERTED) indexes and the vector indexes IVF_FLAT, IVF_PQ, IVF_SQ, IVF_HNSW_FLAT, IVF_HNSW_PQ, IVF_HNSW_SQ."))
    assert(error(table.newIndex(s, "i", "id", "rtree", Map.empty, replace = false)).contains("Cannot create an RTREE " +
      "index on column 'id' of mem://t.lance: its type Int(64, true) is not a geometry sparklance indexes"))
    table.newIndex(s, "i", "id", "BTREE", Map.empty, replace = false).runAndCommit()
    assert(error(table.newIndex(table.latest(), "i", "s", "bitmap", Map.empty, replace = false)).contains("already has an index named 'i'"))
    val replaced = table.newIndex(table.latest(), "i", "s", "bitmap", Map.empty, replace = true).runAndCommit()
    assert(table.latest().indexes.map(i => (i.name, i.uuid)) == Seq(("i", replaced.uuid)))
    assert(!storage.list("mem://t.lance/_indices/" + replaced.uuid).exists(_.path.contains("run-")), "run files left behind")
    table.dropIndex("i")
    assert(table.latest().indexes.isEmpty)
    assert(error(table.dropIndex("i")).contains("has no index named 'i'"))
  }

  test("predicates on nested, binary or unknown columns are not used; _fragid with a non-number is not either") {
    val use = Scan.filterUse(schema, _: Predicate)
    assert(use(Predicate.Compare("nope", Predicate.Op.Eq, java.lang.Long.valueOf(1))) == Scan.FilterUse.Unused)
    assert(use(Predicate.Compare("s.x", Predicate.Op.Eq, "a")) == Scan.FilterUse.Unused)
    assert(use(Predicate.Compare("id", Predicate.Op.Eq, new java.math.BigDecimal(1))) == Scan.FilterUse.Unused)
    assert(use(Predicate.Compare("_fragid", Predicate.Op.Eq, "1")) == Scan.FilterUse.Unused)
    assert(use(Predicate.In("_fragid", Seq(java.lang.Integer.valueOf(1), java.lang.Long.valueOf(2)))) == Scan.FilterUse.SelectsFragments)
    assert(use(Predicate.And(Predicate.IsNull("id"), Predicate.Compare("nope", Predicate.Op.Eq, "a"))) == Scan.FilterUse.Unused)
  }

  test("a commit whose outcome is unknown keeps the files written for it; a failed one deletes them") {
    val (storage, table) = newTable()
    val rows = Seq(Row.of(Some(1), Some(1.0), Some("a")))
    table.newOverwrite(0, schema, FileVersion.V2_2, Map.empty).commit(Seq(write(table, rows, 10)))
    val written = write(table, rows, 10)
    val append = table.newAppend(1)
    storage.failCommitsAfterWriting(1)
    intercept[CommitStateUnknownException](append.commit(Seq(written)))
    append.abort(written.files)
    assert(written.files.forall(storage.exists), "files of a commit in an unknown state were deleted")
    val again = write(table, rows, 10)
    val other = table.newAppend(table.latestVersion())
    other.abort(again.files)
    assert(!again.files.exists(storage.exists))
  }

  test("an abort also deletes the files named with its tag whose writers' results it never got, and no other file") {
    val (storage, table) = newTable()
    val r = new Random(23)
    val rows = Seq.fill(60)(randomRow(r))
    table.newOverwrite(0, schema, FileVersion.V2_2, Map.empty).commit(Seq(write(table, rows, 25)))
    def writeTagged(tag: String): WrittenFiles = {
      val w = table.newDataWriter(schema, FileVersion.V2_2, 20, 1L << 20, tag)
      try { val b = batch(rows); try w.write(b) finally b.close(); w.finish() } finally w.close()
    }
    val failed = table.newAppend(1)
    val reported = writeTagged(failed.fileTag)
    val dropped = writeTagged(failed.fileTag) // a task whose result arrived after its job had failed
    val concurrent = table.newAppend(1)
    val theirs = writeTagged(concurrent.fileTag)
    assert(failed.fileTag != concurrent.fileTag)
    failed.abort(reported.files)
    assert(!(reported.files ++ dropped.files).exists(storage.exists), "files of the aborted write remain")
    assert(theirs.files.forall(storage.exists), "a concurrent write lost its files")
    assert(concurrent.commit(Seq(theirs)) == 2)
    assert(read(table, table.latest().newScan(), 1L << 20).size == 2 * rows.size)
  }

  test("properties a data commit records are read back newest first, also after a rebase over another writer's commit") {
    val (_, table) = newTable()
    val r = new Random(11)
    val rows = Seq.fill(5)(randomRow(r))
    table.newOverwrite(0, schema, FileVersion.V2_2, Map.empty).withProperties(Map("k" -> "0")).commit(Seq(write(table, rows, 10)))
    val stale = table.newAppend(1).withProperties(Map("k" -> "2", "q" -> "x"))
    table.newAppend(1).commit(Seq(write(table, rows, 10)))
    assert(stale.commit(Seq(write(table, rows, 10))) == 3)
    assert(table.committedProperties().toList == List(3L -> Map("k" -> "2", "q" -> "x"), 2L -> Map.empty, 1L -> Map("k" -> "0")))
    // The newest version with the key, as a streaming sink looks for its last batch.
    assert(table.committedProperties().collectFirst { case (v, p) if p.contains("k") => v }.contains(3L))
  }

  test("a row delta on stable row ids would need a table made by pylance; without them an update is delete + insert") {
    val (_, table) = newTable()
    table.newOverwrite(0, schema, FileVersion.V2_2, Map.empty).commit(Seq(write(table, Seq.fill(5)(Row(Some(1), None, None)), 10)))
    val s = table.latest()
    val delta = table.newRowDelta(s)
    assert(!delta.keepsRowIds)
    val gone = new DeletedRows
    gone.add(0L); gone.add(4L)
    val v = delta.delete(gone).insert(write(table, Seq(Row(Some(9), None, None)), 10)).commit()
    assert(v.contains(2L))
    assert(read(table, table.latest().newScan(), 100).map(_._2.id.get).sorted == Seq(1L, 1L, 1L, 9L))
    assert(table.newDelete(table.latest()).delete(new DeletedRows).commit().isEmpty, "an empty change commits nothing")
  }
  test("seeded sequences of appends, deletes, compactions, cleanups, tags and branches on main and branches match a model") {
    var onBranches = Map.empty[Int, Int] // operation -> times drawn on a branch, over every seed
    (1 to 10).foreach { seed =>
      val r = new Random(seed)
      val (storage, main) = newTable()
      def rows(t: Table, at: TimeTravel): Seq[String] = read(t, t.snapshot(at).newScan(), 1L << 20).map(_._2.toString).sorted
      def ref(name: String): Table = if (name == "main") main else main.branch(name)
      appendRandom(main, r, 1 + r.nextInt(60))
      var latest = Map("main" -> rows(main, TimeTravel.Latest))
      var versions = Map(("main", main.latestVersion()) -> latest("main")) // (branch, version) -> rows
      var tags = Map.empty[String, Seq[String]]
      var made = 0
      (0 until 20).foreach { step =>
        val name = r.shuffle(latest.keys.toSeq.sorted).head
        val t = ref(name)
        val op = r.nextInt(7)
        if (name != "main") onBranches += op -> (onBranches.getOrElse(op, 0) + 1)
        def record(): Unit = {
          latest += name -> rows(t, TimeTravel.Latest)
          versions += (name, t.latestVersion()) -> latest(name)
        }
        op match {
          case 0 | 1 => appendRandom(t, r, 1 + r.nextInt(50)); record()
          case 2 => deleteRandom(t, r, wholeFragments = true); record()
          case 3 =>
            val at = r.shuffle(versions.keys.filter(_._1 == name).toSeq.sortBy(_._2)).head
            made += 1
            val b = if (r.nextBoolean()) s"b$made" else s"f/b$made"
            val from = if (name == "main") TimeTravel.AtVersion(at._2) else TimeTravel.OnBranch(name, TimeTravel.AtVersion(at._2))
            val created = main.createBranch(b, from)
            assert(created.parentBranch == Option(name).filter(_ != "main") && created.parentVersion == at._2)
            assert(ref(b).latestVersion() == at._2, s"seed $seed: a branch's first version is its source's number")
            latest += b -> rows(ref(b), TimeTravel.Latest)
            assert(latest(b) == versions(at), s"seed $seed step $step: branch $b of $at reads other rows")
            versions += (b, at._2) -> latest(b)
            val e = intercept[io.sparklance.core.InvalidArgumentException](main.createBranch(b, TimeTravel.Latest))
            assert(e.getMessage.contains(s"already has a branch '$b'"))
          case 4 =>
            t.compact(1000); record()
          case 5 =>
            val v = r.shuffle(versions.keys.filter(_._1 == name).toSeq.sortBy(_._2)).head._2
            val tag = s"t$step"
            t.createTag(tag, v)
            assert(main.tags()(tag).branch == Option(name).filter(_ != "main"))
            tags += tag -> versions((name, v))
          case _ if name != "main" =>
            val dependents = main.branches().values.filter(main.branches()(name).isAncestorOf).map(_.name)
            val tagged = main.tags().values.exists(_.branch.contains(name))
            if (dependents.isEmpty && !tagged) {
              main.deleteBranch(name)
              assert(!main.branches().contains(name) && storage.list(s"mem://t.lance/tree/$name/_versions").isEmpty)
              latest -= name
              versions = versions.filter(_._1._1 != name)
            } else {
              val e = intercept[io.sparklance.core.InvalidArgumentException](main.deleteBranch(name))
              assert(e.getMessage.contains(if (dependents.nonEmpty) "Drop those branches first" else "Drop those tags first"),
                e.getMessage)
              assert(main.branches().contains(name))
            }
          case _ =>
            val at = java.time.Instant.now().plusSeconds(1)
            t.cleanup(Cleanup.Policy(Some(at), None, at))
            val kept = t.history().map(_.version).toSet
            versions = versions.filter { case ((b, v), _) => b != name || kept.contains(v) }
        }
        latest.foreach { case (b, expected) =>
          assert(rows(ref(b), TimeTravel.Latest) == expected, s"seed $seed step $step: branch $b's latest rows")
        }
        versions.foreach { case ((b, v), expected) =>
          assert(rows(main, if (b == "main") TimeTravel.AtVersion(v) else TimeTravel.OnBranch(b, TimeTravel.AtVersion(v))) ==
            expected, s"seed $seed step $step: version $v of $b")
        }
        tags.foreach { case (tag, expected) => assert(rows(main, TimeTravel.AtTag(tag)) == expected, s"seed $seed: tag $tag") }
      }
    }
    assert((0 until 7).forall(onBranches.contains), s"every operation ran on branches: $onBranches")
  }

  test("concurrent commits on one branch follow main's conflict rules; commits on main and a branch never conflict") {
    val r = new Random(5)
    val (_, main) = newTable()
    appendRandom(main, r, 40)
    main.createBranch("dev", TimeTravel.Latest)
    val dev = main.branch("dev")
    val read0 = dev.latest()
    val live = read(dev, read0.newScan(), 1L << 20).map(_._1)
    def deleting(s: Snapshot, addresses: Seq[Long]) = {
      val d = new DeletedRows
      addresses.foreach(d.add)
      main.branch("dev").newDelete(s).delete(DeletedRows.fromBytes(d.toBytes))
    }
    deleting(read0, live.take(1)).commit()
    appendRandom(main, r, 5) // main moves on meanwhile
    deleting(read0, live.slice(1, 2)).commit() // other rows: rebased onto the first delete
    assert(read(dev, dev.latest().newScan(), 1L << 20).map(_._1).toSet == live.drop(2).toSet)
    val e = intercept[io.sparklance.core.CommitConflictException](deleting(read0, live.take(1)).commit())
    assert(e.getMessage.contains("tree/dev"), e.getMessage)
    assert(dev.latestVersion() == read0.version + 2 && main.latestVersion() == read0.version + 1)
  }

  test("branches: missing and invalid names, 'main', and a tag of another branch are refused with clear errors") {
    val r = new Random(3)
    val (_, main) = newTable()
    appendRandom(main, r, 10)
    val b = main.createBranch("dev", TimeTravel.Latest)
    assert(b.lineage.size == 1 && b.parentBranch.isEmpty)
    def error(f: => Any): String = intercept[io.sparklance.core.LanceException](f).getMessage
    assert(error(main.branch("nope")).contains("branch 'nope' does not exist") && error(main.branch("nope")).contains("dev"))
    assert(error(main.deleteBranch("nope")).contains("branch 'nope' does not exist"))
    assert(error(main.createBranch("main", TimeTravel.Latest)).contains("'main' is the name of the main branch"))
    assert(error(main.createBranch("a/../b", TimeTravel.Latest)).contains("not a valid branch name"))
    assert(error(main.createBranch("x", TimeTravel.AtVersion(9))).contains("9"))
    main.branch("dev").createTag("on_dev", 1)
    assert(error(main.restoreTag("on_dev")).contains("of branch 'dev', not of main"))
    val nested = main.createBranch("dev2", TimeTravel.OnBranch("dev", TimeTravel.Latest))
    assert(nested.parentBranch.contains("dev") && nested.lineage.init == b.lineage)
    assert(error(main.deleteBranch("dev")).contains("branch dev2 was made from it"))
    main.deleteBranch("dev2")
    // As pylance 14 refuses ("Branch dev is referenced by tags"): dropping it would leave the tag naming deleted files.
    assert(error(main.deleteBranch("dev")) == s"Cannot drop branch 'dev' of ${main.root}: tag on_dev (version 1) " +
      "points to its versions. Drop those tags first.")
    assert(main.branches().contains("dev") && main.snapshot(TimeTravel.AtTag("on_dev")).version == 1)
    main.deleteTag("on_dev")
    main.deleteBranch("dev")
    assert(!main.branches().contains("dev"))
  }
}

object TableSuite {
  /**
   * A row of the model; None is null. `x` is kept as its bits, so that rows with NaN are equal to themselves and
   * -0.0 is not 0.0: a value must read back exactly as written.
   */
  final case class Row(id: Option[Long], xBits: Option[Long], s: Option[String]) {
    def x: Option[Double] = xBits.map(java.lang.Double.longBitsToDouble)
  }

  object Row {
    def of(id: Option[Long], x: Option[Double], s: Option[String]): Row =
      Row(id, x.map(java.lang.Double.doubleToRawLongBits), s)
  }
}
