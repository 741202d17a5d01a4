#include "core/axis_dims.h"

#include "core/checked_math.h"

namespace easyplan {

std::string FormatAxisDims(std::span<const int64_t> dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(dims[i]);
  }
  return out + "]";
}

Status ValidateAxisDims(std::span<const int64_t> dims, const std::string& what) {
  int unknown = 0;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == -1) {
      ++unknown;
    } else if (dims[i] < 1) {
      return Status::BadInput({}, what + " " + FormatAxisDims(dims) + ": entry " + std::to_string(i) + " is " +
                                      std::to_string(dims[i]) + ", expected a positive size or -1");
    }
  }
  if (unknown > 1) {
    return Status::BadInput({}, what + " " + FormatAxisDims(dims) + " has " + std::to_string(unknown) +
                                    " entries of -1; at most one axis can take the remaining devices");
  }
  std::vector<int64_t> known;
  for (int64_t d : dims) {
    if (d != -1) known.push_back(d);
  }
  if (!CheckedProduct(known)) {
    return Status::BadInput({}, what + " " + FormatAxisDims(dims) + ": the product of the sizes overflows 64 bits");
  }
  return Status();
}

StatusOr<std::vector<int64_t>> FillAxisDims(std::span<const int64_t> dims, int64_t devices, const std::string& what) {
  std::vector<int64_t> filled(dims.begin(), dims.end());
  int64_t product = 1;
  int unknown_index = -1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == -1) {
      unknown_index = static_cast<int>(i);
    } else {
      product = *CheckedMul(product, dims[i]);  // validated: cannot overflow
    }
  }
  if (unknown_index >= 0) {
    if (devices % product != 0) {
      return Status::BadInput({}, "cannot fill the -1 in " + what + " " + FormatAxisDims(dims) + " for " +
                                      std::to_string(devices) + " devices: " + std::to_string(devices) +
                                      " is not divisible by the product of the other axes (" + std::to_string(product) +
                                      ")");
    }
    filled[static_cast<size_t>(unknown_index)] = devices / product;
    return filled;
  }
  if (product != devices) {
    return Status::BadInput(
        {}, what + " " + FormatAxisDims(dims) + " uses " + std::to_string(product) + " devices, but there are " +
                std::to_string(devices) +
                "; the product of the axis sizes must equal the device count (or use -1 for one axis)");
  }
  return filled;
}

}  // namespace easyplan
