#include "step/step_time.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "core/checked_math.h"
#include "step/matmul_tiling.h"

namespace easyplan::step {
namespace {

// Device ids in row-major mesh order within a slice (the last axis fastest), as jax.make_mesh lays devices
// out when the fast domain holds whole minor axes: a group stays in one fast domain when its span does.
bool CrossesNetwork(const Mesh& mesh, const std::vector<int>& axes, const step::HardwareProfile& hw) {
  const std::vector<int64_t> stride = mesh.SliceStrides();
  int64_t span = 0;
  for (int a : axes) {
    const size_t k = static_cast<size_t>(a);
    if (!mesh.dcn_shape.empty() && mesh.dcn_shape[k] > 1) return true;
    span += (mesh.shape[k] - 1) * stride[k];
  }
  return hw.fast.chips > 0 && span >= hw.fast.chips;
}

// The fast domains a group spans: the slices of its DCN factors (--dcn), else its size over the members
// it has in the first domain (the devices [0, fast.chips) in row-major order).
int64_t DomainsSpanned(const Mesh& mesh, const std::vector<int>& axes, const step::HardwareProfile& hw) {
  const std::vector<int64_t> stride = mesh.SliceStrides();
  int64_t group = 1, slices = 1;
  std::vector<std::pair<int64_t, int64_t>> members;  // (stride, size) of each axis
  for (int a : axes) {
    const size_t k = static_cast<size_t>(a);
    if (!mesh.dcn_shape.empty()) slices *= std::max<int64_t>(1, mesh.dcn_shape[k]);
    group *= mesh.shape[k];
    members.emplace_back(stride[k], mesh.shape[k]);
  }
  if (slices > 1) return slices;
  const int64_t chips = hw.fast.chips > 0 ? hw.fast.chips : mesh.NumDevices();
  // Members with a device id below `chips`: a depth-first count over the axes, pruned past the domain
  // (at most `chips` leaves).
  int64_t inside = 0;
  std::vector<std::pair<size_t, int64_t>> stack = {{0, 0}};
  while (!stack.empty()) {
    const auto [axis, id] = stack.back();
    stack.pop_back();
    if (axis == members.size()) {
      ++inside;
      continue;
    }
    for (int64_t i = 0; i < members[axis].second && id + i * members[axis].first < chips; ++i) {
      stack.emplace_back(axis + 1, id + i * members[axis].first);
    }
  }
  return std::max<int64_t>(1, group / std::max<int64_t>(1, inside));
}

int64_t RingSteps(kernels::CollectiveKind kind, int64_t group) {
  return kind == kernels::CollectiveKind::kAllReduce ? 2 * (group - 1) : group - 1;
}

// One ring collective, as NCCL's tuner models it (src/graph/tuning.cc, ncclTopoTuneModel and
// ncclTopoGetAlgoTime): a base latency, a latency per ring step and the bytes at the protocol's bus
// bandwidth, under the protocol with the least time (Simple, or LL for small messages where the link
// has it). A ring over `domains` fast domains takes its inter-domain steps (domains - 1, twice for an
// all-reduce) at the network's step latency and the rest at the fast domain's, and its bandwidth is the
// network's, the slowest level it crosses (ncclTopoTuneModel: latencies += (nsteps - nInterSteps) x
// intraLat + nInterSteps x interLat, with intraLat x 1.8 under LL across nodes).
// On a TPU torus (`span`, the fast links only) the ring walks the hops of the dims its group spans and
// uses the links of each ("How to Scale Your Model", sharding/: AllGather over several axes "increases
// the available bandwidth by a factor of n_axes"; a dim without wraparound cannot run a bidirectional
// ring, tpus/: "it typically doubles the time of most communication").
double RingSeconds(const step::HardwareProfile& hw, bool network, int64_t domains, kernels::CollectiveKind kind,
                   int64_t group, int64_t bytes, const step::TorusSpan* span = nullptr) {
  const step::LinkDomain& link = network ? hw.network : hw.fast;
  const bool torus = span != nullptr && !network && span->dims > 0;
  const double steps = torus ? static_cast<double>(span->hops * (kind == kernels::CollectiveKind::kAllReduce ? 2 : 1))
                             : static_cast<double>(RingSteps(kind, group));
  const double inter = network ? static_cast<double>(RingSteps(kind, std::max<int64_t>(domains, 2))) : 0;
  const double intra = std::max(0.0, steps - inter);
  // The network's own measured efficiency where the profile has one, else the fast links' (its comment
  // says which stands in).
  const double efficiency = network ? hw.network_efficiency.value_or(hw.link_efficiency) : hw.link_efficiency;
  const double bandwidth = link.bandwidth * efficiency * (torus ? span->bandwidth_factor : 1.0);
  const double step_latency = network ? inter * link.latency + intra * hw.fast.latency : steps * link.latency;
  double seconds = link.base_latency + step_latency + (bandwidth > 0 ? static_cast<double>(bytes) / bandwidth : 0);
  if (link.low_latency) {
    const step::LinkDomain::LowLatency& ll = *link.low_latency;
    const double fast_ll = hw.fast.low_latency ? hw.fast.low_latency->latency : hw.fast.latency;
    const double ll_steps = network ? inter * ll.latency + intra * 1.8 * fast_ll : steps * ll.latency;
    const double ll_bandwidth = std::min(ll.bandwidth, bandwidth);
    seconds = std::min(seconds, ll.base_latency + ll_steps + static_cast<double>(bytes) / ll_bandwidth);
  }
  return seconds;
}

std::string AxesText(const Mesh& mesh, const std::vector<int>& axes) {
  std::vector<std::string> names;
  for (int a : axes) names.push_back(mesh.axis_names[static_cast<size_t>(a)]);
  return names.size() == 1 ? names[0] : fmt::format("({})", fmt::join(names, ", "));
}

kernels::CollectiveKind Transpose(kernels::CollectiveKind kind) {
  switch (kind) {
    case kernels::CollectiveKind::kAllGather:
      return kernels::CollectiveKind::kReduceScatter;
    case kernels::CollectiveKind::kReduceScatter:
      return kernels::CollectiveKind::kAllGather;
    default:
      return kind;
  }
}

}  // namespace

double AttentionCausalShare(int64_t sequence_shards) {
  return 1.0 - 1.0 / (2.0 * static_cast<double>(std::max<int64_t>(1, sequence_shards)));
}

double CollectiveSeconds(const step::HardwareProfile& hw, const Mesh& mesh, const std::vector<int>& axes,
                         kernels::CollectiveKind kind, int64_t group, int64_t bytes_per_device,
                         const step::TorusSlice* torus) {
  const bool network = CrossesNetwork(mesh, axes, hw);
  const int64_t domains = network ? DomainsSpanned(mesh, axes, hw) : 1;
  std::optional<step::TorusSpan> span;
  if (torus != nullptr && !network) span = step::SpanOf(*torus, axes);
  return RingSeconds(hw, network, domains, kind, group, bytes_per_device, span ? &*span : nullptr);
}

void KindBytes::Add(kernels::CollectiveKind kind, int64_t bytes) {
  switch (kind) {
    case kernels::CollectiveKind::kAllGather:
      all_gather += bytes;
      break;
    case kernels::CollectiveKind::kReduceScatter:
      reduce_scatter += bytes;
      break;
    case kernels::CollectiveKind::kAllReduce:
      all_reduce += bytes;
      break;
    case kernels::CollectiveKind::kAllToAll:
      all_to_all += bytes;
      break;
    case kernels::CollectiveKind::kSendRecv:
      send_recv += bytes;
      break;
  }
}

StatusOr<StepCost> PriceStep(const kernels::DryRunReport& run, const Mesh& mesh, const kernels::ModelDesc& model,
                             const step::HardwareProfile& hw, const StepOptions& options) {
  if (hw.peak_flops_bf16 <= 0 || hw.hbm_bandwidth <= 0 || hw.fast.bandwidth <= 0) {
    return Status::BadInput(
        {hw.source}, "hardware profile '" + hw.name + "' lacks peak_flops_bf16, hbm_bandwidth or fast.bandwidth");
  }
  const bool train = options.mode == Mode::kTrain;
  const int64_t micro = std::max<int64_t>(1, options.microbatches);
  StepCost cost;
  std::map<std::string, LayerCost> layers;
  std::vector<std::string> layer_order;
  auto layer_of = [&](const std::string& scope) -> LayerCost& {
    auto [it, inserted] = layers.try_emplace(scope);
    if (inserted) {
      it->second.scope = scope;
      it->second.count = run.Weight(scope);
      layer_order.push_back(scope);
    }
    return it->second;
  };

  // Compute: the forward's matmuls, busiest device, roofline per op.
  double forward_s = 0, batched_s = 0;
  int64_t batched_flops = 0;
  // FLOP counts are int64 (StepCost's fields): every sum and product is checked, since a huge batch,
  // cache or microbatch count would wrap it.
  bool flops_overflow = false;
  auto add_count = [&flops_overflow](int64_t* sum, int64_t count, int64_t weight) {
    const std::optional<int64_t> weighted = CheckedMul(count, weight);
    const std::optional<int64_t> total = weighted ? CheckedAdd(*sum, *weighted) : std::nullopt;
    if (total) *sum = *total;
    flops_overflow = flops_overflow || !total;
  };
  auto add_flops = [&](int64_t* sum, double flops, int64_t weight) {
    const std::optional<int64_t> count = CheckedFromDouble(flops);
    if (count) add_count(sum, *count, weight);
    flops_overflow = flops_overflow || !count;
  };
  if (options.fp8_matmuls && hw.peak_flops_fp8.value_or(0) <= 0) {
    return Status::BadInput({hw.source}, "hardware profile '" + hw.name + "' has no fp8 matmuls (no peak_flops_fp8)");
  }
  const double flop_rate = hw.peak_flops_bf16 * hw.matmul_efficiency;
  // A fused attention kernel's q.k and p.v run at the rate its authors measured (the profile's
  // attention efficiency), not a plain matmul's.
  const double scores_rate =
      options.flash_attention ? hw.peak_flops_bf16 * hw.attention_efficiency.value_or(hw.matmul_efficiency) : flop_rate;
  // Every other matmul runs at the efficiency its per-device shape reaches (step/matmul_tiling.h), at
  // the peak of its precision.
  const double projection_peak = options.fp8_matmuls ? *hw.peak_flops_fp8 : hw.peak_flops_bf16;
  const double hbm_rate = hw.hbm_bandwidth * hw.hbm_efficiency;
  // A fused kernel computes the score blocks on or below the causal diagonal only; a decode step's one
  // query attends to its whole cache, and vanilla attention computes the whole product, then masks it.
  if (options.flash_attention && options.decode_cache_tokens == 0) {
    cost.attention_causal_share = AttentionCausalShare(kernels::EntryTiles(mesh, model.axes.sequence));
  }
  // The data-parallel degree of the fused MoE block (its tokens are split over these axes only).
  const int64_t expert_data_tiles = kernels::EntryTiles(mesh, model.axes.expert_data);
  for (const kernels::MatmulRecord& m : run.matmuls.records) {
    const bool scores = m.attention_core;
    double flops = static_cast<double>(m.flops) * (scores ? cost.attention_causal_share : 1.0);
    // An fp8 projection reads its operands as one byte each (fp8 weights, or the cast activations and
    // weights of a float8 training recipe) and writes its result in the activation dtype.
    const int64_t operand_bytes = options.fp8_matmuls && !scores ? 1 : model.bytes_per_element;
    double bytes = static_cast<double>(m.operand_elements * operand_bytes +
                                       (m.elements - m.operand_elements) * model.bytes_per_element);
    if (m.routed_experts && model.experts > 0 && model.top_k > 0) {
      // Balanced routing: each expert computes top_k / experts of the rows, and reads its weights once
      // if any row reaches it. A group's tokens x top_k draws reach min(1, draws / experts) of the
      // experts, all of them in training, few in a small decode batch.
      const double routed = static_cast<double>(model.top_k) / static_cast<double>(model.experts);
      const double draws = static_cast<double>(model.batch) * static_cast<double>(model.seq) /
                           static_cast<double>(expert_data_tiles) * static_cast<double>(model.top_k);
      const double touched = std::min(1.0, draws / static_cast<double>(model.experts));
      const double weight_bytes = static_cast<double>(m.weight_elements * operand_bytes);
      flops *= routed;
      bytes = (bytes - weight_bytes) * routed + weight_bytes * touched;
    }
    if (options.flash_attention && scores) bytes = 0;
    double rate = scores_rate;
    if (!(options.flash_attention && scores)) {
      // A routed expert's matmul runs on the rows routed to it: top_k / experts of the dry run's.
      MatmulShape shape{m.batch, m.m, m.n, m.k};
      if (m.routed_experts && model.experts > 0 && model.top_k > 0) {
        shape.m = std::max<int64_t>(1, (m.m * model.top_k + model.experts - 1) / model.experts);
      }
      rate = (scores ? hw.peak_flops_bf16 : projection_peak) * ShapeEfficiency(hw, shape);
    }
    const double seconds = std::max(flops / rate, bytes / hbm_rate);
    const int64_t weight = run.Weight(m.scope);
    forward_s += seconds * static_cast<double>(weight);
    add_flops(&cost.forward_flops, flops, weight);
    if (scores) {
      batched_s += seconds * static_cast<double>(weight);
      add_flops(&batched_flops, flops, weight);
    }
    layer_of(m.scope).compute_s += seconds;
  }
  // Decode: every attention layer reads its KV cache for the one new token (heads and batch as the
  // dry run's q.k and p.v shard them: their FLOPs at one cached token, times the cache length).
  if (options.decode_cache_tokens > 0 && model.layers > 0) {
    const double flops = static_cast<double>(batched_flops) * static_cast<double>(options.decode_cache_tokens);
    const double bytes = static_cast<double>(options.kv_cache_bytes);
    const double seconds = std::max(flops / flop_rate, bytes / hbm_rate);
    forward_s += seconds;
    add_flops(&cost.forward_flops, flops, 1);
    const double per_layer = seconds / static_cast<double>(model.layers);
    for (auto& [scope, layer] : layers) {
      if (scope.starts_with("layer ")) layer.compute_s += per_layer;
    }
  }
  const double matmul_forward_s = forward_s;
  // Memory-bound ops (norms, rotary embeddings, activations, residual adds, softmax, routing): their bytes
  // at the HBM rate, a fused chain counted once (kernels::MemoryOpRecord); a fused attention kernel keeps its
  // core on chip. The backward of an op reads its result's gradient and its saved inputs and writes
  // its inputs' gradients: the result's bytes plus twice the inputs'.
  double memory_forward_s = 0, memory_backward_s = 0;
  for (const kernels::MemoryOpRecord& m : run.matmuls.memory_ops) {
    if (options.flash_attention && m.attention_core) continue;
    const double weight = static_cast<double>(run.Weight(m.scope));
    const double seconds = static_cast<double>(m.read + m.written) / hbm_rate;
    forward_s += seconds * weight;
    memory_forward_s += seconds * weight;
    memory_backward_s += static_cast<double>(m.written + 2 * m.read) / hbm_rate * weight;
    layer_of(m.scope).compute_s += seconds;
  }
  // Backward: input and weight gradients, twice the forward's matmuls, and the memory-bound ops'
  // gradients; recomputation per policy.
  double recompute_s = 0;
  int64_t recompute_flops = 0;
  bool recompute_collectives = false;
  if (train) {
    switch (options.remat) {
      case planner::CheckpointPolicy::kNothingSaveable:  // the whole forward again
        recompute_s = forward_s;
        recompute_flops = cost.forward_flops;
        recompute_collectives = true;
        break;
      case planner::CheckpointPolicy::kDotsNoBatchDims:  // the batched dots (attention) again
        recompute_s = batched_s;
        recompute_flops = batched_flops;
        break;
      default:  // matmul outputs are kept (checkpoint_dots) or everything is
        break;
    }
  }
  const int64_t phases = train ? 3 : 1;
  // A fused kernel's backward recomputes the scores from q and k (it kept only the softmax statistics):
  // five matmuls to the forward's two, 2.5x its FLOPs where a plain matmul's backward is 2x (Dao 2023,
  // Algorithm 2; Dao-AILab/flash-attention benchmarks/benchmark_flash_attention.py counts bwd = 2.5 x fwd).
  const bool recomputes_scores = train && options.flash_attention;
  const double scores_recompute_s = recomputes_scores ? 0.5 * batched_s : 0;
  const double backward_s = train ? 2 * matmul_forward_s + scores_recompute_s + memory_backward_s : 0;
  // Once per step: the optimizer update (and gradient accumulation) and, per microbatch, the loss over
  // the logits, both memory-bound (the bytes the caller counted, StepOptions).
  const double update_s = static_cast<double>(options.update_bytes) / hbm_rate;
  const double loss_s = static_cast<double>(options.loss_bytes) / hbm_rate;
  if (train) {
    cost.microbatch.forward_s = forward_s + loss_s;
    cost.microbatch.backward_s = backward_s + recompute_s;
    cost.microbatch.weight_gradient_s = matmul_forward_s;
  } else {
    cost.microbatch.forward_s = forward_s;
  }
  cost.recompute_s = recompute_s * static_cast<double>(micro);
  cost.update_s = update_s;
  cost.memory_bound_s =
      (memory_forward_s + (train ? memory_backward_s : 0) + loss_s) * static_cast<double>(micro) + update_s;
  cost.compute_s = (forward_s + backward_s + recompute_s + loss_s) * static_cast<double>(micro) + update_s;
  int64_t step_flops = 0;
  add_count(&step_flops, cost.forward_flops, phases);
  add_count(&step_flops, recompute_flops, 1);
  add_count(&step_flops, recomputes_scores ? batched_flops / 2 : 0, 1);
  cost.step_flops = 0;
  add_count(&cost.step_flops, step_flops, micro);
  if (flops_overflow) {
    return Status::BadInput({},
                            "the step's FLOP count does not fit in 64 bits: expected a smaller batch, "
                            "sequence, cache or model");
  }

  // Communication. A TPU slice (one of the --dcn slices) lies on its ICI torus.
  std::optional<step::TorusSlice> torus;
  if (hw.fast.kind == "ici" && !hw.fast.torus.empty()) {
    const std::vector<int64_t> ici = mesh.SliceShape();
    int64_t chips = 1;
    for (int64_t size : ici) chips *= size;
    if (chips <= hw.fast.chips) {
      EP_ASSIGN_OR_RETURN(torus, step::LayOutSlice(hw, ici, options.torus));
      cost.slice = SliceTopology{*torus, ici, chips};
    }
  }
  double overlappable_s = 0, exposed_s = 0;
  auto price = [&](PricedCollective c, const std::vector<int>& axes) {
    c.link = CrossesNetwork(mesh, axes, hw) ? "network" : "fast";
    c.seconds = CollectiveSeconds(hw, mesh, axes, c.kind, c.group, c.bytes_per_device, torus ? &*torus : nullptr);
    c.axes = AxesText(mesh, axes);
    const double total = c.seconds * static_cast<double>(c.count);
    cost.communication_s += total;
    (c.overlapped ? overlappable_s : exposed_s) += total;
    // One microbatch's share (a gradient sync is once per step).
    const double per_microbatch = total / static_cast<double>(micro);
    if (c.phase == "gradient") {
      cost.gradient_sync_s += total;
    } else if (c.overlapped) {
      cost.microbatch.parameter_s += per_microbatch;
      if (c.phase == "forward") cost.microbatch.parameter_gather_s += per_microbatch;
      if (c.phase == "backward" && c.kind == kernels::CollectiveKind::kReduceScatter) {
        cost.microbatch.parameter_reduce_s += per_microbatch;
      }
    } else if (c.phase == "forward") {
      cost.microbatch.forward_exposed_s += per_microbatch;
    } else {
      cost.microbatch.backward_exposed_s += per_microbatch;
    }
    cost.collectives.push_back(std::move(c));
  };
  for (const kernels::CommRecord& r : run.comm.records) {
    // A pipeline's stage sends are the schedule's to price (step/pipeline_step.h).
    if (r.kind == kernels::CollectiveKind::kSendRecv) continue;
    if (r.gradient_sync) {
      // The gradient sync (kernels/step_records.h), once per step: bucketed behind the backward, as DDP and
      // FSDP schedule it.
      if (!train) continue;
      PricedCollective c{"gradient", r.scope, r.op, r.kind, "", r.group_size, 1, r.bytes_per_device};
      c.overlapped = true;
      price(c, r.axes);
      continue;
    }
    const int64_t weight = run.Weight(r.scope);
    // A routed collective at what balanced routing moves (the assumption cost states).
    const int64_t bytes = r.expected_bytes >= 0 ? r.expected_bytes : r.bytes_per_device;
    if (r.backward == kernels::CommRecord::Backward::kOnly) {
      if (!train) continue;
      // A shard_map input's gradient summed over the axes it was replicated on: an activation
      // gradient, on the backward's critical path.
      PricedCollective b{"backward", r.scope, r.op, r.kind, "", r.group_size, weight * micro, bytes};
      price(b, r.axes);
      cost.backward.Add(b.kind, bytes * weight);
      continue;
    }
    cost.forward.Add(r.kind, bytes * weight);
    PricedCollective f{"forward", r.scope, r.op, r.kind, "", r.group_size, weight * micro, bytes};
    f.overlapped = r.parameter && r.kind == kernels::CollectiveKind::kAllGather;
    price(f, r.axes);
    layer_of(r.scope).communication_s += cost.collectives.back().seconds;
    if (!train) continue;
    if (recompute_collectives) {
      PricedCollective again = f;
      again.phase = "recompute";
      price(again, r.axes);
    }
    if (r.backward == kernels::CommRecord::Backward::kNone) continue;
    PricedCollective b = f;
    b.phase = "backward";
    b.kind = Transpose(r.kind);
    // A gathered parameter's gradient is reduce-scattered back to its shards: deferred behind compute.
    b.overlapped = r.parameter;
    price(b, r.axes);
    cost.backward.Add(b.kind, bytes * weight);
    if (r.parameter && r.kind == kernels::CollectiveKind::kAllGather) {
      PricedCollective regather = f;
      regather.phase = "backward";
      price(regather, r.axes);
      cost.backward.Add(kernels::CollectiveKind::kAllGather, bytes * weight);
    }
  }
  cost.exposed_communication_s = exposed_s + std::max(0.0, overlappable_s - cost.compute_s);
  cost.step_time_s = cost.compute_s + cost.exposed_communication_s;
  for (const std::string& scope : layer_order) cost.layers.push_back(layers[scope]);
  return cost;
}

StepCost::Microbatch StepCost::Microbatch::Mean(const Microbatch& a, const Microbatch& b) {
  static constexpr double Microbatch::*kFields[] = {&Microbatch::forward_s,          &Microbatch::backward_s,
                                                    &Microbatch::weight_gradient_s,  &Microbatch::forward_exposed_s,
                                                    &Microbatch::backward_exposed_s, &Microbatch::parameter_s,
                                                    &Microbatch::parameter_gather_s, &Microbatch::parameter_reduce_s};
  // A field added to Microbatch and not here would be left at 0: the sizes tell.
  static_assert(sizeof(Microbatch) == std::size(kFields) * sizeof(double), "Microbatch::Mean misses a field");
  Microbatch out;
  for (double Microbatch::*field : kFields) out.*field = (a.*field + b.*field) / 2;
  return out;
}

}  // namespace easyplan::step
