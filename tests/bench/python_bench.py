"""Speed of the Python module (issue 18), each figure against its target and a baseline measured in
the same run: `import easyplan` (target 50 ms; baseline: `import json`), easyplan.plan of Llama-3.1-8B
once its Model was loaded (target 5 ms; baseline: the CLI's `plan --format json` as a whole process),
and one Model re-planned on 100 meshes (target 100 ms). Run by scripts/bench with PYTHONPATH set to
the built package and EASYPLAN_BINARY to the CLI.
"""
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LLAMA = os.path.join(ROOT, "examples", "llama-3.1-8b")
MESHES = [f"dp={d},fsdp={f},ep=1,tp={t},sp=1" for d, f, t in
          [(1, 8, 1), (1, 4, 2), (1, 2, 4), (1, 1, 8), (2, 4, 1), (2, 2, 2), (2, 1, 4), (4, 2, 1), (4, 1, 2),
           (8, 1, 1)]] * 10


def median_ms(run, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def import_ms(module):
    code = f"import time; t = time.perf_counter(); import {module}; print((time.perf_counter() - t) * 1e3)"
    runs = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                 env=os.environ).stdout) for _ in range(7)]
    return statistics.median(runs)


def main():
    import easyplan
    easyplan_import = import_ms("easyplan")
    json_import = import_ms("json")
    model = easyplan.Model(LLAMA)
    model.plan(mesh=MESHES[0])
    plan_ms = median_ms(lambda: model.plan(mesh=MESHES[1]).specs, 50)
    cli = os.environ.get("EASYPLAN_BINARY")
    cli_ms = median_ms(lambda: subprocess.run([cli, "plan", LLAMA, "--mesh", MESHES[1], "--format", "json"],
                                              capture_output=True, check=True), 20) if cli else float("nan")
    sweep_ms = median_ms(lambda: [model.plan(mesh=m).bytes_per_device for m in MESHES], 5)
    print(f"python: import easyplan {easyplan_import:.1f} ms (target 50; import json {json_import:.1f} ms)")
    print(f"python: Model.plan Llama-3.1-8B with specs {plan_ms:.2f} ms (target 5; CLI process {cli_ms:.1f} ms, "
          f"{cli_ms / plan_ms:.1f}x)")
    print(f"python: one Model on 100 meshes {sweep_ms:.1f} ms (target 100)")
    ok = easyplan_import < 50 and plan_ms < 5 and sweep_ms < 100
    print("python: targets " + ("met" if ok else "MISSED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
