package io.sparklance.core.index

import java.nio.charset.StandardCharsets.UTF_8

import scala.util.Random

import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector.{BigIntVector, FieldVector, UInt4Vector, UInt8Vector, VarCharVector}
import org.apache.arrow.vector.types.pojo.ArrowType
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.file.{LanceFileReader, RowCopier}
import io.sparklance.core.storage.{InMemoryStorage, Storage}

/**
 * The B-tree build: rows copied in blocks ([[RowCopier]]), sorted runs ([[BTreeWriter.writeRun]]) merged in ranges
 * ([[SortedRuns.mergeRanges]]) into pages written on a thread of their own ([[BTreeWriter.merge]]), checked against
 * a sort of the same rows: keys with nulls and duplicates, runs that interleave and runs that do not, pages that
 * end inside a run's chunk.
 */
class BTreeBuildSuite extends AnyFunSuite with BeforeAndAfterAll {
  private val allocator = new RootAllocator()
  override def afterAll(): Unit = allocator.close()

  private def longs(values: Seq[Option[Long]]): BigIntVector = {
    val v = new BigIntVector("k", allocator)
    v.allocateNew(values.size)
    values.zipWithIndex.foreach { case (x, i) => x.fold(v.setNull(i))(v.set(i, _)) }
    v.setValueCount(values.size)
    v
  }

  private def strings(values: Seq[Option[String]]): VarCharVector = {
    val v = new VarCharVector("k", allocator)
    v.allocateNew()
    values.zipWithIndex.foreach { case (x, i) => x.fold(v.setNull(i))(s => v.setSafe(i, s.getBytes(UTF_8))) }
    v.setValueCount(values.size)
    v
  }

  private def addresses(fragment: Long, n: Int): UInt8Vector = {
    val v = new UInt8Vector("ids", allocator)
    v.allocateNew(n)
    (0 until n).foreach(i => v.set(i, (fragment << 32) | i))
    v.setValueCount(n)
    v
  }

  private def objects(v: FieldVector): Seq[Any] = (0 until v.getValueCount).map(i => Option(v.getObject(i)).map(_.toString).orNull)

  test("copyRange and select copy fixed-width values and their validity at any bit offset") {
    val r = new Random(3)
    val from = longs(Seq.fill(300)(if (r.nextInt(5) == 0) None else Some(r.nextLong())))
    try {
      for ((row, slot, count) <- Seq((0, 0, 300), (3, 0, 100), (0, 5, 97), (13, 7, 200), (1, 9, 8), (250, 0, 50))) {
        val to = new BigIntVector("k", allocator)
        try {
          to.allocateNew(4)
          RowCopier.copyRange(from, row, count, to, slot)
          to.setValueCount(slot + count)
          assert(objects(to).drop(slot) == objects(from).slice(row, row + count), s"rows $row.. into $slot, $count")
        } finally to.close()
      }
      val rows = Array.fill(500)(r.nextInt(300))
      val selected = RowCopier.select(from, rows, rows.length, allocator)
      try assert(objects(selected) == rows.toSeq.map(objects(from))) finally selected.close()
    } finally from.close()
  }

  /**
   * Checks the B-tree of `runs` twice: every run written to its file, and every other run held in memory
   * ([[HeldRuns]]) while the rest are written, as a local build's runs are where the held runs' budget runs out.
   */
  private def check(runs: Seq[FieldVector], keys: ArrowType, batchSize: Int): Unit = {
    checkMerge(runs, keys, batchSize, held = _ => false)
    val heldBefore = HeldRuns.heldBytes
    checkMerge(runs, keys, batchSize, held = _ % 2 == 0)
    assert(HeldRuns.heldBytes == heldBefore, "the merge took every held run")
  }

  /** Writes (or holds) each run, merges them into a B-tree of `batchSize`-row pages, and checks its pages and lookup. */
  private def checkMerge(runs: Seq[FieldVector], keys: ArrowType, batchSize: Int, held: Int => Boolean): Unit = {
    val storage = new InMemoryStorage
    val inMemory = HeldRuns.open()
    try checkMerge(storage, runs, keys, batchSize, held, inMemory) finally inMemory.close()
  }

  private def checkMerge(storage: Storage, runs: Seq[FieldVector], keys: ArrowType, batchSize: Int, held: Int => Boolean,
      inMemory: HeldRuns): Unit = {
    val paths = runs.zipWithIndex.map { case (k, f) =>
      val path = s"mem://t/run-$f.lance"
      val ids = addresses(f, k.getValueCount)
      try {
        if (held(f)) BTreeWriter.holdRun(storage, path, k, ids, inMemory)
        else BTreeWriter.writeRun(storage, path, k, ids, allocator)
      } finally ids.close()
      assert(storage.exists(path) != held(f), s"run $f: held in memory ${held(f)}")
      path
    }
    // Expected: every (key, address), nulls first, then by key, then by address.
    val all = runs.zipWithIndex.flatMap { case (k, f) =>
      (0 until k.getValueCount).map(i => (Option(k.getObject(i)).map(_.toString), (f.toLong << 32) | i))
    }
    val expected = all.sortWith { case ((ka, ia), (kb, ib)) =>
      val c = (ka, kb) match {
        case (None, None) => 0
        case (None, _) => -1
        case (_, None) => 1
        case (Some(a), Some(b)) => if (keys.isInstanceOf[ArrowType.Int]) java.lang.Long.compare(a.toLong, b.toLong) else a.compareTo(b)
      }
      c < 0 || (c == 0 && ia < ib)
    }
    BTreeWriter.merge(storage, paths, "mem://t/idx", keys, batchSize, allocator, held = Some(inMemory))
    val data = LanceFileReader.open(storage, Storage.join("mem://t/idx", BTreeIndex.DataFile))
    try {
      val root = data.read(data.metadata.schema.fields, 0, data.numRows, allocator)
      try {
        val ids = root.getVector(1).asInstanceOf[UInt8Vector]
        val got = (0 until root.getRowCount).map(i => (Option(root.getVector(0).getObject(i)).map(_.toString), ids.get(i)))
        assert(got == expected)
      } finally root.close()
    } finally data.close()
    val lookup = LanceFileReader.open(storage, Storage.join("mem://t/idx", BTreeIndex.LookupFile))
    try {
      val root = lookup.read(lookup.metadata.schema.fields, 0, lookup.numRows, allocator)
      try {
        val pages = expected.grouped(batchSize).toSeq
        assert(root.getRowCount == pages.size)
        pages.zipWithIndex.foreach { case (page, p) =>
          assert(Option(root.getVector("min").getObject(p)).map(_.toString) == page.head._1, s"page $p")
          assert(Option(root.getVector("max").getObject(p)).map(_.toString) == page.last._1, s"page $p")
          assert(root.getVector("null_count").asInstanceOf[UInt4Vector].get(p) == page.count(_._1.isEmpty), s"page $p")
        }
      } finally root.close()
    } finally lookup.close()
  }

  test("runs that interleave, with nulls and duplicate keys, merge into sorted pages") {
    val r = new Random(7)
    val runs = Seq.fill(4)(longs(Seq.fill(3000 + r.nextInt(2000))(if (r.nextInt(20) == 0) None else Some(r.nextInt(500).toLong - 250))))
    try check(runs, new ArrowType.Int(64, true), 1000) finally runs.foreach(_.close())
  }

  test("runs over disjoint keys, larger than a chunk, merge into pages that end inside chunks") {
    // 3 runs of 150,000 rows (chunks of 65,536), given out of key order; pages of 4,095 rows.
    val runs = Seq(2L, 0L, 1L).map(b => longs((0 until 150000).map(i => Some(b * 1000000 + i))))
    try check(runs, new ArrowType.Int(64, true), 4095) finally runs.foreach(_.close())
  }

  test("integer keys without nulls (sorted as primitives), with duplicates, merge into sorted pages") {
    val r = new Random(13)
    val runs = Seq.fill(3)(longs(Seq.fill(5000 + r.nextInt(3000))(Some(r.nextInt(2000).toLong - 1000))))
    try check(runs, new ArrowType.Int(64, true), 700) finally runs.foreach(_.close())
  }

  test("runs already in key order, nulls first, are copied as blocks into sorted pages") {
    val r = new Random(19)
    val runs = Seq.fill(3) {
      val nulls = r.nextInt(40)
      val start = r.nextInt(1000).toLong
      longs(Seq.fill(nulls)(None) ++ (0 until 2000 + r.nextInt(3000)).map(i => Some(start + i / (1 + r.nextInt(3)))))
    }
    try check(runs, new ArrowType.Int(64, true), 512) finally runs.foreach(_.close())
  }

  test("KeyOrder sorts integer keys without nulls as the comparator orders them, ties by row, unsigned 64-bit unsigned") {
    val r = new Random(17)
    for (round <- 0 until 20) {
      val n = 1 + r.nextInt(3000)
      val unsigned = round % 2 == 1
      val spread = 1 + r.nextInt(if (round % 4 < 2) 50 else Int.MaxValue)
      val values = Seq.fill(n)((r.nextInt(spread) - spread / 2).toLong * 7919L)
      val v: FieldVector = if (unsigned) {
        val u = new UInt8Vector("k", allocator)
        u.allocateNew(n)
        values.zipWithIndex.foreach { case (x, i) => u.set(i, x) }
        u
      } else longs(values.map(Some(_)))
      try {
        v.setValueCount(n)
        // A random subset of rows, in random order, as the rows to sort.
        val perm = r.shuffle((0 until n).toList).take(1 + r.nextInt(n)).toArray
        val rows = perm.clone()
        val order = KeyOrder.of(v)
        order.sort(v, perm)
        val positions = rows.zipWithIndex.toMap
        val expected = rows.sortWith { (a, b) =>
          val c = order.compare(v, a, v, b)
          c < 0 || (c == 0 && positions(a) < positions(b))
        }
        assert(perm.toSeq == expected.toSeq, s"round $round, $n rows, unsigned $unsigned")
        if (unsigned) {
          val keys = perm.map(i => v.asInstanceOf[UInt8Vector].get(i))
          assert(keys.sliding(2).forall(p => p.length < 2 || java.lang.Long.compareUnsigned(p(0), p(1)) <= 0))
        }
      } finally v.close()
    }
  }

  test("a held run past the budget of all builds is refused, and closing a build's held runs frees them alone") {
    val keys = longs((0 until 1000).map(i => Some(i.toLong)))
    val ids = addresses(0, 1000)
    val storage = new InMemoryStorage
    val before = HeldRuns.heldBytes
    val a = HeldRuns.open()
    val b = HeldRuns.open()
    try {
      BTreeWriter.holdRun(storage, "mem://t/idx-a/run-0.lance", keys, ids, a)
      BTreeWriter.holdRun(storage, "mem://t/idx-b/run-0.lance", keys, ids, b)
      assert(!storage.exists("mem://t/idx-a/run-0.lance") && HeldRuns.heldBytes > before)
      val held = HeldRuns.heldBytes
      // The budget counts both builds' runs: one that has room for neither more refuses the next run.
      val full = HeldRuns.open(budget = held)
      try {
        BTreeWriter.holdRun(storage, "mem://t/idx-c/run-0.lance", keys, ids, full)
        assert(storage.exists("mem://t/idx-c/run-0.lance") && HeldRuns.heldBytes == held)
        assert(full.take("mem://t/idx-c/run-0.lance").isEmpty)
      } finally full.close()
      a.close()
      assert(a.take("mem://t/idx-a/run-0.lance").isEmpty)
      val run = b.take("mem://t/idx-b/run-0.lance")
      assert(run.map(_.getRowCount).contains(1000))
      run.foreach(_.close())
      assert(HeldRuns.heldBytes == before)
    } finally { a.close(); b.close(); keys.close(); ids.close() }
  }

  test("string keys (copied row by row) merge into sorted pages") {
    val r = new Random(11)
    val runs = Seq.fill(3)(strings(Seq.fill(2000)(if (r.nextInt(10) == 0) None else Some(s"k-${r.nextInt(300)}"))))
    try check(runs, ArrowType.Utf8.INSTANCE, 512) finally runs.foreach(_.close())
  }

  test("a failure while writing pages on the writer's thread is thrown, and every page is freed") {
    val storage = new InMemoryStorage {
      override def createStream(path: String): java.io.OutputStream =
        if (!path.endsWith(BTreeIndex.DataFile)) super.createStream(path)
        else new java.io.OutputStream { def write(b: Int): Unit = throw new java.io.IOException("injected: disk full") }
    }
    // Enough rows that the data file's columns fill a page (8 MiB) while the merge goes on.
    val n = 1200000
    val keys = longs((0 until n).map(i => Some(i.toLong)))
    val ids = addresses(0, n)
    try BTreeWriter.writeRun(storage, "mem://t/run-0.lance", keys, ids, allocator) finally { keys.close(); ids.close() }
    val before = allocator.getAllocatedMemory
    val e = intercept[Exception](BTreeWriter.merge(storage, Seq("mem://t/run-0.lance"), "mem://t/idx",
      new ArrowType.Int(64, true), 4096, allocator))
    assert(Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).exists(c => String.valueOf(c.getMessage).contains("injected: disk full")), e)
    assert(allocator.getAllocatedMemory == before)
  }
}
