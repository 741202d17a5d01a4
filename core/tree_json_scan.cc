#include "core/tree_json_scan.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <bit>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/dtype.h"
#include "core/unique_names.h"
#include "core/utf8.h"

namespace easyplan {
namespace {

// Bits for the keys of one object, to refuse duplicates (the reference path keeps the last one).
enum KeyBit : unsigned {
  kModelType = 1u << 0,
  kLayout = 1u << 1,
  kParams = 1u << 2,
  kTotalTensors = 1u << 3,
  kTotalParams = 1u << 4,
  kTotalBytes = 1u << 5,
  kName = 1u << 6,
  kShape = 1u << 7,
  kDType = 1u << 8,
  kRole = 1u << 9,
  kEasyDelVersion = 1u << 10,
};

constexpr int kTreeDepth = 4;  // root object, params array, tensor object, shape array
// A tensor takes at least 37 characters ({"name":"a","shape":[],"dtype":"f32"}) and a comma separates
// two, so size / 36 + 1 bounds the count.
constexpr size_t kMinTensorChars = 36;

constexpr uint64_t kOnes = 0x0101010101010101ULL;
constexpr uint64_t kHighs = 0x8080808080808080ULL;

// The high bit of the first byte of `word` (in memory order) that ends a plain string, or of an
// earlier one: a quote, a backslash, a control character or a non-ASCII byte. Each test below can
// flag a byte wrongly only above a byte it flags rightly (a borrow carries upwards), so the lowest
// flag is exact.
uint64_t StringStops(uint64_t word) {
  const auto zero_bytes = [](uint64_t x) { return (x - kOnes) & ~x & kHighs; };
  const uint64_t quote = zero_bytes(word ^ (kOnes * '"'));
  const uint64_t backslash = zero_bytes(word ^ (kOnes * '\\'));
  const uint64_t control = (word - kOnes * 0x20) & ~word & kHighs;
  return quote | backslash | control | (word & kHighs);
}

// key == literal, compared with a constant-size memcmp the compiler turns into a load or two.
template <size_t N>
bool Is(std::string_view key, const char (&literal)[N]) {
  return key.size() == N - 1 && std::memcmp(key.data(), literal, N - 1) == 0;
}

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

class TreeScanner {
 public:
  TreeScanner(std::string_view text, const Limits& limits, int64_t max_tensors)
      : input_(text), p_(text.data()), end_(text.data() + text.size()), limits_(limits), max_tensors_(max_tensors) {
    // The reference parser skips a leading UTF-8 byte order mark.
    if (text.starts_with("\xEF\xBB\xBF")) p_ += 3;
  }

  bool Run(ParamTree* out) {
    if (limits_.max_depth < kTreeDepth || !Consume('{') || !Count()) return false;
    ParamTree tree;
    // The vector never moves its entries: no tensor takes fewer than kMinTensorChars characters, so
    // this bounds the count; the pages past the real count are reserved, never touched.
    const size_t size = static_cast<size_t>(end_ - p_);
    tree.tensors.reserve(std::min(size / kMinTensorChars + 1, static_cast<size_t>(std::max<int64_t>(max_tensors_, 0))));
    unsigned seen = 0;
    do {
      std::string_view key;
      if (!Key(&key) || !Count()) return false;
      if (Is(key, "params")) {
        if (!Once(&seen, kParams) || !Params(&tree.tensors)) return false;
      } else if (Is(key, "model_type")) {
        if (!Once(&seen, kModelType) || !ModelType(&tree.model_type)) return false;
      } else if (Is(key, "layout")) {
        std::string_view text;
        if (!Once(&seen, kLayout) || !String(&text)) return false;
        const std::optional<Layout> layout = ParseLayout(text);
        if (!layout) return false;
        tree.layout = *layout;
      } else if (Is(key, "total_tensors")) {
        if (!Once(&seen, kTotalTensors) || !Integer(/*allow_negative=*/true, nullptr)) return false;
      } else if (Is(key, "total_params")) {
        if (!Once(&seen, kTotalParams) || !Integer(/*allow_negative=*/true, nullptr)) return false;
      } else if (Is(key, "total_bytes")) {
        if (!Once(&seen, kTotalBytes) || !Integer(/*allow_negative=*/true, nullptr)) return false;
      } else if (Is(key, "easydel_version")) {
        std::string_view text;  // what `tree --format json` wrote; the tree itself does not depend on it
        if (!Once(&seen, kEasyDelVersion) || !String(&text)) return false;
      } else {
        return false;  // legal, but its value would go unvalidated
      }
    } while (Consume(','));
    if (!Consume('}') || (seen & kParams) == 0) return false;
    SkipSpace();
    if (p_ != end_) return false;  // nothing may follow the root object
    if (FirstDuplicateName(tree.tensors.size(),
                           [&tensors = tree.tensors](size_t i) { return std::string_view(tensors[i].name); })) {
      return false;
    }
    *out = std::move(tree);
    return true;
  }

 private:
  bool Count() { return ++values_ <= limits_.max_values; }

  static bool Once(unsigned* seen, unsigned bit) {
    if (*seen & bit) return false;
    *seen |= bit;
    return true;
  }

  void SkipSpace() {
    while (p_ < end_ && IsSpace(*p_)) ++p_;
  }

  // Skips whitespace, then `c` if it comes next.
  bool Consume(char c) {
    SkipSpace();
    if (p_ < end_ && *p_ == c) {
      ++p_;
      return true;
    }
    return false;
  }

  // `literal` if the input continues with it (no whitespace skipped).
  template <size_t N>
  bool Literal(const char (&literal)[N]) {
    if (static_cast<size_t>(end_ - p_) < N - 1 || std::memcmp(p_, literal, N - 1) != 0) return false;
    p_ += N - 1;
    return true;
  }

  // A string without escapes or control characters, in well-formed UTF-8; `*text` points into the
  // input.
  bool String(std::string_view* text) { return Consume('"') && StringBody(text); }

  // The rest of a string whose opening quote has been read.
  bool StringBody(std::string_view* text) {
    const char* start = p_;
    while (true) {
      SkipPlainBytes();
      if (p_ == end_) return false;
      const auto byte = static_cast<unsigned char>(*p_);
      if (byte == '"') break;
      if (byte < 0x80) return false;  // a backslash or a control character: left to the reference
      // UTF-8, checked exactly as the reference parser checks it.
      const size_t length = Utf8SequenceLength(input_, static_cast<size_t>(p_ - input_.data()));
      if (length == 0) return false;
      p_ += length;
    }
    *text = std::string_view(start, static_cast<size_t>(p_ - start));
    ++p_;
    return true;
  }

  // Moves p_ to the next byte that ends a run of printable ASCII inside a string (a quote, a
  // backslash, a control character or a non-ASCII byte), or to the end.
  void SkipPlainBytes() {
#if defined(__SSE2__)
    // Sixteen bytes at a time where SSE2 is there (every x86-64). A signed compare with ' ' flags
    // control characters and non-ASCII bytes (negative as signed) at once.
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    const __m128i space = _mm_set1_epi8(' ');
    while (end_ - p_ >= 16) {
      const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p_));
      const __m128i stops = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(bytes, quote), _mm_cmpeq_epi8(bytes, backslash)),
                                         _mm_cmplt_epi8(bytes, space));
      if (const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(stops)); mask != 0) {
        p_ += std::countr_zero(mask);
        return;
      }
      p_ += 16;
    }
#endif
    while (end_ - p_ >= 8) {
      uint64_t word;
      std::memcpy(&word, p_, sizeof(word));
      if constexpr (std::endian::native == std::endian::big) word = __builtin_bswap64(word);
      if (const uint64_t stops = StringStops(word); stops != 0) {
        p_ += std::countr_zero(stops) / 8;
        return;
      }
      p_ += 8;
    }
    while (p_ < end_ && static_cast<unsigned char>(*p_) >= 0x20 && static_cast<unsigned char>(*p_) < 0x80 &&
           *p_ != '"' && *p_ != '\\') {
      ++p_;
    }
  }

  bool Key(std::string_view* key) { return String(key) && Consume(':'); }

  // An integer without fraction or exponent within int64 (and >= 0 unless `allow_negative`).
  bool Integer(bool allow_negative, int64_t* value) {
    SkipSpace();
    const bool negative = allow_negative && p_ < end_ && *p_ == '-';
    if (negative) ++p_;
    if (p_ == end_ || !IsDigit(*p_)) return false;
    if (*p_ == '0' && p_ + 1 < end_ && IsDigit(p_[1])) return false;  // a leading zero is not JSON
    uint64_t magnitude = 0;
    for (; p_ < end_ && IsDigit(*p_); ++p_) {
      const uint64_t digit = static_cast<uint64_t>(*p_ - '0');
      if (magnitude > (static_cast<uint64_t>(INT64_MAX) - digit) / 10) return false;  // before it wraps
      magnitude = magnitude * 10 + digit;
    }
    if (p_ < end_ && (*p_ == '.' || *p_ == 'e' || *p_ == 'E')) return false;
    if (value != nullptr) *value = negative ? -static_cast<int64_t>(magnitude) : static_cast<int64_t>(magnitude);
    return true;
  }

  bool ModelType(std::string* model_type) {
    SkipSpace();
    if (end_ - p_ >= 4 && std::memcmp(p_, "null", 4) == 0) {
      p_ += 4;  // a letter right after it fails at the next separator
      return true;
    }
    std::string_view text;
    if (!String(&text)) return false;
    model_type->assign(text);
    return true;
  }

  bool Params(std::vector<TensorEntry>* tensors) {
    if (!Consume('[')) return false;
    if (Consume(']')) return true;
    do {
      if (!Count() || static_cast<int64_t>(tensors->size()) >= max_tensors_) return false;
      if (!Tensor(&tensors->emplace_back())) return false;
    } while (Consume(','));
    return Consume(']');
  }

  bool Tensor(TensorEntry* tensor) {
    if (!Consume('{')) return false;
    unsigned seen = 0;
    do {
      if (!Member(tensor, &seen)) return false;
    } while (Consume(','));
    return Consume('}') && (seen & (kName | kShape | kDType)) == (kName | kShape | kDType);
  }

  // One `"key": value` of a tensor object. The tree writer's own spelling of each key, its colon, one
  // space and the value's opening bracket or quote is matched as one literal: the same tokens the
  // general path reads one by one, which takes it for any other spacing.
  bool Member(TensorEntry* tensor, unsigned* seen) {
    SkipSpace();
    if (Literal(R"("name": ")")) return Count() && Once(seen, kName) && Name(tensor);
    if (Literal(R"("shape": [)")) return Count() && Once(seen, kShape) && DimsBody() && ShapeFromDims(tensor);
    if (Literal(R"("dtype": ")")) return Count() && Once(seen, kDType) && DTypeBody(tensor);
    std::string_view key;
    if (!Key(&key) || !Count()) return false;
    if (Is(key, "name")) return Once(seen, kName) && Consume('"') && Name(tensor);
    if (Is(key, "shape")) return Once(seen, kShape) && Consume('[') && DimsBody() && ShapeFromDims(tensor);
    if (Is(key, "dtype")) return Once(seen, kDType) && Consume('"') && DTypeBody(tensor);
    if (Is(key, "role")) {
      std::string_view text;
      if (!Once(seen, kRole) || !String(&text)) return false;
      const std::optional<TensorRole> role = ParseTensorRole(text);
      if (!role) return false;
      tensor->role = *role;
      return true;
    }
    return false;
  }

  bool Name(TensorEntry* tensor) {
    std::string_view name;
    if (!StringBody(&name) || name.empty()) return false;
    tensor->name.assign(name);
    return true;
  }

  bool DTypeBody(TensorEntry* tensor) {
    std::string_view text;
    if (!StringBody(&text)) return false;
    const DType* dtype = CachedDType(text);
    if (dtype == nullptr) return false;
    tensor->dtype = *dtype;
    return true;
  }

  bool ShapeFromDims(TensorEntry* tensor) {
    tensor->shape = Shape(std::span<const int64_t>(dims_));
    return true;
  }

  // The dims of a shape whose '[' has been read.
  bool DimsBody() {
    dims_.clear();
    if (Consume(']')) return true;
    do {
      int64_t dim = 0;
      if (!Integer(/*allow_negative=*/false, &dim) || !Count()) return false;
      dims_.push_back(dim);
    } while (Consume(','));
    return Consume(']');
  }

  // Trees spell a handful of dtypes tens of thousands of times: each distinct spelling is parsed once.
  // (A pointer rather than a std::optional: the optional's two fields, stored separately and read
  // back as one word, stalled every tensor on a failed store-to-load forward.)
  const DType* CachedDType(std::string_view text) {
    for (const auto& [spelling, dtype] : dtypes_) {
      if (spelling == text) return &dtype;
    }
    const std::optional<DType> dtype = ParseDType(text);
    if (!dtype || dtypes_.size() == kMaxCachedDTypes) {
      unlisted_ = dtype.value_or(DType{});
      return dtype ? &unlisted_ : nullptr;
    }
    return &dtypes_.emplace_back(std::string(text), *dtype).second;
  }

  const std::string_view input_;
  const char* p_;
  const char* const end_;
  const Limits& limits_;
  const int64_t max_tensors_;
  size_t values_ = 0;
  std::vector<int64_t> dims_;  // reused across tensors
  static constexpr size_t kMaxCachedDTypes = 16;
  std::vector<std::pair<std::string, DType>> dtypes_;  // spelling -> dtype
  DType unlisted_{};                                   // a dtype parsed once the list is full
};

}  // namespace

bool ScanTreeJson(std::string_view text, const Limits& limits, int64_t max_tensors, ParamTree* tree) {
  return TreeScanner(text, limits, max_tensors).Run(tree);
}

}  // namespace easyplan
