#include "api/check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <unordered_map>

#include "api/activation_pipeline.h"
#include "api/choices.h"
#include "api/findings_text.h"
#include "api/forward_model.h"
#include "api/memory_pipeline.h"
#include "api/option_checks.h"
#include "api/plan_json.h"
#include "kernels/layout_check.h"
#include "kernels/mpi_engine.h"
#include "kernels/tiny_model.h"
#include "schemas/model_dims.h"

namespace easyplan::api {

using kernels::Injection;

namespace {

// ---- the tiny config ----

// A pipelined check runs at least one layer in every model chunk: a family whose numeric_check block fixes
// the tiny model's layers (per-layer lists such as Llama 4's no_rope_layers) may have fewer.
Status CheckTinyLayers(const Model& tiny, const planner::PipelineSplit& pipeline) {
  EP_ASSIGN_OR_RETURN(const schemas::ModelDims dims, schemas::ModelDimsOf(tiny.resolved()));
  if (dims.layers >= pipeline.Chunks()) return Status();
  const std::string chunks =
      pipeline.virtual_stages > 1
          ? fmt::format("--mesh pp={} with --virtual-stages {} makes {} model chunks", pipeline.stages,
                        pipeline.virtual_stages, pipeline.Chunks())
          : fmt::format("--mesh pp={} makes {} pipeline stages", pipeline.stages, pipeline.stages);
  return Status::BadInput({},
                          fmt::format("{}, and the numeric check's tiny {} has {} decoder layers (the numeric_check "
                                      "block of its family file fixes them), so one would run none",
                                      chunks, dims.model_type.empty() ? "model" : dims.model_type, dims.layers),
                          {fmt::format("use --level layout, or at most {} model chunks", dims.layers)});
}

// The plan inputs of the tiny config: the full run's flags with `sets` after the user's --set, EasyDeL
// names, and the built-in rules when the full run's rules are written for HF names (they cannot plan
// EasyDeL names). Its resolve warnings are not printed (the full config's were); they stay in its diags.
StatusOr<std::optional<PlanInputs>> LoadTinyInputs(const CheckOptions& flags, const PlanInputs& full,
                                                   const std::vector<std::string>& sets) {
  PlanOptions tiny_flags = flags.plan;
  // The tiny model splits its own layers, one per model chunk (kernels/tiny_model.h); --pp-layers is the
  // full model's.
  tiny_flags.pipeline.layers.clear();
  tiny_flags.tree.layout = "easydel";
  tiny_flags.tree.file.clear();
  tiny_flags.tree.checkpoint.clear();
  tiny_flags.tree.dtype.clear();
  if (full.rules->layout != Layout::kEasyDel) tiny_flags.rules = "builtin";
  StatusOr<std::shared_ptr<const Model>> tiny = full.model->WithSets(sets);
  if (tiny.ok() && full.pipeline.pipelined()) EP_RETURN_IF_ERROR(CheckTinyLayers(**tiny, full.pipeline));
  StatusOr<PlanInputs> inputs = tiny.ok() ? PreparePlan(*tiny, tiny_flags) : StatusOr<PlanInputs>(tiny.status());
  if (!inputs.ok()) {
    Status status = inputs.status();
    status.mutable_diag().notes.push_back("while deriving the tiny config with --set " +
                                          fmt::format("{}", fmt::join(sets, " --set ")));
    return status;
  }
  inputs->mesh = full.mesh;
  return std::optional<PlanInputs>(std::move(*inputs));
}

StatusOr<NumericSetup> SetUpNumeric(const CheckOptions& flags, const PlanInputs& full, const planner::Plan& full_plan) {
  if (!full.has_config())
    return Status::BadInput({}, "the numeric check needs CONFIG (use --level layout with --tree)");
  EP_ASSIGN_OR_RETURN(const schemas::NumericCheckSpec* forward,
                      ForwardPassOf(*full.model, "the numeric check", "use --level layout for the others"));
  const schemas::NumericCheckSpec& spec = *forward;
  if (full.mesh.NumDevices() > flags.max_numeric_devices) {
    return Status::BadInput({},
                            fmt::format("the numeric check simulates at most {} devices; the mesh has {} ({})",
                                        flags.max_numeric_devices, full.mesh.NumDevices(), full.mesh.ToString()),
                            {"use --level layout for this mesh"});
  }
  EP_ASSIGN_OR_RETURN(const schemas::ModelDims full_dims, schemas::ModelDimsOf(full.resolved()));
  EP_ASSIGN_OR_RETURN(const kernels::TinyModel tiny,
                      kernels::DeriveTinyModel(spec, full_dims, full.mesh, full.uneven, full.pipeline.Chunks()));
  NumericSetup setup;
  setup.sets = tiny.sets;
  setup.top_k_key = tiny.top_k_key;
  EP_ASSIGN_OR_RETURN(setup.inputs, LoadTinyInputs(flags, full, setup.sets));
  EP_ASSIGN_OR_RETURN(setup.plan, setup.inputs->Build());
  if (setup.plan.HasErrors()) {
    return Status::BadInput({}, "the plan of the tiny config has errors:\n" + FindingsToText(setup.plan.findings));
  }
  EP_ASSIGN_OR_RETURN(const schemas::ModelDims tiny_dims, schemas::ModelDimsOf(setup.inputs->resolved()));
  setup.model = kernels::ModelDescOf(tiny, tiny_dims, *setup.inputs->tree, setup.plan);
  // Where the tiny plan lays a tensor out differently from the full one (names both trees share).
  if (full.tree->layout == Layout::kEasyDel) {
    std::unordered_map<std::string, const planner::ParamPlan*> by_name;
    for (const planner::ParamPlan& p : full_plan.params)
      by_name.emplace(full.tree->tensors[static_cast<size_t>(p.tensor)].name, &p);
    for (const planner::ParamPlan& p : setup.plan.params) {
      const std::string& name = setup.inputs->tree->tensors[static_cast<size_t>(p.tensor)].name;
      auto it = by_name.find(name);
      if (it != by_name.end() && !(it->second->effective == p.effective)) {
        setup.differences.push_back(fmt::format("{}: full plan {}, tiny plan {}", name,
                                                it->second->effective.ToString(), p.effective.ToString()));
      }
    }
  }
  return setup;
}

MemoryOptions TinyMemoryOptions(const NumericSetup& setup, const char* mode) {
  MemoryOptions memory;
  memory.mode = mode;
  memory.batch = setup.model.batch;
  memory.seq = setup.model.seq;
  memory.activation_dtype = setup.model.bytes_per_element == 4 ? "float32" : "bfloat16";
  return memory;
}

/// `check --memory` serves too: the forward also fills a KV cache, laid out as EasyDeL stores it for a
/// prefill of the tiny batch and sequence (the activation plan's sanitised cache spec and kvdtype).
Status AddServeCache(NumericSetup& setup) {
  EP_ASSIGN_OR_RETURN(const planner::ActivationTable* table, setup.inputs->model->ActivationTable());
  const MemoryOptions memory = TinyMemoryOptions(setup, "prefill");
  ActivationOptions prefill;
  prefill.mode = "prefill";
  prefill.batch = memory.batch;
  prefill.seq = memory.seq;
  prefill.dtype = memory.activation_dtype;
  EP_ASSIGN_OR_RETURN(const Checked<ActivationOptions> checked, Checked<ActivationOptions>::Of(prefill));
  EP_ASSIGN_OR_RETURN(planner::ActivationPlan plan, BuildActivations(checked, *table, *setup.inputs->presets,
                                                                     setup.inputs->resolved(), setup.inputs->mesh));
  setup.model.cache_axes = plan.cache_key.entries();
  setup.model.cache_index_axes = plan.cache_index.entries();
  for (const planner::ActivationTensor& t : plan.tensors) {
    if (t.name == "kv_cache.key") setup.model.cache_bytes_per_element = std::max(1, DTypeBits(t.dtype) / 8);
  }
  return Status();
}

// The band a measured activation peak must fall in, as a fraction of the prediction (docs/MEMORY.md):
// the model keeps every intermediate of one layer alive at once (above what liveness-based freeing
// needs), while the reference frees by scope, so a layer's input and a fused projection's output can
// outlive their last use (GPT-2's c_attn output beside its q, k and v).
CheckRun::ActivationPeak ComparePeak(const std::vector<int64_t>& measured, const planner::MemoryReport& predicted) {
  CheckRun::ActivationPeak peak;
  peak.measured = measured;
  peak.predicted.assign(measured.size(), 0);
  double furthest = -1;
  peak.min_ratio = std::numeric_limits<double>::infinity();
  peak.max_ratio = 0;
  for (const planner::DeviceMemory& d : predicted.devices) {
    const size_t i = static_cast<size_t>(d.id);
    if (i >= measured.size()) continue;
    peak.predicted[i] = d.activations;
    const double ratio = d.activations > 0 ? static_cast<double>(measured[i]) / static_cast<double>(d.activations) : 0;
    peak.min_ratio = std::min(peak.min_ratio, ratio);
    peak.max_ratio = std::max(peak.max_ratio, ratio);
    const double distance = std::abs(std::log(std::max(ratio, 1e-9)));
    if (distance > furthest) {
      furthest = distance;
      peak.worst_device = d.id;
    }
  }
  if (furthest < 0) peak.min_ratio = 0;  // no device compared
  peak.ok = peak.min_ratio >= kPeakBandLow && peak.max_ratio <= kPeakBandHigh;
  return peak;
}

/// `check --memory`: the measured bytes of the numeric run against `easyplan memory` for the tiny config,
/// batch and sequence. Training with nothing_saveable (each layer keeps only its input, so the residual
/// stream the forward keeps is exactly the saved set): parameters, residual stream and float32 logits.
/// Serving: the KV cache the prefill filled. Every figure must agree to the byte on every device.
Status CompareMemory(const CheckOptions& flags, const PlanInputs& full, NumericSetup& setup,
                     const kernels::NumericReport& n, CheckRun& run) {
  run.memory.emplace();
  if (!n.executed) return Status();
  // Training as the reference computes it (kernels::ReferenceTrainingOverrides: nothing_saveable, vanilla
  // attention, every expert on every token), from the tiny config resolved again with those settings.
  // Parameters, residual stream and logits do not depend on them.
  std::vector<std::string> train_sets = setup.sets;
  for (std::string& set : kernels::SetStrings(kernels::ReferenceTrainingOverrides(setup.model, setup.top_k_key))) {
    train_sets.push_back(std::move(set));
  }
  EP_ASSIGN_OR_RETURN(std::optional<PlanInputs> train_inputs, LoadTinyInputs(flags, full, train_sets));
  EP_ASSIGN_OR_RETURN(planner::Plan train_plan, train_inputs->Build());
  EP_ASSIGN_OR_RETURN(
      planner::MemoryReport train,
      BuildMemoryReport(*train_inputs, train_plan, TinyMemoryOptions(setup, "train"), int64_t{1} << 62));
  EP_ASSIGN_OR_RETURN(
      planner::MemoryReport serve,
      BuildMemoryReport(*setup.inputs, setup.plan, TinyMemoryOptions(setup, "prefill"), int64_t{1} << 62));
  run.activation_peak = ComparePeak(n.measured_activation_peak, train);
  const planner::ActivationBreakdown& b = train.breakdown;
  const int64_t residual = b.layer_saved * b.layers + b.outside / 2;  // every layer's input + the last output
  if (serve.devices.size() != train.devices.size()) return Status::Internal("memory reports of different meshes");
  for (size_t k = 0; k < train.devices.size(); ++k) {
    const planner::DeviceMemory& d = train.devices[k];
    const size_t i = static_cast<size_t>(d.id);
    // The logits block is float32 in the model; the forward holds it in the activation dtype.
    const int64_t logits = n.measured_logits[i] * 4 / setup.model.bytes_per_element;
    for (const auto& [what, measured, predicted] :
         {std::tuple{"params", n.measured_params[i], d.params},
          std::tuple{"residual stream", n.measured_residual[i], residual},
          std::tuple{"logits (float32)", logits, b.logits},
          std::tuple{"kv cache", n.measured_kv_cache[i], serve.devices[k].kv_cache}}) {
      ++run.memory_compared;
      if (measured != predicted) run.memory->push_back({what, d.id, measured, predicted});
    }
  }
  return Status();
}

// --level all runs what it can: a family without a reference forward pass still gets the layout check,
// with the reason the numeric one did not run. --level numeric asked for it, so there it stays an error.
StatusOr<std::string> NumericSkipReason(const CheckOptions& flags, const PlanInputs& inputs) {
  if (flags.level != "all" || !inputs.has_config()) return std::string();
  StatusOr<const schemas::NumericCheckSpec*> spec =
      ForwardPassOf(*inputs.model, "the numeric check", "the layout check ran alone");
  if (spec.ok()) return std::string();
  const Status status = spec.status();
  if (status.kind() != ErrorKind::kBadInput) return status;
  std::string reason = status.diag().message;
  for (const std::string& note : status.diag().notes) reason += " (" + note + ")";
  return reason;
}

// --inject drop-all-reduce on a forward that issues no all-reduce would change nothing, and the check
// would pass: a fault test must not pass vacuously, so that is bad input (docs/CHECK.md).
Status CheckInjected(Injection injection, const CheckRun& run) {
  if (injection == Injection::kDropStageSend && run.root) {
    if (run.numeric && run.numeric->comm.dropped_sends > 0) return Status();
    const std::string why = !run.plan.pipeline.pipelined() ? "the mesh has no pp axis above 1, so no stage sends"
                            : run.numeric
                                ? "the forward pass crossed no stage boundary"
                                : "the numeric check did not run (" +
                                      (run.numeric_skipped.empty() ? "--level layout" : run.numeric_skipped) + ")";
    return Status::BadInput({}, "--inject drop-stage-send had nothing to inject: " + why,
                            {"give the mesh pipeline stages, e.g. --mesh pp=2,tp=2"});
  }
  if (injection != Injection::kDropAllReduce || !run.root) return Status();
  if (run.numeric && run.numeric->comm.dropped_all_reduces > 0) return Status();
  const std::string why =
      run.numeric ? (run.plan.pipeline.pipelined() ? "the first pipeline stage's forward issues no all-reduce"
                                                   : "the forward pass of this plan issues no all-reduce")
                  : "the numeric check did not run (" +
                        (run.numeric_skipped.empty() ? "--level layout" : run.numeric_skipped) + ")";
  return Status::BadInput({}, "--inject drop-all-reduce had nothing to inject: " + why,
                          {"choose a mesh whose forward all-reduces partial sums, e.g. one with tp > 1"});
}

// The MPI engine's own faults (docs/CHECK.md), named by --inject beside the plan mutations.
constexpr std::pair<const char*, kernels::MpiOptions::Fault> kEngineFaults[] = {
    {"rank-crash", kernels::MpiOptions::Fault::kCrash},
    {"rank-kill", kernels::MpiOptions::Fault::kKill},
    {"rank-term", kernels::MpiOptions::Fault::kTerm},
    {"rank-stall", kernels::MpiOptions::Fault::kStall},
};

// The pipeline the numeric check ran (the tiny plan's) and what crossed its stage boundaries.
Json PipelineJson(const planner::PipelineSplit& split, const kernels::CommLog& comm) {
  Json sends = Json::array();
  int64_t total = 0;
  for (const kernels::CommRecord& r : comm.records) {
    if (r.kind != kernels::CollectiveKind::kSendRecv) continue;
    total += r.bytes_per_device;
    sends.push_back(Json{{"scope", r.scope},
                         {"from_stage", r.stage},
                         {"to_stage", r.to_stage},
                         {"operand", r.tensor_spec},
                         {"bytes_per_device", r.bytes_per_device}});
  }
  return Json{{"stages", split.stages},
              {"virtual_stages", split.virtual_stages},
              {"schedule", std::string(planner::PipelineScheduleName(split.schedule))},
              {"layers_per_chunk", split.chunk_layers},
              {"boundaries", sends.size()},
              {"send_recv_bytes_per_device", total},
              {"sends", sends},
              {"dropped_sends", comm.dropped_sends}};
}

}  // namespace

StatusOr<Injection> ParseInjection(const std::string& text) {
  if (const std::optional<Injection> injection = kernels::ParseInjectionName(text)) return *injection;
  for (const auto& [name, fault] : kEngineFaults) {
    if (text == name) return Injection::kNone;
  }
  return Status::BadInput({}, "--inject '" + text + "' is not a known fault");
}

Status CheckCheckOptions(const CheckOptions& options) {
  EP_RETURN_IF_ERROR(CheckPlanOptions(options.plan));
  // Each option as the command table declares its check (api/option_table.cc); then how they combine.
  EP_RETURN_IF_ERROR(CheckOptionValue("level", Json(options.level)));
  EP_RETURN_IF_ERROR(CheckOptionValue("engine", Json(options.engine)));
  EP_RETURN_IF_ERROR(CheckOptionValue("mpi_timeout", Json(options.mpi_timeout_seconds)));
  EP_RETURN_IF_ERROR(CheckOptionValue("mpi_start_timeout", Json(options.mpi_start_timeout_seconds)));
  EP_RETURN_IF_ERROR(CheckOptionValue("max_numeric_devices", Json(options.max_numeric_devices)));
  EP_RETURN_IF_ERROR(ParseInjection(options.inject).status());
  if (options.engine == "mpi" && options.level == "layout") {
    return Status::BadInput({}, "--engine mpi runs the numeric check, and --level layout has none",
                            {"use --level numeric or --level all"});
  }
  for (const auto& [name, fault] : kEngineFaults) {
    if (options.inject == name && options.engine != "mpi") {
      return Status::BadInput({}, fmt::format("--inject {} is a fault of the MPI engine", name),
                              {"add --engine mpi and run under mpirun"});
    }
  }
  return Status();
}

StatusOr<std::unique_ptr<kernels::Engine>> StartEngine(const CheckOptions& options) {
  EP_RETURN_IF_ERROR(CheckCheckOptions(options));
  if (options.engine != "mpi") return kernels::MakeInProcessEngine();
  kernels::MpiOptions mpi;
  mpi.timeout_seconds = options.mpi_timeout_seconds;
  mpi.startup_timeout_seconds = options.mpi_start_timeout_seconds;
  for (const auto& [name, fault] : kEngineFaults) {
    if (options.inject == name) mpi.fault = fault;
  }
  return kernels::StartMpiEngine(mpi);
}

StatusOr<CheckRun> Check(const std::shared_ptr<const Model>& model, const CheckOptions& options,
                         kernels::Engine* engine) {
  EP_ASSIGN_OR_RETURN(const Checked<CheckOptions> checked, Checked<CheckOptions>::Of(options));
  return Check(model, checked, engine);
}

StatusOr<CheckRun> Check(const std::shared_ptr<const Model>& model, const Checked<CheckOptions>& checked,
                         kernels::Engine* engine) {
  const CheckOptions& flags = *checked;
  EP_ASSIGN_OR_RETURN(Injection injection, ParseInjection(flags.inject));
  if (flags.engine == "mpi" && (engine == nullptr || engine->name() != "mpi")) {
    return Status::BadInput({}, "--engine mpi needs the engine StartEngine started");
  }
  const bool root = engine == nullptr || engine->root();
  EP_ASSIGN_OR_RETURN(PlanInputs inputs, PreparePlan(model, checked.PartOf(&CheckOptions::plan)));
  CheckRun run;
  EP_ASSIGN_OR_RETURN(run.plan, inputs.Build());
  const planner::Plan& plan = run.plan;
  run.level = flags.level;
  run.easydel_version = model->easydel_version().name;
  run.mesh = plan.mesh;
  run.seed = flags.seed;
  run.root = root;
  if (plan.HasErrors()) return run;  // the plan's findings say what to fix; nothing is executed
  if (flags.memory && inputs.pipeline.pipelined()) {
    return Status::BadInput(
        {},
        fmt::format("--memory compares an unpipelined forward with `easyplan memory`, and the mesh "
                    "has pp={}: its stages' figures depend on the schedule's microbatches in flight",
                    inputs.pipeline.stages),
        {"drop --memory (check still proves the pipelined forward), or use `easyplan memory "
         "--mesh pp=...` for the stages' memory"});
  }
  if (flags.level != "numeric" && root) {
    run.layout = kernels::CheckLayouts(plan, *inputs.tree, {.injection = injection});
  }
  EP_ASSIGN_OR_RETURN(run.numeric_skipped, NumericSkipReason(flags, inputs));
  if (flags.level != "layout" && run.numeric_skipped.empty()) {
    EP_ASSIGN_OR_RETURN(NumericSetup setup, SetUpNumeric(flags, inputs, plan));
    if (flags.memory) EP_RETURN_IF_ERROR(AddServeCache(setup));
    kernels::NumericOptions options{
        .seed = flags.seed, .injection = injection, .max_devices = flags.max_numeric_devices, .engine = engine};
    EP_ASSIGN_OR_RETURN(run.numeric, kernels::RunNumericCheck(setup.model, setup.plan, *setup.inputs->tree, options));
    if (flags.memory && root) EP_RETURN_IF_ERROR(CompareMemory(flags, inputs, setup, *run.numeric, run));
    run.numeric_setup = std::move(setup);
  }
  EP_RETURN_IF_ERROR(CheckInjected(injection, run));
  return run;
}

std::string DescribeModel(const kernels::ModelDesc& m) {
  std::string text =
      fmt::format("{}: {} layers, hidden {}, vocab {}, heads {}", m.model_type, m.layers, m.hidden, m.vocab, m.heads);
  const bool mla = m.forward.attention.kind == schemas::AttentionKind::kLatent && m.kv_lora_rank > 0;
  if (!mla) {
    text += fmt::format(" (kv {}), head_dim {}", m.kv_heads, m.head_dim);
  }
  if (mla) {
    text += fmt::format(", MLA q_lora {} kv_lora {} nope/rope/v {}/{}/{}", m.q_lora_rank, m.kv_lora_rank,
                        m.qk_nope_head_dim, m.qk_rope_head_dim, m.v_head_dim);
  }
  if (m.experts > 0) {
    text += fmt::format(", {} experts top-{}", m.experts, m.top_k);
    if (m.shared_intermediate > 0) text += fmt::format(" + shared width {}", m.shared_intermediate);
    if (m.first_dense_layers > 0) text += fmt::format(", {} dense layer first", m.first_dense_layers);
  }
  if (m.tied_embeddings) text += ", tied embeddings";
  return text;
}

Json CheckToJson(const CheckRun& run) {
  Json out = Json::object();
  out["ok"] = run.ok();
  out["level"] = run.level;
  out["easydel_version"] = run.easydel_version;
  Json mesh = Json::object();
  for (int k = 0; k < run.mesh.rank(); ++k)
    mesh[run.mesh.axis_names[static_cast<size_t>(k)]] = run.mesh.shape[static_cast<size_t>(k)];
  out["mesh"] = mesh;
  out["devices"] = run.mesh.NumDevices();
  if (run.layout) {
    const kernels::LayoutCheckResult& l = *run.layout;
    Json errors = Json::array();
    for (const kernels::LayoutError& e : l.errors) {
      errors.push_back(Json{{"param", e.param}, {"device", e.device}, {"message", e.message}});
    }
    out["layout"] = Json{{"ok", l.ok()},
                         {"tensors", l.tensors},
                         {"groups", l.groups},
                         {"errors_total", l.errors_total},
                         {"errors", errors}};
  }
  if (!run.numeric_skipped.empty()) out["numeric_skipped"] = run.numeric_skipped;
  if (run.numeric) {
    const kernels::NumericReport& n = *run.numeric;
    const NumericSetup& s = *run.numeric_setup;
    Json numeric = Json::object();
    numeric["ok"] = n.ok();
    numeric["model"] = DescribeModel(s.model);
    numeric["tiny_config_sets"] = s.sets;
    numeric["tiny_plan_differences"] = s.differences;
    numeric["batch"] = n.batch;
    numeric["seq"] = n.seq;
    numeric["seed"] = run.seed;
    numeric["executed"] = n.executed;
    Json shard_errors = Json::array();
    for (const kernels::ShardError& e : n.shard_errors) {
      shard_errors.push_back(
          Json{{"param", e.param}, {"device", e.device}, {"index", e.index}, {"message", e.message}});
    }
    numeric["shard_errors_total"] = n.shard_errors_total;
    numeric["shard_errors"] = shard_errors;
    Json comparisons = Json::array();
    for (const kernels::Comparison& c : n.comparisons) {
      Json j{{"name", c.name},         {"ok", c.ok},
             {"nmse", c.nmse},         {"max_abs_err", c.max_abs},
             {"max_nmse", c.max_nmse}, {"max_abs_tol", c.max_abs_tol}};
      if (!c.ok) {
        j["device"] = c.device;
        j["index"] = c.index;
      }
      comparisons.push_back(j);
    }
    numeric["comparisons"] = comparisons;
    Json comm = Json::object();
    comm["bytes_per_element"] = s.model.bytes_per_element;
    Json per_scope = Json::array();
    std::vector<std::string> scopes = n.comm.Scopes();
    scopes.push_back("");
    for (const std::string& scope : scopes) {
      Json row = Json::object();
      row["scope"] = scope.empty() ? "total" : scope;
      for (int k = 0; k < kernels::kCollectiveKinds; ++k) {
        const auto kind = static_cast<kernels::CollectiveKind>(k);
        if (kind == kernels::CollectiveKind::kSendRecv && !s.plan.pipeline.pipelined()) continue;
        row[std::string(kernels::CollectiveName(kind))] = n.comm.Bytes(kind, scope);
      }
      per_scope.push_back(row);
    }
    comm["bytes_per_device"] = per_scope;
    Json records = Json::array();
    for (const kernels::CommRecord& r : n.comm.records) {
      if (r.backward == kernels::CommRecord::Backward::kOnly) continue;  // not executed by the forward check
      Json record{{"kind", std::string(kernels::CollectiveName(r.kind))},
                  {"scope", r.scope},
                  {"op", r.op},
                  {"operand", r.tensor_spec},
                  {"group", r.group_size},
                  {"bytes_per_device", r.bytes_per_device}};
      // A routed collective: what cost prices under balanced routing, beside what this routing moved.
      if (r.expected_bytes >= 0) record["expected_bytes_per_device"] = r.expected_bytes;
      // Pipelined: the stage whose devices ran it (a send/recv's sending stage, and the receiving one).
      if (r.stage >= 0) record["stage"] = r.stage;
      if (r.to_stage >= 0) record["to_stage"] = r.to_stage;
      records.push_back(std::move(record));
    }
    comm["collectives"] = records;
    numeric["communication"] = comm;
    if (s.plan.pipeline.pipelined()) numeric["pipeline"] = PipelineJson(s.plan.pipeline, n.comm);
    if (n.engine) {
      const kernels::EngineComparison& e = *n.engine;
      numeric["engine"] = Json{{"name", e.engine},
                               {"processes", e.processes},
                               {"devices_per_process", e.devices_per_process},
                               {"outputs_compared", e.outputs},
                               {"max_nmse", e.max_nmse},
                               {"nmse_tol", e.nmse_tol},
                               {"max_abs_diff", e.max_abs_diff},
                               {"abs_tol", e.abs_tol},
                               {"collectives_compared", e.records},
                               {"collectives_difference", e.comm_difference},
                               {"ok", e.ok()}};
    }
    out["numeric"] = numeric;
  }
  if (run.memory) {
    Json rows = Json::array();
    for (const CheckRun::MemoryRow& r : *run.memory) {
      rows.push_back(
          Json{{"device", r.device}, {"what", r.what}, {"measured", r.measured}, {"predicted", r.predicted}});
    }
    out["memory"] = Json{{"ok", run.memory_ok()}, {"compared", run.memory_compared}, {"mismatches", rows}};
    if (run.activation_peak && !run.activation_peak->measured.empty()) {
      const CheckRun::ActivationPeak& p = *run.activation_peak;
      out["memory"]["activation_peak"] = Json{{"measured", p.measured},
                                              {"predicted", p.predicted},
                                              {"min_ratio", std::round(p.min_ratio * 1e4) / 1e4},
                                              {"max_ratio", std::round(p.max_ratio * 1e4) / 1e4},
                                              {"tolerance", Json::array({kPeakBandLow, kPeakBandHigh})},
                                              {"ok", p.ok}};
    }
  }
  return out;
}

}  // namespace easyplan::api
