// Resolves a config.json through the installed easyplan library and prints a few resolved values,
// the way `easyplan resolve` computes them:
//   consumer CONFIG_JSON
// Both include styles an installed tree serves: <easyplan/...> and the repo-rooted "core/..." that
// easyplan's own headers use.
#include <easyplan/schemas/resolver.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "core/document.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: consumer CONFIG_JSON\n";
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in.is_open()) {
    std::cerr << argv[1] << ": cannot open\n";
    return 2;
  }
  std::ostringstream text;
  text << in.rdbuf();
  auto document = easyplan::ParseJsonDocument(text.str(), argv[1]);
  if (!document.ok()) {
    std::cerr << document.status().ToString() << "\n";
    return 2;
  }
  easyplan::schemas::SchemaSet schemas(easyplan::schemas::DataSource::Embedded());
  easyplan::schemas::ConfigInput input{std::move(*document), std::nullopt, {}};
  auto resolved = easyplan::schemas::ResolveConfig(input, {}, schemas);
  if (!resolved.ok()) {
    std::cerr << resolved.status().ToString() << "\n";
    return 2;
  }
  std::cout << "family: " << resolved->family << "\n";
  for (const char* key : {"head_dim", "num_key_value_heads", "max_position_embeddings"}) {
    std::cout << key << ": " << resolved->config.at(key).dump() << "\n";
  }
  return 0;
}
