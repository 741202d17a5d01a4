#include "cli/app.h"

#include <charconv>
#include <cstdint>
#include <map>
#include <optional>
#include <ostream>

#include "cli/commands.h"
#include "core/did_you_mean.h"

namespace easyplan::cli {
namespace {

int UsageError(Context& ctx, const std::string& message, const std::string& hint = "") {
  ctx.err << "easyplan: error: " << message << "\n";
  if (!hint.empty()) ctx.err << "  note: " << hint << "\n";
  return kExitBadInput;
}

// Every spelling of every option of `app`: "--format", "-o", ...
void AddOptionSpellings(const CLI::App& app, std::vector<std::string>* names) {
  for (const CLI::Option* option : app.get_options()) {
    for (const std::string& name : option->get_lnames()) names->push_back("--" + name);
    for (const std::string& name : option->get_snames()) names->push_back("-" + name);
  }
}

// The global limit flags (core/limits.h), accepted before or after the subcommand.
struct LimitFlags {
  std::optional<int64_t> max_input_bytes;
  std::optional<int64_t> max_depth;
  std::optional<int64_t> max_values;
  std::optional<int64_t> max_layers;
  std::optional<int64_t> max_output_bytes;

  void Add(CLI::App& app) {
    const Limits defaults;
    app.add_option("--max-input-bytes", max_input_bytes,
                   "refuse input files larger than this (default " + std::to_string(defaults.max_input_bytes) + ")");
    app.add_option("--max-depth", max_depth,
                   "refuse JSON/YAML nested deeper than this (default " + std::to_string(defaults.max_depth) +
                       ", at most " + std::to_string(Limits::kMaxDepthCeiling) + ")");
    app.add_option("--max-values", max_values,
                   "refuse documents with more values than this, YAML aliases counted at each use (default " +
                       std::to_string(defaults.max_values) + ")");
    app.add_option("--max-layers", max_layers,
                   "refuse configs with more layers (num_hidden_layers) than this (default " +
                       std::to_string(defaults.max_layers) + ")");
    app.add_option("--max-output-bytes", max_output_bytes,
                   "refuse to build an export or report page larger than this (default " +
                       std::to_string(defaults.max_output_bytes) + ")");
  }

  // Applies the flags that were given to `limits`; a value out of range is a usage error.
  Status Apply(Limits& limits) const {
    const auto check = [](const char* flag, int64_t value, int64_t most) {
      if (value >= 1 && value <= most) return Status();
      return Status::BadInput({}, std::string(flag) + " must be between 1 and " + std::to_string(most) + ", found " +
                                      std::to_string(value));
    };
    if (max_input_bytes) {
      EP_RETURN_IF_ERROR(check("--max-input-bytes", *max_input_bytes, INT64_MAX));
      limits.max_input_bytes = static_cast<size_t>(*max_input_bytes);
    }
    if (max_depth) {
      EP_RETURN_IF_ERROR(check("--max-depth", *max_depth, Limits::kMaxDepthCeiling));
      limits.max_depth = static_cast<int>(*max_depth);
    }
    if (max_values) {
      EP_RETURN_IF_ERROR(check("--max-values", *max_values, INT64_MAX));
      limits.max_values = static_cast<size_t>(*max_values);
    }
    if (max_layers) {
      EP_RETURN_IF_ERROR(check("--max-layers", *max_layers, INT64_MAX));
      limits.max_layers = *max_layers;
    }
    if (max_output_bytes) {
      EP_RETURN_IF_ERROR(check("--max-output-bytes", *max_output_bytes, INT64_MAX));
      limits.max_output_bytes = static_cast<size_t>(*max_output_bytes);
    }
    return Status();
  }
};

// CLI11 converts integers with strtoll(base 0): "010" would be octal 8, "0x10" hex, and a value past
// INT64_MAX saturates instead of failing. Every integer option therefore takes plain decimal only,
// checked here for range, and normalised ("+010" -> "10") before CLI11 converts it.
CLI::Validator DecimalInt64() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::string_view digits = text;
        const bool negative = digits.starts_with('-');
        if (negative || digits.starts_with('+')) digits.remove_prefix(1);
        if (digits.empty() || digits.find_first_not_of("0123456789") != std::string_view::npos) {
          return "expected a decimal integer, found '" + text + "'";
        }
        while (digits.size() > 1 && digits.front() == '0') digits.remove_prefix(1);
        std::string normal = (negative ? "-" : "") + std::string(digits);
        int64_t value = 0;
        auto [end, error] = std::from_chars(normal.data(), normal.data() + normal.size(), value);
        if (error != std::errc() || end != normal.data() + normal.size()) {
          return "'" + text + "' is out of range (at most " + std::to_string(INT64_MAX) + ")";
        }
        text = normal;
        return "";
      },
      /*validator_desc=*/"");
}

// Adds DecimalInt64 to every integer option of `app` and its subcommands.
void CheckIntegerOptions(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    if (std::string_view(option->get_type_name()).starts_with("INT") && option->get_expected_max() > 0)
      option->transform(DecimalInt64());
  }
  for (CLI::App* sub : app.get_subcommands({})) CheckIntegerOptions(*sub);
}

}  // namespace

int RunApp(int argc, const char* const* argv, Context& ctx) {
  CLI::App app{"easyplan: resolve HuggingFace/EasyDeL configs and plan their sharding on a device mesh", "easyplan"};
  app.set_version_flag("--version", "easyplan " EASYPLAN_VERSION);
  app.require_subcommand(0, 1);
  app.allow_extras();
  LimitFlags limit_flags;
  limit_flags.Add(app);
  bool verbose = false;
  app.add_flag("--verbose", verbose,
               "also print the notes a user cannot act on (rules of a built-in table that take no tensor)");
  std::map<std::string, std::function<int(Context&)>> runners;
  std::vector<std::string> names;
  for (const Command& command : AllCommands()) {
    runners[command.name] = command.add(app);
    names.push_back(command.name);
  }
  CheckIntegerOptions(app);
  for (CLI::App* sub : app.get_subcommands({})) {
    sub->allow_extras();
    sub->fallthrough();  // the global flags also work after the subcommand
  }

  // An unknown subcommand is the most common slip: answer it before CLI11 does, with a suggestion.
  if (argc > 1 && argv[1][0] != '-' && runners.count(argv[1]) == 0) {
    std::string word = argv[1];
    std::string hint = "commands: ";
    for (size_t i = 0; i < names.size(); ++i) hint += (i ? ", " : "") + names[i];
    if (auto suggestion = SuggestClosest(word, names)) {
      return UsageError(ctx, "unknown command '" + word + "' (did you mean '" + *suggestion + "'?)", hint);
    }
    return UsageError(ctx, "unknown command '" + word + "'", hint);
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    ctx.out << app.help();
    return kExitOk;
  } catch (const CLI::CallForAllHelp&) {
    ctx.out << app.help("", CLI::AppFormatMode::All);
    return kExitOk;
  } catch (const CLI::CallForVersion&) {
    ctx.out << "easyplan " EASYPLAN_VERSION "\n";
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    std::string message = e.what();
    // An option without a name of its own (a renamed flag's) reports as ": message".
    if (message.starts_with(": ")) message.erase(0, 2);
    for (CLI::App* sub : app.get_subcommands()) {
      return UsageError(ctx, sub->get_name() + ": " + message, "run 'easyplan " + sub->get_name() + " --help'");
    }
    return UsageError(ctx, message, "run 'easyplan --help'");
  }

  std::vector<CLI::App*> chosen = app.get_subcommands();
  const CLI::App* scope = chosen.empty() ? &app : chosen.front();
  std::vector<std::string> extras = scope->remaining();
  if (!chosen.empty() && extras.empty()) extras = app.remaining();
  if (!extras.empty()) {
    const std::string& word = extras.front();
    std::string where = chosen.empty() ? "" : scope->get_name() + ": ";
    std::string hint = "run 'easyplan " + (chosen.empty() ? std::string() : scope->get_name() + " ") + "--help'";
    if (word.starts_with("-")) {
      std::string flag = word.substr(0, word.find('='));
      std::string message = where + "unknown option '" + flag + "'";
      std::vector<std::string> spellings;
      AddOptionSpellings(*scope, &spellings);
      if (scope != &app) AddOptionSpellings(app, &spellings);
      if (auto suggestion = SuggestClosest(flag, spellings)) {
        message += " (did you mean '" + *suggestion + "'?)";
      }
      return UsageError(ctx, message, hint);
    }
    return UsageError(ctx, where + "unexpected argument '" + word + "'", hint);
  }
  if (chosen.empty()) {
    ctx.err << app.help();
    return kExitBadInput;
  }
  if (Status status = limit_flags.Apply(ctx.limits); !status.ok()) return ReportError(ctx, status);
  ctx.verbose = ctx.verbose || verbose;
  return runners[chosen.front()->get_name()](ctx);
}

}  // namespace easyplan::cli
