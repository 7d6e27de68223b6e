package io.sparklance.core.index;

/**
 * Snowball 3.1.1's Swedish stemmer (snowballstem.org, algorithms/swedish), which pylance 14 runs for {@code language
 * = Swedish}. Against 2.x (Lucene's) it removes {@code -et} and {@code -ets} where a consonant and a vowel precede
 * them and the word does not end as a listed exception ({@code -het}, {@code -itet} forms, {@code komet}, ...),
 * turns {@code -öst} into {@code -ös} after any of i, k, l, n, p, r, t, u, v, and undoubles {@code dd}, {@code nn}
 * and {@code tt} as well.
 */
final class SwedishStemmer extends SnowballMachine {
  private static final Grouping V = new Grouping("aeiouyäåö");
  private static final Grouping S_ENDING = new Grouping("bcdfghjklmnoprtvy");
  private static final Grouping OST_ENDING = new Grouping("iklnprtuv");

  private static final Among ET_EXCEPTIONS = new Among(new String[][] {{
      "h", "iet", "uit", "fab", "cit", "dit", "alit", "ilit", "mit", "nit", "pit", "rit", "sit", "tit", "ivit", "kvit",
      "xit", "kom", "rak", "pak", "stak"}});
  private static final Among MAIN = new Among(new String[][] {
      {"a", "arna", "erna", "heterna", "orna", "ad", "e", "ade", "ande", "arne", "are", "aste", "en", "anden", "aren",
          "heten", "ern", "ar", "er", "heter", "or", "as", "arnas", "ernas", "ornas", "es", "ades", "andes", "ens",
          "arens", "hetens", "erns", "at", "andet", "het", "ast"},
      {"s"},
      {"et"}});
  private static final Among PAIR = new Among(new String[][] {{"dd", "gd", "nn", "dt", "gt", "kt", "tt"}});
  private static final Among OTHER = new Among(new String[][] {{"lig", "ig", "els"}, {"öst"}, {"fullt"}});

  private int p1;

  @Override
  protected void stem() {
    markRegions();
    cursor = limit;
    mainSuffix();
    cursor = limit;
    consonantPair();
    cursor = limit;
    otherSuffix();
  }

  private void markRegions() {
    p1 = limit;
    if (limit < 3) return;
    int x = 3;
    cursor = 0;
    if (!(goPast(V) && goPastNon(V))) return;
    p1 = Math.max(cursor, x);
  }

  /** At the start of {@code -et}: whether to remove it. */
  private boolean etCondition() {
    int c = cursor;
    boolean holds = outGroupingB(V) && inGroupingB(V) && cursor > limitBackward;
    cursor = c;
    if (holds && findAmongB(ET_EXCEPTIONS) != 0) holds = false;
    cursor = c;
    return holds;
  }

  private void mainSuffix() {
    switch (suffixFrom(p1, MAIN)) {
      case 1:
        sliceDel();
        break;
      case 2: {
        int c = cursor;
        if (eqSB("et") && etCondition()) {
          bra = cursor;
          sliceDel();
          break;
        }
        cursor = c;
        if (inGroupingB(S_ENDING)) sliceDel();
        break;
      }
      case 3:
        if (etCondition()) sliceDel();
        break;
      default:
        break;
    }
  }

  private void consonantPair() {
    if (cursor < p1) return;
    int saved = limitBackward;
    limitBackward = p1;
    int c = cursor;
    if (findAmongB(PAIR) != 0) {
      cursor = c;
      ket = cursor;
      if (nextB()) {
        bra = cursor;
        sliceDel();
      }
    }
    limitBackward = saved;
  }

  private void otherSuffix() {
    switch (suffixFrom(p1, OTHER)) {
      case 1:
        sliceDel();
        break;
      case 2:
        if (inGroupingB(OST_ENDING)) sliceFrom("ös");
        break;
      case 3:
        sliceFrom("full");
        break;
      default:
        break;
    }
  }
}
