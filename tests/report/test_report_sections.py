"""The report's step-time chart, its pipeline timeline, `suggest --report`'s candidates and Pareto chart,
and the aggregated mesh of a large device count, rendered by headless Chromium and checked against easyplan's JSON
(docs/REPORT.md). EASYPLAN_BINARY names the easyplan to test."""
import json
import os
import subprocess

import pytest
from conftest import BINARY, CHROMIUM, ROOT, easyplan

if not os.path.exists(CHROMIUM):
    pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)", allow_module_level=True)

from browser import non_local_requests, png_is_blank  # noqa: E402

MODEL = "examples/llama-3.1-8b"
STEP = ["--mode", "train", "--batch", "16", "--seq", "2048", "--hardware", "h100-sxm"]


def load(browser, path):
    page = browser.new_page()
    page.open(path.as_uri())
    page.wait_for("document.body.dataset.ready === 'true'")
    assert non_local_requests(page.requests) == []
    assert page.errors == []
    return page


def test_step_time_chart_shows_costs_layers(browser, tmp_path):
    mesh = ["--mesh", "dp=1,fsdp=4,ep=1,tp=2,sp=1"]
    out = tmp_path / "cost.html"
    easyplan("report", MODEL, *mesh, *STEP, "--microbatches", "2", "-o", out)
    cost = json.loads(easyplan("cost", MODEL, *mesh, *STEP, "--microbatches", "2", "--format", "json"))
    page = load(browser, out)
    try:
        assert page.evaluate("!document.getElementById('cost-section').hidden")
        bars = page.evaluate("""[...document.querySelectorAll('#cost rect[data-layer]')].map(r =>
            [r.dataset.layer, r.dataset.kind, Number(r.dataset.seconds)])""")
        expected = []
        for layer in cost["layers"]:
            expected.append([layer["scope"], "compute", pytest.approx(layer["compute_s"], rel=1e-12)])
            expected.append([layer["scope"], "communication", pytest.approx(layer["communication_s"], rel=1e-12)])
        assert bars == expected
        note = page.evaluate("document.getElementById('cost-note').textContent")
        assert "2 microbatches" in note and "MFU" in note
    finally:
        page.close()


PIPELINE = ["--mesh", "pp=4,tp=2", "--mode", "train", "--batch", "16", "--seq", "2048", "--microbatches", "8",
            "--hardware", "h100-sxm"]
BOXES = """[...document.querySelectorAll('#pipeline rect[data-kind]')].map(r => [Number(r.dataset.device),
    r.dataset.kind, Number(r.dataset.microbatch), Number(r.dataset.chunk), Number(r.dataset.start),
    Number(r.dataset.end), Number(r.getAttribute('x')), Number(r.getAttribute('width'))])"""


def test_pipeline_timeline_draws_costs_step_in_its_schedules_order(browser, tmp_path):
    """ZB-H1 on 4 stages: a box per F, I and W of every microbatch, the slowest stage's boxes as long as
    cost's pace, each W after its I, the drawing's x proportional to time, and the two ends marked."""
    args = [*PIPELINE, "--pp-schedule", "zero-bubble"]
    out = tmp_path / "pipeline.html"
    easyplan("report", MODEL, *args, "-o", out)
    cost = json.loads(easyplan("cost", MODEL, *args, "--format", "json"))
    pipe = cost["pipeline"]
    page = load(browser, out)
    try:
        assert page.evaluate("!document.getElementById('pipeline-section').hidden")
        boxes = page.evaluate(BOXES)
        assert len(boxes) == 8 * 4 * 3
        assert {(d, k, mb) for d, k, mb, *_ in boxes} == {(d, k, mb) for d in range(4) for k in "FIW" for mb in range(8)}
        pace = pipe["pace"]
        widths = {"F": pace["forward_s"], "I": pace["backward_input_s"], "W": pace["backward_weight_s"]}
        for d, k, mb, _, start, end, _, _ in boxes:
            if d == pipe["slowest_stage"]:
                assert end - start == pytest.approx(widths[k], rel=1e-9), (d, k, mb)
        starts = {(d, k, mb): (s, e) for d, k, mb, _, s, e, _, _ in boxes}
        for d, mb in [(d, mb) for d in range(4) for mb in range(8)]:
            assert starts[(d, "W", mb)][0] >= starts[(d, "I", mb)][1] - 1e-12
            if d > 0:
                assert starts[(d, "F", mb)][0] >= starts[(d - 1, "F", mb)][1] - 1e-12
        # The drawing is to scale: x is an affine function of the start time.
        (_, _, _, _, s0, _, x0, _), (_, _, _, _, s1, _, x1, _) = min(boxes, key=lambda b: b[4]), max(boxes, key=lambda b: b[4])
        for *_, s, _, x, _ in boxes:
            assert x == pytest.approx(x0 + (x1 - x0) * (s - s0) / (s1 - s0), abs=1e-6)
        # The timeline's end is cost's pipeline part (one timing); the schedule's formula, m x pace + bubble
        # at the pace-setting stage's times, is drawn dashed beside it.
        end = max(b[5] for b in boxes)
        part = cost["step_time_s"] - pipe["exposed_parameter_s"] - pipe["exposed_gradient_sync_s"] - pipe["optimizer_update_s"]
        data = page.evaluate("JSON.parse(document.getElementById('easyplan-data').textContent).pipeline")
        assert data["end_s"] == pytest.approx(end, rel=1e-12)
        assert data["cost_pipeline_s"] == pytest.approx(part, rel=1e-12)
        assert data["cost_pipeline_s"] == pytest.approx(end, rel=1e-12)
        assert data["formula_pipeline_s"] >= end
        x = lambda id: float(page.evaluate(f"document.getElementById('{id}').getAttribute('x1')"))
        assert x("cost-end") >= x("timeline-end") > x0
        note = page.evaluate("document.getElementById('pipeline-note').textContent")
        assert "ZB-H1" in note and "m x pace + bubble" in note, note
        assert not png_is_blank(page.screenshot(str(tmp_path / "pipeline.png")))
    finally:
        page.close()


def test_pipeline_timeline_outlines_dualpipes_overlapped_pairs(browser, tmp_path):
    out = tmp_path / "dualpipe.html"
    easyplan("report", MODEL, *PIPELINE, "--pp-schedule", "dualpipe", "-o", out)
    page = load(browser, out)
    try:
        boxes = page.evaluate(BOXES)
        data = page.evaluate("JSON.parse(document.getElementById('easyplan-data').textContent).pipeline")
        pairs = sum(1 for b in data["boxes"] if b[6] and b[1] == "F")
        assert pairs > 0
        assert page.evaluate("document.querySelectorAll('#pipeline rect.overlap').length") == pairs
        # Device d runs stage d for the microbatches that enter at stage 0, and p-1-d for the others.
        for d, _, mb, chunk, *_ in boxes:
            assert chunk == (d if mb < 4 else 3 - d), (d, mb, chunk)
        rows = page.evaluate("[...document.querySelectorAll('#pipeline text[data-row]')].map(t => t.firstChild.nodeValue)")
        assert rows[0] == "device 0: stages 0, 3"
    finally:
        page.close()


def test_a_pipelined_plan_without_a_priced_step_says_why(browser, tmp_path):
    out = tmp_path / "plan.html"
    easyplan("report", MODEL, "--mesh", "pp=4,tp=2", "-o", out)
    page = load(browser, out)
    try:
        note = page.evaluate("document.getElementById('pipeline-note').textContent")
        assert note.startswith("No timeline:") and "--hardware" in note, note
        assert page.evaluate("document.querySelectorAll('#pipeline rect').length") == 0
    finally:
        page.close()


def test_suggest_report_draws_every_candidate_and_the_pareto_front(browser, tmp_path):
    out = tmp_path / "suggest.html"
    result = json.loads(easyplan("suggest", MODEL, "--devices", "8", *STEP, "--format", "json", "--report", out))
    page = load(browser, out)
    try:
        points = page.evaluate("""[...document.querySelectorAll('#pareto circle[data-rank]')].map(c =>
            [Number(c.dataset.rank), Number(c.dataset.stepTime), c.classList.contains('pareto')])""")
        assert len(points) == result["feasible"]
        pareto = {result["candidates"][i]["rank"] for i in result["pareto"]}
        assert {rank for rank, _, on_front in points if on_front} == pareto
        rows = page.evaluate("[...document.querySelectorAll('#candidates tbody tr')].map(r => Number(r.dataset.rank))")
        assert rows == [c["rank"] for c in result["candidates"]]
        winner = result["candidates"][0]
        assert points[0][1] == pytest.approx(winner["step_time_s"], rel=1e-12)
        # The page is the winner's plan: its mesh, and its step time in the cost section.
        title = page.evaluate("document.getElementById('title').textContent")
        assert all(f"{axis}={size}" in title for axis, size in winner["mesh"].items()), title
        assert page.evaluate("document.querySelectorAll('[data-device]').length") == 8
        assert not png_is_blank(page.screenshot(str(tmp_path / "suggest.png")))
    finally:
        page.close()


def test_a_mesh_past_4096_devices_is_drawn_in_blocks(browser, tmp_path):
    mesh = ["--mesh", "dp=3,fsdp=1024,ep=1,tp=4,sp=1"]
    out = tmp_path / "large.html"
    easyplan("report", MODEL, *mesh, "-o", out)
    plan = json.loads(easyplan("plan", MODEL, *mesh, "--format", "json", "--summary"))
    page = load(browser, out)
    try:
        cells = page.evaluate("""[...document.querySelectorAll('#mesh [data-devices]')].map(c =>
            [c.dataset.devices, Number(c.dataset.minBytes), Number(c.dataset.maxBytes)])""")
        assert len(cells) == 4096
        assert cells[0][0] == "0-2" and cells[-1][0] == "12285-12287"
        assert max(c[2] for c in cells) == plan["summary"]["max_bytes_per_device"]
        assert min(c[1] for c in cells) == plan["summary"]["min_bytes_per_device"]
        note = page.evaluate("document.getElementById('mesh-note').textContent")
        assert "4096 blocks of 3 consecutive devices" in note, note
    finally:
        page.close()


def test_the_readmes_report_example_plans_and_fits(browser, tmp_path):
    readme = (ROOT / "README.md").read_text()
    section = readme.split("\n## `easyplan report`")[1].split("\n## ")[0]
    command = section.split("```sh\n")[1].split("```")[0].replace("\\\n", " ").split()
    assert command[:3] == ["$", "easyplan", "report"], command
    args = command[3:]
    out = tmp_path / args[args.index("-o") + 1]
    args[args.index("-o") + 1] = str(out)
    done = subprocess.run([BINARY, "report", *args], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    page = load(browser, out)
    try:
        assert page.evaluate("document.getElementById('verdict').textContent").startswith("Fits")
        assert page.evaluate("!document.getElementById('cost-section').hidden")
    finally:
        page.close()
