#ifndef EASYPLAN_API_OPTIONS_H_
#define EASYPLAN_API_OPTIONS_H_

// The options of every pipeline, in groups each held once (the config, the tree, the mesh, a runtime
// mode, a step). The command table (api/command_table.h) fills these fields from the CLI's flags and the
// Python module's keyword arguments, and shows their initial values as the defaults, so a default is
// written here once. Validation that needs no config lives beside each pipeline (Check*Options), using
// the table's declared checks; errors name the flag.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/param_tree.h"
#include "step/precision.h"

namespace easyplan::api {

/// How a config becomes a resolved config: `easyplan resolve`'s options, shared by every command
/// that takes a CONFIG.
struct ConfigOptions {
  std::string config;                  ///< config.json, a directory holding one, or "-" (stdin); "" = none
  std::string defaults = "add_basic";  ///< add_basic | init
  std::string overrides;               ///< a YAML or JSON file of overrides
  std::vector<std::string> sets;       ///< KEY=VALUE, VALUE JSON else a string
  std::optional<int64_t> devices;      ///< fills the -1 of sharding_axis_dims
  bool strict = false;                 ///< warnings are errors
  std::string schemas_dir;             ///< "" = the built-in data files
  std::string easydel_version;         ///< schemas/easydel_versions.yaml; "" = its default
};

/// Where the parameter tree comes from and how it is built (`tree`, and every command that plans).
struct TreeOptions {
  std::string layout = "easydel";  ///< easydel | hf
  std::string dtype;               ///< "" = the config's
  bool include_buffers = false;    ///< `tree` only: the buffers some checkpoints store
  std::string file;                ///< --tree: a tree JSON file (`tree --format json` shape), "-" = stdin
  std::string checkpoint;          ///< --from: .safetensors, index JSON or a directory
  int64_t max_tensors = 10'000'000;
  /// Not a flag: a tree the caller built in memory (the Python module's `tree=` list or pytree),
  /// used instead of the template; `file` and `checkpoint` must then be empty.
  std::shared_ptr<const ParamTree> given;
};

/// The mesh: --mesh/--dcn, else the config's sharding_axis_dims (its -1 filled by the config
/// options' `devices`).
struct MeshOptions {
  std::string axes;  ///< --mesh "dp=1,fsdp=-1,ep=1,tp=8,sp=1"
  std::string dcn;   ///< "dp=2": multi-slice factors, DCN major
  int64_t max_devices = int64_t{1} << 22;
};

/// The pipeline the mesh's pp axis runs (docs/PIPELINE.md, planner/pipeline.h).
struct PipelineOptions {
  std::string schedule = "1f1b";  ///< gpipe | 1f1b | interleaved | zero-bubble | dualpipe
  int64_t virtual_stages = 1;     ///< model chunks per stage (interleaved)
  std::string layers;             ///< --pp-layers "9,8,8,7": layers per stage (per chunk); "" = equal counts
  /// Not an option: true for the commands that take the pipeline group (the command table sets it), so a
  /// pp axis given to any other command is refused rather than planned as if it were a data axis.
  bool supported = false;
  /// Not an option of this group: --microbatches when the command was given it (the command table copies
  /// it), which the plan's pipeline-microbatches finding checks against the schedule.
  std::optional<int64_t> microbatches;
  /// Not an option: what a split reads of the model and tree (api/pipeline_inputs.h), when the caller
  /// kept it from an earlier plan of the same model and tree (suggest plans thousands).
  std::shared_ptr<const struct PipelineRoles> roles;
};

/// Everything a plan is built from: the option groups, each held once.
struct PlanOptions {
  ConfigOptions config;  ///< CONFIG is optional with --tree (EasyDeL's default partition_axis applies)
  TreeOptions tree;
  MeshOptions mesh;
  PipelineOptions pipeline;
  std::string rules = "builtin";
  std::string uneven = "replicate";  ///< replicate | error | chunk
  int64_t max_rules = 100'000;
};

/// A runtime mode's activations (`activations`, `validate --mode`).
struct ActivationOptions {
  std::string mode;  ///< "" = not given (validate: no activation findings; activations: train)
  std::string attention_layout = "bthd";
  bool qkv_mni = false;
  std::optional<int> softmax_aux_ndim;
  std::optional<int64_t> batch;
  std::optional<int64_t> seq;
  std::string dtype;                  ///< activation dtype; "" = the config's torch_dtype, else bfloat16
  std::string kernel;                 ///< "" = the config's attn_mechanism (decode: decode_attn_mechanism)
  std::string cache = "transformer";  ///< transformer | ragged (eSurge's RaggedPagesCache)
  std::optional<int64_t> page_size;
  std::optional<int64_t> num_pages;
  std::string cache_version;  ///< v2 | v3; "" = v3
};

/// A training or serving step's memory (`memory`, `validate --max-memory --mode`).
struct MemoryOptions {
  std::string mode;  ///< train, prefill or decode
  std::optional<int64_t> batch;
  std::optional<int64_t> seq;
  std::optional<int64_t> max_length;  ///< decode: the length the KV cache is allocated for (default --seq)
  std::string optimizer = "adamw";
  std::string grad_dtype;  ///< "" = each parameter's dtype
  std::string opt_state_dtype = "float32";
  bool master_weights = false;
  std::string max_memory;  ///< --max-memory, the budget of one device: "" = the hardware's HBM, else 80GiB
  /// --hardware: a profile of schemas/hardware/, a profile file (api/hardware.h), or a memory-only
  /// accelerator of the catalogue (its memory only: enough for a budget, not to price a step).
  std::string hardware;
  std::string activation_dtype;  ///< "" = the config's torch_dtype, else bfloat16
  /// The step's microbatches: `batch` and `seq` are then one microbatch's (the callers divide --batch), and
  /// a pipelined plan's stages keep as many of them as their schedule does (planner/pipeline.h).
  int64_t microbatches = 1;
};

/// How a step is priced, as cost, report and suggest all take it: one group, so its fields and defaults
/// are declared once (CostOptions, ReportOptions and SuggestOptions each hold it whole).
struct PricingOptions {
  /// Training: microbatches per optimizer step (through the pipeline, else gradient accumulation); divides
  /// the batch. suggest searches it (SuggestOptions::max_microbatches) and leaves this at 1.
  int64_t microbatches = 1;
  bool decode = false;  ///< the retired --decode flag: an error naming --mode decode
  /// The projections' matmul precision (bf16 or fp8; attention stays bf16): step::Precision's names.
  std::string precision{step::PrecisionName(step::Precision::kBf16)};
  /// A TPU slice's torus dims as the job got them ("4x4x8"); "" = Cloud TPU's topology for its chips.
  std::string torus;
};

}  // namespace easyplan::api

#endif  // EASYPLAN_API_OPTIONS_H_
