#include "core/document_codec.h"

#include <cstdint>
#include <cstring>
#include <map>
#include <utility>
#include <vector>

#include "core/limits.h"

namespace easyplan {
namespace {

constexpr std::string_view kMagic = "easyplan-doc-1\n";
// Embedded documents nest a few levels; the decoder refuses more than the parsers would ever build.
constexpr int kMaxDepth = Limits::kMaxDepthCeiling;

enum Tag : uint8_t {
  kNull = 0,
  kFalse = 1,
  kTrue = 2,
  kInteger = 3,
  kUnsigned = 4,
  kFloat = 5,
  kString = 6,
  kArray = 7,
  kObject = 8,
};

class Writer {
 public:
  void Byte(uint8_t value) { out_.push_back(static_cast<char>(value)); }
  void Varint(uint64_t value) {
    while (value >= 0x80) {
      Byte(static_cast<uint8_t>(value | 0x80));
      value >>= 7;
    }
    Byte(static_cast<uint8_t>(value));
  }
  void Fixed(uint64_t value) {
    for (int i = 0; i < 8; ++i) Byte(static_cast<uint8_t>(value >> (8 * i)));
  }
  void Text(std::string_view text) {
    Varint(text.size());
    out_.append(text);
  }

  Status Value(const Json& value) {
    switch (value.type()) {
      case Json::value_t::null:
      case Json::value_t::discarded:
        Byte(kNull);
        return Status();
      case Json::value_t::boolean:
        Byte(value.get<bool>() ? kTrue : kFalse);
        return Status();
      case Json::value_t::number_integer:
        Byte(kInteger);
        Fixed(static_cast<uint64_t>(value.get<int64_t>()));
        return Status();
      case Json::value_t::number_unsigned:
        Byte(kUnsigned);
        Fixed(value.get<uint64_t>());
        return Status();
      case Json::value_t::number_float: {
        Byte(kFloat);
        const double number = value.get<double>();
        uint64_t bits;
        std::memcpy(&bits, &number, sizeof(bits));
        Fixed(bits);
        return Status();
      }
      case Json::value_t::string:
        Byte(kString);
        Text(value.get_ref<const std::string&>());
        return Status();
      case Json::value_t::array:
        Byte(kArray);
        Varint(value.size());
        for (const Json& item : value) EP_RETURN_IF_ERROR(Value(item));
        return Status();
      case Json::value_t::object:
        Byte(kObject);
        Varint(value.size());
        for (const auto& [key, item] : value.items()) {
          Text(key);
          EP_RETURN_IF_ERROR(Value(item));
        }
        return Status();
      case Json::value_t::binary:
        break;
    }
    return Status::Internal("EncodeDocument: binary values have no encoding");
  }

  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}

  bool Byte(uint8_t* value) {
    if (at_ >= bytes_.size()) return false;
    *value = static_cast<uint8_t>(bytes_[at_++]);
    return true;
  }
  bool Varint(uint64_t* value) {
    *value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      uint8_t byte;
      if (!Byte(&byte)) return false;
      *value |= static_cast<uint64_t>(byte & 0x7F) << shift;
      if ((byte & 0x80) == 0) return true;
    }
    return false;
  }
  bool Fixed(uint64_t* value) {
    if (bytes_.size() - at_ < 8) return false;
    *value = 0;
    for (int i = 0; i < 8; ++i) *value |= static_cast<uint64_t>(static_cast<uint8_t>(bytes_[at_ + i])) << (8 * i);
    at_ += 8;
    return true;
  }
  // A count of items that each take at least one byte: never more than the bytes left.
  bool Count(uint64_t* count) { return Varint(count) && *count <= bytes_.size() - at_; }
  bool Text(std::string_view* text) {
    uint64_t size;
    if (!Count(&size)) return false;
    *text = bytes_.substr(at_, size);
    at_ += size;
    return true;
  }
  bool Literal(std::string_view literal) {
    if (bytes_.substr(at_, literal.size()) != literal) return false;
    at_ += literal.size();
    return true;
  }
  bool AtEnd() const { return at_ == bytes_.size(); }

  bool Value(Json* value, int depth) {
    uint8_t tag;
    if (depth > kMaxDepth || !Byte(&tag)) return false;
    uint64_t number;
    std::string_view text;
    switch (tag) {
      case kNull:
        *value = nullptr;
        return true;
      case kFalse:
      case kTrue:
        *value = tag == kTrue;
        return true;
      case kInteger:
        if (!Fixed(&number)) return false;
        *value = static_cast<int64_t>(number);
        return true;
      case kUnsigned:
        if (!Fixed(&number)) return false;
        *value = number;
        return true;
      case kFloat: {
        if (!Fixed(&number)) return false;
        double real;
        std::memcpy(&real, &number, sizeof(real));
        *value = real;
        return true;
      }
      case kString:
        if (!Text(&text)) return false;
        *value = std::string(text);
        return true;
      case kArray: {
        uint64_t count;
        if (!Count(&count)) return false;
        *value = Json::array();
        value->get_ref<Json::array_t&>().reserve(count);
        for (uint64_t i = 0; i < count; ++i) {
          if (!Value(&value->emplace_back(), depth + 1)) return false;
        }
        return true;
      }
      case kObject: {
        uint64_t count;
        if (!Count(&count)) return false;
        *value = Json::object();
        // Appended in file order; operator[] would search the keys read so far each time.
        Json::object_t& members = value->get_ref<Json::object_t&>();
        members.reserve(count);
        for (uint64_t i = 0; i < count; ++i) {
          if (!Text(&text)) return false;
          if (!Value(&members.emplace_back(std::string(text), Json()).second, depth + 1)) return false;
        }
        return true;
      }
      default:
        return false;
    }
  }

 private:
  std::string_view bytes_;
  size_t at_ = 0;
};

}  // namespace

StatusOr<std::string> EncodeDocument(const Document& doc) {
  Writer writer;
  for (char c : kMagic) writer.Byte(static_cast<uint8_t>(c));
  EP_RETURN_IF_ERROR(writer.Value(doc.root()));
  writer.Varint(doc.positions().size());
  for (const auto& [pointer, position] : doc.positions()) {
    writer.Text(pointer);
    writer.Varint(static_cast<uint64_t>(position.line));
    writer.Varint(static_cast<uint64_t>(position.column));
  }
  writer.Varint(doc.duplicate_keys().size());
  for (const std::string& pointer : doc.duplicate_keys()) writer.Text(pointer);
  return writer.Take();
}

StatusOr<Document> DecodeDocument(std::string_view bytes, std::string file) {
  Reader reader(bytes);
  Json root;
  std::map<std::string, Document::Position> positions;
  std::vector<std::string> duplicates;
  uint64_t count = 0;
  bool ok = reader.Literal(kMagic) && reader.Value(&root, 0) && reader.Count(&count);
  for (uint64_t i = 0; ok && i < count; ++i) {
    std::string_view pointer;
    uint64_t line = 0, column = 0;
    ok = reader.Text(&pointer) && reader.Varint(&line) && reader.Varint(&column) && line <= INT32_MAX &&
         column <= INT32_MAX;
    // Written in the map's own order, so each insert lands at the end.
    if (ok) {
      positions.emplace_hint(positions.end(), std::string(pointer),
                             Document::Position{static_cast<int>(line), static_cast<int>(column)});
    }
  }
  ok = ok && reader.Count(&count);
  for (uint64_t i = 0; ok && i < count; ++i) {
    std::string_view pointer;
    ok = reader.Text(&pointer);
    if (ok) duplicates.emplace_back(pointer);
  }
  if (!ok || !reader.AtEnd()) {
    return Status::Internal("embedded document '" + file + "' is corrupt (rebuild easyplan)");
  }
  return Document(std::move(file), std::move(root), std::move(positions), std::move(duplicates));
}

}  // namespace easyplan
