#ifndef EASYPLAN_API_COMMAND_TABLE_H_
#define EASYPLAN_API_COMMAND_TABLE_H_

// The command table: every command and every option of easyplan, declared once, and the one place the
// CLI (cli/), the Python module (api/python/) and the docs (docs/OPTIONS.md) take them from.
//
// An option (api/option_table.cc) is declared with its name (the Python keyword; the CLI flag is the
// name with dashes, `max_tensors` -> `--max-tensors`), type, help, check, group, the field of
// CommandOptions it fills (whose initial value is its default) and, for the few that read differently
// in one command, that command's help, default or choices. A command (api/command_<name>.cc) is
// declared with its name, summary, the option groups and options it takes, the checks across its
// options, its run (options in, a CommandResult out: a typed result and the outcome), and what the
// result shows: the document `--format json` prints and Python returns, and the terminal's form
// (tables, text, JUnit, ...; api/terminal_output.h) the CLI writes. The CLI holds no list of commands
// of its own: it runs any command of the table the same way (cli/run_command.h).
//
// Values arrive as JSON (the Python keyword arguments; the CLI's flag texts after ParseOptionText) and
// ApplyOptions checks each by its declaration, the same way for every command and caller.

#include <any>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "api/activation_pipeline.h"
#include "api/check.h"
#include "api/command_options.h"
#include "api/cost.h"
#include "api/export.h"
#include "api/memory_pipeline.h"
#include "api/model.h"
#include "api/option_checks.h"
#include "api/plan_pipeline.h"
#include "api/report.h"
#include "api/suggest.h"
#include "api/terminal_output.h"
#include "api/tree_source.h"
#include "api/validate.h"
#include "core/json.h"
#include "core/status.h"
#include "core/tree_diff.h"

namespace easyplan::api {

/// How an option's value is written. The CLI's text and the Python value of each type:
enum class OptionType {
  kFlag,      ///< `--strict`, present or not; bool
  kString,    ///< TEXT; str
  kInt,       ///< INT, plain decimal int64 (docs/RELIABILITY.md); int
  kUnsigned,  ///< UINT, plain decimal uint64; int >= 0
  kNumber,    ///< FLOAT, a finite decimal number; int or float
  kStrings,   ///< TEXT ..., repeatable; str or a list of str
  kMesh,      ///< "dp=1,fsdp=-1"; the same str, or {"dp": 1, "fsdp": -1}
  kSets,      ///< KEY=VALUE, repeatable; "KEY=VALUE", a list of them, or {"KEY": value}
};

/// The groups options come in; a command takes whole groups and some options of its own.
enum class OptionGroup {
  kLimits,     ///< input limits: the CLI's global flags, the Python Model's keywords
  kConfig,     ///< how CONFIG is resolved (`resolve`'s options)
  kTree,       ///< where the parameter tree comes from
  kRules,      ///< the partition rules
  kMesh,       ///< the device mesh
  kStep,       ///< the runtime mode, batch and sequence length
  kStepState,  ///< what a step holds besides the model (optimizer, KV cache length)
  kHardware,   ///< the accelerator and the memory budget
  kPricing,    ///< how a step is priced
  kPipeline,   ///< how the mesh's pp axis pipelines the layers (docs/PIPELINE.md)
  kOutput,     ///< how the CLI renders and where it writes
  kCommand,    ///< one command's own (listed by the command)
};

/// Who may give an option.
enum class Surface { kBoth, kCli, kPython };

/// How an option's value is checked, beyond its type. Every message names the flag (`--batch`).
enum class CheckKind {
  kNone,
  kRange,     ///< an integer from `min` to `max`: "--batch must be at least 1, found 0"
  kChoice,    ///< one of `choices`, with did-you-mean
  kMode,      ///< one of `choices` of the one mode set train, prefill, decode, insert (core/mode.h)
  kDType,     ///< a dtype name ("" = not given)
  kByteSize,  ///< "80GiB", more than 0 bytes
  kPositive,  ///< a finite number above 0
  kSeconds,   ///< a number of seconds from `min` to a day
  kRegex,     ///< a non-empty RE2 regex (explain's PATTERN)
  kPath,      ///< a file to write: not empty ("-" is standard output); read as "not given", '' wrote to stdout
  kRetired,   ///< given at all, bad input with `retired` (and `retired_note`)
};

/// Where one command reads an option its own way.
struct OptionVariant {
  std::vector<std::string_view> commands;
  std::optional<std::string_view> help;
  std::optional<std::string_view> default_value;  ///< as the CLI writes it
  std::vector<std::string_view> choices;          ///< replaces the option's (kChoice, kMode)
  std::optional<Surface> surface;
  std::string_view cli_only;  ///< with surface kCli: why Python does not take it (OptionSpec::cli_only)
  bool required = false;      ///< positional: the command needs it
  /// The command reads the option as its own, not as the group it belongs to elsewhere: suggest's
  /// devices is the chips it searches (a step option), not the Model's config option that fills a -1.
  std::optional<OptionGroup> group;
};

/// A name an earlier easyplan had: given, bad input naming what replaced it (CLI and Python alike).
struct RenamedOption {
  std::string_view name;         ///< "memory_per_device"
  std::string_view replacement;  ///< "--max-memory", as the CLI's message prints it
  std::string_view python;       ///< "max_memory", as the Python module's message prints it
  std::vector<std::string_view> commands;
};

/// A field of CommandOptions an option fills.
using FieldRef = std::variant<std::string*, bool*, int64_t*, std::optional<int64_t>*, uint64_t*, double*,
                              std::optional<double>*, std::optional<int>*, std::vector<std::string>*>;

struct OptionSpec {
  std::string_view id;          ///< unique in the table; usually the name
  std::string_view name;        ///< the Python keyword; `--` + name with dashes is the flag
  std::string_view short_flag;  ///< "-o", or ""
  OptionType type = OptionType::kString;
  OptionGroup group = OptionGroup::kCommand;
  std::string help;
  /// The field the option fills; its value in a default-constructed CommandOptions is the default.
  FieldRef (*field)(CommandOptions&) = nullptr;
  CheckKind check = CheckKind::kNone;
  int64_t min = 1;
  int64_t max = INT64_MAX;
  std::vector<std::string_view> choices;
  std::string_view retired;  ///< kRetired: the message
  std::string_view retired_note;
  Surface surface = Surface::kBoth;
  /// Surface::kCli: why Python does not take it (Python parity, issue 46: every other CLI option of a
  /// command is a keyword of its Python function).
  std::string_view cli_only;
  bool positional = false;       ///< CONFIG, PATTERN
  bool hidden = false;           ///< not in --help, the docs or the signatures (mutation tests only)
  std::string_view python_type;  ///< the stub's type when it is not the type's own ("TreeLike")
  std::vector<OptionVariant> variants;
};

/// One option as one command reads it: the declaration with that command's variant applied.
struct CommandOption {
  const OptionSpec* spec = nullptr;
  /// The declaration's help (or the command's variant's), its "{choices}" written out from the choices and
  /// the default: "train: {choices}" reads "train: adamw (default), adafactor, lion or sgd".
  std::string help;
  Json default_value;  ///< null: none (the option is not given unless the caller gives it)
  std::vector<std::string_view> choices;
  Surface surface = Surface::kBoth;
  std::string_view cli_only;  ///< Surface::kCli: why Python does not take it
  bool required = false;
  OptionGroup group = OptionGroup::kConfig;  ///< the declaration's, or the command's own (OptionVariant::group)

  std::string_view name() const { return spec->name; }
  /// "--max-tensors" (with "-o," before it when there is a short flag).
  std::string Flag() const;
  /// The help with the default appended when the help does not state it.
  std::string HelpText() const;
};

/// How a command ended when it ran (a failed Status is bad input, exit 2, or a bug, exit 3).
enum class Outcome {
  kOk,        ///< exit 0
  kFindings,  ///< exit 1: plan errors, warnings under --strict, a step that does not fit, a failed check
};

struct TreeValue {
  Model::TreePtr tree;
  TreeTotals totals;
  std::string easydel_version;   ///< the version whose template gave the tree; "" for a file or checkpoint
  std::optional<TreeDiff> diff;  ///< --diff
};
struct ExplainValue {
  std::string text;
};
struct SuggestValue {
  SuggestOptions options;
  SuggestResult result;
  std::optional<std::string> page;  ///< --report: the page, when something fits
};
struct ReportValue {
  std::string page;
};
using CommandValue =
    std::variant<std::monostate, Json, TreeValue, std::shared_ptr<const PlanResult>, ExplainValue, ValidateResult,
                 ActivationsResult, MemoryResult, ExportResult, CheckRun, CostResult, SuggestValue, ReportValue>;

struct CommandResult {
  Outcome outcome = Outcome::kOk;
  std::shared_ptr<const Model> model;  ///< the model it ran on
  CommandValue value;                  ///< the pipeline's result, for `document` and `terminal`
};

/// What a command's run may use besides its options.
struct RunContext {
  std::shared_ptr<const Model> model;
  kernels::Engine* engine = nullptr;  ///< check: where the numeric check runs (nullptr: in process)
};

/// A command's options once its checks passed, as its run receives them: the options, and the options of
/// the command's pipeline as the check made them (a Checked<CostOptions>, ...; api/checked.h), which the
/// run hands on without checking them again.
struct CheckedCommand {
  CommandOptions options;
  std::any pipeline;  ///< empty for a command whose check makes none (resolve, tree)

  /// The pipeline's checked options; an internal error when the check made another type (a table bug).
  template <typename Options>
  StatusOr<const Checked<Options>*> Pipeline() const {
    const auto* checked = std::any_cast<Checked<Options>>(&pipeline);
    if (checked == nullptr) return Status::Internal("the command's check made other options than its run reads");
    return checked;
  }
};

/// A command's check that makes its pipeline's options from the command's (`options.Cost()`, ...) and
/// checks them once: what CommandSpec::check returns for a pipeline that takes Checked<Options>.
template <typename Options>
StatusOr<std::any> CheckedPipeline(Options options) {
  EP_ASSIGN_OR_RETURN(Checked<Options> checked, Checked<Options>::Of(std::move(options)));
  return std::any(std::move(checked));
}

/// What a Python call of a command returns.
enum class PythonResult {
  kData,  ///< what `--format json` prints, as Python data
  kText,  ///< the artifact as text (explain, export, report)
  kPlan,  ///< a Plan object over the C++ result (plan)
};
/// "data", "text", "plan": the table's JSON spelling.
std::string_view PythonResultName(PythonResult result);

struct CommandSpec {
  std::string_view name;
  std::string_view summary;
  std::vector<OptionGroup> groups;                  ///< in --help order
  std::vector<std::string_view> options;            ///< ids of its own options, after the groups
  std::vector<std::string_view> python_positional;  ///< options Python takes by position after CONFIG
  /// What a Python call returns, and how its docstring says so ("" = the JSON document as Python data).
  PythonResult python_result = PythonResult::kData;
  std::string_view python_returns;
  /// A plan with errors has no artifact (export): the document is then its findings, in validate's JSON
  /// shape, and Python raises PlanError with them.
  bool findings_instead_of_artifact = false;
  /// The checks across options that need no config, run before the model is loaded: they make the
  /// pipeline's checked options (CheckedPipeline), which `run` receives in CheckedCommand::pipeline.
  std::function<StatusOr<std::any>(const CommandOptions&)> check;
  /// The config options of the model it runs on (tree reads none for --tree or --from).
  std::function<ConfigOptions(const CommandOptions&)> model_config;
  std::function<StatusOr<CommandResult>(const RunContext&, const CheckedCommand&)> run;
  /// What `--format json` prints and Python returns (explain, export, report: their text).
  std::function<std::string(const CommandResult&, const CommandOptions&)> document;
  /// The files a Python call writes besides returning the document: (path, text), e.g. report's
  /// output= and suggest's report= (the CLI writes the same: report's page is its `out`, for -o, and
  /// suggest's page one of its TerminalOutput::files, for --report).
  std::function<std::vector<std::pair<std::string, std::string>>(const CommandResult&, const CommandOptions&)> files;
  /// What the CLI shows, in every --format it takes (json included: as `document`, except that a
  /// command with nothing to show writes nothing where `document` gives the findings): the artifact,
  /// the findings for stderr (verbose: `options.verbose`), the files it writes besides. It fills `shown`
  /// as it goes, so what it showed before a failure (the findings, then a bad --hardware) is still
  /// shown, in that order, as the CLI always printed it.
  std::function<Status(const CommandResult&, const CommandOptions&, TerminalOutput& shown)> terminal;
  /// Where the command runs, started before its checks (check: in process, or MPI under mpirun, whose
  /// other ranks show nothing and agree on the root's exit code; kernels/engine.h). Unset: in process.
  std::function<StatusOr<std::unique_ptr<kernels::Engine>>(const CommandOptions&)> engine;
};

/// Every option, in --help order.
const std::vector<OptionSpec>& AllOptions();

/// The old names and what replaced them.
const std::vector<RenamedOption>& RenamedOptions();

/// Every command, in the CLI's order.
const std::vector<CommandSpec>& AllCommands();

/// The command named `name`; bad input with did-you-mean otherwise.
StatusOr<const CommandSpec*> FindCommand(std::string_view name);

/// The options `command` takes, in --help order: "model" is the Python Model's own (the config options
/// and the limits), "global" the CLI's flags before the command (the limits, --verbose).
StatusOr<std::vector<CommandOption>> OptionsOf(std::string_view command);

/// The commands the table knows, in the CLI's order.
std::vector<std::string> CommandNames();

/// The option names `command` accepts from Python.
StatusOr<std::vector<std::string>> OptionNames(const std::string& command);

/// A flag's text as the option's value: plain decimal integers, finite numbers; "" when `text` is fine
/// for `type`, else the error (CLI11 reports it as "--FLAG: error").
std::string CheckOptionText(OptionType type, const std::string& text);
StatusOr<Json> ParseOptionText(OptionType type, const std::string& text);

/// The options of `command` with every default set (its variants' included).
CommandOptions DefaultOptions(std::string_view command);

/// `word` as one shell word: itself when it holds only characters no shell reads, else single-quoted.
std::string ShellWord(const std::string& word);

/// `easyplan COMMAND CONFIG --FLAG value ...`: the command line that gives `options` to `command`, every
/// flag spelled by the table (the command's options in table order, then the global limits), each option
/// that differs from the command's default (DefaultOptions) written once per value, values as shell words.
/// A missing CONFIG is written "CONFIG". suggest's reproduce commands are made of it.
std::string CommandLine(std::string_view command, const CommandOptions& options);

/// Applies `options` (a JSON object of name -> value; null means "not given") to `out` for `command`,
/// checking each by its declaration and recording it in out->given. `caller` says whose surface applies:
/// kPython refuses the CLI's own options (--format, ...) as unknown. `out` starts from DefaultOptions.
Status ApplyOptions(const std::string& command, const Json& options, CommandOptions* out,
                    Surface caller = Surface::kPython);

/// The whole table as JSON, for the Python module (signatures, docstrings, stubs) and the doc tests:
/// {"commands": [{"name", "summary", "python_positional", "python_result", "python_returns",
///   "findings_instead_of_artifact", "options": [{"name", "flag", "type", "group", "help", "cli_help", "default",
///                "choices", "surface",
///                "positional", "required", "python_type"}]}],
///  "model": [...options], "global": [...options], "renamed": [{"name", "replacement", "commands"}]}
Json CommandTableJson();

/// The checks across the options that need no config (`spec.check`), once. Every caller runs it after
/// ApplyOptions and before the model is loaded, so option errors come before the config's; what it
/// returns is what RunCommand runs.
StatusOr<CheckedCommand> CheckCommandOptions(const CommandSpec& spec, const CommandOptions& options);

/// `spec.run` on `context`, as every caller runs a command. The model is the caller's (the CLI prints
/// its warnings, Python keeps it).
StatusOr<CommandResult> RunCommand(const CommandSpec& spec, const RunContext& context, const CheckedCommand& command);

/// The model a call on `model` with config options `options` runs on (the Python module's Model
/// methods, which take every option of their command): `model` itself when the options are its own;
/// with more `set` values than its own, `model` resolved again with them after its own (Model::WithSets,
/// as the CLI applies --set after the file). Any other config option that differs from the model's
/// (defaults, overrides, devices, strict, schemas_dir) is bad input naming it, with how to give it:
/// those shape the resolved config and its tree, which a Model computes once. An option is never dropped.
/// `command`'s own meaning wins where the command table gives it one (OptionVariant::group): suggest's
/// devices= is the chips it searches (the CLI's `suggest --devices`, api/suggest.h), which each candidate's
/// whole mesh states, not the Model's -1 fill.
StatusOr<std::shared_ptr<const Model>> ModelWithOptions(const std::shared_ptr<const Model>& model,
                                                        const ConfigOptions& options, std::string_view command = {});

/// `plan`'s small parts as JSON: {"rules": [[regex, spec], ...] (the ordered rules, specs resolved),
/// "bytes_per_device": [...], "findings": [...], "failed": bool}. A search over many meshes reads only
/// these (the Python Plan).
StatusOr<Json> PlanSummaryJson(const PlanResult& result);

}  // namespace easyplan::api

#endif  // EASYPLAN_API_COMMAND_TABLE_H_
