package io.sparklance.core.index;

/**
 * Snowball 3.1.1's Danish stemmer (snowballstem.org, algorithms/danish), which pylance 14 runs for {@code language =
 * Danish}. Against 2.x (Lucene's) R1 starts after an apostrophe where the word holds one, a trailing apostrophe goes,
 * and only the consonants b, d, f, g, k, l, m, n, p, r, s, t are undoubled.
 */
final class DanishStemmer extends SnowballMachine {
  private static final Grouping V = new Grouping("aeiouyæåø");
  private static final Grouping UNDOUBLE = new Grouping("bdfgklmnprst");
  private static final Grouping S_ENDING = new Grouping("abcdfghjklmnoprtvyzå'");

  private static final Among MAIN = new Among(new String[][] {
      {"hed", "ethed", "ered", "e", "erede", "ende", "erende", "ene", "erne", "ere", "en", "heden", "eren", "er",
          "heder", "erer", "heds", "es", "endes", "erendes", "enes", "ernes", "eres", "ens", "hedens", "erens", "ers",
          "ets", "erets", "et", "eret"},
      {"s"}});
  private static final Among PAIR = new Among(new String[][] {{"gd", "dt", "gt", "kt"}});
  private static final Among OTHER = new Among(new String[][] {{"ig", "lig", "elig", "els"}, {"løst"}});

  private int p1;

  @Override
  protected void stem() {
    if (!markRegions()) return;
    cursor = limit;
    int r = suffixFrom(p1, MAIN);
    if (r == 1 || (r == 2 && inGroupingB(S_ENDING))) sliceDel();
    cursor = limit;
    consonantPair();
    cursor = limit;
    otherSuffix();
    cursor = limit;
    undouble();
    cursor = limit;
    if (suffix("'")) sliceDel();
  }

  /** R1's start; false for a word of fewer than 3 characters (which stays as it is). */
  private boolean markRegions() {
    p1 = limit;
    cursor = 0;
    if (goPastString("'")) {
      p1 = cursor;
    } else {
      cursor = 0;
      if (goPast(V) && goPastNon(V)) p1 = cursor;
    }
    if (limit < 3) return false;
    if (p1 < 3) p1 = 3;
    return true;
  }

  private boolean goPastString(String s) {
    while (cursor < limit) {
      if (eqS(s)) return true;
      cursor++;
    }
    return false;
  }

  private boolean consonantPair() {
    int c = cursor;
    if (suffixFrom(p1, PAIR) == 0) return false;
    cursor = c;
    ket = cursor;
    if (!nextB()) return false;
    bra = cursor;
    sliceDel();
    return true;
  }

  private void otherSuffix() {
    if (suffix("st") && eqSB("ig")) sliceDel();
    cursor = limit;
    int r = suffixFrom(p1, OTHER);
    if (r == 1) {
      sliceDel();
      consonantPair();
    } else if (r == 2) {
      sliceFrom("løs");
    }
  }

  private void undouble() {
    if (cursor < p1) return;
    int saved = limitBackward;
    limitBackward = p1;
    ket = cursor;
    boolean found = inGroupingB(UNDOUBLE);
    bra = cursor;
    limitBackward = saved;
    if (!found) return;
    int ch = current[bra];
    if (charBefore() == ch) sliceDel();
  }
}
