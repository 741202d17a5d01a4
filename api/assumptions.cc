#include "api/assumptions.h"

namespace easyplan::api {
namespace {

// Set by the user (file, overrides, --set), not by a family's or EasyDeL's default.
bool ChosenByUser(const Model& model, const std::string& key) {
  const Json& provenance = model.resolved().provenance;
  auto it = provenance.find(key);
  return it != provenance.end() && it->is_string() && !it->get<std::string>().starts_with("default:");
}

}  // namespace

std::vector<std::string> StepAssumptions(const Model& model, const StepAssumptionsOf& step) {
  const Json& config = model.config();
  std::vector<std::string> out;
  // Which defaults of EasyDeL's add_basic_configurations (easydel/infra/base_config.py) move a figure.
  if (step.train && !ChosenByUser(model, "gradient_checkpointing") &&
      config.value("gradient_checkpointing", std::string()).empty()) {
    out.push_back(
        "gradient_checkpointing none (EasyDeL's default): every layer's activations are kept for the backward; "
        "--set gradient_checkpointing=nothing_saveable recomputes them instead");
  }
  if (!step.train && !ChosenByUser(model, "kvdtype") && config.value("kvdtype", std::string()) == "float32") {
    out.push_back(
        "kvdtype float32 (EasyDeL's default): the KV cache takes twice bfloat16's memory; --set "
        "kvdtype=bfloat16 halves it");
  }
  if (step.priced && !ChosenByUser(model, "attn_mechanism") &&
      config.value("attn_mechanism", std::string()) == "vanilla") {
    out.push_back(
        "attn_mechanism vanilla (EasyDeL's default): attention's score matrices go through HBM; --set "
        "attn_mechanism=flash_attn2 (GPU) or blockwise keeps them on chip");
  }
  return out;
}

}  // namespace easyplan::api
