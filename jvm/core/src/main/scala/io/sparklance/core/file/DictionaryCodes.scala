package io.sparklance.core.file

import io.sparklance.core.encoding.DataBlock

/**
 * Rows of a column read as the indices of their values in the dictionaries of the pages that hold them, without
 * the values themselves: what lets a filter be evaluated once per dictionary item rather than once per row.
 *
 * `ids(i)` is the position of row i's value among `items` (the dictionaries of the pages read, in page order), or
 * -1 when the row is null. `dictionary` is the same object for every read whose items are the same object (rows of
 * one page), so a caller can keep what it computed on the items from read to read.
 */
final class DictionaryCodes(val items: DataBlock, val ids: Array[Int], val dictionary: AnyRef)
