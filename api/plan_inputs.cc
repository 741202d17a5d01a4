#include "api/plan_inputs.h"

#include "api/choices.h"
#include "core/json_pointer.h"
#include "planner/lay_out_plan.h"
#include "planner/mesh_builder.h"

namespace easyplan::api {
namespace {

StatusOr<std::vector<int64_t>> IntList(const Json& config, const char* key) {
  auto it = config.find(key);
  if (it == config.end() || !it->is_array())
    return Status::BadInput({"", PointerToMember("", key)}, "expected a list of integers");
  std::vector<int64_t> values;
  for (const Json& value : *it) {
    if (!value.is_number_integer())
      return Status::BadInput({"", PointerToMember("", key)}, "expected a list of integers");
    values.push_back(value.get<int64_t>());
  }
  return values;
}

StatusOr<planner::UnevenMode> ParseUneven(const std::string& text) {
  EP_RETURN_IF_ERROR(CheckChoice("--uneven", text, {"replicate", "error", "chunk"}));
  if (text == "error") return planner::UnevenMode::kError;
  if (text == "chunk") return planner::UnevenMode::kChunk;
  return planner::UnevenMode::kReplicate;
}

}  // namespace

StatusOr<Mesh> MeshFromOptions(const MeshOptions& options, const Json& config, bool has_config, std::string* source) {
  planner::MeshRequest request;
  request.devices = options.devices;
  if (!options.mesh.empty()) {
    EP_ASSIGN_OR_RETURN(request.ici, planner::ParseAxisSizes(options.mesh, "--mesh"));
    *source = "--mesh";
  } else {
    EP_ASSIGN_OR_RETURN(std::vector<int64_t> dims, IntList(config, "sharding_axis_dims"));
    auto names = config.find("sharding_axis_names");
    if (names == config.end() || !names->is_array() || names->size() != dims.size()) {
      return Status::BadInput({"", "/sharding_axis_names"}, "expected one axis name per sharding_axis_dims entry");
    }
    for (size_t i = 0; i < dims.size(); ++i) {
      if (!(*names)[i].is_string()) return Status::BadInput({"", "/sharding_axis_names"}, "expected axis names");
      request.ici.names.push_back((*names)[i].get<std::string>());
      request.ici.sizes.push_back(dims[i]);
    }
    *source = has_config ? "config sharding_axis_dims" : "EasyDeL's default sharding_axis_dims";
  }
  if (!options.dcn.empty()) {
    EP_ASSIGN_OR_RETURN(planner::AxisSizes dcn, planner::ParseAxisSizes(options.dcn, "--dcn"));
    request.dcn = std::move(dcn);
  }
  auto mesh = planner::BuildMesh(request, options.max_devices);
  if (!mesh.ok() && options.mesh.empty()) {
    Status status = mesh.status();
    status.mutable_diag().notes.push_back("the mesh came from " + *source +
                                          "; give --mesh dp=1,fsdp=-1,tp=8 "
                                          "(and --devices N) to choose another");
    return status;
  }
  return mesh;
}

planner::PlanRequest PlanInputs::Request() const {
  planner::PlanRequest request;
  request.tree = tree.get();
  request.rules = rules;
  request.presets = presets;
  request.logical_dims = logical_dims;
  request.config = &model->config();
  request.mesh = mesh;
  request.uneven = uneven;
  if (links) request.links = *links;
  request.max_devices = max_devices;
  return request;
}

StatusOr<planner::Plan> PlanInputs::Build(bool keep_params) const {
  // As BuildPlan: a mesh too large for any plan is reported before the rules' problems.
  EP_RETURN_IF_ERROR(planner::CheckMeshSize(mesh, max_devices));
  EP_ASSIGN_OR_RETURN(std::shared_ptr<const planner::TreeMatches> matches,
                      model->Matches(tree_spec, tree, *rules, links));
  return planner::LayOutPlan(*matches, mesh, uneven, {.max_devices = max_devices, .keep_params = keep_params});
}

Status CheckPlanOptions(const PlanOptions& options) {
  return CheckPlanOptions(options, !options.config.config.empty());
}

Status CheckPlanOptions(const PlanOptions& options, bool has_config) {
  EP_RETURN_IF_ERROR(CheckChoice("--layout", options.layout, {"easydel", "hf"}));
  EP_RETURN_IF_ERROR(ParseUneven(options.uneven).status());
  if (options.max_tensors < 1 || options.max_devices < 1 || options.max_rules < 1) {
    return Status::BadInput({}, "--max-tensors, --max-devices and --max-rules must be at least 1");
  }
  if (!options.tree.empty() && !options.from.empty()) {
    return Status::BadInput({}, "--tree and --from are two sources for the same tree: give one");
  }
  if (options.given_tree && !(options.tree.empty() && options.from.empty())) {
    return Status::BadInput({}, "a tree was given: --tree and --from are other sources for it; give one");
  }
  if (!has_config && options.tree.empty() && !options.given_tree) {
    return Status::BadInput({}, "CONFIG is required (or --tree FILE.json with --rules FILE and --mesh)");
  }
  return Status();
}

StatusOr<std::shared_ptr<const Model>> LoadModel(const Environment& env, const ConfigOptions& options,
                                                 std::vector<Diag>* diags) {
  Environment model_env = env;
  if (!options.schemas_dir.empty()) model_env.schemas_dir = options.schemas_dir;
  ConfigSource source = options.config.empty() ? ConfigSource::None() : ConfigSource::Path(options.config);
  return Model::Load(std::move(model_env), std::move(source), options, diags);
}

StatusOr<TreeSpec> TreeSpecOf(const PlanOptions& options) {
  TreeSpec spec;
  spec.layout = *ParseLayout(options.layout);
  spec.max_tensors = options.max_tensors;
  if (!options.dtype.empty()) {
    spec.dtype = ParseDType(options.dtype);
    if (!spec.dtype) return Status::BadInput({}, "--dtype '" + options.dtype + "' is not a dtype name");
  }
  if (options.given_tree) {
    spec.source = TreeSpec::Source::kGiven;
    spec.given = options.given_tree;
    spec.layout = options.given_tree->layout;
  } else if (!options.tree.empty()) {
    spec.source = TreeSpec::Source::kFile;
    spec.path = options.tree;
  } else if (!options.from.empty()) {
    spec.source = TreeSpec::Source::kCheckpoint;
    spec.path = options.from;
    spec.layout = Layout::kHf;
  }
  return spec;
}

StatusOr<PlanInputs> LoadPlanInputs(const Environment& env, const PlanOptions& options, std::vector<Diag>* diags) {
  EP_RETURN_IF_ERROR(CheckPlanOptions(options));
  EP_ASSIGN_OR_RETURN(std::shared_ptr<const Model> model, LoadModel(env, options.config, diags));
  return PreparePlan(model, options);
}

StatusOr<PlanInputs> PreparePlan(const std::shared_ptr<const Model>& model, const PlanOptions& options) {
  EP_RETURN_IF_ERROR(CheckPlanOptions(options, model->has_config()));
  PlanInputs inputs;
  inputs.model = model;
  EP_ASSIGN_OR_RETURN(inputs.uneven, ParseUneven(options.uneven));
  inputs.max_devices = options.max_devices;
  EP_ASSIGN_OR_RETURN(inputs.presets, model->Presets());
  EP_ASSIGN_OR_RETURN(inputs.logical_dims, model->LogicalDims());
  EP_ASSIGN_OR_RETURN(inputs.rules, model->Rules(options.rules, options.max_rules));
  EP_ASSIGN_OR_RETURN(inputs.tree_spec, TreeSpecOf(options));
  EP_ASSIGN_OR_RETURN(inputs.tree, model->Tree(inputs.tree_spec));
  EP_ASSIGN_OR_RETURN(inputs.links, model->Links(inputs.tree_spec, inputs.tree, *inputs.rules));
  MeshOptions mesh{options.mesh, options.dcn, model->options().devices, options.max_devices};
  EP_ASSIGN_OR_RETURN(inputs.mesh, MeshFromOptions(mesh, model->config(), model->has_config(), &inputs.mesh_source));
  return inputs;
}

}  // namespace easyplan::api
