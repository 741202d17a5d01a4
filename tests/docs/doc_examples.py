"""The `$ command` examples of README.md and docs/*.md, read from their fenced code blocks.

A block's example starts at a line `$ COMMAND` (continued by lines ending in a backslash) and its
expected output is the lines after it, up to the next `$ ` line or the end of the block. In the
expected output a line that is `...` (indented or not) stands for any number of lines, and a line ending in
`...` for any line starting with the text before it. Blocks are run in order, each example in a
fresh shell, all of a file's examples in one scratch directory that mirrors the repository root, so an
example may use a file an earlier one created."""
import dataclasses
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^(\s*)(```+|~~~+)")


@dataclasses.dataclass
class Example:
    file: str    # "README.md", "docs/RULES.md"
    line: int    # of the `$ ` line
    command: str
    expected: list

    @property
    def id(self):
        return f"{self.file}:{self.line}"


def documents():
    return [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))


def examples_of(path):
    """Every `$ ` example in the fenced blocks of the Markdown file `path`."""
    rel = str(path.relative_to(ROOT))
    lines = path.read_text(encoding="utf-8").split("\n")
    out, in_block, current = [], False, None
    i = 0
    while i < len(lines):
        line = lines[i]
        if FENCE.match(line):
            if in_block and current:
                out.append(current)
            in_block, current = not in_block, None
            i += 1
            continue
        if in_block and line.startswith("$ "):
            if current:
                out.append(current)
            start = i + 1
            command = line[2:]
            while command.endswith("\\") and i + 1 < len(lines):
                i += 1
                command = command[:-1] + " " + lines[i].strip()
            current = Example(rel, start, command.strip(), [])
        elif in_block and current is not None:
            current.expected.append(line)
        i += 1
    return out


def matches(expected, actual):
    """Whether `actual` lines match `expected` with `...` elisions (see the module docstring)."""
    expected = [e.rstrip() for e in expected]
    actual = [a.rstrip() for a in actual]
    while expected and expected[-1] == "":
        expected.pop()
    while actual and actual[-1] == "":
        actual.pop()

    def match(e, a):
        if e == len(expected):
            return a == len(actual)
        if expected[e].strip() == "...":
            return any(match(e + 1, k) for k in range(a, len(actual) + 1))
        if a == len(actual):
            return False
        want = expected[e]
        got = actual[a]
        ok = got.startswith(want[:-3]) if want.endswith("...") else got == want
        return ok and match(e + 1, a + 1)

    return match(0, 0)
