"""Plan.to_jax() and to_jax_rules() build jax.sharding.PartitionSpec (a stand-in module here when JAX
is absent), and say which package is missing when it is."""
import sys
import types

import pytest

import easyplan
from conftest import EXAMPLES


class PartitionSpec(tuple):
    def __new__(cls, *entries):
        return super().__new__(cls, entries)


@pytest.fixture
def stand_in_jax(monkeypatch):
    jax = types.ModuleType("jax")
    sharding = types.ModuleType("jax.sharding")
    sharding.PartitionSpec = PartitionSpec
    jax.sharding = sharding
    monkeypatch.setitem(sys.modules, "jax", jax)
    monkeypatch.setitem(sys.modules, "jax.sharding", sharding)


def test_to_jax_gives_one_partition_spec_per_tensor(stand_in_jax):
    plan = easyplan.plan(EXAMPLES / "llama-3.1-8b", mesh="dp=1,fsdp=4,ep=1,tp=2,sp=1")
    specs = plan.to_jax()
    assert set(specs) == set(plan.specs)
    assert specs["model/embed_tokens/embedding"] == PartitionSpec(("fsdp", "sp"), "tp")
    assert all(isinstance(s, PartitionSpec) for s in specs.values())


def test_to_jax_rules_keeps_the_rule_order(stand_in_jax):
    plan = easyplan.plan(EXAMPLES / "mixtral-8x7b", mesh="dp=1,fsdp=2,ep=2,tp=2,sp=1")
    rules = plan.to_jax_rules()
    assert [pattern for pattern, _ in rules] == [pattern for pattern, _ in plan.rules]
    assert rules[-1][0] == ".*"
    assert all(isinstance(spec, PartitionSpec) for _, spec in rules)


def test_to_jax_without_jax_names_the_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "jax", None)
    plan = easyplan.plan(EXAMPLES / "gpt2", mesh="dp=1,fsdp=2,ep=1,tp=1,sp=1")
    with pytest.raises(ImportError, match="'jax' package"):
        plan.to_jax()
