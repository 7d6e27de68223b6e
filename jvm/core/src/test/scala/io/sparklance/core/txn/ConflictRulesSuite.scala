package io.sparklance.core.txn

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.proto.TableProtos

/** The conflict table of [[ConflictRules]], pair by pair. */
class ConflictRulesSuite extends AnyFunSuite {
  private def frag(id: Long) = TableProtos.DataFragment.newBuilder().setId(id).build()
  private val append = Operation.Append(Seq(frag(0)))
  private val overwrite = Operation.Overwrite(Nil, Nil, Map.empty, Map.empty)
  private def delete(updated: Long*)(removed: Long*) = Operation.Delete(updated.map(frag), removed, "")
  private def update(updated: Long*)(removed: Long*) = Operation.Update(removed, updated.map(frag), Seq(frag(0)))
  private val other = Operation.Other("rewrite")

  private def ok(ours: Operation, theirs: Operation) = ConflictRules.compatible(ours, Some(theirs))

  test("appends commute with appends, deletes and updates, not with overwrites or unknown operations") {
    assert(ok(append, append) && ok(append, delete(1)()) && ok(append, update(1)(2)))
    assert(!ok(append, overwrite) && !ok(append, other))
    assert(!ConflictRules.compatible(append, None))
  }

  test("deletes and updates commute with appends and with changes of other fragments") {
    assert(ok(delete(1)(), append) && ok(update(1)(), append))
    assert(ok(delete(1)(2), delete(3)(4)))
    assert(ok(update(1)(), delete(2)()))
    assert(ok(delete(1)(), update(2)(3)))
  }

  test("deletes and updates of the same fragment conflict, whether updated or removed") {
    assert(!ok(delete(1)(), delete(1)()))
    assert(!ok(delete(1)(), delete()(1)))
    assert(!ok(delete()(1), update(1)()))
    assert(!ok(update(2)(), update()(2)))
  }

  test("nothing rebases over an overwrite except an overwrite; an overwrite rebases over everything known") {
    assert(!ok(delete(1)(), overwrite) && !ok(update(1)(), overwrite))
    assert(ok(overwrite, append) && ok(overwrite, overwrite) && ok(overwrite, delete(1)()) && ok(overwrite, update(1)()))
    assert(!ok(overwrite, other) && !ok(delete(1)(), other))
  }

  test("a schema change combines with nothing, in either direction") {
    val project = Operation.Project(Nil)
    Seq(append, overwrite, delete(1)(), update(1)(), project).foreach { op =>
      assert(!ok(project, op), op)
      assert(!ok(op, project) || op == overwrite, op)
    }
  }
}
