#include "core/document.h"

#include <utility>

namespace easyplan {

Document::Document(std::string file, Json root, std::map<std::string, Position> positions,
                   std::vector<std::string> duplicate_keys, std::map<std::string, Position> first_positions)
    : file_(std::move(file)),
      root_(std::move(root)),
      positions_(std::move(positions)),
      duplicate_keys_(std::move(duplicate_keys)),
      first_positions_(std::move(first_positions)) {}

SourceLoc Document::LocateFirst(std::string_view duplicate_pointer) const {
  SourceLoc loc{file_, std::string(duplicate_pointer), 0, 0};
  if (const auto it = first_positions_.find(loc.pointer); it != first_positions_.end()) {
    loc.line = it->second.line;
    loc.column = it->second.column;
  }
  return loc;
}

std::vector<Diag> Document::DuplicateKeyWarnings() const {
  std::vector<Diag> warnings;
  for (const std::string& pointer : duplicate_keys_) {
    warnings.push_back(Diag{Severity::kWarning, Locate(pointer), DuplicateKeyMessage(pointer), {}});
  }
  return warnings;
}

std::string Document::DuplicateKeyMessage(std::string_view duplicate_pointer) const {
  const SourceLoc first = LocateFirst(duplicate_pointer);
  const SourceLoc last = Locate(duplicate_pointer);
  if (first.line == 0 || last.line == 0) return "key given more than once; the last value is used";
  return "key given more than once, at " + first.ToString() + " and " + last.ToString() + "; the last value is used";
}

SourceLoc Document::Locate(std::string_view pointer) const {
  SourceLoc loc{file_, std::string(pointer), 0, 0};
  std::string_view probe = pointer;
  while (true) {
    const auto it = positions_.find(std::string(probe));
    if (it != positions_.end()) {
      loc.line = it->second.line;
      loc.column = it->second.column;
      return loc;
    }
    if (probe.empty()) return loc;
    probe = ParentPointer(probe);
  }
}

}  // namespace easyplan
