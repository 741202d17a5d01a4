#ifndef EASYPLAN_API_OPTIONS_H_
#define EASYPLAN_API_OPTIONS_H_

// The options of every pipeline, one vocabulary for every caller: the CLI binds its flags to these
// fields (the flag is the field's name with dashes, `--max-tensors` -> max_tensors), the Python module
// its keyword arguments (the same names). Defaults here are the defaults everywhere. Validation that
// needs no config lives beside each pipeline (Check*Options); errors name the flag.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/param_tree.h"

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
};

/// Where the parameter tree comes from and how it is built (`tree`, and every command that plans).
struct TreeOptions {
  std::string layout = "easydel";  ///< easydel | hf
  std::string dtype;               ///< "" = the config's
  bool include_buffers = false;
  std::string tree;  ///< a tree JSON file (`tree --format json` shape), "-" = stdin
  std::string from;  ///< a checkpoint: .safetensors, index JSON or a directory
  int64_t max_tensors = 10'000'000;
};

/// The mesh: --mesh/--dcn, else the config's sharding_axis_dims.
struct MeshOptions {
  std::string mesh;  ///< "dp=1,fsdp=-1,ep=1,tp=8,sp=1"
  std::string dcn;   ///< "dp=2": multi-slice factors, DCN major
  std::optional<int64_t> devices;
  int64_t max_devices = int64_t{1} << 22;
};

/// Everything a plan is built from besides the config.
struct PlanOptions {
  ConfigOptions config;  ///< CONFIG is optional with --tree (EasyDeL's default partition_axis applies)
  std::string rules = "builtin";
  std::string mesh;
  std::string dcn;
  std::string uneven = "replicate";  ///< replicate | error | chunk
  std::string layout = "easydel";
  std::string tree;
  std::string from;
  std::string dtype;
  int64_t max_tensors = 10'000'000;
  int64_t max_devices = int64_t{1} << 22;
  int64_t max_rules = 100'000;
  /// Not a flag: a tree the caller built in memory (the Python module's `tree=` list or pytree),
  /// planned instead of the template; --tree and --from must then be empty.
  std::shared_ptr<const ParamTree> given_tree;
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
  std::string mode;  ///< train | serve
  std::optional<int64_t> batch;
  std::optional<int64_t> seq;
  std::optional<int64_t> max_length;  ///< serve: the KV cache length (default --seq)
  std::string optimizer = "adamw";
  std::string grad_dtype;  ///< "" = each parameter's dtype
  std::string opt_state_dtype = "float32";
  bool master_weights = false;
  std::string max_memory;  ///< --max-memory, the budget of one device: "" = the hardware's HBM, else 80GiB
  /// --hardware: a profile of schemas/hardware/, a profile file (api/hardware.h), or an accelerator of
  /// schemas/devices.yaml (its memory only: enough for a budget, not to price a step).
  std::string hardware;
  std::string activation_dtype;  ///< "" = the config's torch_dtype, else bfloat16
};

}  // namespace easyplan::api

#endif  // EASYPLAN_API_OPTIONS_H_
