// Plans a model through the installed easyplan library, as README.md's "C++ library" section shows:
//   consumer CONFIG_JSON
// prints the resolved family and a few resolved values, and the plan of the README's mesh: the
// embedding's spec and the bytes device 0 holds. tests/install/consumer-project checks that the
// README's snippet is this file's, word for word, so the documentation cannot drift from what links.
// Both include styles an installed tree serves: <easyplan/...> and the repo-rooted "core/..." that
// easyplan's own headers use.
#include <easyplan/api/plan_pipeline.h>

#include <iostream>

#include "core/status.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: consumer CONFIG_JSON\n";
    return 2;
  }
  const char* config_path = argv[1];
  // README begin
  auto model = easyplan::api::Model::Load(easyplan::api::Environment::Real(),
                                          easyplan::api::ConfigSource::Path(config_path), {});
  if (!model.ok()) return std::cerr << model.status().ToString() << "\n", 2;
  easyplan::api::PlanOptions options;
  options.mesh.axes = "dp=1,fsdp=4,ep=1,tp=2,sp=1";
  auto result = easyplan::api::PlanModel(*model, options);  // the plan, its inputs, the expert mesh
  if (!result.ok()) return std::cerr << result.status().ToString() << "\n", 2;
  // README end
  std::cout << "family: " << (*model)->resolved().family << "\n";
  for (const char* key : {"head_dim", "num_key_value_heads", "max_position_embeddings"}) {
    std::cout << key << ": " << (*model)->config().at(key).dump() << "\n";
  }
  const easyplan::ParamTree& tree = *result->inputs.tree;
  for (const easyplan::planner::ParamPlan& param : result->plan.params) {
    const std::string& name = tree.tensors[static_cast<size_t>(param.tensor)].name;
    if (name == "model/embed_tokens/embedding") std::cout << name << ": " << param.effective.ToString() << "\n";
  }
  std::cout << "device 0 bytes: " << result->plan.device_bytes.at(0) << "\n";
  return 0;
}
