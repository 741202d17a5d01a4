#!/usr/bin/python3
"""The last lines of scripts/test: how many tests ran, passed, failed and were skipped, and why each
group was skipped (GoogleTest's GTEST_SKIP message), from ctest's JUnit file.

    scripts/test_summary.py build/Testing/junit.xml
"""
import collections
import re
import sys
import xml.etree.ElementTree as ET


def skip_reason(output):
    """The message GTEST_SKIP() printed: the line after 'FILE:LINE: Skipped'."""
    lines = (output or "").splitlines()
    for i, line in enumerate(lines):
        if re.search(r":\d+: Skipped$", line) and i + 1 < len(lines) and lines[i + 1].strip():
            return lines[i + 1].strip()
    return "no reason given"


def main(path):
    root = ET.parse(path).getroot()
    cases = root.iter("testcase")
    counts = collections.Counter()
    reasons = collections.Counter()
    for case in cases:
        status = case.get("status")
        if case.find("skipped") is not None or status in ("notrun", "disabled"):
            counts["skipped"] += 1
            out = case.find("system-out")
            reasons[skip_reason(out.text if out is not None else "")] += 1
        elif case.find("failure") is not None or status == "fail":
            counts["failed"] += 1
        else:
            counts["passed"] += 1
    total = sum(counts.values())
    print(f"easyplan tests: {total:,} in all: {counts['passed']:,} passed, {counts['failed']:,} failed, "
          f"{counts['skipped']:,} skipped")
    for reason, n in reasons.most_common():
        print(f"  skipped {n:,}: {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
