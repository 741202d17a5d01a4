#!/usr/bin/env python3
"""Prices every run of docs/cost_validation.yaml with `easyplan cost` and prints the published figure
beside easyplan's estimate (docs/COST.md#validation-table).

    scripts/cost_validation.py EASYPLAN_BINARY [--format markdown|json] [--check]

The figure compared is the run's published tokens/s per chip when the source gives one (it does not
depend on how the source counts model FLOPs), else its step time (`step_time_s`, as independent of the
FLOP count), else its MFU, else its HFU (`hfu`: a utilization that counts recomputed FLOPs, compared with
easyplan's busiest device's FLOPs, `step_flops`, at the peak its MFU uses). The error is
estimate / published - 1 (for a time, a negative error is a faster estimate). No constant of the
step-time model is fitted to these runs: every row is a held-out comparison.

Pipelined runs (a mesh with `pp` > 1) also pass `--pp-schedule`, `--virtual-stages` and `--pp-layers`
from the run's `pp_schedule`, `virtual_stages` and `pp_layers`, with `pp` in `--mesh` (and in `--dcn`
when the stages cross the network); a `pp` of 1 is left out of `--mesh`, a step without a pipeline.
When `cost` does not price such a row (an `easyplan` that does not know the pipeline flags yet rejects
them), the row says "not priced:" with cost's error message and is counted apart; the run goes on.

Serving rows (a `serving:` block: batch, input and output tokens) compare a time to first token, a time
per output token or output tokens/s per chip, priced from `cost --mode prefill` and `--mode decode`.

--check exits 1 unless every run with a config is priced (a test that the data and the tool agree,
whatever the errors are), pipelined runs included once `easyplan cost --help` lists `--pp-schedule`
(before that they are reported on stderr and do not fail the check); without it the exit code is 0
once the table is printed. With --doc FILE, --check also exits 1 unless FILE holds the printed markdown
table line for line (docs/COST.md's table is the model's output on its commit, not an older one's).
"""

import argparse
import difflib
import json
import os
import statistics
import subprocess
import sys

import yaml

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


# --easydel-version: the EasyDeL version every run is priced at (None: easyplan's default).
EASYDEL_VERSION = None


def axis_flag(sizes):
    return ",".join(f"{axis}={size}" for axis, size in sizes.items())


def pipelined(run):
    """A run whose mesh has pipeline stages (`pp` > 1)."""
    return (run.get("mesh") or {}).get("pp", 1) > 1


def base_command(binary, run, mode, batch, seq):
    """The `easyplan cost` command of one step of a run: --mesh with each DCN factor divided out, plus --dcn."""
    mesh = dict(run["mesh"])
    dcn = dict(run.get("dcn") or {})
    if mesh.get("pp", 1) == 1:
        # One stage is a step without a pipeline: the mesh EasyDeL's axes give.
        mesh.pop("pp", None)
        dcn.pop("pp", None)
    for axis, factor in dcn.items():
        mesh[axis] //= factor
    cmd = [binary, "cost", os.path.join(ROOT, run["model"]["config"]), "--hardware", run["hardware"],
           "--mode", mode, "--batch", str(batch), "--seq", str(seq),
           "--mesh", axis_flag(mesh), "--format", "json",
           # The published runs ran, so they fit; the table compares time, not the memory model's verdict.
           "--max-memory", "1PiB"]
    if dcn:
        cmd += ["--dcn", axis_flag(dcn)]
    if EASYDEL_VERSION:
        cmd += ["--easydel-version", EASYDEL_VERSION]
    if run.get("rules"):
        cmd += ["--rules", os.path.join(ROOT, run["rules"])]
    for setting in run.get("sets") or []:
        cmd += ["--set", setting]
    if run.get("matmul_precision", "bf16") != "bf16":
        cmd += ["--precision", run["matmul_precision"]]
    return cmd


def command(binary, run):
    """A training run's step."""
    cmd = base_command(binary, run, "train", run["global_batch"], run["seq"])
    if run.get("microbatches"):
        cmd += ["--microbatches", str(run["microbatches"])]
    if pipelined(run):
        if run.get("pp_schedule"):
            cmd += ["--pp-schedule", run["pp_schedule"]]
        if run.get("virtual_stages"):
            cmd += ["--virtual-stages", str(run["virtual_stages"])]
        if run.get("pp_layers"):
            cmd += ["--pp-layers", ",".join(str(n) for n in run["pp_layers"])]
    if run.get("gradient_checkpointing"):
        cmd += ["--set", "gradient_checkpointing=" + run["gradient_checkpointing"]]
    return cmd


def cost(cmd, full_error=False):
    """easyplan cost's JSON, or the reason there is none (with full_error, cost's whole error line)."""
    done = subprocess.run(cmd, capture_output=True, text=True)
    # Exit 1 is a finding (a plan error, or no fit): the JSON still comes, without an estimate on errors.
    try:
        result = json.loads(done.stdout)
    except json.JSONDecodeError:
        if full_error:
            lines = done.stderr.strip().splitlines()
            return None, f"easyplan cost exited {done.returncode}: {lines[0] if lines else '(no message)'}"
        return None, f"easyplan cost exited {done.returncode}: {done.stderr.strip()[:200]}"
    if "step_time_s" not in result:
        return None, "the plan has errors: " + "; ".join(f.get("message", "") for f in result.get("findings", []))
    return result, None


# The serving figures a run can publish: the metric's name, the published key, and how easyplan's steps
# give it. A static batch of B prompts of I tokens generating O tokens each is one prefill (the time to
# first token) and O decode steps, whose cache grows from I to I + O: a decode step's time is affine in
# the cache length, so O steps take O x the step at the mean cache length I + O / 2.
SERVING_METRICS = [
    ("TTFT ms", "ttft_ms"),
    ("TPOT ms", "tpot_ms"),
    ("out tokens/s/chip", "output_tokens_per_s_per_chip"),
]


def price_serving(binary, run, row):
    serving = run["serving"]
    batch, prompt, generated = serving["batch"], serving["input"], serving["output"]
    published = run["published"]
    for metric, key in SERVING_METRICS:
        if published.get(key):
            row["metric"], row["published"] = metric, float(published[key])
            break
    prefill, why = cost(base_command(binary, run, "prefill", batch, prompt))
    if why:
        row["skipped"] = why
        return row
    if row["metric"] == "TTFT ms":
        row["estimate"], result = prefill["step_time_s"] * 1e3, prefill
    else:
        decode, why = cost(base_command(binary, run, "decode", batch, prompt + generated // 2))
        if why:
            row["skipped"] = why
            return row
        result = decode
        if row["metric"] == "TPOT ms":
            row["estimate"] = decode["step_time_s"] * 1e3
        else:
            total = prefill["step_time_s"] + generated * decode["step_time_s"]
            row["estimate"] = batch * generated / total / run["chips"]
    row["error"] = row["estimate"] / row["published"] - 1
    row["exposed_share"] = result["exposed_communication_s"] / result["step_time_s"]
    return row


# How a source counts model FLOPs per token, beside easyplan's 6N (cost's `mfu_convention`), as the
# run's `mfu_model_flops` names it. "6N+12LHQT" is PaLM's (Chowdhery et al. 2022, Appendix B), which
# adds the attention's q.k and p.v over the whole sequence, without halving for the causal mask
# (MaxText's maxtext_utils.py quotes it as `12 * num_query_heads * num_decoder_layers * head_dim *
# max_target_length**2`, "noncausal"); Llama 3's MFU uses it too.
MFU_MODEL_FLOPS = ("6N", "6N+12LHQT")


def source_flops_ratio(run, result):
    """The source's model FLOPs over easyplan's 6N: easyplan's MFU times it is the MFU as the source counts it."""
    convention = run.get("mfu_model_flops", "6N")
    if convention not in MFU_MODEL_FLOPS:
        raise SystemExit(f"{run['id']}: mfu_model_flops: expected one of {', '.join(MFU_MODEL_FLOPS)}, "
                         f"found {convention!r}")
    if convention == "6N":
        return 1.0
    with open(os.path.join(ROOT, run["model"]["config"]), encoding="utf-8") as f:
        config = json.load(f)
    layers, heads = config["num_hidden_layers"], config["num_attention_heads"]
    head_dim = config.get("head_dim") or config["hidden_size"] // heads
    six_n = 6 * result["active_params"]
    return (six_n + 12 * layers * heads * head_dim * run["seq"]) / six_n


def price(binary, run):
    """One row: the compared figure, published and estimated, or the reason there is none."""
    row = {"id": run["id"], "hardware": run["hardware"], "chips": run["chips"],
           "confidence": run.get("layout_confidence", ""), "kind": "serving" if run.get("serving") else "training"}
    published = run.get("published") or {}
    if run.get("serving"):
        if not run["model"].get("config"):
            row["metric"], row["published"] = "-", 0.0
            row["skipped"] = "no config file written for the model (see its notes)"
            return row
        return price_serving(binary, run, row)
    if published.get("tokens_per_s_per_chip"):
        row["metric"], row["published"] = "tokens/s/chip", float(published["tokens_per_s_per_chip"])
    elif published.get("step_time_s"):
        row["metric"], row["published"] = "step s", float(published["step_time_s"])
    elif published.get("mfu"):
        row["metric"], row["published"] = "MFU", float(published["mfu"])
    else:
        row["metric"], row["published"] = "HFU", float(published["hfu"])
    if not run["model"].get("config"):
        row["skipped"] = "no config file written for the model (see its notes)"
        return row
    if pipelined(run):
        row["pipelined"] = True
        result, why = cost(command(binary, run), full_error=True)
        if why:
            row["not_priced"] = why
            return row
    else:
        result, why = cost(command(binary, run))
        if why:
            row["skipped"] = why
            return row
    if row["metric"] == "tokens/s/chip":
        row["estimate"] = result["tokens_per_s"] / run["chips"]
    elif row["metric"] == "step s":
        row["estimate"] = result["step_time_s"]
    elif row["metric"] == "MFU":
        row["estimate"] = result["mfu"] * source_flops_ratio(run, result)
    else:
        # The busiest device's FLOPs (recomputation included) over the step, at the peak the MFU uses:
        # peak = model_flops / (devices x step_time x mfu).
        row["estimate"] = result["step_flops"] * result["devices"] * result["mfu"] / result["model_flops"]
    row["error"] = row["estimate"] / row["published"] - 1
    row["exposed_share"] = result["exposed_communication_s"] / result["step_time_s"]
    return row


def figure(metric, value):
    if metric in ("MFU", "HFU"):
        return f"{value:.1%}"
    if metric == "step s":
        return f"{value:,.2f}"
    if metric.endswith("ms"):
        return f"{value:,.1f}"
    return f"{value:,.0f}"


def summary(rows, kind):
    errors = [r["error"] for r in rows if "error" in r and r["kind"] == kind]
    if not errors:
        return f"no {kind} run priced"
    priced = [abs(e) for e in errors]
    within = sum(e <= 0.25 for e in priced)
    off = sum(e >= 1.0 or e <= -0.5 for e in errors)  # estimate / published >= 2 or <= 1/2
    return (f"{len(priced)} {kind} runs: median |error| {statistics.median(priced):.0%}, {within} within 25%, "
            f"{off} off by 2x or more")


def markdown(rows):
    lines = ["| run | kind | hardware | chips | layout | figure | published | easyplan | error | exposed comm. |",
             "| --- | --- | --- | ---: | --- | --- | ---: | ---: | ---: | ---: |"]
    for r in rows:
        lead = f"| {r['id']} | {r['kind']} | {r['hardware']} | {r['chips']} | {r['confidence']} | {r['metric']} | "
        if "skipped" in r:
            lines.append(lead + f"{figure(r['metric'], r['published'])} | skipped: {r['skipped']} | | |")
            continue
        if "not_priced" in r:
            why = r["not_priced"].replace("|", "\\|")
            lines.append(lead + f"{figure(r['metric'], r['published'])} | not priced: {why} | | |")
            continue
        lines.append(lead + f"{figure(r['metric'], r['published'])} | {figure(r['metric'], r['estimate'])} | "
                     f"{r['error']:+.0%} | {r['exposed_share']:.0%} |")
    lines.append("")
    not_priced = sum("not_priced" in r for r in rows)
    lines.append(summary(rows, "training") + "; " + summary(rows, "serving") +
                 (f"; {not_priced} pipelined runs not priced." if not_priced else "."))
    lines.append("No constant is fitted to these rows, so each row's leave-one-out error is its in-sample error. "
                 "Exposed comm. is the share of the (last priced) step easyplan leaves uncovered.")
    return "\n".join(lines)


def accepts_pipeline_flags(binary):
    """Whether this easyplan's cost knows the pipeline flags (its --help lists --pp-schedule)."""
    done = subprocess.run([binary, "cost", "--help"], capture_output=True, text=True)
    return "--pp-schedule" in done.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary")
    parser.add_argument("--format", choices=["markdown", "json"], default="markdown")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--data", default=os.path.join(ROOT, "docs", "cost_validation.yaml"))
    parser.add_argument("--doc", help="with --check: a markdown file that must hold the table as printed")
    parser.add_argument("--easydel-version", help="price every run as this EasyDeL version describes it "
                        "(docs/RULES.md, \"EasyDeL versions\"); default: easyplan's default version")
    args = parser.parse_args()
    global EASYDEL_VERSION
    EASYDEL_VERSION = args.easydel_version
    if args.doc and not (args.check and args.format == "markdown"):
        parser.error("--doc compares the markdown table: it needs --check and --format markdown")
    with open(args.data, encoding="utf-8") as f:
        runs = yaml.safe_load(f)["runs"]
    rows = [price(args.binary, run) for run in runs]
    table = json.dumps(rows, indent=1) if args.format == "json" else markdown(rows)
    print(table)
    if args.check:
        stale = args.doc and not doc_holds_table(args.doc, table)
        unpriced = [r for r in rows if "skipped" in r and not r["skipped"].startswith("no config")]
        for r in unpriced:
            print(f"{r['id']}: not priced: {r['skipped']}", file=sys.stderr)
        pipeline_unpriced = [r for r in rows if "not_priced" in r]
        must_price = accepts_pipeline_flags(args.binary)
        for r in pipeline_unpriced:
            print(f"{r['id']}: not priced: {r['not_priced']}" +
                  ("" if must_price else " (easyplan cost has no --pp-schedule yet: not a failure)"), file=sys.stderr)
        return 1 if stale or unpriced or (must_price and pipeline_unpriced) else 0
    return 0


def doc_holds_table(path, table):
    """Whether the file at path holds table's lines in a row; if not, says how its table differs."""
    with open(path, encoding="utf-8") as f:
        doc = f.read().splitlines()
    want = table.splitlines()
    header = want[0]
    if header not in doc:
        print(f"{path}: no validation table (a line '{header}') to compare with", file=sys.stderr)
        return False
    start = doc.index(header)
    have = doc[start:start + len(want)]
    if have == want:
        return True
    print(f"{path}: its validation table differs from this easyplan's; rerun scripts/cost_validation.py "
          "and paste the table:", file=sys.stderr)
    sys.stderr.writelines(line + "\n" for line in difflib.unified_diff(
        have, want, f"{path} (line {start + 1})", "scripts/cost_validation.py", lineterm=""))
    return False


if __name__ == "__main__":
    sys.exit(main())
