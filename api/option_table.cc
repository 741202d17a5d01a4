// Every option of easyplan, declared once (api/command_table.h): the CLI's flags and --help, the Python
// module's keyword arguments, signatures and stubs, and docs/OPTIONS.md all come from this list. The
// order is --help's. A default is the initial value of the field an option fills (api/options.h and the
// pipelines' option structs), unless a command's variant says otherwise.
#include <string>
#include <vector>

#include "api/command_table.h"
#include "core/enum_names.h"
#include "core/limits.h"
#include "core/mode.h"
#include "planner/layout.h"
#include "planner/memory.h"
#include "planner/pipeline.h"
#include "step/precision.h"

namespace easyplan::api {
namespace {

// The shortest MPI deadline (--mpi-timeout, --mpi-start-timeout), in seconds. Below it a deadline expires
// while every rank is healthy: MPI_Init alone took up to 0.9 s per rank for 8 ranks on a loaded 2-core
// machine (docs/CHECK.md), and a rank of an oversubscribed job can wait a scheduler's time slices between
// two collectives.
// Such a run ended with exit 3, "a rank stopped answering", though none had (issue 44); refused, it is a
// usage error (docs/CHECK.md, "Faults end the run").
constexpr int64_t kMinMpiWaitSeconds = 1;

// The commands of each kind, for the variants.
const std::vector<std::string_view> kStepModeCommands = {"memory", "cost", "suggest"};

std::vector<OptionSpec> MakeOptions() {
  std::vector<OptionSpec> o;
  const auto add = [&o](OptionSpec spec) -> OptionSpec& {
    if (spec.id.empty()) spec.id = spec.name;
    o.push_back(std::move(spec));
    return o.back();
  };

  // ---- limits (core/limits.h): the CLI's global flags, the Python Model's keyword arguments ----
  add({.name = "max_input_bytes",
       .type = OptionType::kInt,
       .group = OptionGroup::kLimits,
       .help = "refuse input files, and YAML documents with their aliases expanded, larger than this",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.limits.max_input_bytes; },
       .check = CheckKind::kRange});
  add({.name = "max_depth",
       .type = OptionType::kInt,
       .group = OptionGroup::kLimits,
       .help = "refuse JSON/YAML nested deeper than this",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.limits.max_depth; },
       .check = CheckKind::kRange,
       .max = Limits::kMaxDepthCeiling});
  add({.name = "max_values",
       .type = OptionType::kInt,
       .group = OptionGroup::kLimits,
       .help = "refuse documents with more values than this, YAML aliases counted at each use",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.limits.max_values; },
       .check = CheckKind::kRange});
  add({.name = "max_layers",
       .type = OptionType::kInt,
       .group = OptionGroup::kLimits,
       .help = "refuse configs with more layers (num_hidden_layers) than this",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.limits.max_layers; },
       .check = CheckKind::kRange});
  add({.name = "max_output_bytes",
       .type = OptionType::kInt,
       .group = OptionGroup::kLimits,
       .help = "refuse to build an export or report page larger than this",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.limits.max_output_bytes; },
       .check = CheckKind::kRange});
  add({.name = "max_microbatch_count",
       .type = OptionType::kInt,
       .group = OptionGroup::kLimits,
       .help = "refuse a step of more microbatches than this (--microbatches; suggest's --max-microbatches)",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.limits.max_microbatch_count; },
       .check = CheckKind::kRange});
  add({.name = "max_timeline_passes",
       .type = OptionType::kInt,
       .group = OptionGroup::kLimits,
       .help = "refuse to simulate a pipeline timeline (report) of more passes than this",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.limits.max_timeline_passes; },
       .check = CheckKind::kRange});
  add({.name = "verbose",
       .type = OptionType::kFlag,
       .group = OptionGroup::kLimits,
       .help = "also print the notes a user cannot act on (rules of a built-in table that take no tensor)",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.verbose; },
       .surface = Surface::kCli,
       .cli_only = "the terminal's extra notes: Python returns every finding and raises warnings as warnings"});

  // ---- config: how CONFIG becomes a resolved config (`resolve`'s options) ----
  add({.name = "config",
       .group = OptionGroup::kConfig,
       .help = "config.json, a directory holding one, or - for stdin",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.plan.config.config; },
       .surface = Surface::kCli,
       .cli_only = "Python's functions take it as their first argument (a path, a dict, JSON text or a Model)",
       .positional = true,
       .variants = {{.commands = {"resolve", "activations", "suggest"}, .required = true}}});
  add({.name = "defaults",
       .group = OptionGroup::kConfig,
       .help = "EasyDeL defaults for missing attributes: add_basic (a loaded config, the default) or init (the "
               "EasyDeLBaseConfig constructor)",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.plan.config.defaults; },
       .check = CheckKind::kChoice,
       .choices = {"add_basic", "init"}});
  add({.name = "set",
       .type = OptionType::kSets,
       .group = OptionGroup::kConfig,
       .help = "KEY=VALUE override (repeatable); VALUE is JSON or a string; dotted keys reach into objects: "
               "rope_scaling.factor=8",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.plan.config.sets; }});
  add({.name = "overrides",
       .group = OptionGroup::kConfig,
       .help = "YAML or JSON object of overrides (below --set)",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.plan.config.overrides; }});
  add({.name = "devices",
       .type = OptionType::kInt,
       .group = OptionGroup::kConfig,
       .help = "device count: fills the -1 in sharding_axis_dims and checks the product",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.plan.config.devices; },
       .check = CheckKind::kRange,
       .variants = {{.commands = {"suggest"},
                     .help = "the chips to lay the model out on (required)",
                     .group = OptionGroup::kStep}}});
  add({.name = "strict",
       .type = OptionType::kFlag,
       .group = OptionGroup::kConfig,
       .help = "treat warnings (likely typos, unknown model_type) as errors",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.plan.config.strict; }});
  add({.name = "schemas_dir",
       .group = OptionGroup::kConfig,
       .help = "read schemas/ from this checkout directory instead of the built-in copies",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.plan.config.schemas_dir; }});
  add({.name = "easydel_version",
       .group = OptionGroup::kConfig,
       .help = "the EasyDeL commit to describe (schemas/easydel_versions.yaml): 090a03b2 (2026-04, rules generated "
               "from module hooks; the default) or c14e25c9 (2025-11, per-family rule tables)",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.plan.config.easydel_version; }});

  // ---- the parameter tree ----
  add({.name = "tree",
       .group = OptionGroup::kTree,
       .help = "read the tree from a JSON file of the `tree --format json` shape instead of the template",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.plan.tree.file; },
       .python_type = "TreeLike"});
  add({.name = "from",
       .group = OptionGroup::kTree,
       .help = "read the tree from checkpoint metadata: a .safetensors file (header only), a "
               "model.safetensors.index.json, or a directory holding them",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.plan.tree.checkpoint; },
       .python_type = "PathLike"});
  add({.name = "layout",
       .group = OptionGroup::kTree,
       .help = "tensor names: easydel (flax paths, kernels [in, out], experts stacked; the default) or hf (the "
               "checkpoint's names and torch shapes)",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.plan.tree.layout; },
       .check = CheckKind::kChoice,
       .choices = {"easydel", "hf"},
       .variants = {{.commands = {"export"},
                     .help = "tensor names: easydel (flax paths, kernels [in, out], experts stacked) or hf (the "
                             "checkpoint's names); by default hf for --to torch and hf-tp-plan, else easydel",
                     .default_value = ""}}});
  add({.name = "dtype",
       .group = OptionGroup::kTree,
       .help = "parameter dtype of the template tree (default: the config's torch_dtype / dtype)",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.plan.tree.dtype; },
       .check = CheckKind::kDType});
  add({.name = "max_tensors",
       .type = OptionType::kInt,
       .group = OptionGroup::kTree,
       .help = "refuse trees with more tensors than this",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.plan.tree.max_tensors; },
       .check = CheckKind::kRange});

  // ---- the partition rules ----
  add({.name = "rules",
       .group = OptionGroup::kRules,
       .help = "partition rules: builtin (by model_type, the default) or a YAML/JSON rule file",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.plan.rules; }});
  add({.name = "uneven",
       .group = OptionGroup::kRules,
       .help = "a dim its axes do not divide: replicate (eformer's correction, the default), error (JAX), chunk "
               "(torch.chunk, as DTensor)",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.plan.uneven; },
       .check = CheckKind::kChoice,
       .choices = EnumNames(planner::kUnevenModes, planner::UnevenModeName)});
  add({.name = "max_rules",
       .type = OptionType::kInt,
       .group = OptionGroup::kRules,
       .help = "refuse rule files with more rules than this",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.plan.max_rules; },
       .check = CheckKind::kRange});

  // ---- the mesh ----
  add({.name = "mesh",
       .type = OptionType::kMesh,
       .group = OptionGroup::kMesh,
       .help = "mesh axes in mesh order, e.g. dp=1,fsdp=-1,ep=1,tp=8,sp=1 (default: the config's "
               "sharding_axis_dims / sharding_axis_names)",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.plan.mesh.axes; }});
  add({.name = "dcn",
       .type = OptionType::kMesh,
       .group = OptionGroup::kMesh,
       .help = "multi-slice factors, e.g. dp=2: axis sizes become ICI x DCN, DCN major",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.plan.mesh.dcn; }});
  add({.name = "max_devices",
       .type = OptionType::kInt,
       .group = OptionGroup::kMesh,
       .help = "refuse meshes with more devices than this",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.plan.mesh.max_devices; },
       .check = CheckKind::kRange});

  // ---- one command's own ----
  add({.name = "provenance",
       .type = OptionType::kFlag,
       .help = "wrap the output as {config, provenance}: where each top-level value came from",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.provenance; }});
  add({.name = "include_buffers",
       .type = OptionType::kFlag,
       .help = "add the buffers some checkpoints store (rotary inv_freq, causal-mask tables)",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.plan.tree.include_buffers; }});
  add({.name = "diff",
       .type = OptionType::kFlag,
       .help = "with CONFIG and --from: report tensors the template expects but the checkpoint lacks, extra ones, "
               "and shape or dtype mismatches (exit 1 when they differ)",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.diff; }});
  add({.name = "rank",
       .type = OptionType::kInt,
       .help = "also show the slice and replica id device K holds of every tensor",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.rank; },
       .check = CheckKind::kRange,
       .min = 0});
  add({.name = "summary",
       .type = OptionType::kFlag,
       .help = "only the mesh and per-device summary, not one row per tensor",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.summary; }});
  add({.name = "pattern",
       .help = "regex searched in tensor names (unanchored)",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.pattern; },
       .check = CheckKind::kRegex,
       .positional = true});
  add({.name = "to",
       .help = "jax (Python module), jax-json (MaxText golden-dump JSON), xla-hlo (HLO sharding per tensor), "
               "shardy (sdy.mesh + #sdy.sharding), torch (DTensor placements and local shards), hf-tp-plan "
               "(transformers tp_plan), json (the plan, as plan --format json), megatron (Megatron-LM's arguments), "
               "maxtext (MaxText's config keys), rules (the rule set laid on the mesh, as a rule file)",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.to; },
       .variants = {{.commands = {"export"}, .required = true}}});
  add({.id = "export_format",
       .name = "format",
       .help = "text or json: JSON instead of lines for xla-hlo, shardy, megatron and maxtext",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.export_format; },
       .check = CheckKind::kChoice,
       .choices = {"text", "json"}});
  add({.name = "level",
       .help = "layout, numeric or all",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.level; },
       .check = CheckKind::kChoice,
       .choices = {"layout", "numeric", "all"}});
  add({.name = "seed",
       .type = OptionType::kUnsigned,
       .help = "seed of the pseudo-random weights and tokens",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.seed; }});
  add({.id = "check_memory",
       .name = "memory",
       .type = OptionType::kFlag,
       .help = "numeric: compare each simulated device's parameter, residual-stream, logits and KV-cache bytes "
               "with `easyplan memory` (docs/MEMORY.md)",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.check_memory; }});
  add({.name = "max_numeric_devices",
       .type = OptionType::kInt,
       .help = "refuse the numeric check above this many simulated devices",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.max_numeric_devices; },
       .check = CheckKind::kRange});
  add({.name = "engine",
       .help = "where the numeric check's devices run: in-process (default), or mpi under `mpirun -np K` (K "
               "processes, devices/K each; docs/CHECK.md)",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.engine; },
       .check = CheckKind::kChoice,
       .choices = {"in-process", "mpi"},
       .surface = Surface::kCli,
       .cli_only = "the MPI engine is one easyplan process per rank under mpirun; a Python call runs in process"});
  add({.id = "mpi_timeout",
       .name = "mpi_timeout",
       .type = OptionType::kNumber,
       .help = "--engine mpi: seconds any rank waits for the others, once all have started, before ending the "
               "run (at least 1)",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.mpi_timeout_seconds; },
       .check = CheckKind::kSeconds,
       .min = kMinMpiWaitSeconds,
       .surface = Surface::kCli,
       .cli_only = "an MPI launch's wait (--engine mpi), which a Python call never starts"});
  add({.name = "mpi_start_timeout",
       .type = OptionType::kNumber,
       .help = "--engine mpi: seconds for every rank to start (MPI_Init, reading the config) before ending the run "
               "(at least 1)",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.mpi_start_timeout_seconds; },
       .check = CheckKind::kSeconds,
       .min = kMinMpiWaitSeconds,
       .surface = Surface::kCli,
       .cli_only = "an MPI launch's wait (--engine mpi), which a Python call never starts"});
  // Mutation tests only (docs/CHECK.md): deliberately break the run to prove the check fails.
  add({.name = "inject",
       .help = "a fault to inject (mutation tests, docs/CHECK.md)",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.inject; },
       .surface = Surface::kCli,
       .cli_only = "the MPI engine's faults, for the CLI's mutation tests (--engine mpi)",
       .hidden = true});

  // ---- activations: the attention of a runtime mode ----
  add({.id = "attention_layout",
       .name = "layout",
       .help = "attention layout: bthd (default) or bhtd (EasyDeL rejects thd)",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.attention.attention_layout; }});
  add({.name = "qkv_mni",
       .type = OptionType::kFlag,
       .help = "qkv_mni_sharding: shard key/value by the query head axes",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.attention.qkv_mni; }});
  add({.name = "softmax_aux_ndim",
       .type = OptionType::kInt,
       .help = "rank of the softmax aux (sinks), if the model has one",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.attention.softmax_aux_ndim; },
       .check = CheckKind::kRange,
       .max = 64});
  add({.id = "activation_dtype",
       .name = "dtype",
       .help = "activation dtype (default: the config's torch_dtype, else bfloat16)",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.attention.dtype; },
       .check = CheckKind::kDType});
  add({.name = "kernel",
       .help = "attention kernel: vanilla, flash_attn2, sdpa, ring, blocksparse, decode or paged_flash (default: the "
               "config's attn_mechanism, in decode its decode_attn_mechanism)",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.attention.kernel; }});
  add({.name = "cache",
       .help = "KV cache: transformer (default) or ragged (eSurge's RaggedPagesCache)",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.attention.cache; },
       .check = CheckKind::kChoice,
       .choices = {"transformer", "ragged"}});
  add({.name = "page_size",
       .type = OptionType::kInt,
       .help = "--cache ragged: tokens per page (default 128)",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.attention.page_size; },
       .check = CheckKind::kRange});
  add({.name = "num_pages",
       .type = OptionType::kInt,
       .help = "--cache ragged: pages per layer (required: EasyDeL sizes it from the free HBM at run time)",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.attention.num_pages; },
       .check = CheckKind::kRange});
  add({.name = "cache_version",
       .help = "--cache ragged: kv_pages layout v3 (default) or v2",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.attention.cache_version; },
       .check = CheckKind::kChoice,
       .choices = {"v2", "v3"}});

  // ---- the step: mode, batch, sequence ----
  add({.name = "mode",
       .group = OptionGroup::kStep,
       .help = "train (default), prefill (the prompts into the KV cache) or decode (one new token per sequence "
               "against a cache of --seq tokens)",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.memory.mode; },
       .check = CheckKind::kMode,
       .choices = EnumNames(kStepModes, ModeName),
       .variants = {{.commands = kStepModeCommands, .default_value = "train"},
                    {.commands = {"report"},
                     .help = "train, prefill or decode: the step whose memory and time are shown (none by default)"},
                    {.commands = {"activations"},
                     .help = "runtime mode: {choices}",
                     .default_value = "train",
                     .choices = EnumNames(kModes, ModeName)},
                    {.commands = {"validate"},
                     .help = "also check the activations of this runtime mode: train, prefill, decode or insert "
                             "(with --max-memory, train, prefill and decode budget the whole step)",
                     .choices = EnumNames(kModes, ModeName)}}});
  add({.name = "batch",
       .type = OptionType::kInt,
       .group = OptionGroup::kStep,
       .help = "sequences per step (train: of one optimizer step, every microbatch together; prefill: the prompts; "
               "decode: the sequences decoded at once)",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.memory.batch; },
       .check = CheckKind::kRange,
       .variants = {{.commands = {"activations", "validate"},
                     .help = "sequences per step: adds activation shapes, bytes and findings"},
                    {.commands = {"export"},
                     .help = "megatron, maxtext: sequences per optimizer step, every microbatch together "
                             "(--global-batch-size; MaxText's per_device_batch_size x devices)"}}});
  add({.name = "seq",
       .type = OptionType::kInt,
       .group = OptionGroup::kStep,
       .help = "tokens per sequence (prefill: the prompt; decode: the tokens in the KV cache); past the "
               "model's context, an error (learned positions) or a context-length finding (rotary)",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.memory.seq; },
       .check = CheckKind::kRange,
       .variants = {{.commands = {"export"},
                     .help = "megatron, maxtext: tokens per sequence (--seq-length; max_target_length)"}}});

  // ---- what a step holds besides the model ----
  add({.name = "max_length",
       .type = OptionType::kInt,
       .group = OptionGroup::kStepState,
       .help = "decode: tokens the KV cache is allocated for per sequence (default --seq); checked against the "
               "model's context as --seq is",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.memory.max_length; },
       .check = CheckKind::kRange});
  add({.name = "optimizer",
       .group = OptionGroup::kStepState,
       .help = "train: {choices}",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.memory.optimizer; },
       .check = CheckKind::kChoice,
       .choices = EnumNames(planner::kOptimizers, planner::OptimizerName)});
  add({.name = "grad_dtype",
       .group = OptionGroup::kStepState,
       .help = "train: gradient dtype (default: each parameter's dtype)",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.memory.grad_dtype; },
       .check = CheckKind::kDType});
  add({.name = "opt_state_dtype",
       .group = OptionGroup::kStepState,
       .help = "train: optimizer state dtype",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.memory.opt_state_dtype; },
       .check = CheckKind::kDType});
  add({.name = "master_weights",
       .type = OptionType::kFlag,
       .group = OptionGroup::kStepState,
       .help = "train: a float32 master copy of the parameters, counted with the optimizer state",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.memory.master_weights; }});

  // ---- the accelerator and the budget ----
  add({.name = "max_memory",
       .group = OptionGroup::kHardware,
       .help = "the memory budget of one device, e.g. 80GiB (default: the --hardware's, else 80GiB)",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.memory.max_memory; },
       .check = CheckKind::kByteSize,
       .variants = {
           {.commands = {"validate"},
            .help = "bytes a device may hold, e.g. 80GiB: parameters, or with --mode train|prefill|decode --batch "
                    "--seq the whole memory of `easyplan memory` (by default adamw with float32 state)"},
           {.commands = {"activations"},
            .help = "the memory of one device, e.g. 80GiB: the KV cache is shown against it (default: the "
                    "--hardware's)",
            .surface = Surface::kCli,
            .cli_only = "the table's KV-cache budget line; the JSON Python returns has the cache bytes, not a "
                        "budget"}}});
  add({.name = "hardware",
       .group = OptionGroup::kHardware,
       .help = "the accelerator: a profile of schemas/hardware/ (tpu-v5p, h100-sxm, ...), a profile YAML file, or "
               "for a memory budget a memory-only accelerator of schemas/hardware/ (h100-80g, ...)",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.memory.hardware; },
       .variants = {{.commands = {"activations"},
                     .surface = Surface::kCli,
                     .cli_only = "the table's KV-cache budget line; the JSON Python returns has the cache bytes, "
                                 "not a budget"}}});

  // ---- how a step is priced ----
  add({.name = "microbatches",
       .type = OptionType::kInt,
       .group = OptionGroup::kPricing,
       .help = "train: gradient accumulation steps; each runs --batch / M sequences",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.pricing.microbatches; },
       .check = CheckKind::kRange,
       .variants = {{.commands = {"export"},
                     .help = "microbatches per step: through the pipeline, else gradient accumulation steps "
                             "(megatron, maxtext; torch: n_microbatches)"}}});
  add({.name = "decode",
       .type = OptionType::kFlag,
       .group = OptionGroup::kPricing,
       .help = "retired: --mode decode prices one decode step",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.pricing.decode; },
       .check = CheckKind::kRetired,
       .retired = "--decode is now --mode decode: one decode step, each sequence's next token against a KV cache of "
                  "--seq tokens",
       .retired_note = "--mode prefill prices the prompts' prefill"});
  add({.name = "precision",
       .group = OptionGroup::kPricing,
       .help = "matmul precision of the projections: {choices} (at the profile's fp8 peak; attention stays bf16)",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.pricing.precision; },
       .check = CheckKind::kChoice,
       .choices = EnumNames(step::kPrecisions, step::PrecisionName)});

  // ---- the pipeline (docs/PIPELINE.md) ----
  add({.name = "pp_schedule",
       .group = OptionGroup::kPipeline,
       .help = "how the pp axis's stages run the microbatches: {choices}",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.plan.pipeline.schedule; },
       .check = CheckKind::kChoice,
       .choices = EnumNames(planner::kPipelineSchedules, planner::PipelineScheduleName)});
  add({.name = "virtual_stages",
       .type = OptionType::kInt,
       .group = OptionGroup::kPipeline,
       .help = "model chunks per pipeline stage: interleaved's (Megatron-LM's virtual pipeline stages), or gpipe's "
               "circular pipeline (MaxText's num_pipeline_repeats, PyTorch's ScheduleLoopedBFS)",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.plan.pipeline.virtual_stages; },
       .check = CheckKind::kRange,
       .max = 64});
  add({.name = "pp_layers",
       .group = OptionGroup::kPipeline,
       .help = "decoder layers per pipeline stage in order, e.g. 9,8,8,7 (per model chunk with --virtual-stages); "
               "default: equal counts",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.plan.pipeline.layers; }});

  // ---- suggest's search ----
  add({.name = "slices",
       .type = OptionType::kInt,
       .help = "slow-network domains (TPU slices, GPU nodes): factors of dp x fsdp cross them",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.slices; },
       .check = CheckKind::kRange});
  add({.id = "suggest_rules",
       .name = "rules",
       .type = OptionType::kStrings,
       .help = "a rule file tried besides the built-in rules (repeatable)",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.rule_files; }});
  add({.name = "torus",
       .help = "TPU: the slice's torus dims as the job got them, e.g. 4x4x8 (default: Cloud TPU's topology for the "
               "slice's chip count)",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.pricing.torus; }});
  add({.name = "top",
       .type = OptionType::kInt,
       .help = "candidates shown",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.top; },
       .check = CheckKind::kRange});
  add({.name = "max_pp",
       .type = OptionType::kInt,
       .help = "train: most pipeline stages tried; 1 (default) tries none, as EasyDeL has no pipeline axis; e.g. 16 "
               "for Megatron-LM, torchtitan or MaxText",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.max_pp; },
       .check = CheckKind::kRange});
  add({.name = "max_microbatches",
       .type = OptionType::kInt,
       .help = "train: most gradient accumulation steps tried when a step does not fit",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.max_microbatches; },
       .check = CheckKind::kRange});
  add({.name = "max_tpot",
       .type = OptionType::kNumber,
       .help = "decode: drop candidates whose time per output token exceeds MS milliseconds",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.max_tpot_ms; },
       .check = CheckKind::kPositive});

  // ---- output: how the CLI renders and where it writes ----
  add({.name = "format",
       .group = OptionGroup::kOutput,
       .help = "{choices}",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.format; },
       .check = CheckKind::kChoice,
       .choices = {"table", "json"},
       .surface = Surface::kCli,
       .cli_only = "the terminal's rendering: a Python call returns the JSON document as data (or a Plan, or text)",
       .variants = {
           {.commands = {"plan", "activations", "memory", "cost", "suggest"}, .default_value = "table"},
           {.commands = {"resolve"},
            .help = "output format: json or yaml (default json)",
            .default_value = "json",
            .choices = {"json", "yaml"}},
           {.commands = {"tree"}, .help = "{choices}", .default_value = "table", .choices = {"table", "json", "csv"}},
           {.commands = {"validate"},
            .help = "text (default), json, junit (JUnit XML) or github (annotations)",
            .default_value = "text",
            .choices = {"text", "json", "junit", "github"}},
           {.commands = {"check"}, .help = "{choices}", .default_value = "text", .choices = {"text", "json"}}}});
  add({.name = "output",
       .short_flag = "-o",
       .group = OptionGroup::kOutput,
       .help = "write to FILE (atomically) instead of stdout",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.output; },
       .check = CheckKind::kPath,
       .surface = Surface::kCli,
       .cli_only = "where the terminal's rendering goes: a Python call returns its result (report takes it)",
       .python_type = "PathLike",
       .variants = {{.commands = {"report"},
                     .help = "write the page to FILE (atomically) instead of stdout; Python: also return it",
                     .surface = Surface::kBoth}}});
  add({.name = "report",
       .help = "also write an HTML page (as `report` draws it) of the winner, with every candidate and the Pareto "
               "chart, to FILE",
       .field = +[](CommandOptions& c) -> FieldRef { return &c.report; },
       .check = CheckKind::kPath,
       .python_type = "PathLike"});
  return o;
}

}  // namespace

const std::vector<OptionSpec>& AllOptions() {
  static const std::vector<OptionSpec> options = MakeOptions();
  return options;
}

const std::vector<RenamedOption>& RenamedOptions() {
  static const std::vector<RenamedOption> renamed = {
      {"memory_per_device", "--max-memory", "max_memory", {"memory", "cost", "suggest", "report"}},
      {"device",
       "--hardware NAME (the accelerator; the device whose view is shown is plan's --rank)",
       "hardware (the accelerator; the device whose view is shown is plan's rank)",
       {"memory", "cost", "suggest", "report"}},
      {"device",
       "--rank K (the device whose view is shown; the accelerator is --hardware)",
       "rank (the device whose view is shown; the accelerator is hardware)",
       {"plan"}},
  };
  return renamed;
}

}  // namespace easyplan::api
