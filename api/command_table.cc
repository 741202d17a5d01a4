#include "api/command_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "api/choices.h"
#include "api/commands.h"
#include "api/explain.h"
#include "api/findings_json.h"
#include "api/plan_inputs.h"
#include "api/plan_json.h"
#include "core/byte_size.h"
#include "core/did_you_mean.h"
#include "core/dtype.h"
#include "core/enum_table.h"
#include "core/json_parse.h"

namespace easyplan::api {
namespace {

std::string FlagOf(std::string_view name) {
  std::string flag = "--" + std::string(name);
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

bool Contains(const std::vector<std::string_view>& list, std::string_view item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

bool TakesOption(const CommandSpec& command, const OptionSpec& option) {
  if (Contains(command.options, option.id)) return true;
  if (option.group == OptionGroup::kCommand || option.group == OptionGroup::kOutput) return false;
  return std::find(command.groups.begin(), command.groups.end(), option.group) != command.groups.end();
}

// The value a field holds, as JSON: null for "not given" (an empty optional, string or list).
Json FieldJson(const FieldRef& field) {
  return std::visit(
      [](const auto* value) -> Json {
        using T = std::decay_t<decltype(*value)>;
        if constexpr (std::is_same_v<T, std::string>) {
          return value->empty() ? Json() : Json(*value);
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          return value->empty() ? Json() : Json(*value);
        } else if constexpr (std::is_same_v<T, std::optional<int64_t>> || std::is_same_v<T, std::optional<double>> ||
                             std::is_same_v<T, std::optional<int>>) {
          return value->has_value() ? Json(**value) : Json();
        } else {
          return Json(*value);
        }
      },
      field);
}

// Writes a value ApplyOptions normalised for the option's type into its field. Lists grow: --set and
// suggest's --rules add to what is there (a Model's own --set values come first).
void SetField(const FieldRef& field, const Json& value) {
  std::visit(
      [&value](auto* target) {
        using T = std::decay_t<decltype(*target)>;
        if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          for (const Json& item : value) target->push_back(item.get<std::string>());
        } else if constexpr (std::is_same_v<T, std::optional<int>>) {
          *target = static_cast<int>(value.get<int64_t>());
        } else if constexpr (std::is_same_v<T, std::optional<int64_t>>) {
          *target = value.get<int64_t>();
        } else if constexpr (std::is_same_v<T, std::optional<double>>) {
          *target = value.get<double>();
        } else {
          *target = value.get<T>();
        }
      },
      field);
}

Status Expected(std::string_view name, const char* what, const Json& value) {
  return Status::BadInput({"", "/" + std::string(name)},
                          "option " + std::string(name) + ": expected " + what + ", found " +
                              std::string(value.type_name()) + " " +
                              value.dump(-1, ' ', false, Json::error_handler_t::replace));
}

// A Python value as the option's type: the JSON the CLI's text would give (ParseOptionText).
StatusOr<Json> Normalize(const OptionSpec& spec, const Json& v) {
  const std::string_view name = spec.name;
  switch (spec.type) {
    case OptionType::kFlag:
      if (!v.is_boolean()) return Expected(name, "true or false", v);
      return v;
    case OptionType::kString:
      if (!v.is_string()) return Expected(name, "a string", v);
      return v;
    case OptionType::kInt:
      if (!v.is_number_integer()) return Expected(name, "an integer", v);
      if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return Expected(name, "an integer within int64", v);
      }
      return Json(v.get<int64_t>());
    case OptionType::kUnsigned:
      if (!v.is_number_integer() || (!v.is_number_unsigned() && v.get<int64_t>() < 0)) {
        return Expected(name, "a non-negative integer", v);
      }
      return Json(v.get<uint64_t>());
    case OptionType::kNumber:
      if (!v.is_number()) return Expected(name, "a number", v);
      return Json(v.get<double>());
    case OptionType::kStrings: {
      if (v.is_string()) return Json::array({v});
      if (!v.is_array()) return Expected(name, "a string or a list of strings", v);
      for (const Json& item : v) {
        if (!item.is_string()) return Expected(name, "strings", item);
      }
      return v;
    }
    case OptionType::kMesh: {
      if (v.is_string()) return v;
      if (!v.is_object()) return Expected(name, "\"dp=1,fsdp=-1,tp=8\" or {\"dp\": 1, \"fsdp\": -1, \"tp\": 8}", v);
      std::string text;
      for (const auto& [axis, size] : v.items()) {
        if (!size.is_number_integer()) {
          return Expected(std::string(name) + "." + axis, "an integer axis size", size);
        }
        text += (text.empty() ? "" : ",") + axis + "=" + std::to_string(size.get<int64_t>());
      }
      return Json(text);
    }
    case OptionType::kSets: {
      if (v.is_string()) return Json::array({v});
      Json sets = Json::array();
      if (v.is_object()) {
        for (const auto& [key, value] : v.items()) sets.push_back(key + "=" + value.dump());
        return sets;
      }
      if (!v.is_array()) return Expected(name, "[\"KEY=VALUE\", ...] or {\"KEY\": value}", v);
      for (const Json& item : v) {
        if (!item.is_string()) return Expected(name, "\"KEY=VALUE\" strings", item);
      }
      return v;
    }
  }
  return Status::Internal("unknown option type");
}

Status CheckDTypeName(const std::string& flag, const std::string& value, bool empty_is_default) {
  if (value.empty()) {
    if (empty_is_default) return Status();
    return Status::BadInput({}, flag + " is empty: expected a dtype name");
  }
  if (ParseDType(value)) return Status();
  std::vector<std::string> names;
  for (std::string_view name : AllDTypeNames()) names.emplace_back(name);
  std::vector<std::string> notes;
  if (auto suggestion = SuggestClosest(value, names)) notes.push_back("did you mean '" + *suggestion + "'?");
  return Status::BadInput({}, flag + " '" + value + "' is not a dtype name", notes);
}

const OptionVariant* VariantFor(const OptionSpec& spec, std::string_view command) {
  for (const OptionVariant& variant : spec.variants) {
    if (Contains(variant.commands, command)) return &variant;
  }
  return nullptr;
}

// "a (default), b or c": the choices in order, the default marked.
std::string ChoiceList(const std::vector<std::string_view>& choices, const Json& default_value) {
  std::string out;
  for (size_t i = 0; i < choices.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + std::string(choices[i]);
    if (default_value.is_string() && default_value.get<std::string>() == choices[i]) out += " (default)";
  }
  return out;
}

CommandOption Resolve(const OptionSpec& spec, std::string_view command) {
  CommandOption option;
  option.spec = &spec;
  option.help = spec.help;
  option.choices = spec.choices;
  option.surface = spec.surface;
  option.cli_only = spec.cli_only;
  option.group = spec.group;
  CommandOptions defaults;
  option.default_value = FieldJson(spec.field(defaults));
  if (const OptionVariant* variant = VariantFor(spec, command)) {
    if (variant->help) option.help = *variant->help;
    if (!variant->choices.empty()) option.choices = variant->choices;
    if (variant->surface) option.surface = *variant->surface;
    if (!variant->cli_only.empty()) option.cli_only = variant->cli_only;
    if (option.surface != Surface::kCli) option.cli_only = {};  // report's output: Python takes it
    if (variant->group) option.group = *variant->group;
    option.required = variant->required;
    if (variant->default_value) {
      StatusOr<Json> value = ParseOptionText(spec.type, std::string(*variant->default_value));
      option.default_value = value.ok() && !(value->is_string() && value->get<std::string>().empty()) ? *value : Json();
    }
  }
  if (const size_t at = option.help.find("{choices}"); at != std::string::npos) {
    option.help.replace(at, 9, ChoiceList(option.choices, option.default_value));
  }
  return option;
}

Status CheckValue(const CommandOption& option, const Json& value, std::string_view command) {
  const OptionSpec& spec = *option.spec;
  const std::string flag = FlagOf(spec.name);
  switch (spec.check) {
    case CheckKind::kNone:
      return Status();
    case CheckKind::kRange: {
      const int64_t v = value.get<int64_t>();
      if (v >= spec.min && v <= spec.max) return Status();
      if (spec.max == std::numeric_limits<int64_t>::max()) {
        return Status::BadInput({}, fmt::format("{} must be at least {}, found {}", flag, spec.min, v));
      }
      return Status::BadInput({}, fmt::format("{} must be between {} and {}, found {}", flag, spec.min, spec.max, v));
    }
    case CheckKind::kChoice: {
      std::vector<std::string> choices(option.choices.begin(), option.choices.end());
      return CheckChoice(flag, value.get<std::string>(), choices);
    }
    case CheckKind::kMode: {
      std::vector<std::string> choices(option.choices.begin(), option.choices.end());
      return CheckMode(std::string(command), value.get<std::string>(), choices);
    }
    case CheckKind::kDType:
      return CheckDTypeName(flag, value.get<std::string>(), option.default_value.is_null());
    case CheckKind::kByteSize: {
      EP_ASSIGN_OR_RETURN(const int64_t bytes, ParseByteSize(value.get<std::string>(), flag));
      if (bytes < 1) return Status::BadInput({}, flag + " must be more than 0 bytes");
      return Status();
    }
    case CheckKind::kPositive: {
      const double v = value.get<double>();
      if (std::isfinite(v) && v > 0) return Status();
      return Status::BadInput({}, fmt::format("{} must be a positive number, found {}", flag, v));
    }
    case CheckKind::kSeconds: {
      const double v = value.get<double>();
      if (v >= static_cast<double>(spec.min) && v <= 86400) return Status();
      return Status::BadInput(
          {}, fmt::format("{} must be at least {} and at most 86400 seconds (a day), found {}", flag, spec.min, v));
    }
    case CheckKind::kPath: {
      if (!value.get<std::string>().empty()) return Status();
      const std::string shown = spec.short_flag.empty() ? flag : std::string(spec.short_flag);
      return Status::BadInput({}, fmt::format("{} '' names no file", shown),
                              {fmt::format("give {} a path, or '-' for standard output", shown)});
    }
    case CheckKind::kRegex:
      return CheckExplainPattern(value.get<std::string>());
    case CheckKind::kRetired: {
      if (value.is_boolean() && !value.get<bool>()) return Status();
      std::vector<std::string> notes;
      if (!spec.retired_note.empty()) notes.emplace_back(spec.retired_note);
      return Status::BadInput({}, std::string(spec.retired), notes);
    }
  }
  return Status::Internal("unknown option check");
}

Json OptionJson(const CommandOption& option) {
  static const char* const kTypes[] = {"flag", "string", "int", "unsigned", "number", "strings", "mesh", "sets"};
  static const char* const kGroups[] = {"limits",     "config",   "tree",    "rules",    "mesh",   "step",
                                        "step_state", "hardware", "pricing", "pipeline", "output", "command"};
  static const char* const kSurfaces[] = {"both", "cli", "python"};
  const OptionSpec& spec = *option.spec;
  Json out = Json::object();
  out["name"] = spec.name;
  out["flag"] = option.Flag();
  out["type"] = kTypes[static_cast<int>(spec.type)];
  out["group"] = kGroups[static_cast<int>(option.group)];
  out["help"] = std::string(option.help);
  out["cli_help"] = option.HelpText();
  out["default"] = option.default_value;
  Json choices = Json::array();
  for (std::string_view choice : option.choices) choices.push_back(choice);
  out["choices"] = choices;
  out["surface"] = kSurfaces[static_cast<int>(option.surface)];
  out["cli_only"] = option.cli_only;
  out["positional"] = spec.positional;
  out["required"] = option.required;
  out["hidden"] = spec.hidden;
  out["python_type"] = spec.python_type;
  return out;
}

}  // namespace

std::string CommandOption::Flag() const {
  if (spec->positional) return spec->name == "config" ? "CONFIG" : "PATTERN";
  const std::string flag = FlagOf(spec->name);
  return spec->short_flag.empty() ? flag : std::string(spec->short_flag) + "," + flag;
}

std::string CommandOption::HelpText() const {
  std::string text(help);
  const bool states_default = text.find("default") != std::string::npos;
  if (!states_default &&
      (default_value.is_number() || (default_value.is_string() && spec->type != OptionType::kFlag))) {
    std::string shown = default_value.is_string() ? default_value.get<std::string>() : default_value.dump();
    if (default_value.is_number_float() && std::trunc(default_value.get<double>()) == default_value.get<double>()) {
      shown = std::to_string(static_cast<int64_t>(default_value.get<double>()));
    }
    if (spec->check == CheckKind::kRange && spec->max != std::numeric_limits<int64_t>::max()) {
      text += fmt::format(" (default {}, at most {})", shown, spec->max);
    } else {
      text += " (default " + shown + ")";
    }
  }
  return text;
}

void LimitOptions::ApplyTo(Limits* limits, const std::set<std::string>& given) const {
  if (given.count("max_input_bytes")) limits->max_input_bytes = static_cast<size_t>(max_input_bytes);
  if (given.count("max_depth")) limits->max_depth = static_cast<int>(max_depth);
  if (given.count("max_values")) limits->max_values = static_cast<size_t>(max_values);
  if (given.count("max_layers")) limits->max_layers = max_layers;
  if (given.count("max_output_bytes")) limits->max_output_bytes = static_cast<size_t>(max_output_bytes);
  if (given.count("max_microbatch_count")) limits->max_microbatch_count = max_microbatch_count;
  if (given.count("max_timeline_passes")) limits->max_timeline_passes = max_timeline_passes;
}

StatusOr<const CommandSpec*> FindCommand(std::string_view name) {
  for (const CommandSpec& command : AllCommands()) {
    if (command.name == name) return &command;
  }
  const std::vector<std::string> names = CommandNames();
  std::string message = "'" + std::string(name) + "' is not an easyplan command";
  if (auto suggestion = SuggestClosest(name, names)) message += " (did you mean '" + *suggestion + "'?)";
  return Status::BadInput({}, message, {"commands: " + JoinQuoted(names)});
}

StatusOr<std::vector<CommandOption>> OptionsOf(std::string_view command) {
  std::vector<CommandOption> out;
  if (command == "global" || command == "model") {
    // The Model's: the config options, then the limits; the CLI's global flags: the limits.
    for (const OptionGroup group : {OptionGroup::kConfig, OptionGroup::kLimits}) {
      if (command == "global" && group == OptionGroup::kConfig) continue;
      for (const OptionSpec& spec : AllOptions()) {
        if (spec.group != group || spec.positional) continue;
        if (command == "model" && spec.surface == Surface::kCli) continue;
        out.push_back(Resolve(spec, command));
      }
    }
    return out;
  }
  EP_ASSIGN_OR_RETURN(const CommandSpec* spec, FindCommand(command));
  for (const OptionSpec& option : AllOptions()) {
    if (TakesOption(*spec, option)) out.push_back(Resolve(option, command));
  }
  return out;
}

std::vector<std::string> CommandNames() {
  std::vector<std::string> names;
  for (const CommandSpec& command : AllCommands()) names.emplace_back(command.name);
  return names;
}

StatusOr<std::vector<std::string>> OptionNames(const std::string& command) {
  EP_ASSIGN_OR_RETURN(std::vector<CommandOption> options, OptionsOf(command));
  std::vector<std::string> names;
  for (const CommandOption& option : options) {
    if (option.surface != Surface::kCli) names.emplace_back(option.name());
  }
  return names;
}

std::string CheckOptionText(OptionType type, const std::string& text) {
  StatusOr<Json> value = ParseOptionText(type, text);
  return value.ok() ? "" : value.status().diag().message;
}

StatusOr<Json> ParseOptionText(OptionType type, const std::string& text) {
  switch (type) {
    case OptionType::kInt:
    case OptionType::kUnsigned: {
      // Plain decimal only (docs/RELIABILITY.md): no octal "010", no hex "0x10", nothing past the range.
      std::string_view digits = text;
      const bool negative = digits.starts_with('-');
      if (negative || digits.starts_with('+')) digits.remove_prefix(1);
      const char* what = type == OptionType::kInt ? "a decimal integer" : "a non-negative decimal integer";
      if (digits.empty() || digits.find_first_not_of("0123456789") != std::string_view::npos ||
          (negative && type == OptionType::kUnsigned)) {
        return Status::BadInput({}, fmt::format("expected {}, found '{}'", what, text));
      }
      while (digits.size() > 1 && digits.front() == '0') digits.remove_prefix(1);
      const std::string normal = (negative ? "-" : "") + std::string(digits);
      if (type == OptionType::kInt) {
        int64_t value = 0;
        auto [end, error] = std::from_chars(normal.data(), normal.data() + normal.size(), value);
        if (error != std::errc() || end != normal.data() + normal.size()) {
          return Status::BadInput({}, fmt::format("'{}' is out of range (at most {})", text, INT64_MAX));
        }
        return Json(value);
      }
      uint64_t value = 0;
      auto [end, error] = std::from_chars(normal.data(), normal.data() + normal.size(), value);
      if (error != std::errc() || end != normal.data() + normal.size()) {
        return Status::BadInput({}, fmt::format("'{}' is out of range (at most {})", text, UINT64_MAX));
      }
      return Json(value);
    }
    case OptionType::kNumber: {
      double value = 0;
      auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (text.empty() || error != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
        return Status::BadInput({}, fmt::format("expected a decimal number, found '{}'", text));
      }
      return Json(value);
    }
    case OptionType::kFlag:
      if (text == "true" || text == "1") return Json(true);
      if (text == "false" || text == "0") return Json(false);
      return Status::BadInput({}, fmt::format("expected true or false, found '{}'", text));
    case OptionType::kStrings:
    case OptionType::kSets:
      return Json::array({text});
    case OptionType::kString:
    case OptionType::kMesh:
      return Json(text);
  }
  return Status::Internal("unknown option type");
}

CommandOptions DefaultOptions(std::string_view command) {
  CommandOptions options;
  StatusOr<std::vector<CommandOption>> list = OptionsOf(command);
  if (!list.ok()) return options;
  for (const CommandOption& option : *list) {
    const OptionVariant* variant = VariantFor(*option.spec, command);
    if (variant == nullptr || !variant->default_value) continue;
    const FieldRef field = option.spec->field(options);
    if (option.default_value.is_null()) {
      if (auto* text = std::get_if<std::string*>(&field)) (*text)->clear();
      continue;
    }
    SetField(field, option.default_value);
  }
  return options;
}

std::string ShellWord(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                              "_-./=,:+@") == std::string::npos) {
    return word;
  }
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string CommandLine(std::string_view command, const CommandOptions& options) {
  CommandOptions given = options;
  CommandOptions defaults = DefaultOptions(command);
  std::vector<CommandOption> list;
  for (std::string_view options_of : {command, std::string_view("global")}) {
    StatusOr<std::vector<CommandOption>> more = OptionsOf(options_of);
    if (more.ok()) list.insert(list.end(), more->begin(), more->end());
  }
  const auto text = [](const Json& value) { return value.is_string() ? value.get<std::string>() : value.dump(); };
  std::string config = "CONFIG", flags;
  for (const CommandOption& option : list) {
    const OptionSpec& spec = *option.spec;
    if (spec.field == nullptr || spec.hidden) continue;
    const Json value = FieldJson(spec.field(given));
    if (spec.positional) {
      if (spec.name == "config" && !value.is_null()) config = text(value);
      continue;
    }
    if (value.is_null() || value == FieldJson(spec.field(defaults))) continue;
    const std::string flag = FlagOf(spec.name);
    if (spec.type == OptionType::kFlag) {
      if (value.is_boolean() && value.get<bool>()) flags += " " + flag;
      continue;
    }
    // A list (--set, --rules) gives its flag once per value; an empty string is written '' (--set K='').
    for (const Json& item : value.is_array() ? value : Json::array({value}))
      flags += " " + flag + " " + ShellWord(text(item));
  }
  return "easyplan " + std::string(command) + " " + ShellWord(config) + flags;
}

Status ApplyOptions(const std::string& command, const Json& options, CommandOptions* out, Surface caller) {
  if (!options.is_object()) {  // the Python module passes whatever JSON text it is given (fuzz: python_options)
    return Status::BadInput(
        {}, std::string("options must be a JSON object of option names and values, found ") + JsonTypeName(options));
  }
  EP_ASSIGN_OR_RETURN(const std::vector<CommandOption> list, OptionsOf(command));
  std::vector<std::string> names;
  for (const CommandOption& option : list) {
    if (option.surface == Surface::kBoth || option.surface == caller) names.emplace_back(option.name());
  }
  for (const auto& [name, value] : options.items()) {
    if (value.is_null()) continue;
    const CommandOption* found = nullptr;
    for (const CommandOption& option : list) {
      if (option.name() == name && (option.surface == Surface::kBoth || option.surface == caller)) found = &option;
    }
    if (found == nullptr) {
      for (const RenamedOption& renamed : RenamedOptions()) {
        if (renamed.name == name && Contains(renamed.commands, command)) {
          return Status::BadInput({}, fmt::format("{}() got '{}', which is now '{}'", command, name, renamed.python),
                                  {"one name per concept in every command, the CLI and the Python module"});
        }
      }
      std::string message = command + "() got an unknown option '" + name + "'";
      if (auto suggestion = SuggestClosest(name, names)) message += " (did you mean '" + *suggestion + "'?)";
      return Status::BadInput({}, message, {"options of " + command + ": " + JoinQuoted(names)});
    }
    EP_ASSIGN_OR_RETURN(const Json normal, Normalize(*found->spec, value));
    EP_RETURN_IF_ERROR(CheckValue(*found, normal, command));
    SetField(found->spec->field(*out), normal);
    out->given.insert(name);
  }
  if (auto spec = FindCommand(command); spec.ok()) {
    const std::vector<OptionGroup>& groups = (*spec)->groups;
    out->plan.pipeline.supported = std::find(groups.begin(), groups.end(), OptionGroup::kPipeline) != groups.end();
    if (out->given.count("microbatches") > 0) out->plan.pipeline.microbatches = out->pricing.microbatches;
  }
  return Status();
}

Status CheckOptionValue(std::string_view id, const Json& value, std::string_view command) {
  for (const OptionSpec& spec : AllOptions()) {
    if (spec.id != id) continue;
    EP_ASSIGN_OR_RETURN(const Json normal, Normalize(spec, value));
    return CheckValue(Resolve(spec, command), normal, command);
  }
  return Status::Internal("CheckOptionValue: no option '" + std::string(id) + "'");
}

Json CommandTableJson() {
  Json out = Json::object();
  Json commands = Json::array();
  for (const CommandSpec& command : AllCommands()) {
    Json entry = Json::object();
    entry["name"] = command.name;
    entry["summary"] = command.summary;
    Json positional = Json::array();
    for (std::string_view name : command.python_positional) positional.push_back(name);
    entry["python_positional"] = positional;
    entry["python_result"] = PythonResultName(command.python_result);
    entry["python_returns"] = command.python_returns;
    entry["findings_instead_of_artifact"] = command.findings_instead_of_artifact;
    Json options = Json::array();
    const StatusOr<std::vector<CommandOption>> list = OptionsOf(command.name);
    for (const CommandOption& option : *list) options.push_back(OptionJson(option));
    entry["options"] = options;
    commands.push_back(entry);
  }
  out["commands"] = commands;
  for (const char* pseudo : {"model", "global"}) {
    Json options = Json::array();
    const StatusOr<std::vector<CommandOption>> list = OptionsOf(pseudo);
    for (const CommandOption& option : *list) options.push_back(OptionJson(option));
    out[pseudo] = options;
  }
  Json renamed = Json::array();
  for (const RenamedOption& r : RenamedOptions()) {
    Json entry = Json::object();
    entry["name"] = r.name;
    entry["flag"] = FlagOf(r.name);
    entry["replacement"] = r.replacement;
    entry["python"] = r.python;
    Json commands_of = Json::array();
    for (std::string_view c : r.commands) commands_of.push_back(c);
    entry["commands"] = commands_of;
    renamed.push_back(entry);
  }
  out["renamed"] = renamed;
  return out;
}

std::string_view PythonResultName(PythonResult result) {
  static constexpr EnumName<PythonResult> kNames[] = {
      {PythonResult::kData, "data"}, {PythonResult::kText, "text"}, {PythonResult::kPlan, "plan"}};
  return NameOf(kNames, result);
}

StatusOr<CheckedCommand> CheckCommandOptions(const CommandSpec& spec, const CommandOptions& options) {
  CheckedCommand checked{.options = options};
  if (spec.check) {
    EP_ASSIGN_OR_RETURN(checked.pipeline, spec.check(options));
  }
  return checked;
}

StatusOr<CommandResult> RunCommand(const CommandSpec& spec, const RunContext& context, const CheckedCommand& command) {
  if (!context.model) return Status::Internal("RunCommand: no model");
  EP_ASSIGN_OR_RETURN(CommandResult result, spec.run(context, command));
  result.model = context.model;
  return result;
}

StatusOr<std::shared_ptr<const Model>> ModelWithOptions(const std::shared_ptr<const Model>& model,
                                                        const ConfigOptions& options, std::string_view command) {
  const ConfigOptions& own = model->options();
  // An option `command` reads as its own (OptionVariant::group) is the call's, whatever the Model's is.
  bool searched_devices = false;
  for (const OptionSpec& spec : AllOptions()) {
    if (spec.name == "devices") searched_devices = Resolve(spec, command).group != OptionGroup::kConfig;
  }
  const std::pair<bool, const char*> fixed[] = {
      {options.defaults != own.defaults, "defaults"},
      {options.overrides != own.overrides, "overrides"},
      {!searched_devices && options.devices != own.devices, "devices"},
      {options.strict != own.strict, "strict"},
      {options.schemas_dir != own.schemas_dir, "schemas_dir"},
  };
  for (const auto& [differs, name] : fixed) {
    if (!differs) continue;
    return Status::BadInput(
        {}, fmt::format("{}= is an option of the Model, which resolved its config once without it", name),
        {fmt::format("give it when loading the Model, easyplan.Model(config, {}=...), or to a function that loads "
                     "one, e.g. easyplan.plan(config, {}=...)",
                     name, name)});
  }
  const bool own_prefix =
      options.sets.size() >= own.sets.size() && std::equal(own.sets.begin(), own.sets.end(), options.sets.begin());
  if (!own_prefix) return Status::Internal("a call's --set values do not start with its Model's own");
  if (options.sets.size() == own.sets.size()) return model;
  if (!model->has_config()) {
    return Status::BadInput({}, "set= changes a config, and this Model has none (EasyDeL's defaults alone)",
                            {"load the Model from a config: easyplan.Model(config, set=...)"});
  }
  const std::vector<std::string> extra(options.sets.begin() + static_cast<std::ptrdiff_t>(own.sets.size()),
                                       options.sets.end());
  return model->WithSets(extra);
}

StatusOr<Json> PlanSummaryJson(const PlanResult& result) {
  EP_ASSIGN_OR_RETURN(auto rules, ResolvedRules(result.inputs));
  Json list = Json::array();
  for (const auto& [pattern, spec] : rules) list.push_back(Json::array({pattern, spec.ToJson()}));
  Json out = Json::object();
  out["rules"] = std::move(list);
  out["bytes_per_device"] = Json(result.plan.device_bytes);
  EP_ASSIGN_OR_RETURN(Document findings, ParseJsonDocument(FindingsToJsonText(result.plan.findings, ""), "<findings>"));
  out["findings"] = findings.root()["findings"];
  out["failed"] = result.plan.HasErrors();
  return out;
}

const std::vector<CommandSpec>& AllCommands() {
  static const std::vector<CommandSpec> commands = {
      ResolveCommand(), TreeCommand(),   PlanCommand(),  ExplainCommand(), ValidateCommand(), ActivationsCommand(),
      MemoryCommand(),  ExportCommand(), CheckCommand(), CostCommand(),    SuggestCommand(),  ReportCommand(),
  };
  return commands;
}

}  // namespace easyplan::api
