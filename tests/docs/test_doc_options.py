"""Every flag README.md and docs/*.md show for a command is one that command's `--help` lists: the
synopses, the examples and the option tables (a row `| --flag ... |` under a `## easyplan CMD` heading).
An old spelling left in a document (say --memory-per-device) fails here."""
import os
import pathlib
import re
import subprocess

import pytest

from doc_examples import FENCE, ROOT, documents

BINARY = pathlib.Path(os.environ.get("EASYPLAN_BINARY", ROOT / "build" / "cli" / "easyplan")).resolve()
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


def commands():
    """Every command `easyplan --help` lists (the command table's, api/command_table.h)."""
    text = subprocess.run([str(BINARY), "--help"], capture_output=True, text=True).stdout
    listed = text.split("Subcommands:\n", 1)[1] if "Subcommands:\n" in text else ""
    return [line.split()[0] for line in listed.split("\n") if line.startswith("  ") and line.split()]


COMMANDS = commands()


def help_flags(command):
    """The command's flags and the global ones (`easyplan --help`: the input limits, --version)."""
    done = subprocess.run([str(BINARY), command, "--help"], capture_output=True, text=True)
    top = subprocess.run([str(BINARY), "--help"], capture_output=True, text=True)
    return set(FLAG.findall(done.stdout)) | set(FLAG.findall(top.stdout)) | {"--help"}


def uses():
    """(document:line, command, flag) for every flag a document gives a command."""
    out = []
    for path in documents():
        rel = str(path.relative_to(ROOT))
        lines = path.read_text(encoding="utf-8").split("\n")
        in_block, section, command_line = False, None, None
        for n, line in enumerate(lines, 1):
            heading = re.match(r"^#+ .*`easyplan (\w+)", line)
            if heading and not in_block:
                section = heading.group(1)
            if FENCE.match(line):
                in_block, command_line = not in_block, None
                continue
            if in_block:
                text = line[2:] if line.startswith("$ ") else line
                start = re.match(r"^\s*easyplan (\w+)", text)
                if start and start.group(1) in COMMANDS:
                    command_line = start.group(1)
                elif not (command_line and line.startswith(" ")):
                    command_line = None  # output, or another program
                if command_line:
                    code = text.split("#")[0]  # a trailing shell comment is prose
                    for flag in FLAG.findall(code):
                        out.append((f"{rel}:{n}", command_line, flag))
            elif section in COMMANDS and re.match(r"^\| `--", line):
                for flag in FLAG.findall(line.split("|")[1]):
                    out.append((f"{rel}:{n}", section, flag))
    return out


USES = uses()


def test_the_documents_give_flags():
    assert len(COMMANDS) >= 12, COMMANDS
    assert len(USES) > 100, len(USES)


@pytest.mark.parametrize("command", COMMANDS)
def test_every_documented_flag_is_in_the_commands_help(command):
    known = help_flags(command)
    missing = [f"{where}: {flag}" for where, cmd, flag in USES if cmd == command and flag not in known]
    assert not missing, f"easyplan {command} --help lacks:\n" + "\n".join(missing)
