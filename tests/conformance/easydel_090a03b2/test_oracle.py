"""The default plan (090a03b2 is easyplan's default EasyDeL version) equals the hand transcription of
EasyDeL 090a03b2's source (tests/conformance/easydel_090a03b2/*.yaml, README.md there): every tensor
EasyDeL has, with its shape and the spec its automatic rules give it, and no other tensor. The
transcription was committed before the generator (rules/auto_rules.h), so this compares the generator
with source, not with itself. Run without --easydel-version on purpose: it pins the default."""

import json
import os
import pathlib
import subprocess

import pytest
import yaml

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[2]
BINARY = os.environ.get("EASYPLAN_BINARY", str(ROOT / "build" / "cli" / "easyplan"))
ORACLES = sorted(HERE.glob("*.yaml"))


def expand(entries):
    """The oracle's tensors with `repeat` ranges unrolled: {path: (shape, spec text)}."""
    out = {}
    for entry in entries:
        if "repeat" in entry:
            loop = entry["repeat"]
            for i in range(loop["from"], loop["to"] + 1):
                for inner in expand(entry["tensors"]).items():
                    path, value = inner
                    out[path.replace("{" + loop["var"] + "}", str(i))] = value
            continue
        assert entry["path"] not in out, entry["path"]
        out[entry["path"]] = (list(entry["shape"]), entry["spec"])
    return out


def parse_partition_spec(text):
    """`P(('fsdp', 'sp'), 'tp')` -> [['fsdp', 'sp'], ['tp']], one list of axes per dim."""
    assert text.startswith("P(") and text.endswith(")"), text
    value = eval("(" + text[2:-1] + ",)" if text[2:-1].strip() else "()", {"__builtins__": {}})  # literals only
    return [[] if entry is None else [entry] if isinstance(entry, str) else list(entry) for entry in value]


def sharding(dims, rank):
    """Axes per dim, padded with unsharded dims to the tensor's rank: P(None) and P() shard alike."""
    dims = [list(d) for d in dims] + [[] for _ in range(rank - len(dims))]
    return dims[:rank]


def plan_dims(entry):
    return [[] if d is None else [d] if isinstance(d, str) else list(d) for d in entry["effective_spec"]]


@pytest.mark.parametrize("oracle", ORACLES, ids=[p.stem for p in ORACLES])
def test_plan_matches_easydel_source(oracle):
    expected_doc = yaml.safe_load(oracle.read_text())
    expected = expand(expected_doc["tensors"])
    run = subprocess.run(
        [BINARY, "plan", str(ROOT / "examples" / expected_doc["example"]), "--mesh", expected_doc["mesh"],
         "--format", "json"],
        capture_output=True, text=True, check=False)
    assert run.returncode in (0, 1), run.stderr
    document = json.loads(run.stdout)
    assert document["easydel_version"] == "090a03b2"
    plan = {p["name"]: p for p in document["params"]}
    assert sorted(set(plan) - set(expected)) == [], "tensors EasyDeL does not have"
    assert sorted(set(expected) - set(plan)) == [], "tensors EasyDeL has that the plan lacks"
    wrong = []
    for path, (shape, spec) in expected.items():
        got = plan[path]
        if got["shape"] != shape:
            wrong.append(f"{path}: shape {got['shape']}, EasyDeL {shape}")
            continue
        want = sharding(parse_partition_spec(spec), len(shape))
        have = sharding(plan_dims(got), len(shape))
        if want != have:
            wrong.append(f"{path}: spec {have}, EasyDeL {spec}")
    assert wrong == [], "\n".join(wrong[:20]) + f"\n({len(wrong)} tensors differ)"
