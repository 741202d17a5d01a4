"""The Python functions return exactly what the CLI prints with --format json, for every corpus
config: resolve, tree (both layouts), plan on two meshes, memory in both modes."""
import os

import pytest

import easyplan
from conftest import EXAMPLES, corpus_models, run_cli

MESHES = ["dp=1,fsdp=8,ep=1,tp=1,sp=1", "dp=1,fsdp=2,ep=2,tp=2,sp=1"]
MODELS = corpus_models()


def test_the_corpus_is_read_when_it_is_there():
    # Like the C++ conformance tests: the corpus is optional (a clone may lack it), but a corpus
    # folder that exists and yields no model means the tests silently stopped reading it.
    corpus = os.environ.get("EASYPLAN_CORPUS_DIR", "")
    if corpus and os.path.isdir(corpus):
        assert MODELS, f"EASYPLAN_CORPUS_DIR {corpus} holds no config"


@pytest.mark.parametrize("model", MODELS, ids=lambda p: p.name)
def test_resolve_matches_the_cli(model):
    expected, code = run_cli("resolve", model)
    assert code == 0
    assert easyplan.resolve(str(model)) == expected
    expected, _ = run_cli("resolve", model, "--provenance")
    assert easyplan.resolve(model, provenance=True) == expected


@pytest.mark.parametrize("layout", ["easydel", "hf"])
@pytest.mark.parametrize("model", MODELS, ids=lambda p: p.name)
def test_tree_matches_the_cli(model, layout):
    expected, code = run_cli("tree", model, "--layout", layout, "--format", "json")
    assert code == 0
    assert easyplan.tree(model, layout=layout) == expected


@pytest.mark.parametrize("mesh", MESHES)
@pytest.mark.parametrize("model", MODELS, ids=lambda p: p.name)
def test_plan_matches_the_cli(model, mesh):
    plan = easyplan.plan(model, mesh=mesh)
    expected, code = run_cli("plan", model, "--mesh", mesh, "--format", "json")
    if code == 1:  # a plan with errors: the CLI writes no artifact, Python still returns the plan
        assert not plan.ok and any(f["severity"] == "error" for f in plan.findings)
        return
    assert code == 0 and plan.ok
    assert plan.to_dict() == expected
    assert plan.bytes_per_device == [d["bytes"] for d in expected["devices"]]
    assert plan.specs == {p["name"]: tuple(tuple(e) if isinstance(e, list) else e for e in p["effective_spec"])
                          for p in expected["params"]}


@pytest.mark.parametrize("mode", ["train", "prefill"])
@pytest.mark.parametrize("model", MODELS, ids=lambda p: p.name)
def test_memory_matches_the_cli(model, mode):
    # 1024 tokens: within every corpus model's context (gpt2's learned positions end there, issue 44).
    args = dict(mesh=MESHES[0], mode=mode, batch=4, seq=1024)
    expected, code = run_cli("memory", model, "--mesh", args["mesh"], "--mode", mode, "--batch", 4, "--seq", 1024,
                             "--format", "json")
    assert code in (0, 1)
    assert easyplan.memory(model, **args) == expected


def test_validate_activations_and_explain_match_the_cli():
    llama = EXAMPLES / "llama-3.1-8b"
    expected, code = run_cli("validate", llama, "--mesh", "dp=1,fsdp=2,ep=1,tp=4,sp=1", "--format", "json",
                             "--max-memory", "10GiB")
    assert easyplan.validate(llama, mesh="dp=1,fsdp=2,ep=1,tp=4,sp=1", max_memory="10GiB") == expected
    assert code == (0 if expected["ok"] else 1)
    expected, _ = run_cli("activations", llama, "--mode", "decode", "--batch", 16, "--seq", 8192, "--mesh",
                          "dp=2,fsdp=1,ep=1,tp=4,sp=1", "--format", "json")
    assert easyplan.activations(llama, mode="decode", batch=16, seq=8192,
                                mesh={"dp": 2, "fsdp": 1, "ep": 1, "tp": 4, "sp": 1}) == expected
    text, code = run_cli("explain", llama, "q_proj", "--mesh", "dp=1,fsdp=8,ep=1,tp=1,sp=1", expect_json=False)
    assert code == 0
    assert easyplan.explain(llama, "q_proj", mesh="dp=1,fsdp=8,ep=1,tp=1,sp=1") == text


def test_config_options_reach_the_model_like_cli_flags():
    llama = EXAMPLES / "llama-3.1-8b"
    expected, _ = run_cli("resolve", llama, "--set", "rope_scaling.factor=16", "--set", "attn_mechanism=ring",
                          "--devices", 16, "--set", "sharding_axis_dims=[1,-1,1,4,1]")
    got = easyplan.resolve(llama, set={"rope_scaling.factor": 16, "attn_mechanism": "ring",
                                       "sharding_axis_dims": [1, -1, 1, 4, 1]}, devices=16)
    assert got == expected


@pytest.mark.parametrize("example, mesh", [("llama-3.1-8b", "dp=1,fsdp=2,ep=1,tp=2,sp=1"),
                                           ("mixtral-8x7b", "dp=1,fsdp=2,ep=2,tp=1,sp=1"), ("gpt2", "dp=2,fsdp=2,ep=1,tp=1,sp=1")])
def test_check_matches_the_cli(example, mesh):
    expected, code = run_cli("check", EXAMPLES / example, "--mesh", mesh, "--format", "json", "--memory")
    assert code == (0 if expected["ok"] else 1)
    assert easyplan.check(EXAMPLES / example, mesh=mesh, memory=True) == expected


EXPORT_FORMATS = ["jax", "jax-json", "xla-hlo", "shardy", "torch", "hf-tp-plan", "json"]


@pytest.mark.parametrize("to", EXPORT_FORMATS)
@pytest.mark.parametrize("example", ["llama-3.1-8b", "mixtral-8x7b"])
def test_export_matches_the_cli_byte_for_byte(example, to):
    model = EXAMPLES / example
    mesh = "dp=1,fsdp=2,ep=2,tp=2,sp=1"
    expected, code = run_cli("export", model, "--mesh", mesh, "--to", to, expect_json=False)
    assert code == 0
    assert easyplan.export(model, to, mesh=mesh) == expected
    if to in ("xla-hlo", "shardy"):
        expected, code = run_cli("export", model, "--mesh", mesh, "--to", to, "--format", "json", expect_json=False)
        assert code == 0
        assert easyplan.export(model, to, mesh=mesh, format="json") == expected


def test_export_of_torch_formats_plans_easydel_names_when_the_layout_is_given():
    model = EXAMPLES / "llama-3.1-8b"
    mesh = "dp=1,fsdp=8,ep=1,tp=1,sp=1"
    expected, code = run_cli("export", model, "--mesh", mesh, "--to", "torch", "--layout", "easydel", expect_json=False)
    assert code == 0
    exported = easyplan.export(model, "torch", mesh=mesh, layout="easydel")
    assert exported == expected
    assert "model/embed_tokens/embedding" in exported


def test_export_of_a_plan_with_errors_raises_plan_error_with_the_findings():
    args = dict(tree="tests/fixtures/plan/uneven_tree.json", rules="tests/fixtures/plan/incomplete_rules.yaml",
                mesh="fsdp=2,tp=2,sp=1")
    _, code = run_cli("export", "--tree", args["tree"], "--rules", args["rules"], "--mesh", args["mesh"], "--to",
                      "json", expect_json=False)
    assert code == 1
    with pytest.raises(easyplan.PlanError) as raised:
        easyplan.export(None, "json", **args)
    assert any(f["code"] == "unmatched-tensor" for f in raised.value.findings)
    assert "unmatched-tensor" in str(raised.value)
