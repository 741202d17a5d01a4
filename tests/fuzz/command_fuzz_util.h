#ifndef EASYPLAN_TESTS_FUZZ_COMMAND_FUZZ_UTIL_H_
#define EASYPLAN_TESTS_FUZZ_COMMAND_FUZZ_UTIL_H_

// Helpers of the fuzz targets that run a whole command (cost, suggest, report) on fuzzed command-line
// words: the words are read as the CLI reads them (each option's flag and type from the command table,
// ParseOptionText, ApplyOptions), the command runs as every caller runs it (CheckCommandOptions, the
// model, RunCommand) and the CLI shows the result (cli::ShowResult): its table or page, all in memory. An input is
// text:
//
//     mixtral-8x7b          line 1: the example (examples/NAME), one of Examples(); anything else is gpt2
//     --mesh                then one command-line word per line (at most kMaxWords), up to a line "---"
//     fsdp=2,tp=2
//     --batch
//     4
//     ---                   the rest, when present: a hardware profile, which --hardware names unless a
//     hbm_bytes: 16GiB      word is --hardware (`--hardware profile.yaml` names it too)
//     ...
//
// Every example is cut to two layers (--set after its config); the words may raise that to four and no
// further (the environment's layer limit is 4). A model is resolved once per example and config options
// and kept (the CLI resolves it per run, which costs more than the command under ASan), so a run costs
// milliseconds to tens of milliseconds whatever the model.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "api/command_table.h"
#include "api/environment.h"
#include "api/model.h"
#include "cli/context.h"
#include "cli/run_command.h"
#include "core/file_system.h"
#include "core/json.h"
#include "core/json_parse.h"
#include "tests/fuzz/fuzz_util.h"

namespace easyplan::fuzz {

/// More words than any command line needs: an input past it is skipped (it only slows the search).
inline constexpr size_t kMaxWords = 48;

/// A bundled example and the --set values that cut it to two layers (and what depends on the count).
struct Example {
  const char* name;
  std::vector<std::string> sets;
};

/// Dense, MoE, MLA, hybrid linear attention, sliding windows, MXFP4 experts, and a family without a
/// forward pass (dbrx: cost and suggest refuse it, report draws it without a step time).
inline const std::vector<Example>& Examples() {
  static const std::vector<Example> examples = {
      {"gpt2", {"n_layer=2"}},
      {"llama-3.1-8b", {"num_hidden_layers=2"}},
      {"mixtral-8x7b", {"num_hidden_layers=2"}},
      {"qwen3-30b-a3b", {"num_hidden_layers=2"}},
      {"deepseek-v3", {"num_hidden_layers=2", "first_k_dense_replace=1"}},
      {"gemma-2-9b", {"num_hidden_layers=2"}},
      {"qwen3-next-80b-a3b", {"num_hidden_layers=2"}},
      {"gpt-oss-20b", {"num_hidden_layers=2", "layer_types=[\"sliding_attention\",\"full_attention\"]"}},
      {"phi-3-mini", {"num_hidden_layers=2"}},
      {"dbrx-instruct", {"n_layers=2"}},
  };
  return examples;
}

struct CommandInput {
  const Example* example = nullptr;
  std::vector<std::string> words;
  std::optional<std::string> profile;
};

/// The input as the header describes it; nullopt when it has more than kMaxWords words.
inline std::optional<CommandInput> ParseCommandInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  CommandInput input;
  input.example = &Examples().front();
  size_t at = 0;
  bool first = true;
  while (at <= text.size()) {
    const size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    if (first) {
      first = false;
      for (const Example& example : Examples()) {
        if (line == example.name) input.example = &example;
      }
      continue;
    }
    if (line == "---") {
      input.profile = std::string(at <= text.size() ? text.substr(at) : std::string_view());
      break;
    }
    if (end == text.size() && line.empty()) break;
    if (input.words.size() == kMaxWords) return std::nullopt;
    input.words.emplace_back(line);
  }
  return input;
}

/// The value of `flag` in `words` (`--flag VALUE` or `--flag=VALUE`; the last one).
inline std::optional<std::string> FlagValue(const std::vector<std::string>& words, std::string_view flag) {
  std::optional<std::string> value;
  for (size_t i = 0; i < words.size(); ++i) {
    if (words[i] == flag && i + 1 < words.size()) value = words[i + 1];
    if (words[i].size() > flag.size() && words[i].starts_with(flag) && words[i][flag.size()] == '=') {
      value = words[i].substr(flag.size() + 1);
    }
  }
  return value;
}

/// A plain decimal int64 (the option rule), else nullopt.
inline std::optional<int64_t> DecimalValue(const std::optional<std::string>& text) {
  if (!text || text->empty() || text->size() > 18) return std::nullopt;
  int64_t value = 0;
  for (char c : *text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

/// Where the commands of one input run: the files (every example's config, the profiles), the models
/// resolved so far, and the environment (layer limit 4). Dropped and made again every kRenewal inputs,
/// so the profiles and models it keeps stay bounded over a long run.
class Workspace {
 public:
  static constexpr int kRenewal = 500;
  static constexpr size_t kMaxModels = 64;

  static Workspace& Get() {
    static Workspace* workspace = new Workspace();  // lives as long as the process
    return *workspace;
  }

  /// Called once at the start of each input.
  static void StartInput() {
    if (++Get().inputs_ % kRenewal == 0) Get().Renew();
  }

  /// The path of `example`'s config.json.
  static std::string ConfigPath(const Example& example) { return std::string(example.name) + "/config.json"; }

  /// The profile's path: named by its content, so a model's profile cache (by path) stays right.
  std::string AddProfile(const std::string& text) {
    const std::string path = "profile-" + std::to_string(std::hash<std::string>()(text)) + ".yaml";
    files_->AddFile(path, text);
    return path;
  }

  /// The model of `options` (a config of this workspace), resolved on first use.
  StatusOr<std::shared_ptr<const api::Model>> Model(const api::ConfigOptions& options) {
    std::string key = options.config + "\n" + options.defaults + "\n" + options.overrides + "\n" +
                      (options.devices ? std::to_string(*options.devices) : "-") + "\n" +
                      (options.strict ? "strict" : "") + "\n" + options.schemas_dir;
    for (const std::string& set : options.sets) key += "\n" + set;
    if (auto it = models_.find(key); it != models_.end()) return it->second;
    std::vector<Diag> diags;
    StatusOr<std::shared_ptr<const api::Model>> model =
        api::Model::Load(env_, api::ConfigSource::Path(options.config), options, &diags);
    if (!model.ok()) return model.status();
    if (models_.size() == kMaxModels) models_.clear();
    models_.emplace(key, *model);
    return *model;
  }

 private:
  Workspace() { Renew(); }

  void Renew() {
    files_ = std::make_shared<MemFileSystem>();
    RealFileSystem disk;
    for (const Example& example : Examples()) {
      StatusOr<std::string> text =
          disk.ReadFile(std::string(EASYPLAN_SOURCE_DIR) + "/examples/" + example.name + "/config.json", 1 << 20);
      Check(text.ok(), "cannot read a bundled example's config.json");
      files_->AddFile(ConfigPath(example), *text);
    }
    env_ = api::Environment();
    env_.fs = files_;
    env_.limits.max_layers = 4;
    env_.warn = [](const Diag&) {};
    models_.clear();
  }

  int64_t inputs_ = 0;
  std::shared_ptr<MemFileSystem> files_;
  api::Environment env_;
  std::map<std::string, std::shared_ptr<const api::Model>> models_;
};

/// `words` (the flags after COMMAND CONFIG) as the CLI reads them: an options object for ApplyOptions, or
/// nullopt where the CLI stops with a usage error (an unknown flag, a value its type refuses, a flag
/// given twice, a stray positional word), which is not what these targets fuzz.
inline std::optional<Json> OptionsFromWords(const std::string& command, const std::vector<std::string>& words) {
  StatusOr<std::vector<api::CommandOption>> options = api::OptionsOf(command);
  Check(options.ok(), "a fuzzed command the table does not have");
  std::map<std::string, const api::OptionSpec*> flags;
  for (const api::CommandOption& option : *options) {
    if (option.surface == api::Surface::kPython || option.spec->positional) continue;
    std::string flag = "--" + std::string(option.name());
    for (char& c : flag) c = c == '_' ? '-' : c;
    flags[flag] = option.spec;
    if (!option.spec->short_flag.empty()) flags[std::string(option.spec->short_flag)] = option.spec;
  }
  Json out = Json::object();
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& word = words[i];
    const size_t eq = word.find('=');
    const bool inline_value = word.starts_with("--") && eq != std::string::npos;
    auto it = flags.find(inline_value ? word.substr(0, eq) : word);
    if (it == flags.end()) return std::nullopt;
    const api::OptionSpec& spec = *it->second;
    const std::string name(spec.name);
    const bool repeatable = spec.type == api::OptionType::kStrings || spec.type == api::OptionType::kSets;
    if (out.contains(name) && !repeatable) return std::nullopt;
    if (spec.type == api::OptionType::kFlag) {
      if (inline_value) return std::nullopt;
      out[name] = true;
      continue;
    }
    std::string text;
    if (inline_value) {
      text = word.substr(eq + 1);
    } else if (i + 1 < words.size()) {
      text = words[++i];
    } else {
      return std::nullopt;
    }
    StatusOr<Json> value = api::ParseOptionText(spec.type, text);
    if (!value.ok()) return std::nullopt;
    if (repeatable) {  // each use adds its values (ParseOptionText gives a list of one)
      if (!out.contains(name)) out[name] = Json::array();
      if (value->is_array()) {
        for (const Json& item : *value) out[name].push_back(item);
      } else {
        out[name].push_back(*value);
      }
    } else {
      out[name] = *value;
    }
  }
  return out;
}

/// One command's run: the options as applied, the result, and what the CLI wrote of it.
struct CommandRun {
  api::CommandOptions options;
  std::optional<api::CommandResult> result;  ///< nullopt: the run failed, with bad input
  Status status;                             ///< why it failed
  std::string out, err;
  std::shared_ptr<MemFileSystem> written;  ///< -o, --report
};

/// Runs `command` on CONFIG `config_path` with `options_json` as the CLI would: options applied and
/// checked, the model (the workspace's), the pipeline, what it shows (cli::ShowResult). Checks what holds for every
/// run: a failure is bad input with a message, never an internal error or an escaping exception (both exit 3). nullopt
/// when the options are refused before anything runs.
inline CommandRun RunCommand(const std::string& command, const std::string& config_path, const Json& options_json,
                             const std::vector<std::string>& base_sets) {
  CommandRun run;
  StatusOr<const api::CommandSpec*> spec = api::FindCommand(command);
  Check(spec.ok(), "a fuzzed command the table does not have");
  run.options = api::DefaultOptions(command);
  run.options.plan.config.config = config_path;
  run.options.plan.config.sets = base_sets;
  auto fail = [&](const Status& status) {
    CheckBadInput(status);
    run.status = status;
    return std::move(run);
  };
  try {
    if (Status applied = api::ApplyOptions(command, options_json, &run.options, api::Surface::kCli); !applied.ok()) {
      return fail(applied);
    }
    StatusOr<api::CheckedCommand> checked = api::CheckCommandOptions(**spec, run.options);
    if (!checked.ok()) return fail(checked.status());
    StatusOr<std::shared_ptr<const api::Model>> model = Workspace::Get().Model(run.options.plan.config);
    if (!model.ok()) return fail(model.status());
    StatusOr<api::CommandResult> result = api::RunCommand(**spec, {*model, nullptr}, *checked);
    if (!result.ok()) return fail(result.status());
    run.result = std::move(*result);
    run.written = std::make_shared<MemFileSystem>();
    std::istringstream in;
    std::ostringstream out, err;
    cli::Context ctx{*run.written, in, out, err, ""};
    if (Status rendered = cli::ShowResult(**spec, *run.result, run.options, ctx); !rendered.ok()) {
      run.result.reset();
      return fail(rendered);
    }
    run.out = out.str();
    run.err = err.str();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "exception: %s\n", e.what());
    Check(false, "an exception escaped the command (main() would exit 3)");
  }
  return run;
}

/// The input's command: its words read as the CLI reads them, its profile added to the workspace (and
/// named by --hardware unless a word gives one), run on its example cut to two layers. nullopt when the
/// CLI would stop at its words (a usage error).
inline std::optional<CommandRun> RunInput(const std::string& command, const CommandInput& input,
                                          const std::function<void(Json&)>& adjust = nullptr) {
  std::optional<Json> options = OptionsFromWords(command, input.words);
  if (!options) return std::nullopt;
  if (input.profile) {
    const std::string path = Workspace::Get().AddProfile(*input.profile);
    if (!options->contains("hardware") || (*options)["hardware"] == "profile.yaml") (*options)["hardware"] = path;
  }
  if (adjust) adjust(*options);
  return RunCommand(command, Workspace::ConfigPath(*input.example), *options, input.example->sets);
}

/// Every number in `value` is finite and at least 0 (seconds, bytes, FLOPs, rates, counts).
inline bool FiniteAndNonNegative(const Json& value) {
  if (value.is_number()) return std::isfinite(value.get<double>()) && value.get<double>() >= 0;
  if (value.is_object()) {
    for (const auto& [key, item] : value.items()) {
      if (!FiniteAndNonNegative(item)) return false;
    }
  }
  if (value.is_array()) {
    for (const Json& item : value) {
      if (!FiniteAndNonNegative(item)) return false;
    }
  }
  return true;
}

/// The JSON document `text` (a --format json output), or nullopt when it is not one.
inline std::optional<Json> ParseOutputJson(const std::string& text) {
  StatusOr<Document> doc = ParseJsonDocument(text, "<output>", Limits{});
  if (!doc.ok()) return std::nullopt;
  return doc->root();
}

/// The data a report page carries (docs/REPORT.md, "The data"): the JSON of its script element
/// #easyplan-data (whose "<\/" is JSON's escape of "</"). Aborts when the page has none or it does not
/// parse, or lacks a key every page has.
inline Json ReportPageData(const std::string& page) {
  const std::string open = "<script type=\"application/json\" id=\"easyplan-data\">";
  const size_t start = page.find(open);
  Check(start != std::string::npos, "a report page without its data element");
  const size_t from = start + open.size();
  const size_t end = page.find("</script>", from);
  Check(end != std::string::npos, "the report page's data element is not closed");
  std::optional<Json> data = ParseOutputJson(page.substr(from, end - from));
  Check(data.has_value() && data->is_object(), "the report page's data is not a JSON object");
  for (const char* key : {"model_type", "mesh", "verdict", "groups", "tensors", "findings"}) {
    Check(data->contains(key), "the report page's data lacks a key every page has");
  }
  return *data;
}

/// The words of a POSIX shell command line as suggest quotes them (api::ReproduceCommands): bare words,
/// 'single-quoted' text and backslash escapes.
inline std::vector<std::string> ShellWords(std::string_view line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '\'') {
      const size_t close = line.find('\'', i + 1);
      Check(close != std::string_view::npos, "a reproduce command with an unclosed quote");
      word.append(line.substr(i + 1, close - i - 1));
      i = close;
      in_word = true;
    } else if (c == '\\' && i + 1 < line.size()) {
      word += line[++i];
      in_word = true;
    } else if (c == ' ') {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(word);
  return words;
}

}  // namespace easyplan::fuzz

#endif  // EASYPLAN_TESTS_FUZZ_COMMAND_FUZZ_UTIL_H_
