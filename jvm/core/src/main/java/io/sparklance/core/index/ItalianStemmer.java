package io.sparklance.core.index;

/**
 * Snowball 3.1.1's Italian stemmer (snowballstem.org, algorithms/italian), which pylance 14 runs for {@code language
 * = Italian}. Against 2.x (Lucene's) it first removes an elided article or pronoun ({@code l'}, {@code all'},
 * {@code dell'}, {@code quest'}, ...) and starts RV after {@code divan} (so that {@code divano} keeps its {@code n}).
 */
final class ItalianStemmer extends SnowballMachine {
  private static final Grouping V = new Grouping("aeiouàèìòù");
  private static final Grouping AEIO = new Grouping("aeioàèìò");
  private static final Grouping CG = new Grouping("cg");

  private static final Among ELISIONS = new Among(new String[][] {{
      "d'", "l'", "m'", "s'", "t'", "v'", "all'", "dall'", "dell'", "gl'", "nell'", "quell'", "quest'", "sull'",
      "tutt'", "un'"}});
  private static final Among PRONOUN = new Among(new String[][] {{
      "ci", "gli", "la", "le", "li", "lo", "mi", "ne", "si", "ti", "vi", "sene", "gliela", "gliele", "glieli",
      "glielo", "gliene", "mela", "mele", "meli", "melo", "mene", "tela", "tele", "teli", "telo", "tene", "cela",
      "cele", "celi", "celo", "cene", "vela", "vele", "veli", "velo", "vene"}});
  private static final Among BEFORE_PRONOUN = new Among(new String[][] {{"ando", "endo"}, {"ar", "er", "ir"}});
  private static final Among STANDARD = new Among(new String[][] {
      {"anza", "anze", "ico", "ici", "ica", "ice", "iche", "ichi", "ismo", "ismi", "abile", "abili", "ibile",
          "ibili", "ista", "iste", "isti", "istà", "istè", "istì", "oso", "osi", "osa", "ose", "mente", "atrice",
          "atrici", "ante", "anti"},
      {"azione", "azioni", "atore", "atori"},
      {"logia", "logie"},
      {"uzione", "uzioni", "usione", "usioni"},
      {"enza", "enze"},
      {"amento", "amenti", "imento", "imenti"},
      {"amente"},
      {"ità"},
      {"ivo", "ivi", "iva", "ive"}});
  private static final Among AMENTE = new Among(new String[][] {{"iv"}, {"os", "ic", "abil"}});
  private static final Among ITA = new Among(new String[][] {{"abil", "ic", "iv"}});
  private static final Among VERB = new Among(new String[][] {{
      "ammo", "ando", "ano", "are", "arono", "asse", "assero", "assi", "assimo", "ata", "ate", "ati", "ato", "ava",
      "avamo", "avano", "avate", "avi", "avo", "emmo", "enda", "ende", "endi", "endo", "erà", "erai", "eranno", "ere",
      "erebbe", "erebbero", "erei", "eremmo", "eremo", "ereste", "eresti", "erete", "erò", "erono", "essero", "ete",
      "eva", "evamo", "evano", "evate", "evi", "evo", "Yamo", "iamo", "immo", "irà", "irai", "iranno", "ire",
      "irebbe", "irebbero", "irei", "iremmo", "iremo", "ireste", "iresti", "irete", "irò", "irono", "isca",
      "iscano", "isce", "isci", "isco", "iscono", "issero", "ita", "ite", "iti", "ito", "iva", "ivamo", "ivano",
      "ivate", "ivi", "ivo", "ono", "uta", "ute", "uti", "uto", "ar", "ir"}});

  private int pV;
  private int p1;
  private int p2;

  @Override
  protected void stem() {
    cursor = 0;
    bra = 0;
    if (findAmong(ELISIONS) != 0 && cursor < limit) {
      ket = cursor;
      sliceDel();
    }
    prelude();
    markRegions();
    cursor = limit;
    attachedPronoun();
    cursor = limit;
    if (!standardSuffix()) {
      cursor = limit;
      verbSuffix();
    }
    cursor = limit;
    vowelSuffix();
    for (int i = 0; i < limit; i++) {
      if (current[i] == 'I') current[i] = 'i';
      else if (current[i] == 'U') current[i] = 'u';
    }
  }

  private void prelude() {
    for (int i = 0; i < limit; i++) {
      switch (current[i]) {
        case 'á': current[i] = 'à'; break;
        case 'é': current[i] = 'è'; break;
        case 'í': current[i] = 'ì'; break;
        case 'ó': current[i] = 'ò'; break;
        case 'ú': current[i] = 'ù'; break;
        case 'q':
          if (i + 1 < limit && current[i + 1] == 'u') current[++i] = 'U';
          break;
        default: break;
      }
    }
    for (int i = 0; i + 2 < limit; i++) {
      if (V.has(current[i]) && V.has(current[i + 2])) {
        if (current[i + 1] == 'u') current[i + 1] = 'U';
        else if (current[i + 1] == 'i') current[i + 1] = 'I';
      }
    }
  }

  private void markRegions() {
    int[] regions = romanceRegions(V, this::rv);
    pV = regions[0];
    p1 = regions[1];
    p2 = regions[2];
  }

  /** Moves the cursor to RV's start: after the next vowel, the next consonant, {@code divan} or the third letter. */
  private boolean rv() {
    if (inGrouping(V)) {
      if (outGrouping(V) && goPast(V)) return true;
      cursor = 1;
      if (inGrouping(V) && goPastNon(V)) return true;
    }
    cursor = 0;
    if (eqS("divan")) return true;
    cursor = 0;
    if (outGrouping(V)) {
      if (outGrouping(V) && goPast(V)) return true;
      cursor = 1;
      return inGrouping(V) && next();
    }
    return false;
  }

  private void attachedPronoun() {
    if (suffix(PRONOUN) == 0) return;
    int r = findAmongB(BEFORE_PRONOUN);
    if (r == 0 || cursor < pV) return;
    if (r == 1) sliceDel();
    else sliceFrom("e");
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
        if (suffix("ic") && cursor >= p2) sliceDel();
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
        sliceFrom("ente");
        return true;
      case 6:
        if (cursor < pV) return false;
        sliceDel();
        return true;
      case 7: {
        if (cursor < p1) return false;
        sliceDel();
        int s = suffix(AMENTE);
        if (s != 0 && cursor >= p2) {
          sliceDel();
          if (s == 1 && suffix("at") && cursor >= p2) sliceDel();
        }
        return true;
      }
      case 8:
        if (cursor < p2) return false;
        sliceDel();
        if (suffix(ITA) != 0 && cursor >= p2) sliceDel();
        return true;
      case 9:
        if (cursor < p2) return false;
        sliceDel();
        if (suffix("at") && cursor >= p2) {
          sliceDel();
          if (suffix("ic") && cursor >= p2) sliceDel();
        }
        return true;
      default:
        return false;
    }
  }

  private void verbSuffix() {
    if (suffixFrom(pV, VERB) != 0) sliceDel();
  }

  private void vowelSuffix() {
    ket = cursor;
    if (inGroupingB(AEIO)) {
      bra = cursor;
      if (cursor >= pV) {
        sliceDel();
        if (suffix("i") && cursor >= pV) sliceDel();
      }
    }
    cursor = limit;
    if (suffix("h") && inGroupingB(CG) && cursor >= pV) sliceDel();
  }
}
