#include "cli/pipeline_flags.h"

namespace easyplan::cli {

void AddPlanFlags(CLI::App* cmd, api::PlanOptions& flags) {
  AddConfigFlags(cmd, flags.config, /*config_optional=*/true);
  cmd->add_option("--rules", flags.rules,
                  "partition rules: builtin (by model_type, the default) or a YAML/JSON rule file");
  cmd->add_option("--mesh", flags.mesh,
                  "mesh axes in mesh order, e.g. dp=1,fsdp=-1,ep=1,tp=8,sp=1 (default: the config's "
                  "sharding_axis_dims / sharding_axis_names)");
  cmd->add_option("--dcn", flags.dcn, "multi-slice factors, e.g. dp=2: axis sizes become ICI x DCN, DCN major");
  cmd->add_option("--uneven", flags.uneven,
                  "a dim its axes do not divide: replicate (eformer's correction, the default), error (JAX), "
                  "chunk (torch.chunk, as DTensor)");
  cmd->add_option("--layout", flags.layout, "name layout of the template tree: easydel (default) or hf");
  cmd->add_option("--tree", flags.tree, "plan this tree JSON (the `tree --format json` shape) instead of the template");
  cmd->add_option("--from", flags.from, "plan the tensors of this checkpoint (safetensors file, index or directory)");
  cmd->add_option("--dtype", flags.dtype, "parameter dtype of the template tree (default: the config's)");
  cmd->add_option("--max-tensors", flags.max_tensors, "refuse trees with more tensors than this (default 10000000)");
  cmd->add_option("--max-devices", flags.max_devices, "refuse meshes with more devices than this (default 4194304)");
  cmd->add_option("--max-rules", flags.max_rules, "refuse rule files with more rules than this (default 100000)");
}

void AddActivationFlags(CLI::App* cmd, api::ActivationOptions& flags, bool full) {
  cmd->add_option("--mode", flags.mode,
                  full ? "runtime mode: train (default), prefill, decode or insert"
                       : "also check the activations of this runtime mode: train, prefill, decode or insert");
  cmd->add_option("--batch", flags.batch, "sequences per step: adds activation shapes, bytes and findings");
  cmd->add_option("--seq", flags.seq, "tokens per sequence (in decode: the KV cache length)");
  if (!full) return;
  cmd->add_option("--layout", flags.attention_layout, "attention layout: bthd (default) or bhtd (EasyDeL rejects thd)");
  cmd->add_flag("--qkv-mni", flags.qkv_mni, "qkv_mni_sharding: shard key/value by the query head axes");
  cmd->add_option("--softmax-aux-ndim", flags.softmax_aux_ndim,
                  "rank of the softmax aux (sinks), if the model has one");
  cmd->add_option("--dtype", flags.dtype, "activation dtype (default: the config's torch_dtype, else bfloat16)");
  cmd->add_option("--kernel", flags.kernel,
                  "attention kernel: vanilla, flash_attn2, sdpa, ring, blocksparse, decode or paged_flash (default: "
                  "the config's attn_mechanism, in decode its decode_attn_mechanism)");
  cmd->add_option("--cache", flags.cache, "KV cache: transformer (default) or ragged (eSurge's RaggedPagesCache)");
  cmd->add_option("--page-size", flags.page_size, "--cache ragged: tokens per page (default 128)");
  cmd->add_option("--num-pages", flags.num_pages,
                  "--cache ragged: pages per layer (required: EasyDeL sizes it from the free HBM at run time)");
  cmd->add_option("--cache-version", flags.cache_version, "--cache ragged: kv_pages layout v3 (default) or v2");
}

CLI::Option* AddMemoryFlags(CLI::App* cmd, api::MemoryOptions& flags, bool mode_defaults_to_train) {
  if (mode_defaults_to_train) flags.mode = "train";
  CLI::Option* mode = cmd->add_option(
      "--mode", flags.mode,
      mode_defaults_to_train
          ? "train (default), prefill (the prompts into the KV cache), decode (one new token per sequence against "
            "a cache of --seq tokens) or serve (prefill, then decode at the cache length)"
          : "train, prefill, decode or serve: the step whose memory and time are shown (none by default)");
  cmd->add_option("--batch", flags.batch, "sequences per step (required)");
  cmd->add_option("--seq", flags.seq,
                  "tokens per sequence (required; prefill and serve: the prompt; decode: the KV cache's length)");
  AddStepStateFlags(cmd, flags);
  cmd->add_option("--max-memory", flags.max_memory,
                  "the memory budget of one device, e.g. 80GiB (default: the --hardware's, else 80GiB)");
  AddHardwareFlag(cmd, flags.hardware);
  AddRenamedFlag(cmd, "--memory-per-device", "--max-memory");
  AddRenamedFlag(cmd, "--device", "--hardware NAME (the accelerator; the device whose view is shown is plan's --rank)");
  return mode;
}

void AddHardwareFlag(CLI::App* cmd, std::string& hardware) {
  cmd->add_option("--hardware", hardware,
                  "the accelerator: a profile of schemas/hardware/ (tpu-v5p, h100-sxm, ...), a profile YAML file, or "
                  "for a memory budget an accelerator of schemas/devices.yaml (h100-80g, ...)");
}

void AddRenamedFlag(CLI::App* cmd, const std::string& old_name, const std::string& new_name) {
  // Hidden (no group); given at all, it fails the parse (exit 2) with the name to use instead.
  cmd->add_option(old_name)->group("")->expected(0, 1)->each([old_name, new_name](const std::string&) {
    throw CLI::ValidationError(old_name + " was renamed: use " + new_name);
  });
}

void AddStepStateFlags(CLI::App* cmd, api::MemoryOptions& flags) {
  cmd->add_option("--max-length", flags.max_length, "serve: tokens the KV cache holds per sequence (default --seq)");
  cmd->add_option("--optimizer", flags.optimizer, "train: adamw (default), adafactor, lion or sgd");
  cmd->add_option("--grad-dtype", flags.grad_dtype, "train: gradient dtype (default: each parameter's dtype)");
  cmd->add_option("--opt-state-dtype", flags.opt_state_dtype, "train: optimizer state dtype (default float32)");
  cmd->add_flag("--master-weights", flags.master_weights,
                "train: a float32 master copy of the parameters, counted with the optimizer state");
}

void AddPrecisionFlag(CLI::App* cmd, std::string& precision) {
  cmd->add_option("--precision", precision,
                  "matmul precision of the projections: bf16 (default) or fp8 (at the profile's fp8 peak; attention "
                  "stays bf16)");
}

void AddStepPricingFlags(CLI::App* cmd, int64_t& microbatches, bool& decode, std::string& precision) {
  cmd->add_option("--microbatches", microbatches,
                  "train: gradient accumulation steps; each runs --batch / M sequences (default 1)");
  cmd->add_flag("--decode", decode, "retired: --mode decode prices one decode step");
  AddPrecisionFlag(cmd, precision);
}

}  // namespace easyplan::cli
