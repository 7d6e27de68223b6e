package io.sparklance.core.encoding

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

/**
 * Repetition and definition levels written by hand in Lance's convention (definition 0 is a valid item; layers
 * innermost first; a non-zero repetition level starts a list), unravelled into validity and offsets.
 */
class RepDefSuite extends AnyFunSuite {
  import EncodingTesting._
  import RepDef._

  private def shorts(xs: Int*): Array[Short] = xs.map(_.toShort).toArray

  private def validity(v: Validity): Seq[Boolean] = (0 until v.count).map(v.isValid)

  private def composite(us: Unraveler*): Composite = new Composite(us.asJava)

  // Rows of list<int?> with null and empty lists: [1, null], null, [], [3]
  // levels: 0 valid item, 1 null item, 2 null list, 3 empty list; rep 1 starts a list.
  private val listLayers = Array(NULLABLE_ITEM, NULL_AND_EMPTY_LIST)
  private def listLevels = new Unraveler(shorts(1, 0, 1, 1, 1), shorts(0, 1, 2, 3, 0), 5, listLayers, 3)

  test("a list with null items, a null list and an empty list") {
    val u = listLevels
    assert(u.numRows() == 4 && u.countItems(4) == 3 && u.maxVisibleDef() == 1)
    val c = composite(u)
    assert(validity(c.unravelValidity(3)) == Seq(true, false, true))
    val o = c.unravelOffsets()
    assert(o.offsets.take(o.count + 1).toSeq == Seq(0L, 2L, 2L, 2L, 3L))
    assert(validity(o.validity) == Seq(true, false, true, true))
  }

  test("slices of a page's levels cover exactly their rows and items, and leave the page's levels as they were") {
    val u = listLevels
    for (from <- 0 to 4; to <- from to 4) {
      val s = u.slice(from, to)
      val part = s(0).asInstanceOf[Unraveler]
      val items = s(1).asInstanceOf[Array[Int]]
      val wantItems = Seq(0, 2, 2, 2, 3)
      assert(items.toSeq == Seq(wantItems(from), wantItems(to)), s"rows [$from, $to)")
      assert(part.numRows() == to - from)
      val c = composite(part)
      c.unravelValidity(items(1) - items(0))
      assert(c.unravelOffsets().count == to - from)
    }
    assert(u.numRows() == 4)
    assert(damaged("past the end")(u.slice(2, 5)).getMessage == "rows [2, 5) of 4")
    damaged("backwards")(u.slice(3, 2))
  }

  test("levels of two pages unravel as one column") {
    val a = new Unraveler(shorts(1, 0, 1), shorts(0, 1, 2), 3, listLayers, 2)          // [1, null], null
    val b = new Unraveler(shorts(1, 1), shorts(3, 0), 2, listLayers, 1)                // [], [3]
    val c = composite(a, b)
    assert(validity(c.unravelValidity(3)) == Seq(true, false, true))
    val o = c.unravelOffsets()
    assert(o.offsets.take(o.count + 1).toSeq == Seq(0L, 2L, 2L, 2L, 3L) && validity(o.validity) == Seq(true, false, true, true))
  }

  test("a list of nullable structs of nullable items: null items, null structs, null and empty lists") {
    // layers: item (nullable), struct (nullable), list (nullable and emptyable)
    // def: 0 valid, 1 null item, 2 null struct, 3 null list, 4 empty list
    // rows: [{1}, {null}, null], null, [], [{2}]
    val layers = Array(NULLABLE_ITEM, NULLABLE_ITEM, NULL_AND_EMPTY_LIST)
    val u = new Unraveler(shorts(1, 0, 0, 1, 1, 1), shorts(0, 1, 2, 3, 4, 0), 6, layers, 4)
    assert(u.maxVisibleDef() == 2 && u.countItems(4) == 4)
    val c = composite(u)
    assert(validity(c.unravelValidity(4)) == Seq(true, false, false, true))   // items
    assert(validity(c.unravelValidity(4)) == Seq(true, true, false, true))    // structs
    val o = c.unravelOffsets()
    assert(o.offsets.take(o.count + 1).toSeq == Seq(0L, 3L, 3L, 3L, 4L) && validity(o.validity) == Seq(true, false, true, true))
  }

  test("a struct of a list: a null struct is an entry of the list layer with no items") {
    // layers: item (all valid), list (nullable and emptyable), struct (nullable)
    // def: 0 valid, 1 null list, 2 empty list, 3 null struct; rows: {[1, 2]}, null, {null}, {[]}
    val layers = Array(ALL_VALID_ITEM, NULL_AND_EMPTY_LIST, NULLABLE_ITEM)
    val u = new Unraveler(shorts(1, 0, 1, 1, 1), shorts(0, 0, 3, 1, 2), 5, layers, 2)
    val c = composite(u)
    assert(c.unravelValidity(2).bits == null)
    val o = c.unravelOffsets()
    assert(o.offsets.take(o.count + 1).toSeq == Seq(0L, 2L, 2L, 2L, 2L) && validity(o.validity) == Seq(true, false, false, true))
    assert(validity(c.unravelValidity(4)) == Seq(true, false, true, true))
  }

  test("lists of lists: an inner list starts at repetition 1, an outer one at 2") {
    // layers: item (all valid), inner list (emptyable), outer list (all valid). def: 0 valid, 1 empty inner list
    // rows: [[1, 2], [], [3]], [[4]]
    val layers = Array(ALL_VALID_ITEM, EMPTYABLE_LIST, ALL_VALID_LIST)
    val u = new Unraveler(shorts(2, 0, 1, 1, 2), shorts(0, 0, 1, 0, 0), 5, layers, 4)
    assert(u.numRows() == 2)
    val c = composite(u)
    c.unravelValidity(4)
    val inner = c.unravelOffsets()
    assert(inner.offsets.take(inner.count + 1).toSeq == Seq(0L, 2L, 2L, 3L, 4L))
    val outer = c.unravelOffsets()
    assert(outer.offsets.take(outer.count + 1).toSeq == Seq(0L, 3L, 4L) && outer.validity.bits == null)
  }

  test("pages without levels: every item valid, one row per item") {
    val u = new Unraveler(null, null, 0, Array(ALL_VALID_ITEM), 7)
    assert(u.numRows() == 7 && u.countItems(7) == 7)
    val s = u.slice(2, 5)
    assert(s(1).asInstanceOf[Array[Int]].toSeq == Seq(2, 5))
    assert(composite(s(0).asInstanceOf[Unraveler]).unravelValidity(3).bits == null)
  }

  test("levels out of range, too few layers and layers of the wrong kind are EncodingExceptions") {
    assert(damaged("def")(new Unraveler(null, shorts(0, 4), 2, listLayers, 1)).getMessage == "definition level 4 where at most 3 exist")
    damaged("negative def")(new Unraveler(null, shorts(-1), 1, listLayers, 1))
    assert(damaged("rep")(new Unraveler(shorts(2), shorts(0), 1, listLayers, 1)).getMessage == "repetition level 2 where at most 1 exist")
    val c = composite(new Unraveler(null, shorts(0, 1), 2, Array(NULLABLE_ITEM), 2))
    c.unravelValidity(2)
    assert(damaged("a layer too many")(c.unravelValidity(2)).getMessage == "the column's levels have 1 layers, more are needed")
    assert(damaged("list where an item is")(composite(new Unraveler(null, shorts(0), 1, Array(NULLABLE_ITEM), 1)).unravelOffsets())
      .getMessage == "a list level where the column has a struct or item level")
    val noRep = composite(new Unraveler(null, shorts(0, 1), 2, listLayers, 2))
    noRep.unravelValidity(2)
    assert(damaged("no repetition")(noRep.unravelOffsets()).getMessage == "a list column page without repetition levels")
    assert(damaged("item where a list is")(composite(listLevels).unravelOffsets()).getMessage ==
      "a list level where the column has a struct or item level")
    assert(damaged("count")(composite(listLevels).unravelValidity(4)).getMessage == "levels describe 3 values, 4 expected")
    assert(damaged("unknown layer")(layers(List(io.sparklance.proto.Encodings21Protos.RepDefLayer.REPDEF_UNSPECIFIED).asJava))
      .getMessage.startsWith("unknown rep/def layer"))
  }
}
