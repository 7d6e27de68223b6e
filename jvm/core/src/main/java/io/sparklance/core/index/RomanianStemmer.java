package io.sparklance.core.index;

/**
 * Snowball 3.1.1's Romanian stemmer (snowballstem.org, algorithms/romanian), which pylance 14 runs for {@code
 * language = Romanian}. Against 2.x (Lucene's) it works on the comma-below letters ș and ț, to which it first maps
 * the cedilla forms ş and ţ (2.x knows only the cedilla forms).
 */
final class RomanianStemmer extends SnowballMachine {
  private static final Grouping V = new Grouping("aeiouâîă");

  private static final Among STEP0 = new Among(new String[][] {
      {"ul", "ului"}, {"aua"}, {"ea", "ele", "elor"}, {"ii", "iua", "iei", "iile", "iilor", "ilor"}, {"ile"},
      {"atei"}, {"ație", "ația"}});
  private static final Among COMBO = new Among(new String[][] {
      {"abilitate", "abilitati", "abilităi", "abilități"},
      {"ibilitate"},
      {"ivitate", "ivitati", "ivităi", "ivități"},
      {"icitate", "icitati", "icităi", "icități", "icator", "icatori", "iciv", "iciva", "icive", "icivi", "icivă",
          "ical", "icala", "icale", "icali", "icală"},
      {"ativ", "ativa", "ative", "ativi", "ativă", "ațiune", "atoare", "ator", "atori", "ătoare", "ător", "ători"},
      {"itiv", "itiva", "itive", "itivi", "itivă", "ițiune", "itoare", "itor", "itori"}});
  private static final String[] COMBO_TO = {"abil", "ibil", "iv", "ic", "at", "it"};
  private static final Among STANDARD = new Among(new String[][] {
      {"at", "ata", "ată", "ati", "ate", "ut", "uta", "ută", "uti", "ute", "it", "ita", "ită", "iti", "ite",
          "ic", "ica", "ice", "ici", "ică", "abil", "abila", "abile", "abili", "abilă", "ibil", "ibila", "ibile",
          "ibili", "ibilă", "oasa", "oasă", "oase", "os", "osi", "oși", "ant", "anta", "ante", "anti", "antă",
          "ator", "atori", "itate", "itati", "ităi", "ități", "iv", "iva", "ive", "ivi", "ivă"},
      {"iune", "iuni"},
      {"ism", "isme", "ist", "ista", "iste", "isti", "istă", "iști"}});
  private static final Among VERB = new Among(new String[][] {
      {"are", "ere", "ire", "âre", "ind", "ând", "indu", "ându", "eze", "ească", "ez", "ezi", "ează", "esc", "ești",
          "ește", "ăsc", "ăști", "ăște", "am", "ai", "au", "eam", "eai", "ea", "eați", "eau", "iam", "iai", "ia",
          "iați", "iau", "ui", "ași", "arăm", "arăți", "ară", "uși", "urăm", "urăți", "ură", "iși", "irăm", "irăți",
          "iră", "âi", "âși", "ârăm", "ârăți", "âră", "asem", "aseși", "ase", "aserăm", "aserăți", "aseră", "isem",
          "iseși", "ise", "iserăm", "iserăți", "iseră", "âsem", "âseși", "âse", "âserăm", "âserăți", "âseră",
          "usem", "useși", "use", "userăm", "userăți", "useră"},
      {"ăm", "ați", "em", "eți", "im", "iți", "âm", "âți", "seși", "serăm", "serăți", "seră", "sei", "se", "sesem",
          "seseși", "sese", "seserăm", "seserăți", "seseră"}});
  private static final Among VOWEL = new Among(new String[][] {{"a", "e", "i", "ie", "ă"}});

  private int pV;
  private int p1;
  private int p2;
  private boolean standardSuffixRemoved;

  @Override
  protected void stem() {
    for (int i = 0; i < limit; i++) {
      if (current[i] == 'ş') current[i] = 'ș';
      else if (current[i] == 'ţ') current[i] = 'ț';
    }
    for (int i = 0; i + 2 < limit; i++) {
      if (V.has(current[i]) && V.has(current[i + 2])) {
        if (current[i + 1] == 'u') current[i + 1] = 'U';
        else if (current[i + 1] == 'i') current[i + 1] = 'I';
      }
    }
    markRegions();
    cursor = limit;
    step0();
    cursor = limit;
    standardSuffix();
    cursor = limit;
    if (!standardSuffixRemoved) verbSuffix();
    cursor = limit;
    if (suffix(VOWEL) != 0 && cursor >= pV) sliceDel();
    for (int i = 0; i < limit; i++) {
      if (current[i] == 'I') current[i] = 'i';
      else if (current[i] == 'U') current[i] = 'u';
    }
  }

  private void markRegions() {
    int[] regions = romanceRegions(V, () -> romanceRv(V));
    pV = regions[0];
    p1 = regions[1];
    p2 = regions[2];
  }

  private void step0() {
    int r = suffix(STEP0);
    if (r == 0 || cursor < p1) return;
    switch (r) {
      case 1: sliceDel(); break;
      case 2: sliceFrom("a"); break;
      case 3: sliceFrom("e"); break;
      case 4: sliceFrom("i"); break;
      case 5:
        if (!eqSB("ab")) sliceFrom("i");
        break;
      case 6: sliceFrom("at"); break;
      default: sliceFrom("ați"); break;
    }
  }

  /** One combo suffix replaced (the cursor stays at the word's end); whether there was one. */
  private boolean comboSuffix() {
    int r = suffix(COMBO);
    if (r == 0 || cursor < p1) {
      cursor = limit;
      return false;
    }
    sliceFrom(COMBO_TO[r - 1]);
    standardSuffixRemoved = true;
    cursor = limit;
    return true;
  }

  private void standardSuffix() {
    standardSuffixRemoved = false;
    while (comboSuffix()) {
      cursor = limit;
    }
    cursor = limit;
    int r = suffix(STANDARD);
    if (r == 0 || cursor < p2) return;
    switch (r) {
      case 1:
        sliceDel();
        break;
      case 2:
        if (!eqSB("ț")) return;
        bra = cursor;
        sliceFrom("t");
        break;
      default:
        sliceFrom("ist");
        break;
    }
    standardSuffixRemoved = true;
  }

  private void verbSuffix() {
    if (cursor < pV) return;
    int saved = limitBackward;
    limitBackward = pV;
    int r = suffix(VERB);
    if (r == 1) {
      int c = cursor;
      if (outGroupingB(V) || (restore(c) && eqSB("u"))) sliceDel();
    } else if (r == 2) {
      sliceDel();
    }
    limitBackward = saved;
  }

  private boolean restore(int c) {
    cursor = c;
    return true;
  }
}
