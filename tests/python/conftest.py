"""Shared fixtures of the Python module's tests: the repository, the CLI binary the results are
compared with, and the corpus of real configs (EASYPLAN_CORPUS_DIR, skipped when absent)."""
import json
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def cli_binary():
    binary = os.environ.get("EASYPLAN_BINARY")
    if not binary:
        pytest.fail("EASYPLAN_BINARY is not set: run the tests through ctest or scripts/python -m pytest")
    return binary


def run_cli(*args, expect_json=True):
    """The CLI's stdout (parsed when `expect_json`) and exit code, run from the repository root."""
    result = subprocess.run([cli_binary(), *map(str, args)], capture_output=True, text=True, cwd=ROOT)
    if expect_json:
        if not result.stdout and result.returncode == 1:  # findings, and no artifact
            return None, 1
        assert result.stdout, f"no output from easyplan {' '.join(map(str, args))}: {result.stderr}"
        return json.loads(result.stdout), result.returncode
    return result.stdout, result.returncode


def corpus_models():
    corpus = os.environ.get("EASYPLAN_CORPUS_DIR", "")
    if not corpus or not pathlib.Path(corpus).is_dir():
        return []
    return sorted(p for p in pathlib.Path(corpus).iterdir() if (p / "config.json").is_file())


@pytest.fixture(autouse=True)
def _run_from_root(monkeypatch):
    monkeypatch.chdir(ROOT)
