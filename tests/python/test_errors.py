"""Bad input raises BadInputError with the CLI's location and notes; findings never raise."""
import os
import stat
import subprocess

import pytest

import easyplan
from conftest import EXAMPLES, ROOT, cli_binary

LLAMA = EXAMPLES / "llama-3.1-8b"


def test_a_malformed_config_names_file_line_and_column(tmp_path):
    bad = tmp_path / "config.json"
    bad.write_text('{\n  "model_type": "llama",\n  "hidden_size": ,\n}\n')
    with pytest.raises(easyplan.BadInputError) as caught:
        easyplan.resolve(bad)
    error = caught.value
    assert isinstance(error, ValueError)
    assert error.file == str(bad) and error.line == 3 and error.column is not None
    assert str(error).startswith(f"{bad}:3:")


def test_a_bad_value_names_its_json_pointer_and_suggests():
    with pytest.raises(easyplan.BadInputError) as caught:
        easyplan.resolve({"model_type": "llama", "attn_mechanism": "flash"})
    assert caught.value.pointer == "/attn_mechanism"
    assert "flash_attn2" in str(caught.value)
    assert caught.value.file == "<dict>"


def test_an_unknown_option_suggests_the_closest():
    with pytest.raises(easyplan.BadInputError, match="did you mean 'mesh'") as caught:
        easyplan.plan(LLAMA, mseh="fsdp=8")
    assert any("max_tensors" in note for note in caught.value.notes)


@pytest.mark.parametrize("options, message", [
    ({"mesh": 8}, "expected"),
    ({"mesh": "fsdp=-1"}, "needs --devices"),
    ({"uneven": "sometimes"}, "expected one of"),
    ({"rank": 99, "mesh": "fsdp=8"}, "not a device of the mesh"),
    ({"rules": "no/such/rules.yaml"}, "no/such/rules.yaml"),
    ({"tree": "no/such/tree.json"}, "no/such/tree.json"),
    ({"tree": [{"name": "w", "shape": [-1], "dtype": "float32"}], "mesh": "fsdp=2"}, "shape"),
    ({"tree": [{"name": "w", "shape": [2], "dtype": "floot32"}], "mesh": "fsdp=2"}, "float32"),
])
def test_plan_errors_raise_bad_input(options, message):
    with pytest.raises(easyplan.BadInputError, match=message):
        easyplan.plan(LLAMA, **options)


@pytest.mark.parametrize("shape, dtype", [([2**62, 1], "float64"), ([2**62, 2], "int8")])
@pytest.mark.parametrize("command, options", [("plan", {}), ("validate", {}), ("check", {"level": "layout"})])
def test_a_tree_whose_bytes_overflow_raises_bad_input(command, options, shape, dtype):
    # Issue 44 item 2: plan answered "0 B per device" for the first, and raised InternalError for the second.
    tree = [{"name": "w", "shape": shape, "dtype": dtype}]
    rules = str(ROOT / "tests/fixtures/plan/user_tree_rules.yaml")
    with pytest.raises(easyplan.BadInputError, match="tensor 'w' with shape .* overflows a 64-bit byte count"):
        getattr(easyplan, command)(tree=tree, rules=rules, mesh="fsdp=2,tp=4", **options)


def test_other_commands_raise_bad_input():
    with pytest.raises(easyplan.BadInputError, match="--batch"):
        easyplan.memory(LLAMA, mode="train", mesh="fsdp=8")
    with pytest.raises(easyplan.BadInputError, match="did you mean 'decode'"):
        easyplan.activations(LLAMA, mode="decod")
    with pytest.raises(easyplan.BadInputError, match="PATTERN"):
        easyplan.explain(LLAMA, "(", mesh="fsdp=8")
    with pytest.raises(easyplan.BadInputError, match="config"):
        easyplan.plan(42)
    with pytest.raises(easyplan.BadInputError, match="strict"):
        easyplan.resolve({"model_type": "llama", "hiden_size": 8}, strict=True)


def test_findings_do_not_raise():
    plan = easyplan.plan(LLAMA, mesh="dp=1,fsdp=1,ep=1,tp=3,sp=1", uneven="error")
    assert not plan.ok
    assert any(f["severity"] == "error" for f in plan.findings)
    assert easyplan.validate(LLAMA, mesh="dp=1,fsdp=1,ep=1,tp=3,sp=1", uneven="error")["ok"] is False


def test_warnings_become_python_warnings():
    with pytest.warns(UserWarning, match="hiden_size"):
        easyplan.resolve({"model_type": "llama", "hiden_size": 8})


# Issue 34: a Model's methods took set= and devices= and dropped them. An option a call cannot honour
# raises; set= is honoured (the config resolved again after the Model's own).


def test_a_models_methods_honour_set():
    model = easyplan.Model(LLAMA)
    assert model.resolve(set={"attn_mechanism": "ring"})["attn_mechanism"] == "ring"
    assert model.resolve()["attn_mechanism"] != "ring"  # the Model itself is unchanged
    options = dict(mesh="fsdp=8", mode="train", batch=8, seq=8192)
    saved = {"gradient_checkpointing": "nothing_saveable"}
    expected = easyplan.memory(LLAMA, set=saved, **options)
    assert model.memory(set=saved, **options) == expected
    assert easyplan.memory(model, set=saved, **options) == expected
    assert model.memory(**options) != expected


def test_a_models_methods_refuse_the_config_options_of_the_model():
    model = easyplan.Model(LLAMA)
    for option in (dict(devices=16), dict(defaults="init"), dict(strict=True)):
        with pytest.raises(easyplan.BadInputError) as raised:
            model.plan(**option)
        name = next(iter(option))
        assert raised.value.message == f"{name}= is an option of the Model, which resolved its config once without it"
        assert any(f"easyplan.Model(config, {name}=...)" in note for note in raised.value.notes)


# Issue 46: one name, one meaning. suggest's devices= is the chips it searches, as the CLI's
# `suggest --devices`, on a Model's method as in the function; for every other command it stays the Model's.
def test_suggest_devices_is_the_chips_it_searches_on_a_model_too():
    options = dict(hardware="h100-sxm", batch=8, seq=1024)
    expected = easyplan.suggest(LLAMA, devices=8, **options)
    model = easyplan.Model(LLAMA)
    assert model.suggest(devices=8, **options) == expected
    assert easyplan.suggest(model, devices=8, **options) == expected
    assert expected["devices"] == 8
    assert easyplan.suggest(LLAMA, devices=16, **options)["devices"] == 16
    with pytest.raises(easyplan.BadInputError, match="devices= is an option of the Model"):
        model.plan(devices=16)


def test_the_limits_are_model_options():
    # --max-layers and --max-output-bytes (docs/RELIABILITY.md "Limits") as the Model's keyword arguments.
    with pytest.raises(easyplan.BadInputError, match="raise it with --max-layers N"):
        easyplan.resolve(LLAMA, set={"num_hidden_layers": 5000})
    assert easyplan.resolve(LLAMA, set={"num_hidden_layers": 5000}, max_layers=5000)["num_hidden_layers"] == 5000
    with pytest.raises(easyplan.BadInputError, match="the torch export would be about"):
        easyplan.Model(LLAMA, max_output_bytes=1000).export("torch", mesh="fsdp=8")
    # Checked by its declaration, as every option is: the message names the flag, as the CLI prints it.
    with pytest.raises(easyplan.BadInputError, match="--max-layers must be at least 1, found 0"):
        easyplan.Model(LLAMA, max_layers=0)
    with pytest.raises(easyplan.BadInputError, match="belong to the Model"):
        easyplan.resolve(easyplan.Model(LLAMA), max_layers=10)


# Issue 36: every option is checked by its declaration in the command table, the same way in every
# command, whatever the mode, and for Python as for the CLI.
@pytest.mark.parametrize("command, options, message", [
    ("memory", dict(mode="", mesh="fsdp=8", batch=8, seq=64), "--mode is empty: memory takes"),
    ("check", dict(seed=-1, mesh="fsdp=8"), "option seed: expected a non-negative integer"),
    ("check", dict(seed=2**64, mesh="fsdp=8"), "does not fit in 64 bits"),
    ("report", dict(batch=-1), "--batch must be at least 1, found -1"),
    ("report", dict(seq=0), "--seq must be at least 1, found 0"),
    ("report", dict(max_memory="lots"), "--max-memory 'lots' is not a byte size"),
])
def test_python_refuses_what_the_cli_refuses(command, options, message):
    with pytest.raises(easyplan.BadInputError, match=message):
        getattr(easyplan, command)(LLAMA, **options)
    flags = []
    for key, value in options.items():
        flags += ["--" + key.replace("_", "-"), str(value)]
    result = subprocess.run([cli_binary(), command, str(LLAMA), *flags, "-o", os.devnull], capture_output=True,
                            text=True)
    assert result.returncode == 2, result.stderr


def test_pages_are_written_as_the_cli_writes_them(tmp_path):
    # As -o: atomically, an existing file's mode kept; a path that cannot be written is bad input.
    page = tmp_path / "page.html"
    page.write_text("old", encoding="utf-8")
    page.chmod(0o644)
    returned = easyplan.report(LLAMA, page, mesh="fsdp=8")
    assert page.read_text(encoding="utf-8") == returned
    assert stat.S_IMODE(page.stat().st_mode) == 0o644
    with pytest.raises(easyplan.BadInputError, match="missing"):
        easyplan.report(LLAMA, tmp_path / "missing" / "page.html", mesh="fsdp=8")
    with pytest.raises(easyplan.BadInputError, match="missing"):
        easyplan.suggest(LLAMA, devices=8, mode="train", batch=16, seq=2048, hardware="h100-sxm",
                         report=tmp_path / "missing" / "page.html")
