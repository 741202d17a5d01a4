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

/// Every file under schemas/ and rules/ as it was at build time, sorted by path.
std::span<const EmbeddedFile> EmbeddedFiles();

/// A YAML data file as the build parsed it: a Document encoded by core/document_codec.h.
struct EmbeddedDocument {
  std::string_view path;
  std::string_view encoded;
};

/// Every YAML file of EmbeddedFiles(), parsed at build time (schemas/tools/encode_documents.cc), sorted
/// by path.
std::span<const EmbeddedDocument> EmbeddedDocuments();

}  // namespace easyplan::schemas

#endif  // EASYPLAN_SCHEMAS_EMBEDDED_DATA_H_
