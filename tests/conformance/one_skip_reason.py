#!/usr/bin/python3
"""Without the corpus, every test that reads it skips with one wording (issue 44: the 102 skips of a
fresh clone gave one cause in three wordings). Runs the given gtest binaries with EASYPLAN_CORPUS_DIR
naming no directory and reads each skip's message as scripts/test_summary.py does.

    one_skip_reason.py BINARY[:GTEST_FILTER]...
"""
import collections
import os
import pathlib
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "scripts"))
from test_summary import skip_reason  # noqa: E402

ABSENT = "/nonexistent/easyplan-corpus"
EXPECTED = f"the corpus of real configs is absent (EASYPLAN_CORPUS_DIR, here '{ABSENT}', is not a directory)"


def skips(binary, gtest_filter):
    env = dict(os.environ, EASYPLAN_CORPUS_DIR=ABSENT)
    env.pop("EASYPLAN_CORPUS_FAMILIES_DIR", None)
    args = [binary, f"--gtest_filter={gtest_filter}"]
    out = subprocess.run(args, env=env, capture_output=True, text=True, check=False).stdout
    # One block per skipped test: "FILE:LINE: Skipped" then the message.
    blocks = out.split("[ RUN      ]")[1:]
    return [skip_reason(block) for block in blocks if "[  SKIPPED ]" in block]


def main(specs):
    reasons = collections.Counter()
    for spec in specs:
        binary, _, gtest_filter = spec.partition(":")
        found = skips(binary, gtest_filter or "*")
        if not found:
            print(f"{binary}: no test skipped without the corpus")
            return 1
        reasons.update(found)
    for reason, n in reasons.items():
        print(f"skipped {n}: {reason}")
    if list(reasons) != [EXPECTED]:
        print(f"expected every skip to say: {EXPECTED}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
