"""Every pipelined `cost` golden's headline adds up (issue 45): the step time is its compute, its exposed
communication and its pipeline bubble, as printed, within the rounding of three significant digits."""

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
GOLDENS = sorted((ROOT / "tests" / "golden" / "cost").glob("*.stdout"))
UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
SECONDS = r"(-?[0-9.]+) (s|ms|us|ns)"
HEADLINE = re.compile(
    rf"^step time\s+{SECONDS}\s+compute {SECONDS} \+ exposed communication {SECONDS}"
    rf"(?: \+ pipeline bubble {SECONDS})?$",
    re.M,
)


def seconds(value, unit):
    return float(value) * UNITS[unit]


def pipelined():
    return [path for path in GOLDENS if "\npipeline: " in path.read_text()]


def test_the_pipelined_goldens_cover_every_schedule():
    text = "".join(path.read_text() for path in pipelined())
    for schedule in ("1f1b", "gpipe", "interleaved", "zero-bubble", "dualpipe"):
        assert f" {schedule} schedule" in text or f'"schedule": "{schedule}"' in text, schedule


@pytest.mark.parametrize("path", pipelined(), ids=lambda p: p.stem)
def test_the_headlines_parts_add_up_to_the_step_time(path):
    match = HEADLINE.search(path.read_text())
    assert match, f"{path.name}: no headline with a pipeline bubble"
    step, compute, exposed, bubble = (seconds(match[i], match[i + 1]) for i in (1, 3, 5, 7))
    parts = compute + exposed + bubble
    # Each figure is printed to 3 significant digits: half a unit in the last place each.
    slack = sum(abs(x) * 5e-3 for x in (step, compute, exposed, bubble))
    assert abs(step - parts) <= slack, (path.name, step, compute, exposed, bubble)
