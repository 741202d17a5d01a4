"""easyplan.report and suggest(report=...) write the page the CLI writes, byte for byte."""
import easyplan
from conftest import EXAMPLES, run_cli

STEP = ["--mode", "train", "--batch", "16", "--seq", "2048", "--hardware", "h100-sxm"]


def test_report_matches_the_cli_byte_for_byte(tmp_path):
    model = EXAMPLES / "llama-3.1-8b"
    mesh = "dp=1,fsdp=4,ep=1,tp=2,sp=1"
    expected, code = run_cli("report", model, "--mesh", mesh, *STEP, "--microbatches", "2", expect_json=False)
    assert code == 0
    page = easyplan.report(model, mesh=mesh, mode="train", batch=16, seq=2048, hardware="h100-sxm", microbatches=2)
    assert page == expected
    out = tmp_path / "plan.html"
    assert easyplan.Model(model).report(out, mesh=mesh) == out.read_text(encoding="utf-8")
    assert '"cost":null' in out.read_text(encoding="utf-8")  # no step: no cost section


def test_pipelined_report_takes_the_pipeline_options_as_the_cli_does():
    model = EXAMPLES / "llama-3.1-8b"
    args = ["--mesh", "pp=4,tp=2", *STEP, "--microbatches", "8", "--pp-schedule", "interleaved",
            "--virtual-stages", "2"]
    expected, code = run_cli("report", model, *args, expect_json=False)
    assert code == 0
    page = easyplan.report(model, mesh="pp=4,tp=2", mode="train", batch=16, seq=2048, hardware="h100-sxm",
                           microbatches=8, pp_schedule="interleaved", virtual_stages=2)
    assert page == expected
    assert '"pipeline":{"schedule":"interleaved"' in page


def test_suggest_report_writes_the_page_of_suggest_dash_dash_report(tmp_path):
    model = EXAMPLES / "llama-3.1-8b"
    cli_page = tmp_path / "cli.html"
    _, code = run_cli("suggest", model, "--devices", "8", *STEP, "--format", "json", "--report", cli_page)
    assert code == 0
    py_page = tmp_path / "py.html"
    result = easyplan.suggest(model, devices=8, mode="train", batch=16, seq=2048, hardware="h100-sxm", report=py_page)
    assert result["candidates"]
    # The reproduce commands name the config as the CLI was given it; the module, given a path, says CONFIG
    # (as suggest() does).
    cli_text = cli_page.read_text(encoding="utf-8").replace(str(model), "CONFIG")
    assert py_page.read_text(encoding="utf-8") == cli_text
    assert '"points":[[1,' in py_page.read_text(encoding="utf-8")
