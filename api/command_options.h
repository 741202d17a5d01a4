#ifndef EASYPLAN_API_COMMAND_OPTIONS_H_
#define EASYPLAN_API_COMMAND_OPTIONS_H_

// Every command's options by name: the table that turns named values (the Python module's keyword
// arguments, passed as a JSON object) into the option structs of api/options.h. The names are the
// CLI's flags without the leading dashes, dashes as underscores (`--max-tensors` -> max_tensors); an
// unknown name, or a value of the wrong type, is bad input naming the option, what it expects and the
// closest known name.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api/cost.h"
#include "api/options.h"
#include "api/report.h"
#include "api/suggest.h"
#include "api/validate.h"
#include "core/json.h"
#include "core/limits.h"

namespace easyplan::api {

/// The options of one command, whichever it is; each command reads the fields it uses.
struct CommandOptions {
  PlanOptions plan;           ///< with the config options (plan.config) of every command
  bool layout_given = false;  ///< plan.layout was given (export: torch formats default to hf)
  TreeOptions tree;
  MeshOptions mesh;
  ActivationOptions activations;
  MemoryOptions memory;
  std::string max_memory;               ///< validate
  std::string hardware;                 ///< validate (memory's is memory.hardware)
  bool provenance = false;              ///< resolve
  bool diff = false;                    ///< tree
  std::optional<int64_t> rank;          ///< plan: the device whose view is shown
  bool summary = false;                 ///< plan
  std::string pattern;                  ///< explain
  std::string to;                       ///< export
  std::string format = "text";          ///< export: text | json
  std::string level = "all";            ///< check
  uint64_t seed = 0;                    ///< check
  bool check_memory = false;            ///< check --memory
  int64_t max_numeric_devices = 64;     ///< check
  int64_t microbatches = 1;             ///< cost
  bool decode = false;                  ///< cost, suggest
  std::string precision = "bf16";       ///< cost, suggest
  int64_t slices = 1;                   ///< suggest
  int64_t top = 5;                      ///< suggest
  int64_t max_microbatches = 64;        ///< suggest
  std::vector<std::string> rule_files;  ///< suggest: --rules, repeatable
  bool suggest_report = false;          ///< suggest: also the page of SuggestReport
  /// Model (the Python module's keyword arguments): the limits of core/limits.h its Environment gets;
  /// the CLI's are the global flags --max-layers and --max-output-bytes.
  std::optional<int64_t> max_layers;
  std::optional<int64_t> max_output_bytes;

  /// Applies max_layers and max_output_bytes to `limits`; a value below 1 is bad input naming it.
  Status ApplyLimits(Limits* limits) const;

  ValidateOptions Validate() const;
  CostOptions Cost() const;
  ReportOptions Report() const;
  SuggestOptions Suggest() const;
};

/// The commands the table knows, in the CLI's order.
const std::vector<std::string>& CommandNames();

/// The option names `command` accepts (the config options included).
StatusOr<std::vector<std::string>> OptionNames(const std::string& command);

/// Applies `options` (a JSON object of name -> value; null means "not given") to `out` for `command`.
Status ApplyOptions(const std::string& command, const Json& options, CommandOptions* out);

}  // namespace easyplan::api

#endif  // EASYPLAN_API_COMMAND_OPTIONS_H_
