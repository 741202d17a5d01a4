#include "cli/memory_setup.h"

#include <memory>

#include "cli/activation_setup.h"
#include "cli/config_flags.h"
#include "core/byte_size.h"
#include "core/did_you_mean.h"
#include "core/dtype.h"
#include "core/human.h"
#include "schemas/data_source.h"
#include "schemas/model_dims.h"

namespace easyplan::cli {

void AddMemoryFlags(CLI::App* cmd, MemoryFlags& flags, bool mode_flag) {
  if (mode_flag) cmd->add_option("--mode", flags.mode, "train or serve (required)");
  cmd->add_option("--batch", flags.batch, "sequences per step (required)");
  cmd->add_option("--seq", flags.seq, "tokens per sequence (required; serve: the prompt of one prefill step)");
  AddStepStateFlags(cmd, flags);
  cmd->add_option("--memory-per-device", flags.memory_per_device,
                  "memory of one device, e.g. 80GiB (default: the --device's, else 80GiB)");
  cmd->add_option("--device", flags.device, "a named device, e.g. h100-80g, tpu-v5p-95g (schemas/devices.yaml)");
}

void AddStepStateFlags(CLI::App* cmd, MemoryFlags& flags) {
  cmd->add_option("--max-length", flags.max_length, "serve: tokens the KV cache holds per sequence (default --seq)");
  cmd->add_option("--optimizer", flags.optimizer, "train: adamw (default), adafactor, lion or sgd");
  cmd->add_option("--grad-dtype", flags.grad_dtype, "train: gradient dtype (default: each parameter's dtype)");
  cmd->add_option("--opt-state-dtype", flags.opt_state_dtype, "train: optimizer state dtype (default float32)");
  cmd->add_flag("--master-weights", flags.master_weights,
                "train: a float32 master copy of the parameters, counted with the optimizer state");
}

bool HasStepStateFlags(const MemoryFlags& flags) {
  const MemoryFlags defaults;
  return flags.max_length.has_value() || flags.optimizer != defaults.optimizer || !flags.grad_dtype.empty() ||
         flags.opt_state_dtype != defaults.opt_state_dtype || flags.master_weights;
}

namespace {

Status CheckDType(const std::string& flag, const std::string& value) {
  if (value.empty() || ParseDType(value)) return Status();
  std::vector<std::string> names;
  for (std::string_view name : AllDTypeNames()) names.emplace_back(name);
  std::vector<std::string> notes;
  if (auto suggestion = SuggestClosest(value, names)) notes.push_back("did you mean '" + *suggestion + "'?");
  return Status::BadInput({}, flag + " '" + value + "' is not a dtype name", notes);
}

}  // namespace

Status CheckMemoryFlags(const MemoryFlags& flags) {
  EP_RETURN_IF_ERROR(CheckChoice("--mode", flags.mode, {"train", "serve"}));
  if (!flags.batch || !flags.seq) {
    return Status::BadInput({},
                            std::string(flags.batch ? "--seq" : "--batch") +
                                " is required: memory sizes the activations of a step of --batch sequences of "
                                "--seq tokens",
                            {"e.g. --batch 8 --seq 4096"});
  }
  if (*flags.batch < 1)
    return Status::BadInput({}, "--batch must be at least 1, found " + std::to_string(*flags.batch));
  if (*flags.seq < 1) return Status::BadInput({}, "--seq must be at least 1, found " + std::to_string(*flags.seq));
  if (flags.max_length) {
    if (flags.mode != "serve") return Status::BadInput({}, "--max-length sizes the KV cache: it needs --mode serve");
    if (*flags.max_length < *flags.seq) {
      return Status::BadInput({}, "--max-length " + std::to_string(*flags.max_length) +
                                      " is shorter than the prompt: expected at least --seq " +
                                      std::to_string(*flags.seq));
    }
  }
  EP_RETURN_IF_ERROR(CheckChoice("--optimizer", flags.optimizer, {"adamw", "adafactor", "lion", "sgd"}));
  EP_RETURN_IF_ERROR(CheckDType("--grad-dtype", flags.grad_dtype));
  EP_RETURN_IF_ERROR(CheckDType("--opt-state-dtype", flags.opt_state_dtype));
  if (flags.opt_state_dtype.empty()) return Status::BadInput({}, "--opt-state-dtype is empty: expected a dtype name");
  if (!flags.memory_per_device.empty() && !flags.device.empty()) {
    return Status::BadInput({}, "--memory-per-device and --device both give the device memory: pass one");
  }
  return Status();
}

StatusOr<int64_t> MemoryBudget(Context& ctx, const MemoryFlags& flags, const std::string& schemas_dir,
                               std::string* label) {
  if (!flags.memory_per_device.empty()) {
    EP_ASSIGN_OR_RETURN(int64_t bytes, ParseByteSize(flags.memory_per_device, "--memory-per-device"));
    if (bytes < 1) return Status::BadInput({}, "--memory-per-device must be more than 0 bytes");
    *label = flags.memory_per_device;
    return bytes;
  }
  if (flags.device.empty()) {
    *label = "80GiB";
    return int64_t{80} << 30;
  }
  const std::string dir = schemas_dir.empty() ? ctx.schemas_dir : schemas_dir;
  const schemas::DataSource source =
      dir.empty() ? schemas::DataSource::Embedded() : schemas::DataSource::Directory(dir, ctx.fs);
  const std::string path = "schemas/devices.yaml";
  EP_ASSIGN_OR_RETURN(Document doc, source.ReadDocument(path));
  EP_ASSIGN_OR_RETURN(std::vector<planner::DeviceKind> kinds, planner::ParseDeviceTable(doc));
  std::vector<std::string> names;
  for (const planner::DeviceKind& kind : kinds) {
    if (kind.name == flags.device) {
      *label = kind.name + " (" + HumanBytesBinary(kind.bytes) + ")";
      return kind.bytes;
    }
    names.push_back(kind.name);
  }
  std::string known;
  for (const std::string& name : names) known += (known.empty() ? "" : ", ") + name;
  std::string message = "--device '" + flags.device + "' is not a known device";
  if (auto suggestion = SuggestClosest(flags.device, names)) message += " (did you mean '" + *suggestion + "'?)";
  return Status::BadInput({}, message, {"expected one of " + known + "; or give --memory-per-device"});
}

StatusOr<planner::MemoryReport> BuildMemoryReport(Context& ctx, const PlanInputs& inputs, const planner::Plan& plan,
                                                  const MemoryFlags& flags, int64_t budget,
                                                  const std::string& schemas_dir) {
  const bool train = flags.mode == "train";
  planner::MemoryOptions options;
  options.mode = train ? planner::MemoryMode::kTrain : planner::MemoryMode::kServe;
  options.optimizer = *planner::ParseOptimizer(flags.optimizer);
  if (!flags.grad_dtype.empty()) options.grad_dtype = ParseDType(flags.grad_dtype);
  options.opt_state_dtype = *ParseDType(flags.opt_state_dtype);
  options.master_weights = flags.master_weights;
  options.memory_per_device = budget;
  const Json& config = inputs.resolved.config;
  if (train) {
    const std::string policy = config.value("gradient_checkpointing", std::string());
    std::optional<planner::CheckpointPolicy> parsed = planner::ParseCheckpointPolicy(policy);
    if (!parsed) {
      return Status::BadInput({}, "config: gradient_checkpointing '" + policy + "' is not a policy memory models",
                              {"expected one of \"\" (none), everything_saveable, nothing_saveable, checkpoint_dots "
                               "(dots_saveable), checkpoint_dots_with_no_batch_dims; e.g. --set "
                               "gradient_checkpointing=nothing_saveable"});
    }
    options.policy = *parsed;
  }
  EP_ASSIGN_OR_RETURN(schemas::ModelDims dims, schemas::ModelDimsOf(config));
  EP_ASSIGN_OR_RETURN(planner::MemoryModel model, planner::MemoryModelOf(dims, schemas::GeometryConfig(config)));

  EP_ASSIGN_OR_RETURN(std::unique_ptr<planner::ActivationTable> table, LoadActivationTable(ctx, schemas_dir));
  ActivationFlags step_flags;
  step_flags.mode = train ? "train" : "prefill";
  step_flags.batch = flags.batch;
  step_flags.seq = flags.seq;
  step_flags.dtype = flags.activation_dtype;
  EP_ASSIGN_OR_RETURN(planner::ActivationPlan step,
                      BuildActivationsFromFlags(step_flags, *table, *inputs.presets, config, inputs.mesh));
  std::optional<planner::ActivationPlan> cache;
  if (!train && flags.max_length && *flags.max_length != *flags.seq) {
    ActivationFlags cache_flags = step_flags;
    cache_flags.seq = flags.max_length;
    EP_ASSIGN_OR_RETURN(cache, BuildActivationsFromFlags(cache_flags, *table, *inputs.presets, config, inputs.mesh));
  }
  planner::MemoryInputs memory_inputs{&plan, &inputs.tree, &step, cache ? &*cache : &step, std::move(model)};
  return planner::ComputeMemory(memory_inputs, options);
}

}  // namespace easyplan::cli
