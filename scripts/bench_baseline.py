#!/usr/bin/env python3
"""The Python baseline of scripts/bench: what a user would write to get easyplan validate/plan's numbers.

Reads a tree JSON (`easyplan tree ... --format json`, or the `--tree` input of plan/validate) and a rule
file (rules/*.yaml), then does what eformer and JAX do (eformer/escale/partition/manager.py and
constraints.py; jax/_src/named_sharding.py):

  1. eformer `match_partition_rules(rules, tree)` (strict): rank-0 tensors get P(); otherwise the first
     rule whose pattern `re.search`es the name wins, and a spec longer than the rank is truncated; no
     match is `ValueError("Partition rule not found for param: <name>")`.
  2. The rule's spec resolved like `PartitionAxis.resolve_spec` under the default PartitionAxis (or the
     `partition_axis` of `--config`, an `easyplan resolve` output): presets (rules/_presets.yaml) expand,
     tokens (HEAD, __HEAD__, head, ...) become partition_axis values, literal mesh axes stay.
  3. eformer `get_corrected_named_sharding(shape, spec)`: an entry naming an axis the mesh lacks, or whose
     axes' size product does not divide the dim, becomes None (the whole entry); the spec is padded with
     None to the rank; all-None is P().
  4. JAX NamedSharding placement on the mesh: dim i is cut into prod(sizes of spec[i]) blocks, tuple axes
     major to minor; each device holds the block its mesh coordinates select. Bytes per device = the sum
     over tensors of the bytes of the block that device holds.

Prints the tensor count, the tree's bytes and the min / median / max of the per-device totals (the
median as easyplan's: the lower middle value), as text or as JSON (--format json).

    scripts/bench_baseline.py --tree /tmp/ds_hf.json --rules rules/deepseek_v3_hf.yaml \\
        --mesh dp=1,fsdp=-1,ep=1,tp=8,sp=1 --devices 2048
"""

import argparse
import json
import math
import os
import re
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

DTYPE_BITS = {
    "bool": 8, "int4": 4, "int8": 8, "int16": 16, "int32": 32, "int64": 64,
    "uint4": 4, "uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64,
    "float16": 16, "bfloat16": 16, "float32": 32, "float64": 64, "complex64": 64, "complex128": 128,
    "float8_e4m3": 8, "float8_e4m3fn": 8, "float8_e4m3fnuz": 8, "float8_e4m3b11fnuz": 8,
    "float8_e5m2": 8, "float8_e5m2fnuz": 8, "float8_e3m4": 8, "float8_e8m0fnu": 8, "float4_e2m1fn": 4,
}

# The default PartitionAxis after __post_init__ (eformer/escale/partition/manager.py); tuples are composite axes.
DEFAULT_PARTITION_AXIS = {
    "data_parallel_axis": "dp",
    "fully_sharded_data_parallel_axis": "fsdp",
    "tensor_parallel_axis": "tp",
    "sequence_parallel_axis": "sp",
    "expert_parallel_axis": "ep",
    "batch_axis": ("fsdp", "dp"),
    "sequence_axis": "sp",
    "query_sequence_axis": "sp",
    "head_axis": "tp",
    "kv_head_axis": "tp",
    "key_sequence_axis": "sp",
    "hidden_state_axis": "tp",
    "mlp_intermediate_axis": "tp",
    "vocab_axis": "tp",
    "expert_axis": "ep",
    "expert_gate_axis": None,
    "attention_dim_axis": None,
    "attention_kv_dim_axis": None,
    "bias_head_sequence_axis": None,
    "bias_key_sequence_axis": None,
}

# The config flags rule and preset `cases` may test, with EasyDeL's defaults.
DEFAULT_FLAGS = {"use_expert_tensor_mode": False, "fsdp_is_ep_bound": True, "sp_is_ep_bound": True}


def parse_mesh(text, devices):
    """'dp=1,fsdp=-1,tp=8' -> [(name, size)...], the single -1 filled from `devices`."""
    axes = []
    for item in text.split(","):
        name, _, size = item.partition("=")
        axes.append((name.strip(), int(size)))
    known = 1
    for _, size in axes:
        if size != -1:
            known *= size
    fills = [i for i, (_, size) in enumerate(axes) if size == -1]
    if len(fills) > 1:
        sys.exit("bench_baseline: more than one -1 in --mesh")
    if fills:
        if devices is None or devices % known:
            sys.exit(f"bench_baseline: cannot fill -1: {devices} devices over {known}")
        axes[fills[0]] = (axes[fills[0]][0], devices // known)
    product = math.prod(size for _, size in axes)
    if devices is not None and product != devices:
        sys.exit(f"bench_baseline: mesh has {product} devices, --devices says {devices}")
    return axes


class SpecResolver:
    """Rule specs -> tuples of entries (None, 'axis' or ('a', 'b')), as PartitionAxis.resolve_spec."""

    def __init__(self, presets_file, partition_axis, flags):
        with open(presets_file) as f:
            data = yaml.safe_load(f)
        self.tokens = data["tokens"]
        self.presets = data["presets"]
        self.partition_axis = partition_axis
        self.flags = flags

    def holds(self, when):
        return bool(eval(when, {"__builtins__": {}}, dict(self.flags)))

    def token(self, name):
        bare = name[2:-2] if len(name) > 4 and name.startswith("__") and name.endswith("__") else name
        if name == "_":
            return "EMPTY"
        if bare == name and name in ("dp", "fsdp", "tp", "ep", "sp"):
            return None  # the mesh axis itself
        upper = bare.upper()
        return upper if upper in self.tokens else None

    def name(self, name):
        token = self.token(name)
        if token is None:
            return name
        attribute = self.tokens[token]
        if attribute is None:
            return None
        value = self.partition_axis[attribute]
        return tuple(value) if isinstance(value, list) else value

    def entry(self, entry):
        if entry is None:
            return None
        if isinstance(entry, list):
            names = []
            for item in entry:
                value = self.name(item)
                if isinstance(value, tuple):
                    names.extend(value)
                elif value is not None:
                    names.append(value)
            return tuple(names) if len(names) > 1 else (names[0] if names else None)
        return self.name(entry)

    def resolve(self, spec):
        if isinstance(spec, str):
            preset = self.presets[spec]
            axes = preset["axes"]
            for case in preset.get("cases", []):
                if self.holds(case["when"]):
                    axes = case["axes"]
                    break
            spec = axes
        return tuple(self.entry(e) for e in spec)


def load_rules(path, resolver):
    with open(path) as f:
        data = yaml.safe_load(f)
    rules = []
    for rule in data["rules"]:
        spec = rule["spec"]
        for case in rule.get("cases", []):
            if resolver.holds(case["when"]):
                spec = case["spec"]
                break
        rules.append((re.compile(rule["match"]), resolver.resolve(spec)))
    return data.get("layout", "easydel"), rules


def match_partition_rules(rules, name, shape):
    """eformer match_partition_rules, strict=True, min_size=0, for one leaf."""
    if len(shape) == 0:
        return ()
    for pattern, spec in rules:
        if pattern.search(name) is not None:
            return spec[: len(shape)] if len(spec) > len(shape) else spec
    raise ValueError(f"Partition rule not found for param: {name}")


def get_corrected_named_sharding(shape, spec, mesh_sizes):
    """eformer's correction of a spec for a shape on a mesh (eformer/escale/partition/constraints.py)."""
    corrected = []
    for dim, entry in zip(shape, list(spec) + [None] * (len(shape) - len(spec))):
        if entry is None:
            corrected.append(None)
            continue
        names = entry if isinstance(entry, tuple) else (entry,)
        if any(n not in mesh_sizes for n in names):
            corrected.append(None)
            continue
        if dim % math.prod(mesh_sizes[n] for n in names) != 0:
            corrected.append(None)
            continue
        corrected.append(entry)
    if all(e is None for e in corrected):
        return ()
    return tuple(corrected)


def device_block_shape(shape, spec, coords, mesh_sizes):
    """The shape of the block of `shape` the device at mesh coordinates `coords` holds."""
    block = []
    for dim, entry in zip(shape, list(spec) + [None] * (len(shape) - len(spec))):
        if entry is None:
            block.append(dim)
            continue
        names = entry if isinstance(entry, tuple) else (entry,)
        parts = math.prod(mesh_sizes[n] for n in names)
        index = 0
        for n in names:  # major to minor
            index = index * mesh_sizes[n] + coords[n]
        size = dim // parts
        start = index * size
        block.append(min(dim, start + size) - start)
    return block


def nbytes(shape, bits):
    return (math.prod(shape) * bits + 7) // 8


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", required=True, help="tree JSON (easyplan tree --format json)")
    parser.add_argument("--rules", required=True, help="rule file (YAML)")
    parser.add_argument("--mesh", required=True, help="e.g. dp=1,fsdp=-1,ep=1,tp=8,sp=1")
    parser.add_argument("--devices", type=int, help="fills the -1 of --mesh")
    parser.add_argument("--config", help="an `easyplan resolve` output: partition_axis and MoE flags")
    parser.add_argument("--presets", default=os.path.join(ROOT, "rules", "_presets.yaml"))
    parser.add_argument("--format", choices=["text", "json"], default="text")
    args = parser.parse_args()

    partition_axis, flags = dict(DEFAULT_PARTITION_AXIS), dict(DEFAULT_FLAGS)
    if args.config:
        with open(args.config) as f:
            config = json.load(f)
        config = config.get("config", config)
        partition_axis.update(config.get("partition_axis") or {})
        flags.update({k: config[k] for k in DEFAULT_FLAGS if k in config})
    resolver = SpecResolver(args.presets, partition_axis, flags)
    rules_layout, rules = load_rules(args.rules, resolver)

    with open(args.tree) as f:
        tree = json.load(f)
    if tree.get("layout", "easydel") != rules_layout:
        sys.exit(f"bench_baseline: the rules are for the {rules_layout} layout, the tree is {tree.get('layout')}")

    mesh = parse_mesh(args.mesh, args.devices)
    mesh_sizes = dict(mesh)

    # Every tensor: its effective spec and bytes, summed per spec (all tensors with one spec are laid
    # out alike, so each device's share is computed once per spec and block shape).
    total_bytes = 0
    per_spec = {}  # (spec, shape, bits) -> count
    for param in tree["params"]:
        shape = tuple(param["shape"])
        bits = DTYPE_BITS[param["dtype"]]
        total_bytes += nbytes(shape, bits)
        spec = match_partition_rules(rules, param["name"], shape)
        spec = get_corrected_named_sharding(shape, spec, mesh_sizes)
        key = (spec, shape, bits)
        per_spec[key] = per_spec.get(key, 0) + 1

    # Per device: the blocks it holds. Device ids are positions in the row-major mesh array.
    names = [n for n, _ in mesh]
    devices = math.prod(mesh_sizes.values())
    device_bytes = []
    for device in range(devices):
        coords, rest = {}, device
        for n, size in reversed(mesh):
            coords[n] = rest % size
            rest //= size
        held = 0
        for (spec, shape, bits), count in per_spec.items():
            held += count * nbytes(device_block_shape(shape, spec, coords, mesh_sizes), bits)
        device_bytes.append(held)

    ordered = sorted(device_bytes)
    top = max(device_bytes)
    summary = {
        "tensors": len(tree["params"]),
        "total_bytes": total_bytes,
        "devices": devices,
        "mesh": ",".join(f"{n}={mesh_sizes[n]}" for n in names),
        "min_bytes_per_device": ordered[0],
        "median_bytes_per_device": ordered[(len(ordered) - 1) // 2],
        "max_bytes_per_device": top,
        "worst_device": device_bytes.index(top),  # the first device holding the most
        "sum_bytes_over_devices": sum(device_bytes),
    }
    if args.format == "json":
        print(json.dumps(summary, indent=2))
    else:
        print(f"{summary['tensors']:,} tensors ({total_bytes:,} bytes) on mesh {summary['mesh']} ({devices:,} devices); "
              f"per device: min {summary['min_bytes_per_device']:,}, median {summary['median_bytes_per_device']:,}, "
              f"max {top:,} bytes (device {summary['worst_device']})")


if __name__ == "__main__":
    main()
