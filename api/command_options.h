#ifndef EASYPLAN_API_COMMAND_OPTIONS_H_
#define EASYPLAN_API_COMMAND_OPTIONS_H_

// The options of one command, whichever it is: what the command table (api/command_table.h) fills
// from the CLI's flags or the Python module's keyword arguments. Each concept is held once, in its
// group (the config in plan.config, the tree, rules and mesh in plan, the step in memory, ...); the
// pipelines' option structs are assembled from it (Validate(), Cost(), ...), so no command keeps a copy
// of its own.

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "api/check.h"
#include "api/cost.h"
#include "api/export.h"
#include "api/options.h"
#include "api/report.h"
#include "api/suggest.h"
#include "api/validate.h"
#include "core/limits.h"

namespace easyplan::api {

/// The input limits of core/limits.h as options: the CLI's global flags (--max-layers, ...) and the
/// Python Model's keyword arguments. Only those given replace the Environment's own.
struct LimitOptions {
  int64_t max_input_bytes = static_cast<int64_t>(Limits().max_input_bytes);
  int64_t max_depth = Limits().max_depth;
  int64_t max_values = static_cast<int64_t>(Limits().max_values);
  int64_t max_layers = Limits().max_layers;
  int64_t max_output_bytes = static_cast<int64_t>(Limits().max_output_bytes);
  int64_t max_microbatch_count = Limits().max_microbatch_count;
  int64_t max_timeline_passes = Limits().max_timeline_passes;

  /// Sets the limits whose names are in `given`. REQUIRES: their declared checks passed (ApplyOptions).
  void ApplyTo(Limits* limits, const std::set<std::string>& given) const;
};

struct CommandOptions {
  /// The config (plan.config), the tree (plan.tree, from, layout, dtype, max_tensors), the rules
  /// (plan.rules, uneven, max_rules) and the mesh (plan.mesh, dcn, max_devices).
  PlanOptions plan;
  /// The step: mode, batch, seq, the state a step holds (max_length, optimizer, ...), and the device
  /// (max_memory, hardware). `activations` and `validate` read mode, batch and seq from here too.
  MemoryOptions memory;
  /// The attention options of `activations` (its mode, batch and seq are memory's: see Activations()).
  ActivationOptions attention;
  LimitOptions limits;

  // Defaults are the pipelines' own (their option structs), so a default is written once.
  bool provenance = false;                             ///< resolve
  bool diff = false;                                   ///< tree
  std::optional<int64_t> rank;                         ///< plan: the device whose view is shown
  bool summary = false;                                ///< plan
  std::string pattern;                                 ///< explain
  std::string to;                                      ///< export
  std::string export_format = ExportOptions().format;  ///< export: text | json
  std::string level = CheckOptions().level;
  uint64_t seed = CheckOptions().seed;
  bool check_memory = CheckOptions().memory;  ///< check --memory
  int64_t max_numeric_devices = CheckOptions().max_numeric_devices;
  std::string engine = CheckOptions().engine;
  double mpi_timeout_seconds = CheckOptions().mpi_timeout_seconds;
  double mpi_start_timeout_seconds = CheckOptions().mpi_start_timeout_seconds;
  std::string inject = CheckOptions().inject;  ///< check (mutation tests)
  /// How cost, report and suggest price a step (--microbatches, --precision, --torus); export reads its
  /// microbatches too.
  PricingOptions pricing;
  int64_t slices = SuggestOptions().slices;
  int64_t top = SuggestOptions().top;
  int64_t max_microbatches = SuggestOptions().max_microbatches;
  int64_t max_pp = SuggestOptions().max_pp;
  std::optional<double> max_tpot_ms;    ///< suggest
  std::vector<std::string> rule_files;  ///< suggest: --rules, repeatable
  std::string report;                   ///< suggest: also the page of SuggestReport, written to this path
  std::string format;                   ///< the CLI's rendering of the result (the default is per command)
  std::string output;                   ///< where the CLI (and Python's report) writes it; "" = stdout
  bool verbose = false;                 ///< the CLI's --verbose

  /// The option names (keyword spelling) the caller gave, as opposed to defaults.
  std::set<std::string> given;
  bool Given(const std::string& name) const { return given.count(name) > 0; }

  ActivationOptions Activations() const;
  ValidateOptions Validate() const;
  CostOptions Cost() const;
  ReportOptions Report() const;
  SuggestOptions Suggest() const;
  CheckOptions Check() const;
  ExportOptions Export() const;
};

}  // namespace easyplan::api

#endif  // EASYPLAN_API_COMMAND_OPTIONS_H_
