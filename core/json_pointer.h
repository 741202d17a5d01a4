#ifndef EASYPLAN_CORE_JSON_POINTER_H_
#define EASYPLAN_CORE_JSON_POINTER_H_

// RFC 6901 JSON pointers ("/rope_scaling/factor", "/weight_map/a~1b"), the one way easyplan names a
// value inside a document: Document keys its positions by them and every Diag carries one. Pointers
// are plain std::string values (SourceLoc::pointer); these functions build and take them apart so
// that no caller escapes or unescapes reference tokens by hand. A constant suffix written in code
// (`pointer + "/shape"`) needs no escaping; a key that comes from data always goes through here.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace easyplan {

/// Escapes one reference token: "~" -> "~0", then "/" -> "~1" ("a/b" -> "a~1b", "~1/" -> "~01~1").
std::string EscapePointerToken(std::string_view key);

/// The key a reference token stands for ("a~1b" -> "a/b", "~01" -> "~1"). A '~' not followed by
/// '0' or '1' (not valid RFC 6901) is kept as it is.
std::string UnescapePointerToken(std::string_view token);

/// Appends one member: pointer += "/" + EscapePointerToken(key), without a temporary. For loops
/// that extend and truncate one pointer as they walk a document.
void AppendPointerKey(std::string& pointer, std::string_view key);

/// Appends one array element: pointer += "/" + decimal index.
void AppendPointerIndex(std::string& pointer, size_t index);

/// The pointer of member `key` of the value at `parent` ("/a", "b/c" -> "/a/b~1c").
std::string PointerToMember(std::string_view parent, std::string_view key);

/// The pointer of element `index` of the array at `parent` ("/layers", 3 -> "/layers/3").
std::string PointerToElement(std::string_view parent, size_t index);

/// The pointer of a path of keys from the root ({"a", "b/c"} -> "/a/b~1c"; {} -> "", the root).
std::string JoinPointer(const std::vector<std::string>& keys);

/// The unescaped keys of a pointer ("/a/b~1c" -> {"a", "b/c"}; "" -> {}; "/" -> {""}). Text not
/// starting with '/' has no keys.
std::vector<std::string> SplitPointer(std::string_view pointer);

/// The pointer of the enclosing value ("/a/b~1c" -> "/a"; "/a" -> ""; "" -> ""), a view into
/// `pointer`.
std::string_view ParentPointer(std::string_view pointer);

/// The unescaped last key ("/a/b~1c" -> "b/c"; "" -> "").
std::string LastPointerKey(std::string_view pointer);

/// The unescaped first key ("/a~1b/c" -> "a/b"; "" -> "").
std::string FirstPointerKey(std::string_view pointer);

/// The name EscapePointerToken had before core/json_pointer.h; kept so code written against
/// core/document.h before the parser split still builds.
inline std::string PointerToken(std::string_view key) { return EscapePointerToken(key); }

}  // namespace easyplan

#endif  // EASYPLAN_CORE_JSON_POINTER_H_
