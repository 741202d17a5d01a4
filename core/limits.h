#ifndef EASYPLAN_CORE_LIMITS_H_
#define EASYPLAN_CORE_LIMITS_H_

// Resource limits for untrusted input, in one place. easyplan reads files users edit by hand and
// metadata from anywhere; each limit below turns an input that would exhaust memory, time or stack
// into a BadInput error (exit 2) that names the limit and the global flag raising it. Nothing is
// ever silently truncated. docs/RELIABILITY.md ("Limits") lists them with their reasons.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace easyplan {

struct Limits {
  /// Largest input read, in bytes: a config, an overrides file, standard input. Flag:
  /// --max-input-bytes. Real config.json files are a few KiB; 64 MiB leaves room for any metadata.
  /// A YAML document expanded (its aliases replaced by what they name: overrides, --hardware and
  /// --rules files) is input too, and is bounded by the same number of bytes (core/yaml_parse.h).
  size_t max_input_bytes = size_t{64} << 20;

  /// Deepest nesting of objects and arrays in a JSON or YAML document, or in a `--set` value
  /// (dotted key segments count). Flag: --max-depth, at most kMaxDepthCeiling. Configs nest 3 deep;
  /// the parsers, the resolver and the emitters recurse once per level, so this bounds stack use.
  int max_depth = 200;

  /// Values (objects, arrays and scalars, each counted once) one document may hold, with every use
  /// of a YAML alias counted again ("billion laughs"). Flag: --max-values. Bounds the memory and
  /// time one document costs after parsing: at most a few hundred bytes per value.
  size_t max_values = 1000000;

  /// Layers (`num_hidden_layers`, in a config and in each sub-config) one model may have. Flag:
  /// --max-layers. The largest published models have about 130; every pipeline's time and memory
  /// grow with the layers (a 10^6-layer config took 21-41 s and 4-8 GB in plan, cost, suggest and
  /// report), so the count is refused where the resolver first reads it.
  int64_t max_layers = 4096;

  /// Largest artifact a command builds in memory: an `export` (the torch format grows with devices x
  /// tensors: 262,144 devices gave 1.49 GB) or a `report` page. Flag: --max-output-bytes. The torch
  /// export is estimated before it is built, every artifact measured once built.
  size_t max_output_bytes = size_t{256} << 20;

  /// Microbatches one step may be split into: --microbatches, and the most suggest's search tries
  /// (its --max-microbatches). Flag: --max-microbatch-count (not suggest's search bound). Real steps
  /// accumulate a few to a few thousand; the step model's counts and bytes multiply by it.
  int64_t max_microbatch_count = 65536;

  /// Passes (one microbatch's forward, backward or weight-gradient pass through one model chunk) of the
  /// schedule a `report` simulates for its pipeline timeline, estimated from pp, the microbatches, the
  /// virtual stages and the schedule before the timeline is built. Flag: --max-timeline-passes. Each
  /// pass costs about 200 bytes (pp=32 dualpipe at 1,048,576 microbatches, 10^8 passes: 30 s, 16.9 GB).
  int64_t max_timeline_passes = int64_t{1} << 20;

  /// --max-depth may not exceed this: deeper recursion would risk overflowing the stack (yaml-cpp
  /// itself refuses 2000 levels).
  static constexpr int kMaxDepthCeiling = 1000;
};

/// The note attached to an error caused by a limit: "the limit is 200; raise it with --max-depth N".
inline std::string LimitNote(std::string_view flag, uint64_t limit) {
  return "the limit is " + std::to_string(limit) + "; raise it with " + std::string(flag) + " N";
}

}  // namespace easyplan

#endif  // EASYPLAN_CORE_LIMITS_H_
