"""Every bundled example plans under --easydel-version 090a03b2: each tensor of its tree names the module
kind that owns it (docs/TREES.md, `module:`), so EasyDeL's automatic rules have a hook for it or, for
`none`, the catch-all, never a tree without kinds (docs/RULES.md, "EasyDeL versions")."""

import json
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
BINARY = os.environ.get("EASYPLAN_BINARY", str(ROOT / "build" / "cli" / "easyplan"))
EXAMPLES = sorted(p.name for p in (ROOT / "examples").iterdir() if (p / "config.json").exists())


@pytest.mark.parametrize("example", EXAMPLES)
def test_example_plans_with_generated_rules(example):
    run = subprocess.run([BINARY, "plan", str(ROOT / "examples" / example), "--mesh", "fsdp=2,tp=2",
                          "--easydel-version", "090a03b2", "--format", "json"],
                         capture_output=True, text=True, check=False)
    assert run.stdout, run.stderr
    plan = json.loads(run.stdout)
    assert plan["easydel_version"] == "090a03b2" and plan["rules"]["source"].startswith("automatic rules"), plan["rules"]
    # The only errors allowed are the mesh's own (a head count tp does not divide), as under c14e25c9.
    errors = [f for f in plan["findings"] if f["severity"] == "error"]
    assert all(f["code"] == "logical-indivisible" for f in errors), errors
