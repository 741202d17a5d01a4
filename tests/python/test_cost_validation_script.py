"""scripts/cost_validation.py compares a published MFU with easyplan's in the source's FLOP count."""
import importlib.util

import pytest

from conftest import ROOT


def load_script():
    spec = importlib.util.spec_from_file_location("cost_validation", ROOT / "scripts" / "cost_validation.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_of(convention, seq):
    run = {"id": "probe", "model": {"config": "examples/llama-3.1-405b/config.json"}, "seq": seq}
    if convention is not None:
        run["mfu_model_flops"] = convention
    return run


def test_easyplans_own_count_leaves_the_mfu_as_it_is():
    script = load_script()
    assert script.source_flops_ratio(run_of(None, 8192), {"active_params": 4e11}) == 1.0
    assert script.source_flops_ratio(run_of("6N", 8192), {"active_params": 4e11}) == 1.0


def test_palms_count_adds_twelve_l_h_q_t_per_token_and_grows_with_the_sequence():
    script = load_script()
    n = 403_747_897_344  # Llama 3.1 405B's matmul parameters, as cost counts them
    attention = 12 * 126 * 128 * 128  # layers x heads x head dim, per token of context
    for seq in (8192, 131072):
        expected = (6 * n + attention * seq) / (6 * n)
        assert script.source_flops_ratio(run_of("6N+12LHQT", seq), {"active_params": n}) == pytest.approx(expected)
    # At 128K tokens the attention term outweighs 6N: the MFU more than doubles in PaLM's count.
    assert script.source_flops_ratio(run_of("6N+12LHQT", 131072), {"active_params": n}) > 2


def test_an_unknown_count_names_the_run_and_the_choices():
    script = load_script()
    with pytest.raises(SystemExit, match=r"probe: mfu_model_flops: expected one of 6N, 6N\+12LHQT, found '6ND'"):
        script.source_flops_ratio(run_of("6ND", 8192), {"active_params": 4e11})
