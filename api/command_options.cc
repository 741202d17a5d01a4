#include "api/command_options.h"

#include <functional>
#include <limits>

#include "core/did_you_mean.h"

namespace easyplan::api {
namespace {

using Setter = std::function<Status(CommandOptions&, const Json&)>;

struct Entry {
  std::string name;
  Setter set;
};

Status Expected(const std::string& name, const char* what, const Json& value) {
  return Status::BadInput({"", "/" + name}, "option " + name + ": expected " + what + ", found " +
                                                std::string(value.type_name()) + " " +
                                                value.dump(-1, ' ', false, Json::error_handler_t::replace));
}

Setter String(std::function<std::string&(CommandOptions&)> field, std::string name) {
  return [field, name](CommandOptions& o, const Json& v) -> Status {
    if (!v.is_string()) return Expected(name, "a string", v);
    field(o) = v.get<std::string>();
    return Status();
  };
}

Setter Bool(std::function<bool&(CommandOptions&)> field, std::string name) {
  return [field, name](CommandOptions& o, const Json& v) -> Status {
    if (!v.is_boolean()) return Expected(name, "true or false", v);
    field(o) = v.get<bool>();
    return Status();
  };
}

Status IntOf(const std::string& name, const Json& v, int64_t* out) {
  if (!v.is_number_integer()) return Expected(name, "an integer", v);
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return Expected(name, "an integer within int64", v);
  }
  *out = v.get<int64_t>();
  return Status();
}

Setter Int(std::function<int64_t&(CommandOptions&)> field, std::string name) {
  return [field, name](CommandOptions& o, const Json& v) -> Status { return IntOf(name, v, &field(o)); };
}

Setter OptionalInt(std::function<std::optional<int64_t>&(CommandOptions&)> field, std::string name) {
  return [field, name](CommandOptions& o, const Json& v) -> Status {
    int64_t value = 0;
    EP_RETURN_IF_ERROR(IntOf(name, v, &value));
    field(o) = value;
    return Status();
  };
}

// --mesh dp=1,fsdp=-1 as the CLI spells it, or {"dp": 1, "fsdp": -1} (axes in mesh order).
Setter Mesh(std::function<std::string&(CommandOptions&)> field, std::string name) {
  return [field, name](CommandOptions& o, const Json& v) -> Status {
    if (v.is_string()) {
      field(o) = v.get<std::string>();
      return Status();
    }
    if (!v.is_object()) return Expected(name, "\"dp=1,fsdp=-1,tp=8\" or {\"dp\": 1, \"fsdp\": -1, \"tp\": 8}", v);
    std::string text;
    for (const auto& [axis, size] : v.items()) {
      if (!size.is_number_integer()) return Expected(name + "." + axis, "an integer axis size", size);
      text += (text.empty() ? "" : ",") + axis + "=" + std::to_string(size.get<int64_t>());
    }
    field(o) = text;
    return Status();
  };
}

// --set KEY=VALUE...: a list of "KEY=VALUE" strings, or {"KEY": value} (values as JSON).
Setter Sets() {
  return [](CommandOptions& o, const Json& v) -> Status {
    std::vector<std::string>& sets = o.plan.config.sets;
    if (v.is_string()) {
      sets.push_back(v.get<std::string>());
      return Status();
    }
    if (v.is_object()) {
      for (const auto& [key, value] : v.items()) sets.push_back(key + "=" + value.dump());
      return Status();
    }
    if (!v.is_array()) return Expected("set", "[\"KEY=VALUE\", ...] or {\"KEY\": value}", v);
    for (const Json& item : v) {
      if (!item.is_string()) return Expected("set", "\"KEY=VALUE\" strings", item);
      sets.push_back(item.get<std::string>());
    }
    return Status();
  };
}

void AddConfig(std::vector<Entry>& e) {
  e.push_back(
      {"defaults", String([](CommandOptions& o) -> std::string& { return o.plan.config.defaults; }, "defaults")});
  e.push_back(
      {"overrides", String([](CommandOptions& o) -> std::string& { return o.plan.config.overrides; }, "overrides")});
  e.push_back({"set", Sets()});
  e.push_back(
      {"devices",
       OptionalInt([](CommandOptions& o) -> std::optional<int64_t>& { return o.plan.config.devices; }, "devices")});
  e.push_back({"strict", Bool([](CommandOptions& o) -> bool& { return o.plan.config.strict; }, "strict")});
  e.push_back({"schemas_dir",
               String([](CommandOptions& o) -> std::string& { return o.plan.config.schemas_dir; }, "schemas_dir")});
}

void AddPlan(std::vector<Entry>& e) {
  e.push_back({"rules", String([](CommandOptions& o) -> std::string& { return o.plan.rules; }, "rules")});
  e.push_back({"mesh", Mesh([](CommandOptions& o) -> std::string& { return o.plan.mesh; }, "mesh")});
  e.push_back({"dcn", Mesh([](CommandOptions& o) -> std::string& { return o.plan.dcn; }, "dcn")});
  e.push_back({"uneven", String([](CommandOptions& o) -> std::string& { return o.plan.uneven; }, "uneven")});
  e.push_back({"layout", [](CommandOptions& o, const Json& v) -> Status {
                 EP_RETURN_IF_ERROR(
                     String([](CommandOptions& p) -> std::string& { return p.plan.layout; }, "layout")(o, v));
                 o.layout_given = true;
                 return Status();
               }});
  e.push_back({"tree", String([](CommandOptions& o) -> std::string& { return o.plan.tree; }, "tree")});
  e.push_back({"from", String([](CommandOptions& o) -> std::string& { return o.plan.from; }, "from")});
  e.push_back({"dtype", String([](CommandOptions& o) -> std::string& { return o.plan.dtype; }, "dtype")});
  e.push_back({"max_tensors", Int([](CommandOptions& o) -> int64_t& { return o.plan.max_tensors; }, "max_tensors")});
  e.push_back({"max_devices", Int([](CommandOptions& o) -> int64_t& { return o.plan.max_devices; }, "max_devices")});
  e.push_back({"max_rules", Int([](CommandOptions& o) -> int64_t& { return o.plan.max_rules; }, "max_rules")});
}

// --mode/--batch/--seq of validate and activations.
void AddRuntime(std::vector<Entry>& e) {
  e.push_back({"mode", String([](CommandOptions& o) -> std::string& { return o.activations.mode; }, "mode")});
  e.push_back({"batch",
               OptionalInt([](CommandOptions& o) -> std::optional<int64_t>& { return o.activations.batch; }, "batch")});
  e.push_back(
      {"seq", OptionalInt([](CommandOptions& o) -> std::optional<int64_t>& { return o.activations.seq; }, "seq")});
}

void AddStepState(std::vector<Entry>& e) {
  e.push_back(
      {"max_length",
       OptionalInt([](CommandOptions& o) -> std::optional<int64_t>& { return o.memory.max_length; }, "max_length")});
  e.push_back({"optimizer", String([](CommandOptions& o) -> std::string& { return o.memory.optimizer; }, "optimizer")});
  e.push_back(
      {"grad_dtype", String([](CommandOptions& o) -> std::string& { return o.memory.grad_dtype; }, "grad_dtype")});
  e.push_back({"opt_state_dtype",
               String([](CommandOptions& o) -> std::string& { return o.memory.opt_state_dtype; }, "opt_state_dtype")});
  e.push_back(
      {"master_weights", Bool([](CommandOptions& o) -> bool& { return o.memory.master_weights; }, "master_weights")});
}

StatusOr<std::vector<Entry>> EntriesOf(const std::string& command) {
  std::vector<Entry> e;
  AddConfig(e);
  if (command == "model") {  // a Model's own options: the config ones and the limits of its Environment
    e.push_back({"max_layers",
                 OptionalInt([](CommandOptions& o) -> std::optional<int64_t>& { return o.max_layers; }, "max_layers")});
    e.push_back({"max_output_bytes",
                 OptionalInt([](CommandOptions& o) -> std::optional<int64_t>& { return o.max_output_bytes; },
                             "max_output_bytes")});
    return e;
  }
  if (command == "resolve") {
    e.push_back({"provenance", Bool([](CommandOptions& o) -> bool& { return o.provenance; }, "provenance")});
  } else if (command == "tree") {
    e.push_back({"layout", String([](CommandOptions& o) -> std::string& { return o.tree.layout; }, "layout")});
    e.push_back({"dtype", String([](CommandOptions& o) -> std::string& { return o.tree.dtype; }, "dtype")});
    e.push_back({"include_buffers",
                 Bool([](CommandOptions& o) -> bool& { return o.tree.include_buffers; }, "include_buffers")});
    e.push_back({"tree", String([](CommandOptions& o) -> std::string& { return o.tree.tree; }, "tree")});
    e.push_back({"from", String([](CommandOptions& o) -> std::string& { return o.tree.from; }, "from")});
    e.push_back({"max_tensors", Int([](CommandOptions& o) -> int64_t& { return o.tree.max_tensors; }, "max_tensors")});
    e.push_back({"diff", Bool([](CommandOptions& o) -> bool& { return o.diff; }, "diff")});
  } else if (command == "activations") {
    e.push_back({"mesh", Mesh([](CommandOptions& o) -> std::string& { return o.mesh.mesh; }, "mesh")});
    e.push_back({"dcn", Mesh([](CommandOptions& o) -> std::string& { return o.mesh.dcn; }, "dcn")});
    e.push_back({"max_devices", Int([](CommandOptions& o) -> int64_t& { return o.mesh.max_devices; }, "max_devices")});
    AddRuntime(e);
    e.push_back(
        {"layout", String([](CommandOptions& o) -> std::string& { return o.activations.attention_layout; }, "layout")});
    e.push_back({"qkv_mni", Bool([](CommandOptions& o) -> bool& { return o.activations.qkv_mni; }, "qkv_mni")});
    e.push_back({"softmax_aux_ndim", [](CommandOptions& o, const Json& v) -> Status {
                   int64_t value = 0;
                   EP_RETURN_IF_ERROR(IntOf("softmax_aux_ndim", v, &value));
                   if (value < std::numeric_limits<int>::min() || value > std::numeric_limits<int>::max()) {
                     return Expected("softmax_aux_ndim", "a small integer", v);
                   }
                   o.activations.softmax_aux_ndim = static_cast<int>(value);
                   return Status();
                 }});
    e.push_back({"dtype", String([](CommandOptions& o) -> std::string& { return o.activations.dtype; }, "dtype")});
    e.push_back({"kernel", String([](CommandOptions& o) -> std::string& { return o.activations.kernel; }, "kernel")});
    e.push_back({"cache", String([](CommandOptions& o) -> std::string& { return o.activations.cache; }, "cache")});
    e.push_back(
        {"page_size", OptionalInt([](CommandOptions& o) -> std::optional<int64_t>& { return o.activations.page_size; },
                                  "page_size")});
    e.push_back(
        {"num_pages", OptionalInt([](CommandOptions& o) -> std::optional<int64_t>& { return o.activations.num_pages; },
                                  "num_pages")});
    e.push_back({"cache_version", String([](CommandOptions& o) -> std::string& { return o.activations.cache_version; },
                                         "cache_version")});
  } else if (command == "plan" || command == "explain" || command == "validate" || command == "memory" ||
             command == "export" || command == "check") {
    AddPlan(e);
    if (command == "plan") {
      e.push_back({"rank", OptionalInt([](CommandOptions& o) -> std::optional<int64_t>& { return o.rank; }, "rank")});
      e.push_back({"summary", Bool([](CommandOptions& o) -> bool& { return o.summary; }, "summary")});
    } else if (command == "explain") {
      e.push_back({"pattern", String([](CommandOptions& o) -> std::string& { return o.pattern; }, "pattern")});
    } else if (command == "validate") {
      e.push_back({"max_memory", String([](CommandOptions& o) -> std::string& { return o.max_memory; }, "max_memory")});
      e.push_back({"hardware", String([](CommandOptions& o) -> std::string& { return o.hardware; }, "hardware")});
      AddRuntime(e);
      AddStepState(e);
    } else if (command == "memory") {
      e.push_back({"mode", String([](CommandOptions& o) -> std::string& { return o.memory.mode; }, "mode")});
      e.push_back(
          {"batch", OptionalInt([](CommandOptions& o) -> std::optional<int64_t>& { return o.memory.batch; }, "batch")});
      e.push_back(
          {"seq", OptionalInt([](CommandOptions& o) -> std::optional<int64_t>& { return o.memory.seq; }, "seq")});
      AddStepState(e);
      e.push_back(
          {"max_memory", String([](CommandOptions& o) -> std::string& { return o.memory.max_memory; }, "max_memory")});
      e.push_back(
          {"hardware", String([](CommandOptions& o) -> std::string& { return o.memory.hardware; }, "hardware")});
    } else if (command == "export") {
      e.push_back({"to", String([](CommandOptions& o) -> std::string& { return o.to; }, "to")});
      e.push_back({"format", String([](CommandOptions& o) -> std::string& { return o.format; }, "format")});
    } else if (command == "check") {
      e.push_back({"level", String([](CommandOptions& o) -> std::string& { return o.level; }, "level")});
      e.push_back({"seed", [](CommandOptions& o, const Json& v) -> Status {
                     if (!v.is_number_integer() ||
                         (v.is_number_integer() && !v.is_number_unsigned() && v.get<int64_t>() < 0)) {
                       return Expected("seed", "a non-negative integer", v);
                     }
                     o.seed = v.get<uint64_t>();
                     return Status();
                   }});
      e.push_back({"memory", Bool([](CommandOptions& o) -> bool& { return o.check_memory; }, "memory")});
      e.push_back({"max_numeric_devices",
                   Int([](CommandOptions& o) -> int64_t& { return o.max_numeric_devices; }, "max_numeric_devices")});
    }
  } else if (command == "cost" || command == "suggest" || command == "report") {
    if (command == "cost" || command == "report") {
      AddPlan(e);
      e.push_back({"microbatches", Int([](CommandOptions& o) -> int64_t& { return o.microbatches; }, "microbatches")});
    } else {
      e.push_back({"uneven", String([](CommandOptions& o) -> std::string& { return o.plan.uneven; }, "uneven")});
      e.push_back({"rules", [](CommandOptions& o, const Json& v) -> Status {
                     if (v.is_string()) {
                       o.rule_files.push_back(v.get<std::string>());
                       return Status();
                     }
                     if (!v.is_array()) return Expected("rules", "a rule file or a list of rule files", v);
                     for (const Json& item : v) {
                       if (!item.is_string()) return Expected("rules", "rule file paths", item);
                       o.rule_files.push_back(item.get<std::string>());
                     }
                     return Status();
                   }});
      e.push_back({"slices", Int([](CommandOptions& o) -> int64_t& { return o.slices; }, "slices")});
      e.push_back({"top", Int([](CommandOptions& o) -> int64_t& { return o.top; }, "top")});
      e.push_back({"max_microbatches",
                   Int([](CommandOptions& o) -> int64_t& { return o.max_microbatches; }, "max_microbatches")});
      e.push_back({"report", Bool([](CommandOptions& o) -> bool& { return o.suggest_report; }, "report")});
    }
    e.push_back({"mode", String([](CommandOptions& o) -> std::string& { return o.memory.mode; }, "mode")});
    e.push_back(
        {"batch", OptionalInt([](CommandOptions& o) -> std::optional<int64_t>& { return o.memory.batch; }, "batch")});
    e.push_back({"seq", OptionalInt([](CommandOptions& o) -> std::optional<int64_t>& { return o.memory.seq; }, "seq")});
    AddStepState(e);
    e.push_back(
        {"max_memory", String([](CommandOptions& o) -> std::string& { return o.memory.max_memory; }, "max_memory")});
    e.push_back({"hardware", String([](CommandOptions& o) -> std::string& { return o.memory.hardware; }, "hardware")});
    e.push_back({"decode", Bool([](CommandOptions& o) -> bool& { return o.decode; }, "decode")});
    e.push_back({"precision", String([](CommandOptions& o) -> std::string& { return o.precision; }, "precision")});
  } else {
    std::string message = "'" + command + "' is not an easyplan command";
    if (auto suggestion = SuggestClosest(command, CommandNames())) message += " (did you mean '" + *suggestion + "'?)";
    return Status::BadInput({}, message, {"commands: " + JoinQuoted(CommandNames())});
  }
  return e;
}

// Names an earlier easyplan used, and what they are now.
std::optional<std::string> RenamedOption(const std::string& name) {
  if (name == "memory_per_device") return std::string("max_memory");
  if (name == "device") return std::string("rank (the device whose view is shown) or hardware (the accelerator)");
  return std::nullopt;
}

}  // namespace

Status CommandOptions::ApplyLimits(Limits* limits) const {
  for (const auto& [name, value] :
       {std::pair{"max_layers", max_layers}, std::pair{"max_output_bytes", max_output_bytes}}) {
    if (value && *value < 1) {
      return Status::BadInput({"", std::string("/") + name},
                              std::string("option ") + name + " must be at least 1, found " + std::to_string(*value));
    }
  }
  if (max_layers) limits->max_layers = *max_layers;
  if (max_output_bytes) limits->max_output_bytes = static_cast<size_t>(*max_output_bytes);
  return Status();
}

ValidateOptions CommandOptions::Validate() const {
  ValidateOptions options;
  options.plan = plan;
  options.max_memory = max_memory;
  options.hardware = hardware;
  options.activations = activations;
  options.step_state = memory;
  return options;
}

CostOptions CommandOptions::Cost() const {
  CostOptions options;
  options.plan = plan;
  options.memory = memory;
  options.microbatches = microbatches;
  options.decode = decode;
  options.precision = precision;
  return options;
}

ReportOptions CommandOptions::Report() const {
  ReportOptions options;
  options.plan = plan;
  SetReportStep(memory, options);
  options.microbatches = microbatches;
  options.decode = decode;
  options.precision = precision;
  return options;
}

SuggestOptions CommandOptions::Suggest() const {
  SuggestOptions options;
  options.plan = plan;
  options.memory = memory;
  options.slices = slices;
  options.top = top;
  options.max_microbatches = max_microbatches;
  options.decode = decode;
  options.precision = precision;
  options.rules = rule_files;
  return options;
}

const std::vector<std::string>& CommandNames() {
  static const std::vector<std::string> names = {"resolve", "tree",   "plan",  "explain", "validate", "activations",
                                                 "memory",  "export", "check", "cost",    "suggest",  "report"};
  return names;
}

StatusOr<std::vector<std::string>> OptionNames(const std::string& command) {
  EP_ASSIGN_OR_RETURN(std::vector<Entry> entries, EntriesOf(command));
  std::vector<std::string> names;
  for (const Entry& entry : entries) names.push_back(entry.name);
  return names;
}

Status ApplyOptions(const std::string& command, const Json& options, CommandOptions* out) {
  if (!options.is_object()) {  // the Python module passes whatever JSON text it is given (fuzz: python_options)
    return Status::BadInput(
        {}, std::string("options must be a JSON object of option names and values, found ") + JsonTypeName(options));
  }
  EP_ASSIGN_OR_RETURN(std::vector<Entry> entries, EntriesOf(command));
  for (const auto& [name, value] : options.items()) {
    if (value.is_null()) continue;
    const Entry* found = nullptr;
    for (const Entry& entry : entries) {
      if (entry.name == name) found = &entry;
    }
    if (found == nullptr && RenamedOption(name)) {
      return Status::BadInput({}, command + "() got '" + name + "', which is now '" + *RenamedOption(name) + "'",
                              {"one name per concept in every command, the CLI and the Python module"});
    }
    if (found == nullptr) {
      std::vector<std::string> names;
      for (const Entry& entry : entries) names.push_back(entry.name);
      std::string message = command + "() got an unknown option '" + name + "'";
      if (auto suggestion = SuggestClosest(name, names)) message += " (did you mean '" + *suggestion + "'?)";
      return Status::BadInput({}, message, {"options of " + command + ": " + JoinQuoted(names)});
    }
    EP_RETURN_IF_ERROR(found->set(*out, value));
  }
  // The tree and activations commands read their own copies of what the plan options also hold.
  out->mesh.devices = out->plan.config.devices;
  // As the CLI: memory, cost and suggest step a training step unless mode says otherwise.
  if (out->memory.mode.empty() && (command == "memory" || command == "cost" || command == "suggest")) {
    out->memory.mode = "train";
  }
  return Status();
}

}  // namespace easyplan::api
