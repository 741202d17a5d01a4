"""What the report's browser tests share: the repository, the easyplan under test (EASYPLAN_BINARY),
and one headless Chromium per test module. Without Debian's chromium the page tests skip."""
import os
import pathlib
import subprocess

import pytest

CHROMIUM = "/usr/bin/chromium"
ROOT = pathlib.Path(__file__).resolve().parents[2]
BINARY = os.environ.get("EASYPLAN_BINARY", str(ROOT / "build" / "cli" / "easyplan"))


def easyplan(*args):
    """easyplan's stdout, run from the repository root; exit 0 or 1 (findings) is expected."""
    done = subprocess.run([BINARY, *map(str, args)], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode in (0, 1), done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def browser():
    from browser import Browser

    with Browser(binary=CHROMIUM) as b:
        yield b
