package io.sparklance.core.index;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The text analysis of a Lance INVERTED (full-text) index, as pylance 14 runs it through tantivy 0.24
 * (docs/dev/fts-index-format.md §2): a base tokenizer, then, in this order, the filters remove-long, lower-case,
 * stem, stop words and ASCII folding, each where the index's parameters turn it on. The stemmer is the index
 * language's ({@link FtsStemmer}); {@link FtsParams} refuses stemming in the languages it does not implement.
 *
 * <ul>
 *   <li>{@code simple}: a token is a maximal run of alphanumeric code points (Rust's {@code char::is_alphanumeric}
 *       at Rust's Unicode version, 17: Alphabetic, or a number of category Nd, Nl or No); {@code whitespace}: a
 *       maximal run of code points that are not ASCII whitespace; {@code raw}: the whole text is one token.</li>
 *   <li>A token's position is its ordinal among the base tokenizer's tokens: tokens a filter drops leave a gap, which
 *       phrase queries see.</li>
 *   <li>remove-long drops tokens of {@code maxTokenLength} or more UTF-8 bytes; lower-case maps each code point by
 *       Rust's {@code char::to_lowercase}, with no context (so no final-sigma rule); stop words are matched against
 *       the stemmed token, the English ones being pylance 14's {@link #ENGLISH_STOP_WORDS} (those of the other
 *       languages: {@link FtsStopWords}); ASCII folding maps each
 *       code point by pylance 14's table, applied to tokens that are not all ASCII.</li>
 * </ul>
 *
 * The non-ASCII facts (alphanumeric, lower case, folding) come from {@link FtsCharacters}, tables generated from
 * pylance 14, so the analysis does not depend on the JVM's Unicode version.
 *
 * Instances hold no mutable state.
 */
public final class FtsTokenizer {
  /**
   * The English stop words pylance 14 removes: 149 words, pronouns and their contractions ({@code he'd}, {@code
   * should've}) among them, but not {@code no}, {@code nor}, {@code not}. They are not the 33 of tantivy 0.24's
   * {@code StopWordFilter::new(Language::English)}, which the mirrored Lance sources name; the list is what pylance
   * 14 drops of a vocabulary of some 45,000 words holding Lucene's and Snowball's English stop words and their
   * contractions (indexed with stop words on and off; tests/test_fts_stemming.py checks it the same way).
   */
  public static final List<String> ENGLISH_STOP_WORDS = Collections.unmodifiableList(java.util.Arrays.asList(
      "a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are", "as", "at",
      "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "did", "do",
      "does", "doing", "down", "during", "each", "few", "for", "from", "further", "had", "has", "have",
      "having", "he", "he'd", "he'll", "he's", "her", "here", "hers", "herself", "him", "himself", "his", "how",
      "i", "i'd", "i'll", "i'm", "i've", "if", "in", "into", "is", "it", "it'd", "it'll", "it's", "its",
      "itself", "just", "me", "more", "most", "my", "myself", "now", "of", "off", "on", "once", "only", "or",
      "other", "our", "ours", "ourselves", "out", "over", "own", "re", "same", "she", "she'd", "she'll",
      "she's", "should", "should've", "so", "some", "such", "than", "that", "that'll", "the", "their", "theirs",
      "them", "themselves", "then", "there", "these", "they", "they'd", "they'll", "they're", "they've", "this",
      "those", "through", "to", "too", "under", "until", "up", "very", "was", "we", "we'd", "we'll", "we're",
      "we've", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "you",
      "you'd", "you'll", "you're", "you've", "your", "yours", "yourself", "yourselves"));

  /** The base tokenizers this analysis implements. */
  public enum Base { SIMPLE, WHITESPACE, RAW }

  /** The tokens of one text, in order, with their positions. */
  public static final class Tokens {
    public final String[] texts;
    public final int[] positions;

    Tokens(String[] texts, int[] positions) {
      this.texts = texts;
      this.positions = positions;
    }

    public int size() {
      return texts.length;
    }
  }

  private final Base base;
  private final int maxTokenLength;
  private final boolean lowerCase;
  private final FtsStemmer stemmer;
  private final Set<String> stopWords;
  private final boolean asciiFolding;

  /**
   * An analysis; {@code maxTokenLength} &lt;= 0 means no limit, {@code stemmer} stems each token ({@link
   * FtsStemmer#NONE}: no stemming), {@code stopWords} is the set to remove (or empty).
   */
  public FtsTokenizer(Base base, int maxTokenLength, boolean lowerCase, FtsStemmer stemmer, Set<String> stopWords,
      boolean asciiFolding) {
    this.base = base;
    this.maxTokenLength = maxTokenLength;
    this.lowerCase = lowerCase;
    this.stemmer = stemmer;
    this.stopWords = new HashSet<>(stopWords);
    this.asciiFolding = asciiFolding;
  }

  /** The tokens of {@code text} after every filter, with their positions. */
  public Tokens tokenize(String text) {
    List<String> out = new ArrayList<>();
    List<Integer> positions = new ArrayList<>();
    int position = 0;
    int n = text.length();
    if (base == Base.RAW) {
      emit(text, 0, out, positions);
    } else {
      int i = 0;
      while (i < n) {
        int cp = text.codePointAt(i);
        if (!inToken(cp)) {
          i += Character.charCount(cp);
          continue;
        }
        int start = i;
        while (i < n) {
          int c = text.codePointAt(i);
          if (!inToken(c)) break;
          i += Character.charCount(c);
        }
        emit(text.substring(start, i), position, out, positions);
        position++;
      }
    }
    int[] p = new int[positions.size()];
    for (int k = 0; k < p.length; k++) p[k] = positions.get(k);
    return new Tokens(out.toArray(new String[0]), p);
  }

  private boolean inToken(int cp) {
    if (base == Base.WHITESPACE) return !isAsciiWhitespace(cp);
    return isAlphanumeric(cp);
  }

  private void emit(String token, int position, List<String> out, List<Integer> positions) {
    if (maxTokenLength > 0 && utf8Length(token) >= maxTokenLength) return;
    String t = token;
    if (lowerCase) t = lowerCase(t);
    t = stemmer.stem(t);
    if (stopWords.contains(t)) return;
    if (asciiFolding) t = fold(t);
    out.add(t);
    positions.add(position);
  }

  /** Rust's {@code char::is_alphanumeric} (Alphabetic, or a number of category Nd, Nl or No) at Unicode 17. */
  static boolean isAlphanumeric(int cp) {
    if (cp < 0x80) return (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || (cp >= '0' && cp <= '9');
    return FtsCharacters.isAlphanumeric(cp);
  }

  /** Rust's {@code char::is_ascii_whitespace}: space, tab, line feed, form feed, carriage return. */
  static boolean isAsciiWhitespace(int cp) {
    return cp == ' ' || cp == '\t' || cp == '\n' || cp == '\f' || cp == '\r';
  }

  static int utf8Length(String s) {
    int bytes = 0;
    int n = s.length();
    for (int i = 0; i < n; ) {
      int cp = s.codePointAt(i);
      bytes += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
      i += Character.charCount(cp);
    }
    return bytes;
  }

  /** Each code point by its own lower case (Rust's {@code char::to_lowercase}: no context, so no final sigma). */
  static String lowerCase(String s) {
    if (isAscii(s)) return s.toLowerCase(Locale.ROOT);
    StringBuilder b = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); ) {
      int cp = s.codePointAt(i);
      if (cp < 0x80) {
        b.append(cp >= 'A' && cp <= 'Z' ? (char) (cp + 32) : (char) cp);
      } else {
        String lower = FtsCharacters.lowerCase(cp);
        if (lower == null) b.appendCodePoint(cp);
        else b.append(lower);
      }
      i += Character.charCount(cp);
    }
    return b.toString();
  }

  /** Each code point by its ASCII folding where it has one; tokens that are all ASCII are left as they are. */
  static String fold(String s) {
    if (isAscii(s)) return s;
    StringBuilder b = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); ) {
      int cp = s.codePointAt(i);
      String folded = cp < 0x80 ? null : FtsCharacters.folding(cp);
      if (folded == null) b.appendCodePoint(cp);
      else b.append(folded);
      i += Character.charCount(cp);
    }
    return b.toString();
  }

  private static boolean isAscii(String s) {
    for (int i = 0; i < s.length(); i++) {
      if (s.charAt(i) >= 0x80) return false;
    }
    return true;
  }
}
