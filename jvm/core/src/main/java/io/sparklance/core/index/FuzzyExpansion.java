package io.sparklance.core.index;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Lance's fuzzy expansion of a match query (`MatchQuery` with `fuzziness` above 0): each query token (split from the
 * query by the index's base tokenizer alone: not lower-cased, stemmed or folded, stop words kept) becomes the
 * tokens of an index partition's dictionary within `fuzziness` edits of it, measured as pylance 14 measures them
 * (checked against it, tests/test_full_text_search.py):
 * <ul>
 *   <li>edits are insertions, deletions and substitutions of code points (Levenshtein; a transposition is two);</li>
 *   <li>a token must start with the query token's first `prefixLength` code points (all of it when shorter), not
 *       bytes: pylance 14 does not take `検索` for `数据` at prefix length 1, though both start with byte 0xE6;</li>
 *   <li>the dictionary is walked in its key order (bytes, lexicographic), query token after query token, and the
 *       walk stops once `maxExpansions` tokens were taken over all query tokens: later query tokens may get none.</li>
 * </ul>
 * A match query with operator OR then matches a document holding any expansion; with AND, one holding an expansion of
 * every query token.
 */
public final class FuzzyExpansion {
  /** Per query token, in query order, the dictionary tokens it expands to, in dictionary order. */
  public final List<List<String>> groups;
  /** Whether the walk stopped at `maxExpansions` (so that a larger limit could take more tokens). */
  public final boolean capped;

  private FuzzyExpansion(List<List<String>> groups, boolean capped) {
    this.groups = Collections.unmodifiableList(groups);
    this.capped = capped;
  }

  /** The expansion of `tokens` in `dictionary`. */
  public static FuzzyExpansion of(FstReader dictionary, List<String> tokens, int fuzziness, int prefixLength,
      int maxExpansions) {
    List<List<String>> groups = new ArrayList<>();
    int[] taken = {0};
    boolean[] capped = {false};
    for (String token : tokens) {
      List<String> group = new ArrayList<>();
      groups.add(group);
      if (taken[0] >= maxExpansions) {
        capped[0] = true;
        continue;
      }
      int[] query = token.codePoints().toArray();
      int prefixCodePoints = Math.min(Math.max(prefixLength, 0), query.length);
      byte[] prefix = new String(query, 0, prefixCodePoints).getBytes(StandardCharsets.UTF_8);
      dictionary.forEach((key, length, value) -> {
        if (taken[0] >= maxExpansions) {
          capped[0] = true;
          return;
        }
        if (length < prefix.length) return;
        for (int i = 0; i < prefix.length; i++) {
          if (key[i] != prefix[i]) return;
        }
        String candidate = new String(key, 0, length, StandardCharsets.UTF_8);
        if (within(query, candidate.codePoints().toArray(), fuzziness)) {
          group.add(candidate);
          taken[0]++;
        }
      });
    }
    return new FuzzyExpansion(groups, capped[0]);
  }

  /** Whether `b` is at most `max` insertions, deletions and substitutions of code points away from `a`. */
  static boolean within(int[] a, int[] b, int max) {
    if (Math.abs(a.length - b.length) > max) return false;
    int[] previous = new int[b.length + 1];
    int[] current = new int[b.length + 1];
    for (int j = 0; j <= b.length; j++) previous[j] = j;
    for (int i = 1; i <= a.length; i++) {
      current[0] = i;
      int rowMin = current[0];
      for (int j = 1; j <= b.length; j++) {
        int cost = a[i - 1] == b[j - 1] ? 0 : 1;
        int d = Math.min(Math.min(previous[j] + 1, current[j - 1] + 1), previous[j - 1] + cost);
        current[j] = d;
        if (d < rowMin) rowMin = d;
      }
      if (rowMin > max) return false;
      int[] t = previous;
      previous = current;
      current = t;
    }
    return previous[b.length] <= max;
  }
}
