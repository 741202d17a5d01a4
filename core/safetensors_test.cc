#include "core/safetensors.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "core/json.h"
#include "core/safetensors_test_util.h"

namespace easyplan {
namespace {

using testing::LengthPrefix;
using testing::MakeSafetensors;
using testing::RawSafetensors;
using testing::RecordingFileSystem;

// ---------------------------------------------------------------------------------------------
// Test helpers

/// Parses a header (as a file "m.safetensors") and returns its error; fails the test if it parses.
Status HeaderError(std::string_view header, int64_t data_bytes, const SafetensorsLimits& limits = {}) {
  StatusOr<SafetensorsHeader> parsed = ParseSafetensorsHeader(header, data_bytes, "m.safetensors", limits);
  EXPECT_FALSE(parsed.ok()) << "parsed: " << header;
  if (parsed.ok()) return Status::Internal("unexpectedly parsed");
  EXPECT_EQ(parsed.status().kind(), ErrorKind::kBadInput);
  EXPECT_EQ(parsed.status().diag().loc.file, "m.safetensors");
  return parsed.status();
}

std::string HeaderMessage(std::string_view header, int64_t data_bytes, const SafetensorsLimits& limits = {}) {
  Status status = HeaderError(header, data_bytes, limits);
  return status.ok() ? "" : status.diag().message;
}

/// The error of reading `contents` as the file "dir/m.safetensors".
Status FileError(const std::string& contents, const SafetensorsLimits& limits = {}) {
  MemFileSystem mem;
  mem.AddFile("dir/m.safetensors", contents);
  StatusOr<SafetensorsHeader> header = ReadSafetensorsHeader(mem, "dir/m.safetensors", limits);
  EXPECT_FALSE(header.ok());
  if (header.ok()) return Status::Internal("unexpectedly parsed");
  EXPECT_EQ(header.status().kind(), ErrorKind::kBadInput);
  return header.status();
}

// ---------------------------------------------------------------------------------------------
// Valid files

TEST(SafetensorsTest, ValidFileRoundTripsNamesShapesDtypesAndMetadata) {
  MemFileSystem mem;
  mem.AddFile("m.safetensors", MakeSafetensors({{"model.embed_tokens.weight", "BF16", {32, 8}},
                                                {"model.norm.weight", "F32", {8}},
                                                {"model.layers.0.mlp.experts.scale", "F8_E8M0", {4, 2}},
                                                {"step", "I64", {}}},
                                               {{"format", "pt"}}));
  StatusOr<SafetensorsHeader> header = ReadSafetensorsHeader(mem, "m.safetensors");
  ASSERT_TRUE(header.ok()) << header.status().ToString();
  const std::vector<TensorEntry> expected = {
      {"model.embed_tokens.weight", Shape{32, 8}, DType::kBFloat16, TensorRole::kParameter},
      {"model.norm.weight", Shape{8}, DType::kFloat32, TensorRole::kParameter},
      {"model.layers.0.mlp.experts.scale", Shape{4, 2}, DType::kFloat8E8M0FNU, TensorRole::kParameter},
      {"step", Shape{}, DType::kInt64, TensorRole::kParameter},
  };
  EXPECT_EQ(header->tensors, expected);
  EXPECT_EQ(header->metadata, (std::map<std::string, std::string>{{"format", "pt"}}));
  EXPECT_EQ(header->data_bytes, 32 * 8 * 2 + 8 * 4 + 8 + 8);
}

TEST(SafetensorsTest, RealFileSystemRoundTrip) {
  std::string pattern = (std::filesystem::temp_directory_path() / "easyplan_st_test_XXXXXX").string();
  ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
  const std::string path = pattern + "/model.safetensors";
  {
    std::ofstream out(path, std::ios::binary);
    out << MakeSafetensors({{"a", "F16", {3, 5}}, {"b", "U8", {7}}});
  }
  RealFileSystem real;
  StatusOr<SafetensorsHeader> header = ReadSafetensorsHeader(real, path);
  std::filesystem::remove_all(pattern);
  ASSERT_TRUE(header.ok()) << header.status().ToString();
  ASSERT_EQ(header->tensors.size(), 2u);
  EXPECT_EQ(header->tensors[0].name, "a");
  EXPECT_EQ(header->tensors[0].shape, (Shape{3, 5}));
  EXPECT_EQ(header->tensors[0].dtype, DType::kFloat16);
  EXPECT_EQ(header->tensors[1].name, "b");
  EXPECT_EQ(header->tensors[1].dtype, DType::kUInt8);
  EXPECT_EQ(header->data_bytes, 37);
}

TEST(SafetensorsTest, TensorsComeInDataOffsetOrderNotHeaderOrder) {
  const std::string header = R"({"z": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},)"
                             R"( "a": {"dtype": "F32", "shape": [1], "data_offsets": [12, 16]},)"
                             R"( "m": {"dtype": "F32", "shape": [1], "data_offsets": [8, 12]}})";
  StatusOr<SafetensorsHeader> parsed = ParseSafetensorsHeader(header, 16, "m.safetensors");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_EQ(parsed->tensors.size(), 3u);
  EXPECT_EQ(parsed->tensors[0].name, "z");
  EXPECT_EQ(parsed->tensors[1].name, "m");
  EXPECT_EQ(parsed->tensors[2].name, "a");
}

TEST(SafetensorsTest, ReadsOnlyTheLengthPrefixAndTheHeaderNeverTheWeights) {
  MemFileSystem mem;
  const std::string file = MakeSafetensors({{"w", "F32", {1024, 1024}}});
  mem.AddFile("m.safetensors", file);
  RecordingFileSystem recording(mem);
  StatusOr<SafetensorsHeader> header = ReadSafetensorsHeader(recording, "m.safetensors");
  ASSERT_TRUE(header.ok()) << header.status().ToString();
  const int64_t header_bytes = static_cast<int64_t>(file.size()) - 8 - 4 * 1024 * 1024;
  EXPECT_TRUE(recording.whole_reads.empty());
  using Read = std::tuple<std::string, int64_t, int64_t>;
  EXPECT_EQ(recording.range_reads, (std::vector<Read>{{"m.safetensors", 0, 8}, {"m.safetensors", 8, header_bytes}}));
}

TEST(SafetensorsTest, EmptyHeaderIsAFileWithoutTensors) {
  MemFileSystem mem;
  mem.AddFile("empty.safetensors", RawSafetensors("{}", 0));
  mem.AddFile("meta.safetensors", RawSafetensors(R"({"__metadata__": {"format": "pt"}})", 0));
  StatusOr<SafetensorsHeader> empty = ReadSafetensorsHeader(mem, "empty.safetensors");
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_TRUE(empty->tensors.empty());
  EXPECT_TRUE(empty->metadata.empty());
  EXPECT_EQ(empty->data_bytes, 0);
  StatusOr<SafetensorsHeader> meta = ReadSafetensorsHeader(mem, "meta.safetensors");
  ASSERT_TRUE(meta.ok()) << meta.status().ToString();
  EXPECT_TRUE(meta->tensors.empty());
  EXPECT_EQ(meta->metadata.at("format"), "pt");
}

TEST(SafetensorsTest, ZeroSizedTensorsTakeNoBytes) {
  const std::string header = R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},)"
                             R"( "empty": {"dtype": "BF16", "shape": [0, 4096], "data_offsets": [8, 8]},)"
                             R"( "b": {"dtype": "F32", "shape": [1], "data_offsets": [8, 12]}})";
  StatusOr<SafetensorsHeader> parsed = ParseSafetensorsHeader(header, 12, "m.safetensors");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_EQ(parsed->tensors.size(), 3u);
  EXPECT_EQ(parsed->tensors[1].name, "empty");
  EXPECT_EQ(parsed->tensors[1].shape, (Shape{0, 4096}));
}

TEST(SafetensorsTest, ExtraFieldsOfATensorAreIgnoredAsByTheOfficialLoader) {
  const std::string header = R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8], "note": [1]}})";
  StatusOr<SafetensorsHeader> parsed = ParseSafetensorsHeader(header, 8, "m.safetensors");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->tensors.size(), 1u);
}

TEST(SafetensorsTest, SubByteDtypesCountBitsAndMustFillWholeBytes) {
  StatusOr<SafetensorsHeader> parsed =
      ParseSafetensorsHeader(R"({"q": {"dtype": "F4", "shape": [3, 4], "data_offsets": [0, 6]}})", 6, "m.safetensors");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->tensors[0].dtype, DType::kFloat4E2M1FN);
  EXPECT_EQ(HeaderMessage(R"({"q": {"dtype": "F4", "shape": [3], "data_offsets": [0, 2]}})", 2),
            "tensor 'q': shape [3] of F4 is 12 bits, which is not a whole number of bytes");
}

TEST(SafetensorsTest, EveryDtypeStringMapsToTheDocumentedDType) {
  const std::map<std::string, std::optional<DType>> expected = {
      {"BOOL", DType::kBool},
      {"F4", DType::kFloat4E2M1FN},
      {"F6_E2M3", std::nullopt},
      {"F6_E3M2", std::nullopt},
      {"U8", DType::kUInt8},
      {"I8", DType::kInt8},
      {"F8_E5M2", DType::kFloat8E5M2},
      {"F8_E4M3", DType::kFloat8E4M3FN},
      {"F8_E8M0", DType::kFloat8E8M0FNU},
      {"I16", DType::kInt16},
      {"U16", DType::kUInt16},
      {"F16", DType::kFloat16},
      {"BF16", DType::kBFloat16},
      {"I32", DType::kInt32},
      {"U32", DType::kUInt32},
      {"F32", DType::kFloat32},
      {"C64", DType::kComplex64},
      {"F64", DType::kFloat64},
      {"I64", DType::kInt64},
      {"U64", DType::kUInt64},
  };
  ASSERT_EQ(AllSafetensorsDTypeNames().size(), expected.size());
  for (std::string_view name : AllSafetensorsDTypeNames()) {
    const auto it = expected.find(std::string(name));
    ASSERT_NE(it, expected.end()) << name;
    EXPECT_EQ(DTypeFromSafetensors(name), it->second) << name;
  }
  EXPECT_EQ(DTypeFromSafetensors("bf16"), std::nullopt);
  EXPECT_EQ(DTypeFromSafetensors("F8_E4M3FN"), std::nullopt);
  // A one-element tensor of each supported dtype needs DTypeBits / 8 bytes (2 elements for F4).
  for (const auto& [name, dtype] : expected) {
    if (!dtype) continue;
    const int64_t elements = DTypeBits(*dtype) < 8 ? 2 : 1;
    const int64_t bytes = elements * DTypeBits(*dtype) / 8;
    const std::string header = R"({"t": {"dtype": ")" + name + R"(", "shape": [)" + std::to_string(elements) +
                               R"(], "data_offsets": [0, )" + std::to_string(bytes) + "]}}";
    StatusOr<SafetensorsHeader> parsed = ParseSafetensorsHeader(header, bytes, "m.safetensors");
    ASSERT_TRUE(parsed.ok()) << name << ": " << parsed.status().ToString();
    EXPECT_EQ(parsed->tensors[0].dtype, *dtype) << name;
  }
}

// ---------------------------------------------------------------------------------------------
// The length prefix

TEST(SafetensorsTest, FileShorterThanTheLengthPrefixIsAnError) {
  Status status = FileError(std::string("\x10\0\0\0\0", 5));
  EXPECT_EQ(status.diag().loc.file, "dir/m.safetensors");
  EXPECT_EQ(status.diag().message,
            "the file is 5 bytes, too short for a safetensors file, which starts with an 8-byte header length");
  EXPECT_EQ(FileError("").diag().message,
            "the file is 0 bytes, too short for a safetensors file, which starts with an 8-byte header length");
}

TEST(SafetensorsTest, HeaderLengthBeyondFileIsAnErrorNamingTheFile) {
  Status status = FileError(LengthPrefix(1000) + "{}");
  EXPECT_EQ(status.diag().loc.file, "dir/m.safetensors");
  EXPECT_EQ(status.diag().message, "the header length is 1000 bytes but only 2 bytes follow it");
  ASSERT_EQ(status.diag().notes.size(), 1u);
  EXPECT_NE(status.diag().notes[0].find("truncated"), std::string::npos);
}

TEST(SafetensorsTest, HugeHeaderLengthIsRefusedBeforeAnythingOfThatSizeIsRead) {
  // A file that claims a 2^62-byte header: only the 8-byte prefix may be read, nothing allocated.
  MemFileSystem mem;
  mem.AddFile("m.safetensors", LengthPrefix(uint64_t{1} << 62) + "{}      ");
  RecordingFileSystem recording(mem);
  StatusOr<SafetensorsHeader> header = ReadSafetensorsHeader(recording, "m.safetensors");
  ASSERT_FALSE(header.ok());
  EXPECT_EQ(header.status().diag().message,
            "the header length is 4611686018427387904 bytes but only 8 bytes follow it");
  using Read = std::tuple<std::string, int64_t, int64_t>;
  EXPECT_EQ(recording.range_reads, (std::vector<Read>{{"m.safetensors", 0, 8}}));
  // The largest u64 does not fit in int64 either.
  EXPECT_EQ(FileError(LengthPrefix(UINT64_MAX) + "{}").diag().message,
            "the header length is 18446744073709551615 bytes but only 2 bytes follow it");
}

TEST(SafetensorsTest, HeaderLengthBeyondTheLimitIsAnError) {
  MemFileSystem mem;
  const std::string file = MakeSafetensors({{"w", "F32", {2}}});
  mem.AddFile("m.safetensors", file);
  RecordingFileSystem recording(mem);
  SafetensorsLimits limits;
  limits.max_header_bytes = 16;
  StatusOr<SafetensorsHeader> header = ReadSafetensorsHeader(recording, "m.safetensors", limits);
  ASSERT_FALSE(header.ok());
  const size_t header_bytes = file.size() - 8 - 8;
  EXPECT_EQ(header.status().diag().message,
            "the header length is " + std::to_string(header_bytes) + " bytes, more than the limit of 16");
  EXPECT_EQ(recording.range_reads.size(), 1u);
  EXPECT_EQ(SafetensorsLimits().max_header_bytes, 100'000'000);
  EXPECT_EQ(HeaderMessage("{}                  ", 0, limits), "the header is 20 bytes, more than the limit of 16");
}

// ---------------------------------------------------------------------------------------------
// Header JSON

TEST(SafetensorsTest, MalformedJsonIsAnErrorWithAPositionInTheHeader) {
  Status status = FileError(RawSafetensors(R"({"a": {"dtype": "F32",})", 0));
  EXPECT_EQ(status.diag().loc.file, "dir/m.safetensors");
  EXPECT_TRUE(status.diag().message.starts_with("invalid JSON: ")) << status.diag().message;
  EXPECT_EQ(status.diag().loc.line, 1);
  EXPECT_GT(status.diag().loc.column, 1);
  ASSERT_EQ(status.diag().notes.size(), 1u);
  EXPECT_EQ(status.diag().notes[0],
            "line:column count from the start of the JSON header, which begins at byte 8 of the file");
}

TEST(SafetensorsTest, HeaderThatIsNotUtf8IsAnError) {
  Status status = HeaderError("{\"a\xff\": 1}", 0);
  EXPECT_TRUE(status.diag().message.starts_with("invalid JSON: ")) << status.diag().message;
  EXPECT_NE(status.diag().message.find("UTF-8"), std::string::npos) << status.diag().message;
}

TEST(SafetensorsTest, NonObjectJsonIsAnError) {
  EXPECT_EQ(HeaderMessage("[]", 0),
            "the header must be a JSON object mapping tensor names to their dtype, shape and data_offsets, "
            "found array []");
  EXPECT_EQ(HeaderMessage("\"x\"", 0),
            "the header must be a JSON object mapping tensor names to their dtype, shape and data_offsets, "
            "found string \"x\"");
}

TEST(SafetensorsTest, TensorThatIsNotAnObjectIsAnError) {
  Status status = HeaderError(R"({"a": [1, 2]})", 0);
  EXPECT_EQ(status.diag().message,
            "tensor 'a': expected an object with dtype, shape and data_offsets, found array [1,2]");
  EXPECT_EQ(status.diag().loc.pointer, "/a");
}

TEST(SafetensorsTest, MissingFieldsAreErrorsNamingTensorAndField) {
  EXPECT_EQ(HeaderMessage(R"({"a": {"shape": [1], "data_offsets": [0, 4]}})", 4), "tensor 'a': missing 'dtype'");
  EXPECT_EQ(HeaderMessage(R"({"a": {"dtype": "F32", "data_offsets": [0, 4]}})", 4), "tensor 'a': missing 'shape'");
  EXPECT_EQ(HeaderMessage(R"({"a": {"dtype": "F32", "shape": [1]}})", 4), "tensor 'a': missing 'data_offsets'");
}

TEST(SafetensorsTest, DtypeMustBeAString) {
  Status status = HeaderError(R"({"a": {"dtype": 32, "shape": [1], "data_offsets": [0, 4]}})", 4);
  EXPECT_EQ(status.diag().message, "tensor 'a': dtype must be a string such as \"BF16\", found 32");
  EXPECT_EQ(status.diag().loc.pointer, "/a/dtype");
}

TEST(SafetensorsTest, UnknownDtypeIsAnErrorWithDidYouMean) {
  Status status = HeaderError(R"({"model.norm.weight": {"dtype": "BF61", "shape": [1], "data_offsets": [0, 2]}})", 2);
  EXPECT_EQ(status.diag().message, "tensor 'model.norm.weight': unknown safetensors dtype 'BF61'");
  EXPECT_EQ(status.diag().loc.pointer, "/model.norm.weight/dtype");
  ASSERT_EQ(status.diag().notes.size(), 2u);
  EXPECT_EQ(status.diag().notes[0], "did you mean 'BF16'?");
  EXPECT_TRUE(status.diag().notes[1].starts_with("expected one of \"BOOL\", \"F4\", ")) << status.diag().notes[1];
}

TEST(SafetensorsTest, DtypesWithoutAnEasyplanDTypeAreReportedAsUnsupported) {
  EXPECT_EQ(HeaderMessage(R"({"a": {"dtype": "F6_E2M3", "shape": [4], "data_offsets": [0, 3]}})", 3),
            "tensor 'a': safetensors dtype 'F6_E2M3' is not supported: easyplan has no 6-bit float type");
  EXPECT_EQ(HeaderMessage(R"({"a": {"dtype": "F6_E3M2", "shape": [4], "data_offsets": [0, 3]}})", 3),
            "tensor 'a': safetensors dtype 'F6_E3M2' is not supported: easyplan has no 6-bit float type");
}

TEST(SafetensorsTest, NegativeOrNonIntegerShapeDimsAreErrors) {
  Status negative = HeaderError(R"({"a": {"dtype": "F32", "shape": [2, -3], "data_offsets": [0, 4]}})", 4);
  EXPECT_EQ(negative.diag().message, "tensor 'a': shape[1] must be a non-negative integer, found -3");
  EXPECT_EQ(negative.diag().loc.pointer, "/a/shape/1");
  EXPECT_EQ(HeaderMessage(R"({"a": {"dtype": "F32", "shape": [2.5], "data_offsets": [0, 4]}})", 4),
            "tensor 'a': shape[0] must be a non-negative integer, found float 2.5");
  EXPECT_EQ(HeaderMessage(R"({"a": {"dtype": "F32", "shape": ["4"], "data_offsets": [0, 16]}})", 16),
            "tensor 'a': shape[0] must be a non-negative integer, found string \"4\"");
  EXPECT_EQ(HeaderMessage(R"({"a": {"dtype": "F32", "shape": 4, "data_offsets": [0, 16]}})", 16),
            "tensor 'a': shape must be an array of non-negative integers, found 4");
}

TEST(SafetensorsTest, OverflowingShapeProductIsAnError) {
  EXPECT_EQ(HeaderMessage(R"({"a": {"dtype": "U8", "shape": [4294967296, 4294967296], "data_offsets": [0, 4]}})", 4),
            "tensor 'a': shape [4294967296, 4294967296] has more elements than fit in 64 bits");
  // The element count fits, its bytes do not.
  EXPECT_EQ(HeaderMessage(R"({"a": {"dtype": "F64", "shape": [2305843009213693952], "data_offsets": [0, 4]}})", 4),
            "tensor 'a': shape [2305843009213693952] of F64 has more bytes than fit in 64 bits");
  // A dimension beyond int64 is already refused by the JSON reader.
  Status status = HeaderError(R"({"a": {"dtype": "U8", "shape": [18446744073709551616], "data_offsets": [0, 4]}})", 4);
  EXPECT_NE(status.diag().message.find("does not fit in 64 bits"), std::string::npos) << status.diag().message;
}

TEST(SafetensorsTest, MalformedDataOffsetsAreErrors) {
  const std::string expected = "tensor 'a': data_offsets must be [begin, end] with non-negative integers, found ";
  EXPECT_EQ(HeaderMessage(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4]}})", 4), expected + "array [4]");
  EXPECT_EQ(HeaderMessage(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4, 8]}})", 4),
            expected + "array [0,4,8]");
  EXPECT_EQ(HeaderMessage(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [-4, 0]}})", 4),
            expected + "array [-4,0]");
  EXPECT_EQ(HeaderMessage(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": ["0", 4]}})", 4),
            expected + "array [\"0\",4]");
  EXPECT_EQ(HeaderMessage(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": {"begin": 0}}})", 4),
            expected + "object {\"begin\":0}");
  EXPECT_EQ(HeaderMessage(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [8, 4]}})", 8),
            "tensor 'a': data_offsets [8, 4] end before they begin");
}

TEST(SafetensorsTest, ByteLengthMismatchNamesTensorExpectedAndFound) {
  Status status =
      HeaderError(R"({"model.norm.weight": {"dtype": "BF16", "shape": [4096], "data_offsets": [0, 10]}})", 10);
  EXPECT_EQ(status.diag().message,
            "tensor 'model.norm.weight': data_offsets [0, 10] hold 10 bytes but shape [4096] of BF16 needs 8192");
  EXPECT_EQ(status.diag().loc.pointer, "/model.norm.weight/data_offsets");
}

TEST(SafetensorsTest, GapBetweenTensorsIsAnError) {
  Status status = HeaderError(R"({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},)"
                              R"( "b": {"dtype": "F32", "shape": [4], "data_offsets": [20, 36]}})",
                              36);
  EXPECT_EQ(status.diag().message, "tensor 'b': data_offsets [20, 36] leave bytes [16, 20) unused after 'a'");
  EXPECT_EQ(status.diag().notes.size(), 1u);
  EXPECT_EQ(HeaderMessage(R"({"a": {"dtype": "F32", "shape": [4], "data_offsets": [4, 20]}})", 20),
            "tensor 'a': data_offsets [4, 20] leave bytes [0, 4) unused at the start of the data buffer");
}

TEST(SafetensorsTest, OverlappingTensorsAreAnError) {
  EXPECT_EQ(HeaderMessage(R"({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},)"
                          R"( "b": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]}})",
                          24),
            "tensor 'b': data_offsets [8, 24] overlap those of 'a', [0, 16]");
  // Two tensors on the same bytes.
  EXPECT_EQ(HeaderMessage(R"({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},)"
                          R"( "b": {"dtype": "I32", "shape": [4], "data_offsets": [0, 16]}})",
                          16),
            "tensor 'b': data_offsets [0, 16] overlap those of 'a', [0, 16]");
}

TEST(SafetensorsTest, OffsetsBeyondTheDataBufferAreAnError) {
  EXPECT_EQ(HeaderMessage(R"({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}})", 8),
            "tensor 'a': data_offsets [0, 16] reach past the end of the data buffer, which holds 8 bytes after "
            "the header");
  // Through the file: the weights were cut off.
  const std::string file = MakeSafetensors({{"a", "F32", {4}}});
  EXPECT_EQ(FileError(file.substr(0, file.size() - 4)).diag().message,
            "tensor 'a': data_offsets [0, 16] reach past the end of the data buffer, which holds 12 bytes after "
            "the header");
}

TEST(SafetensorsTest, TrailingBytesNotCoveredByTensorsAreAnError) {
  EXPECT_EQ(HeaderMessage(R"({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}})", 24),
            "the tensors end at byte 16 of the data buffer but the data buffer holds 24 bytes: 8 trailing bytes "
            "belong to no tensor");
  EXPECT_EQ(HeaderMessage("{}", 3),
            "the header lists no tensors but the data buffer holds 3 bytes: 3 trailing bytes belong to no tensor");
}

TEST(SafetensorsTest, DuplicateTensorNamesAreAnError) {
  Status status = HeaderError(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},)"
                              R"( "a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})",
                              8);
  EXPECT_EQ(status.diag().message, "tensor name 'a' appears more than once in the header");
  EXPECT_EQ(status.diag().loc.pointer, "/a");
  EXPECT_EQ(HeaderMessage(R"({"a/b": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},)"
                          R"( "a/b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})",
                          8),
            "tensor name 'a/b' appears more than once in the header");
  EXPECT_EQ(HeaderMessage(R"({"a": {"dtype": "F32", "dtype": "F16", "shape": [1], "data_offsets": [0, 4]}})", 4),
            "tensor 'a': key 'dtype' appears more than once");
  EXPECT_EQ(HeaderMessage(R"({"__metadata__": {"format": "pt", "format": "np"}})", 0),
            "__metadata__: key 'format' appears more than once");
  EXPECT_EQ(HeaderMessage(R"({"__metadata__": {}, "__metadata__": {}})", 0),
            "'__metadata__' appears more than once in the header");
}

TEST(SafetensorsTest, MetadataMustBeAnObjectOfStrings) {
  Status status = HeaderError(R"({"__metadata__": {"format": "pt", "step": 3}})", 0);
  EXPECT_EQ(status.diag().message, "__metadata__ key 'step' must hold a string, found 3");
  EXPECT_EQ(status.diag().loc.pointer, "/__metadata__/step");
  EXPECT_EQ(HeaderMessage(R"({"__metadata__": ["pt"]})", 0),
            "__metadata__ must be an object of strings, found array [\"pt\"]");
  StatusOr<SafetensorsHeader> null_metadata = ParseSafetensorsHeader(R"({"__metadata__": null})", 0, "m.safetensors");
  ASSERT_TRUE(null_metadata.ok()) << null_metadata.status().ToString();
  EXPECT_TRUE(null_metadata->metadata.empty());
}

TEST(SafetensorsTest, MoreTensorsThanTheLimitIsAnError) {
  SafetensorsLimits limits;
  limits.max_tensors = 2;
  EXPECT_EQ(HeaderMessage(R"({"a": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]},)"
                          R"( "b": {"dtype": "U8", "shape": [1], "data_offsets": [1, 2]},)"
                          R"( "c": {"dtype": "U8", "shape": [1], "data_offsets": [2, 3]}})",
                          3, limits),
            "the header lists 3 tensors, more than the limit of 2");
}

TEST(SafetensorsTest, DocumentLimitsApplyToTheHeaderJson) {
  SafetensorsLimits limits;
  limits.document.max_values = 10;
  const std::string header = R"({"a": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]},)"
                             R"( "b": {"dtype": "U8", "shape": [1], "data_offsets": [1, 2]}})";
  Status status = HeaderError(header, 2, limits);
  EXPECT_NE(status.diag().message.find("more than 10 values"), std::string::npos) << status.diag().message;
  EXPECT_TRUE(ParseSafetensorsHeader(header, 2, "m.safetensors").ok());
}

TEST(SafetensorsTest, FileSystemErrorsNameThePath) {
  MemFileSystem mem;
  StatusOr<SafetensorsHeader> header = ReadSafetensorsHeader(mem, "nope.safetensors");
  ASSERT_FALSE(header.ok());
  EXPECT_EQ(header.status().diag().message, "cannot read 'nope.safetensors': No such file or directory");
}

}  // namespace
}  // namespace easyplan
