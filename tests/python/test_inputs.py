"""Every accepted form of `config` and of `tree` gives the same answer."""
import json
import pathlib

import pytest

import easyplan
from conftest import EXAMPLES

LLAMA = EXAMPLES / "llama-3.1-8b"
MESH = "dp=1,fsdp=4,ep=1,tp=2,sp=1"


def test_config_as_file_directory_path_dict_text_and_model_agree():
    config = json.loads((LLAMA / "config.json").read_text())
    expected = easyplan.plan(str(LLAMA / "config.json"), mesh=MESH).to_dict()
    for form in (str(LLAMA), LLAMA, pathlib.PurePath(LLAMA), config, json.dumps(config), easyplan.Model(config)):
        assert easyplan.plan(form, mesh=MESH).to_dict() == expected, type(form)


def test_model_keeps_the_resolved_config_and_plans_many_meshes():
    model = easyplan.Model(LLAMA, set=["attn_mechanism=vanilla"])
    assert model.config["attn_mechanism"] == "vanilla"
    totals = {m: sum(model.plan(mesh=m).bytes_per_device) for m in ("dp=1,fsdp=8,ep=1,tp=1,sp=1", "dp=1,fsdp=4,ep=1,tp=2,sp=1", "dp=1,fsdp=2,ep=1,tp=4,sp=1")}
    assert len(set(totals.values())) == 1  # the same bytes, spread differently


def test_config_options_of_a_model_are_refused_per_call():
    with pytest.raises(easyplan.BadInputError, match="belong to the Model"):
        easyplan.plan(easyplan.Model(LLAMA), mesh=MESH, strict=True)


class Leaf:
    """A stand-in for jax.ShapeDtypeStruct / numpy arrays: anything with .shape and .dtype."""

    def __init__(self, shape, dtype):
        self.shape = shape
        self.dtype = dtype


TREE_ENTRIES = [
    {"name": "model/embed_tokens/embedding", "shape": [128, 64], "dtype": "bfloat16"},
    {"name": "model/layers/0/self_attn/q_proj/kernel", "shape": [64, 64], "dtype": "bfloat16"},
    {"name": "lm_head/kernel", "shape": [64, 128], "dtype": "bfloat16"},
]
PYTREE_TUPLES = {"model": {"embed_tokens": {"embedding": ((128, 64), "bfloat16")},
                           "layers": [{"self_attn": {"q_proj": {"kernel": ((64, 64), "bfloat16")}}}]},
                 "lm_head": {"kernel": ((64, 128), "bfloat16")}}
PYTREE_LEAVES = {"model": {"embed_tokens": {"embedding": Leaf((128, 64), "bfloat16")},
                           "layers": {"0": {"self_attn": {"q_proj": {"kernel": Leaf([64, 64], "bfloat16")}}}}},
                 "lm_head": {"kernel": Leaf((64, 128), "bfloat16")}}


@pytest.mark.parametrize("tree", [TREE_ENTRIES, PYTREE_TUPLES, PYTREE_LEAVES], ids=["list", "tuples", "leaves"])
def test_tree_forms_plan_the_same(tree, tmp_path):
    path = tmp_path / "tree.json"
    path.write_text(json.dumps({"model_type": "", "layout": "easydel", "params": TREE_ENTRIES}))
    expected = easyplan.plan(tree=str(path), rules="rules/llama.yaml", mesh="dp=1,fsdp=2,ep=1,tp=2,sp=1")
    got = easyplan.plan(tree=tree, rules="rules/llama.yaml", mesh="dp=1,fsdp=2,ep=1,tp=2,sp=1")
    assert sorted(got.specs.items()) == sorted(expected.specs.items())
    assert got.bytes_per_device == expected.bytes_per_device
    assert got.specs["model/embed_tokens/embedding"] == (("fsdp", "sp"), "tp")


def test_numpy_arrays_are_leaves():
    import numpy  # python3-numpy is installed by scripts/_common.sh: a missing one fails
    tree = {"w": numpy.zeros((8, 4), dtype=numpy.float32)}
    assert easyplan.tree(tree=tree)["params"] == [{"name": "w", "shape": [8, 4], "dtype": "float32"}]


def test_a_tree_with_a_config_plans_with_the_family_rules():
    plan = easyplan.plan(LLAMA, tree=TREE_ENTRIES, mesh="dp=1,fsdp=2,ep=1,tp=2,sp=1")
    assert plan.specs["lm_head/kernel"] == (("fsdp", "sp"), "tp")
