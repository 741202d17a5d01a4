#include "planner/export_maxtext.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "core/emit.h"
#include "core/json.h"

// Sources: AI-Hypercomputer/maxtext at e591f30cbbf217ed67ef71263ec0538239f9c3b8 (schemas/runtimes/maxtext.yaml):
// src/maxtext/configs/types.py (the fields and their derivations), src/maxtext/configs/base.yml (defaults),
// src/maxtext/layers/pipeline.py and src/maxtext/layers/decoders.py.

namespace easyplan::planner {
namespace {

constexpr std::string_view kMaxText = "MaxText";

std::string ValueText(const Json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_float()) return fmt::format("{}", value.get<double>());  // shortest round-trip
  return value.dump();
}

// The pipeline keys (types.py, "CALCULATE/SET OTHER DERIVED VALUES, E.G. PIPELINE CONFIG").
Status AddPipeline(const Plan& plan, const RuntimeModel& model, const RuntimeStep& step,
                   std::vector<std::pair<std::string, Json>>& keys) {
  const PipelineSplit& split = plan.pipeline;
  if (split.schedule != PipelineSchedule::kGpipe) {
    // pipeline.py runs each microbatch's forward through a scan over the stages, and the backward is that
    // scan's derivative, run in reverse: all forwards, then all backwards, GPipe's order (num_pipeline_repeats
    // makes it circular, still all forwards first: easyplan's gpipe with --virtual-stages). No 1F1B,
    // interleaved, zero-bubble or DualPipe order.
    return Status::BadInput(
        {},
        fmt::format("--pp-schedule {}: MaxText's pipeline runs every microbatch's forward, then the backward as its "
                    "reverse (GPipe's order; src/maxtext/layers/pipeline.py), and has no {} schedule",
                    PipelineScheduleName(split.schedule), PipelineScheduleName(split.schedule)),
        {"plan it with --pp-schedule gpipe, which keeps every microbatch's activations as MaxText does, and "
         "--virtual-stages V for MaxText's circular pipeline (num_pipeline_repeats V)"});
  }
  if (model.experts.value_or(0) > 0 && model.first_dense_layers > 0) {
    // types.py: pipeline_parallel_layers defaults to num_decoder_layers - first_num_dense_layers for the
    // DeepSeek decoder, whose pipeline holds the MoE layers only ("You can only pipeline a subset of the moe
    // decoder layers for deepseek", pyconfig_deprecated.py).
    return Status::BadInput(
        {},
        fmt::format("the model's first {} dense: MaxText pipelines only the MoE layers of such a model "
                    "(pipeline_parallel_layers), and this plan puts every layer on a stage",
                    model.first_dense_layers == 1 ? std::string("layer is")
                                                  : fmt::format("{} layers are", model.first_dense_layers)),
        {"MaxText runs the dense layers outside the pipeline, with the stage axis as data parallelism"});
  }
  const std::vector<int64_t>& chunks = split.chunk_layers;
  if (!std::all_of(chunks.begin(), chunks.end(), [&](int64_t c) { return c == chunks.front(); })) {
    std::string counts;
    for (int64_t c : chunks) counts += (counts.empty() ? "" : ",") + std::to_string(c);
    // types.py asserts stages x num_pipeline_repeats x num_layers_per_pipeline_stage = pipeline_parallel_layers.
    return Status::BadInput(
        {},
        fmt::format("the stages hold {} layers: MaxText gives every stage num_layers_per_pipeline_stage layers "
                    "(its config asserts stages x num_pipeline_repeats x num_layers_per_pipeline_stage = the "
                    "pipelined layers)",
                    counts),
        {"use a stage count that divides the layers, and no --pp-layers"});
  }
  int64_t layers = 0;
  for (int64_t c : chunks) layers += c;
  if (step.microbatches && *step.microbatches % split.stages != 0) {
    return Status::BadInput(
        {},
        fmt::format("--microbatches {} is not a multiple of the {} pipeline stages: MaxText asserts "
                    "num_pipeline_microbatches % stages == 0",
                    *step.microbatches, split.stages),
        {fmt::format("use a multiple of {}", split.stages)});
  }
  keys.emplace_back("num_layers_per_pipeline_stage", chunks.front());
  // Circular: chunk c runs on stage c % stages, as pipeline.py's repeats wrap the layers round the stages
  // (MaxText's sharding guide, "Circular pipelining": 24 layers, 4 stages, 2 repeats put layers 0-2 and 12-14
  // on stage 0).
  keys.emplace_back("num_pipeline_repeats", split.virtual_stages);
  keys.emplace_back("pipeline_parallel_layers", layers);
  // Not given, MaxText runs as many microbatches as stages (its default, -1).
  if (step.microbatches) keys.emplace_back("num_pipeline_microbatches", *step.microbatches);
  return Status();
}

// The batch: MaxText's global batch is int(devices x per_device_batch_size) x gradient_accumulation_steps
// (types.py, calculate_global_batch_sizes); a pipeline splits it into num_pipeline_microbatches.
Status AddBatch(const Plan& plan, const RuntimeStep& step, std::vector<std::pair<std::string, Json>>& keys) {
  const bool pipelined = plan.pipeline.pipelined();
  const int64_t microbatches = step.microbatches.value_or(pipelined ? plan.pipeline.stages : 1);
  if (!step.batch) {
    if (step.microbatches && !pipelined) keys.emplace_back("gradient_accumulation_steps", *step.microbatches);
    return Status();
  }
  if (*step.batch % microbatches != 0) {
    return Status::BadInput(
        {},
        fmt::format("--batch {} is not a multiple of {} microbatches: MaxText {}", *step.batch, microbatches,
                    pipelined ? "asserts the batch divides num_pipeline_microbatches"
                              : "runs gradient_accumulation_steps steps of per_device_batch_size x devices"),
        {"give a batch that the microbatches divide"});
  }
  // A pipeline's microbatches split one pass (gradient_accumulation_steps 1); otherwise they are steps.
  const int64_t pass = pipelined ? *step.batch : *step.batch / microbatches;
  const int64_t devices = plan.mesh.NumDevices();
  const double per_device = static_cast<double>(pass) / static_cast<double>(devices);
  if (static_cast<int64_t>(static_cast<double>(devices) * per_device) != pass) {
    return Status::BadInput({},
                            fmt::format("--batch {}: MaxText's int({} devices x per_device_batch_size {}) is not {}",
                                        *step.batch, devices, per_device, pass),
                            {"give a batch the devices divide"});
  }
  keys.emplace_back("per_device_batch_size", per_device);
  keys.emplace_back("gradient_accumulation_steps", pipelined ? 1 : microbatches);
  return Status();
}

// The config's gradient_checkpointing as MaxText's remat_policy. decoders.py wraps every decoder layer in
// nn.remat with get_remat_policy's policy, so some rematerialisation always happens; the names below are
// the jax.checkpoint_policies.save_only_these_names lists it builds.
std::string RematPolicy(CheckpointPolicy policy) {
  switch (policy) {
    case CheckpointPolicy::kNone:
    case CheckpointPolicy::kEverythingSaveable:
      // Nothing recomputed has no MaxText policy; the one saving most is minimal_with_context (every
      // projection, MLP matmul and the attention output): the norms and activation functions are recomputed.
      return "minimal_with_context";
    case CheckpointPolicy::kNothingSaveable:
      return "full";  // policy None: only the layer input is kept, the layer is recomputed whole
    case CheckpointPolicy::kCheckpointDots:
      // Every matmul output, the attention's included: minimal_with_context saves the projections, the MLP
      // matmuls and the attention output ("context").
      return "minimal_with_context";
    case CheckpointPolicy::kDotsNoBatchDims:
      // The matmuls without batch dims: the projections and MLP matmuls, not the attention einsums. minimal
      // saves exactly those and recomputes the attention ("save all except context").
      return "minimal";
  }
  return "full";
}

}  // namespace

StatusOr<std::string> MaxTextExport(const Plan& plan, const RoleSizes& roles, const RuntimeModel& model,
                                    const RuntimeStep& step, const RuntimeVocabulary& vocabulary, bool json) {
  EP_ASSIGN_OR_RETURN(const CheckpointPolicy policy, RuntimeCheckpointPolicy(model.gradient_checkpointing, kMaxText));
  // MaxText's mesh axes (base.yml mesh_axes) by role: dp is `data` (batch only), fsdp `fsdp` (parameters and
  // batch), pp `stage`, sp `context` (the sequence of every activation; `embed` parameters are sharded over it
  // too, as EasyDeL shards them over (fsdp, sp)), tp `tensor`, ep `expert`. Every one is written, ICI and DCN:
  // base.yml's defaults are -1 for ici_fsdp_parallelism and dcn_data_parallelism.
  const std::pair<const char*, const RoleSize*> axes[] = {
      {"data", &roles.dp},    {"pipeline", &roles.pp}, {"fsdp", &roles.fsdp},
      {"context", &roles.sp}, {"tensor", &roles.tp},   {"expert", &roles.ep},
  };
  std::vector<std::pair<std::string, Json>> keys;
  for (const auto& [name, role] : axes) keys.emplace_back(fmt::format("ici_{}_parallelism", name), role->ici);
  for (const auto& [name, role] : axes) keys.emplace_back(fmt::format("dcn_{}_parallelism", name), role->dcn);
  if (plan.pipeline.pipelined()) EP_RETURN_IF_ERROR(AddPipeline(plan, model, step, keys));
  EP_RETURN_IF_ERROR(AddBatch(plan, step, keys));
  if (step.seq) keys.emplace_back("max_target_length", *step.seq);
  keys.emplace_back("remat_policy", RematPolicy(policy));

  for (const auto& [key, value] : keys) {
    EP_RETURN_IF_ERROR(vocabulary.Check("keys", key));
    if (value.is_string()) EP_RETURN_IF_ERROR(vocabulary.CheckChoice(key, value.get<std::string>()));
  }
  if (json) {
    Json out = Json::object();
    for (const auto& [key, value] : keys) out[key] = value;
    return EmitJson(out);
  }
  std::string text;
  for (const auto& [key, value] : keys) text += key + "=" + ValueText(value) + "\n";
  return text;
}

}  // namespace easyplan::planner
