"""The command table (api/command_table.h) against everything made from it: every command's `--help`
and the global one, the Python functions' and methods' signatures and help(), the type stubs
(easyplan/__init__.pyi), docs/OPTIONS.md, and every option table of README.md and docs/*.md.

EASYPLAN_UPDATE_GOLDEN=1 rewrites the stubs and docs/OPTIONS.md from the table (api/python/generate.py)."""
import ast
import inspect
import json
import keyword
import os
import pathlib
import pydoc
import re
import subprocess
import sys

import pytest

import easyplan
from conftest import ROOT, cli_binary

sys.path.insert(0, str(ROOT / "api" / "python"))
import generate  # noqa: E402

TABLE = json.loads(easyplan._easyplan.command_table())
COMMANDS = {command["name"]: command for command in TABLE["commands"]}
UPDATE = os.environ.get("EASYPLAN_UPDATE_GOLDEN") == "1"


def python_name(name):
    return name + "_" if keyword.iskeyword(name) else name


def cli_options(options):
    """flag -> help as `--help` shows them, of the options the CLI has."""
    return {o["flag"]: o["cli_help"] for o in options if o["surface"] != "python" and not o["hidden"]}


def help_entries(*args):
    """flag -> help of every option and positional `easyplan ARGS --help` lists (CLI11's layout: the
    name and its type in a 30-column field, the help after it or on the next line)."""
    text = subprocess.run([cli_binary(), *args, "--help"], capture_output=True, text=True, check=True).stdout
    entries, section, pending = {}, None, None
    for line in text.split("\n"):
        if line in ("Options:", "Positionals:", "Subcommands:"):
            section = line
            continue
        if line and not line.startswith(" "):
            section = None  # the footer's "Examples:" and prose are no options
            continue
        if not line.startswith("  ") or section is None:
            continue
        if pending is not None and line.startswith(" " * 30):
            entries[pending] = line.strip()
            pending = None
            continue
        name, _, rest = line[2:].partition("  ")
        flag = name.split(" ")[0]
        if section == "Subcommands:":
            flag = "command:" + flag
        if rest.strip():
            entries[flag] = rest.strip()
        else:
            pending = flag
    return entries


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_commands_help_is_its_table(command):
    listed = help_entries(command)
    assert listed.pop("-h,--help") == "Print this help message and exit"
    assert listed == cli_options(COMMANDS[command]["options"])


def test_the_global_help_is_the_table():
    listed = help_entries()
    assert listed.pop("-h,--help") == "Print this help message and exit"
    assert listed.pop("--version") == "Display program version information and exit"
    commands = {k[len("command:"):]: v for k, v in listed.items() if k.startswith("command:")}
    assert commands == {name: spec["summary"] for name, spec in COMMANDS.items()}
    options = {k: v for k, v in listed.items() if not k.startswith("command:")}
    assert options == cli_options(TABLE["global"])


def expected_keywords(command, method):
    """The keyword-only parameters a function (or Model method) of `command` has, with their defaults."""
    spec = COMMANDS[command]
    out = {}
    for option in spec["options"]:
        if option["surface"] == "cli" or option["hidden"] or option["name"] in spec["python_positional"]:
            continue
        if method and option["group"] == "config" and option["name"] != "set":
            continue  # the Model's own
        out[python_name(option["name"])] = option["default"]
    if not method:
        out.update({o["name"]: o["default"] for o in TABLE["model"] if o["group"] == "limits"})
    return out


@pytest.mark.parametrize("method", [False, True], ids=["function", "method"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_python_signature_is_its_table(command, method):
    function = getattr(easyplan.Model if method else easyplan, command)
    parameters = inspect.signature(function).parameters
    keywords = {n: p.default for n, p in parameters.items() if p.kind is inspect.Parameter.KEYWORD_ONLY}
    assert keywords == expected_keywords(command, method)
    positional = [n for n, p in parameters.items() if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    assert positional == ["self" if method else "config"] + [python_name(n) for n in
                                                             COMMANDS[command]["python_positional"]]
    # help() lists every option, with what it means.
    text = pydoc.render_doc(function, renderer=pydoc.plaintext)
    for option in COMMANDS[command]["options"]:
        if python_name(option["name"]) in keywords:
            assert python_name(option["name"]) in text and option["help"][:40] in text, option["name"]


def test_help_of_cost_lists_every_option():
    text = pydoc.render_doc(easyplan.cost, renderer=pydoc.plaintext)
    for flag in ("mesh", "hardware", "microbatches", "precision", "optimizer", "max_memory", "max_tensors"):
        assert re.search(r"\b%s \(" % flag, text), flag


def test_the_models_signature_is_its_table():
    parameters = inspect.signature(easyplan.Model).parameters
    keywords = {n: p.default for n, p in parameters.items() if p.kind is inspect.Parameter.KEYWORD_ONLY}
    assert keywords == {o["name"]: o["default"] for o in TABLE["model"] if o["surface"] != "cli"}


def test_the_checked_in_files_are_what_the_table_renders():
    stale = []
    for path, text in generate.rendered().items():
        current = pathlib.Path(path).read_text(encoding="utf-8") if os.path.exists(path) else None
        if current == text:
            continue
        if UPDATE:
            pathlib.Path(path).write_text(text, encoding="utf-8")
        else:
            stale.append(os.path.relpath(path, ROOT))
    assert not stale, f"{stale} differ from the command table: rerun with EASYPLAN_UPDATE_GOLDEN=1"


def stub_functions():
    """name -> ast.FunctionDef of the stubs' module functions, and of Model's methods as Model.name."""
    tree = ast.parse((ROOT / "api" / "python" / "easyplan" / "__init__.pyi").read_text(encoding="utf-8"))
    out = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            out[node.name] = node
        elif isinstance(node, ast.ClassDef) and node.name == "Model":
            out.update({"Model." + f.name: f for f in node.body if isinstance(f, ast.FunctionDef)})
    return out


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_stub_is_its_table(command):
    stubs = stub_functions()
    for name, method in ((command, False), ("Model." + command, True)):
        keywords = [a.arg for a in stubs[name].args.kwonlyargs]
        assert keywords == list(expected_keywords(command, method)), name


def test_the_models_stub_is_its_table():
    keywords = [a.arg for a in stub_functions()["Model.__init__"].args.kwonlyargs]
    assert keywords == [o["name"] for o in TABLE["model"] if o["surface"] != "cli"]


FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


def documented_options():
    """(file:line, command, flag) of every option-table row (`| `--flag` ... |`) of README.md and
    docs/*.md under a heading that names `easyplan COMMAND`."""
    out = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        section, fenced = None, False
        for n, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
            if line.lstrip().startswith("```"):
                fenced = not fenced
            heading = re.match(r"^#+ .*`easyplan (\w+)", line)
            if heading and not fenced:
                section = heading.group(1)
            elif re.match(r"^#+ ", line) and not fenced:
                section = None
            if section in COMMANDS and re.match(r"^\| `-", line):
                for flag in FLAG.findall(line.split("|")[1]):
                    out.append((f"{path.relative_to(ROOT)}:{n}", section, flag))
    return out


def test_every_documented_option_is_in_its_commands_table():
    uses = documented_options()
    assert len(uses) > 100, len(uses)
    flags = {name: {f.split(",")[-1] for f in cli_options(spec["options"])} | set(cli_options(TABLE["global"]))
             for name, spec in COMMANDS.items()}
    missing = [f"{where}: easyplan {command} {flag}" for where, command, flag in uses if flag not in flags[command]]
    assert not missing, "\n".join(missing)
