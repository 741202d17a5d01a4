// Fuzzes what `check --engine mpi` reads about its launch before MPI starts (kernels/mpi_launch.h): the
// launcher's environment variables and the split of a mesh over the processes. The input is lines:
//
//   3                        OMPI_COMM_WORLD_RANK ("-": unset)
//   8                        OMPI_COMM_WORLD_SIZE
//   -                        PMI_RANK
//   -                        PMI_SIZE
//   fsdp=2,tp=4              --mesh
//
// Properties beyond "no crash": every failure is BadInput; an accepted launch has 0 <= rank < size;
// for the mesh, every count ValidProcessCounts lists splits it into blocks that tile the devices in
// order, each a sub-mesh (its axis ranges multiply to its device count, inside the axes); every other
// count up to the device count is refused.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/mpi_launch.h"
#include "planner/mesh_builder.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using namespace easyplan;

constexpr int64_t kMaxDevices = 1 << 10;

std::vector<std::string> SplitLines(std::string_view text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= text.size() && lines.size() < 6) {
    const size_t end = text.find('\n', start);
    lines.emplace_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  lines.resize(5);
  return lines;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<std::string> lines = SplitLines(std::string_view(reinterpret_cast<const char*>(data), size));
  std::map<std::string, std::string> vars;
  const char* names[] = {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE"};
  for (size_t i = 0; i < 4; ++i) {
    if (lines[i] != "-") vars[names[i]] = lines[i];
  }
  const kernels::EnvLookup env = [&vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  const StatusOr<std::optional<kernels::MpiLaunch>> launch = kernels::ReadMpiLaunch(env);
  fuzz::CheckBadInput(launch.status());
  if (launch.ok() && launch->has_value()) {
    fuzz::Check((*launch)->rank >= 0 && (*launch)->rank < (*launch)->size, "accepted rank outside the launch");
  }

  StatusOr<planner::AxisSizes> axes = planner::ParseAxisSizes(lines[4], "--mesh");
  fuzz::CheckBadInput(axes.status());
  if (!axes.ok()) return 0;
  planner::MeshRequest request;
  request.ici = *axes;
  StatusOr<Mesh> mesh = planner::BuildMesh(request, kMaxDevices);
  fuzz::CheckBadInput(mesh.status());
  if (!mesh.ok()) return 0;
  const int64_t devices = mesh->NumDevices();
  const std::vector<int64_t> valid = kernels::ValidProcessCounts(*mesh);
  fuzz::Check(!valid.empty() && valid.front() == 1 && valid.back() == devices, "1 and one per device always work");
  size_t next_valid = 0;
  for (int64_t ranks = 1; ranks <= devices; ++ranks) {
    const bool listed = next_valid < valid.size() && valid[next_valid] == ranks;
    if (listed) ++next_valid;
    const StatusOr<kernels::RankBlock> first = kernels::RankDevices(*mesh, 0, static_cast<int>(ranks));
    fuzz::CheckBadInput(first.status());
    fuzz::Check(first.ok() == listed, "RankDevices disagrees with ValidProcessCounts");
    if (!listed || ranks > 64) continue;  // tile-check the small splits
    int64_t expected_first = 0;
    for (int r = 0; r < ranks; ++r) {
      const StatusOr<kernels::RankBlock> block = kernels::RankDevices(*mesh, r, static_cast<int>(ranks));
      fuzz::Check(block.ok(), "a listed count fails for a later rank");
      fuzz::Check(block->first == expected_first && block->count == devices / ranks, "blocks do not tile in order");
      int64_t product = 1;
      for (size_t k = 0; k < mesh->shape.size(); ++k) {
        fuzz::Check(block->axis_lo[k] >= 0 && block->axis_lo[k] + block->axis_n[k] <= mesh->shape[k],
                    "a block reaches outside an axis");
        product *= block->axis_n[k];
      }
      fuzz::Check(product == block->count, "a block is not a sub-mesh");
      expected_first += block->count;
    }
  }
  return 0;
}
