package io.sparklance.core.index;

/**
 * Snowball 3.1.1's Spanish stemmer (snowballstem.org, algorithms/spanish), which pylance 14 runs for {@code language
 * = Spanish}. Against 2.x (Lucene's) it also removes the unaccented {@code -acion} and turns {@code -ucion} into
 * {@code -u}, as it does {@code -ación} and {@code -ución}.
 */
final class SpanishStemmer extends SnowballMachine {
  private static final Grouping V = new Grouping("aeiouáéíóúü");

  private static final Among PRONOUN = new Among(new String[][] {{
      "me", "se", "sela", "selo", "selas", "selos", "la", "le", "lo", "las", "les", "los", "nos"}});
  private static final Among BEFORE_PRONOUN = new Among(new String[][] {
      {"iéndo"}, {"ándo"}, {"ár"}, {"ér"}, {"ír"}, {"ando", "iendo", "ar", "er", "ir"}, {"yendo"}});
  private static final String[] UNACCENTED = {"iendo", "ando", "ar", "er", "ir"};

  private static final Among STANDARD = new Among(new String[][] {
      {"anza", "anzas", "ico", "ica", "icos", "icas", "ismo", "ismos", "able", "ables", "ible", "ibles", "ista",
          "istas", "oso", "osa", "osos", "osas", "amiento", "amientos", "imiento", "imientos"},
      {"adora", "ador", "ación", "adoras", "adores", "aciones", "ante", "antes", "ancia", "ancias", "acion"},
      {"logía", "logías"},
      {"ución", "uciones", "ucion"},
      {"encia", "encias"},
      {"amente"},
      {"mente"},
      {"idad", "idades"},
      {"iva", "ivo", "ivas", "ivos"}});
  private static final Among AMENTE = new Among(new String[][] {{"iv"}, {"os", "ic", "ad"}});
  private static final Among MENTE = new Among(new String[][] {{"ante", "able", "ible"}});
  private static final Among IDAD = new Among(new String[][] {{"abil", "ic", "iv"}});

  private static final Among Y_VERB = new Among(new String[][] {{
      "ya", "ye", "yan", "yen", "yeron", "yendo", "yo", "yó", "yas", "yes", "yais", "yamos"}});
  private static final Among VERB = new Among(new String[][] {
      {"en", "es", "éis", "emos"},
      {"arían", "arías", "arán", "arás", "aríais", "aría", "aréis", "aríamos", "aremos", "ará", "aré",
          "erían", "erías", "erán", "erás", "eríais", "ería", "eréis", "eríamos", "eremos", "erá", "eré",
          "irían", "irías", "irán", "irás", "iríais", "iría", "iréis", "iríamos", "iremos", "irá", "iré",
          "aba", "ada", "ida", "ía", "ara", "iera", "ad", "ed", "id", "ase", "iese", "aste", "iste", "an", "aban",
          "ían", "aran", "ieran", "asen", "iesen", "aron", "ieron", "ado", "ido", "ando", "iendo", "ió", "ar", "er",
          "ir", "as", "abas", "adas", "idas", "ías", "aras", "ieras", "ases", "ieses", "ís", "áis", "abais", "íais",
          "arais", "ierais", "aseis", "ieseis", "asteis", "isteis", "ados", "idos", "amos", "ábamos", "íamos",
          "imos", "áramos", "iéramos", "iésemos", "ásemos"}});
  private static final Among RESIDUAL = new Among(new String[][] {{"os", "a", "o", "á", "í", "ó"}, {"e", "é"}});

  private int pV;
  private int p1;
  private int p2;

  @Override
  protected void stem() {
    markRegions();
    cursor = limit;
    attachedPronoun();
    cursor = limit;
    if (!standardSuffix()) {
      cursor = limit;
      if (!yVerbSuffix()) {
        cursor = limit;
        verbSuffix();
      }
    }
    cursor = limit;
    residualSuffix();
    for (int i = 0; i < limit; i++) {
      switch (current[i]) {
        case 'á': current[i] = 'a'; break;
        case 'é': current[i] = 'e'; break;
        case 'í': current[i] = 'i'; break;
        case 'ó': current[i] = 'o'; break;
        case 'ú': current[i] = 'u'; break;
        default: break;
      }
    }
  }

  private void markRegions() {
    int[] regions = romanceRegions(V, () -> romanceRv(V));
    pV = regions[0];
    p1 = regions[1];
    p2 = regions[2];
  }

  private void attachedPronoun() {
    if (suffix(PRONOUN) == 0) return;
    int r = findAmongB(BEFORE_PRONOUN);
    if (r == 0 || cursor < pV) return;
    if (r <= 5) {
      bra = cursor;
      sliceFrom(UNACCENTED[r - 1]);
    } else if (r == 6) {
      sliceDel();
    } else if (eqSB("u")) {
      sliceDel();
    }
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
      case 6: {
        if (cursor < p1) return false;
        sliceDel();
        int s = suffix(AMENTE);
        if (s != 0 && cursor >= p2) {
          sliceDel();
          if (s == 1 && suffix("at") && cursor >= p2) sliceDel();
        }
        return true;
      }
      case 7:
        if (cursor < p2) return false;
        sliceDel();
        if (suffix(MENTE) != 0 && cursor >= p2) sliceDel();
        return true;
      case 8:
        if (cursor < p2) return false;
        sliceDel();
        if (suffix(IDAD) != 0 && cursor >= p2) sliceDel();
        return true;
      case 9:
        if (cursor < p2) return false;
        sliceDel();
        if (suffix("at") && cursor >= p2) sliceDel();
        return true;
      default:
        return false;
    }
  }

  private boolean yVerbSuffix() {
    if (suffixFrom(pV, Y_VERB) == 0) return false;
    if (!eqSB("u")) return false;
    sliceDel();
    return true;
  }

  private boolean verbSuffix() {
    int r = suffixFrom(pV, VERB);
    if (r == 0) return false;
    if (r == 1) {
      int c = cursor;
      if (eqSB("u") && charBefore() == 'g') {
        bra = cursor;
      } else {
        cursor = c;
      }
    }
    sliceDel();
    return true;
  }

  private void residualSuffix() {
    int r = suffix(RESIDUAL);
    if (r == 0 || cursor < pV) return;
    sliceDel();
    if (r == 2 && suffix("u") && charBefore() == 'g' && cursor >= pV) sliceDel();
  }
}
