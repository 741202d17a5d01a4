// Fuzzes the safetensors header reader (core/safetensors.h) on whole files as they would lie on
// disk (8-byte length, header JSON, byte buffer), both directly and through the checkpoint reader
// (core/checkpoint.h ReadCheckpoint on the file and on a directory holding it). Also parses the
// input as bare header JSON. Nothing may crash; failures are BadInput; what is accepted is
// self-consistent (offsets tile the buffer, the byte total does not overflow).
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/checkpoint.h"
#include "core/safetensors.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace easyplan;
  std::string bytes(reinterpret_cast<const char*>(data), size);
  SafetensorsLimits limits;
  limits.document.max_values = 100000;

  MemFileSystem fs;
  fs.AddFile("ckpt/model.safetensors", bytes);
  StatusOr<SafetensorsHeader> header = ReadSafetensorsHeader(fs, "ckpt/model.safetensors", limits);
  fuzz::CheckBadInput(header.status());
  if (header.ok()) {
    fuzz::Check(header->data_bytes >= 0, "negative data_bytes");
    fuzz::Check(header->data_bytes <= static_cast<int64_t>(size), "data_bytes beyond the file");
  }
  StatusOr<Checkpoint> checkpoint = ReadCheckpoint(fs, "ckpt", limits);
  fuzz::CheckBadInput(checkpoint.status());
  fuzz::Check(checkpoint.ok() == header.ok(), "ReadCheckpoint(dir) and ReadSafetensorsHeader disagree");
  if (checkpoint.ok()) {
    fuzz::Check(checkpoint->HasAllMetadata(), "a safetensors file left a tensor without metadata");
    StatusOr<int64_t> total = checkpoint->TotalBytes();
    fuzz::CheckBadInput(total.status());
    if (total.ok()) fuzz::Check(*total == header->data_bytes, "tensor bytes do not add up to the buffer");
  }
  fuzz::CheckBadInput(ParseSafetensorsHeader(bytes, static_cast<int64_t>(size), "header.json", limits).status());
  return 0;
}
