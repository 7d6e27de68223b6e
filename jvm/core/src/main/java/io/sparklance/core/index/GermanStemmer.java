package io.sparklance.core.index;

/**
 * Snowball 3.1.1's German stemmer (snowballstem.org, algorithms/german), which pylance 14 runs for {@code language
 * = German}. Against 2.x (Lucene's) it is the former "german2" variant ({@code ae}, {@code oe}, {@code ue} read as
 * ä, ö, ü, except {@code ue} after {@code q}), keeps {@code -em} after {@code syst}, removes {@code -erin},
 * {@code -erinnen} and, under conditions, {@code -et}, turns {@code -ln(s)} into {@code -l}, and removes a suffix
 * after an apostrophe ({@code 's}, {@code 'sch}, {@code '}).
 */
final class GermanStemmer extends SnowballMachine {
  private static final Grouping V = new Grouping("aeiouyäöü");
  private static final Grouping ET_ENDING = new Grouping("dfgklmnrstUzä");
  private static final Grouping S_ENDING = new Grouping("bdfghklmnrt");
  private static final Grouping ST_ENDING = new Grouping("bdfghklmnt");

  private static final Among STEP1 = new Among(new String[][] {
      {"em"}, {"ern", "er", "erin", "erinnen"}, {"e", "en", "es"}, {"s"}, {"ln", "lns"}});
  private static final Among STEP2 = new Among(new String[][] {{"en", "er", "est"}, {"st"}, {"et"}});
  private static final Among ET_EXCEPTIONS = new Among(new String[][] {{"geordn", "intern", "plan", "tick", "tr"}});
  private static final Among STEP3 = new Among(new String[][] {
      {"end", "ung"}, {"ig", "ik", "isch"}, {"lich", "heit"}, {"keit"}});
  private static final Among KEIT = new Among(new String[][] {{"lich", "ig"}});
  private static final Among APOSTROPHE = new Among(new String[][] {{"'s", "'sch", "'"}});

  private int p1;
  private int p2;

  @Override
  protected void stem() {
    prelude();
    markRegions();
    cursor = limit;
    step1();
    cursor = limit;
    step2();
    cursor = limit;
    step3();
    cursor = limit;
    if (suffix(APOSTROPHE) != 0 && nextB() && cursor > limitBackward) sliceDel();
    for (int i = 0; i < limit; i++) {
      switch (current[i]) {
        case 'Y': current[i] = 'y'; break;
        case 'U': current[i] = 'u'; break;
        case 'ä': current[i] = 'a'; break;
        case 'ö': current[i] = 'o'; break;
        case 'ü': current[i] = 'u'; break;
        default: break;
      }
    }
  }

  private void prelude() {
    for (int i = 0; i + 2 < limit; i++) {
      if (V.has(current[i]) && V.has(current[i + 2])) {
        if (current[i + 1] == 'u') current[i + 1] = 'U';
        else if (current[i + 1] == 'y') current[i + 1] = 'Y';
      }
    }
    int[] out = new int[2 * limit];
    int n = 0;
    for (int i = 0; i < limit; i++) {
      int c = current[i];
      int d = i + 1 < limit ? current[i + 1] : -1;
      if (c == 'ß') {
        out[n++] = 's';
        out[n++] = 's';
      } else if (d == 'e' && (c == 'a' || c == 'o' || c == 'u')) {
        out[n++] = c == 'a' ? 'ä' : c == 'o' ? 'ö' : 'ü';
        i++;
      } else if (c == 'q' && d == 'u') {
        out[n++] = 'q';
        out[n++] = 'u';
        i++;
      } else {
        out[n++] = c;
      }
    }
    if (current.length < n) current = new int[n];
    System.arraycopy(out, 0, current, 0, n);
    limit = n;
  }

  private void markRegions() {
    p1 = limit;
    p2 = limit;
    if (limit < 3) return;
    cursor = 0;
    if (!(goPast(V) && goPastNon(V))) return;
    p1 = Math.max(cursor, 3);
    if (goPast(V) && goPastNon(V)) p2 = cursor;
  }

  private void step1() {
    int r = suffix(STEP1);
    if (r == 0 || cursor < p1) return;
    switch (r) {
      case 1:
        if (!eqSB("syst")) sliceDel();
        break;
      case 2:
        sliceDel();
        break;
      case 3:
        sliceDel();
        if (suffix("s") && eqSB("nis")) sliceDel();
        break;
      case 4:
        if (inGroupingB(S_ENDING)) sliceDel();
        break;
      default:
        sliceFrom("l");
        break;
    }
  }

  private void step2() {
    int r = suffix(STEP2);
    if (r == 0 || cursor < p1) return;
    switch (r) {
      case 1:
        sliceDel();
        break;
      case 2:
        if (inGroupingB(ST_ENDING) && cursor - 3 >= limitBackward) sliceDel();
        break;
      default: {
        int c = cursor;
        if (!inGroupingB(ET_ENDING)) return;
        cursor = c;
        if (findAmongB(ET_EXCEPTIONS) != 0) return;
        sliceDel();
        break;
      }
    }
  }

  private void step3() {
    int r = suffix(STEP3);
    if (r == 0 || cursor < p2) return;
    switch (r) {
      case 1:
        sliceDel();
        if (suffix("ig")) {
          int c = cursor;
          if (!eqSB("e") && restore(c) && cursor >= p2) sliceDel();
        }
        break;
      case 2: {
        if (!eqSB("e")) sliceDel();
        break;
      }
      case 3:
        sliceDel();
        ket = cursor;
        if (eqSB("er") || eqSB("en")) {
          bra = cursor;
          if (cursor >= p1) sliceDel();
        }
        break;
      default:
        sliceDel();
        if (suffix(KEIT) != 0 && cursor >= p2) sliceDel();
        break;
    }
  }

  private boolean restore(int c) {
    cursor = c;
    return true;
  }
}
