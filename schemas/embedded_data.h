#ifndef EASYPLAN_SCHEMAS_EMBEDDED_DATA_H_
#define EASYPLAN_SCHEMAS_EMBEDDED_DATA_H_

#include <span>
#include <string_view>

namespace easyplan::schemas {

/// A data file compiled into the binary; `path` is repo-relative ("schemas/families/llama.yaml").
struct EmbeddedFile {
  std::string_view path;
  std::string_view contents;
};

/// Every file under schemas/ (and later rules/) as it was at build time, sorted by path.
std::span<const EmbeddedFile> EmbeddedFiles();

}  // namespace easyplan::schemas

#endif  // EASYPLAN_SCHEMAS_EMBEDDED_DATA_H_
