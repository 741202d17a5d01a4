#include "cli/plan_setup.h"

#include "cli/tree_source.h"
#include "core/document.h"
#include "core/json_parse.h"
#include "core/json_pointer.h"
#include "planner/layout_links.h"
#include "planner/mesh_builder.h"
#include "schemas/tree_builder.h"

namespace easyplan::cli {
namespace {

std::string ModelType(const Json& config) {
  auto it = config.find("model_type");
  return it != config.end() && it->is_string() ? it->get<std::string>() : "";
}

/// EasyDeL's defaults with no file: what a plan of a user tree without CONFIG resolves tokens against.
StatusOr<schemas::ResolvedConfig> DefaultConfig(Context& ctx, schemas::SchemaSet& schemas) {
  EP_ASSIGN_OR_RETURN(Document empty, ParseJsonDocument("{}", "<defaults>", ctx.limits));
  schemas::ConfigInput input{std::move(empty), std::nullopt, {}};
  return schemas::ResolveConfig(input, schemas::ResolveOptions{}, schemas);
}

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

}  // namespace

StatusOr<Mesh> MeshFromFlags(const MeshFlags& flags, const Json& config, bool has_config, std::string* source) {
  planner::MeshRequest request;
  request.devices = flags.devices;
  if (!flags.mesh.empty()) {
    EP_ASSIGN_OR_RETURN(request.ici, planner::ParseAxisSizes(flags.mesh, "--mesh"));
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
  if (!flags.dcn.empty()) {
    EP_ASSIGN_OR_RETURN(planner::AxisSizes dcn, planner::ParseAxisSizes(flags.dcn, "--dcn"));
    request.dcn = std::move(dcn);
  }
  auto mesh = planner::BuildMesh(request, flags.max_devices);
  if (!mesh.ok() && flags.mesh.empty()) {
    Status status = mesh.status();
    status.mutable_diag().notes.push_back("the mesh came from " + *source +
                                          "; give --mesh dp=1,fsdp=-1,tp=8 "
                                          "(and --devices N) to choose another");
    return status;
  }
  return mesh;
}

namespace {

StatusOr<planner::UnevenMode> ParseUneven(const std::string& text) {
  EP_RETURN_IF_ERROR(CheckChoice("--uneven", text, {"replicate", "error", "chunk"}));
  if (text == "error") return planner::UnevenMode::kError;
  if (text == "chunk") return planner::UnevenMode::kChunk;
  return planner::UnevenMode::kReplicate;
}

}  // namespace

void AddPlanFlags(CLI::App* cmd, PlanFlags& flags) {
  AddConfigFlags(cmd, flags.config, /*config_optional=*/true);
  cmd->add_option("--rules", flags.rules,
                  "partition rules: builtin (by model_type, the default) or a YAML/JSON rule file");
  cmd->add_option("--mesh", flags.mesh,
                  "mesh axes in mesh order, e.g. dp=1,fsdp=-1,ep=1,tp=8,sp=1 (default: the config's "
                  "sharding_axis_dims / sharding_axis_names)");
  cmd->add_option("--dcn", flags.dcn, "multi-slice factors, e.g. dp=2: axis sizes become ICI x DCN, DCN major");
  cmd->add_option("--uneven", flags.uneven,
                  "a dim its axes do not divide: replicate (eformer's correction, the default), error (JAX), "
                  "chunk (torch.chunk, as DTensor)");
  cmd->add_option("--layout", flags.layout, "name layout of the template tree: easydel (default) or hf");
  cmd->add_option("--tree", flags.tree, "plan this tree JSON (the `tree --format json` shape) instead of the template");
  cmd->add_option("--from", flags.from, "plan the tensors of this checkpoint (safetensors file, index or directory)");
  cmd->add_option("--dtype", flags.dtype, "parameter dtype of the template tree (default: the config's)");
  cmd->add_option("--max-tensors", flags.max_tensors, "refuse trees with more tensors than this (default 10000000)");
  cmd->add_option("--max-devices", flags.max_devices, "refuse meshes with more devices than this (default 4194304)");
  cmd->add_option("--max-rules", flags.max_rules, "refuse rule files with more rules than this (default 100000)");
}

planner::PlanRequest PlanInputs::Request() const {
  planner::PlanRequest request;
  request.tree = &tree;
  request.rules = rules;
  request.presets = presets;
  request.logical_dims = logical_dims;
  request.config = &resolved.config;
  request.mesh = mesh;
  request.uneven = uneven;
  request.links = links;
  request.max_devices = max_devices;
  return request;
}

StatusOr<std::unique_ptr<PlanInputs>> LoadPlanInputs(Context& ctx, const PlanFlags& flags) {
  auto inputs = std::make_unique<PlanInputs>();
  EP_RETURN_IF_ERROR(CheckChoice("--layout", flags.layout, {"easydel", "hf"}));
  EP_ASSIGN_OR_RETURN(inputs->uneven, ParseUneven(flags.uneven));
  if (flags.max_tensors < 1 || flags.max_devices < 1 || flags.max_rules < 1) {
    return Status::BadInput({}, "--max-tensors, --max-devices and --max-rules must be at least 1");
  }
  if (!flags.tree.empty() && !flags.from.empty()) {
    return Status::BadInput({}, "--tree and --from are two sources for the same tree: give one");
  }
  const bool has_config = !flags.config.config.empty();
  if (!has_config && flags.tree.empty()) {
    return Status::BadInput({}, "CONFIG is required (or --tree FILE.json with --rules FILE and --mesh)");
  }
  inputs->has_config = has_config;
  inputs->max_devices = flags.max_devices;

  schemas::SchemaSet schemas = MakeSchemaSet(ctx, flags.config);
  if (has_config) {
    EP_ASSIGN_OR_RETURN(inputs->resolved, ResolveFromFlags(ctx, flags.config, schemas));
  } else {
    EP_ASSIGN_OR_RETURN(inputs->resolved, DefaultConfig(ctx, schemas));
  }

  // The rule set: --rules FILE, or the family's built-in rules.
  const std::string dir = flags.config.schemas_dir.empty() ? ctx.schemas_dir : flags.config.schemas_dir;
  inputs->library = std::make_unique<rules::RuleLibrary>(dir.empty() ? schemas::DataSource::Embedded()
                                                                     : schemas::DataSource::Directory(dir, ctx.fs));
  EP_ASSIGN_OR_RETURN(inputs->presets, inputs->library->GetPresets());
  EP_ASSIGN_OR_RETURN(inputs->logical_dims, inputs->library->GetLogicalDims());
  if (flags.rules == "builtin") {
    const std::string model_type = ModelType(inputs->resolved.config);
    if (model_type.empty()) {
      return Status::BadInput({},
                              has_config ? "the config has no model_type, so there are no built-in rules for it"
                                         : "without CONFIG there is no model_type to pick built-in rules by",
                              {"pass --rules FILE (docs/RULES.md describes the format)"});
    }
    EP_ASSIGN_OR_RETURN(inputs->rules, inputs->library->ForModelType(model_type));
  } else {
    EP_ASSIGN_OR_RETURN(inputs->rules, inputs->library->FromFile(ctx.fs, flags.rules, ctx.limits.max_input_bytes,
                                                                 static_cast<size_t>(flags.max_rules)));
  }

  // The tree.
  TreeRequest tree_request;
  tree_request.layout = *ParseLayout(flags.layout);
  tree_request.max_tensors = flags.max_tensors;
  if (!flags.dtype.empty()) {
    tree_request.dtype = ParseDType(flags.dtype);
    if (!tree_request.dtype) return Status::BadInput({}, "--dtype '" + flags.dtype + "' is not a dtype name");
  }
  if (!flags.tree.empty()) {
    EP_ASSIGN_OR_RETURN(inputs->tree, LoadUserTree(ctx, flags.tree, flags.max_tensors));
  } else if (!flags.from.empty()) {
    tree_request.layout = Layout::kHf;
    EP_ASSIGN_OR_RETURN(inputs->tree, LoadCheckpointTree(ctx, flags.from, tree_request));
  } else {
    EP_ASSIGN_OR_RETURN(inputs->tree, BuildTemplateTree(inputs->resolved, schemas, tree_request));
  }

  // Rules and tree in different layouts: only EasyDeL rules onto HF names can be carried over.
  const Layout rules_layout = inputs->rules->layout;
  if (rules_layout != inputs->tree.layout) {
    if (rules_layout == Layout::kHf) {
      return Status::BadInput({SourceLoc{inputs->rules->source}},
                              "the rules are written for HF names (layout: hf), but the tree has EasyDeL names",
                              {"plan the HF tree: add --layout hf (or give an HF-layout --tree / --from)"});
    }
    if (!has_config || inputs->resolved.family.empty()) {
      return Status::BadInput({SourceLoc{inputs->rules->source}},
                              "the rules are written for EasyDeL names, but the tree has HF names, and without a "
                              "config of a known family easyplan cannot map one onto the other",
                              {"give CONFIG, or rules written for HF names (layout: hf)"});
    }
    EP_ASSIGN_OR_RETURN(const schemas::TreeTemplate* tree_template, schemas.Tree(inputs->resolved.family));
    schemas::TreeOptions options;
    options.dtype = tree_request.dtype;
    options.include_buffers = true;
    options.max_tensors = flags.max_tensors;
    EP_ASSIGN_OR_RETURN(std::vector<schemas::ExpandedTensor> expanded,
                        schemas::ExpandTreeTemplate(*tree_template, inputs->resolved.config, options));
    EP_ASSIGN_OR_RETURN(inputs->links, planner::LinkHfToEasyDel(inputs->tree, expanded));
  }

  EP_ASSIGN_OR_RETURN(inputs->mesh,
                      MeshFromFlags(MeshFlags{flags.mesh, flags.dcn, flags.config.devices, flags.max_devices},
                                    inputs->resolved.config, has_config, &inputs->mesh_source));
  return inputs;
}

}  // namespace easyplan::cli
