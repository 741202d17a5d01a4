#include "core/checkpoint.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "core/checked_math.h"
#include "core/document.h"
#include "core/json.h"
#include "core/json_parse.h"
#include "core/json_pointer.h"
#include "core/shape.h"

namespace easyplan {
namespace {

constexpr std::string_view kSafetensorsIndex = "model.safetensors.index.json";
constexpr std::string_view kSafetensorsSingle = "model.safetensors";
constexpr std::string_view kBinIndex = "pytorch_model.bin.index.json";
constexpr std::string_view kSafetensorsSuffix = ".safetensors";

/// The directory part of a path: "a/b/c.json" -> "a/b", "c.json" -> "", "/c.json" -> "/".
std::string DirOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return "";
  return slash == 0 ? "/" : path.substr(0, slash);
}

/// The file-name part of a path: "a/b/c.json" -> "c.json".
std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// `name` inside `dir`; "" and "." mean the working directory and add nothing.
std::string JoinPath(const std::string& dir, const std::string& name) {
  if (dir.empty() || dir == ".") return name;
  return dir.back() == '/' ? dir + name : dir + "/" + name;
}

/// True for names that stay inside the index's directory: no separators, not "." or "..".
bool IsPlainFileName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." &&
         name.find_first_of(std::string_view("/\\\0", 3)) == std::string::npos;
}

std::vector<CheckpointTensor> TensorsOf(SafetensorsHeader header, const std::string& shard) {
  std::vector<CheckpointTensor> tensors;
  tensors.reserve(header.tensors.size());
  for (TensorEntry& entry : header.tensors) tensors.push_back(CheckpointTensor{std::move(entry), true, shard});
  return tensors;
}

StatusOr<Checkpoint> ReadSingleSafetensors(const FileSystem& fs, const std::string& path,
                                           const SafetensorsLimits& limits) {
  EP_ASSIGN_OR_RETURN(SafetensorsHeader header, ReadSafetensorsHeader(fs, path, limits));
  Checkpoint checkpoint;
  checkpoint.source = path;
  checkpoint.tensors = TensorsOf(std::move(header), BaseName(path));
  return checkpoint;
}

/// Every .safetensors file of a directory, merged in file-name order.
StatusOr<Checkpoint> ReadSafetensorsFiles(const FileSystem& fs, const std::string& dir,
                                          const std::vector<std::string>& files, const SafetensorsLimits& limits) {
  Checkpoint checkpoint;
  checkpoint.source = dir;
  std::unordered_map<std::string, std::string> shard_of;  // tensor name -> file that holds it
  for (const std::string& file : files) {
    const std::string path = JoinPath(dir, file);
    EP_ASSIGN_OR_RETURN(SafetensorsHeader header, ReadSafetensorsHeader(fs, path, limits));
    for (const TensorEntry& entry : header.tensors) {
      const auto [it, inserted] = shard_of.emplace(entry.name, file);
      if (!inserted) {
        return Status::BadInput(SourceLoc{path, PointerToMember("", entry.name), 0, 0},
                                "tensor '" + entry.name + "' appears in both '" + it->second + "' and '" + file + "'",
                                {"the .safetensors files of '" + dir + "' are read as the shards of one checkpoint"});
      }
    }
    std::vector<CheckpointTensor> tensors = TensorsOf(std::move(header), file);
    checkpoint.tensors.insert(checkpoint.tensors.end(), std::make_move_iterator(tensors.begin()),
                              std::make_move_iterator(tensors.end()));
  }
  return checkpoint;
}

StatusOr<Checkpoint> ReadIndex(const FileSystem& fs, const std::string& path, const SafetensorsLimits& limits) {
  EP_ASSIGN_OR_RETURN(const int64_t size, fs.FileSize(path));
  if (size > kMaxCheckpointIndexBytes) {
    return Status::BadInput(SourceLoc{path, "", 0, 0},
                            "the index file is " + std::to_string(size) + " bytes, more than the limit of " +
                                std::to_string(kMaxCheckpointIndexBytes) + " bytes (64 MiB) for index files");
  }
  EP_ASSIGN_OR_RETURN(const std::string text, fs.ReadFile(path, static_cast<size_t>(kMaxCheckpointIndexBytes)));
  EP_ASSIGN_OR_RETURN(CheckpointIndex index, ParseCheckpointIndex(text, path, limits.document));

  Checkpoint checkpoint;
  checkpoint.source = path;
  checkpoint.index_total_size = index.total_size;
  checkpoint.tensors.reserve(index.weight_map.size());
  std::unordered_map<std::string, size_t> position_of;  // tensor name -> index in checkpoint.tensors
  std::vector<std::string> shards;                      // in order of first mention
  std::map<std::string, std::vector<size_t>> tensors_of_shard;
  for (auto& [name, shard] : index.weight_map) {
    position_of.emplace(name, checkpoint.tensors.size());
    std::vector<size_t>& members = tensors_of_shard[shard];
    if (members.empty()) shards.push_back(shard);
    members.push_back(checkpoint.tensors.size());
    CheckpointTensor tensor;
    tensor.entry.name = std::move(name);
    tensor.shard = std::move(shard);
    checkpoint.tensors.push_back(std::move(tensor));
  }

  const std::string dir = DirOf(path);
  for (const std::string& shard : shards) {
    const std::string shard_path = JoinPath(dir, shard);
    if (!fs.Exists(shard_path)) {
      checkpoint.missing_shards.push_back(shard);
      continue;
    }
    if (!shard.ends_with(kSafetensorsSuffix)) continue;  // .bin shards are pickles: never opened
    EP_ASSIGN_OR_RETURN(SafetensorsHeader header, ReadSafetensorsHeader(fs, shard_path, limits));
    std::unordered_map<std::string, TensorEntry*> in_header;
    in_header.reserve(header.tensors.size());
    for (TensorEntry& entry : header.tensors) {
      const auto it = position_of.find(entry.name);
      const SourceLoc loc{shard_path, PointerToMember("", entry.name), 0, 0};
      if (it == position_of.end()) {
        return Status::BadInput(loc, "shard '" + shard + "' holds tensor '" + entry.name + "', which the index '" +
                                         path + "' does not list");
      }
      const std::string& mapped = checkpoint.tensors[it->second].shard;
      if (mapped != shard) {
        return Status::BadInput(loc, "shard '" + shard + "' holds tensor '" + entry.name + "' but the index '" + path +
                                         "' maps it to '" + mapped + "'");
      }
      in_header.emplace(entry.name, &entry);
    }
    for (const size_t position : tensors_of_shard[shard]) {
      CheckpointTensor& tensor = checkpoint.tensors[position];
      const auto it = in_header.find(tensor.entry.name);
      if (it == in_header.end()) {
        return Status::BadInput(
            SourceLoc{path, PointerToMember("/weight_map", tensor.entry.name), 0, 0},
            "index maps '" + tensor.entry.name + "' to '" + shard + "' but that shard has no such tensor");
      }
      tensor.entry = std::move(*it->second);
      tensor.has_metadata = true;
    }
  }
  return checkpoint;
}

StatusOr<Checkpoint> ReadDirectory(const FileSystem& fs, const std::string& dir, const SafetensorsLimits& limits) {
  EP_ASSIGN_OR_RETURN(const std::vector<std::string> files, fs.ListFiles(dir));
  const auto has = [&](std::string_view name) { return std::binary_search(files.begin(), files.end(), name); };
  if (has(kSafetensorsIndex)) return ReadIndex(fs, JoinPath(dir, std::string(kSafetensorsIndex)), limits);
  if (has(kSafetensorsSingle)) return ReadSingleSafetensors(fs, JoinPath(dir, std::string(kSafetensorsSingle)), limits);
  std::vector<std::string> safetensors;
  for (const std::string& file : files) {
    if (file.ends_with(kSafetensorsSuffix)) safetensors.push_back(file);
  }
  if (!safetensors.empty()) return ReadSafetensorsFiles(fs, dir, safetensors, limits);
  if (has(kBinIndex)) return ReadIndex(fs, JoinPath(dir, std::string(kBinIndex)), limits);

  std::vector<std::string> notes = {"looked for " + std::string(kSafetensorsIndex) + ", " +
                                    std::string(kSafetensorsSingle) + ", *.safetensors and " + std::string(kBinIndex)};
  for (const std::string& file : files) {
    if (file.ends_with(".json") && file.find(".index") != std::string::npos) {
      notes.push_back("found '" + file + "': pass its path to read it as an index");
    }
  }
  if (has("config.json")) {
    notes.push_back("it holds config.json, a model config: its tree is `easyplan tree " + dir +
                    "` (EasyDeL names) or `easyplan tree " + dir + " --layout hf` (HF names)");
  }
  return Status::BadInput(SourceLoc{dir, "", 0, 0}, "no checkpoint found in '" + dir + "'", std::move(notes));
}

}  // namespace

bool Checkpoint::HasAllMetadata() const {
  return std::all_of(tensors.begin(), tensors.end(), [](const CheckpointTensor& t) { return t.has_metadata; });
}

StatusOr<int64_t> Checkpoint::TotalBytes() const {
  int64_t total = 0;
  for (const CheckpointTensor& tensor : tensors) {
    const SourceLoc loc{source, "", 0, 0};
    if (!tensor.has_metadata) {
      return Status::BadInput(loc, "tensor '" + tensor.entry.name + "' has no shape or dtype: its shard '" +
                                       tensor.shard + "' was not read");
    }
    const std::optional<int64_t> elements = tensor.entry.shape.NumElements();
    const std::optional<int64_t> bytes =
        elements ? ByteSize(*elements, DTypeBits(tensor.entry.dtype)) : std::optional<int64_t>();
    const std::optional<int64_t> sum = bytes ? CheckedAdd(total, *bytes) : std::optional<int64_t>();
    if (!sum) {
      return Status::BadInput(loc, "the checkpoint's size overflows 64 bits at tensor '" + tensor.entry.name + "'");
    }
    total = *sum;
  }
  return total;
}

StatusOr<CheckpointIndex> ParseCheckpointIndex(std::string_view text, const std::string& path, const Limits& limits) {
  EP_ASSIGN_OR_RETURN(const Document document, ParseJsonDocument(text, path, limits));
  if (!document.duplicate_keys().empty()) {
    const std::string& pointer = document.duplicate_keys().front();
    const std::string key = LastPointerKey(pointer);
    const std::string message = ParentPointer(pointer) == "/weight_map"
                                    ? "weight_map lists tensor '" + key + "' more than once"
                                    : "key '" + key + "' appears more than once in the same object";
    return Status::BadInput(document.Locate(pointer), message);
  }
  const Json& root = document.root();
  if (!root.is_object()) {
    return Status::BadInput(document.Locate(""),
                            "an index file must be a JSON object with a \"weight_map\", found " + DescribeFound(root));
  }

  CheckpointIndex index;
  if (root.contains("metadata") && !root.at("metadata").is_null()) {
    const Json& metadata = root.at("metadata");
    if (!metadata.is_object()) {
      return Status::BadInput(document.Locate("/metadata"),
                              "metadata must be an object, found " + DescribeFound(metadata));
    }
    if (metadata.contains("total_size")) {
      const Json& total_size = metadata.at("total_size");
      if (!total_size.is_number_integer() || total_size.get<int64_t>() < 0) {
        return Status::BadInput(
            document.Locate("/metadata/total_size"),
            "metadata.total_size must be a non-negative integer (bytes), found " + DescribeFound(total_size));
      }
      index.total_size = total_size.get<int64_t>();
    }
  }

  if (!root.contains("weight_map")) {
    return Status::BadInput(document.Locate(""), "missing \"weight_map\"",
                            {"an index file maps each tensor name to the shard file that holds it"});
  }
  const Json& weight_map = root.at("weight_map");
  if (!weight_map.is_object()) {
    return Status::BadInput(
        document.Locate("/weight_map"),
        "weight_map must be an object mapping tensor names to shard files, found " + DescribeFound(weight_map));
  }
  index.weight_map.reserve(weight_map.size());
  for (auto it = weight_map.begin(); it != weight_map.end(); ++it) {
    const std::string& name = it.key();
    const SourceLoc loc = document.Locate(PointerToMember("/weight_map", name));
    if (!it.value().is_string()) {
      return Status::BadInput(
          loc, "weight_map maps '" + name + "' to " + DescribeFound(it.value()) + ", expected a shard file name");
    }
    std::string shard = it.value().get<std::string>();
    if (!IsPlainFileName(shard)) {
      return Status::BadInput(
          loc, "weight_map maps '" + name + "' to '" + shard + "', which is not a plain file name beside the index",
          {"shard names may not contain '/' or '\\' or be '.' or '..'"});
    }
    index.weight_map.emplace_back(name, std::move(shard));
  }
  return index;
}

StatusOr<Checkpoint> ReadCheckpoint(const FileSystem& fs, const std::string& path, const SafetensorsLimits& limits) {
  if (fs.IsDirectory(path)) return ReadDirectory(fs, path, limits);
  if (path.ends_with(kSafetensorsSuffix)) return ReadSingleSafetensors(fs, path, limits);
  if (path.ends_with(".json")) return ReadIndex(fs, path, limits);
  EP_RETURN_IF_ERROR(fs.FileSize(path).status());  // "cannot read '<path>': No such file or directory"
  return Status::BadInput(SourceLoc{path, "", 0, 0},
                          "not a checkpoint: expected a .safetensors file, an index .json file or a directory",
                          {"pytorch .bin files are not read; pass their index (pytorch_model.bin.index.json)"});
}

}  // namespace easyplan
