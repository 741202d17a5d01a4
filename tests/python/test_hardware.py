"""--hardware from Python: memory(..., hardware=NAME) and validate(..., hardware=...) return what the CLI
prints with --format json, and an unknown name fails as the CLI does (docs/COST.md#hardware-profiles)."""
import pytest

import easyplan
from conftest import EXAMPLES, run_cli

LLAMA = EXAMPLES / "llama-3.1-8b"
MESH = "dp=1,fsdp=8,ep=1,tp=1,sp=1"


@pytest.mark.parametrize("hardware", ["h100-sxm", "tpu-v5p", "tests/fixtures/hardware/custom-gpu.yaml"])
def test_memory_with_hardware_matches_the_cli(hardware):
    expected, code = run_cli("memory", LLAMA, "--mesh", MESH, "--mode", "train", "--batch", 8, "--seq", 4096,
                             "--hardware", hardware, "--format", "json")
    assert code in (0, 1)
    got = easyplan.memory(LLAMA, mesh=MESH, mode="train", batch=8, seq=4096, hardware=hardware)
    assert got == expected
    assert got["hardware"] == hardware


def test_memory_of_h100_sxm_budgets_its_80_gib():
    got = easyplan.memory(LLAMA, mesh=MESH, mode="prefill", batch=1, seq=1024, hardware="h100-sxm")
    assert got["budget_per_device"] == 80 * 2**30
    # The old key stays for a while, and the document says it is deprecated (issue 46).
    assert got["memory_per_device"] == got["budget_per_device"]
    assert "memory_per_device" in got["deprecated_keys"]
    assert got["fits"]


def test_max_memory_overrides_the_hardware_budget():
    got = easyplan.memory(LLAMA, mesh=MESH, mode="prefill", batch=1, seq=1024, hardware="h100-sxm",
                          max_memory="40GiB")
    assert got["budget_per_device"] == 40 * 2**30
    assert "hardware" not in got


def test_validate_with_hardware_matches_the_cli():
    expected, code = run_cli("validate", LLAMA, "--mesh", MESH, "--mode", "train", "--batch", 8, "--seq", 4096,
                             "--hardware", "tpu-v5e", "--format", "json")
    assert code == 1
    got = easyplan.validate(LLAMA, mesh=MESH, mode="train", batch=8, seq=4096, hardware="tpu-v5e")
    assert got == expected
    assert any(f["code"] == "over-budget" and "--hardware budget of tpu-v5e" in f["message"]
               for f in got["findings"])


def test_unknown_hardware_suggests_the_closest_profile():
    with pytest.raises(easyplan.BadInputError) as raised:
        easyplan.memory(LLAMA, mesh=MESH, mode="train", batch=8, seq=4096, hardware="h100")
    assert "did you mean 'h100-sxm'" in str(raised.value)


def test_key_given_twice_in_a_profile_is_a_python_warning_as_the_cli_prints_it(tmp_path):
    """A --hardware profile (or --rules file) is read after the Model is loaded: its duplicate-key warning
    used to be dropped in Python, where the CLI prints it (issue 36)."""
    from conftest import ROOT
    profile = tmp_path / "chip.yaml"
    valid = (ROOT / "tests" / "bad_inputs" / "inputs" / "hw_valid.yaml").read_text()
    profile.write_text(valid.replace("peak_flops_fp8: 1979e12", "peak_flops_bf16: 900e12"))
    options = dict(mesh="fsdp=8", mode="train", batch=8, seq=512, hardware=str(profile))
    with pytest.warns(UserWarning, match=r"/peak_flops_bf16: key given more than once, at .*chip.yaml:7:18"):
        easyplan.cost(EXAMPLES / "gpt2", **options)
    with pytest.raises(easyplan.BadInputError, match="key given more than once"):
        easyplan.cost(EXAMPLES / "gpt2", strict=True, **options)
