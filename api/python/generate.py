#!/usr/bin/env python3
"""Renders what is generated from the command table (api/command_table.h) and checked in: the type
stubs of the easyplan package (easyplan/__init__.pyi, from the package's functions and the Model's
methods, whose signatures the table gives) and docs/OPTIONS.md (every command's options).
tests/python/test_command_table.py fails when a checked-in file differs from what this renders;
`EASYPLAN_UPDATE_GOLDEN=1` there, or running this with the package importable
(`scripts/python api/python/generate.py`), rewrites them."""
import inspect
import json
import keyword
import os
import sys

PRELUDE = '''# Type stubs of the easyplan package (api/python/easyplan/__init__.py), rendered from the command table
# by api/python/generate.py: do not edit by hand.
import os
from typing import Any, Mapping, Sequence, Union

__version__: str

ConfigLike = Union[str, os.PathLike[str], Mapping[str, Any], "Model", None]
TreeLike = Union[str, os.PathLike[str], Sequence[Mapping[str, Any]], Mapping[str, Any], None]
MeshLike = Union[str, Mapping[str, int]]
SpecEntry = Union[None, str, tuple[str, ...]]
Spec = tuple[SpecEntry, ...]
SetLike = Union[str, Sequence[str], Mapping[str, Any]]

class BadInputError(ValueError):
    message: str
    file: str | None
    line: int | None
    column: int | None
    pointer: str | None
    notes: list[str]

class InternalError(RuntimeError): ...

class PlanError(ValueError):
    findings: list[dict[str, Any]]

class Plan:
    specs: dict[str, Spec]
    rules: list[tuple[str, Spec]]
    bytes_per_device: list[int]
    findings: list[dict[str, Any]]
    ok: bool
    def to_dict(self) -> dict[str, Any]: ...
    def to_jax(self) -> dict[str, Any]: ...
    def to_jax_rules(self) -> list[tuple[str, Any]]: ...
'''


def _parameter(parameter):
    text = parameter.name
    annotation = parameter.annotation
    if annotation is not inspect.Parameter.empty:
        if parameter.default is None and not annotation.endswith("None") and annotation != "ConfigLike":
            annotation += " | None"
        text += ": " + annotation
    if parameter.default is not inspect.Parameter.empty:
        text += " = " + repr(parameter.default)
    return text


def _def(name, function, indent=""):
    signature = inspect.signature(function)
    parts = []
    keyword_only = False
    for parameter in signature.parameters.values():
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY and not keyword_only:
            parts.append("*")
            keyword_only = True
        parts.append(_parameter(parameter))
    returns = signature.return_annotation
    returns = "None" if returns in (None, inspect.Signature.empty) else returns
    head = "%sdef %s(" % (indent, name)
    lines, line = [], head
    for i, part in enumerate(parts):
        piece = part + (", " if i + 1 < len(parts) else ")")
        if len(line) + len(piece) > 116 and line.strip() != head.strip():
            lines.append(line.rstrip())
            line = indent + "    "
        line += piece
    line += " -> %s: ..." % returns
    lines.append(line)
    return "\n".join(lines)


def render_stubs(easyplan):
    out = [PRELUDE]
    out.append("class Model:")
    out.append("    warnings: list[str]")
    out.append(_def("__init__", easyplan.Model.__init__, "    "))
    out.append("    @property")
    out.append("    def config(self) -> dict[str, Any]: ...")
    commands = [name for name in easyplan.__all__ if name[0].islower()]
    for name in commands:
        out.append(_def(name, getattr(easyplan.Model, name), "    "))
    out.append("")
    for name in commands:
        out.append(_def(name, getattr(easyplan, name)))
    return "\n".join(out) + "\n"


def _python_name(option, positional):
    name = option["name"] + ("_" if keyword.iskeyword(option["name"]) else "")
    if option["surface"] == "cli":
        return "- (%s)" % option["cli_only"]
    if option["name"] in positional:
        return "`%s` (by position)" % name
    return "`%s`" % name


def _cell(text):
    return text.replace("|", "\\|")


def _default(option):
    default = option["default"]
    if default is None or option["type"] == "flag":
        return ""
    return "`%s`" % (default if isinstance(default, str) else json.dumps(default))


def _table(options, positional=()):
    lines = ["| option | Python | default | meaning |", "|---|---|---|---|"]
    for option in options:
        if option["hidden"]:
            continue
        flag = option["flag"].replace(",", ", ")
        flag = " ".join("`%s`" % part for part in flag.split(", ")) if not option["positional"] else "`%s`" % flag
        python = "`config` (the first argument)" if option["name"] == "config" else _python_name(option, positional)
        lines.append("| %s | %s | %s | %s%s |" % (flag, python, _default(option), _cell(option["help"]),
                                                  " (required)" if option["required"] else ""))
    return "\n".join(lines)


def render_options_doc(table):
    out = ["# Options", "",
           "Every option of every command, rendered from the command table (`api/option_table.cc`, "
           "`api/command_<name>.cc`; docs/ARCHITECTURE.md) by `api/python/generate.py`: do not edit by hand. "
           "The CLI's flags and `--help`, and the Python module's keyword arguments, signatures and stubs, come "
           "from the same table, and `tests/python/test_command_table.py` checks all of them against it.", "",
           "An option's Python keyword is its flag without the dashes, `-` as `_` (`--max-tensors` is "
           "`max_tensors`, `--from` is `from_`); `-` in the Python column marks what only the CLI has, "
           "with why (the table's `cli_only`). An option without a default is not given unless the caller "
           "gives it (None in Python); its meaning says what applies then.", "",
           "## Global options", "",
           "Before or after the command on the command line; keyword arguments of `easyplan.Model` and of "
           "every function that loads one (the input limits, docs/RELIABILITY.md).", "",
           _table(table["global"]), ""]
    renamed = table["renamed"]
    if renamed:
        out += ["## Renamed options", "", "Given, each is an error naming what replaced it.", "",
                "| option | commands | now |", "|---|---|---|"]
        for r in renamed:
            out.append("| `%s` | %s | %s |" % (r["flag"], ", ".join(r["commands"]), _cell(r["replacement"])))
        out.append("")
    out += ["## Output formats", "",
            "Each command's `--format` values, from the same table: the default first. `-o FILE` writes any of "
            "them to FILE atomically (docs/RELIABILITY.md).", "",
            "| command | `--format` | default |", "|---|---|---|"]
    for command in table["commands"]:
        for option in command["options"]:
            if option["name"] == "format":
                values = [option["default"]] + [c for c in option["choices"] if c != option["default"]]
                out.append("| `%s` | %s | `%s` |" % (command["name"], ", ".join("`%s`" % v for v in values),
                                                     option["default"]))
    out.append("")
    for command in table["commands"]:
        out += ["## `easyplan %s`" % command["name"], "", command["summary"][0].upper() + command["summary"][1:] + ".",
                "", _table(command["options"], command["python_positional"]), ""]
    return "\n".join(out)


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STUBS = os.path.join(ROOT, "api", "python", "easyplan", "__init__.pyi")
OPTIONS_DOC = os.path.join(ROOT, "docs", "OPTIONS.md")


def rendered():
    """{path: text} of every file this renders, from the importable easyplan package."""
    import easyplan
    table = json.loads(easyplan._easyplan.command_table())
    return {STUBS: render_stubs(easyplan), OPTIONS_DOC: render_options_doc(table)}


def main():
    # The package built beside the extension, not its sources here (the script's own directory).
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    for path, text in rendered().items():
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        print(path)


if __name__ == "__main__":
    sys.exit(main())
