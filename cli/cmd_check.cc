// `easyplan check CONFIG`: proves a plan by executing it on simulated devices (kernels/): the layout
// check at full size, then the numeric check of a tiny model of the same family over the same mesh and
// rules. docs/CHECK.md describes the output.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <unordered_map>

#include "cli/activation_setup.h"
#include "cli/commands.h"
#include "cli/memory_setup.h"
#include "cli/plan_format.h"
#include "cli/plan_setup.h"
#include "cli/tree_source.h"
#include "core/emit.h"
#include "kernels/layout_check.h"
#include "kernels/numeric_check.h"
#include "kernels/tiny_model.h"
#include "schemas/model_dims.h"
#include "schemas/schema_set.h"

namespace easyplan::cli {
namespace {

using kernels::Injection;

struct CheckFlags {
  PlanFlags plan;
  std::string level = "all";
  uint64_t seed = 0;
  std::string format = "text";
  std::string output;
  std::string inject = "none";  // hidden: mutation tests only
  int64_t max_numeric_devices = 64;
  bool memory = false;
};

StatusOr<Injection> ParseInjection(const std::string& text) {
  for (Injection i : {Injection::kNone, Injection::kCorruptShard, Injection::kOffsetBlock, Injection::kDropAllReduce,
                      Injection::kWrongDim, Injection::kSwapTupleOrder}) {
    if (kernels::InjectionName(i) == text) return i;
  }
  return Status::BadInput({}, "--inject '" + text + "' is not a known fault");
}

// ---- the tiny config ----

// The plan inputs of the tiny config: the full run's flags with `sets` after the user's --set, EasyDeL
// names, and the built-in rules when the full run's rules are written for HF names (they cannot plan
// EasyDeL names). Its resolve warnings are not printed (the full config's were); they stay in its diags.
StatusOr<std::unique_ptr<PlanInputs>> LoadTinyInputs(Context& ctx, const CheckFlags& flags, const PlanInputs& full,
                                                     const std::vector<std::string>& sets) {
  PlanFlags tiny_flags = flags.plan;
  tiny_flags.config.sets.insert(tiny_flags.config.sets.end(), sets.begin(), sets.end());
  tiny_flags.config.print_diags = false;
  tiny_flags.layout = "easydel";
  tiny_flags.tree.clear();
  tiny_flags.from.clear();
  tiny_flags.dtype.clear();
  if (full.rules->layout != Layout::kEasyDel) tiny_flags.rules = "builtin";
  auto inputs = LoadPlanInputs(ctx, tiny_flags);
  if (!inputs.ok()) {
    Status status = inputs.status();
    status.mutable_diag().notes.push_back("while deriving the tiny config with --set " +
                                          fmt::format("{}", fmt::join(sets, " --set ")));
    return status;
  }
  (*inputs)->mesh = full.mesh;
  return std::move(*inputs);
}

// The family's numeric_check declaration for the full model; an error listing the covered families when
// the family has none.
StatusOr<schemas::NumericCheckSpec> NumericCheckOf(Context& ctx, const CheckFlags& flags, const PlanInputs& full,
                                                   const std::string& model_type) {
  schemas::SchemaSet schemas = MakeSchemaSet(ctx, flags.plan.config);
  EP_ASSIGN_OR_RETURN(const schemas::NumericCheckDecl* decl, schemas.NumericCheck(model_type));
  if (decl != nullptr) return schemas::NumericCheckFor(*decl, full.resolved.config);
  std::vector<std::pair<std::string, std::string>> declared;
  for (const std::string& name : schemas.FamilyNames()) {
    EP_ASSIGN_OR_RETURN(const schemas::NumericCheckDecl* listed, schemas.NumericCheck(name));
    if (listed != nullptr) declared.emplace_back(name, listed->forward);
  }
  return Status::BadInput({}, "the numeric check has no reference forward pass for model_type '" + model_type + "'",
                          {fmt::format("covered: {}; use --level layout for the others",
                                       fmt::join(kernels::CoveredModelTypes(declared), ", "))});
}

struct NumericSetup {
  std::unique_ptr<PlanInputs> inputs;
  planner::Plan plan;
  kernels::ModelDesc model;
  std::vector<std::string> sets;
  std::vector<std::string> differences;  ///< tensors whose tiny spec differs from the full plan's
};

StatusOr<NumericSetup> SetUpNumeric(Context& ctx, const CheckFlags& flags, const PlanInputs& full,
                                    const planner::Plan& full_plan) {
  if (!full.has_config) return Status::BadInput({}, "the numeric check needs CONFIG (use --level layout with --tree)");
  auto model_type_it = full.resolved.config.find("model_type");
  const std::string model_type = model_type_it != full.resolved.config.end() && model_type_it->is_string()
                                     ? model_type_it->get<std::string>()
                                     : "";
  EP_ASSIGN_OR_RETURN(const schemas::NumericCheckSpec spec, NumericCheckOf(ctx, flags, full, model_type));
  if (full.mesh.NumDevices() > flags.max_numeric_devices) {
    return Status::BadInput({},
                            fmt::format("the numeric check simulates at most {} devices; the mesh has {} ({})",
                                        flags.max_numeric_devices, full.mesh.NumDevices(), full.mesh.ToString()),
                            {"use --level layout for this mesh"});
  }
  EP_ASSIGN_OR_RETURN(const schemas::ModelDims full_dims, schemas::ModelDimsOf(full.resolved));
  EP_ASSIGN_OR_RETURN(const kernels::TinyModel tiny, kernels::DeriveTinyModel(spec, full_dims, full.mesh, full.uneven));
  NumericSetup setup;
  setup.sets = tiny.sets;
  EP_ASSIGN_OR_RETURN(setup.inputs, LoadTinyInputs(ctx, flags, full, setup.sets));
  EP_ASSIGN_OR_RETURN(setup.plan, planner::BuildPlan(setup.inputs->Request()));
  if (setup.plan.HasErrors()) {
    return Status::BadInput({}, "the plan of the tiny config has errors:\n" + FindingsToText(setup.plan.findings));
  }
  EP_ASSIGN_OR_RETURN(const schemas::ModelDims tiny_dims, schemas::ModelDimsOf(setup.inputs->resolved));
  setup.model = kernels::ModelDescOf(tiny, tiny_dims, setup.inputs->tree, setup.plan);
  // Where the tiny plan lays a tensor out differently from the full one (names both trees share).
  if (full.tree.layout == Layout::kEasyDel) {
    std::unordered_map<std::string, const planner::ParamPlan*> by_name;
    for (const planner::ParamPlan& p : full_plan.params)
      by_name.emplace(full.tree.tensors[static_cast<size_t>(p.tensor)].name, &p);
    for (const planner::ParamPlan& p : setup.plan.params) {
      const std::string& name = setup.inputs->tree.tensors[static_cast<size_t>(p.tensor)].name;
      auto it = by_name.find(name);
      if (it != by_name.end() && !(it->second->effective == p.effective)) {
        setup.differences.push_back(fmt::format("{}: full plan {}, tiny plan {}", name,
                                                it->second->effective.ToString(), p.effective.ToString()));
      }
    }
  }
  return setup;
}

// ---- the report ----

std::string Sci(double v) { return v == 0 ? "0" : fmt::format("{:.1e}", v); }
std::string IndexText(const kernels::Dims& index) { return fmt::format("[{}]", fmt::join(index, ", ")); }

struct CheckRun {
  std::string level;
  Mesh mesh;
  std::optional<kernels::LayoutCheckResult> layout;
  std::optional<NumericSetup> numeric_setup;
  std::optional<kernels::NumericReport> numeric;
  uint64_t seed = 0;
  /// --memory: what the forward measured per device against `easyplan memory`'s prediction.
  struct MemoryRow {
    std::string what;  ///< "params", "residual stream", "logits"
    int64_t device = 0;
    int64_t measured = 0, predicted = 0;
  };
  std::optional<std::vector<MemoryRow>> memory;  ///< every mismatch; devices agreeing are summarised
  int64_t memory_compared = 0;
  /// Peak live activations per device: measured through the last layer, and `easyplan memory`'s
  /// activations for the computation the reference runs (vanilla attention, every expert on every token).
  struct ActivationPeak {
    std::vector<int64_t> measured, predicted;
    double min_ratio = 0, max_ratio = 0;
    int64_t worst_device = 0;  ///< the device furthest from the prediction
    bool ok = true;
  };
  std::optional<ActivationPeak> activation_peak;
  bool memory_ok() const { return (!memory || memory->empty()) && (!activation_peak || activation_peak->ok); }
  bool ok() const { return (!layout || layout->ok()) && (!numeric || numeric->ok()) && memory_ok(); }
};

MemoryFlags TinyMemoryFlags(const NumericSetup& setup, const char* mode) {
  MemoryFlags memory;
  memory.mode = mode;
  memory.batch = setup.model.batch;
  memory.seq = setup.model.seq;
  memory.activation_dtype = setup.model.bytes_per_element == 4 ? "float32" : "bfloat16";
  return memory;
}

/// `check --memory` serves too: the forward also fills a KV cache, laid out as EasyDeL stores it for a
/// prefill of the tiny batch and sequence (the activation plan's sanitised cache spec and kvdtype).
Status AddServeCache(Context& ctx, const CheckFlags& flags, NumericSetup& setup) {
  EP_ASSIGN_OR_RETURN(std::unique_ptr<planner::ActivationTable> table,
                      LoadActivationTable(ctx, flags.plan.config.schemas_dir));
  const MemoryFlags memory = TinyMemoryFlags(setup, "serve");
  ActivationFlags prefill;
  prefill.mode = "prefill";
  prefill.batch = memory.batch;
  prefill.seq = memory.seq;
  prefill.dtype = memory.activation_dtype;
  EP_ASSIGN_OR_RETURN(planner::ActivationPlan plan,
                      BuildActivationsFromFlags(prefill, *table, *setup.inputs->presets, setup.inputs->resolved.config,
                                                setup.inputs->mesh));
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
constexpr double kPeakBandLow = 0.5, kPeakBandHigh = 1.5;

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
Status CompareMemory(Context& ctx, const CheckFlags& flags, const PlanInputs& full, NumericSetup& setup,
                     const kernels::NumericReport& n, CheckRun& run) {
  run.memory.emplace();
  if (!n.executed) return Status();
  // Training as the reference computes it (kernels::ReferenceTrainingOverrides: nothing_saveable, vanilla
  // attention, every expert on every token), from the tiny config resolved again with those settings.
  // Parameters, residual stream and logits do not depend on them.
  std::vector<std::string> train_sets = setup.sets;
  for (std::string& set : kernels::SetStrings(kernels::ReferenceTrainingOverrides(setup.model))) {
    train_sets.push_back(std::move(set));
  }
  EP_ASSIGN_OR_RETURN(std::unique_ptr<PlanInputs> train_inputs, LoadTinyInputs(ctx, flags, full, train_sets));
  EP_ASSIGN_OR_RETURN(planner::Plan train_plan, planner::BuildPlan(train_inputs->Request()));
  EP_ASSIGN_OR_RETURN(planner::MemoryReport train,
                      BuildMemoryReport(ctx, *train_inputs, train_plan, TinyMemoryFlags(setup, "train"),
                                        int64_t{1} << 62, flags.plan.config.schemas_dir));
  EP_ASSIGN_OR_RETURN(planner::MemoryReport serve,
                      BuildMemoryReport(ctx, *setup.inputs, setup.plan, TinyMemoryFlags(setup, "serve"),
                                        int64_t{1} << 62, flags.plan.config.schemas_dir));
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

std::string DescribeModel(const kernels::ModelDesc& m) {
  std::string text =
      fmt::format("{}: {} layers, hidden {}, vocab {}, heads {}", m.model_type, m.layers, m.hidden, m.vocab, m.heads);
  if (m.family != kernels::ModelFamily::kGpt2 && m.family != kernels::ModelFamily::kDeepseek) {
    text += fmt::format(" (kv {}), head_dim {}", m.kv_heads, m.head_dim);
  }
  if (m.family == kernels::ModelFamily::kDeepseek) {
    text += fmt::format(", MLA q_lora {} kv_lora {} nope/rope/v {}/{}/{}", m.q_lora_rank, m.kv_lora_rank, m.qk_nope,
                        m.qk_rope, m.v_head);
  }
  if (m.experts > 0) {
    text += fmt::format(", {} experts top-{}", m.experts, m.top_k);
    if (m.shared_intermediate > 0) text += fmt::format(" + shared width {}", m.shared_intermediate);
    if (m.first_dense_layers > 0) text += fmt::format(", {} dense layer first", m.first_dense_layers);
  }
  if (m.tied_embeddings) text += ", tied embeddings";
  return text;
}

std::string ToText(const CheckRun& run) {
  std::string out;
  out += fmt::format("mesh {} ({} devices)\n", run.mesh.ToString(), run.mesh.NumDevices());
  if (run.layout) {
    const kernels::LayoutCheckResult& l = *run.layout;
    out += fmt::format("layout: {} ({} tensors in {} layout groups on {} devices)\n", l.ok() ? "pass" : "FAIL",
                       l.tensors, l.groups, l.devices);
    for (const kernels::LayoutError& e : l.errors) out += fmt::format("  error: {}: {}\n", e.param, e.message);
    if (l.errors_total > static_cast<int64_t>(l.errors.size())) {
      out += fmt::format("  ... and {} more errors\n", l.errors_total - static_cast<int64_t>(l.errors.size()));
    }
  }
  if (run.numeric) {
    const kernels::NumericReport& n = *run.numeric;
    const NumericSetup& s = *run.numeric_setup;
    out += fmt::format("numeric: {} (tiny {}; batch {} x seq {}, seed {}, {} parameters)\n", n.ok() ? "pass" : "FAIL",
                       DescribeModel(s.model), n.batch, n.seq, run.seed, n.params);
    for (const std::string& d : s.differences) out += "  note: the tiny plan differs: " + d + "\n";
    for (const kernels::ShardError& e : n.shard_errors) out += fmt::format("  error: {}: {}\n", e.param, e.message);
    if (n.shard_errors_total > static_cast<int64_t>(n.shard_errors.size())) {
      out += fmt::format("  ... and {} more shard errors\n",
                         n.shard_errors_total - static_cast<int64_t>(n.shard_errors.size()));
    }
    if (!n.executed) out += "  the forward pass did not run: shard shapes are wrong\n";
    if (!n.comparisons.empty()) {
      out += fmt::format("  {:<10} {:>9} {:>9} {:>9} {:>9}  {}\n", "output", "nmse", "max|err|", "tol nmse", "tol err",
                         "result");
      for (const kernels::Comparison& c : n.comparisons) {
        std::string result = c.ok ? "ok" : "FAIL";
        if (!c.ok && c.device >= 0) result += fmt::format(" (device {} at {})", c.device, IndexText(c.index));
        out += fmt::format("  {:<10} {:>9} {:>9} {:>9} {:>9}  {}\n", c.name, Sci(c.nmse), Sci(c.max_abs),
                           Sci(c.max_nmse), Sci(c.max_abs_tol), result);
      }
    }
    if (n.comm.dropped_all_reduces > 0) {
      out += fmt::format("  injected: {} all-reduce skipped\n", n.comm.dropped_all_reduces);
    }
    if (n.executed) {
      out += fmt::format("  communication per device (bytes, {}-byte elements):\n", s.model.bytes_per_element);
      out += fmt::format("  {:<10} {:>12} {:>15} {:>12} {:>12}\n", "scope", "all-gather", "reduce-scatter",
                         "all-reduce", "all-to-all");
      std::vector<std::string> scopes = n.comm.Scopes();
      scopes.push_back("");
      for (const std::string& scope : scopes) {
        out += fmt::format("  {:<10} {:>12} {:>15} {:>12} {:>12}\n", scope.empty() ? "total" : scope,
                           n.comm.Bytes(kernels::CollectiveKind::kAllGather, scope),
                           n.comm.Bytes(kernels::CollectiveKind::kReduceScatter, scope),
                           n.comm.Bytes(kernels::CollectiveKind::kAllReduce, scope),
                           n.comm.Bytes(kernels::CollectiveKind::kAllToAll, scope));
      }
    }
  }
  if (run.memory) {
    if (run.memory_compared == 0) {
      out += "memory: not compared (the forward did not run)\n";
    } else if (run.memory->empty()) {
      out += fmt::format(
          "memory: measured = predicted on every device ({} figures: parameters, residual stream, float32 logits "
          "and KV cache, to the byte; forward only)\n",
          run.memory_compared);
    } else {
      out += fmt::format("memory: {} of {} figures differ from `easyplan memory`\n", run.memory->size(),
                         run.memory_compared);
      for (const CheckRun::MemoryRow& r : *run.memory) {
        out += fmt::format("  error: device {}: {}: measured {} bytes, predicted {}\n", r.device, r.what, r.measured,
                           r.predicted);
      }
    }
  }
  if (run.activation_peak && !run.activation_peak->measured.empty()) {
    const CheckRun::ActivationPeak& p = *run.activation_peak;
    const size_t w = static_cast<size_t>(p.worst_device);
    out += fmt::format(
        "activations: peak live through the last layer {} bytes measured on device {}, {} predicted ({:.2f}x; "
        "devices {:.2f}x to {:.2f}x)",
        p.measured[w], p.worst_device, p.predicted[w],
        p.predicted[w] > 0 ? static_cast<double>(p.measured[w]) / static_cast<double>(p.predicted[w]) : 0.0,
        p.min_ratio, p.max_ratio);
    out += fmt::format("; tolerance {:.1f}x to {:.1f}x: {}\n", kPeakBandLow, kPeakBandHigh, p.ok ? "ok" : "FAIL");
  }
  out += fmt::format("check: {}\n", run.ok() ? "pass" : "FAIL");
  return out;
}

Json ToJson(const CheckRun& run) {
  Json out = Json::object();
  out["ok"] = run.ok();
  out["level"] = run.level;
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
        row[std::string(kernels::CollectiveName(kind))] = n.comm.Bytes(kind, scope);
      }
      per_scope.push_back(row);
    }
    comm["bytes_per_device"] = per_scope;
    Json records = Json::array();
    for (const kernels::CommRecord& r : n.comm.records) {
      records.push_back(Json{{"kind", std::string(kernels::CollectiveName(r.kind))},
                             {"scope", r.scope},
                             {"op", r.op},
                             {"operand", r.tensor_spec},
                             {"group", r.group_size},
                             {"bytes_per_device", r.bytes_per_device}});
    }
    comm["collectives"] = records;
    numeric["communication"] = comm;
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

StatusOr<int> RunCheck(const CheckFlags& flags, Context& ctx) {
  EP_RETURN_IF_ERROR(CheckChoice("--level", flags.level, {"layout", "numeric", "all"}));
  EP_RETURN_IF_ERROR(CheckChoice("--format", flags.format, {"text", "json"}));
  EP_ASSIGN_OR_RETURN(Injection injection, ParseInjection(flags.inject));
  EP_ASSIGN_OR_RETURN(std::unique_ptr<PlanInputs> inputs, LoadPlanInputs(ctx, flags.plan));
  EP_ASSIGN_OR_RETURN(planner::Plan plan, planner::BuildPlan(inputs->Request()));
  if (plan.HasErrors()) {
    ctx.err << FindingsToText(plan.findings);
    return kExitFindings;
  }
  CheckRun run;
  run.level = flags.level;
  run.mesh = plan.mesh;
  run.seed = flags.seed;
  if (flags.level != "numeric") {
    run.layout = kernels::CheckLayouts(plan, inputs->tree, {.injection = injection});
  }
  if (flags.level != "layout") {
    EP_ASSIGN_OR_RETURN(NumericSetup setup, SetUpNumeric(ctx, flags, *inputs, plan));
    if (flags.memory) EP_RETURN_IF_ERROR(AddServeCache(ctx, flags, setup));
    kernels::NumericOptions options{
        .seed = flags.seed, .injection = injection, .max_devices = flags.max_numeric_devices};
    EP_ASSIGN_OR_RETURN(run.numeric, kernels::RunNumericCheck(setup.model, setup.plan, setup.inputs->tree, options));
    if (flags.memory) EP_RETURN_IF_ERROR(CompareMemory(ctx, flags, *inputs, setup, *run.numeric, run));
    run.numeric_setup = std::move(setup);
  }
  const std::string text = flags.format == "json" ? EmitJson(ToJson(run)) : ToText(run);
  EP_RETURN_IF_ERROR(WriteOutput(ctx, flags.output, text));
  return run.ok() ? kExitOk : kExitFindings;
}

}  // namespace

std::function<int(Context&)> AddCheckCommand(CLI::App& app) {
  auto flags = std::make_shared<CheckFlags>();
  CLI::App* cmd = app.add_subcommand(
      "check", "execute the plan on simulated devices: layout tiling and a sharded-vs-unsharded forward pass");
  AddPlanFlags(cmd, flags->plan);
  cmd->add_option("--level", flags->level, "layout, numeric or all (default)");
  cmd->add_option("--seed", flags->seed, "seed of the pseudo-random weights and tokens (default 0)");
  cmd->add_option("--format", flags->format, "text (default) or json");
  cmd->add_option("-o,--output", flags->output, "write to FILE (atomically) instead of stdout");
  cmd->add_flag("--memory", flags->memory,
                "numeric: compare each simulated device's parameter, residual-stream, logits and KV-cache bytes "
                "with `easyplan memory` (docs/MEMORY.md)");
  cmd->add_option("--max-numeric-devices", flags->max_numeric_devices,
                  "refuse the numeric check above this many simulated devices (default 64)");
  // Mutation tests only (docs/CHECK.md): deliberately break the run to prove the check fails.
  cmd->add_option("--inject", flags->inject)->group("");
  return [flags](Context& ctx) {
    StatusOr<int> code = RunCheck(*flags, ctx);
    return code.ok() ? *code : ReportError(ctx, code.status());
  };
}

}  // namespace easyplan::cli
