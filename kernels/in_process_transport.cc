// The in-process transport: every device's block lives in this process, so a collective is a loop
// over each group's members, summing in member order.
#include <algorithm>

#include "core/status.h"
#include "kernels/engine.h"
#include "kernels/stage_mesh.h"
#include "kernels/transport.h"

namespace easyplan::kernels {
namespace {

class InProcessTransport final : public Transport {
 public:
  explicit InProcessTransport(const MeshGeometry& geo) : geo_(geo) {
    EP_CHECK(geo.whole(), "the in-process transport runs every device");
  }
  explicit InProcessTransport(const Mesh& mesh) : owned_(std::make_unique<MeshGeometry>(mesh)), geo_(*owned_) {}
  const MeshGeometry& geo() const override { return geo_; }

  int64_t AllGather(std::vector<HostTensor>& local, const std::vector<int>& axes, int dim,
                    const std::string& /*what*/) override {
    std::vector<HostTensor> out(local.size());
    for (const std::vector<int64_t>& group : geo_.Groups(axes)) {
      std::vector<const HostTensor*> parts;
      for (int64_t m : group) parts.push_back(&local[static_cast<size_t>(m)]);
      const HostTensor full = Concat(parts, dim);
      for (int64_t m : group) out[static_cast<size_t>(m)] = full;
    }
    const int64_t block = local.empty() ? 0 : local[0].size();
    local = std::move(out);
    return block;
  }

  int64_t AllReduce(std::vector<HostTensor>& local, const std::vector<int>& axes, ReduceOp op,
                    const std::string& /*what*/) override {
    for (const std::vector<int64_t>& group : geo_.Groups(axes)) {
      HostTensor acc = Sum(local, group, op);
      for (int64_t m : group) local[static_cast<size_t>(m)] = acc;
    }
    return local.empty() ? 0 : local[0].size();
  }

  int64_t ReduceScatter(std::vector<HostTensor>& local, const std::vector<int>& axes, int dim,
                        const std::string& /*what*/) override {
    const int64_t block = local.empty() ? 0 : local[0].size();
    const size_t d = static_cast<size_t>(dim);
    for (const std::vector<int64_t>& group : geo_.Groups(axes)) {
      const HostTensor acc = Sum(local, group, ReduceOp::kSum);
      const int64_t length = acc.shape[d] / static_cast<int64_t>(group.size());
      for (size_t i = 0; i < group.size(); ++i) {
        local[static_cast<size_t>(group[i])] = SliceDim(acc, dim, static_cast<int64_t>(i) * length, length);
      }
    }
    return block;
  }

  int64_t AllToAll(std::vector<HostTensor>& local, const std::vector<int>& axes, int from, int to,
                   const std::string& /*what*/) override {
    const int64_t block = local.empty() ? 0 : local[0].size();
    std::vector<HostTensor> out(local.size());
    for (const std::vector<int64_t>& group : geo_.Groups(axes)) {
      std::vector<const HostTensor*> parts;
      for (int64_t m : group) parts.push_back(&local[static_cast<size_t>(m)]);
      const HostTensor joined = Concat(parts, from);
      const int64_t length = joined.shape[static_cast<size_t>(to)] / static_cast<int64_t>(group.size());
      for (size_t i = 0; i < group.size(); ++i) {
        out[static_cast<size_t>(group[i])] = SliceDim(joined, to, static_cast<int64_t>(i) * length, length);
      }
    }
    local = std::move(out);
    return block;
  }

  // Every stage runs here, so a stage's transport is another in-process one, and a boundary hands each
  // device's block to its counterpart.
  std::unique_ptr<Transport> Stage(int pp_axis, int64_t /*stage*/) override {
    EP_CHECK(geo_.mesh().rank() > pp_axis, "a stage of the whole mesh");
    return std::make_unique<InProcessTransport>(StageMesh(geo_.mesh(), pp_axis));
  }

  int64_t SendRecv(const std::vector<HostTensor>& sent, std::vector<HostTensor>& received, const Dims& shape,
                   int /*pp_axis*/, int64_t /*from*/, int64_t /*to*/, const std::string& /*what*/) override {
    for (const HostTensor& b : sent) EP_CHECK(b.shape == shape, "a stage boundary sends equal-shaped blocks");
    received = sent;
    return NumElements(shape);
  }

  std::vector<HostTensor> GatherBlocks(const std::vector<HostTensor>& local) override { return local; }
  std::vector<int64_t> GatherValues(const std::vector<int64_t>& local) override { return local; }

 private:
  // The group's blocks reduced in member order.
  static HostTensor Sum(const std::vector<HostTensor>& local, const std::vector<int64_t>& group, ReduceOp op) {
    std::vector<const HostTensor*> blocks;
    for (int64_t m : group) blocks.push_back(&local[static_cast<size_t>(m)]);
    return ReduceBlocks(blocks, op);
  }

  std::unique_ptr<MeshGeometry> owned_;
  const MeshGeometry& geo_;
};

class InProcessEngine final : public Engine {
 public:
  std::string_view name() const override { return "in-process"; }
  StatusOr<std::unique_ptr<Transport>> Connect(const Mesh& mesh) override { return MakeInProcessTransport(mesh); }
};

}  // namespace

HostTensor ReduceBlocks(const std::vector<const HostTensor*>& blocks, ReduceOp op) {
  HostTensor acc = *blocks[0];
  for (size_t i = 1; i < blocks.size(); ++i) {
    const HostTensor& x = *blocks[i];
    for (size_t e = 0; e < acc.data.size(); ++e) {
      acc.data[e] = op == ReduceOp::kSum ? acc.data[e] + x.data[e] : std::max(acc.data[e], x.data[e]);
    }
  }
  return acc;
}

std::unique_ptr<Transport> MakeInProcessTransport(const MeshGeometry& geo) {
  return std::make_unique<InProcessTransport>(geo);
}

std::unique_ptr<Transport> MakeInProcessTransport(const Mesh& mesh) {
  return std::make_unique<InProcessTransport>(mesh);
}

std::unique_ptr<Engine> MakeInProcessEngine() { return std::make_unique<InProcessEngine>(); }

}  // namespace easyplan::kernels
