"""`easydel_version=` on Model: the EasyDeL commit the plan describes (docs/RULES.md, "EasyDeL versions")."""
import pytest

import easyplan

from conftest import EXAMPLES

MOE_MESH = "dp=1,fsdp=2,ep=2,tp=2,sp=1"
EXPERT = "model/layers/0/block_sparse_moe/experts/w1/kernel"


def test_the_version_decides_where_the_experts_lie():
    old = easyplan.Model(EXAMPLES / "mixtral-8x7b", easydel_version="c14e25c9").plan(mesh=MOE_MESH)
    new = easyplan.Model(EXAMPLES / "mixtral-8x7b", easydel_version="090a03b2").plan(mesh=MOE_MESH)
    assert old.specs[EXPERT] == (("ep", "sp", "fsdp"), None, "tp")
    assert new.specs[EXPERT] == ("ep", None, "tp")


def test_the_default_is_the_generated_version():
    default = easyplan.Model(EXAMPLES / "mixtral-8x7b").plan(mesh=MOE_MESH)
    assert default.specs == easyplan.Model(EXAMPLES / "mixtral-8x7b", easydel_version="090a03b2").plan(mesh=MOE_MESH).specs
    assert default.specs[EXPERT] == ("ep", None, "tp")


def test_an_unknown_version_is_refused_with_the_known_ones():
    with pytest.raises(easyplan.BadInputError, match='expected one of "c14e25c9", "090a03b2"'):
        easyplan.Model(EXAMPLES / "mixtral-8x7b", easydel_version="090a")
