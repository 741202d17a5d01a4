#include "api/memory_json.h"

#include <fmt/format.h>

#include <algorithm>

#include "api/findings_json.h"
#include "api/json_text.h"
#include "api/plan_json.h"

namespace easyplan::api {
namespace {

std::string DeviceJson(const planner::DeviceMemory& d) {
  return fmt::format(
      "{{\"id\": {}, \"params\": {}, \"grads\": {}, \"optimizer\": {}, \"activations\": {}, \"kv_cache\": {}, "
      "\"transient\": {}, \"total\": {}}}",
      d.id, d.params, d.grads, d.optimizer, d.activations, d.kv_cache, d.transient, d.total);
}

}  // namespace

Json DeviceMemoryToJson(const planner::DeviceMemory& d) {
  Json out = Json::object();
  out["id"] = d.id;
  out["params"] = d.params;
  out["grads"] = d.grads;
  out["optimizer"] = d.optimizer;
  out["activations"] = d.activations;
  out["kv_cache"] = d.kv_cache;
  out["transient"] = d.transient;
  out["total"] = d.total;
  return out;
}

std::string MemoryToJsonText(const planner::MemoryReport& report, const std::string& hardware,
                             const std::vector<planner::Finding>* findings, const std::string& easydel_version) {
  std::string out = fmt::format("{{\n  \"mode\": \"{}\",\n", ModeName(report.mode));
  if (!easydel_version.empty()) out += "  \"easydel_version\": " + Quoted(easydel_version) + ",\n";
  out += "  \"devices\": [\n";
  for (size_t i = 0; i < report.devices.size(); ++i) {
    out += "    " + DeviceJson(report.devices[i]) + (i + 1 < report.devices.size() ? ",\n" : "\n");
  }
  // The budget, named for what it is (issue 46); its old key stays for a while, said so in the output.
  out += fmt::format("  ],\n  \"worst\": {},\n  \"budget_per_device\": {},\n  \"memory_per_device\": {},\n",
                     DeviceJson(report.Worst()), report.budget_per_device, report.budget_per_device);
  out += fmt::format("  \"deprecated_keys\": {{\"memory_per_device\": {}}},\n", Quoted(kMemoryPerDeviceRenamed));
  if (!hardware.empty())
    out += "  \"hardware\": " + Json(hardware).dump(-1, ' ', false, Json::error_handler_t::replace) + ",\n";
  if (!report.stages.empty()) {
    // The pipeline's stages, the worst first: each stage's layers, the microbatches its schedule keeps
    // and its worst device.
    Json pipeline = PipelineSplitJson(report.pipeline);
    pipeline["microbatches"] = report.options.microbatches;
    Json stages = Json::array();
    for (const planner::StageMemory& s : report.stages) {
      Json stage = Json::object();
      stage["stage"] = s.stage;
      stage["layers"] = s.layers;
      stage["in_flight_microbatches"] = s.in_flight;
      stage["worst"] = DeviceMemoryToJson(s.worst);
      stages.push_back(std::move(stage));
    }
    pipeline["per_stage"] = std::move(stages);
    out += "  \"pipeline\": " + pipeline.dump(-1, ' ', false, Json::error_handler_t::replace) + ",\n";
  }
  out += fmt::format("  \"fits\": {}", report.fits ? "true" : "false");
  const bool errors = findings != nullptr && std::any_of(findings->begin(), findings->end(),
                                                         [](const auto& f) { return f.severity == Severity::kError; });
  if (errors) {
    out += ",\n  \"ok\": false,\n  \"findings\": [\n";
    const Json array = FindingsJsonArray(*findings);
    for (size_t i = 0; i < array.size(); ++i) {
      out += "    " + array[i].dump(-1, ' ', false, Json::error_handler_t::replace) +
             (i + 1 < array.size() ? ",\n" : "\n");
    }
    out += "  ]";
  }
  out += "\n}\n";
  return out;
}

}  // namespace easyplan::api
