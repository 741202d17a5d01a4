#include "planner/activation_tensors.h"

#include <fmt/format.h>

#include <optional>

namespace easyplan::planner {

int64_t AxisProduct(const PartitionSpec::Entry& entry, const Mesh& mesh, std::string* unknown) {
  int64_t product = 1;
  for (const std::string& axis : entry) {
    const std::optional<int> index = mesh.AxisIndex(axis);
    if (!index) {
      if (unknown && unknown->empty()) *unknown = axis;
      continue;
    }
    product *= mesh.shape[static_cast<size_t>(*index)];  // the mesh's product does not overflow
  }
  return product;
}

std::string EntryAxesText(const PartitionSpec::Entry& entry, const Mesh& mesh) {
  std::vector<std::string> parts;
  int64_t product = 1;
  for (const std::string& axis : entry) {
    const std::optional<int> index = mesh.AxisIndex(axis);
    const int64_t size = index ? mesh.shape[static_cast<size_t>(*index)] : 1;
    parts.push_back(fmt::format("{}={}", axis, size));
    product *= size;
  }
  if (parts.size() == 1) return parts.front();
  return fmt::format("{} = {}", fmt::join(parts, " x "), product);
}

void ActivationBuilder::AddUneven(Finding finding, const std::string& key) {
  auto [it, inserted] = uneven_index_.try_emplace(key, uneven_.size());
  if (!inserted) {
    uneven_[it->second].count += finding.count;
    return;
  }
  finding.severity = FindingSeverity(finding.code);
  uneven_.push_back(std::move(finding));
}

std::vector<Finding> ActivationBuilder::Take() {
  for (Finding& finding : uneven_) findings_.Add(std::move(finding));
  uneven_.clear();
  return findings_.Take();
}

StatusOr<ActivationTensor> ActivationBuilder::Lay(const std::string& name, Shape shape, DType dtype,
                                                  const PartitionSpec& spec, const std::string& what) {
  ActivationTensor tensor;
  tensor.name = name;
  tensor.shape = shape;
  tensor.dtype = dtype;
  tensor.spec = spec;
  CorrectedSpec corrected = CorrectSpec(shape, spec, mesh_, UnevenMode::kReplicate);
  tensor.effective = corrected.spec;
  for (const SpecIssue& issue : corrected.issues) Report(name, shape, spec, issue, what);
  EP_RETURN_IF_ERROR(Measure(tensor));
  return tensor;
}

Status ActivationBuilder::Measure(ActivationTensor& tensor) const {
  auto layout = TensorLayout::Make(tensor.shape, tensor.effective, mesh_, UnevenMode::kReplicate);
  tensor.shard_shape = layout.ok() ? layout->shard_shape() : tensor.shape;
  const std::optional<int64_t> elements = tensor.shape.NumElements();
  const std::optional<int64_t> shard_elements = tensor.shard_shape.NumElements();
  std::optional<int64_t> bytes = elements ? ByteSize(*elements, DTypeBits(tensor.dtype)) : std::nullopt;
  std::optional<int64_t> shard = shard_elements ? ByteSize(*shard_elements, DTypeBits(tensor.dtype)) : std::nullopt;
  if (!bytes || !shard) return Status::BadInput({}, tensor.name + " " + tensor.shape.ToString() + " overflows int64");
  tensor.bytes = *bytes;
  tensor.bytes_per_device = *shard;
  return Status();
}

void ActivationBuilder::Report(const std::string& name, const Shape& shape, const PartitionSpec& spec,
                               const SpecIssue& issue, const std::string& what) {
  Finding finding;
  finding.tensor = name;
  finding.count = 1;
  const std::string label = fmt::format("{} {} {}", ModeName(mode_), name, shape.ToString());
  switch (issue.kind) {
    case SpecIssue::Kind::kUnknownAxis:
      finding.code = FindingCode::kUnknownAxis;
      finding.message = fmt::format(
          "{}: {} names mesh axis '{}', which the mesh ({}) does not have, so {} drops "
          "the entry",
          label, spec.ToString(), issue.axis, mesh_.ToString(), what);
      AddUneven(std::move(finding), fmt::format("unknown|{}|{}", what, issue.axis));
      return;
    case SpecIssue::Kind::kDuplicateAxis:
      finding.code = FindingCode::kDuplicateAxis;
      finding.message = fmt::format("{}: {} uses mesh axis '{}' twice", label, spec.ToString(), issue.axis);
      findings_.Add(std::move(finding), issue.dim, issue.axis);
      return;
    case SpecIssue::Kind::kUnevenReplaced:
    case SpecIssue::Kind::kIndivisible:
    case SpecIssue::Kind::kUnevenChunked: {
      finding.code = FindingCode::kUnevenReplaced;
      finding.message = fmt::format("{}: dim {} ({}) is not divisible by {}, so {} leaves it unsharded", label,
                                    issue.dim, issue.dim_size, EntryAxesText(spec[issue.dim], mesh_), what);
      finding.notes.push_back(fmt::format("dim {} shards over {} when it is a multiple of {}", issue.dim,
                                          fmt::join(spec[issue.dim], " x "), issue.partitions));
      AddUneven(std::move(finding),
                fmt::format("{}|{}|{}|{}", what, issue.dim, fmt::join(spec[issue.dim], ","), issue.dim_size));
      return;
    }
    case SpecIssue::Kind::kTruncated:
      return;
  }
}

}  // namespace easyplan::planner
