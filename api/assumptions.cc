#include "api/assumptions.h"

#include <fmt/format.h>

#include "api/forward_model.h"
#include "schemas/model_dims.h"
#include "schemas/tree_builder.h"

namespace easyplan::api {
namespace {

// Set by the user (file, overrides, --set), not by a family's or EasyDeL's default.
bool ChosenByUser(const Model& model, const std::string& key) {
  const Json& provenance = model.resolved().provenance;
  auto it = provenance.find(key);
  return it != provenance.end() && it->is_string() && !it->get<std::string>().starts_with("default:");
}

// A routed MoE: the model's canonical expert count (ModelDims::experts, read through the family's own
// key spellings: schemas/dims.yaml) is positive.
bool RoutedExperts(const Model& model) {
  const StatusOr<schemas::ModelDims> dims = schemas::ModelDimsOf(model.resolved());
  return dims.ok() && dims->experts > 0;
}

}  // namespace

std::string QuantizedWeights(const Model& model, const TreeSpec& tree) {
  // A quantized checkpoint (schemas/tree_builder.cc): EasyDeL dequantizes it at load, so the EasyDeL
  // layout holds every weight in the parameter dtype; the HF layout counts the weights as stored unless
  // --dtype asks for the dequantized view.
  const std::string method = schemas::StoredQuantization(model.config());
  if (tree.source != TreeSpec::Source::kTemplate || method.empty()) return "";
  const std::string name = method == "fp8" ? "FP8" : "MXFP4";
  if (tree.layout == Layout::kEasyDel) {
    return "the checkpoint's " + name +
           " weights dequantized to the parameter dtype at load, as EasyDeL loads them; --layout hf counts them as "
           "stored";
  }
  if (tree.dtype) return "the checkpoint's " + name + " weights dequantized (--dtype); without it they count as stored";
  return "the checkpoint's " + name + " weights as stored (--layout hf); --dtype D counts them dequantized";
}

std::vector<std::string> StepAssumptions(const Model& model, const StepAssumptionsOf& step) {
  const Json& config = model.config();
  std::vector<std::string> out;
  // Which defaults of EasyDeL's add_basic_configurations (easydel/infra/base_config.py) move a figure.
  if (step.train && !step.policy_searched && !ChosenByUser(model, "gradient_checkpointing") &&
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
  const TreeSpec* tree = step.tree;
  const bool template_tree = tree != nullptr && tree->source == TreeSpec::Source::kTemplate;
  if (tree != nullptr) {
    if (std::string quantized = QuantizedWeights(model, *tree); !quantized.empty()) out.push_back(quantized);
  }
  const auto has_dtype = [&](const char* key) {
    auto it = config.find(key);
    return it != config.end() && it->is_string();
  };
  if (template_tree && !tree->dtype && !has_dtype("torch_dtype") && !has_dtype("dtype")) {
    out.push_back(
        "parameters in float32: the config names no torch_dtype; --dtype bfloat16 (or --set torch_dtype=bfloat16) "
        "halves them");
  }
  if (step.priced && !ChosenByUser(model, "attn_mechanism") &&
      config.value("attn_mechanism", std::string()) == "vanilla") {
    out.push_back(
        "attn_mechanism vanilla (EasyDeL's default): attention's score matrices go through HBM; --set "
        "attn_mechanism=flash_attn2 (GPU) or blockwise keeps them on chip");
  }
  // How the MoE block runs (the structure's moe.execution, schemas/forwards.yaml) and what its routed bytes
  // depend on: the module's own loop over experts (kernels/model_experts.cc) runs them all, the fused MoE path
  // (kernels/model_fused_moe.cc) what the routing sends.
  bool expert_loop = false;
  schemas::ExpertsExecution execution = schemas::ExpertsExecution::kFusedMoe;
  if (step.priced) {
    StatusOr<const schemas::NumericCheckSpec*> forward = ForwardPassOf(model, "the step-time model", "");
    if (forward.ok() && !(*forward)->structure.moe.block.empty()) execution = (*forward)->structure.moe.execution;
    expert_loop = execution == schemas::ExpertsExecution::kExpertLoop;
  }
  const std::string version = model.easydel_version().name;
  if (execution == schemas::ExpertsExecution::kPerTokenGather) {
    out.push_back(fmt::format(
        "per-token expert gather: EasyDeL {}'s {} experts take each token's top_k expert kernels with jnp.take "
        "(no fused_moe path); XLA's gather partitioner all-gathers each kernel's expert dim and every device "
        "builds [tokens, top_k, in, out] kernels for its tokens, which the memory and the step price",
        version, model.model_type()));
  } else if (execution == schemas::ExpertsExecution::kScoreMaskedLoop) {
    out.push_back(fmt::format(
        "every expert pass on every token: EasyDeL {}'s {} MoE loops over its experts and each pass runs all "
        "of them on the score-scaled tokens split into consecutive chunks (chunk j through expert j, not the "
        "expert a token chose), so the step prices experts x the matmuls of one expert-width MLP",
        version, model.model_type()));
  }
  if (expert_loop) {
    StatusOr<schemas::ModelDims> dims = schemas::ModelDimsOf(model.resolved());
    if (dims.ok() && dims->experts > 0) {
      out.push_back(fmt::format(
          "every expert on every token: EasyDeL's MoE module for {} loops over its {} experts instead of the "
          "fused_moe path, so the step prices all of their matmuls; MFU's N counts the top_k a token uses",
          model.model_type(), dims->experts));
    }
  }
  if (step.priced && RoutedExperts(model) && execution == schemas::ExpertsExecution::kFusedMoe) {
    std::string line =
        "balanced routing: each expert receives top_k / experts of the tokens and each expert shard sends every "
        "peer the rows it computed in the ragged all-to-all of EasyDeL's fused_moe path; skewed routing moves more";
    const auto method = config.find("moe_method");
    if (method != config.end() && method->is_string() && *method != "fused_moe") {
      line += "; moe_method " + method->get<std::string>() +
              " is priced as fused_moe, the one path whose collectives EasyDeL's code fixes (XLA partitions the "
              "others)";
    }
    out.push_back(line);
  }
  return out;
}

}  // namespace easyplan::api
