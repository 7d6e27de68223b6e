package io.sparklance.core.table

/**
 * The semantics of a [[Predicate]] on one row of boxed values, for tests to compare scans with: nulls (None) match
 * nothing but IS NULL; `compare(column, value, literal)` gives the sign of value - literal in the suite's own terms.
 * A list is a `Seq` of its items, None for a null item; `compare` then compares an item with a literal.
 */
object PredicateModel {
  def matches(p: Predicate, value: String => Option[Any], compare: (String, Any, Any) => Int): Boolean = p match {
    case Predicate.And(l, r) => matches(l, value, compare) && matches(r, value, compare)
    case Predicate.Or(l, r) => matches(l, value, compare) || matches(r, value, compare)
    case Predicate.IsNull(c) => value(c).isEmpty
    case Predicate.IsNotNull(c) => value(c).isDefined
    case Predicate.StringMatch(c, op, text) => value(c).exists {
      case s: String => op match {
        case Predicate.StringOp.StartsWith => s.startsWith(text)
        case Predicate.StringOp.EndsWith => s.endsWith(text)
        case Predicate.StringOp.Contains => s.contains(text)
      }
      case other => throw new IllegalArgumentException(s"column $c holds $other, not a string")
    }
    case Predicate.In(c, vs) => value(c).exists(v => vs.exists(compare(c, v, _) == 0))
    case Predicate.ListHasAny(c, vs) => value(c).exists {
      case items: Seq[_] => items.exists(i => i != None && vs.exists(compare(c, i, _) == 0))
      case other => throw new IllegalArgumentException(s"column $c holds $other, not a list")
    }
    case m: Predicate.FullTextMatch => throw new UnsupportedOperationException(s"$m depends on an index's text " +
      "analysis, which this model does not hold; tests/test_full_text_search.py checks it against pylance")
    case Predicate.Compare(c, op, literal) => value(c).exists { v =>
      val k = compare(c, v, literal)
      op match {
        case Predicate.Op.Eq => k == 0
        case Predicate.Op.Lt => k < 0
        case Predicate.Op.Le => k <= 0
        case Predicate.Op.Gt => k > 0
        case Predicate.Op.Ge => k >= 0
      }
    }
  }
}
