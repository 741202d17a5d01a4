"""`plan --layout hf` under 090a03b2, which splits the experts of gpt-oss and Llama 4: the checkpoint's
fused experts take the spec of the split tensor each feeds (`easydel_link`, docs/TREES.md), so the HF
tree holds on every device the bytes the EasyDeL tree holds, and no fused expert is left replicated.
`--dtype bfloat16` compares the dequantized view (gpt-oss's checkpoint stores MXFP4 blocks)."""

import json
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
BINARY = os.environ.get("EASYPLAN_BINARY", str(ROOT / "build" / "cli" / "easyplan"))
MESH = "dp=1,fsdp=2,ep=2,tp=2,sp=1"


def plan(example, *args):
    run = subprocess.run([BINARY, "plan", str(ROOT / "examples" / example), "--mesh", MESH, "--dtype", "bfloat16",
                          "--format", "json", *args], capture_output=True, text=True, check=False)
    assert run.returncode in (0, 1), run.stderr
    return json.loads(run.stdout)


@pytest.mark.parametrize("example", ["gpt-oss-20b", "llama-4-scout"])
def test_the_fused_hf_experts_lie_as_the_split_ones(example):
    easydel = plan(example)
    hf = plan(example, "--layout", "hf")
    assert easydel["easydel_version"] == hf["easydel_version"] == "090a03b2"
    experts = [p for p in hf["params"] if "experts.gate_up_proj" in p["name"] or "experts.down_proj" in p["name"]]
    assert experts and all(p["rule"] is not None for p in experts), [p["name"] for p in experts if p["rule"] is None]
    assert hf["summary"]["max_bytes_per_device"] == easydel["summary"]["max_bytes_per_device"]
