#include "api/activations_text.h"

#include <fmt/format.h>

#include <algorithm>

#include "api/json_text.h"
#include "api/text_table.h"
#include "core/human.h"
#include "core/json.h"

namespace easyplan::api {
namespace {

using planner::ActivationPlan;
using planner::ActivationTensor;

std::string GroupText(const planner::ExpertMesh& mesh, int group) {
  const auto& members = mesh.members[static_cast<size_t>(group)];
  return members.empty() ? "none" : fmt::format("{}", fmt::join(members, " x "));
}

std::string KernelTable(const ActivationPlan& plan) {
  if (!plan.kernel) return "attention kernel: " + plan.kernel_note + "\n";
  const planner::KernelReport& kernel = *plan.kernel;
  std::string out = fmt::format(
      "attention kernel {} ({} {}{}): get_mode on {} = {} -> {} rules, layout {}, qkv_mni {}\n", kernel.name,
      kernel.selected_by, kernel.easydel_name, kernel.selected_by == "--kernel" ? "" : ", selected by the config",
      KernelModeTest(kernel), kernel.tested ? std::to_string(*kernel.tested) : "more than 1",
      ModeName(kernel.kernel_mode), planner::AttnLayoutName(kernel.layout), kernel.qkv_mni ? "True" : "False");
  out += kernel.shard_map ? "  shard_map specs (create_stable_sharding)" : "  with_sharding_constraint (no shard_map)";
  out += kernel.transposed ? ", on the transposed (B, H, T, D) tensors:\n" : ":\n";
  std::vector<std::vector<std::string>> rows;
  for (const planner::KernelSpecReport& spec : kernel.specs) {
    std::string text = spec.spec.ToString();
    if (!(spec.applied == spec.spec)) text += " -> " + spec.applied.ToString();
    std::string how = !spec.corrected ? "not corrected (no tensor passed)"
                      : spec.shape    ? "corrected against " + spec.shape->ToString()
                                      : "corrected against its tensor (give --batch/--seq)";
    rows.push_back({spec.name, text, how});
  }
  return out + Columns(rows, {}, "    ");
}

std::string RaggedTable(const planner::RaggedCacheReport& ragged) {
  std::string out = fmt::format(
      "ragged pages cache (eSurge RaggedPagesCache v{}, stored with the prefill rules): {} pages of {} tokens, {} "
      "layers, {} kv heads of {}\n",
      ragged.options.version, WithThousands(ragged.options.num_pages), ragged.options.page_size, ragged.layers,
      ragged.kv_heads, ragged.head_dim);
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"kv_pages", fmt::format("{} {}, {}, shard {}", ragged.pages.shape.ToString(), DTypeName(ragged.dtype),
                                          ragged.pages.effective.ToString(), ragged.pages.shard_shape.ToString())});
  if (ragged.options.version == 3) {
    rows.push_back(
        {"v3 geometry", fmt::format("packing {}, combined heads {}, groups {}, head_dim_pad {}", ragged.packing,
                                    ragged.combined_heads, ragged.groups, ragged.head_dim_pad)});
  }
  std::string shards = fmt::format("data-parallel {} (page axis), kv_head_axis asks {} -> kv_head_shards {}",
                                   ragged.dp_size, ragged.kv_head_axis_size, ragged.kv_head_shards);
  if (ragged.upcast) {
    shards += fmt::format(" (kvdtype {} upcast to {} so the groups split)", DTypeName(ragged.requested_dtype),
                          DTypeName(ragged.dtype));
  } else if (ragged.heads_replicated) {
    shards += " (the heads do not split: replicated)";
  }
  rows.push_back({"shards", shards});
  rows.push_back({"kernel", fmt::format("query {}, new K/V {}, sinks {}", ragged.query.ToString(), ragged.kv.ToString(),
                                        ragged.sinks.ToString())});
  out += Columns(rows, {}, "  ");
  out += fmt::format("  all layers: {} ({} per device)\n", HumanBytesBinary(ragged.bytes),
                     HumanBytesBinary(ragged.bytes_per_device));
  return out;
}

}  // namespace

std::string ExpertTableLines(const planner::ExpertMesh& mesh, const planner::ExpertSpecs& specs) {
  std::string out =
      fmt::format("expert mesh {} ({} folds {}, {} folds {}, {} folds {}); {} experts{}\n", mesh.ToString(),
                  mesh.axis_names[0], GroupText(mesh, 0), mesh.axis_names[1], GroupText(mesh, 1), mesh.axis_names[2],
                  GroupText(mesh, 2), specs.experts, specs.expert_tensor_mode ? ", expert-tensor mode" : "");
  out += fmt::format("expert kernels (get_moe_partition_spec, module_view): column {}, row {}, bias {}\n",
                     specs.column.ToString(), specs.row.ToString(), specs.bias.ToString());
  return out;
}

std::string ActivationsToTable(const ActivationsView& view) {
  const ActivationPlan& plan = *view.plan;
  const planner::AttnOptions& options = plan.attention_options;
  const bool generation = IsGenerationMode(options.mode);
  std::string out = fmt::format(
      "{} in {} mode (EasyDeL {}{}: {} rules), layout {}{}{}\n", view.model_type.empty() ? "model" : view.model_type,
      ModeName(options.mode), view.easydel_version.empty() ? "" : view.easydel_version + " ",
      ModeConstant(options.mode), generation ? "decode_*" : "train", planner::AttnLayoutName(options.layout),
      options.qkv_mni ? ", qkv_mni" : "",
      options.softmax_aux_ndim ? fmt::format(", softmax aux rank {}", *options.softmax_aux_ndim) : "");
  out += fmt::format("mesh {} ({} devices, from {})\n\n", plan.mesh.ToString(), WithThousands(plan.mesh.NumDevices()),
                     view.mesh_source);

  std::vector<std::vector<std::string>> rows;
  out += "attention (OperationMetadata.get_shardings, as resolved)\n";
  for (const auto& [name, spec] : planner::AttnFields(plan.attention)) {
    rows.push_back({name, spec ? spec->ToString() : "None (no softmax aux)"});
  }
  out += Columns(rows, {}, "  ");
  rows.clear();
  out += "residual stream (eformer presets, mode by the query length)\n";
  for (const auto& [name, spec] : plan.residual) rows.push_back({name, spec.ToString()});
  rows.push_back({"logits", plan.logits ? plan.logits->ToString() : "unconstrained (the loss constrains it in train)"});
  rows.push_back({"labels", plan.labels ? plan.labels->ToString() : "unconstrained"});
  out += Columns(rows, {}, "  ");
  rows.clear();
  if (plan.ragged) {
    out += RaggedTable(*plan.ragged);
  } else {
    out += "kv cache (TransformerCache, stored with the prefill rules)\n";
    rows.push_back({"key, value", plan.cache_key.ToString()});
    rows.push_back({"indexs, starts", plan.cache_index.ToString()});
    rows.push_back({"decode step reads",
                    plan.cache_decode_key.ToString() +
                        (plan.cache_reshard ? " (a different layout: resharded every step)" : " (the same layout)")});
    out += Columns(rows, {}, "  ");
  }
  out += KernelTable(plan);
  out += "\n";
  if (plan.experts) {
    out += ExpertTableLines(plan.expert_mesh, *plan.experts);
    std::vector<std::string> fused;
    for (const auto& [name, spec] : plan.experts->fused) fused.push_back(name + " " + spec.ToString());
    out += fmt::format("fused MoE on the expert mesh: {}; output on the model mesh {}\n", fmt::join(fused, ", "),
                       plan.experts->model_output.ToString());
  } else {
    out += fmt::format("expert mesh {} (a dense model: no experts)\n", plan.expert_mesh.ToString());
  }

  if (plan.has_shapes) {
    out += "\n";
    rows.clear();
    rows.push_back({"tensor", "shape", "dtype", "spec", "shard", "layers", "bytes", "bytes/device"});
    for (const ActivationTensor& tensor : plan.tensors) {
      std::string spec = tensor.effective.ToString();
      if (!(tensor.spec == tensor.effective)) spec = tensor.spec.ToString() + " -> " + spec;
      rows.push_back({tensor.name, tensor.shape.ToString(), std::string(DTypeName(tensor.dtype)), spec,
                      tensor.shard_shape.ToString(),
                      planner::IsCacheRow(tensor.name) ? std::to_string(tensor.layers) : "",
                      WithThousands(tensor.bytes), WithThousands(tensor.bytes_per_device)});
    }
    out += Columns(rows, {5, 6, 7});
    out += fmt::format("kv cache, all layers: {} ({} per device)\n", HumanBytesBinary(plan.cache_bytes),
                       HumanBytesBinary(plan.cache_bytes_per_device));
  }
  return out;
}

}  // namespace easyplan::api
