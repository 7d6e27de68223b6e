package io.sparklance.core.index;

/**
 * Snowball 3.1.1's Dutch stemmer (snowballstem.org, algorithms/dutch: the Kraaij-Pohlmann algorithm, Snowball's
 * Dutch since 3.0), which pylance 14 runs for {@code language = Dutch}. Snowball 2.x (Lucene's {@code
 * DutchStemmer}) is Porter's other algorithm, now {@code dutch_porter}.
 */
final class DutchStemmer extends SnowballMachine {
  private static final String A = "aäáàâ";
  private static final String E = "eëéèê";
  private static final String I = "iïíìî";
  private static final String O = "oöóòô";
  private static final String U = "uüúùû";
  private static final Grouping G_E = new Grouping(E);
  private static final Grouping AIOU = new Grouping(A + I + O + U);
  private static final Grouping AEIOU = new Grouping(A + E + I + O + U);
  private static final Grouping V = new Grouping(A + E + I + O + U + "y");
  private static final Grouping V_WX = new Grouping(A + E + I + O + U + "ywx");

  private static final Among LENGTHEN = new Among(new String[][] {
      {"a", "ä", "á", "à", "â", "o", "ö", "ó", "ò", "ô", "u", "ü", "ú", "ù", "û"},
      {"e", "é", "è", "ê"},
      {"eë"},
      {"ië"}});
  private static final Among STEP1 = new Among(new String[][] {
      {"'s"}, {"s"}, {"ies"}, {"es"}, {"és"}, {"aus"}, {"en"}, {"nde"}});
  private static final Among STEP2 = new Among(new String[][] {
      {"je"}, {"ge"}, {"lijke"}, {"ische"}, {"de"}, {"te"}, {"se"}, {"re"}, {"le"}, {"ene"}, {"ieve"}});
  private static final Among STEP3 = new Among(new String[][] {
      {"atie"}, {"iteit"}, {"heid", "sel", "ster"}, {"rder"}, {"ing", "isme", "erij"}, {"arij"}, {"fie"}, {"gie"},
      {"tst"}, {"dst"}});
  private static final Among STEP4 = new Among(new String[][] {
      {"ioneel"}, {"atief"}, {"baar"}, {"naar"}, {"laar"}, {"raar"}, {"tant"}, {"lijker", "lijkst"},
      {"achtig", "achtiger", "achtigst"}, {"eriger", "erigst", "erig", "end"}});
  private static final Among STEP4_IG = new Among(new String[][] {{"iger", "igst", "ig"}});
  private static final Among STEP7 = new Among(new String[][] {{"kt"}, {"ft"}, {"pt"}});
  private static final String[] STEP7_TO = {"k", "f", "p"};
  private static final Among STEP6 = new Among(new String[][] {
      {"bb"}, {"cc"}, {"dd"}, {"ff"}, {"gg"}, {"hh"}, {"jj"}, {"kk"}, {"ll"}, {"mm"}, {"nn"}, {"pp"}, {"qq"}, {"rr"},
      {"ss"}, {"tt"}, {"vv"}, {"ww"}, {"xx"}, {"zz"}, {"v"}, {"z"}});
  private static final String[] STEP6_TO = {
      "b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "q", "r", "s", "t", "v", "w", "x", "z", "f", "s"};
  private static final Among STEP1C = new Among(new String[][] {{"d"}, {"t"}});
  private static final Among PREFIX_EXCEPTIONS = new Among(new String[][] {
      {"eft", "val", "vaa", "vare"}, {"vali", ""}});
  private static final Among DIAERESIS = new Among(new String[][] {{"ë"}, {"ï"}});

  private int p1;
  private int p2;
  private boolean stemmed;
  private boolean geRemoved;

  @Override
  protected void stem() {
    stemmed = false;
    measure();
    cursor = limit;
    if (step1()) stemmed = true;
    cursor = limit;
    if (step2()) stemmed = true;
    cursor = limit;
    if (step3()) stemmed = true;
    cursor = limit;
    if (step4()) stemmed = true;
    geRemoved = false;
    cursor = 0;
    if (losePrefix()) {
      cursor = 0;
      measure();
    }
    cursor = limit;
    if (geRemoved) {
      stemmed = true;
      step1c();
    }
    geRemoved = false;
    cursor = 0;
    if (loseInfix()) {
      cursor = 0;
      measure();
    }
    cursor = limit;
    if (geRemoved) {
      stemmed = true;
      step1c();
    }
    cursor = limit;
    int r = suffix(STEP7);
    if (r != 0) {
      sliceFrom(STEP7_TO[r - 1]);
      stemmed = true;
    }
    cursor = limit;
    if (stemmed) step6();
  }

  // ---- regions (forward)

  private void measure() {
    p1 = limit;
    p2 = limit;
    int c = cursor;
    if (syllable()) {
      p1 = cursor;
      if (syllable()) p2 = cursor;
    }
    cursor = c;
  }

  /** {@code repeat non-v atleast 1 ('ij' or v) non-v}. */
  private boolean syllable() {
    while (outGrouping(V)) {
      // skip non-vowels
    }
    if (!vowelOrIj()) return false;
    while (vowelOrIj()) {
      // the rest of the vowels
    }
    return outGrouping(V);
  }

  private boolean vowelOrIj() {
    return eqS("ij") || inGrouping(V);
  }

  // ---- backward tests

  /** {@code V}: a vowel or {@code ij} before the cursor. */
  private boolean vBefore() {
    int c = cursor;
    boolean found = inGroupingB(V) || (restore(c) && eqSB("ij"));
    cursor = c;
    return found;
  }

  /** {@code VX}: a vowel or {@code ij} before the character before the cursor. */
  private boolean vxBefore() {
    int c = cursor;
    boolean found = nextB() && vBefore();
    cursor = c;
    return found;
  }

  /** {@code C}: a non-vowel, not the {@code j} of {@code ij}, before the cursor. */
  private boolean cBefore() {
    int c = cursor;
    boolean found = !eqSB("ij") && restore(c) && outGroupingB(V);
    cursor = c;
    return found;
  }

  private boolean r1() {
    return cursor >= p1;
  }

  private boolean r2() {
    return cursor >= p2;
  }

  private boolean restore(int c) {
    cursor = c;
    return true;
  }

  /** {@code lengthen_V}: doubles the vowel before a final consonant where the rules allow (the cursor is kept). */
  private void lengthenV() {
    int c = cursor;
    lengthen();
    cursor = c;
  }

  private void lengthen() {
    if (!outGroupingB(V_WX)) return;
    int r = suffix(LENGTHEN);
    switch (r) {
      case 1: {
        int c = cursor;
        boolean ok = outGroupingB(AEIOU) || (restore(c) && cursor <= limitBackward);
        cursor = c;
        if (ok) insert(cursor, cursor, slice());
        break;
      }
      case 2: {
        int c = cursor;
        boolean ok = outGroupingB(AEIOU) || (restore(c) && cursor <= limitBackward);
        if (ok) {
          int d = cursor;
          boolean aiouOrE = inGroupingB(AIOU) || (restore(d) && inGroupingB(G_E) && cursor <= limitBackward);
          cursor = d;
          if (aiouOrE) ok = false;
        }
        if (ok) {
          int d = cursor;
          boolean blocked = nextB() && inGroupingB(AIOU) && outGroupingB(AEIOU);
          cursor = d;
          if (blocked) ok = false;
        }
        cursor = c;
        if (ok) insert(cursor, cursor, slice());
        break;
      }
      case 3:
        sliceFrom("eëe");
        break;
      case 4:
        sliceFrom("iee");
        break;
      default:
        break;
    }
  }

  // ---- steps (backward)

  private boolean step1() {
    int r = suffix(STEP1);
    int c = cursor;
    switch (r) {
      case 1:
        sliceDel();
        return true;
      case 2: {
        if (!r1()) return false;
        boolean tR1 = eqSB("t") && r1();
        cursor = c;
        if (tR1 || !cBefore()) return false;
        sliceDel();
        return true;
      }
      case 3:
        if (!r1()) return false;
        sliceFrom("ie");
        return true;
      case 4:
        if (eqSB("ar") && r1() && cBefore()) {
          cursor = c;
          sliceDel();
          lengthenV();
          return true;
        }
        cursor = c;
        if (eqSB("er") && r1() && cBefore()) {
          cursor = c;
          sliceDel();
          return true;
        }
        cursor = c;
        if (r1() && cBefore()) {
          sliceFrom("e");
          return true;
        }
        return false;
      case 5:
        if (!r1()) return false;
        sliceFrom("é");
        return true;
      case 6:
        if (!(r1() && vBefore())) return false;
        sliceFrom("au");
        return true;
      case 7:
        if (eqSB("hed") && r1()) {
          bra = cursor;
          sliceFrom("heid");
          return true;
        }
        cursor = c;
        if (eqSB("nd")) {
          sliceDel();
          return true;
        }
        cursor = c;
        if (eqSB("d") && r1() && cBefore()) {
          bra = cursor;
          sliceDel();
          return true;
        }
        cursor = c;
        if ((eqSB("i") || (restore(c) && eqSB("j"))) && vBefore()) {
          sliceDel();
          return true;
        }
        cursor = c;
        if (r1() && cBefore()) {
          sliceDel();
          lengthenV();
          return true;
        }
        return false;
      case 8:
        sliceFrom("nd");
        return true;
      default:
        return false;
    }
  }

  private boolean step2() {
    int r = suffix(STEP2);
    int c = cursor;
    switch (r) {
      case 1:
        if (eqSB("'t")) {
          bra = cursor;
          sliceDel();
          return true;
        }
        cursor = c;
        if (eqSB("et")) {
          bra = cursor;
          if (r1() && cBefore()) {
            sliceDel();
            return true;
          }
        }
        cursor = c;
        if (eqSB("rnt")) {
          bra = cursor;
          sliceFrom("rn");
          return true;
        }
        cursor = c;
        if (eqSB("t")) {
          bra = cursor;
          if (r1() && vxBefore()) {
            sliceDel();
            return true;
          }
        }
        cursor = c;
        if (eqSB("ink")) {
          bra = cursor;
          sliceFrom("ing");
          return true;
        }
        cursor = c;
        if (eqSB("mp")) {
          bra = cursor;
          sliceFrom("m");
          return true;
        }
        cursor = c;
        if (eqSB("'")) {
          bra = cursor;
          if (r1()) {
            sliceDel();
            return true;
          }
        }
        cursor = c;
        bra = cursor;
        if (r1() && cBefore()) {
          sliceDel();
          return true;
        }
        return false;
      case 2:
        return r1() && replaced("g");
      case 3:
        return r1() && replaced("lijk");
      case 4:
        return r1() && replaced("isch");
      case 5:
        return r1() && cBefore() && replaced("");
      case 6:
        return r1() && replaced("t");
      case 7:
        return r1() && replaced("s");
      case 8:
        return r1() && replaced("r");
      case 9:
        if (!r1()) return false;
        sliceDel();
        attach("l");
        lengthenV();
        return true;
      case 10:
        if (!(r1() && cBefore())) return false;
        sliceDel();
        attach("en");
        lengthenV();
        return true;
      case 11:
        return r1() && cBefore() && replaced("ief");
      default:
        return false;
    }
  }

  /** {@code attach s} backwards: {@code s} inserted at the cursor, the cursor after it. */
  private void attach(String s) {
    insert(cursor, cursor, s);
  }

  private boolean replaced(String s) {
    sliceFrom(s);
    return true;
  }

  private boolean step3() {
    int r = suffix(STEP3);
    int c = cursor;
    switch (r) {
      case 1:
        return r1() && replaced("eer");
      case 2:
        if (!r1()) return false;
        sliceDel();
        lengthenV();
        return true;
      case 3:
        return r1() && replaced("");
      case 4:
        return replaced("r");
      case 5:
        if (eqSB("ild")) return replaced("er");
        cursor = c;
        if (!r1()) return false;
        sliceDel();
        lengthenV();
        return true;
      case 6:
        return r1() && cBefore() && replaced("aar");
      case 7:
      case 8:
        if (!r2()) return false;
        sliceDel();
        attach(r == 7 ? "f" : "g");
        lengthenV();
        return true;
      case 9:
        return r1() && cBefore() && replaced("t");
      case 10:
        return r1() && cBefore() && replaced("d");
      default:
        return false;
    }
  }

  private boolean step4() {
    int r = suffix(STEP4);
    if (r != 0 && step4Action(r)) return true;
    cursor = limit;
    if (suffix(STEP4_IG) == 0 || !r1()) return false;
    int c = cursor;
    if (eqSB("inn") && cursor <= limitBackward) return false;
    cursor = c;
    if (!cBefore()) return false;
    sliceDel();
    lengthenV();
    return true;
  }

  private boolean step4Action(int r) {
    switch (r) {
      case 1:
        return r1() && replaced("ie");
      case 2:
        return r1() && replaced("eer");
      case 3:
        return r1() && replaced("");
      case 4:
        return r1() && vBefore() && replaced("n");
      case 5:
        return r1() && vBefore() && replaced("l");
      case 6:
        return r1() && vBefore() && replaced("r");
      case 7:
        return r1() && replaced("teer");
      case 8:
        return r1() && replaced("lijk");
      case 9:
        return r1() && replaced("");
      default:
        if (!(r1() && cBefore())) return false;
        sliceDel();
        lengthenV();
        return true;
    }
  }

  private void step6() {
    int r = suffix(STEP6);
    if (r == 0) return;
    if (r == 11) {
      int c = cursor;
      boolean lone = eqSB("i") && cursor <= limitBackward;
      cursor = c;
      if (lone) return;
    }
    sliceFrom(STEP6_TO[r - 1]);
  }

  private void step1c() {
    int r = suffix(STEP1C);
    if (r == 0 || !r1() || !cBefore()) return;
    int c = cursor;
    if (r == 1) {
      if (eqSB("n") && r1()) return;
      cursor = c;
      if (eqSB("in") && cursor <= limitBackward) {
        sliceFrom("n");
        return;
      }
      cursor = c;
      sliceDel();
    } else {
      if (eqSB("h") && r1()) return;
      cursor = c;
      if (eqSB("en") && cursor <= limitBackward) return;
      cursor = c;
      sliceDel();
    }
  }

  // ---- prefixes (forward)

  /** {@code ge} followed by at least three characters, the last of a vowel run not ending the word. */
  private boolean geFollowedBySyllable() {
    int c = cursor;
    if (limit - cursor < 3) return false;
    boolean ok = false;
    while (cursor < limit) {
      if (vowelOrIj()) {
        ok = true;
        break;
      }
      cursor++;
    }
    if (ok) {
      while (vowelOrIj()) {
        // the rest of the run
      }
      ok = cursor < limit;
    }
    cursor = c;
    return ok;
  }

  private boolean losePrefix() {
    bra = cursor;
    if (!eqS("ge")) return false;
    ket = cursor;
    if (!geFollowedBySyllable()) return false;
    if (findAmong(PREFIX_EXCEPTIONS) != 2) return false;
    geRemoved = true;
    sliceDel();
    diaeresis();
    return true;
  }

  private boolean loseInfix() {
    if (!next()) return false;
    boolean found = false;
    while (cursor < limit) {
      bra = cursor;
      if (eqS("ge")) {
        ket = cursor;
        found = true;
        break;
      }
      cursor = bra + 1;
    }
    if (!found || !geFollowedBySyllable()) return false;
    geRemoved = true;
    sliceDel();
    diaeresis();
    return true;
  }

  private void diaeresis() {
    int c = cursor;
    bra = cursor;
    int r = findAmong(DIAERESIS);
    if (r != 0) {
      ket = cursor;
      sliceFrom(r == 1 ? "e" : "i");
    }
    cursor = c;
  }
}
