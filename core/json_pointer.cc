#include "core/json_pointer.h"

namespace easyplan {

std::string EscapePointerToken(std::string_view key) {
  std::string token;
  token.reserve(key.size());
  for (char c : key) {
    if (c == '~') {
      token += "~0";
    } else if (c == '/') {
      token += "~1";
    } else {
      token += c;
    }
  }
  return token;
}

std::string UnescapePointerToken(std::string_view token) {
  std::string key;
  key.reserve(token.size());
  for (size_t i = 0; i < token.size(); ++i) {
    if (token[i] == '~' && i + 1 < token.size() && (token[i + 1] == '0' || token[i + 1] == '1')) {
      key += token[i + 1] == '0' ? '~' : '/';
      ++i;
    } else {
      key += token[i];
    }
  }
  return key;
}

void AppendPointerKey(std::string& pointer, std::string_view key) {
  pointer += '/';
  if (key.find_first_of("~/") == std::string_view::npos) {
    pointer += key;
  } else {
    pointer += EscapePointerToken(key);
  }
}

void AppendPointerIndex(std::string& pointer, size_t index) {
  pointer += '/';
  pointer += std::to_string(index);
}

std::string PointerToMember(std::string_view parent, std::string_view key) {
  std::string pointer(parent);
  AppendPointerKey(pointer, key);
  return pointer;
}

std::string PointerToElement(std::string_view parent, size_t index) {
  std::string pointer(parent);
  AppendPointerIndex(pointer, index);
  return pointer;
}

std::string JoinPointer(const std::vector<std::string>& keys) {
  std::string pointer;
  for (const std::string& key : keys) AppendPointerKey(pointer, key);
  return pointer;
}

std::vector<std::string> SplitPointer(std::string_view pointer) {
  std::vector<std::string> keys;
  while (pointer.starts_with('/')) {
    pointer.remove_prefix(1);
    const size_t slash = pointer.find('/');
    keys.push_back(UnescapePointerToken(pointer.substr(0, slash)));
    pointer = slash == std::string_view::npos ? std::string_view() : pointer.substr(slash);
  }
  return keys;
}

std::string_view ParentPointer(std::string_view pointer) {
  const size_t slash = pointer.rfind('/');
  return slash == std::string_view::npos ? std::string_view() : pointer.substr(0, slash);
}

std::string LastPointerKey(std::string_view pointer) {
  const size_t slash = pointer.rfind('/');
  if (slash == std::string_view::npos) return "";
  return UnescapePointerToken(pointer.substr(slash + 1));
}

std::string FirstPointerKey(std::string_view pointer) {
  if (!pointer.starts_with('/')) return "";
  pointer.remove_prefix(1);
  return UnescapePointerToken(pointer.substr(0, pointer.find('/')));
}

}  // namespace easyplan
