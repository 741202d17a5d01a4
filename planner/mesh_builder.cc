#include "planner/mesh_builder.h"

#include <fmt/format.h>

#include <charconv>
#include <system_error>

#include "core/checked_math.h"

namespace easyplan::planner {
namespace {

std::string_view Trim(std::string_view text) {
  const size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string_view::npos) return {};
  const size_t end = text.find_last_not_of(" \t");
  return text.substr(begin, end - begin + 1);
}

// "two axes are -1" reads better than "2 axes are -1"; the count is small by construction.
std::string CountWord(size_t n) {
  static constexpr const char* kWords[] = {"no",   "one", "two",   "three", "four",
                                           "five", "six", "seven", "eight", "nine"};
  return n < std::size(kWords) ? kWords[n] : std::to_string(n);
}

// "dp=2 x fsdp=8": the numbers behind a device count, for messages; axes of size 1 add nothing.
std::string Product(const std::vector<std::string>& names, const std::vector<int64_t>& sizes) {
  std::vector<std::string> parts;
  for (size_t k = 0; k < names.size(); ++k) {
    if (sizes[k] != 1) parts.push_back(fmt::format("{}={}", names[k], sizes[k]));
  }
  if (parts.empty()) return "every axis 1";
  return fmt::format("{}", fmt::join(parts, " x "));
}

// "dp=1,fsdp=-1": an AxisSizes as the user would have typed it.
std::string AsTyped(const AxisSizes& axes) {
  std::vector<std::string> parts;
  for (size_t k = 0; k < axes.names.size(); ++k) parts.push_back(fmt::format("{}={}", axes.names[k], axes.sizes[k]));
  return fmt::format("{}", fmt::join(parts, ","));
}

std::string SizeRule() { return "sizes are >= 1, or -1 for the one axis that takes the remaining devices"; }

StatusOr<int64_t> ParseSize(std::string_view number, std::string_view name, const std::string& where) {
  int64_t value = 0;
  const char* end = number.data() + number.size();
  const auto [ptr, ec] = std::from_chars(number.data(), end, value);
  if (ec == std::errc::result_out_of_range) {
    return Status::BadInput({}, fmt::format("{}: size '{}' of axis '{}' does not fit in 64 bits", where, number, name));
  }
  if (ec != std::errc() || ptr != end || number.empty()) {
    return Status::BadInput({}, fmt::format("{}: size '{}' of axis '{}' is not an integer", where, number, name));
  }
  if (value == 0 || value < -1) {
    return Status::BadInput({}, fmt::format("{}: axis '{}' has size {}; {}", where, name, value, SizeRule()));
  }
  return value;
}

// The checks ParseAxisSizes makes, repeated for requests built in code rather than parsed.
Status CheckAxisSizes(const AxisSizes& axes, std::string_view flag) {
  if (axes.names.size() != axes.sizes.size()) {
    return Status::Internal(fmt::format("{}: {} names but {} sizes", flag, axes.names.size(), axes.sizes.size()));
  }
  if (axes.names.empty()) return Status::BadInput({}, fmt::format("{} names no axes", flag));
  for (size_t k = 0; k < axes.names.size(); ++k) {
    if (axes.names[k].empty()) return Status::BadInput({}, fmt::format("{}: axis {} has no name", flag, k));
    if (axes.sizes[k] == 0 || axes.sizes[k] < -1) {
      return Status::BadInput(
          {}, fmt::format("{}: axis '{}' has size {}; {}", flag, axes.names[k], axes.sizes[k], SizeRule()));
    }
    for (size_t j = 0; j < k; ++j) {
      if (axes.names[j] == axes.names[k]) {
        return Status::BadInput({}, fmt::format("{}: axis '{}' is given twice", flag, axes.names[k]));
      }
    }
  }
  return Status();
}

// The DCN factor of every ici axis, 1 where --dcn does not name it.
StatusOr<std::vector<int64_t>> AlignDcn(const AxisSizes& ici, const AxisSizes& dcn) {
  std::vector<int64_t> factors(ici.names.size(), 1);
  for (size_t j = 0; j < dcn.names.size(); ++j) {
    size_t k = 0;
    while (k < ici.names.size() && ici.names[k] != dcn.names[j]) ++k;
    if (k == ici.names.size()) {
      return Status::BadInput({}, fmt::format("--dcn names axis '{}' that is not in the mesh ({})", dcn.names[j],
                                              fmt::join(ici.names, ", ")));
    }
    factors[k] = dcn.sizes[j];
  }
  return factors;
}

std::vector<std::string> NamesOfMinusOnes(const std::vector<std::string>& names, const std::vector<int64_t>& sizes) {
  std::vector<std::string> found;
  for (size_t k = 0; k < sizes.size(); ++k) {
    if (sizes[k] == -1) found.push_back(names[k]);
  }
  return found;
}

// At most one -1 in all: with one in ICI and one in DCN the device count cannot tell them apart.
Status CheckOneMinusOne(const std::vector<std::string>& names, const std::vector<int64_t>& ici,
                        const std::vector<int64_t>& dcn) {
  const std::vector<std::string> in_ici = NamesOfMinusOnes(names, ici);
  const std::vector<std::string> in_dcn = NamesOfMinusOnes(names, dcn);
  if (in_ici.size() > 1) {
    return Status::BadInput({}, fmt::format("{} axes are -1 ({}): at most one can be filled", CountWord(in_ici.size()),
                                            fmt::join(in_ici, ", ")));
  }
  if (in_dcn.size() > 1) {
    return Status::BadInput({}, fmt::format("{} --dcn axes are -1 ({}): at most one can be filled",
                                            CountWord(in_dcn.size()), fmt::join(in_dcn, ", ")));
  }
  if (!in_ici.empty() && !in_dcn.empty()) {
    return Status::BadInput(
        {}, fmt::format("--mesh {}=-1 and --dcn {}=-1 are both -1: at most one can be filled", in_ici[0], in_dcn[0]));
  }
  return Status();
}

// "--mesh dp=2,fsdp=-1 --dcn dp=2": the request as typed, for messages.
std::string Request(const MeshRequest& request) {
  std::string text = "--mesh " + AsTyped(request.ici);
  if (request.dcn) text += " --dcn " + AsTyped(*request.dcn);
  return text;
}

// Fills the single -1 (in ICI or DCN) so that prod(ici) * prod(dcn) == devices.
Status FillMinusOne(const MeshRequest& request, std::vector<int64_t>* ici, std::vector<int64_t>* dcn) {
  int64_t* unknown = nullptr;
  std::string flag;
  for (size_t k = 0; k < ici->size(); ++k) {
    if ((*ici)[k] == -1) {
      unknown = &(*ici)[k];
      flag = "--mesh " + request.ici.names[k] + "=-1";
    }
    if ((*dcn)[k] == -1) {
      unknown = &(*dcn)[k];
      flag = "--dcn " + request.ici.names[k] + "=-1";
    }
  }
  if (unknown == nullptr) return Status();
  if (!request.devices) return Status::BadInput({}, flag + " needs --devices to know how many devices to fill in");
  int64_t others = 1;
  for (const std::vector<int64_t>* sizes : {ici, dcn}) {
    for (int64_t size : *sizes) {
      if (size == -1) continue;
      std::optional<int64_t> next = CheckedMul(others, size);
      if (!next)
        return Status::BadInput({}, "the product of the axis sizes overflows int64 (" + Request(request) + ")");
      others = *next;
    }
  }
  const int64_t devices = *request.devices;
  if (devices % others != 0) {
    return Status::BadInput(
        {}, fmt::format("--devices {} is not divisible by the product of the other axes {}", devices, others));
  }
  *unknown = devices / others;
  return Status();
}

// Global axis sizes (ici * dcn) and their product, refusing overflow and meshes above the limit.
StatusOr<std::vector<int64_t>> GlobalShape(const std::vector<std::string>& names, const std::vector<int64_t>& ici,
                                           const std::vector<int64_t>& dcn, int64_t max_devices) {
  std::vector<int64_t> global(ici.size());
  std::vector<std::string> factors;
  for (size_t k = 0; k < ici.size(); ++k) {
    factors.push_back(dcn[k] == 1 ? fmt::format("{}={}", names[k], ici[k])
                                  : fmt::format("{}={}x{}", names[k], dcn[k], ici[k]));
    std::optional<int64_t> size = CheckedMul(ici[k], dcn[k]);
    if (!size)
      return Status::BadInput({}, fmt::format("axis '{}' of {} x {} overflows int64", names[k], dcn[k], ici[k]));
    global[k] = *size;
  }
  std::optional<int64_t> total = CheckedProduct(global);
  if (!total) {
    return Status::BadInput({}, fmt::format("the mesh size overflows int64 ({})", fmt::join(factors, " x ")));
  }
  if (*total > max_devices) {
    return Status::BadInput({}, fmt::format("the mesh has {} devices ({}), more than the limit of {}", *total,
                                            Product(names, global), max_devices));
  }
  return global;
}

}  // namespace

StatusOr<AxisSizes> ParseAxisSizes(std::string_view text, std::string_view flag, int max_axes) {
  const std::string where = fmt::format("{} '{}'", flag, text);
  if (Trim(text).empty()) {
    return Status::BadInput({}, fmt::format("{} is empty: expected NAME=SIZE,... such as dp=1,fsdp=-1,tp=8", flag));
  }
  AxisSizes out;
  size_t item_start = 0;
  while (item_start <= text.size()) {
    size_t comma = text.find(',', item_start);
    if (comma == std::string_view::npos) comma = text.size();
    const std::string_view item = Trim(text.substr(item_start, comma - item_start));
    item_start = comma + 1;
    if (item.empty()) {
      return Status::BadInput({}, fmt::format("{}: axis {} is empty", where, out.names.size() + 1));
    }
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      return Status::BadInput({}, fmt::format("{}: '{}' has no '=' (expected NAME=SIZE)", where, item));
    }
    const std::string name(Trim(item.substr(0, eq)));
    if (name.empty()) return Status::BadInput({}, fmt::format("{}: '{}' has no axis name", where, item));
    EP_ASSIGN_OR_RETURN(int64_t size, ParseSize(Trim(item.substr(eq + 1)), name, where));
    for (const std::string& seen : out.names) {
      if (seen == name) return Status::BadInput({}, fmt::format("{}: axis '{}' is given twice", where, name));
    }
    out.names.push_back(name);
    out.sizes.push_back(size);
  }
  if (static_cast<int64_t>(out.names.size()) > max_axes) {
    return Status::BadInput({},
                            fmt::format("{}: {} axes, at most {} are supported", where, out.names.size(), max_axes));
  }
  return out;
}

StatusOr<Mesh> BuildMesh(const MeshRequest& request, int64_t max_devices) {
  EP_RETURN_IF_ERROR(CheckAxisSizes(request.ici, "--mesh"));
  const std::vector<std::string>& names = request.ici.names;
  std::vector<int64_t> ici = request.ici.sizes;
  std::vector<int64_t> dcn(ici.size(), 1);
  if (request.dcn) {
    EP_RETURN_IF_ERROR(CheckAxisSizes(*request.dcn, "--dcn"));
    EP_ASSIGN_OR_RETURN(dcn, AlignDcn(request.ici, *request.dcn));
  }
  if (request.devices && *request.devices < 1) {
    return Status::BadInput({}, fmt::format("--devices {}: expected a device count >= 1", *request.devices));
  }
  EP_RETURN_IF_ERROR(CheckOneMinusOne(names, ici, dcn));
  EP_RETURN_IF_ERROR(FillMinusOne(request, &ici, &dcn));
  EP_ASSIGN_OR_RETURN(std::vector<int64_t> global, GlobalShape(names, ici, dcn, max_devices));

  Mesh mesh{.axis_names = names, .shape = std::move(global)};
  if (request.dcn) mesh.dcn_shape = dcn;
  if (request.devices && mesh.NumDevices() != *request.devices) {
    return Status::BadInput({}, fmt::format("the mesh has {} devices ({}) but --devices says {}", mesh.NumDevices(),
                                            Product(names, mesh.shape), *request.devices));
  }
  return mesh;
}

}  // namespace easyplan::planner
