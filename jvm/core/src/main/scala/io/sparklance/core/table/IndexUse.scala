package io.sparklance.core.table

import scala.util.control.NonFatal

import org.apache.arrow.memory.RootAllocator
import org.roaringbitmap.RoaringBitmap

import io.sparklance.core.file.LanceFileReader
import io.sparklance.core.index.{BitmapIndex, BloomFilterIndex, BTreeIndex, FtsQuery, IndexKind, IndexMetadata, IndexQuery, InvertedIndex, NGramIndex, RowSelection, ZoneMapIndex}
import io.sparklance.core.schema.{LanceField, LogicalType}

/**
 * The scalar indexes a scan's predicates can use, and the rows they select: for each top-level conjunct on an
 * indexed column (`=`, `<`, `<=`, `>`, `>=`, `IN`, `IS NULL`), each [[Predicate.ListHasAny]] on a list column
 * with a label list index, each [[Predicate.StringMatch]] on a string column with an NGRAM index (when the text
 * holds a trigram of ASCII letters and digits, see [[NGramIndex]]), and each [[Predicate.FullTextMatch]] whose
 * columns all have a full-text (INVERTED) index,
 * the rows of the fragments the index covers that can match. A fragment no used index covers (appended after the
 * index was built, or rewritten since) is read whole.
 *
 * A full-text index gives the documents holding any (OR) or all (AND) of the query's tokens from its posting lists;
 * a phrase takes the documents holding all its tokens, and the caller's evaluation of the phrase on the rows read
 * checks their order and distance.
 *
 * The selection only narrows what is read: the scan's filters are still applied to the rows read, by the batch
 * filter and by the engine, so an index that selects too many rows costs time, never results. An index that
 * selects too few would lose rows, which is why only indexes whose files are intact and whose kind and key type
 * this reader knows are used; any failure to search one is a reason to scan instead.
 *
 * @param used        each index used, with the query it answered, for EXPLAIN
 * @param usedText    each full-text index used, with the column and query it answered, for EXPLAIN
 * @param selections  per used conjunct: the fragments its index covers, and the rows in them that can match
 */
final class IndexUse private (val used: Seq[(IndexMetadata, String, IndexQuery)],
    val usedText: Seq[(IndexMetadata, String, FtsQuery)], selections: Seq[(RoaringBitmap, RowSelection)]) {

  /** The physical offsets of fragment `id` to read, or None to read it all (no used index covers it). */
  def rows(fragmentId: Long): Option[RoaringBitmap] = {
    val covering = selections.filter(_._1.contains(fragmentId.toInt))
    if (covering.isEmpty) None
    else Some(covering.map(_._2.rows(fragmentId)).reduce((a, b) => RoaringBitmap.and(a, b)))
  }

  def isEmpty: Boolean = used.isEmpty && usedText.isEmpty

  override def toString: String = (used.map { case (i, column, q) => s"${i.kind} index '${i.name}' on $column $q" } ++
    usedText.map { case (i, column, q) => s"${i.kind} index '${i.name}' on $column $q" }).mkString(", ")
}

object IndexUse {
  val None: IndexUse = new IndexUse(Nil, Nil, Nil)

  /** Kinds searched for conditions on a column's values, in order of preference when one column has several. */
  private val Searchable: Seq[IndexKind] = Seq(IndexKind.BTree, IndexKind.Bitmap, IndexKind.ZoneMap, IndexKind.BloomFilter)

  /** Kinds searched for conditions on a list's items. */
  private val ItemsSearchable: Seq[IndexKind] = Seq(IndexKind.LabelList)

  /** Kinds searched for substrings of a string column. */
  private val SubstringSearchable: Seq[IndexKind] = Seq(IndexKind.NGram)

  /**
   * The indexes of `snapshot` that `predicates` (conjuncts a scan uses) can use: those covering at least one of its
   * fragments. B-trees hold row addresses, on tables with stable row ids too.
   */
  def plan(snapshot: Snapshot, predicates: Seq[Predicate]): IndexUse = {
    val indexes = snapshot.indexes.filter(i => Searchable.contains(i.kind) || ItemsSearchable.contains(i.kind) ||
      SubstringSearchable.contains(i.kind) ||
      i.kind == IndexKind.Inverted)
    if (indexes.isEmpty) return None
    val fragments = RoaringBitmap.bitmapOf(snapshot.fragments.map(_.id.toInt): _*)
    val (texts, others) = predicates.flatMap(conjuncts).partition(_.isInstanceOf[Predicate.FullTextMatch])
    val foundText = texts.collect { case m: Predicate.FullTextMatch => m }.flatMap(fullText(snapshot, indexes, fragments, _))
    def usable(ps: Seq[Predicate]): Seq[(String, IndexQuery)] = ps.flatMap { p =>
      queryOf(p).filter { case (column, _) =>
        !column.contains('.') && snapshot.schema.field(column).exists(keysComparable(_, p))
      }
    }
    // A needle without a trigram of ASCII letters and digits (shorter than three, say) cannot be narrowed.
    val onSubstrings = others.collect {
      case m @ Predicate.StringMatch(_, _, text) if NGramIndex.needleTokens(text).nonEmpty => m
    }
    val rest = others.filterNot(_.isInstanceOf[Predicate.StringMatch])
    val (onItems, onValues) = rest.partition(_.isInstanceOf[Predicate.ListHasAny])
    // One query per column on its values: conjuncts on the same column (a range's two ends) are searched together.
    // A query on a list's items is searched alone: two of them intersect the rows found (`array_has_all`).
    val byColumn = usable(onValues).groupBy(_._1).toSeq.sortBy(_._1).map { case (column, qs) =>
      (column, qs.map(_._2).reduce((a, b) => IndexQuery.Both(a, b): IndexQuery), Searchable)
    } ++ usable(onItems).map { case (column, query) => (column, query, ItemsSearchable) } ++
      usable(onSubstrings).map { case (column, query) => (column, query, SubstringSearchable) }
    val found = byColumn.flatMap { case (column, query, kinds) =>
      for {
        field <- snapshot.schema.field(column)
        keys = LanceFileReader.readField(field).getType
        (_, group) <- groups(indexes.filter(i => i.kind != IndexKind.BloomFilter || BloomFilterIndex.answers(query, keys)), field, kinds)
        if group.exists(i => RoaringBitmap.intersects(fragments, i.fragmentBitmap))
        selection <- search(snapshot, group, query, keys)
      } yield {
        val covered = RoaringBitmap.and(fragments, group.map(_.fragmentBitmap).reduce((a, b) => RoaringBitmap.or(a, b)))
        ((group.head, column, query), (covered, selection))
      }
    }
    if (found.isEmpty && foundText.isEmpty) None
    else new IndexUse(found.map(_._1), foundText.flatMap(_._1), found.map(_._2) ++ foundText.map(_._2))
  }

  /**
   * The rows a full-text match can select, through the INVERTED index of each of its columns: in the fragments
   * every one of those indexes covers, the union of the documents each finds. None (read every row) when a column
   * has no such index or one cannot be searched.
   */
  private def fullText(snapshot: Snapshot, indexes: Seq[IndexMetadata], fragments: RoaringBitmap,
      m: Predicate.FullTextMatch): Option[(Seq[(IndexMetadata, String, FtsQuery)], (RoaringBitmap, RowSelection))] = {
    val perColumn = m.targets.map { case (column, query) =>
      for {
        field <- snapshot.schema.field(column) if !column.contains('.')
        (_, group) <- groups(indexes, field, Seq(IndexKind.Inverted))
        if group.exists(i => RoaringBitmap.intersects(fragments, i.fragmentBitmap))
        selection <- searchText(snapshot, group, query)
      } yield {
        val covered = RoaringBitmap.and(fragments, group.map(_.fragmentBitmap).reduce((a, b) => RoaringBitmap.or(a, b)))
        ((group.head, column, query), covered, selection)
      }
    }
    if (perColumn.isEmpty || perColumn.exists(_.isEmpty)) scala.None
    else {
      val all = perColumn.flatten
      Some((all.map(_._1), (all.map(_._2).reduce((a, b) => RoaringBitmap.and(a, b)), all.map(_._3).reduce(_ union _))))
    }
  }

  /**
   * The rows of `group`'s documents that can match `query`, or None (scan instead) when one cannot be searched. The
   * query is analysed as pylance analyses it (tests/test_fts_characters.py), so a token the dictionary does not
   * hold is in no indexed row.
   */
  private def searchText(snapshot: Snapshot, group: Seq[IndexMetadata], query: FtsQuery): Option[RowSelection] =
    try {
      val indexes = group.map(i => i -> InvertedIndex.open(snapshot.storage, snapshot.indexDir(i), i.name))
      val tokens = indexes.head._2.params.tokenizer().tokenize(query.text).texts.toSeq
      Some(indexes.map { case (i, index) =>
        val builder = new RowSelection.Builder(exact = false)
        query match {
          case FtsQuery.Match(_, op, _, Some(fuzzy)) =>
            // Any expansion (OR), or one of each query token's (AND).
            val found = fuzzy.groups.map { group =>
              val ids = new org.roaringbitmap.longlong.Roaring64NavigableMap()
              index.documentsWith(group, all = false)(ids.addLong)
              ids
            }
            if (found.nonEmpty) {
              val kept = found.reduce { (a, b) => if (op == FtsQuery.Or) a.or(b) else a.and(b); a }
              kept.forEach((id: Long) => builder.addAddress(id))
            }
          case FtsQuery.Match(_, FtsQuery.Or, _, scala.None) => index.documentsWith(tokens, all = false)(builder.addAddress)
          case _ => index.documentsWith(tokens, all = true)(builder.addAddress)
        }
        // Documents of tables with stable row ids are row ids, not addresses.
        if (snapshot.hasStableRowIds) addressesOf(snapshot, builder.result(), i) else builder.result()
      }.reduce(_ union _))
    } catch {
      case NonFatal(e) =>
        IndexUse.log.warn(s"Not using full-text index '${group.head.name}' of ${snapshot.root}@${snapshot.version}: ${e.getMessage}")
        scala.None
    }

  private def conjuncts(p: Predicate): Seq[Predicate] = p match {
    case Predicate.And(l, r) => conjuncts(l) ++ conjuncts(r)
    case other => Seq(other)
  }

  private def queryOf(p: Predicate): Option[(String, IndexQuery)] = p match {
    case Predicate.Compare(c, op, v) =>
      val b = IndexQuery.Bound(v, inclusive = op == Predicate.Op.Le || op == Predicate.Op.Ge || op == Predicate.Op.Eq)
      Some(c -> (op match {
        case Predicate.Op.Eq => IndexQuery.equalTo(v)
        case Predicate.Op.Lt | Predicate.Op.Le => IndexQuery.Range(scala.None, Some(b))
        case Predicate.Op.Gt | Predicate.Op.Ge => IndexQuery.Range(Some(b), scala.None)
      }))
    case Predicate.In(c, vs) if vs.nonEmpty => Some(c -> IndexQuery.In(vs))
    case Predicate.IsNull(c) => Some(c -> IndexQuery.IsNull)
    case Predicate.ListHasAny(c, vs) if vs.nonEmpty => Some(c -> IndexQuery.HasAny(vs))
    // A string that starts or ends with the text also contains it.
    case Predicate.StringMatch(c, _, text) => Some(c -> IndexQuery.Contains(text))
    case _ => scala.None
  }

  /** Whether the column's keys compare with every literal of the predicate as SQL compares them. */
  private def keysComparable(f: LanceField, p: Predicate): Boolean = {
    val t = LanceFileReader.readField(f).getType
    p match {
      case Predicate.Compare(_, _, v) => IndexQuery.comparable(t, v)
      case Predicate.In(_, vs) => vs.forall(IndexQuery.comparable(t, _))
      case Predicate.IsNull(_) => f.children.isEmpty
      case Predicate.ListHasAny(_, vs) => f.logicalType.isInstanceOf[LogicalType.List] &&
        f.children.headOption.exists { item =>
          val itemType = LanceFileReader.readField(item).getType
          item.children.isEmpty && vs.forall(IndexQuery.comparable(itemType, _))
        }
      case Predicate.StringMatch(_, _, _) => f.children.isEmpty && f.logicalType.isInstanceOf[LogicalType.Utf8]
      case _ => false
    }
  }

  /** The indexes of `field` of the preferred kind of `kinds`, grouped by name (delta indexes share one). */
  private def groups(indexes: Seq[IndexMetadata], field: LanceField, kinds: Seq[IndexKind]): Option[(IndexKind, Seq[IndexMetadata])] = {
    val onField = indexes.filter(_.fieldIds == Seq(field.id))
    kinds.iterator.map(k => onField.filter(_.kind == k)).find(_.nonEmpty).map { ofKind =>
      val name = ofKind.head.name
      (ofKind.head.kind, ofKind.filter(_.name == name))
    }
  }

  /** The union of the group's results, or None (scan instead) when one of them cannot be searched. */
  private def search(snapshot: Snapshot, group: Seq[IndexMetadata], query: IndexQuery,
      keys: org.apache.arrow.vector.types.pojo.ArrowType): Option[RowSelection] = {
    val allocator = new RootAllocator()
    val rows = snapshot.fragments.map(f => f.id -> f.physicalRows).toMap
    val physicalRows = (id: Long) => rows.getOrElse(id, 0L)
    try {
      Some(group.map { i =>
        i.kind match {
          case IndexKind.BTree => BTreeIndex.search(snapshot.storage, snapshot.indexDir(i), query, allocator)
          case IndexKind.Bitmap | IndexKind.LabelList =>
            // A label list is a bitmap index over the lists' items (docs/dev/scalar-indexes.md §5).
            val found = BitmapIndex.search(snapshot.storage, snapshot.indexDir(i), query, allocator, physicalRows)
            // Bitmaps of tables with stable row ids hold row ids, not addresses.
            if (snapshot.hasStableRowIds) addressesOf(snapshot, found, i) else found
          case IndexKind.ZoneMap => ZoneMapIndex.search(snapshot.storage, snapshot.indexDir(i), query, allocator)
          case IndexKind.BloomFilter => BloomFilterIndex.search(snapshot.storage, snapshot.indexDir(i), query, keys, allocator)
          case IndexKind.NGram =>
            val text = query match {
              case IndexQuery.Contains(t) => t
              case other => throw new IllegalStateException(s"an NGRAM index does not answer $other")
            }
            val found = NGramIndex.search(snapshot.storage, snapshot.indexDir(i), NGramIndex.needleTokens(text), allocator)
            // Version 0 posting lists hold row ids (the same as addresses without stable row ids), version 1 addresses.
            i.indexVersion match {
              case 0 => if (snapshot.hasStableRowIds) addressesOf(snapshot, found, i) else found
              case 1 => found
              case v => throw new IllegalStateException(s"NGRAM index version $v is not one this reader knows (0 or 1)")
            }
          case other => throw new IllegalStateException(s"no search for $other")
        }
      }.reduce(_ union _))
    } catch {
      case NonFatal(e) =>
        IndexUse.log.warn(s"Not using index '${group.head.name}' of ${snapshot.root}@${snapshot.version}: ${e.getMessage}")
        scala.None
    } finally allocator.close()
  }

  /**
   * The rows whose stable row ids `ids` holds (as a selection by the ids' upper and lower 32 bits), by address: the
   * row id sequences of the fragments the index covers are read and matched.
   */
  private def addressesOf(snapshot: Snapshot, ids: RowSelection, index: IndexMetadata): RowSelection = {
    val wanted = new org.roaringbitmap.longlong.Roaring64NavigableMap()
    ids.byFragment.foreach { case (high, low) => low.forEach((l: Int) => wanted.addLong((high << 32) | (l & 0xFFFFFFFFL))) }
    val builder = new RowSelection.Builder(ids.exact)
    if (!wanted.isEmpty) snapshot.fragments.filter(f => index.covers(f.id)).foreach { f =>
      snapshot.rowIds(f).foreach { seq =>
        var j = 0
        while (j < seq.length) { if (wanted.contains(seq(j))) builder.addRange(f.id, j, j + 1L); j += 1 }
      }
    }
    builder.result()
  }

  private val log = org.slf4j.LoggerFactory.getLogger(classOf[IndexUse])
}
