package io.sparklance.core.index;

import java.util.Arrays;
import java.util.Collections;
import java.util.List;

import org.tartarus.snowball.SnowballStemmer;
import org.tartarus.snowball.ext.ArabicStemmer;
import org.tartarus.snowball.ext.HungarianStemmer;
import org.tartarus.snowball.ext.PortugueseStemmer;
import org.tartarus.snowball.ext.RussianStemmer;
import org.tartarus.snowball.ext.TamilStemmer;
import org.tartarus.snowball.ext.TurkishStemmer;

/**
 * The stemmer of one language, as pylance 14 runs it for {@code stem = true}: Snowball 3.1.1's algorithm for the
 * index's {@code language} (the {@code frostem} crate; docs/dev/fts-index-format.md §2).
 *
 * <p>English is {@link EnglishStemmer}. Arabic, Hungarian, Portuguese, Russian, Tamil and Turkish are the Snowball
 * stemmers Lucene 9.12 publishes ({@code org.tartarus.snowball.ext}, Snowball 2.x), whose output equals Snowball
 * 3.1.1's for these languages on pylance's tokens (tests/test_fts_stemming.py checks it against pylance's indexes
 * over seeded word lists of each language), with two measured exceptions handled here or refused: Lucene's
 * programs count UTF-16 units where Snowball counts code points, so a word with a code point above U+FFFF is
 * stemmed with each such code point standing in for a private-use character it does not hold; and Snowball 3.1.1's
 * Turkish first removes a proper noun's suffix after an apostrophe, which 2.x does not, so that step
 * ({@link #removeProperNounSuffix}) runs here before Lucene's program. The other eleven languages pylance offers (Danish, Dutch, Finnish, French,
 * German, Greek, Italian, Norwegian, Romanian, Spanish, Swedish), which stem differently in Snowball 2.x, are
 * sparklance's own programs of Snowball 3.1.1's algorithms (on {@code SnowballMachine}: {@code DanishStemmer}, ...).
 *
 * <p>Instances may be shared between threads.
 */
public abstract class FtsStemmer {
  /** The languages (pylance's names) this class stems. */
  public static final List<String> LANGUAGES = Collections.unmodifiableList(Arrays.asList(
      "English", "Arabic", "Hungarian", "Portuguese", "Russian", "Tamil", "Turkish",
      "Danish", "Dutch", "Finnish", "French", "German", "Greek", "Italian", "Norwegian", "Romanian", "Spanish", "Swedish"));

  /** No stemming: each token stays as it is (an index with {@code stem = false}). */
  public static final FtsStemmer NONE = new FtsStemmer() {
    @Override
    public String stem(String word) {
      return word;
    }
  };

  /** The stem of one token (already lower-cased where the index lower-cases). */
  public abstract String stem(String word);

  /** Whether {@code language} is one of {@link #LANGUAGES}. */
  public static boolean supports(String language) {
    return LANGUAGES.contains(language);
  }

  /** The stemmer of {@code language}; an {@link IllegalArgumentException} where it is not one of {@link #LANGUAGES}. */
  public static FtsStemmer of(String language) {
    switch (language) {
      case "English": return ENGLISH;
      case "Arabic": return new Snowball(ArabicStemmer::new);
      case "Hungarian": return new Snowball(HungarianStemmer::new);
      case "Portuguese": return new Snowball(PortugueseStemmer::new);
      case "Russian": return new Snowball(RussianStemmer::new);
      case "Tamil": return new Snowball(TamilStemmer::new);
      case "Turkish": return TURKISH;
      case "Danish": return new Machine(DanishStemmer::new);
      case "Dutch": return new Machine(DutchStemmer::new);
      case "Finnish": return new Machine(FinnishStemmer::new);
      case "French": return new Machine(FrenchStemmer::new);
      case "German": return new Machine(GermanStemmer::new);
      case "Greek": return new Machine(GreekStemmer::new);
      case "Italian": return new Machine(ItalianStemmer::new);
      case "Norwegian": return new Machine(NorwegianStemmer::new);
      case "Romanian": return new Machine(RomanianStemmer::new);
      case "Spanish": return new Machine(SpanishStemmer::new);
      case "Swedish": return new Machine(SwedishStemmer::new);
      default:
        throw new IllegalArgumentException("no stemmer for language '" + language + "'; the stemmed languages are "
            + String.join(", ", LANGUAGES));
    }
  }

  private static final FtsStemmer TURKISH = new FtsStemmer() {
    private final FtsStemmer program = new Snowball(TurkishStemmer::new);

    @Override
    public String stem(String word) {
      return program.stem(removeProperNounSuffix(word));
    }
  };

  /**
   * Snowball 3.1.1 Turkish's first step ({@code remove_proper_noun_suffix}), which Lucene's 2.x program lacks: the
   * word without its leading apostrophes (U+0027), then cut at its first apostrophe from the third code point on (a
   * proper noun's suffix, "türkiye'dir"; one or two letters before it, "o'connor", "l'entrée", stay whole). It runs
   * whether or not the rest of the algorithm stems the word.
   */
  static String removeProperNounSuffix(String word) {
    int start = 0;
    while (start < word.length() && word.charAt(start) == '\'') start++;
    String w = word.substring(start);
    if (w.codePointCount(0, w.length()) < 2) return w;
    int at = w.indexOf('\'', w.offsetByCodePoints(0, 2));
    return at < 0 ? w : w.substring(0, at);
  }

  private static final FtsStemmer ENGLISH = new FtsStemmer() {
    @Override
    public String stem(String word) {
      return EnglishStemmer.stem(word);
    }
  };

  /** One of sparklance's Snowball 3.1.1 programs, one instance per thread (a program keeps its word as state). */
  private static final class Machine extends FtsStemmer {
    private final ThreadLocal<SnowballMachine> programs;

    Machine(java.util.function.Supplier<SnowballMachine> program) {
      this.programs = ThreadLocal.withInitial(program);
    }

    @Override
    public String stem(String word) {
      return programs.get().stem(word);
    }
  }

  /** A Lucene-published Snowball program, one instance per thread (a program keeps its word as state). */
  private static final class Snowball extends FtsStemmer {
    private final ThreadLocal<SnowballStemmer> programs;

    Snowball(java.util.function.Supplier<SnowballStemmer> program) {
      this.programs = ThreadLocal.withInitial(program);
    }

    @Override
    public String stem(String word) {
      SnowballStemmer program = programs.get();
      String supplementary = supplementaryCodePoints(word);
      if (supplementary == null) return run(program, word);
      // Each distinct code point above U+FFFF becomes one private-use character absent from the word, so that the
      // program sees one character per code point, as Snowball does; no Snowball grouping or suffix holds either.
      int[] codePoints = supplementary.codePoints().toArray();
      char[] standIns = new char[codePoints.length];
      char next = '\uE000';
      for (int k = 0; k < codePoints.length; k++) {
        while (word.indexOf(next) >= 0) next++;
        standIns[k] = next++;
      }
      StringBuilder in = new StringBuilder(word.length());
      for (int i = 0; i < word.length(); ) {
        int cp = word.codePointAt(i);
        int k = cp > 0xFFFF ? indexOf(codePoints, cp) : -1;
        if (k >= 0) in.append(standIns[k]);
        else in.appendCodePoint(cp);
        i += Character.charCount(cp);
      }
      String stemmed = run(program, in.toString());
      StringBuilder out = new StringBuilder(stemmed.length() + codePoints.length);
      for (int i = 0; i < stemmed.length(); i++) {
        char c = stemmed.charAt(i);
        int k = indexOf(standIns, c);
        if (k >= 0) out.appendCodePoint(codePoints[k]);
        else out.append(c);
      }
      return out.toString();
    }

    private static String run(SnowballStemmer program, String word) {
      program.setCurrent(word);
      program.stem();
      return program.getCurrent();
    }

    /** The distinct code points above U+FFFF of {@code word}, in order, as a string; null where there are none. */
    private static String supplementaryCodePoints(String word) {
      StringBuilder found = null;
      for (int i = 0; i < word.length(); ) {
        int cp = word.codePointAt(i);
        if (cp > 0xFFFF) {
          if (found == null) found = new StringBuilder();
          if (found.indexOf(new String(Character.toChars(cp))) < 0) found.appendCodePoint(cp);
        }
        i += Character.charCount(cp);
      }
      return found == null ? null : found.toString();
    }

    private static int indexOf(int[] values, int value) {
      for (int k = 0; k < values.length; k++) if (values[k] == value) return k;
      return -1;
    }

    private static int indexOf(char[] values, char value) {
      for (int k = 0; k < values.length; k++) if (values[k] == value) return k;
      return -1;
    }
  }
}
