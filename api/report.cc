#include "api/report.h"

#include <cctype>
#include <map>
#include <tuple>

#include "api/memory_json.h"
#include "api/memory_pipeline.h"
#include "api/plan_json.h"
#include "api/plan_pipeline.h"
#include "planner/findings.h"
#include "planner/layout.h"

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
  out["mode"] = std::string(planner::MemoryModeName(report.mode));
  out["budget"] = report.memory_per_device;
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

}  // namespace

StatusOr<Json> ReportData(const std::shared_ptr<const Model>& model, const ReportOptions& options) {
  std::optional<PlanInputs> inputs;
  std::optional<planner::Plan> plan;
  std::optional<planner::MemoryReport> memory;
  std::string budget_label;
  if (options.memory) {
    EP_ASSIGN_OR_RETURN(MemoryResult result, Memory(model, options.plan, *options.memory));
    inputs = std::move(result.inputs);
    plan = std::move(result.plan);
    memory = std::move(result.report);
    budget_label = result.budget_label;
  } else {
    EP_ASSIGN_OR_RETURN(PlanResult result, PlanModel(model, options.plan));
    inputs = std::move(result.inputs);
    plan = std::move(result.plan);
  }
  const Mesh& mesh = plan->mesh;
  const bool per_device = mesh.NumDevices() <= kMaxDrawnDevices;

  Json data = Json::object();
  data["model_type"] = model->model_type();
  data["mesh"] = MeshJson(mesh, inputs->mesh_source);
  Json rules = Json::object();
  rules["source"] = inputs->rules != nullptr ? inputs->rules->source : "";
  rules["count"] = inputs->rules != nullptr ? inputs->rules->rules.size() : 0;
  data["rules"] = rules;
  data["uneven"] = std::string(planner::UnevenModeName(plan->uneven));

  int64_t errors = 0, warnings = 0, notes = 0;
  for (const planner::Finding& f : plan->findings) {
    errors += f.severity == Severity::kError;
    warnings += f.severity == Severity::kWarning;
    notes += f.severity == Severity::kNote;
  }
  Json verdict = Json::object();
  verdict["errors"] = errors;
  verdict["warnings"] = warnings;
  verdict["notes"] = notes;
  verdict["fits"] = memory ? Json(memory->fits) : Json(nullptr);
  data["verdict"] = verdict;

  data["groups"] = GroupsJson(*plan);
  data["tensors"] = TensorsJson(*inputs, *plan);
  const DeviceSummary summary = SummarizeDevices(plan->device_bytes);
  Json devices = Json::object();
  devices["drawn"] = per_device;
  devices["min"] = summary.min;
  devices["median"] = summary.median;
  devices["max"] = summary.max;
  devices["worst"] = summary.worst_device;
  devices["params"] = per_device ? Json(plan->device_bytes) : Json::array();
  data["devices"] = devices;
  data["memory"] = memory ? MemoryJson(*memory, budget_label, per_device) : Json(nullptr);
  data["findings"] = FindingsJsonArray(plan->findings);
  return data;
}

std::string ReportPage(const Json& data) {
  // "</" inside a <script> element would end it early: JSON allows the escaped "<\/" instead.
  std::string json = data.dump();
  std::string safe;
  safe.reserve(json.size());
  for (size_t i = 0; i < json.size(); ++i) {
    if (json[i] == '<' && i + 1 < json.size() && json[i + 1] == '/') {
      safe += "<\\/";
      ++i;
    } else {
      safe += json[i];
    }
  }
  std::string page(ReportTemplate());
  const std::string marker = "__EASYPLAN_DATA__";
  const size_t at = page.find(marker);
  EP_CHECK(at != std::string::npos, "the report template has no data marker");
  page.replace(at, marker.size(), safe);
  return page;
}

}  // namespace easyplan::api
