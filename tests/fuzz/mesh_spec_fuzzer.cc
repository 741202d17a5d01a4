// Fuzzes the mesh and spec text a user types (`--mesh`, `--dcn`, `--devices`, a PartitionSpec in
// rule-file JSON form) and cross-checks what the planner derives from them. The input is lines:
//
//   dp=2,fsdp=-1,tp=2        --mesh
//   fsdp=2                   --dcn (empty line: none)
//   16                       --devices (empty line: none)
//   [["fsdp","dp"],"tp"]     a spec
//   [64, 128]                a shape
//   r                        uneven mode: r(eplicate), e(rror), c(hunk)
//
// Properties beyond "no crash": every failure is BadInput; a built mesh has the product of its axis
// sizes as device count, within the limit, DCN factors dividing the axes; a spec survives its JSON
// round trip; CorrectSpec's result can always be laid out (no internal error); for small cases the
// per-device slices tile the tensor exactly `replicas` times; and the XLA HLO sharding text of an
// even layout, read back, puts every device on the same block as the layout does.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/document.h"
#include "core/json_parse.h"
#include "core/partition_spec.h"
#include "planner/export_hlo.h"
#include "planner/layout.h"
#include "planner/mesh_builder.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using namespace easyplan;
using planner::Range;

constexpr int64_t kMaxDevices = 1 << 12;
constexpr int64_t kMaxTilingElements = 1 << 12;  // brute-force tiling check below this many elements
constexpr int64_t kMaxTilingDevices = 64;

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty() && lines.size() < 6) {
    size_t end = text.find('\n');
    lines.push_back(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
  }
  lines.resize(6);
  return lines;
}

// Parses a small decimal integer; nullopt for anything else (the CLI validates --devices itself).
std::optional<int64_t> SmallInt(std::string_view text) {
  if (text.empty() || text.size() > 9) return std::nullopt;
  int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

// An XLA HLO sharding text read back: the tile assignment as a row-major device array.
struct HloTiles {
  bool replicated = false;
  std::vector<int64_t> dims;
  std::vector<int64_t> devices;
  bool last_tile_dim_replicate = false;
};

std::vector<int64_t> ParseIntList(std::string_view text) {
  std::vector<int64_t> values;
  int64_t value = 0;
  bool any = false;
  for (char c : text) {
    if (c >= '0' && c <= '9') {
      value = value * 10 + (c - '0');
      any = true;
    } else if (any) {
      values.push_back(value);
      value = 0;
      any = false;
    }
  }
  if (any) values.push_back(value);
  return values;
}

// Reads "{replicated}", "{devices=[..]<=[..]T(..) ...}" and "{devices=[..]0,1,.. ...}".
HloTiles ReadHlo(std::string_view text) {
  HloTiles tiles;
  fuzz::Check(text.starts_with("{") && text.ends_with("}"), "HLO sharding text is not braced");
  if (text == "{replicated}") {
    tiles.replicated = true;
    return tiles;
  }
  fuzz::Check(text.starts_with("{devices=["), "HLO sharding text lacks devices=[");
  const size_t dims_end = text.find(']');
  tiles.dims = ParseIntList(text.substr(10, dims_end - 10));
  std::string_view rest = text.substr(dims_end + 1);
  tiles.last_tile_dim_replicate = rest.find("last_tile_dim_replicate") != std::string_view::npos;
  rest = rest.substr(0, rest.find(' ') == std::string_view::npos ? rest.size() - 1 : rest.find(' '));
  if (rest.starts_with("<=[")) {
    const size_t reshape_end = rest.find(']');
    std::vector<int64_t> reshape = ParseIntList(rest.substr(3, reshape_end - 3));
    std::vector<int> perm;
    if (size_t t = rest.find("T("); t != std::string_view::npos) {
      for (int64_t p : ParseIntList(rest.substr(t + 2))) perm.push_back(static_cast<int>(p));
    } else {
      for (size_t i = 0; i < reshape.size(); ++i) perm.push_back(static_cast<int>(i));
    }
    tiles.devices = planner::IotaTileAssignmentDevices(reshape, perm);
  } else {
    tiles.devices = ParseIntList(rest);
  }
  int64_t count = 1;
  for (int64_t d : tiles.dims) count *= d;
  fuzz::Check(count == static_cast<int64_t>(tiles.devices.size()), "HLO tile assignment size != product of dims");
  return tiles;
}

// Every element is held by exactly `replicas` devices (brute force; small cases only).
void CheckTiling(const planner::TensorLayout& layout, const Mesh& mesh, int64_t elements) {
  const Shape& shape = layout.shape();
  std::vector<int64_t> held(static_cast<size_t>(elements), 0);
  for (int64_t device = 0; device < mesh.NumDevices(); ++device) {
    std::vector<Range> slice = layout.SliceOf(device);
    fuzz::Check(static_cast<int>(slice.size()) == shape.rank(), "slice rank != tensor rank");
    for (int64_t flat = 0; flat < elements; ++flat) {
      int64_t rest = flat;
      bool inside = true;
      for (int dim = shape.rank() - 1; dim >= 0; --dim) {
        const int64_t size = shape.dims()[static_cast<size_t>(dim)];
        const int64_t index = rest % size;
        rest /= size;
        if (index < slice[static_cast<size_t>(dim)].first || index >= slice[static_cast<size_t>(dim)].second) {
          inside = false;
        }
      }
      if (inside) ++held[static_cast<size_t>(flat)];
    }
  }
  for (int64_t count : held) fuzz::Check(count == layout.replicas(), "an element is not held exactly replicas times");
}

// The HLO text of an even layout puts each device on the layout's block.
void CheckHlo(const planner::TensorLayout& layout, const Mesh& mesh, const PartitionSpec& spec) {
  const Shape& shape = layout.shape();
  HloTiles tiles = ReadHlo(planner::HloShardingText(mesh, spec, shape.rank()));
  if (tiles.replicated) {
    fuzz::Check(layout.replicas() == mesh.NumDevices(), "{replicated} for a sharded layout");
    return;
  }
  const size_t tensor_dims = tiles.dims.size() - (tiles.last_tile_dim_replicate ? 1 : 0);
  fuzz::Check(static_cast<int>(tensor_dims) == shape.rank(), "HLO tile dims != tensor rank");
  for (size_t position = 0; position < tiles.devices.size(); ++position) {
    const int64_t device = tiles.devices[position];
    fuzz::Check(device >= 0 && device < mesh.NumDevices(), "HLO names a device outside the mesh");
    // Coordinates of `position` in the tile array, row-major.
    std::vector<int64_t> coords(tiles.dims.size());
    int64_t rest = static_cast<int64_t>(position);
    for (size_t k = tiles.dims.size(); k-- > 0;) {
      coords[k] = rest % tiles.dims[k];
      rest /= tiles.dims[k];
    }
    std::vector<Range> slice = layout.SliceOf(device);
    for (size_t dim = 0; dim < tensor_dims; ++dim) {
      const int64_t block = layout.shard_shape().dims()[dim];
      fuzz::Check(block > 0 && slice[dim].first == coords[dim] * block, "HLO and layout disagree on a device's block");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string_view> lines = SplitLines(std::string_view(reinterpret_cast<const char*>(data), size));

  StatusOr<planner::AxisSizes> ici = planner::ParseAxisSizes(lines[0], "--mesh");
  fuzz::CheckBadInput(ici.status());
  if (!ici.ok()) return 0;
  planner::MeshRequest request{*ici, std::nullopt, SmallInt(lines[2])};
  if (!lines[1].empty()) {
    StatusOr<planner::AxisSizes> dcn = planner::ParseAxisSizes(lines[1], "--dcn");
    fuzz::CheckBadInput(dcn.status());
    if (!dcn.ok()) return 0;
    request.dcn = *dcn;
  }
  StatusOr<Mesh> built = planner::BuildMesh(request, kMaxDevices);
  fuzz::CheckBadInput(built.status());
  if (!built.ok()) return 0;
  const Mesh& mesh = *built;
  int64_t product = 1;
  for (size_t axis = 0; axis < mesh.shape.size(); ++axis) {
    fuzz::Check(mesh.shape[axis] >= 1, "a mesh axis below 1");
    product *= mesh.shape[axis];
    if (!mesh.dcn_shape.empty()) fuzz::Check(mesh.shape[axis] % mesh.dcn_shape[axis] == 0, "DCN factor !| axis");
  }
  fuzz::Check(product == mesh.NumDevices() && product <= kMaxDevices, "device count != product of axis sizes");

  StatusOr<Document> spec_doc = ParseJsonDocument(lines[3], "spec.json", Limits{});
  if (!spec_doc.ok()) return 0;
  StatusOr<PartitionSpec> spec = PartitionSpec::FromJson(spec_doc->root());
  fuzz::CheckBadInput(spec.status());
  if (!spec.ok()) return 0;
  StatusOr<PartitionSpec> round_trip = PartitionSpec::FromJson(spec->ToJson());
  fuzz::Check(round_trip.ok() && *round_trip == *spec, "a spec does not survive its JSON round trip");

  StatusOr<Document> shape_doc = ParseJsonDocument(lines[4], "shape.json", Limits{});
  if (!shape_doc.ok() || !shape_doc->root().is_array() || shape_doc->root().size() > 6) return 0;
  std::vector<int64_t> dims;
  for (const Json& dim : shape_doc->root()) {
    if (!dim.is_number_integer() || dim.get<int64_t>() < 1 || dim.get<int64_t>() > (1 << 20)) return 0;
    dims.push_back(dim.get<int64_t>());
  }
  const Shape shape(dims);
  const planner::UnevenMode mode = lines[5] == "c"   ? planner::UnevenMode::kChunk
                                   : lines[5] == "e" ? planner::UnevenMode::kError
                                                     : planner::UnevenMode::kReplicate;

  planner::CorrectedSpec corrected = planner::CorrectSpec(shape, *spec, mesh, mode);
  if (corrected.HasError()) return 0;
  StatusOr<planner::TensorLayout> layout = planner::TensorLayout::Make(shape, corrected.spec, mesh, mode);
  // A shape of more than 2^63-1 elements is refused as BadInput (a parameter tree never holds one: its
  // readers refuse it first); the first 30-minute run found this property stated without the exception.
  if (!shape.NumElements()) {
    fuzz::Check(!layout.ok() && layout.status().kind() == ErrorKind::kBadInput,
                "a shape whose element count overflows was laid out");
    return 0;
  }
  fuzz::Check(layout.ok(), "a corrected spec cannot be laid out");
  const int64_t elements = *shape.NumElements();
  if (mesh.NumDevices() <= kMaxTilingDevices && elements <= kMaxTilingElements) {
    CheckTiling(*layout, mesh, elements);
  }
  if (layout->even() && mesh.NumDevices() <= kMaxTilingDevices && corrected.spec.size() <= shape.rank()) {
    CheckHlo(*layout, mesh, corrected.spec);
  }
  return 0;
}
