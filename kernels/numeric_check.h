#ifndef EASYPLAN_KERNELS_NUMERIC_CHECK_H_
#define EASYPLAN_KERNELS_NUMERIC_CHECK_H_

// The numeric check: deterministic pseudo-random weights are cut into the shards the plan assigns to
// each simulated device (through planner's TensorLayout), every shard is compared with the slice the
// effective spec names, and the forward pass runs twice over the same code: on one device (the
// unsharded reference) and SPMD over the plan's mesh with explicit collectives. Every layer's output
// and the logits are compared (normalized MSE and max abs error, f64 throughout), as llama.cpp's
// test-backend-ops compares backends with a per-op max_nmse_err. A pipelined plan runs as its stages do,
// each on its own devices with its own shards, the hidden state sent from stage to stage
// (kernels/pipeline_check.h).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/param_tree.h"
#include "core/status.h"
#include "kernels/collectives.h"
#include "kernels/engine.h"
#include "kernels/model.h"
#include "planner/plan.h"

namespace easyplan::kernels {

struct NumericOptions {
  uint64_t seed = 0;
  Injection injection = Injection::kNone;
  int64_t max_devices = 64;
  int64_t max_bytes = int64_t{1} << 30;  ///< host memory for all simulated devices' parameter shards
  /// Where the devices run; nullptr: all in this process. Must outlive the call.
  Engine* engine = nullptr;
};

/// A device's shard that differs from what the effective spec says it should hold.
struct ShardError {
  std::string param;
  int64_t device = -1;
  Dims index;  ///< first bad global index
  double got = 0, want = 0;
  std::string message;
};

struct Comparison {
  std::string name;  ///< "embed", "layer 0", ..., "logits"
  double nmse = 0, max_abs = 0;
  double max_nmse = 0, max_abs_tol = 0;  ///< the tolerances
  bool ok = true;
  int64_t device = -1;  ///< first device holding a bad element (when !ok)
  Dims index;           ///< its first bad global index
};

/// A distributed engine's run against the in-process engine's over the same shards (the root reruns the
/// sharded forward in process): outputs within tolerance of each other, and the same collectives with
/// the same byte counts, record for record.
struct EngineComparison {
  std::string engine;  ///< "mpi"
  int processes = 1;
  int64_t devices_per_process = 0;
  int64_t outputs = 0;      ///< activations compared, every device's block of each
  double max_abs_diff = 0;  ///< largest |engine - in-process| of any element
  double max_nmse = 0;      ///< largest normalized MSE of an activation against the in-process one
  double nmse_tol = 1e-20, abs_tol = 0;
  int64_t records = 0;          ///< collectives compared
  std::string comm_difference;  ///< the first record that differs ("" when identical)
  bool ok() const { return comm_difference.empty() && max_nmse <= nmse_tol && max_abs_diff <= abs_tol; }
};

struct NumericReport {
  int64_t devices = 0;
  int64_t batch = 0, seq = 0;
  int64_t params = 0;
  int64_t param_bytes = 0;  ///< host bytes of every device's shards (f64)
  std::vector<ShardError> shard_errors;
  int64_t shard_errors_total = 0;
  std::vector<Comparison> comparisons;
  bool executed = false;  ///< false when shard shapes were wrong, so the forward could not run
  CommLog comm;
  /// Measured per simulated device, forward only: the bytes of the parameter shards it holds (in each
  /// tensor's dtype), of the residual stream the forward keeps (the embedding output and every layer's
  /// output, in the activation dtype), of the logits block (activation dtype) and, when the model has a
  /// cache, of the KV cache the prefill filled (kvdtype; indexs and starts int32). Empty when not executed;
  /// a pipelined run measures the parameters alone (what each device holds of its stage's).
  std::vector<int64_t> measured_params, measured_residual, measured_logits, measured_kv_cache;
  /// The most activation bytes live at once on each device from the embedding through the last layer
  /// (kernels/live_meter.h: every op result, at the activation dtype, until its last holder goes away;
  /// the KV cache and the logits are their own figures).
  std::vector<int64_t> measured_activation_peak;
  /// Set on the root of a distributed engine's run.
  std::optional<EngineComparison> engine;
  bool ok() const;
};

/// Runs the check of `plan` (over `tree`, EasyDeL layout, the tiny model `model` describes). BadInput
/// when the mesh has more than max_devices devices, a parameter's layout is uneven, a tensor the model
/// needs is missing, the shards would exceed max_bytes, or the engine cannot split the mesh. On a
/// distributed engine every process must call it; only the root's report holds the comparisons, the
/// shard errors and the measured figures of every device.
StatusOr<NumericReport> RunNumericCheck(const ModelDesc& model, const planner::Plan& plan, const ParamTree& tree,
                                        const NumericOptions& options);

/// Deterministic weight of tensor `name`: uniform in [-1, 1] / sqrt(fan-in) (norm scales 1 + noise).
HostTensor MakeWeight(const std::string& name, const Dims& shape, uint64_t seed);

}  // namespace easyplan::kernels

#endif  // EASYPLAN_KERNELS_NUMERIC_CHECK_H_
