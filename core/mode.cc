#include "core/mode.h"

#include "core/enum_table.h"

namespace easyplan {

namespace {

// The names commands take and print.
constexpr EnumName<Mode> kModeNames[] = {
    {Mode::kTrain, "train"},
    {Mode::kPrefill, "prefill"},
    {Mode::kDecode, "decode"},
    {Mode::kInsert, "insert"},
};

// EasyDeL's constants (easydel/infra/etils.py).
constexpr EnumName<Mode> kModeConstants[] = {
    {Mode::kTrain, "__train__"},
    {Mode::kPrefill, "__prefill__"},
    {Mode::kDecode, "__autoregressive__"},
    {Mode::kInsert, "__insert__"},
};

}  // namespace

std::string_view ModeName(Mode mode) { return NameOf(kModeNames, mode); }

std::string_view ModeConstant(Mode mode) { return NameOf(kModeConstants, mode); }

std::optional<Mode> ParseMode(std::string_view text) {
  if (const std::optional<Mode> mode = ParseEnum(kModeNames, text)) return mode;
  return ParseEnum(kModeConstants, text);
}

bool IsGenerationMode(Mode mode) { return mode == Mode::kDecode || mode == Mode::kInsert; }

}  // namespace easyplan
