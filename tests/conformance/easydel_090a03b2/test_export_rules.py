"""`export --to rules` writes the rules a plan used, laid on its mesh; fed back through --rules the file
gives the same plan, tensor for tensor (docs/FORMATS.md, "rules")."""

import json
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
BINARY = os.environ.get("EASYPLAN_BINARY", str(ROOT / "build" / "cli" / "easyplan"))

CASES = [
    ("mixtral-8x7b", "dp=1,fsdp=2,ep=2,tp=2,sp=1", "090a03b2"),
    ("deepseek-v3", "dp=1,fsdp=2,ep=2,tp=2,sp=1", "090a03b2"),
    ("gpt-oss-20b", "dp=1,fsdp=2,ep=2,tp=2,sp=1", "090a03b2"),
    # A mesh whose fsdp does not divide the hidden size 2048: the drop is written into the file.
    ("qwen3-30b-a3b", "fsdp=3,tp=2", "090a03b2"),
    ("llama-3.1-8b", "fsdp=4,tp=2", "c14e25c9"),
]


def run(*args):
    result = subprocess.run([BINARY, *args], capture_output=True, text=True, check=False)
    assert result.returncode in (0, 1), result.stderr
    return result.stdout


def layout(plan_json):
    return {p["name"]: (p["shape"], p["effective_spec"]) for p in json.loads(plan_json)["params"]}


@pytest.mark.parametrize("example,mesh,version", CASES, ids=[c[0] + "-" + c[2] for c in CASES])
def test_exported_rules_give_the_same_plan(tmp_path, example, mesh, version):
    config = str(ROOT / "examples" / example)
    common = ["--mesh", mesh, "--easydel-version", version]
    rules = tmp_path / "rules.yaml"
    rules.write_text(run("export", config, "--to", "rules", *common))
    assert "rules:" in rules.read_text()
    builtin = layout(run("plan", config, *common, "--format", "json"))
    replayed = layout(run("plan", config, *common, "--rules", str(rules), "--format", "json"))
    assert replayed == builtin
