#ifndef EASYPLAN_PLANNER_RUNTIME_VOCABULARY_H_
#define EASYPLAN_PLANNER_RUNTIME_VOCABULARY_H_

// What a runtime accepts, pinned to a commit of its source: schemas/runtimes/megatron.yaml (Megatron-LM's
// command-line flags), maxtext.yaml (MaxText's config keys) and torch_pipelining.yaml (the schedule classes
// of torch.distributed.pipelining). The runtime exports (export_megatron.h, export_maxtext.h, the pipeline of
// export_dtensor.h) check every flag, key and value they write against it, so a name the pinned source does
// not have is a bug that fails the export instead of a run on a cluster. scripts/runtime_vocabulary.py
// generates the first two from the runtimes' sources.
//
//   source: {repo: NVIDIA/Megatron-LM, paths: [megatron/training/arguments.py, ...], commit: d98e8a6...}
//   flags: [--tensor-model-parallel-size, ...]      # any number of named lists
//   choices: {--recompute-granularity: [full, selective], ...}

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/document.h"
#include "core/status.h"

namespace easyplan::planner {

struct RuntimeVocabulary {
  std::string file;  ///< the data file, as messages name it
  std::string repo;
  std::vector<std::string> paths;
  std::string commit;
  std::map<std::string, std::set<std::string>, std::less<>> lists;    ///< "flags" -> names
  std::map<std::string, std::set<std::string>, std::less<>> choices;  ///< a name -> its values

  /// "NVIDIA/Megatron-LM megatron/training/arguments.py at d98e8a64ddf3": where the lists come from.
  std::string Pinned() const;
  /// Ok when `list` holds `name`; else Internal: the export wrote a name the pinned source lacks.
  Status Check(std::string_view list, std::string_view name) const;
  /// Ok when `name`'s choices hold `value` (or the source gives `name` no literal choices); else Internal.
  Status CheckChoice(std::string_view name, std::string_view value) const;
};

/// Reads one schemas/runtimes/*.yaml document. BadInput at the offending key for a malformed file.
StatusOr<RuntimeVocabulary> ParseRuntimeVocabulary(const Document& doc);

}  // namespace easyplan::planner

#endif  // EASYPLAN_PLANNER_RUNTIME_VOCABULARY_H_
