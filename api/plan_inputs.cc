#include "api/plan_inputs.h"

#include <algorithm>

#include "api/choices.h"
#include "api/option_checks.h"
#include "api/pipeline_inputs.h"
#include "core/did_you_mean.h"
#include "core/json_pointer.h"
#include "planner/lay_out_plan.h"
#include "planner/mesh_builder.h"
#include "planner/pipeline.h"

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
  EP_RETURN_IF_ERROR(CheckOptionValue("uneven", Json(text)));
  return planner::ParseUnevenMode(text).value_or(planner::UnevenMode::kReplicate);
}

// The config's mesh axes (sharding_axis_names, in order), or EasyDeL's when it has none.
std::vector<std::string> ConfigAxisNames(const Json& config) {
  std::vector<std::string> names;
  auto it = config.find("sharding_axis_names");
  if (it != config.end() && it->is_array()) {
    for (const Json& name : *it) {
      if (name.is_string()) names.push_back(name.get<std::string>());
    }
  }
  if (names.empty()) names = {"dp", "fsdp", "ep", "tp", "sp"};
  return names;
}

// Every axis name partition_axis assigns (strings, and the strings of its lists).
void AddPartitionAxes(const Json& value, std::vector<std::string>* out) {
  if (value.is_string()) {
    const std::string name = value.get<std::string>();
    if (std::find(out->begin(), out->end(), name) == out->end()) out->push_back(name);
  } else if (value.is_array() || value.is_object()) {
    for (const Json& item : value) AddPartitionAxes(item, out);
  }
}

// Other frameworks' names for EasyDeL's axes: "mp" (Megatron's model parallel), "model" and "data"
// (Flax and JAX examples), "tensor", "expert", "sequence", "context" (MaxText, torchtitan).
std::optional<std::string> ConventionalAxis(const std::string& axis, const std::vector<std::string>& known) {
  static const std::pair<const char*, const char*> kAliases[] = {
      {"mp", "tp"},       {"model", "tp"},   {"tensor", "tp"}, {"data", "dp"},   {"expert", "ep"},
      {"sequence", "sp"}, {"context", "sp"}, {"cp", "sp"},     {"zero", "fsdp"}, {"fully_sharded", "fsdp"},
      {"pipeline", "pp"}, {"pipe", "pp"},    {"stage", "pp"}};
  for (const auto& [alias, axis_name] : kAliases) {
    if (axis == alias && std::find(known.begin(), known.end(), axis_name) != known.end()) return axis_name;
  }
  return std::nullopt;
}

// True when `given` names no axis of `known`: a mesh of the user's own axes ("x=8,y=4").
bool AllOwnAxes(const planner::AxisSizes& given, const std::vector<std::string>& known) {
  return std::none_of(given.names.begin(), given.names.end(), [&](const std::string& axis) {
    return std::find(known.begin(), known.end(), axis) != known.end();
  });
}

// --mesh names the axes it sizes; the others are 1: "--mesh fsdp=8" is dp=1,fsdp=8,ep=1,tp=1,sp=1. With
// a config, an axis that neither its sharding_axis_names, partition_axis nor the rules use is a typo.
// Without one (a user's own --tree and --rules) the axes are the user's: a mesh of only their own axes
// is taken as given, and an axis no rule uses is kept, since JAX replicates over a mesh axis a
// PartitionSpec does not name; a typo then shows as the rule's axis the mesh lacks (unknown-axis).
StatusOr<planner::AxisSizes> CompleteMeshAxes(const planner::AxisSizes& given, const Json& config, bool has_config,
                                              const RuleAxesFn& rule_axes) {
  const std::vector<std::string> names = ConfigAxisNames(config);
  std::vector<std::string> known = names;
  if (auto it = config.find("partition_axis"); it != config.end()) AddPartitionAxes(*it, &known);
  if (!has_config && AllOwnAxes(given, known)) return given;
  known.emplace_back(planner::kPipelineAxis);  // easyplan's pipeline axis, on top of the config's
  // The rules are resolved only for an axis the config does not name (a rule file's own 'model').
  bool rules_added = false;
  for (const std::string& axis : given.names) {
    if (std::find(known.begin(), known.end(), axis) != known.end()) continue;
    if (!rules_added && rule_axes) {
      rules_added = true;
      for (const std::string& rule_axis : rule_axes()) {
        if (std::find(known.begin(), known.end(), rule_axis) == known.end()) known.push_back(rule_axis);
      }
      if (std::find(known.begin(), known.end(), axis) != known.end()) continue;
    }
    if (!has_config) continue;  // the user's axis, appended below
    std::string message = "--mesh names axis '" + axis + "', which this model's mesh does not have";
    std::optional<std::string> close = ConventionalAxis(axis, known);
    if (!close) close = SuggestClosest(axis, known);
    if (close) message += " (did you mean '" + *close + "'?)";
    std::string axes;
    for (const std::string& name : names) axes += (axes.empty() ? "" : ", ") + name;
    return Status::BadInput({}, message,
                            {"the mesh axes are " + axes +
                             " (the config's sharding_axis_names), and pp for pipeline stages; axes left out "
                             "of --mesh are 1"});
  }
  planner::AxisSizes out;
  for (const std::string& axis : names) {
    const auto at = std::find(given.names.begin(), given.names.end(), axis);
    out.names.push_back(axis);
    out.sizes.push_back(at == given.names.end() ? 1 : given.sizes[static_cast<size_t>(at - given.names.begin())]);
  }
  // The pipeline axis is outermost, or follows the config axes written before it ("fsdp=8,pp=4,tp=2":
  // dp, fsdp, pp, ep, tp, sp), so its place in --mesh sets the device order as every axis's does.
  const auto pp = std::find(given.names.begin(), given.names.end(), planner::kPipelineAxis);
  if (pp != given.names.end()) {
    size_t at = 0;
    for (auto before = given.names.begin(); before != pp; ++before) {
      const auto k = std::find(out.names.begin(), out.names.end(), *before);
      if (k != out.names.end()) at = std::max(at, static_cast<size_t>(k - out.names.begin()) + 1);
    }
    out.names.insert(out.names.begin() + static_cast<std::ptrdiff_t>(at), std::string(planner::kPipelineAxis));
    out.sizes.insert(out.sizes.begin() + static_cast<std::ptrdiff_t>(at),
                     *(given.sizes.begin() + (pp - given.names.begin())));
  }
  // Axes only the rules or partition_axis use (a rule file's own 'model' axis) follow, as given.
  for (size_t k = 0; k < given.names.size(); ++k) {
    if (given.names[k] == planner::kPipelineAxis) continue;
    if (std::find(names.begin(), names.end(), given.names[k]) != names.end()) continue;
    out.names.push_back(given.names[k]);
    out.sizes.push_back(given.sizes[k]);
  }
  return out;
}

}  // namespace

std::vector<std::string> RuleAxes(const rules::RuleSet& rules, const rules::Presets& presets, const Json& config) {
  std::vector<std::string> out;
  for (const rules::Rule& rule : rules.rules) {
    int chosen = -1;
    StatusOr<PartitionSpec> spec = planner::ResolveRuleSpec(rule, presets, config, &chosen, nullptr);
    if (!spec.ok()) continue;  // the plan reports it at the rule's line
    for (const PartitionSpec::Entry& entry : spec->entries()) {
      for (const std::string& axis : entry) {
        if (std::find(out.begin(), out.end(), axis) == out.end()) out.push_back(axis);
      }
    }
  }
  return out;
}

StatusOr<Mesh> MeshFromOptions(const MeshOptions& options, std::optional<int64_t> devices, const Json& config,
                               bool has_config, std::string* source, const RuleAxesFn& rule_axes) {
  planner::MeshRequest request;
  request.devices = devices;
  if (!options.axes.empty()) {
    EP_ASSIGN_OR_RETURN(planner::AxisSizes given, planner::ParseAxisSizes(options.axes, "--mesh"));
    EP_ASSIGN_OR_RETURN(request.ici, CompleteMeshAxes(given, config, has_config, rule_axes));
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
  if (!mesh.ok() && options.axes.empty()) {
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
  request.pipeline = pipeline;
  request.pp_axis = pp_axis;
  request.placements = placements;
  return request;
}

StatusOr<planner::Plan> PlanInputs::Build(bool keep_params) const {
  // As BuildPlan: a mesh too large for any plan is reported before the rules' problems.
  EP_RETURN_IF_ERROR(planner::CheckMeshSize(mesh, max_devices));
  EP_ASSIGN_OR_RETURN(std::shared_ptr<const planner::TreeMatches> matches,
                      model->Matches(tree_spec, tree, *rules, links));
  EP_ASSIGN_OR_RETURN(planner::Plan plan, planner::LayOutPlan(*matches, mesh, uneven,
                                                              {.max_devices = max_devices,
                                                               .keep_params = keep_params,
                                                               .pipeline = pipeline,
                                                               .pp_axis = pp_axis,
                                                               .placements = placements}));
  AddPipelineFindings(*this, plan);
  return plan;
}

Status CheckTreeSources(const PlanOptions& options) {
  // One standard input: read for CONFIG, it is empty by the time --tree reads it (issue 44).
  if (options.config.config == "-" && options.tree.file == "-") {
    return Status::BadInput({}, "CONFIG '-' and --tree '-' both read standard input, which holds one document",
                            {"give one of them as a file"});
  }
  if (!options.tree.file.empty() && !options.tree.checkpoint.empty()) {
    return Status::BadInput({}, "--tree and --from are two sources for the same tree: give one");
  }
  if (options.tree.given && !(options.tree.file.empty() && options.tree.checkpoint.empty())) {
    return Status::BadInput({}, "a tree was given: --tree and --from are other sources for it; give one");
  }
  return Status();
}

Status CheckPlanOptions(const PlanOptions& options) {
  // Each option as the command table declares its check (api/option_table.cc).
  EP_RETURN_IF_ERROR(CheckOptionValue("layout", Json(options.tree.layout)));
  EP_RETURN_IF_ERROR(CheckOptionValue("uneven", Json(options.uneven)));
  EP_RETURN_IF_ERROR(CheckOptionValue("dtype", Json(options.tree.dtype)));
  EP_RETURN_IF_ERROR(CheckOptionValue("max_tensors", Json(options.tree.max_tensors)));
  EP_RETURN_IF_ERROR(CheckOptionValue("max_devices", Json(options.mesh.max_devices)));
  EP_RETURN_IF_ERROR(CheckOptionValue("max_rules", Json(options.max_rules)));
  return CheckTreeSources(options);
}

Status CheckPlanSource(const PlanOptions& options, bool has_config) {
  if (!has_config && options.tree.file.empty() && !options.tree.given) {
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
  spec.layout = *ParseLayout(options.tree.layout);
  spec.max_tensors = options.tree.max_tensors;
  if (!options.tree.dtype.empty()) {
    spec.dtype = ParseDType(options.tree.dtype);
    if (!spec.dtype) return Status::BadInput({}, "--dtype '" + options.tree.dtype + "' is not a dtype name");
  }
  if (options.tree.given) {
    spec.source = TreeSpec::Source::kGiven;
    spec.given = options.tree.given;
    spec.layout = options.tree.given->layout;
  } else if (!options.tree.file.empty()) {
    spec.source = TreeSpec::Source::kFile;
    spec.path = options.tree.file;
  } else if (!options.tree.checkpoint.empty()) {
    spec.source = TreeSpec::Source::kCheckpoint;
    spec.path = options.tree.checkpoint;
    spec.layout = Layout::kHf;
  }
  return spec;
}

StatusOr<PlanInputs> LoadPlanInputs(const Environment& env, const PlanOptions& options, std::vector<Diag>* diags) {
  EP_ASSIGN_OR_RETURN(const Checked<PlanOptions> checked, Checked<PlanOptions>::Of(options));
  // Without a model yet, whether there is a config is whether CONFIG was given.
  EP_RETURN_IF_ERROR(CheckPlanSource(options, !options.config.config.empty()));
  EP_ASSIGN_OR_RETURN(std::shared_ptr<const Model> model, LoadModel(env, options.config, diags));
  return PreparePlan(model, checked);
}

StatusOr<PlanInputs> PreparePlan(const std::shared_ptr<const Model>& model, const PlanOptions& options) {
  EP_ASSIGN_OR_RETURN(const Checked<PlanOptions> checked, Checked<PlanOptions>::Of(options));
  return PreparePlan(model, checked);
}

StatusOr<PlanInputs> PreparePlan(const std::shared_ptr<const Model>& model, const Checked<PlanOptions>& checked) {
  const PlanOptions& options = *checked;
  // What needs the model: whether it has a config, and its limits.
  EP_RETURN_IF_ERROR(CheckPlanSource(options, model->has_config()));
  if (options.pipeline.microbatches) {
    EP_RETURN_IF_ERROR(CheckStepMicrobatches("--microbatches", *options.pipeline.microbatches, model->env().limits));
  }
  PlanInputs inputs;
  inputs.model = model;
  EP_ASSIGN_OR_RETURN(inputs.uneven, ParseUneven(options.uneven));
  inputs.max_devices = options.mesh.max_devices;
  EP_ASSIGN_OR_RETURN(inputs.presets, model->Presets());
  EP_ASSIGN_OR_RETURN(inputs.logical_dims, model->LogicalDims());
  EP_ASSIGN_OR_RETURN(inputs.rules, model->Rules(options.rules, options.max_rules));
  EP_ASSIGN_OR_RETURN(inputs.tree_spec, TreeSpecOf(options));
  EP_ASSIGN_OR_RETURN(inputs.tree, model->Tree(inputs.tree_spec));
  EP_ASSIGN_OR_RETURN(inputs.links, model->Links(inputs.tree_spec, inputs.tree, *inputs.rules));
  const RuleAxesFn rule_axes = [&] { return RuleAxes(*inputs.rules, *inputs.presets, model->config()); };
  EP_ASSIGN_OR_RETURN(inputs.mesh, MeshFromOptions(options.mesh, model->options().devices, model->config(),
                                                   model->has_config(), &inputs.mesh_source, rule_axes));
  EP_RETURN_IF_ERROR(AddPipeline(inputs, options.pipeline));
  return inputs;
}

}  // namespace easyplan::api
