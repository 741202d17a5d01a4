#include "cli/app.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <map>
#include <memory>
#include <ostream>
#include <utility>
#include <variant>

#include "api/command_table.h"
#include "cli/run_command.h"
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

// One option of the command table on a CLI11 app: its text is kept as given and becomes a value
// after parsing (api::ParseOptionText), so every option is checked by its declaration (ApplyOptions).
struct BoundOption {
  api::CommandOption option;
  CLI::Option* cli = nullptr;
  std::string text;
  std::vector<std::string> texts;  ///< repeatable options
};

// The flags of one command (or the global ones), bound to storage that outlives the parse.
struct BoundFlags {
  std::string command;  ///< an api command, or "global"
  std::vector<std::unique_ptr<BoundOption>> options;

  // The given options as the JSON object api::ApplyOptions reads, in --help order.
  Json Given() const {
    Json out = Json::object();
    for (const auto& bound : options) {
      if (bound->cli->count() == 0) continue;
      const api::OptionSpec& spec = *bound->option.spec;
      if (spec.type == api::OptionType::kFlag) {
        out[std::string(spec.name)] = true;
      } else if (spec.type == api::OptionType::kStrings || spec.type == api::OptionType::kSets) {
        out[std::string(spec.name)] = bound->texts;
      } else {
        // The text passed the option's type check when it was parsed (TypeCheck).
        StatusOr<Json> value = api::ParseOptionText(spec.type, bound->text);
        out[std::string(spec.name)] = value.ok() ? *value : Json(bound->text);
      }
    }
    return out;
  }
};

const char* TypeName(api::OptionType type) {
  switch (type) {
    case api::OptionType::kInt:
      return "INT";
    case api::OptionType::kUnsigned:
      return "UINT";
    case api::OptionType::kNumber:
      return "FLOAT";
    default:
      return "TEXT";
  }
}

// CLI11 alone would read integers with strtoll(base 0) ("010" octal, "0x10" hex, values past INT64_MAX
// clamped): each value is checked by the api's own reading of its type instead, as it is parsed.
CLI::Validator TypeCheck(api::OptionType type) {
  return CLI::Validator([type](std::string& text) { return api::CheckOptionText(type, text); },
                        /*validator_desc=*/"");
}

void Bind(CLI::App* app, BoundFlags& flags, std::string_view command) {
  flags.command = command;
  const StatusOr<std::vector<api::CommandOption>> options = api::OptionsOf(command);
  for (const api::CommandOption& option : *options) {
    if (option.surface == api::Surface::kPython) continue;
    auto bound = std::make_unique<BoundOption>();
    bound->option = option;
    const api::OptionSpec& spec = *option.spec;
    const std::string help = option.HelpText();
    if (spec.type == api::OptionType::kFlag) {
      bound->cli = app->add_flag(option.Flag(), help);
    } else if (spec.type == api::OptionType::kStrings || spec.type == api::OptionType::kSets) {
      bound->cli = app->add_option(option.Flag(), bound->texts, help);
    } else {
      bound->cli = app->add_option(option.Flag(), bound->text, help);
      bound->cli->type_name(TypeName(spec.type));
      if (spec.type == api::OptionType::kInt || spec.type == api::OptionType::kUnsigned ||
          spec.type == api::OptionType::kNumber) {
        bound->cli->transform(TypeCheck(spec.type));
      }
    }
    if (option.required) bound->cli->required();
    if (spec.hidden) bound->cli->group("");
    flags.options.push_back(std::move(bound));
  }
  // A flag an earlier easyplan had: hidden, and given at all, a parse error (exit 2) naming its successor.
  for (const api::RenamedOption& renamed : api::RenamedOptions()) {
    if (std::find(renamed.commands.begin(), renamed.commands.end(), command) == renamed.commands.end()) continue;
    std::string old_flag = "--" + std::string(renamed.name);
    std::replace(old_flag.begin(), old_flag.end(), '_', '-');
    const std::string message = old_flag + " was renamed: use " + std::string(renamed.replacement);
    app->add_option(old_flag)->group("")->expected(0, 1)->each(
        [message](const std::string&) { throw CLI::ValidationError(message); });
  }
}

// CONFIG is the first positional, but a --tree file needs none: given one with a single positional
// word, the word is the command's next positional that is missing (`explain --tree T.json PATTERN`).
// The rule reads the command table, so it holds for any command with positionals after CONFIG.
void ReadPositionalsPastConfig(std::string_view command, api::CommandOptions& options) {
  std::string& config = options.plan.config.config;
  if (options.plan.tree.file.empty() || config.empty()) return;
  const StatusOr<std::vector<api::CommandOption>> declared = api::OptionsOf(command);
  if (!declared.ok()) return;
  for (const api::CommandOption& option : *declared) {
    if (!option.spec->positional || option.name() == "config") continue;
    api::FieldRef field = option.spec->field(options);
    std::string* const* text = std::get_if<std::string*>(&field);
    if (text == nullptr || !(*text)->empty()) continue;
    std::swap(**text, config);
    return;
  }
}

}  // namespace

int RunApp(int argc, const char* const* argv, Context& ctx) {
  CLI::App app{"easyplan: resolve HuggingFace/EasyDeL configs and plan their sharding on a device mesh", "easyplan"};
  app.set_version_flag("--version", "easyplan " EASYPLAN_VERSION);
  app.require_subcommand(0, 1);
  app.allow_extras();
  BoundFlags global;
  Bind(&app, global, "global");
  std::map<std::string, BoundFlags> flags;
  std::vector<std::string> names;
  for (const api::CommandSpec& command : api::AllCommands()) {
    const std::string name(command.name);
    CLI::App* sub = app.add_subcommand(name, std::string(command.summary));
    Bind(sub, flags[name], name);
    sub->allow_extras();
    sub->fallthrough();  // the global flags also work after the subcommand
    names.push_back(name);
  }
  // Set after the subcommands, which copy a parent's footer when they are added.
  // A newcomer's first `easyplan --help`: a path through the commands, and where each is documented.
  app.footer(
      "Examples:\n"
      "  easyplan resolve examples/llama-3.1-8b                   the config EasyDeL would use\n"
      "  easyplan plan examples/llama-3.1-8b --mesh fsdp=4,tp=2   every device's shards\n"
      "  easyplan memory examples/llama-3.1-8b --mesh fsdp=8 --mode train --batch 8 --seq 2048 --hardware h100-sxm\n"
      "  easyplan cost examples/llama-3.1-8b --mesh fsdp=8 --mode train --batch 8 --seq 2048 --hardware h100-sxm\n"
      "  easyplan suggest examples/llama-3.1-8b --devices 8 --mode train --batch 8 --seq 2048 --hardware h100-sxm\n"
      "\n"
      "'easyplan COMMAND --help' lists a command's options. README.md walks through every command;\n"
      "docs/OPTIONS.md lists every option and each command's --format values; docs/ is the reference.");

  // An unknown subcommand is the most common slip: answer it before CLI11 does, with a suggestion.
  if (argc > 1 && argv[1][0] != '-' && flags.count(argv[1]) == 0) {
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
  // The global flags (the input limits, --verbose), checked by their declarations like every option.
  api::CommandOptions run_options;
  if (Status status = api::ApplyOptions("global", global.Given(), &run_options, api::Surface::kCli); !status.ok()) {
    return ReportError(ctx, status);
  }
  run_options.limits.ApplyTo(&ctx.limits, run_options.given);
  ctx.verbose = ctx.verbose || run_options.verbose;

  const std::string name = chosen.front()->get_name();
  const StatusOr<const api::CommandSpec*> spec = api::FindCommand(name);
  if (!spec.ok()) return ReportError(ctx, spec.status());
  api::CommandOptions options = api::DefaultOptions(name);
  if (Status status = api::ApplyOptions(name, flags[name].Given(), &options, api::Surface::kCli); !status.ok()) {
    return ReportError(ctx, status);
  }
  options.verbose = ctx.verbose;
  ReadPositionalsPastConfig(name, options);
  return RunCommandLine(**spec, options, ctx);
}

}  // namespace easyplan::cli
