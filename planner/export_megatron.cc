#include "planner/export_megatron.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "core/checked_math.h"
#include "core/emit.h"
#include "core/json.h"

// Sources: NVIDIA/Megatron-LM at d98e8a64ddf34856e74b24714e3bedb2f5a39553 (schemas/runtimes/megatron.yaml):
// megatron/training/arguments.py (validate_args), megatron/core/transformer/transformer_config.py,
// megatron/core/pipeline_parallel/schedules.py and megatron/core/transformer/pipeline_parallel_layer_layout.py.

namespace easyplan::planner {
namespace {

constexpr std::string_view kMegatron = "Megatron-LM";

struct Argument {
  std::string flag;
  std::vector<std::string> values;
};

// The stage split (plan.pipeline.chunk_layers, chunk c on stage c % p, which is also Megatron's
// interleaved assignment: pipeline_parallel_layer_layout.py puts layout entry vpp * p + pp on rank pp).
void AddStageSplit(const PipelineSplit& split, std::vector<Argument>& args) {
  const std::vector<int64_t>& chunks = split.chunk_layers;
  const bool equal = std::all_of(chunks.begin(), chunks.end(), [&](int64_t c) { return c == chunks.front(); });
  if (equal) {
    // Megatron's default split is equal counts (validate_args asserts they divide); virtual stages take
    // --num-virtual-stages-per-pipeline-rank, the form that also combines with uneven first/last counts
    // (--num-layers-per-virtual-pipeline-stage refuses them).
    if (split.virtual_stages > 1) {
      args.push_back({"--num-virtual-stages-per-pipeline-rank", {std::to_string(split.virtual_stages)}});
    }
    return;
  }
  const int64_t p = split.stages;
  if (split.virtual_stages == 1 && chunks.front() > 0 && chunks.back() > 0) {
    // TransformerConfig.__post_init__ ("Uneven PP"): the first and last stages take their own counts (each
    // "must be larger than 0") and the middle stages share the rest equally.
    const bool middle_equal =
        p <= 2 || std::all_of(chunks.begin() + 1, chunks.end() - 1, [&](int64_t c) { return c == chunks[1]; });
    if (middle_equal) {
      const int64_t middle = p > 2 ? chunks[1] : chunks.back();
      if (chunks.front() != middle) {
        args.push_back({"--decoder-first-pipeline-num-layers", {std::to_string(chunks.front())}});
      }
      if (p > 2 && chunks.back() != middle) {
        args.push_back({"--decoder-last-pipeline-num-layers", {std::to_string(chunks.back())}});
      }
      return;
    }
  }
  // Any other split is a --pipeline-model-parallel-layout: one '|'-separated entry per model chunk in chunk
  // order, 't' per decoder layer, the embedding 'E' first and the loss 'L' last (parse_str_to_list); a first
  // or last chunk without layers holds the embedding or the loss alone ("E|...", "...|L"). The
  // virtual stage count follows from it, so --num-virtual-stages-per-pipeline-rank must stay unset.
  // Written out without the '*' repetition, so a shell never globs it.
  std::string layout;
  for (size_t c = 0; c < chunks.size(); ++c) {
    if (c > 0) layout += '|';
    if (c == 0) layout += 'E';
    layout.append(static_cast<size_t>(chunks[c]), 't');
    if (c + 1 == chunks.size()) layout += 'L';
  }
  args.push_back({"--pipeline-model-parallel-layout", {layout}});
}

Status AddStep(const Plan& plan, const RoleSizes& roles, const RuntimeStep& step, std::vector<Argument>& args) {
  if (step.seq) {
    // validate_args: "seq-length should be a multiple of 2 * context-parallel-size".
    if (roles.sp.total > 1 && *step.seq % (2 * roles.sp.total) != 0) {
      return Status::BadInput(
          {},
          fmt::format("--seq {} is not a multiple of 2 x the context-parallel size {} (sp): Megatron-LM asserts it",
                      *step.seq, roles.sp.total),
          {fmt::format("use a multiple of {}", 2 * roles.sp.total)});
    }
    args.push_back({"--seq-length", {std::to_string(*step.seq)}});
  }
  if (!step.batch) {
    if (step.microbatches) {
      return Status::BadInput(
          {}, fmt::format("--microbatches {} needs --batch for --to megatron", *step.microbatches),
          {"Megatron-LM derives the microbatches from --global-batch-size / (--micro-batch-size x data-parallel "
           "size)"});
    }
    return Status();
  }
  const int64_t microbatches = step.microbatches.value_or(1);
  if (plan.pipeline.pipelined() && !step.microbatches) {
    if (Status fits = CheckMicrobatches(plan.pipeline, 1); !fits.ok()) {
      std::vector<std::string> notes = fits.diag().notes;
      notes.insert(notes.begin(), "give --microbatches: with --batch alone the step is one microbatch");
      return Status::BadInput({}, fits.diag().message, notes);
    }
  }
  // Megatron's data-parallel size is world / (tp x pp x cp): every dp, fsdp and ep rank (num_microbatches
  // = global batch / (micro batch x data-parallel size), megatron/core/num_microbatches_calculator.py).
  const int64_t ranks = roles.DataRanks();
  const std::optional<int64_t> per_step = CheckedMul(microbatches, ranks);
  if (!per_step || *step.batch % *per_step != 0) {
    return Status::BadInput(
        {},
        fmt::format("--batch {} is not a multiple of --microbatches {} x the {} data-parallel ranks (dp x fsdp x ep = "
                    "{} x {} x {}): Megatron-LM's --micro-batch-size would not be whole",
                    *step.batch, microbatches, ranks, roles.dp.total, roles.fsdp.total, roles.ep.total),
        {"Megatron-LM: --global-batch-size = --micro-batch-size x data-parallel size x microbatches"});
  }
  args.push_back({"--micro-batch-size", {std::to_string(*step.batch / *per_step)}});
  args.push_back({"--global-batch-size", {std::to_string(*step.batch)}});
  return Status();
}

// The config's gradient_checkpointing as Megatron's recompute options (transformer_config.py, "activation
// recomputation"). Megatron keeps every activation unless told otherwise.
void AddRecompute(CheckpointPolicy policy, std::vector<Argument>& args) {
  switch (policy) {
    case CheckpointPolicy::kNone:
    case CheckpointPolicy::kEverythingSaveable:
      return;  // everything saved: no recompute flag
    case CheckpointPolicy::kNothingSaveable:
      // Each layer keeps its input and is recomputed whole in the backward: Megatron's full recompute,
      // uniform, one layer per checkpointed unit, which checkpoints the input of every layer.
      args.push_back({"--recompute-granularity", {"full"}});
      args.push_back({"--recompute-method", {"uniform"}});
      args.push_back({"--recompute-num-layers", {"1"}});
      return;
    case CheckpointPolicy::kCheckpointDots:
      // Every matmul output is saved, the attention einsums included; what is not a matmul (the norms, the
      // activation function, softmax) is recomputed. Megatron's selective recompute of "layernorm" drops the
      // norms' outputs and keeps the rest, its default "core_attn" would recompute the saved attention.
      args.push_back({"--recompute-granularity", {"selective"}});
      args.push_back({"--recompute-modules", {"layernorm"}});
      return;
    case CheckpointPolicy::kDotsNoBatchDims:
      // The projections' outputs are saved but not the attention einsums (they have batch dims), so the core
      // attention (QK^T, softmax, x V) is recomputed as Megatron's "core_attn" does (Korthikanti et al.'s
      // selective recompute), and the norms as its "layernorm".
      args.push_back({"--recompute-granularity", {"selective"}});
      args.push_back({"--recompute-modules", {"core_attn", "layernorm"}});
      return;
  }
}

}  // namespace

StatusOr<std::string> MegatronExport(const Plan& plan, const RoleSizes& roles, const RuntimeModel& model,
                                     const RuntimeStep& step, const RuntimeVocabulary& vocabulary, bool json) {
  const PipelineSplit& split = plan.pipeline;
  if (split.pipelined() && split.schedule != PipelineSchedule::k1F1B &&
      split.schedule != PipelineSchedule::kInterleaved) {
    // schedules.py's get_forward_backward_func: forward_backward_pipelining_without_interleaving (1F1B) or,
    // with virtual stages, forward_backward_pipelining_with_interleaving. Nothing else.
    return Status::BadInput(
        {},
        fmt::format("--pp-schedule {}: Megatron-LM runs 1F1B, or with virtual stages interleaved 1F1B, only "
                    "(megatron/core/pipeline_parallel/schedules.py, get_forward_backward_func)",
                    PipelineScheduleName(split.schedule)),
        {"plan it with --pp-schedule 1f1b or interleaved; --to torch exports gpipe and zero-bubble"});
  }
  if (roles.ep.total > 1 && !model.HasExperts(roles.ep.total)) {
    return Status::BadInput(
        {},
        fmt::format("--mesh ep={}: the model has no experts, and Megatron-LM's --expert-model-parallel-size applies "
                    "to MoE layers only",
                    roles.ep.total),
        {"Megatron-LM's data-parallel size is world / (tp x pp x cp), so the ep ranks would read different "
         "sequences where EasyDeL gives them the same; move ep into dp or fsdp"});
  }
  EP_ASSIGN_OR_RETURN(const CheckpointPolicy policy, RuntimeCheckpointPolicy(model.gradient_checkpointing, kMegatron));

  std::vector<Argument> args;
  args.push_back({"--tensor-model-parallel-size", {std::to_string(roles.tp.total)}});
  args.push_back({"--pipeline-model-parallel-size", {std::to_string(roles.pp.total)}});
  if (split.pipelined()) AddStageSplit(split, args);
  // EasyDeL's sp shards every activation's sequence, attention included (ring attention): Megatron's context
  // parallelism, not its --sequence-parallel (which splits the sequence over the tp group between blocks).
  args.push_back({"--context-parallel-size", {std::to_string(roles.sp.total)}});
  if (roles.tp.total > 1) {
    // EasyDeL keeps the residual stream sharded over tp (partition_axis.hidden_state_axis), so each tp rank
    // holds 1/tp of it between blocks; Megatron keeps it whole on every tp rank unless --sequence-parallel
    // splits it (by sequence, where EasyDeL splits the hidden dim: the same bytes, other collectives).
    args.push_back({"--sequence-parallel", {}});
  }
  if (model.HasExperts(roles.ep.total) && model.experts && model.expert_parallel > 1 &&
      *model.experts % model.expert_parallel != 0) {
    // validate_args: "Number of experts should be a multiple of expert model parallel_size."
    return Status::BadInput(
        {},
        fmt::format("the model's {} experts over the {} ranks of EasyDeL's expert mesh (ep x fsdp x sp = {} x {} x "
                    "{}): Megatron-LM's --expert-model-parallel-size must divide the experts",
                    *model.experts, model.expert_parallel, roles.ep.total, roles.fsdp.total, roles.sp.total),
        {"use an ep x fsdp x sp that divides the experts"});
  }
  if (model.HasExperts(roles.ep.total)) {
    // The expert parallelism EasyDeL's fused MoE path runs, its folded expert mesh's ep (ep x fsdp x sp by
    // default). It divides Megatron's data-parallel x context-parallel ranks, from which Megatron carves its
    // expert-parallel groups (expert tensor parallelism stays tp, its default).
    args.push_back({"--expert-model-parallel-size", {std::to_string(model.expert_parallel)}});
  }
  if (roles.fsdp.total > 1) {
    // EasyDeL's fsdp shards parameters, gradients and optimizer state (ZeRO-3) over fsdp x sp. Megatron's
    // counterpart is Megatron-FSDP with optim_grads_params, over its data-parallel x context-parallel group;
    // version 1 (the default) runs with the distributed optimizer, and it needs the fsdp_dtensor checkpoint
    // format (validate_args asserts both). --use-torch-fsdp2 is no alternative: validate_args refuses it
    // with pipeline or expert parallelism.
    args.push_back({"--use-distributed-optimizer", {}});
    args.push_back({"--use-megatron-fsdp", {}});
    args.push_back({"--data-parallel-sharding-strategy", {"optim_grads_params"}});
    args.push_back({"--ckpt-format", {"fsdp_dtensor"}});
    if (roles.dp.total > 1) {
      // dp replicates what fsdp shards (HSDP): Megatron-FSDP shards within each of
      // --num-distributed-optimizer-instances groups of the data-parallel ranks and replicates across them
      // (megatron/core/distributed/fsdp/mcore_fsdp_adapter.py, _init_dist_index).
      args.push_back({"--num-distributed-optimizer-instances", {std::to_string(roles.dp.total)}});
    }
  }
  EP_RETURN_IF_ERROR(AddStep(plan, roles, step, args));
  AddRecompute(policy, args);

  for (const Argument& arg : args) {
    EP_RETURN_IF_ERROR(vocabulary.Check("flags", arg.flag));
    for (const std::string& value : arg.values) EP_RETURN_IF_ERROR(vocabulary.CheckChoice(arg.flag, value));
  }
  if (json) {
    Json argv = Json::array();
    for (const Argument& arg : args) {
      argv.push_back(arg.flag);
      for (const std::string& value : arg.values) argv.push_back(value);
    }
    Json out = Json::object();
    out["arguments"] = std::move(argv);
    return EmitJson(out);
  }
  std::string text;
  for (const Argument& arg : args) {
    text += arg.flag;
    for (const std::string& value : arg.values) text += " " + value;
    text += "\n";
  }
  return text;
}

}  // namespace easyplan::planner
