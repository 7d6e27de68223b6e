package io.sparklance.core.index;

/**
 * Snowball 3.1.1's Greek stemmer (snowballstem.org, algorithms/greek: Ntais' stemmer as revised by Saroukos), which
 * pylance 14 runs for {@code language = Greek}. Lucene's 2.x program differs on a few words: {@code ισα} becomes
 * {@code ισ} (2.x empties it), {@code γιανε} and {@code μεανε} become {@code γαν}, {@code μαν} (2.x: {@code γαναν},
 * {@code μαναν}).
 *
 * <p>The algorithm first folds case and accents (its own table: ϊ and ΐ become η, as Snowball's does), keeps words of
 * fewer than three letters so, then runs its steps, most of which remove a suffix and put part of it back when the
 * rest of the word is one of the step's listed stems ({@link #appendIfWhole}) or ends with one
 * ({@link #appendIfEnds}).
 */
final class GreekStemmer extends SnowballMachine {
  private static final Grouping V = new Grouping("αεηιουω");
  private static final Grouping V2 = new Grouping("αεηιοω");

  private static final String FOLD_FROM = "ΑΒΓΔΕΖΗΘΙΚΛΜΝΞΟΠΡΣΤΥΦΧΨΩΪΫάέήίόύώΐΰϊϋΆΈΉΊΌΎΏς";
  private static final String FOLD_TO = "αβγδεζηθικλμνξοπρστυφχψωιυαεηιουωηυηυαεηιουωσ";

  private static final Among STEP1 = new Among(new String[][] {
      {"φαγια", "φαγιου", "φαγιων"},
      {"σκαγια", "σκαγιου", "σκαγιων"},
      {"ολογιου", "ολογια", "ολογιων"},
      {"σογιου", "σογια", "σογιων"},
      {"τατογια", "τατογιου", "τατογιων"},
      {"κρεασ", "κρεατοσ", "κρεατα", "κρεατων"},
      {"περασ", "περατοσ", "περατη", "περατα", "περατων"},
      {"τερασ", "τερατοσ", "τερατα", "τερατων"},
      {"φωσ", "φωτοσ", "φωτα", "φωτων"},
      {"καθεστωσ", "καθεστωτοσ", "καθεστωτα", "καθεστωτων"},
      {"γεγονοσ", "γεγονοτοσ", "γεγονοτα", "γεγονοτων"}});
  private static final String[] STEP1_TO = {
      "φα", "σκα", "ολο", "σο", "τατο", "κρε", "περ", "τερ", "φω", "καθεστ", "γεγον"};

  private static final Among S1 = among("ιζα", "ιζεσ", "ιζε", "ιζαμε", "ιζατε", "ιζαν", "ιζανε", "ιζω", "ιζεισ", "ιζει",
      "ιζουμε", "ιζετε", "ιζουν", "ιζουνε");
  private static final Among S1_STEMS = new Among(new String[][] {
      {"αναμπα", "εμπα", "επα", "ξαναπα", "πα", "περιπα", "αθρο", "συναθρο", "δανε"},
      {"μαρκ", "κορν", "αμπαρ", "αρρ", "βαθυρι", "βαρκ", "β", "βολβορ", "γκρ", "γλυκορ", "γλυκυρ", "ιμπ", "λ", "λου",
          "μαρ", "μ", "πρ", "μπρ", "πολυρ", "π", "ρ", "πιπερορ"}});
  private static final Among S2 = among("ωθηκα", "ωθηκεσ", "ωθηκε", "ωθηκαμε", "ωθηκατε", "ωθηκαν", "ωθηκανε");
  private static final Among S2_STEMS = among("αλ", "βι", "εν", "υψ", "λι", "ζω", "σ", "χ");
  private static final Among S3 = among("ισα", "ισεσ", "ισε", "ισαμε", "ισατε", "ισαν", "ισανε");
  private static final Among S3_STEMS = new Among(new String[][] {
      {"αναμπα", "αθρο", "εμπα", "εσε", "εσωκλε", "επα", "ξαναπα", "επε", "περιπα", "συναθρο", "δανε", "κλε",
          "χαρτοπα", "εξαρχα", "μετεπε", "αποκλε", "απεκλε", "εκλε", "πε"},
      {"αν", "αφ", "γε", "γιγαντοαφ", "γκε", "δημοκρατ", "κομ", "γκ", "μ", "π", "πουκαμ", "ολο", "λαρ"}});
  private static final Among S4 = among("ισω", "ισεισ", "ισει", "ισουμε", "ισετε", "ισουν", "ισουνε");
  private static final Among S4_STEMS = among("αναμπα", "εμπα", "εσε", "εσωκλε", "επα", "ξαναπα", "επε", "περιπα",
      "αθρο", "συναθρο", "δανε", "κλε", "χαρτοπα", "εξαρχα", "μετεπε", "αποκλε", "απεκλε", "εκλε", "πε");
  private static final Among S5 = among("ιστοσ", "ιστου", "ιστο", "ιστε", "ιστοι", "ιστων", "ιστουσ", "ιστη", "ιστησ",
      "ιστα", "ιστεσ");
  private static final Among S5_STEMS = new Among(new String[][] {
      {"δανε", "συναθρο", "κλε", "σε", "εσωκλε", "ασε", "πλε"},
      {"μ", "π", "απ", "αρ", "ηδ", "κτ", "σκ", "σχ", "υψ", "φα", "χρ", "χτ", "ακτ", "αορ", "ασχ", "ατα", "αχν", "αχτ",
          "γεμ", "γυρ", "εμπ", "ευπ", "εχθ", "ηφα", "καθ", "κακ", "κυλ", "λυγ", "μακ", "μεγ", "ταχ", "φιλ", "χωρ"}});
  private static final Among S6 = among("ισμο", "ισμοι", "ισμοσ", "ισμου", "ισμουσ", "ισμων");
  private static final Among S6_STEMS = new Among(new String[][] {
      {"σε", "μετασε", "μικροσε", "εγκλε", "αποκλε"}, {"δανε", "αντιδανε"}});
  private static final Among S6_ENDINGS = new Among(new String[][] {
      {"αγνωστικ"}, {"ατομικ"}, {"γνωστικ"}, {"εθνικ"}, {"εκλεκτικ"}, {"σκεπτικ"}, {"τοπικ"}, {"αλεξανδριν"},
      {"βυζαντιν"}, {"θεατριν"}});
  private static final String[] S6_ENDINGS_TO = {
      "αγνωστ", "ατομ", "γνωστ", "εθν", "εκλεκτ", "σκεπτ", "τοπ", "αλεξανδρ", "βυζαντ", "θεατρ"};
  private static final Among S7 = among("αρακι", "αρακια", "ουδακι", "ουδακια");
  private static final Among S7_STEMS = among("σ", "χ");
  private static final Among S8 = among("ακι", "ακια", "ιτσα", "ιτσασ", "ιτσεσ", "ιτσων", "αρακι", "αρακια");
  private static final Among S8_STEMS = new Among(new String[][] {
      {"βαμβ", "βρ", "καιμ", "κον", "κορ", "λαβρ", "λουλ", "μερ", "μουστ", "ναγκασ", "πλ", "ρ", "ρυ", "σ", "σκ", "σοκ",
          "σπαν", "τζ", "φαρμ", "χ", "καπακ", "αλισφ", "αμβρ", "ανθρ", "κ", "φυλ", "κατραπ", "κλιμ", "μαλ", "σλοβ", "φ",
          "σφ", "τσεχοσλοβ"},
      {"β", "βαλ", "γιαν", "γλ", "ζ", "ηγουμεν", "καρδ", "μακρυν", "νυφ", "πατερ", "π", "τοσ", "τριπολ"}});
  private static final Among S9 = among("ιδιο", "ιδια", "ιδιων");
  private static final Among S9_STEMS = among("αιφν", "ιρ", "ολο", "ψαλ");
  private static final Among S9_ENDINGS = among("ε", "παιχν");
  private static final Among S10 = among("ισκοσ", "ισκου", "ισκο", "ισκε");
  private static final Among S10_STEMS = among("δ", "ιβ", "μην", "ρ", "φραγκ", "λυκ", "οβελ");

  private static final Among STEP2A = among("αδεσ", "αδων");
  private static final Among STEP2A_KEPT = among("οκ", "μαμ", "μαν", "μπαμπ", "πατερ", "γιαγι", "νταντ", "κυρ", "θει",
      "πεθερ");
  private static final Among STEP2B = among("εδεσ", "εδων");
  private static final Among STEP2B_ENDINGS = among("οπ", "ιπ", "εμπ", "υπ", "γηπ", "δαπ", "κρασπ", "μιλ");
  private static final Among STEP2C = among("ουδεσ", "ουδων");
  private static final Among STEP2C_ENDINGS = among("αρκ", "καλιακ", "πεταλ", "λιχ", "πλεξ", "σκ", "σ", "φλ", "φρ",
      "βελ", "λουλ", "χν", "σπ", "τραγ", "φε");
  private static final Among STEP2D = among("εωσ", "εων");
  private static final Among STEP2D_STEMS = among("θ", "δ", "ελ", "γαλ", "ν", "π", "ιδ", "παρ");
  private static final Among STEP3 = among("ια", "ιου", "ιων");
  private static final Among STEP4 = among("ικα", "ικο", "ικου", "ικων");
  private static final Among STEP4_STEMS = among("αλ", "αδ", "ενδ", "αμαν", "αμμοχαλ", "ηθ", "ανηθ", "αντιδ", "φυσ",
      "βρωμ", "γερ", "εξωδ", "καλπ", "καλλιν", "καταδ", "μουλ", "μπαν", "μπαγιατ", "μπολ", "μποσ", "νιτ", "ξικ",
      "συνομηλ", "πετσ", "πιτσ", "πικαντ", "πλιατσ", "ποστελν", "πρωτοδ", "σερτ", "συναδ", "τσαμ", "υποδ", "φιλον",
      "φυλοδ", "χασ");

  private static final Among STEP5A = among("αγαμε", "ησαμε", "ουσαμε", "ηκαμε", "ηθηκαμε");
  private static final Among STEP5A_STEMS = among("αναπ", "αποθ", "αποκ", "αποστ", "βουβ", "ξεθ", "ουλ", "πεθ", "πικρ",
      "ποτ", "σιχ", "χ");
  private static final Among STEP5B = among("αγανε", "ησανε", "ουσανε", "ιοντανε", "ιοτανε", "ιουντανε", "οντανε",
      "οτανε", "ουντανε", "ηκανε", "ηθηκανε");
  private static final Among STEP5B_TR = among("τρ", "τσ");
  private static final Among STEP5B_STEMS = among("βετερ", "βουλκ", "βραχμ", "γ", "δραδουμ", "θ", "καλπουζ", "καστελ",
      "κορμορ", "λαοπλ", "μωαμεθ", "μ", "μουσουλμ", "ν", "ουλ", "π", "πελεκ", "πλ", "πολισ", "πορτολ", "σαρακατσ",
      "σουλτ", "τσαρλατ", "ορφ", "τσιγγ", "τσοπ", "φωτοστεφ", "χ", "ψυχοπλ", "αγ", "γαλ", "γερ", "δεκ", "διπλ",
      "αμερικαν", "ουρ", "πιθ", "πουριτ", "σ", "ζωντ", "ικ", "καστ", "κοπ", "λιχ", "λουθηρ", "μαιντ", "μελ", "σιγ",
      "σπ", "στεγ", "τραγ", "τσαγ", "φ", "ερ", "αδαπ", "αθιγγ", "αμηχ", "ανικ", "ανοργ", "απηγ", "απιθ", "ατσιγγ", "βασ",
      "βασκ", "βαθυγαλ", "βιομηχ", "βραχυκ", "διατ", "διαφ", "ενοργ", "θυσ", "καπνοβιομηχ", "καταγαλ", "κλιβ",
      "κοιλαρφ", "λιβ", "μεγλοβιομηχ", "μικροβιομηχ", "νταβ", "ξηροκλιβ", "ολιγοδαμ", "ολογαλ", "πενταρφ", "περηφ",
      "περιτρ", "πλατ", "πολυδαπ", "πολυμηχ", "στεφ", "ταβ", "τετ", "υπερηφ", "υποκοπ", "χαμηλοδαπ", "ψηλοταβ");
  private static final Among STEP5C = among("ησετε");
  private static final Among STEP5C_ENDINGS = among("οδ", "αιρ", "φορ", "ταθ", "διαθ", "σχ", "ενδ", "ευρ", "τιθ",
      "υπερθ", "ραθ", "ενθ", "ροθ", "σθ", "πυρ", "αιν", "συνδ", "συν", "συνθ", "χωρ", "πον", "βρ", "καθ", "ευθ", "εκθ",
      "νετ", "ρον", "αρκ", "βαρ", "βολ", "ωφελ");
  private static final Among STEP5C_STEMS = among("αβαρ", "βεν", "εναρ", "αβρ", "αδ", "αθ", "αν", "απλ", "βαρον",
      "ντρ", "σκ", "κοπ", "μπορ", "νιφ", "παγ", "παρακαλ", "σερπ", "σκελ", "συρφ", "τοκ", "υ", "δ", "εμ", "θαρρ", "θ");
  private static final Among STEP5D = among("οντασ", "ωντασ");
  private static final Among STEP5E = among("ομαστε", "ιομαστε");
  private static final Among STEP5F_IESTE_STEMS = among("π", "απ", "συμπ", "ασυμπ", "ακαταπ", "αμεταμφ");
  private static final Among STEP5F_ESTE_STEMS = among("αλ", "αρ", "εκτελ", "ζ", "μ", "ξ", "παρακαλ", "προ", "νισ");
  private static final Among STEP5G_ITHIKA = among("ηθηκα", "ηθηκεσ", "ηθηκε");
  private static final Among STEP5G = among("ηκα", "ηκεσ", "ηκε");
  private static final Among STEP5G_ENDINGS = among("σκωλ", "σκουλ", "ναρθ", "σφ", "οθ", "πιθ");
  private static final Among STEP5G_STEMS = among("διαθ", "θ", "παρακαταθ", "προσθ", "συνθ");
  private static final Among STEP5H = among("ουσα", "ουσεσ", "ουσε");
  private static final Among STEP5H_ENDINGS = among("ποδαρ", "βλεπ", "πανταχ", "φρυδ", "μαντιλ", "μαλλ", "κυματ", "λαχ",
      "ληγ", "φαγ", "ομ", "πρωτ");
  private static final Among STEP5H_STEMS = among("φαρμακ", "χαδ", "αγκ", "αναρρ", "βρομ", "εκλιπ", "λαμπιδ", "λεχ", "μ",
      "πατ", "ρ", "λ", "μεδ", "μεσαζ", "υποτειν", "αμ", "αιθ", "ανηκ", "δεσποζ", "ενδιαφερ", "δε", "δευτερευ", "καθαρευ",
      "πλε", "τσα");
  private static final Among STEP5I = among("αγα", "αγεσ", "αγε");
  private static final Among STEP5I_ENDINGS = new Among(new String[][] {
      {"ψοφ", "ναυλοχ"}, {"οφ", "πελ", "χορτ", "λλ", "σφ", "ρπ", "φρ", "πρ", "λοχ", "σμην"}});
  private static final Among STEP5I_STEMS = among("αβαστ", "πολυφ", "αδηφ", "παμφ", "ρ", "ασπ", "αφ", "αμαλ", "αμαλλι",
      "ανυστ", "απερ", "ασπαρ", "αχαρ", "δερβεν", "δροσοπ", "ξεφ", "νεοπ", "νομοτ", "ολοπ", "ομοτ", "προστ", "προσωποπ",
      "συμπ", "συντ", "τ", "υποτ", "χαρ", "αειπ", "αιμοστ", "ανυπ", "αποτ", "αρτιπ", "διατ", "εν", "επιτ", "κροκαλοπ",
      "σιδηροπ", "λ", "ναυ", "ουλαμ", "ουρ", "π", "τρ", "μ");
  private static final Among STEP5J = among("ησε", "ησου", "ησα");
  private static final Among STEP5J_STEMS = among("ν", "χερσον", "δωδεκαν", "ερημον", "μεγαλον", "επταν");
  private static final Among STEP5K = among("ηστε");
  private static final Among STEP5K_STEMS = among("ασβ", "σβ", "αχρ", "χρ", "απλ", "αειμν", "δυσχρ", "ευχρ", "κοινοχρ",
      "παλιμψ");
  private static final Among STEP5L = among("ουνε", "ησουνε", "ηθουνε");
  private static final Among STEP5L_STEMS = among("ν", "ρ", "σπι", "στραβομουτσ", "κακομουτσ", "εξων");
  private static final Among STEP5M = among("ουμε", "ησουμε", "ηθουμε");
  private static final Among STEP5M_STEMS = among("παρασουσ", "φ", "χ", "ωριοπλ", "αζ", "αλλοσουσ", "ασουσ");

  private static final Among STEP6_MATA = among("ματα", "ματων", "ματοσ");
  private static final Among STEP6 = among("α", "αγατε", "αγαν", "αει", "αμαι", "αν", "ασ", "ασαι", "αται", "αω", "ε",
      "ει", "εισ", "ειτε", "εσαι", "εσ", "εται", "ι", "ιεμαι", "ιεμαστε", "ιεται", "ιεσαι", "ιεσαστε", "ιομασταν",
      "ιομουν", "ιομουνα", "ιονταν", "ιοντουσαν", "ιοσασταν", "ιοσαστε", "ιοσουν", "ιοσουνα", "ιοταν", "ιουμα",
      "ιουμαστε", "ιουνται", "ιουνταν", "η", "ηδεσ", "ηδων", "ηθει", "ηθεισ", "ηθειτε", "ηθηκατε", "ηθηκαν", "ηθουν",
      "ηθω", "ηκατε", "ηκαν", "ησ", "ησαν", "ησατε", "ησει", "ησεσ", "ησουν", "ησω", "ο", "οι", "ομαι", "ομασταν",
      "ομουν", "ομουνα", "ονται", "ονταν", "οντουσαν", "οσ", "οσασταν", "οσαστε", "οσουν", "οσουνα", "οταν", "ου",
      "ουμαι", "ουμαστε", "ουν", "ουνται", "ουνταν", "ουσ", "ουσαν", "ουσατε", "υ", "υσ", "ω", "ων");
  private static final Among STEP7 = among("εστερ", "εστατ", "οτερ", "οτατ", "υτερ", "υτατ", "ωτερ", "ωτατ");

  private static Among among(String... strings) {
    return new Among(new String[][] {strings});
  }

  private boolean test1;

  @Override
  protected void stem() {
    for (int i = 0; i < limit; i++) {
      int c = current[i];
      int k = c < 0x10000 ? FOLD_FROM.indexOf(c) : -1;
      if (k >= 0) current[i] = FOLD_TO.charAt(k);
    }
    if (limit < 3) return;
    test1 = true;
    cursor = limit;
    int r = suffix(STEP1);
    if (r != 0) {
      sliceFrom(STEP1_TO[r - 1]);
      test1 = false;
    }
    restart();
    if (removed(S1)) {
      int g = whole(S1_STEMS);
      if (g != 0) append(g == 1 ? "ι" : "ιζ");
    }
    restart();
    if (removed(S2)) appendIfWhole(S2_STEMS, "ων");
    restart();
    stepS3();
    restart();
    if (removed(S4)) appendIfWhole(S4_STEMS, "ι");
    restart();
    if (removed(S5)) {
      int g = whole(S5_STEMS);
      if (g != 0) append(g == 1 ? "ι" : "ιστ");
    }
    restart();
    stepS6();
    restart();
    if (removed(S7)) appendIfWhole(S7_STEMS, "αρακ");
    restart();
    if (removed(S8)) {
      int g = whole(S8_STEMS);
      if (g != 0) append(g == 1 ? "ακ" : "ιτσ");
      else appendIfEnds("κορ", "ιτσ");
    }
    restart();
    if (removed(S9) && !appendIfWhole(S9_STEMS, "ιδ")) appendIfEnds(S9_ENDINGS, "ιδ");
    restart();
    if (removed(S10)) appendIfWhole(S10_STEMS, "ισκ");
    restart();
    step2a();
    restart();
    if (deleted(STEP2B)) appendIfEnds(STEP2B_ENDINGS, "εδ");
    restart();
    if (deleted(STEP2C)) appendIfEnds(STEP2C_ENDINGS, "ουδ");
    restart();
    if (removed(STEP2D)) appendIfWhole(STEP2D_STEMS, "ε");
    restart();
    if (removed(STEP3)) appendIfEndsIn(V, "ι");
    restart();
    if (removed(STEP4)) vowelOrWhole(V, null, STEP4_STEMS, "ικ");
    restart();
    step5a();
    restart();
    step5b();
    restart();
    step5c();
    restart();
    if (removed(STEP5D) && !appendIfWhole("αρχ", "οντ")) appendIfEnds("κρε", "ωντ");
    restart();
    if (removed(STEP5E)) appendIfWhole("ον", "ομαστ");
    restart();
    step5f();
    restart();
    step5g();
    restart();
    if (removed(STEP5H) && !appendIfEnds(STEP5H_ENDINGS, "ουσ")) appendIfWhole(STEP5H_STEMS, "ουσ");
    restart();
    if (removed(STEP5J)) appendIfWhole(STEP5J_STEMS, "ησ");
    restart();
    step5i();
    restart();
    if (removed(STEP5K)) appendIfWhole(STEP5K_STEMS, "ηστ");
    restart();
    if (removed(STEP5L)) appendIfWhole(STEP5L_STEMS, "ουν");
    restart();
    if (removed(STEP5M)) appendIfWhole(STEP5M_STEMS, "ουμ");
    restart();
    if (suffix(STEP6_MATA) != 0) sliceFrom("μα");
    restart();
    if (test1 && suffix(STEP6) != 0) sliceDel();
    restart();
    if (suffix(STEP7) != 0) sliceDel();
  }

  /** Each step starts at the word's end (a {@code do} in Snowball's backward mode). */
  private void restart() {
    cursor = limit;
  }

  /** {@code [substring] among(...) (delete unset test1)}: whether a suffix of {@code a} went. */
  private boolean removed(Among a) {
    if (suffix(a) == 0) return false;
    sliceDel();
    test1 = false;
    return true;
  }

  /** {@code ['s'] delete unset test1}. */
  private boolean removed(String s) {
    if (!suffix(s)) return false;
    sliceDel();
    test1 = false;
    return true;
  }

  /** {@code [substring] among(...) (delete)}, test1 kept. */
  private boolean deleted(Among a) {
    if (suffix(a) == 0) return false;
    sliceDel();
    return true;
  }

  /** The group of {@code a} whose entry is the whole word before the cursor (0: none); the cursor stays. */
  private int whole(Among a) {
    int c = cursor;
    int r = findAmongB(a);
    boolean atStart = cursor == limitBackward;
    cursor = c;
    return atStart ? r : 0;
  }

  /** {@code s} added at the cursor (an empty slice there replaced), the cursor then after it. */
  private void append(String s) {
    bra = cursor;
    ket = cursor;
    sliceFrom(s);
    cursor = limit;
  }

  /** {@code [] substring atlimit among(...) (<- s)}: appends {@code s} where the word before is an entry of {@code a}. */
  private boolean appendIfWhole(Among a, String s) {
    if (whole(a) == 0) return false;
    append(s);
    return true;
  }

  /** {@code [] 'stem' atlimit <- s}. */
  private boolean appendIfWhole(String stem, String s) {
    int c = cursor;
    boolean found = eqSB(stem) && cursor == limitBackward;
    cursor = c;
    if (found) append(s);
    return found;
  }

  /** {@code [] substring among(...) (<- s)}: appends {@code s} where the word ends with an entry of {@code a}. */
  private boolean appendIfEnds(Among a, String s) {
    int c = cursor;
    boolean found = findAmongB(a) != 0;
    cursor = c;
    if (found) append(s);
    return found;
  }

  /** {@code [] 'ending' <- s}. */
  private boolean appendIfEnds(String ending, String s) {
    int c = cursor;
    boolean found = eqSB(ending);
    cursor = c;
    if (found) append(s);
    return found;
  }

  /** {@code [] g <- s}: appends {@code s} where the word ends with a character of {@code g}. */
  private boolean appendIfEndsIn(Grouping g, String s) {
    int c = cursor;
    boolean found = inGroupingB(g);
    cursor = c;
    if (found) append(s);
    return found;
  }

  /**
   * {@code ([] g <- s) or ([] substring among(endings) (<- s)) or [] substring atlimit among(stems) (<- s)} as
   * Snowball parses it: {@code or} binds tighter than a sequence, so the last alternative is only the {@code [} and
   * the rest ({@code ] substring atlimit among}) follows whichever alternative held. After a vowel of {@code g} (or
   * an entry of {@code endings}) got {@code s} appended, the slice then runs from before that vowel (or entry) to the
   * end, and becomes {@code s} where the word before it is one of {@code stems}: {@code γι} + {@code ανε} gives
   * {@code γαν}, not {@code γιαν}, since {@code γ} is one of step 5b's stems.
   */
  private void vowelOrWhole(Grouping g, Among endings, Among stems, String s) {
    int c = cursor;
    ket = c;
    bra = c;
    boolean appended = inGroupingB(g);
    if (appended) {
      sliceFrom(s);
    } else {
      cursor = c;
      if (endings != null && findAmongB(endings) != 0) {
        sliceFrom(s);
        appended = true;
      } else {
        cursor = c;
      }
    }
    if (!appended) ket = cursor;
    bra = cursor;
    if (findAmongB(stems) != 0 && cursor == limitBackward) sliceFrom(s);
  }

  private void stepS3() {
    ket = cursor;
    if (eqSB("ισα") && cursor == limitBackward) {
      bra = cursor;
      sliceFrom("ισ");
      return;
    }
    restart();
    if (!removed(S3)) return;
    int g = whole(S3_STEMS);
    if (g != 0) append(g == 1 ? "ι" : "ισ");
  }

  private void stepS6() {
    if (!removed(S6)) return;
    int g = whole(S6_STEMS);
    if (g != 0) {
      append(g == 1 ? "ισμ" : "ι");
      return;
    }
    int r = suffix(S6_ENDINGS);
    if (r != 0) sliceFrom(S6_ENDINGS_TO[r - 1]);
  }

  private void step2a() {
    if (!deleted(STEP2A)) return;
    int c = cursor;
    boolean kept = findAmongB(STEP2A_KEPT) != 0;
    cursor = c;
    if (!kept) insert(cursor, cursor, "αδ");
  }

  private void step5a() {
    ket = cursor;
    if (eqSB("αγαμε") && cursor == limitBackward) {
      bra = cursor;
      sliceFrom("αγαμ");
    }
    restart();
    removed(STEP5A);
    restart();
    if (removed("αμε")) appendIfWhole(STEP5A_STEMS, "αμ");
  }

  private void step5b() {
    if (removed(STEP5B)) appendIfWhole(STEP5B_TR, "αγαν");
    restart();
    if (removed("ανε")) vowelOrWhole(V2, null, STEP5B_STEMS, "αν");
  }

  private void step5c() {
    removed(STEP5C);
    restart();
    if (removed("ετε")) vowelOrWhole(V2, STEP5C_ENDINGS, STEP5C_STEMS, "ετ");
  }

  private void step5f() {
    if (removed("ιεστε")) appendIfWhole(STEP5F_IESTE_STEMS, "ιεστ");
    restart();
    if (removed("εστε")) appendIfWhole(STEP5F_ESTE_STEMS, "ιεστ");
  }

  private void step5g() {
    removed(STEP5G_ITHIKA);
    restart();
    if (removed(STEP5G) && !appendIfEnds(STEP5G_ENDINGS, "ηκ")) appendIfWhole(STEP5G_STEMS, "ηκ");
  }

  private void step5i() {
    if (!removed(STEP5I)) return;
    if (appendIfEnds("κολλ", "αγ")) return;
    int c = cursor;
    int r = findAmongB(STEP5I_ENDINGS);
    cursor = c;
    if (r == 1) return;
    if (r == 2) {
      append("αγ");
      return;
    }
    appendIfWhole(STEP5I_STEMS, "αγ");
  }
}
