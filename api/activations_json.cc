#include "api/activations_json.h"

#include <fmt/format.h>

#include "api/findings_json.h"
#include "api/json_text.h"
#include "api/plan_json.h"
#include "core/json.h"

namespace easyplan::api {
namespace {

using planner::ActivationPlan;
using planner::ActivationTensor;

std::string OptionalSpecJson(const std::optional<PartitionSpec>& spec) { return spec ? SpecJson(*spec) : "null"; }

const PartitionSpec* Residual(const ActivationPlan& plan, const std::string& name) {
  for (const auto& [entry, spec] : plan.residual) {
    if (entry == name) return &spec;
  }
  return nullptr;
}

std::string ResidualJson(const ActivationPlan& plan, const std::string& name) {
  const PartitionSpec* spec = Residual(plan, name);
  return spec ? SpecJson(*spec) : "null";
}

std::string KernelJson(const ActivationPlan& plan) {
  if (!plan.kernel) return "  \"kernel\": null,\n  \"kernel_note\": " + Quoted(plan.kernel_note) + ",\n";
  const planner::KernelReport& kernel = *plan.kernel;
  std::string out = "  \"kernel\": {";
  out += fmt::format(
      "\"name\": {}, \"easydel\": {}, \"selected_by\": {}, \"mode_test\": {}, \"tested\": {}, \"mode\": \"{}\", "
      "\"layout\": \"{}\", \"qkv_mni_sharding\": {}, \"shard_map\": {}, \"transposed\": {},\n    \"specs\": {{",
      Quoted(kernel.name), Quoted(kernel.easydel_name), Quoted(kernel.selected_by), Quoted(KernelModeTest(kernel)),
      kernel.tested ? std::to_string(*kernel.tested) : "null", ModeName(kernel.kernel_mode),
      planner::AttnLayoutName(kernel.layout), kernel.qkv_mni ? "true" : "false", kernel.shard_map ? "true" : "false",
      kernel.transposed ? "true" : "false");
  bool first = true;
  for (const planner::KernelSpecReport& spec : kernel.specs) {
    out += first ? "\n      " : ",\n      ";
    first = false;
    out += fmt::format("{}: {{\"spec\": {}, \"applied\": {}, \"corrected\": {}, \"shape\": {}}}", Quoted(spec.name),
                       SpecJson(spec.spec), SpecJson(spec.applied), spec.corrected ? "true" : "false",
                       spec.shape ? DimsJson(spec.shape->dims()) : "null");
  }
  out += first ? "}},\n" : "\n    }},\n";
  return out;
}

std::string TensorJson(const ActivationTensor& tensor) {
  std::string out = fmt::format(
      "{{\"name\": {}, \"shape\": {}, \"dtype\": \"{}\", \"spec\": {}, \"effective_spec\": {}, "
      "\"shard_shape\": {}, \"bytes\": {}, \"bytes_per_device\": {}",
      Quoted(tensor.name), DimsJson(tensor.shape.dims()), DTypeName(tensor.dtype), SpecJson(tensor.spec),
      SpecJson(tensor.effective), DimsJson(tensor.shard_shape.dims()), tensor.bytes, tensor.bytes_per_device);
  if (planner::IsCacheRow(tensor.name)) {
    out += fmt::format(", \"layers\": {}", tensor.layers);
  }
  if (tensor.window > 0) out += fmt::format(", \"window\": {}", tensor.window);
  return out + "}";
}

std::string RaggedJson(const planner::RaggedCacheReport& ragged) {
  std::string out = "  \"ragged_cache\": {";
  out += fmt::format(
      "\"version\": \"v{}\", \"page_size\": {}, \"num_pages\": {}, \"kv_heads\": {}, \"head_dim\": {}, "
      "\"layers\": {}, \"kvdtype\": \"{}\", \"dtype\": \"{}\", \"upcast\": {}, ",
      ragged.options.version, ragged.options.page_size, ragged.options.num_pages, ragged.kv_heads, ragged.head_dim,
      ragged.layers, DTypeName(ragged.requested_dtype), DTypeName(ragged.dtype), ragged.upcast ? "true" : "false");
  if (ragged.options.version == 3) {
    out += fmt::format("\"packing\": {}, \"combined_heads\": {}, \"groups\": {}, \"head_dim_pad\": {}, ",
                       ragged.packing, ragged.combined_heads, ragged.groups, ragged.head_dim_pad);
  }
  out += fmt::format(
      "\"dp_size\": {}, \"kv_head_axis_size\": {}, \"kv_head_shards\": {}, \"heads_replicated\": {},\n    "
      "\"kv_pages\": {},\n    \"bytes\": {}, \"bytes_per_device\": {}, ",
      ragged.dp_size, ragged.kv_head_axis_size, ragged.kv_head_shards, ragged.heads_replicated ? "true" : "false",
      TensorJson(ragged.pages), ragged.bytes, ragged.bytes_per_device);
  out += fmt::format("\"kernel\": {{\"query\": {}, \"kv\": {}, \"sinks\": {}}}}},\n", SpecJson(ragged.query),
                     SpecJson(ragged.kv), SpecJson(ragged.sinks));
  return out;
}

}  // namespace

std::string ExpertJsonMembers(const planner::ExpertMesh& mesh, const planner::ExpertSpecs& specs) {
  std::string out = fmt::format("  \"expert_mesh\": {{\"dp\": {}, \"ep\": {}, \"tp\": {}}},\n", mesh.shape[0],
                                mesh.shape[1], mesh.shape[2]);
  out += "  \"experts\": {";
  out += fmt::format("\"count\": {}, \"expert_tensor_mode\": {}, ", specs.experts,
                     specs.expert_tensor_mode ? "true" : "false");
  out += fmt::format("\"mesh_axis_names\": [{}, {}, {}], ", Quoted(mesh.axis_names[0]), Quoted(mesh.axis_names[1]),
                     Quoted(mesh.axis_names[2]));
  out += fmt::format("\"folded\": {{\"dp\": {}, \"ep\": {}, \"tp\": {}}}, ", Json(mesh.members[0]).dump(),
                     Json(mesh.members[1]).dump(), Json(mesh.members[2]).dump());
  out += fmt::format("\"kernels\": {{\"column\": {}, \"row\": {}, \"bias\": {}}}, ", SpecJson(specs.column),
                     SpecJson(specs.row), SpecJson(specs.bias));
  std::vector<std::string> fused;
  for (const auto& [name, spec] : specs.fused) fused.push_back(Quoted(name) + ": " + SpecJson(spec));
  out +=
      fmt::format("\"fused\": {{{}}}, \"model_output\": {}}},\n", fmt::join(fused, ", "), SpecJson(specs.model_output));
  return out;
}

std::string ActivationsToJsonText(const ActivationsView& view) {
  const ActivationPlan& plan = *view.plan;
  const planner::AttnOptions& options = plan.attention_options;
  std::string out = "{\n";
  out += "  \"model_type\": " + Quoted(view.model_type) + ",\n";
  if (!view.easydel_version.empty()) out += "  \"easydel_version\": " + Quoted(view.easydel_version) + ",\n";
  out += fmt::format("  \"mode\": \"{}\",\n", ModeName(options.mode));
  out += fmt::format("  \"easydel_mode\": \"{}\",\n", ModeConstant(options.mode));
  out += fmt::format("  \"layout\": \"{}\",\n", planner::AttnLayoutName(options.layout));
  out += fmt::format("  \"qkv_mni_sharding\": {},\n", options.qkv_mni ? "true" : "false");
  out += fmt::format("  \"softmax_aux_ndim\": {},\n",
                     options.softmax_aux_ndim ? std::to_string(*options.softmax_aux_ndim) : "null");
  out += "  \"mesh\": " + MeshJson(plan.mesh) + ",\n";
  out += "  \"mesh_source\": " + Quoted(view.mesh_source) + ",\n";
  out += "  \"attention\": {\n";
  const auto fields = planner::AttnFields(plan.attention);
  for (size_t i = 0; i < fields.size(); ++i) {
    out += fmt::format("    \"{}\": {}{}\n", fields[i].first, fields[i].second ? SpecJson(*fields[i].second) : "null",
                       i + 1 < fields.size() ? "," : "");
  }
  out += "  },\n";
  out += "  \"hidden_state\": " + ResidualJson(plan, "hidden_state") + ",\n";
  out += "  \"attn_q\": " + ResidualJson(plan, "attn_q") + ",\n";
  out += "  \"attn_kv\": " + ResidualJson(plan, "attn_kv") + ",\n";
  out += "  \"logits\": " + OptionalSpecJson(plan.logits) + ",\n";
  out += "  \"labels\": " + OptionalSpecJson(plan.labels) + ",\n";
  out += "  \"kv_cache\": {";
  out += fmt::format("\"key\": {}, \"value\": {}, \"indexs\": {}, \"starts\": {}, \"decode_key\": {}, ",
                     SpecJson(plan.cache_key), SpecJson(plan.cache_value), SpecJson(plan.cache_index),
                     SpecJson(plan.cache_index), SpecJson(plan.cache_decode_key));
  out += fmt::format(
      "\"reshard_per_decode_step\": {}, \"use_sharded_kv_caching\": {}, "
      "\"kv_cache_sharding_sequence_axis_name\": {}",
      plan.cache_reshard ? "true" : "false", plan.use_sharded_kv_caching ? "true" : "false",
      plan.kv_cache_sharding_sequence_axis_name.dump());
  if (plan.has_shapes) {
    out += fmt::format(", \"bytes\": {}, \"bytes_per_device\": {}", plan.cache_bytes, plan.cache_bytes_per_device);
  }
  out += "},\n";
  if (plan.ragged) out += RaggedJson(*plan.ragged);
  out += KernelJson(plan);
  const planner::ExpertMesh& expert = plan.expert_mesh;
  if (plan.experts) {
    out += ExpertJsonMembers(expert, *plan.experts);
  } else {
    out += fmt::format("  \"expert_mesh\": {{\"dp\": {}, \"ep\": {}, \"tp\": {}}},\n", expert.shape[0], expert.shape[1],
                       expert.shape[2]);
  }
  if (plan.has_shapes) {
    out += "  \"tensors\": [";
    bool first = true;
    for (const ActivationTensor& tensor : plan.tensors) {
      out += first ? "\n    " : ",\n    ";
      first = false;
      out += TensorJson(tensor);
    }
    out += first ? "],\n" : "\n  ],\n";
  }
  const SeverityCounts counts = CountSeverities(plan.findings);
  out += fmt::format("  \"summary\": {{\"errors\": {}, \"warnings\": {}}},\n", counts.errors, counts.warnings);
  return out + ClosingFindingsJson(plan.findings);
}

std::string KernelModeTest(const planner::KernelReport& kernel) {
  return fmt::format("query.shape[{}]", kernel.mode_dim);
}

}  // namespace easyplan::api
