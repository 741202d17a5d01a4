#include "core/did_you_mean.h"

#include <algorithm>
#include <limits>

#include "core/ascii.h"

namespace easyplan {

size_t EditDistance(std::string_view a, std::string_view b) {
  // Keep the shorter string along the rows so memory is O(min(|a|, |b|)); the distance is symmetric.
  if (a.size() < b.size()) std::swap(a, b);
  const size_t n = b.size();
  // Three rows of the classic DP table: i-2, i-1 and i (each of length n + 1).
  std::vector<size_t> before_prev(n + 1), prev(n + 1), cur(n + 1);
  for (size_t j = 0; j <= n; ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= n; ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      size_t best = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        best = std::min(best, before_prev[j - 2] + 1);
      }
      cur[j] = best;
    }
    std::swap(before_prev, prev);
    std::swap(prev, cur);
  }
  return prev[n];
}

std::optional<std::string> SuggestClosest(std::string_view word, const std::vector<std::string>& candidates) {
  if (word.empty()) return std::nullopt;
  const std::string lowered = AsciiLowered(word);

  for (const std::string& candidate : candidates) {
    if (candidate != word && AsciiLowered(candidate) == lowered) return candidate;
  }

  const size_t max_distance = std::max<size_t>(1, word.size() / 3);
  const std::string* closest = nullptr;
  size_t closest_distance = std::numeric_limits<size_t>::max();
  for (const std::string& candidate : candidates) {
    if (candidate == word) continue;
    const size_t distance = EditDistance(lowered, AsciiLowered(candidate));
    if (distance <= max_distance && distance < closest_distance) {
      closest = &candidate;
      closest_distance = distance;
    }
  }
  if (closest != nullptr) return *closest;

  const std::string* shortest_prefix_match = nullptr;
  for (const std::string& candidate : candidates) {
    if (candidate == word) continue;
    const std::string lowered_candidate = AsciiLowered(candidate);
    const bool word_is_prefix = lowered.size() >= 4 && lowered_candidate.starts_with(std::string_view(lowered));
    const bool candidate_is_prefix =
        lowered_candidate.size() >= 4 && lowered.starts_with(std::string_view(lowered_candidate));
    if (!word_is_prefix && !candidate_is_prefix) continue;
    if (shortest_prefix_match == nullptr || candidate.size() < shortest_prefix_match->size()) {
      shortest_prefix_match = &candidate;
    }
  }
  if (shortest_prefix_match != nullptr) return *shortest_prefix_match;
  return std::nullopt;
}

std::string JoinQuoted(const std::vector<std::string>& items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ", ";
    out += '"';
    out += items[i];
    out += '"';
  }
  return out;
}

}  // namespace easyplan
