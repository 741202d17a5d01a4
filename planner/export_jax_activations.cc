#include "planner/export_jax_activations.h"

#include <string>

#include "core/dtype.h"
#include "planner/activations.h"
#include "schemas/model_dims.h"

namespace easyplan::planner {

StatusOr<JaxActivations> JaxActivationSpecs(const ActivationTable& table, const rules::Presets& presets,
                                            const Json& config, const Json& geometry,
                                            const schemas::DimKeysByObject& dim_keys, const Mesh& mesh) {
  // The geometry of multimodal families is their text_config's, as `easyplan activations` reads it.
  const Json& model = schemas::GeometryConfig(config);
  EP_ASSIGN_OR_RETURN(const schemas::ModelDims dims, schemas::ModelDimsOf(config, geometry, dim_keys));
  const std::string dtype = dims.torch_dtype.empty() ? "bfloat16" : dims.torch_dtype;
  std::optional<DType> parsed_dtype = ParseDType(dtype);
  if (!parsed_dtype) {
    return Status::BadInput({}, "'" + dtype + "' is not a dtype name (the config's torch_dtype; pass --dtype)");
  }
  JaxActivations out;
  for (Mode mode : {Mode::kTrain, Mode::kPrefill, Mode::kDecode, Mode::kInsert}) {
    ActivationRequest request;
    request.table = &table;
    request.presets = &presets;
    request.config = &model;
    request.dims = &dims;
    request.mesh = mesh;
    request.attention.mode = mode;
    request.attention.layout = AttnLayout::kBthd;
    request.dtype = *parsed_dtype;
    EP_ASSIGN_OR_RETURN(ActivationPlan plan, BuildActivationPlan(request));
    std::vector<std::pair<std::string, std::optional<PartitionSpec>>> specs;
    for (const auto& [name, spec] : AttnFields(plan.attention)) {
      specs.emplace_back("attention." + name, spec ? std::optional<PartitionSpec>(*spec) : std::nullopt);
    }
    for (const auto& [name, spec] : plan.residual) specs.emplace_back(name, spec);
    specs.emplace_back("logits", plan.logits);
    specs.emplace_back("labels", plan.labels);
    specs.emplace_back("kv_cache.key", plan.cache_key);
    specs.emplace_back("kv_cache.value", plan.cache_value);
    specs.emplace_back("kv_cache.indexs", plan.cache_index);
    specs.emplace_back("kv_cache.starts", plan.cache_index);
    out.modes.emplace_back(std::string(ModeName(mode)), std::move(specs));
    if (plan.experts) {
      out.expert_mesh_shape = plan.expert_mesh.shape;
      out.expert_mesh_axis_names = plan.expert_mesh.axis_names;
    }
  }
  return out;
}

}  // namespace easyplan::planner
