#include "api/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <tuple>

#include "api/context_length.h"
#include "api/cost.h"
#include "api/environment.h"
#include "api/findings_json.h"
#include "api/memory_json.h"
#include "api/memory_pipeline.h"
#include "api/pipeline_timeline.h"
#include "api/plan_json.h"
#include "api/plan_pipeline.h"
#include "core/emit.h"
#include "core/script_json.h"
#include "planner/findings.h"
#include "planner/layout.h"
#include "schemas/model_dims.h"

namespace easyplan::api {
namespace {

// Past this many devices the page draws the mesh aggregated and the memory as min / median / max:
// per-device arrays of a 16,384-device mesh would be most of the page.
constexpr int64_t kMaxDrawnDevices = 4096;

// "model/layers/12/mlp/experts/3/w1" -> ("model/layers/#/mlp/experts/#/w1", {12, 3}).
std::pair<std::string, std::vector<int64_t>> NameTemplate(const std::string& name) {
  std::pair<std::string, std::vector<int64_t>> out;
  for (size_t i = 0; i < name.size();) {
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) {
      out.first += name[i++];
      continue;
    }
    size_t end = i;
    while (end < name.size() && std::isdigit(static_cast<unsigned char>(name[end]))) ++end;
    // A leading zero or a run too long for int64 stays text: the number would not give the name back.
    if ((name[i] == '0' && end - i > 1) || end - i > 15) {
      out.first += name.substr(i, end - i);
    } else {
      out.first += '#';
      out.second.push_back(std::stoll(name.substr(i, end - i)));
    }
    i = end;
  }
  return out;
}

Json MeshJson(const Mesh& mesh, const std::string& source) {
  Json out = Json::object();
  out["axes"] = mesh.axis_names;
  out["shape"] = mesh.shape;
  out["dcn"] = mesh.dcn_shape.empty() ? Json::array() : Json(mesh.dcn_shape);
  out["devices"] = mesh.NumDevices();
  out["text"] = mesh.ToString();
  out["source"] = source;
  return out;
}

std::string RuleText(const PlanInputs& inputs, const planner::ParamPlan& param) {
  if (param.rule < 0 || inputs.rules == nullptr) return "";
  const rules::Rule& rule = inputs.rules->rules[static_cast<size_t>(param.rule)];
  return rule.loc.ToString();
}

Json GroupsJson(const planner::Plan& plan) {
  const Mesh& mesh = plan.mesh;
  std::vector<int> first(plan.groups.size(), -1);
  for (size_t i = 0; i < plan.params.size(); ++i) {
    const size_t g = static_cast<size_t>(plan.params[i].group);
    if (g < first.size() && first[g] < 0) first[g] = static_cast<int>(i);
  }
  Json out = Json::array();
  for (size_t g = 0; g < plan.groups.size(); ++g) {
    const planner::LayoutGroup& group = plan.groups[g];
    Json row = Json::object();
    row["shape"] = group.layout.shape().dims();
    row["shard_shape"] = group.layout.shard_shape().dims();
    row["bits"] = group.bits;
    row["tiles"] = group.layout.tiles();
    row["replicas"] = group.Replicas();
    row["tensors"] = group.tensors;
    row["bytes_per_device"] = group.MaxShardBytes();
    row["even"] = group.layout.even();
    row["expert"] = group.expert_layout ? Json(group.expert) : Json(nullptr);
    if (first[g] >= 0) {
      const planner::ParamPlan& param = plan.params[static_cast<size_t>(first[g])];
      row["spec"] = param.effective.ToString();
      // Per dim, the mesh axis indices that cut it (major first), for the sharding drawing.
      Json dims = Json::array();
      for (const PartitionSpec::Entry& entry : param.effective.entries()) {
        Json axes = Json::array();
        for (const std::string& axis : entry) {
          if (std::optional<int> index = mesh.AxisIndex(axis)) axes.push_back(*index);
        }
        dims.push_back(axes);
      }
      while (dims.size() < group.layout.shape().dims().size()) dims.push_back(Json::array());
      row["dim_axes"] = dims;
    } else {
      row["spec"] = "";
      row["dim_axes"] = Json::array();
    }
    out.push_back(row);
  }
  return out;
}

// {"templates": [...], "rules": [...], "rows": [[template, group, rule, count, numbers...], ...]}.
Json TensorsJson(const PlanInputs& inputs, const planner::Plan& plan) {
  std::map<std::string, int> template_ids, rule_ids;
  Json templates = Json::array(), rule_list = Json::array();
  // (template, group, rule) -> numbers of its tensors, flattened, in tree order.
  std::map<std::tuple<int, int, int>, std::pair<int64_t, std::vector<int64_t>>> rows;
  std::vector<std::tuple<int, int, int>> order;
  for (const planner::ParamPlan& param : plan.params) {
    const std::string& name = inputs.tree->tensors[static_cast<size_t>(param.tensor)].name;
    auto [text, numbers] = NameTemplate(name);
    auto [t, new_template] = template_ids.try_emplace(text, static_cast<int>(templates.size()));
    if (new_template) templates.push_back(text);
    const std::string rule = RuleText(inputs, param);
    auto [r, new_rule] = rule_ids.try_emplace(rule, static_cast<int>(rule_list.size()));
    if (new_rule) {
      Json entry = Json::object();
      entry["source"] = rule;
      if (param.rule >= 0 && inputs.rules != nullptr) {
        entry["match"] = inputs.rules->rules[static_cast<size_t>(param.rule)].pattern;
      } else {
        entry["match"] = nullptr;
      }
      rule_list.push_back(entry);
    }
    const auto key = std::make_tuple(t->second, param.group, r->second);
    auto [row, inserted] = rows.try_emplace(key);
    if (inserted) order.push_back(key);
    row->second.first += 1;
    row->second.second.insert(row->second.second.end(), numbers.begin(), numbers.end());
  }
  Json out_rows = Json::array();
  for (const auto& key : order) {
    const auto& [count, numbers] = rows.at(key);
    Json row = Json::array({std::get<0>(key), std::get<1>(key), std::get<2>(key), count});
    for (int64_t n : numbers) row.push_back(n);
    out_rows.push_back(std::move(row));
  }
  Json out = Json::object();
  out["templates"] = std::move(templates);
  out["rules"] = std::move(rule_list);
  out["rows"] = std::move(out_rows);
  return out;
}

Json MemoryJson(const planner::MemoryReport& report, const std::string& label, bool per_device) {
  Json out = Json::object();
  out["mode"] = std::string(ModeName(report.mode));
  out["budget"] = report.budget_per_device;
  out["budget_label"] = label;
  out["fits"] = report.fits;
  out["worst"] = report.Worst().id;
  const char* categories[] = {"params", "grads", "optimizer", "activations", "kv_cache", "transient"};
  auto value = [](const planner::DeviceMemory& d, size_t k) {
    const int64_t values[] = {d.params, d.grads, d.optimizer, d.activations, d.kv_cache, d.transient};
    return values[k];
  };
  out["worst_device"] = DeviceMemoryToJson(report.Worst());
  if (per_device) {
    Json devices = Json::object();
    for (size_t k = 0; k < std::size(categories); ++k) {
      Json column = Json::array();
      for (const planner::DeviceMemory& d : report.devices) column.push_back(value(d, k));
      devices[categories[k]] = std::move(column);
    }
    out["devices"] = std::move(devices);
  }
  return out;
}

// Past kMaxDrawnDevices, the mesh is drawn as blocks of `size` consecutive devices (row-major, so a
// block is a run of the trailing axes' coordinates): the smallest divisor of the device count that
// leaves at most kMaxDrawnDevices blocks, each with the least and the most bytes of its devices.
Json DeviceBlocksJson(const std::vector<int64_t>& totals) {
  const int64_t n = static_cast<int64_t>(totals.size());
  int64_t size = 1;
  while (n / size > kMaxDrawnDevices || n % size != 0) ++size;
  Json min = Json::array(), max = Json::array();
  for (int64_t start = 0; start < n; start += size) {
    const auto [lo, hi] = std::minmax_element(totals.begin() + start, totals.begin() + start + size);
    min.push_back(*lo);
    max.push_back(*hi);
  }
  Json out = Json::object();
  out["size"] = size;
  out["min"] = std::move(min);
  out["max"] = std::move(max);
  return out;
}

// Why a step with a hardware profile has no cost section, or "" when it can have one.
std::string CostUnavailable(const ReportOptions& options) {
  if (!options.memory || options.memory->hardware.empty()) return "give --hardware to price the step";
  if (!options.plan.tree.file.empty() || !options.plan.tree.checkpoint.empty() ||
      options.plan.tree.layout != "easydel") {
    return "cost runs the family's forward pass on its EasyDeL tree: --tree, --from and --layout hf do not apply";
  }
  return "";
}

StepSettings SettingsOf(const ReportOptions& options, planner::CheckpointPolicy policy) {
  StepSettings s;
  s.mode = MemoryModeOf(options.memory->mode);
  s.batch = *options.memory->batch;
  s.seq = *options.memory->seq;
  s.microbatches = options.pricing.microbatches;
  s.policy = policy;
  s.keep_timeline = true;  // the page draws the pipeline's passes
  s.precision = PrecisionOf(options.pricing);
  // Checked with the options (CheckReportOptions): a bad --torus never reaches here.
  if (StatusOr<std::vector<int64_t>> torus = ParseTorus(options.pricing.torus); torus.ok()) s.torus = *torus;
  return s;
}

Json CostJson(const StepEstimate& e, const StepSettings& s, const step::HardwareProfile& hardware) {
  Json out = Json::object();
  out["hardware"] = hardware.name;
  out["decode"] = s.decode();
  out["microbatches"] = s.microbatches;
  out["gradient_checkpointing"] = PolicyFlagValue(s.policy);
  out["precision"] = step::PrecisionName(s.precision);
  out["step_time_s"] = e.step.step_time_s;
  out["compute_s"] = e.step.compute_s;
  out["recompute_s"] = e.step.recompute_s;
  out["communication_s"] = e.step.communication_s;
  out["exposed_communication_s"] = e.step.exposed_communication_s;
  out["tokens_per_s"] = e.tokens_per_s;
  out["mfu"] = e.mfu;
  out["layers"] = LayerCostsJson(e.step);
  return out;
}

// The first step flag `memory` holds beyond its defaults, as the CLI spells it; "" when none.
std::string FirstStepFlag(const MemoryOptions& memory) {
  const MemoryOptions defaults;
  const std::pair<bool, const char*> flags[] = {
      {memory.batch.has_value(), "--batch"},
      {memory.seq.has_value(), "--seq"},
      {memory.max_length.has_value(), "--max-length"},
      {memory.optimizer != defaults.optimizer, "--optimizer"},
      {memory.grad_dtype != defaults.grad_dtype, "--grad-dtype"},
      {memory.opt_state_dtype != defaults.opt_state_dtype, "--opt-state-dtype"},
      {memory.master_weights, "--master-weights"},
      {memory.max_memory != defaults.max_memory, "--max-memory"},
      {memory.hardware != defaults.hardware, "--hardware"},
  };
  for (const auto& [given, flag] : flags) {
    if (given) return flag;
  }
  return "";
}

}  // namespace

void SetReportStep(const MemoryOptions& memory, ReportOptions& options) {
  options.memory.reset();
  options.step_flag_without_mode.clear();
  if (!memory.mode.empty()) {
    options.memory = memory;
  } else {
    options.step_flag_without_mode = FirstStepFlag(memory);
  }
}

Status CheckReportOptions(const ReportOptions& options) {
  EP_RETURN_IF_ERROR(CheckPlanOptions(options.plan));
  // Without --mode the page has no step. A step flag given anyway was meant for one: refused rather than
  // dropped, since the page would silently show parameters only (issue 34; docs/REPORT.md).
  if (!options.step_flag_without_mode.empty()) {
    return Status::BadInput(
        {},
        fmt::format("report: {} describes a step, and no --mode says which step: without --mode the page shows "
                    "parameters only",
                    options.step_flag_without_mode),
        {"add --mode train, prefill or decode (e.g. --mode train --batch 8 --seq 4096)"});
  }
  if (!options.memory) {
    const PricingOptions& p = options.pricing;
    if (p.microbatches != 1 || p.decode || p.precision != PricingOptions().precision || !p.torus.empty()) {
      return Status::BadInput({}, "--microbatches, --decode, --precision and --torus price a step: they need --mode",
                              {"e.g. --mode train --batch 8 --seq 4096 --hardware h100-sxm"});
    }
    return Status();
  }
  EP_RETURN_IF_ERROR(CheckMemoryOptions(*options.memory, "report"));
  return CheckStepPricing(*options.memory, options.pricing);
}

StatusOr<ReportResult> Report(const std::shared_ptr<const Model>& model, const ReportOptions& options) {
  EP_ASSIGN_OR_RETURN(const Checked<ReportOptions> checked, Checked<ReportOptions>::Of(options));
  return Report(model, checked);
}

StatusOr<ReportResult> Report(const std::shared_ptr<const Model>& model, const Checked<ReportOptions>& checked) {
  const ReportOptions& options = *checked;
  EP_RETURN_IF_ERROR(CheckStepMicrobatches("--microbatches", options.pricing.microbatches, model->env().limits));
  EP_ASSIGN_OR_RETURN(PlanInputs inputs, PreparePlan(model, checked.PartOf(&ReportOptions::plan)));
  if (options.memory && !inputs.has_config()) {
    return Status::BadInput({}, "report --mode needs CONFIG: the activations and the KV cache come from the config");
  }
  EP_ASSIGN_OR_RETURN(planner::Plan plan, inputs.Build());

  std::optional<planner::MemoryReport> memory;
  std::string budget_label;
  Json cost = nullptr, pipeline = nullptr;
  std::string cost_note;
  std::vector<planner::Finding> context;
  if (options.memory) {  // a plan with errors too: its figures beside its findings
    // A pipelined training step's schedule needs enough microbatches to fill its stages: refused, as
    // `cost` refuses it.
    if (options.memory->mode == "train") {
      EP_RETURN_IF_ERROR(planner::CheckMicrobatches(inputs.pipeline, options.pricing.microbatches));
    }
    // Past a learned position table: exit 2 now; past a rotary bound: a finding, once the step is priced.
    EP_ASSIGN_OR_RETURN(context, ContextLengthFindings(inputs, *options.memory));
    EP_ASSIGN_OR_RETURN(const int64_t budget, MemoryBudget(*model, *options.memory, &budget_label));
    planner::CheckpointPolicy policy = planner::CheckpointPolicy::kNone;
    if (options.policy) {
      policy = *options.policy;
    } else if (options.memory->mode == "train") {
      EP_ASSIGN_OR_RETURN(policy, ConfigCheckpointPolicy(inputs.config()));
    }
    const StepSettings settings = SettingsOf(options, policy);
    EP_ASSIGN_OR_RETURN(memory,
                        BuildMemoryReport(inputs, plan, StepMemoryOptions(*options.memory, settings), budget, policy));
    cost_note = CostUnavailable(options);
    if (cost_note.empty() && plan.pipeline.pipelined() && options.memory->mode != "train") {
      cost_note = std::string("a pipelined serving step is not priced: ") + kServingWithPipeline;
    }
    if (cost_note.empty()) {
      // The timeline's size is known from the split and the microbatches: refused before the step is priced.
      EP_RETURN_IF_ERROR(CheckTimelineSize(plan.pipeline, options.pricing.microbatches, model->env().limits));
      EP_ASSIGN_OR_RETURN(const step::HardwareProfile* hardware, model->Hardware(options.memory->hardware));
      EP_RETURN_IF_ERROR(CheckPrecisionOn(PrecisionOf(options.pricing), *hardware));
      EP_ASSIGN_OR_RETURN(std::optional<StepEstimate> estimate,
                          EstimateLaidOutPlan(inputs, plan, *hardware, *options.memory, budget, settings, &*memory));
      if (estimate) {
        cost = CostJson(*estimate, settings, *hardware);
        if (estimate->pipeline) {
          EP_ASSIGN_OR_RETURN(pipeline, PipelineTimelineJson(*estimate->pipeline, plan.pipeline));
        }
      } else {
        cost_note = "the plan's errors leave a layout the step model cannot price";
      }
    }
  }
  plan.findings.insert(plan.findings.begin(), context.begin(), context.end());
  const Mesh& mesh = plan.mesh;
  const bool per_device = mesh.NumDevices() <= kMaxDrawnDevices;

  ReportResult result;
  Json& data = result.data;
  data = Json::object();
  data["model_type"] = model->model_type();
  data["easydel_version"] = model->easydel_version().name;
  data["mesh"] = MeshJson(mesh, inputs.mesh_source);
  Json rules = Json::object();
  rules["source"] = inputs.rules != nullptr ? inputs.rules->source : "";
  rules["count"] = inputs.rules != nullptr ? inputs.rules->rules.size() : 0;
  data["rules"] = rules;
  data["uneven"] = std::string(planner::UnevenModeName(plan.uneven));

  int64_t warnings = 0, notes = 0;
  for (const planner::Finding& f : plan.findings) {
    result.errors += f.severity == Severity::kError;
    warnings += f.severity == Severity::kWarning;
    notes += f.severity == Severity::kNote;
  }
  if (memory) result.fits = memory->fits;
  Json verdict = Json::object();
  verdict["errors"] = result.errors;
  verdict["warnings"] = warnings;
  verdict["notes"] = notes;
  verdict["fits"] = memory ? Json(memory->fits) : Json(nullptr);
  data["verdict"] = verdict;

  data["groups"] = GroupsJson(plan);
  data["tensors"] = TensorsJson(inputs, plan);
  const DeviceSummary summary = SummarizeDevices(plan.device_bytes);
  Json devices = Json::object();
  devices["drawn"] = per_device;
  devices["min"] = summary.min;
  devices["median"] = summary.median;
  devices["max"] = summary.max;
  devices["worst"] = summary.worst_device;
  devices["params"] = per_device ? Json(plan.device_bytes) : Json::array();
  if (!per_device) {
    std::vector<int64_t> totals = plan.device_bytes;
    if (memory && memory->devices.size() == totals.size()) {
      for (size_t d = 0; d < totals.size(); ++d) totals[d] = memory->devices[d].total;
    }
    devices["blocks"] = DeviceBlocksJson(totals);
  }
  data["devices"] = devices;
  data["memory"] = memory ? MemoryJson(*memory, budget_label, per_device) : Json(nullptr);
  data["cost"] = cost;
  data["cost_note"] = options.memory ? Json(cost_note) : Json(nullptr);
  data["pipeline"] = pipeline;
  // A pipelined plan without its timeline says why: no step, or cost_note's reason it was not priced.
  data["pipeline_note"] = nullptr;
  if (plan.pipeline.pipelined() && pipeline.is_null()) {
    data["pipeline_note"] =
        options.memory ? cost_note : "give --mode train, --batch, --seq and --hardware to draw the schedule's timeline";
  }
  data["suggest"] = nullptr;
  data["findings"] = FindingsJsonArray(plan.findings);
  return result;
}

ReportOptions CandidateReportOptions(const SuggestOptions& options, const Candidate& candidate) {
  ReportOptions out;
  out.plan = options.plan;
  out.plan.mesh.axes = candidate.MeshFlag();
  out.plan.mesh.dcn = candidate.DcnFlag();
  out.plan.rules = candidate.rules;
  if (candidate.Stages() > 1) {
    out.plan.pipeline.schedule = candidate.pp_schedule;
    out.plan.pipeline.virtual_stages = candidate.virtual_stages;
    out.plan.pipeline.supported = true;
  }
  out.memory = options.memory;
  if (options.memory.mode == "train") out.policy = candidate.policy;
  out.pricing = options.pricing;
  out.pricing.microbatches = candidate.microbatches;
  return out;
}

StatusOr<ReportResult> SuggestReport(const std::shared_ptr<const Model>& model, const SuggestOptions& options,
                                     const SuggestResult& result) {
  if (result.ranked.empty()) return Status::Internal("SuggestReport: no candidate to draw");
  EP_ASSIGN_OR_RETURN(ReportResult report, Report(model, CandidateReportOptions(options, result.ranked.front())));
  Json suggest = SuggestToJson(options, result);
  // Every feasible candidate as one point of the chart: [rank, step time (s), worst device (bytes)].
  Json points = Json::array();
  for (size_t i = 0; i < result.ranked.size(); ++i) {
    const StepEstimate& e = result.ranked[i].estimate;
    points.push_back(Json::array({i + 1, e.step.step_time_s, e.memory.Worst().total}));
  }
  suggest["points"] = std::move(points);
  Json front = Json::array();
  for (size_t i : result.pareto) front.push_back(i + 1);
  suggest["pareto_ranks"] = std::move(front);
  report.data["suggest"] = std::move(suggest);
  return report;
}

StatusOr<std::string> ReportPage(const Json& data, const Limits& limits) {
  std::string page = ReportPage(data);
  EP_RETURN_IF_ERROR(CheckOutputSize("the report page", page.size(), /*estimated=*/false, limits));
  return page;
}

std::string ReportPage(const Json& data) {
  RequireFinite(data);  // dump() would write a NaN or an infinity as null (core/emit.h)
  // A string that is not UTF-8 (a --rules or --hardware path: Linux file names are bytes) is written with
  // U+FFFD in place of each bad byte, as EmitJson writes it; the default handler throws instead.
  // Tensor names come from checkpoints and --tree files: escaped for every state of the HTML tokenizer
  // inside <script>, "<!--" and "<script" as well as "</" (core/script_json.h).
  const std::string safe = JsonForScriptElement(data.dump(-1, ' ', false, Json::error_handler_t::replace));
  std::string page(ReportTemplate());
  const std::string marker = "__EASYPLAN_DATA__";
  const size_t at = page.find(marker);
  EP_CHECK(at != std::string::npos, "the report template has no data marker");
  page.replace(at, marker.size(), safe);
  return page;
}

}  // namespace easyplan::api
