#ifndef EASYPLAN_CORE_DID_YOU_MEAN_H_
#define EASYPLAN_CORE_DID_YOU_MEAN_H_

// Spelling suggestions for closed vocabularies (subcommands, mesh axes, architectures, dtypes,
// attribute names): `unknown dtype "bf61"` + `did you mean "bf16"?`.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace easyplan {

/// Optimal-string-alignment distance: the fewest single-byte insertions, deletions, substitutions
/// and swaps of two adjacent bytes that turn `a` into `b` (no substring is edited twice).
/// Case-sensitive. Uses O(min(|a|, |b|)) memory. EditDistance("ca", "ac") == 1.
size_t EditDistance(std::string_view a, std::string_view b);

/// The candidate the user most likely meant by `word`, or nullopt. In order of preference:
///  1. a candidate equal to `word` ignoring ASCII case ("BF16" -> "bf16");
///  2. the candidate with the smallest EditDistance (compared ignoring ASCII case), if that
///     distance is at most max(1, |word| / 3);
///  3. if |word| >= 4 and it is a prefix of candidates, or candidates of length >= 4 are prefixes of
///     `word` (ignoring ASCII case), the shortest of them ("flash" -> "flash_attn2").
/// Ties go to the earliest candidate. A candidate identical to `word` is never suggested, and an
/// empty `word` gets no suggestion.
std::optional<std::string> SuggestClosest(std::string_view word, const std::vector<std::string>& candidates);

/// Items in double quotes joined by ", ": {"a", "b"} -> `"a", "b"`; {} -> "". For "expected one
/// of ..." messages. Items are not escaped.
std::string JoinQuoted(const std::vector<std::string>& items);

}  // namespace easyplan

#endif  // EASYPLAN_CORE_DID_YOU_MEAN_H_
