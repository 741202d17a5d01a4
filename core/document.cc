#include "core/document.h"

#include <utility>

namespace easyplan {

Document::Document(std::string file, Json root, std::map<std::string, Position> positions,
                   std::vector<std::string> duplicate_keys)
    : file_(std::move(file)),
      root_(std::move(root)),
      positions_(std::move(positions)),
      duplicate_keys_(std::move(duplicate_keys)) {}

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
