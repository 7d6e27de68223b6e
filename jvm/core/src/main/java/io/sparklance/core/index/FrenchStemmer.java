package io.sparklance.core.index;

/**
 * Snowball 3.1.1's French stemmer (snowballstem.org, algorithms/french), which pylance 14 runs for {@code language
 * = French}. Against 2.x (Lucene's) it first removes an elision ({@code l'}, {@code qu'}, ...), reads ë and ï as
 * {@code He}, {@code Hi} while stemming, starts RV after {@code par}, {@code col}, {@code tap} and {@code ni} before
 * a vowel, removes {@code -aise(s)} (not after {@code al}, {@code auv}, {@code épl} as in {@code palais},
 * {@code mauvais}, {@code déplais}) and turns {@code -oux} into {@code -ou} after b, h, j, l, n, p.
 */
final class FrenchStemmer extends SnowballMachine {
  private static final Grouping V = new Grouping("aeiouyâàëéêèïîôûù");
  private static final Grouping OUX_ENDING = new Grouping("bhjlnp");
  private static final Grouping ELISION_CHAR = new Grouping("cdjlmnst");
  private static final Grouping KEEP_WITH_S = new Grouping("aiouès");

  private static final Among RV_EXCEPTIONS = new Among(new String[][] {{"par", "col", "tap"}, {"ni"}});
  private static final Among STANDARD = new Among(new String[][] {
      {"ance", "iqUe", "isme", "able", "iste", "eux", "ances", "iqUes", "ismes", "ables", "istes"},
      {"atrice", "ateur", "ation", "atrices", "ateurs", "ations"},
      {"logie", "logies"},
      {"usion", "ution", "usions", "utions"},
      {"ence", "ences"},
      {"ement", "ements"},
      {"ité", "ités"},
      {"if", "ive", "ifs", "ives"},
      {"eaux"},
      {"aux"},
      {"oux"},
      {"euse", "euses"},
      {"issement", "issements"},
      {"amment"},
      {"emment"},
      {"ment", "ments"}});
  private static final Among EMENT = new Among(new String[][] {{"iv"}, {"eus"}, {"abl", "iqU"}, {"ièr", "Ièr"}});
  private static final Among ITE = new Among(new String[][] {{"abil"}, {"ic"}, {"iv"}});
  private static final Among I_VERB = new Among(new String[][] {{
      "îmes", "ît", "îtes", "i", "ie", "ies", "ir", "ira", "irai", "iraIent", "irais", "irait", "iras", "irent",
      "irez", "iriez", "irions", "irons", "iront", "is", "issaIent", "issais", "issait", "issant", "issante",
      "issantes", "issants", "isse", "issent", "isses", "issez", "issiez", "issions", "issons", "it"}});
  private static final Among VERB = new Among(new String[][] {
      {"ions"},
      {"é", "ée", "ées", "és", "èrent", "er", "era", "erai", "eraIent", "erais", "erait", "eras", "erez", "eriez",
          "erions", "erons", "eront", "ez", "iez"},
      {"âmes", "ât", "âtes", "a", "ai", "aIent", "ait", "ant", "ante", "antes", "ants", "as", "asse", "assent",
          "asses", "assiez", "assions"},
      {"ais", "aise", "aises"},
      {"eais"}});
  private static final Among AIS_KEPT = new Among(new String[][] {{"al"}, {"auv", "épl"}});
  private static final Among RESIDUAL = new Among(new String[][] {{"ion"}, {"ier", "ière", "Ier", "Ière"}, {"e"}});
  private static final Among DOUBLE = new Among(new String[][] {{"enn", "onn", "ett", "ell", "eill"}});

  private int pV;
  private int p1;
  private int p2;

  @Override
  protected void stem() {
    elisions();
    prelude();
    markRegions();
    cursor = limit;
    boolean removed = standardSuffix();
    if (!removed) {
      cursor = limit;
      removed = iVerbSuffix();
    }
    if (!removed) {
      cursor = limit;
      removed = verbSuffix();
    }
    cursor = limit;
    if (removed) {
      ket = cursor;
      if (eqSB("Y")) {
        bra = cursor;
        sliceFrom("i");
      } else if (eqSB("ç")) {
        bra = cursor;
        sliceFrom("c");
      }
    } else {
      residualSuffix();
    }
    cursor = limit;
    if (findAmongB(DOUBLE) != 0) {
      cursor = limit;
      ket = cursor;
      nextB();
      bra = cursor;
      sliceDel();
    }
    cursor = limit;
    unAccent();
    postlude();
  }

  private void elisions() {
    cursor = 0;
    bra = 0;
    if (!inGrouping(ELISION_CHAR)) {
      cursor = 0;
      if (!eqS("qu")) return;
    }
    if (!eqS("'")) return;
    ket = cursor;
    if (cursor < limit) sliceDel();
  }

  private void prelude() {
    int p = 0;
    while (p < limit) {
      if (!preludeAt(p)) p++;
    }
  }

  /** One of the prelude's replacements at {@code p}; whether one applied. */
  private boolean preludeAt(int p) {
    int c = current[p];
    int d = p + 1 < limit ? current[p + 1] : -1;
    int e = p + 2 < limit ? current[p + 2] : -1;
    if (V.has(c)) {
      if ((d == 'u' || d == 'i') && e >= 0 && V.has(e)) {
        current[p + 1] = d == 'u' ? 'U' : 'I';
        return true;
      }
      if (d == 'y') {
        current[p + 1] = 'Y';
        return true;
      }
    }
    if (c == 'ë' || c == 'ï') {
      bra = p;
      ket = p + 1;
      sliceFrom(c == 'ë' ? "He" : "Hi");
      return true;
    }
    if (c == 'y' && d >= 0 && V.has(d)) {
      current[p] = 'Y';
      return true;
    }
    if (c == 'q' && d == 'u') {
      current[p + 1] = 'U';
      return true;
    }
    return false;
  }

  private void markRegions() {
    int[] regions = romanceRegions(V, this::rv);
    pV = regions[0];
    p1 = regions[1];
    p2 = regions[2];
  }

  /** Moves the cursor to RV's start. */
  private boolean rv() {
    if (inGrouping(V) && inGrouping(V) && next()) return true;
    cursor = 0;
    int r = findAmong(RV_EXCEPTIONS);
    if (r == 1 || (r == 2 && inGrouping(V))) return true;
    cursor = 0;
    return next() && goPast(V);
  }

  private boolean standardSuffix() {
    int r = suffix(STANDARD);
    switch (r) {
      case 1:
        if (cursor < p2) return false;
        sliceDel();
        return true;
      case 2:
        if (cursor < p2) return false;
        sliceDel();
        if (suffix("ic")) {
          if (cursor >= p2) sliceDel();
          else sliceFrom("iqU");
        }
        return true;
      case 3:
        if (cursor < p2) return false;
        sliceFrom("log");
        return true;
      case 4:
        if (cursor < p2) return false;
        sliceFrom("u");
        return true;
      case 5:
        if (cursor < p2) return false;
        sliceFrom("ent");
        return true;
      case 6: {
        if (cursor < pV) return false;
        sliceDel();
        switch (suffix(EMENT)) {
          case 1:
            if (cursor >= p2) {
              sliceDel();
              if (suffix("at") && cursor >= p2) sliceDel();
            }
            break;
          case 2:
            if (cursor >= p2) sliceDel();
            else if (cursor >= p1) sliceFrom("eux");
            break;
          case 3:
            if (cursor >= p2) sliceDel();
            break;
          case 4:
            if (cursor >= pV) sliceFrom("i");
            break;
          default:
            break;
        }
        return true;
      }
      case 7:
        if (cursor < p2) return false;
        sliceDel();
        switch (suffix(ITE)) {
          case 1:
            if (cursor >= p2) sliceDel();
            else sliceFrom("abl");
            break;
          case 2:
            if (cursor >= p2) sliceDel();
            else sliceFrom("iqU");
            break;
          case 3:
            if (cursor >= p2) sliceDel();
            break;
          default:
            break;
        }
        return true;
      case 8:
        if (cursor < p2) return false;
        sliceDel();
        if (suffix("at") && cursor >= p2) {
          sliceDel();
          if (suffix("ic")) {
            if (cursor >= p2) sliceDel();
            else sliceFrom("iqU");
          }
        }
        return true;
      case 9:
        sliceFrom("eau");
        return true;
      case 10:
        if (cursor < p1) return false;
        sliceFrom("al");
        return true;
      case 11:
        if (!inGroupingB(OUX_ENDING)) return false;
        sliceFrom("ou");
        return true;
      case 12:
        if (cursor >= p2) {
          sliceDel();
          return true;
        }
        if (cursor < p1) return false;
        sliceFrom("eux");
        return true;
      case 13:
        if (cursor < p1 || !outGroupingB(V)) return false;
        sliceDel();
        return true;
      case 14:
        if (cursor >= pV) sliceFrom("ant");
        return false;
      case 15:
        if (cursor >= pV) sliceFrom("ent");
        return false;
      case 16:
        if (inGroupingB(V) && cursor >= pV) sliceDel();
        return false;
      default:
        return false;
    }
  }

  private boolean iVerbSuffix() {
    if (cursor < pV) return false;
    int saved = limitBackward;
    limitBackward = pV;
    boolean removed = false;
    if (suffix(I_VERB) != 0 && charBefore() != 'H' && outGroupingB(V)) {
      sliceDel();
      removed = true;
    }
    limitBackward = saved;
    return removed;
  }

  private boolean verbSuffix() {
    switch (suffixFrom(pV, VERB)) {
      case 1:
        if (cursor < p2) return false;
        sliceDel();
        return true;
      case 2:
        sliceDel();
        return true;
      case 3: {
        int c = cursor;
        if (eqSB("e") && cursor >= pV) bra = cursor;
        else cursor = c;
        sliceDel();
        return true;
      }
      case 4: {
        int c = cursor;
        int r = findAmongB(AIS_KEPT);
        if (r == 2 || (r == 1 && nextB() && cursor == limitBackward)) return false;
        cursor = c;
        sliceDel();
        return true;
      }
      case 5:
        sliceDel();
        return true;
      default:
        return false;
    }
  }

  private void residualSuffix() {
    if (suffix("s")) {
      int c = cursor;
      boolean delete = eqSB("Hi");
      if (!delete) {
        cursor = c;
        delete = outGroupingB(KEEP_WITH_S);
      }
      cursor = c;
      if (delete) sliceDel();
      else cursor = limit;
    }
    if (cursor < pV) return;
    int saved = limitBackward;
    limitBackward = pV;
    switch (suffix(RESIDUAL)) {
      case 1:
        if (cursor >= p2 && (charBefore() == 's' || charBefore() == 't')) sliceDel();
        break;
      case 2:
        sliceFrom("i");
        break;
      case 3:
        sliceDel();
        break;
      default:
        break;
    }
    limitBackward = saved;
  }

  private void unAccent() {
    int n = 0;
    while (outGroupingB(V)) n++;
    if (n == 0) return;
    ket = cursor;
    if (eqSB("é") || eqSB("è")) {
      bra = cursor;
      sliceFrom("e");
    }
  }

  private void postlude() {
    int[] out = new int[limit];
    int n = 0;
    for (int i = 0; i < limit; i++) {
      int c = current[i];
      int d = i + 1 < limit ? current[i + 1] : -1;
      switch (c) {
        case 'I': out[n++] = 'i'; break;
        case 'U': out[n++] = 'u'; break;
        case 'Y': out[n++] = 'y'; break;
        case 'H':
          if (d == 'e') {
            out[n++] = 'ë';
            i++;
          } else if (d == 'i') {
            out[n++] = 'ï';
            i++;
          }
          break;
        default: out[n++] = c; break;
      }
    }
    System.arraycopy(out, 0, current, 0, n);
    limit = n;
  }
}
