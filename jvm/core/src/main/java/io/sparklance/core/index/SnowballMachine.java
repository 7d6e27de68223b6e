package io.sparklance.core.index;

/**
 * The state and primitive commands of a Snowball program (snowballstem.org's language for stemming algorithms), over
 * the code points of one word: the stemmers of Snowball 3.1.1's algorithms that sparklance writes itself extend it
 * (docs/dev/fts-index-format.md §2).
 *
 * <p>The state is Snowball's: the word ({@link #current}, {@link #limit} code points), the cursor, the backward
 * limit and the slice ({@link #bra}, {@link #ket}). Each command has Snowball's meaning: a test moves the cursor
 * and answers whether it held (a caller restores the cursor where Snowball would); {@code among} finds the longest
 * listed string at the cursor; a slice replacement moves the cursor and the slice as Snowball's runtime does.
 * Snowball's cursor moves by characters, so a code point above U+FFFF is one character here too.
 *
 * <p>An instance stems one word at a time (it keeps the word as state): one instance per thread.
 */
abstract class SnowballMachine {
  protected int[] current = new int[32];
  protected int limit;
  protected int cursor;
  protected int limitBackward;
  protected int bra;
  protected int ket;

  /** The algorithm's {@code stem} routine, run on the loaded word. */
  protected abstract void stem();

  /** The stem of {@code word}. */
  final String stem(String word) {
    int n = word.codePointCount(0, word.length());
    if (current.length < n) current = new int[Math.max(n, 2 * current.length)];
    int k = 0;
    for (int i = 0; i < word.length(); ) {
      int cp = word.codePointAt(i);
      current[k++] = cp;
      i += Character.charCount(cp);
    }
    limit = n;
    cursor = 0;
    limitBackward = 0;
    bra = 0;
    ket = n;
    stem();
    return new String(current, 0, limit);
  }

  /** A Snowball grouping: a set of characters (all below U+10000 in the algorithms here). */
  static final class Grouping {
    private final String chars;

    Grouping(String chars) {
      this.chars = chars;
    }

    boolean has(int c) {
      return c < 0x10000 && chars.indexOf(c) >= 0;
    }
  }

  /**
   * A Snowball {@code among}: strings, each with the result its group of the algorithm gives (1 for the first
   * group), and optionally a routine that must hold after the string matched (an entry whose routine fails lets a
   * shorter entry match, as Snowball's {@code find_among} does).
   */
  static final class Among {
    final int[][] strings;
    final int[] results;
    final int[] routines;
    /** The distinct first code points of the non-empty strings, sorted, and for each the strings' indexes. */
    private final int[] firstKeys;
    private final int[][] byFirst;
    /** The same by last code point. */
    private final int[] lastKeys;
    private final int[][] byLast;
    /** The index of the empty string, or -1. */
    private final int empty;

    /** Groups of strings; the strings of {@code groups[g]} give result g + 1. */
    Among(String[][] groups) {
      this(groups, null);
    }

    /** As {@link #Among(String[][])}, with {@code routines[g]} (0 for none) the routine of group g's strings. */
    Among(String[][] groups, int[] groupRoutines) {
      int n = 0;
      for (String[] g : groups) n += g.length;
      strings = new int[n][];
      results = new int[n];
      routines = new int[n];
      int k = 0;
      for (int g = 0; g < groups.length; g++) {
        for (String s : groups[g]) {
          strings[k] = s.codePoints().toArray();
          results[k] = g + 1;
          routines[k] = groupRoutines == null ? 0 : groupRoutines[g];
          k++;
        }
      }
      // Longest first, so that the first match is the longest (the strings of one among are distinct).
      Integer[] order = new Integer[n];
      for (int i = 0; i < n; i++) order[i] = i;
      java.util.Arrays.sort(order, (a, b) -> strings[b].length - strings[a].length);
      int[][] s2 = new int[n][];
      int[] r2 = new int[n];
      int[] t2 = new int[n];
      for (int i = 0; i < n; i++) {
        s2[i] = strings[order[i]];
        r2[i] = results[order[i]];
        t2[i] = routines[order[i]];
      }
      System.arraycopy(s2, 0, strings, 0, n);
      System.arraycopy(r2, 0, results, 0, n);
      System.arraycopy(t2, 0, routines, 0, n);
      int e = -1;
      for (int i = 0; i < n; i++) if (strings[i].length == 0) e = i;
      empty = e;
      firstKeys = keys(true);
      byFirst = buckets(firstKeys, true);
      lastKeys = keys(false);
      byLast = buckets(lastKeys, false);
    }

    private int key(int i, boolean first) {
      return first ? strings[i][0] : strings[i][strings[i].length - 1];
    }

    private int[] keys(boolean first) {
      java.util.TreeSet<Integer> set = new java.util.TreeSet<>();
      for (int i = 0; i < strings.length; i++) if (strings[i].length > 0) set.add(key(i, first));
      int[] out = new int[set.size()];
      int k = 0;
      for (int c : set) out[k++] = c;
      return out;
    }

    /** For each key, the indexes of the strings that start (or end) with it, longest first. */
    private int[][] buckets(int[] keys, boolean first) {
      int[][] out = new int[keys.length][];
      for (int k = 0; k < keys.length; k++) {
        int count = 0;
        for (int i = 0; i < strings.length; i++) if (strings[i].length > 0 && key(i, first) == keys[k]) count++;
        out[k] = new int[count];
        int j = 0;
        for (int i = 0; i < strings.length; i++) if (strings[i].length > 0 && key(i, first) == keys[k]) out[k][j++] = i;
      }
      return out;
    }

    /** The indexes of the strings that may match with {@code c} as their first (or last) code point, longest first. */
    int[] candidates(int c, boolean first) {
      int k = java.util.Arrays.binarySearch(first ? firstKeys : lastKeys, c);
      return k < 0 ? NONE : (first ? byFirst : byLast)[k];
    }

    private static final int[] NONE = new int[0];
  }

  /** The routine {@code id} of an among entry (for algorithms whose amongs name routines); the default has none. */
  protected boolean among(int id) {
    throw new IllegalStateException("no among routine " + id);
  }

  private static final int[] NONE = new int[0];

  // ---- forward commands

  protected final boolean inGrouping(Grouping g) {
    if (cursor >= limit || !g.has(current[cursor])) return false;
    cursor++;
    return true;
  }

  protected final boolean outGrouping(Grouping g) {
    if (cursor >= limit || g.has(current[cursor])) return false;
    cursor++;
    return true;
  }

  /** {@code gopast g}: past the next character in g. */
  protected final boolean goPast(Grouping g) {
    while (cursor < limit) {
      if (g.has(current[cursor++])) return true;
    }
    return false;
  }

  /** {@code gopast non-g}: past the next character not in g. */
  /**
   * The regions of the Romance algorithms (French, Italian, Romanian, Spanish): RV's start where {@code rv} leaves
   * the cursor (the end if it fails), R1's after the first non-vowel that follows a vowel, R2's the same from R1.
   */
  protected final int[] romanceRegions(Grouping vowels, java.util.function.BooleanSupplier rv) {
    int[] regions = {limit, limit, limit};
    cursor = 0;
    if (rv.getAsBoolean()) regions[0] = cursor;
    cursor = 0;
    if (goPast(vowels) && goPastNon(vowels)) {
      regions[1] = cursor;
      if (goPast(vowels) && goPastNon(vowels)) regions[2] = cursor;
    }
    return regions;
  }

  /**
   * Moves the cursor to RV's start as Spanish and Romanian define it: after the next vowel, the next consonant or the
   * third letter.
   */
  protected final boolean romanceRv(Grouping v) {
    if (inGrouping(v)) {
      if (outGrouping(v) && goPast(v)) return true;
      cursor = 1;
      return inGrouping(v) && goPastNon(v);
    }
    cursor = 0;
    if (outGrouping(v)) {
      if (outGrouping(v) && goPast(v)) return true;
      cursor = 1;
      return inGrouping(v) && next();
    }
    return false;
  }

  protected final boolean goPastNon(Grouping g) {
    while (cursor < limit) {
      if (!g.has(current[cursor++])) return true;
    }
    return false;
  }

  /** {@code next}. */
  protected final boolean next() {
    if (cursor >= limit) return false;
    cursor++;
    return true;
  }

  protected final boolean eqS(String s) {
    int n = s.length();
    if (limit - cursor < n) return false;
    for (int i = 0; i < n; i++) if (current[cursor + i] != s.charAt(i)) return false;
    cursor += n;
    return true;
  }

  /** {@code among} forwards: the result of the longest entry at the cursor (the cursor then past it), or 0. */
  protected final int findAmong(Among a) {
    int[] candidates = cursor < limit ? a.candidates(current[cursor], true) : NONE;
    for (int j = 0; j <= candidates.length; j++) {
      int k = j < candidates.length ? candidates[j] : a.empty;
      if (k < 0) break;
      int[] s = a.strings[k];
      if (limit - cursor < s.length) continue;
      int i = 0;
      while (i < s.length && current[cursor + i] == s[i]) i++;
      if (i < s.length) continue;
      int c = cursor;
      cursor = c + s.length;
      if (a.routines[k] == 0 || among(a.routines[k])) {
        cursor = c + s.length;
        return a.results[k];
      }
      cursor = c;
    }
    return 0;
  }

  // ---- backward commands

  protected final boolean inGroupingB(Grouping g) {
    if (cursor <= limitBackward || !g.has(current[cursor - 1])) return false;
    cursor--;
    return true;
  }

  protected final boolean outGroupingB(Grouping g) {
    if (cursor <= limitBackward || g.has(current[cursor - 1])) return false;
    cursor--;
    return true;
  }

  /** {@code next} backwards. */
  protected final boolean nextB() {
    if (cursor <= limitBackward) return false;
    cursor--;
    return true;
  }

  protected final boolean eqSB(String s) {
    int n = s.length();
    if (cursor - limitBackward < n) return false;
    for (int i = 0; i < n; i++) if (current[cursor - n + i] != s.charAt(i)) return false;
    cursor -= n;
    return true;
  }

  /** {@code among} backwards: the result of the longest entry ending at the cursor (the cursor then before it), or 0. */
  protected final int findAmongB(Among a) {
    int[] candidates = cursor > limitBackward ? a.candidates(current[cursor - 1], false) : NONE;
    for (int j = 0; j <= candidates.length; j++) {
      int k = j < candidates.length ? candidates[j] : a.empty;
      if (k < 0) break;
      int[] s = a.strings[k];
      int n = s.length;
      if (cursor - limitBackward < n) continue;
      int i = 0;
      while (i < n && current[cursor - n + i] == s[i]) i++;
      if (i < n) continue;
      int c = cursor;
      cursor = c - n;
      if (a.routines[k] == 0 || among(a.routines[k])) {
        cursor = c - n;
        return a.results[k];
      }
      cursor = c;
    }
    return 0;
  }

  /** {@code [substring]} backwards: the slice is the longest entry of {@code a} ending at the cursor; its result or 0. */
  protected final int suffix(Among a) {
    ket = cursor;
    int r = findAmongB(a);
    if (r != 0) bra = cursor;
    return r;
  }

  /**
   * {@code setlimit tomark p for ([substring])}: as {@link #suffix}, with the entry inside the region from {@code p}
   * (0 where the cursor is before {@code p}).
   */
  protected final int suffixFrom(int p, Among a) {
    if (cursor < p) return 0;
    int saved = limitBackward;
    limitBackward = p;
    int r = suffix(a);
    limitBackward = saved;
    return r;
  }

  /** {@code ['s']} backwards: the slice is {@code s} where the word ends with it at the cursor. */
  protected final boolean suffix(String s) {
    ket = cursor;
    if (!eqSB(s)) return false;
    bra = cursor;
    return true;
  }

  /** The character before the cursor, or -1 at the backward limit. */
  protected final int charBefore() {
    return cursor <= limitBackward ? -1 : current[cursor - 1];
  }

  // ---- slices

  /** Replaces code points [cBra, cKet) by {@code s}, moving the cursor as Snowball's runtime; the length change. */
  protected final int replace(int cBra, int cKet, String s) {
    int[] cps = s.codePoints().toArray();
    int adjustment = cps.length - (cKet - cBra);
    if (limit + adjustment > current.length) {
      current = java.util.Arrays.copyOf(current, Math.max(limit + adjustment, 2 * current.length));
    }
    if (adjustment != 0 && cKet < limit) System.arraycopy(current, cKet, current, cBra + cps.length, limit - cKet);
    System.arraycopy(cps, 0, current, cBra, cps.length);
    limit += adjustment;
    if (cursor >= cKet) cursor += adjustment;
    else if (cursor > cBra) cursor = cBra;
    return adjustment;
  }

  /** {@code <- s}: the slice becomes {@code s}. */
  protected final void sliceFrom(String s) {
    if (bra < 0 || bra > ket || ket > limit) throw new IllegalStateException("slice [" + bra + ", " + ket + ")");
    replace(bra, ket, s);
    ket = bra + s.codePointCount(0, s.length());
  }

  /** {@code delete}. */
  protected final void sliceDel() {
    sliceFrom("");
  }

  /** {@code insert s} / {@code attach s} at [cBra, cKet). */
  protected final void insert(int cBra, int cKet, String s) {
    int adjustment = replace(cBra, cKet, s);
    if (cBra <= bra) bra += adjustment;
    if (cBra <= ket) ket += adjustment;
  }

  /** {@code -> s}: the slice's text. */
  protected final String slice() {
    return new String(current, bra, ket - bra);
  }
}
