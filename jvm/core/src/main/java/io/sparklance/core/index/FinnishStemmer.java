package io.sparklance.core.index;

/**
 * Snowball 3.1.1's Finnish stemmer (snowballstem.org, algorithms/finnish), which pylance 14 runs for {@code language
 * = Finnish}. Against 2.x (Lucene's) an apostrophe may stand for the vowel of an illative and goes at the end, ø may
 * precede {@code -hön}, {@code -hun} is no illative, and where an illative's vowel does not match the word is taken
 * as a genitive ({@code -n} goes).
 */
final class FinnishStemmer extends SnowballMachine {
  private static final Grouping AEI = new Grouping("aäei");
  private static final Grouping C = new Grouping("bcdfghjklmnpqrstvwxz");
  private static final Grouping V = new Grouping("aeiouyäö");
  private static final Grouping PARTICLE_END = new Grouping("aeiouyäönt");

  private static final Among PARTICLE = new Among(new String[][] {
      {"kin", "kaan", "kään", "ko", "kö", "han", "hän", "pa", "pä"}, {"sti"}});
  private static final Among POSSESSIVE = new Among(new String[][] {
      {"si"}, {"ni"}, {"nsa", "nsä", "mme", "nne"}, {"an"}, {"än"}, {"en"}});
  private static final Among BEFORE_AN = new Among(new String[][] {{"ta", "ssa", "sta", "lla", "lta", "na"}});
  private static final Among BEFORE_AEN = new Among(new String[][] {{"tä", "ssä", "stä", "llä", "ltä", "nä"}});
  private static final Among BEFORE_EN = new Among(new String[][] {{"lle", "ine"}});
  private static final Among LV = new Among(new String[][] {{"aa", "ee", "ii", "oo", "uu", "ää", "öö"}});
  private static final Among VI = new Among(new String[][] {{"ai", "ei", "ii", "oi", "ui", "äi", "öi", "'"}});

  private static final int R_A = 1;
  private static final int R_E = 2;
  private static final int R_I = 3;
  private static final int R_O = 4;
  private static final int R_U = 5;
  private static final int R_A_ = 6;
  private static final int R_O_ = 7;
  private static final int R_VI = 8;
  private static final int R_LV = 9;
  /** The entries of case_ending up to {@code -tten} (results 1-11) are kept, each under its own condition. */
  private static final Among CASE = new Among(new String[][] {
      {"hän"}, {"hön"}, {"han"}, {"hen"}, {"hin"}, {"hon"}, {"hun"}, {"siin"}, {"seen"}, {"den"}, {"tten"},
      {"n"},
      {"a", "ä"},
      {"tta", "ttä"},
      {"ta", "tä", "ssa", "ssä", "sta", "stä", "lla", "llä", "lta", "ltä", "lle", "na", "nä", "ksi", "ine"}},
      new int[] {R_A_, R_O_, R_A, R_E, R_I, R_O, R_U, R_VI, R_LV, R_VI, R_VI, 0, 0, 0, 0});
  private static final Among OTHER = new Among(new String[][] {
      {"mpi", "mpa", "mpä", "mmi", "mma", "mmä"}, {"impi", "impa", "impä", "immi", "imma", "immä", "eja", "ejä"}});
  private static final Among I_PLURAL = new Among(new String[][] {{"i", "j"}});
  private static final Among T_PLURAL = new Among(new String[][] {{"mma"}, {"imma"}});

  private int p1;
  private int p2;
  private boolean endingRemoved;

  @Override
  protected boolean among(int id) {
    switch (id) {
      case R_A: return eqSB("a") || eqSB("'");
      case R_E: return eqSB("e") || eqSB("'");
      case R_I: return eqSB("i") || eqSB("'");
      case R_O: return eqSB("o") || eqSB("'");
      case R_U: return eqSB("u") || eqSB("'");
      case R_A_: return eqSB("ä") || eqSB("'");
      case R_O_: return eqSB("ö") || eqSB("ø") || eqSB("'");
      case R_VI: return findAmongB(VI) != 0;
      case R_LV: return findAmongB(LV) != 0;
      default: return super.among(id);
    }
  }

  @Override
  protected void stem() {
    p1 = limit;
    p2 = limit;
    cursor = 0;
    if (goPast(V) && goPastNon(V)) {
      p1 = cursor;
      if (goPast(V) && goPastNon(V)) p2 = cursor;
    }
    endingRemoved = false;
    cursor = limit;
    particleEtc();
    cursor = limit;
    possessive();
    cursor = limit;
    caseEnding();
    cursor = limit;
    int other = suffixFrom(p2, OTHER);
    if (other == 2 || (other == 1 && !eqSB("po"))) sliceDel();
    cursor = limit;
    if (endingRemoved) {
      if (suffixFrom(p1, I_PLURAL) != 0) sliceDel();
    } else {
      tPlural();
    }
    cursor = limit;
    tidy();
  }

  private void particleEtc() {
    int r = suffixFrom(p1, PARTICLE);
    if (r == 1 && !inGroupingB(PARTICLE_END)) return;
    if (r == 2 && cursor < p2) return;
    if (r != 0) sliceDel();
  }

  private void possessive() {
    switch (suffixFrom(p1, POSSESSIVE)) {
      case 1:
        if (!eqSB("k")) sliceDel();
        break;
      case 2:
        sliceDel();
        if (suffix("kse")) sliceFrom("ksi");
        break;
      case 3:
        sliceDel();
        break;
      case 4:
        if (findAmongB(BEFORE_AN) != 0) sliceDel();
        break;
      case 5:
        if (findAmongB(BEFORE_AEN) != 0) sliceDel();
        break;
      case 6:
        if (findAmongB(BEFORE_EN) != 0) sliceDel();
        break;
      default:
        break;
    }
  }

  private void caseEnding() {
    int r = suffixFrom(p1, CASE);
    if (r == 0) return;
    int c = cursor;
    switch (r) {
      case 12:
        if (findAmongB(LV) != 0 || restore(c) && eqSB("ie")) {
          cursor = c;
          if (nextB()) bra = cursor;
          else cursor = c;
        } else {
          cursor = c;
        }
        break;
      case 13:
        if (!(inGroupingB(V) && inGroupingB(C))) return;
        break;
      case 14:
        if (!eqSB("e")) return;
        break;
      default:
        break;
    }
    sliceDel();
    endingRemoved = true;
  }

  private void tPlural() {
    if (cursor < p1) return;
    int saved = limitBackward;
    limitBackward = p1;
    boolean removed = false;
    if (suffix("t")) {
      int c = cursor;
      if (inGroupingB(V)) {
        cursor = c;
        sliceDel();
        removed = true;
      }
    }
    limitBackward = saved;
    if (!removed) return;
    int r = suffixFrom(p2, T_PLURAL);
    if (r == 1) {
      if (!eqSB("po")) sliceDel();
    } else if (r == 2) {
      sliceDel();
    }
  }

  private void tidy() {
    if (cursor >= p1) {
      int saved = limitBackward;
      limitBackward = p1;
      if (findAmongB(LV) != 0) {
        cursor = limit;
        ket = cursor;
        if (nextB()) {
          bra = cursor;
          sliceDel();
        }
      }
      cursor = limit;
      ket = cursor;
      if (inGroupingB(AEI)) {
        bra = cursor;
        if (inGroupingB(C)) sliceDel();
      }
      cursor = limit;
      if (suffix("j")) {
        int c = cursor;
        if (eqSB("o") || restore(c) && eqSB("u")) sliceDel();
      }
      cursor = limit;
      if (suffix("o") && eqSB("j")) sliceDel();
      limitBackward = saved;
    }
    cursor = limit;
    while (cursor > limitBackward && V.has(current[cursor - 1])) cursor--;
    if (cursor > limitBackward) {
      ket = cursor;
      if (inGroupingB(C)) {
        bra = cursor;
        if (charBefore() == current[bra]) sliceDel();
      }
    }
    cursor = limit;
    if (suffix("'")) sliceDel();
  }

  private boolean restore(int c) {
    cursor = c;
    return true;
  }
}
