#!/usr/bin/env python3
"""Prices every run of docs/cost_validation.yaml with `easyplan cost` and prints the published figure
beside easyplan's estimate (docs/COST.md#validation-table).

    scripts/cost_validation.py EASYPLAN_BINARY [--format markdown|json] [--check]

The figure compared is the run's published tokens/s per chip when the source gives one (it does not
depend on how the source counts model FLOPs), else its MFU. The error is estimate / published - 1.
No constant of the step-time model is fitted to these runs: every row is a held-out comparison.

--check exits 1 unless every run with a config is priced (a test that the data and the tool agree,
whatever the errors are); without it the exit code is 0 once the table is printed.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

import yaml

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def axis_flag(sizes):
    return ",".join(f"{axis}={size}" for axis, size in sizes.items())


def command(binary, run):
    """The `easyplan cost` command of one run: --mesh with each DCN factor divided out, plus --dcn."""
    mesh = dict(run["mesh"])
    dcn = run.get("dcn") or {}
    for axis, factor in dcn.items():
        mesh[axis] //= factor
    cmd = [binary, "cost", os.path.join(ROOT, run["model"]["config"]), "--hardware", run["hardware"],
           "--mode", "train", "--batch", str(run["global_batch"]), "--seq", str(run["seq"]),
           "--mesh", axis_flag(mesh), "--format", "json",
           # The published runs ran, so they fit; the table compares time, not the memory model's verdict.
           "--max-memory", "1PiB"]
    if dcn:
        cmd += ["--dcn", axis_flag(dcn)]
    if run.get("rules"):
        cmd += ["--rules", os.path.join(ROOT, run["rules"])]
    if run.get("microbatches"):
        cmd += ["--microbatches", str(run["microbatches"])]
    for setting in run.get("sets") or []:
        cmd += ["--set", setting]
    if run.get("gradient_checkpointing"):
        cmd += ["--set", "gradient_checkpointing=" + run["gradient_checkpointing"]]
    if run.get("matmul_precision", "bf16") != "bf16":
        cmd += ["--precision", run["matmul_precision"]]
    return cmd


def price(binary, run):
    """One row: the compared figure, published and estimated, or the reason there is none."""
    row = {"id": run["id"], "hardware": run["hardware"], "chips": run["chips"],
           "confidence": run.get("layout_confidence", "")}
    published = run.get("published") or {}
    if published.get("tokens_per_s_per_chip"):
        row["metric"], row["published"] = "tokens/s/chip", float(published["tokens_per_s_per_chip"])
    else:
        row["metric"], row["published"] = "MFU", float(published["mfu"])
    if not run["model"].get("config"):
        row["skipped"] = "no config file written for the model (see its notes)"
        return row
    cmd = command(binary, run)
    done = subprocess.run(cmd, capture_output=True, text=True)
    # Exit 1 is a finding (a plan error, or no fit): the JSON still comes, without an estimate on errors.
    try:
        result = json.loads(done.stdout)
    except json.JSONDecodeError:
        row["skipped"] = f"easyplan cost exited {done.returncode}: {done.stderr.strip()[:200]}"
        return row
    if "step_time_s" not in result:
        row["skipped"] = "the plan has errors: " + "; ".join(f.get("message", "") for f in result.get("findings", []))
        return row
    per_chip = result["tokens_per_s"] / run["chips"]
    row["estimate"] = per_chip if row["metric"] == "tokens/s/chip" else result["mfu"]
    row["error"] = row["estimate"] / row["published"] - 1
    row["exposed_share"] = result["exposed_communication_s"] / result["step_time_s"]
    return row


def figure(metric, value):
    return f"{value:,.0f}" if metric == "tokens/s/chip" else f"{value:.1%}"


def markdown(rows):
    lines = ["| run | hardware | chips | layout | figure | published | easyplan | error | exposed comm. |",
             "| --- | --- | ---: | --- | --- | ---: | ---: | ---: | ---: |"]
    for r in rows:
        if "skipped" in r:
            lines.append(f"| {r['id']} | {r['hardware']} | {r['chips']} | {r['confidence']} | {r['metric']} | "
                         f"{figure(r['metric'], r['published'])} | skipped: {r['skipped']} | | |")
            continue
        lines.append(f"| {r['id']} | {r['hardware']} | {r['chips']} | {r['confidence']} | {r['metric']} | "
                     f"{figure(r['metric'], r['published'])} | {figure(r['metric'], r['estimate'])} | "
                     f"{r['error']:+.0%} | {r['exposed_share']:.0%} |")
    priced = [abs(r["error"]) for r in rows if "error" in r]
    if priced:
        within = sum(e <= 0.25 for e in priced)
        lines.append("")
        lines.append(f"{len(priced)} runs priced: median |error| {statistics.median(priced):.0%}, "
                     f"{within} within 25%; exposed comm. is the share of the step easyplan leaves uncovered.")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary")
    parser.add_argument("--format", choices=["markdown", "json"], default="markdown")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--data", default=os.path.join(ROOT, "docs", "cost_validation.yaml"))
    args = parser.parse_args()
    with open(args.data, encoding="utf-8") as f:
        runs = yaml.safe_load(f)["runs"]
    rows = [price(args.binary, run) for run in runs]
    print(json.dumps(rows, indent=1) if args.format == "json" else markdown(rows))
    if args.check:
        unpriced = [r for r in rows if "skipped" in r and not r["skipped"].startswith("no config")]
        for r in unpriced:
            print(f"{r['id']}: not priced: {r['skipped']}", file=sys.stderr)
        return 1 if unpriced else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
