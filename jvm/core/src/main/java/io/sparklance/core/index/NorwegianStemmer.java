package io.sparklance.core.index;

/**
 * Snowball 3.1.1's Norwegian stemmer (snowballstem.org, algorithms/norwegian), which pylance 14 runs for {@code
 * language = Norwegian}. Against 2.x (Lucene's) R1 starts after an apostrophe where the word holds one, a trailing
 * apostrophe goes, ê, ò, ó and ô are vowels, {@code -ers} goes unless an ending such as {@code -kk}, {@code -lt}
 * precedes it, {@code -s} goes after {@code r} (not {@code er}) and after {@code k} with a consonant before it, and
 * {@code -ert(e)} becomes {@code -er}.
 */
final class NorwegianStemmer extends SnowballMachine {
  private static final Grouping V = new Grouping("aeêioòóôuyæåø");
  private static final Grouping S_ENDING = new Grouping("bcdfghjlmnoptvyz");

  private static final Among MAIN = new Among(new String[][] {
      {"a", "e", "ede", "ande", "ende", "ane", "ene", "hetene", "en", "heten", "ar", "er", "heter", "as", "es",
          "edes", "endes", "enes", "hetenes", "ens", "hetens", "ets", "et", "het", "ast"},
      {"ers"},
      {"s"},
      {"erte", "ert"}});
  private static final Among BEFORE_ERS = new Among(new String[][] {
      {"amm", "ast", "ind", "kap", "kk", "lt", "nk", "omm", "pp", "v", "øst"},
      {"giv", "hav", "skap", ""}});
  private static final Among PAIR = new Among(new String[][] {{"dt", "vt"}});
  private static final Among OTHER = new Among(new String[][] {{
      "leg", "eleg", "ig", "eig", "lig", "elig", "els", "lov", "elov", "slov", "hetslov"}});

  private int p1;

  @Override
  protected void stem() {
    if (!markRegions()) return;
    cursor = limit;
    mainSuffix();
    cursor = limit;
    consonantPair();
    cursor = limit;
    if (suffixFrom(p1, OTHER) != 0) sliceDel();
    cursor = limit;
    if (suffix("'")) sliceDel();
  }

  /** R1's start; false for a word of fewer than 3 characters (which stays as it is). */
  private boolean markRegions() {
    p1 = limit;
    cursor = 0;
    boolean apostrophe = false;
    while (cursor < limit) {
      if (current[cursor++] == '\'') {
        apostrophe = true;
        break;
      }
    }
    if (apostrophe) {
      p1 = cursor;
    } else {
      cursor = 0;
      if (goPast(V) && goPastNon(V)) p1 = cursor;
    }
    if (limit < 3) return false;
    if (p1 < 3) p1 = 3;
    return true;
  }

  private void mainSuffix() {
    switch (suffixFrom(p1, MAIN)) {
      case 1:
        sliceDel();
        break;
      case 2:
        if (findAmongB(BEFORE_ERS) == 2) sliceDel();
        break;
      case 3: {
        int c = cursor;
        boolean delete = inGroupingB(S_ENDING);
        if (!delete) {
          cursor = c;
          delete = eqSB("r") && !eqSB("e");
        }
        if (!delete) {
          cursor = c;
          delete = eqSB("k") && outGroupingB(V);
        }
        if (delete) sliceDel();
        break;
      }
      case 4:
        sliceFrom("er");
        break;
      default:
        break;
    }
  }

  private void consonantPair() {
    int c = cursor;
    if (suffixFrom(p1, PAIR) == 0) return;
    cursor = c;
    ket = cursor;
    if (!nextB()) return;
    bra = cursor;
    sliceDel();
  }
}
