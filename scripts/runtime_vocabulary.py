#!/usr/bin/env python3
"""Writes the pinned vocabularies of the runtime exports (schemas/runtimes/*.yaml) from a runtime's source.

    scripts/runtime_vocabulary.py megatron GIT_DIR COMMIT > schemas/runtimes/megatron.yaml
    scripts/runtime_vocabulary.py maxtext GIT_DIR COMMIT > schemas/runtimes/maxtext.yaml

GIT_DIR is a clone of NVIDIA/Megatron-LM or AI-Hypercomputer/maxtext (a bare one will do); files are read
with `git show COMMIT:PATH`, never imported, so neither torch nor jax is needed. `easyplan export --to
megatron|maxtext` checks every flag, key and value it writes against these lists (planner/runtime_vocabulary.h),
so the lists say what the pinned commit accepts, read the way the runtime reads it:

- Megatron-LM: every flag of megatron/training/arguments.py, i.e. the literal flags of its add_argument calls
  and the flags ArgumentGroupFactory (megatron/training/argument_utils.py) derives from the fields of the
  dataclasses it is given: `--` + the field name with `_` -> `-`; a bool field whose default is not False
  becomes `--no-NAME` and `--disable-NAME` (store_false); an `argparse_meta` `arg_names` replaces them;
  fields in `exclude` and `init=False` fields have none. `choices` keeps each flag's literal choices
  (add_argument's `choices=`, a field's Literal type).
- MaxText: every field of the pydantic models in src/maxtext/configs/types.py (pyconfig's
  _check_for_invalid_keys accepts a key that is a field of MaxTextConfig or of a model nested in it), and the
  remat_policy names that src/maxtext/layers/decoders.py's get_remat_policy handles.

torch.distributed.pipelining has no such generator: schemas/runtimes/torch_pipelining.yaml is transcribed from
torch/distributed/pipelining/schedules.py (`__all__` and get_schedule_class) at the commit its header names.
"""

import ast
import subprocess
import sys


def git_show(git_dir, commit, path):
    return subprocess.run(["git", "--git-dir", git_dir, "show", f"{commit}:{path}"], check=True,
                          capture_output=True, text=True).stdout


def git_grep(git_dir, commit, pattern, under):
    result = subprocess.run(["git", "--git-dir", git_dir, "grep", "-l", "-E", pattern, commit, "--", under],
                            capture_output=True, text=True)
    return [line.split(":", 1)[1] for line in result.stdout.splitlines() if line]


def literal(node):
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return None


def yaml_scalar(value):
    text = str(value)
    if text == "" or any(c in text for c in ":#[]{},'\"&*!|>%@`") or text.strip() != text or \
            text.lower() in ("true", "false", "null", "yes", "no", "on", "off", "~") or text[0] == "?" or \
            text == "-" or text.startswith("- "):
        return "'" + text.replace("'", "''") + "'"
    try:
        float(text)
        return "'" + text + "'"
    except ValueError:
        return text


def emit(header, source, lists, choices=None):
    out = [f"# {line}" if line else "#" for line in header]
    out.append("source:")
    for key in ("repo", "paths", "commit"):
        value = source[key]
        if isinstance(value, list):
            out.append(f"  {key}:")
            out.extend(f"    - {yaml_scalar(v)}" for v in value)
        else:
            out.append(f"  {key}: {yaml_scalar(value)}")
    for name, values in lists.items():
        out.append(f"{name}:")
        out.extend(f"  - {yaml_scalar(v)}" for v in values)
    if choices:
        out.append("choices:")
        for name in sorted(choices):
            out.append(f"  {yaml_scalar(name)}: [{', '.join(yaml_scalar(v) for v in choices[name])}]")
    return "\n".join(out) + "\n"


# ---- Megatron-LM ----

class DataclassFields:
    """The dataclass fields of a class found in the repository, base classes first (dataclasses.fields order)."""

    def __init__(self, git_dir, commit):
        self.git_dir, self.commit = git_dir, commit
        self.files = {}

    def _class(self, name, prefer):
        paths = git_grep(self.git_dir, self.commit, rf"^class {name}\b", "megatron")
        if not paths:
            raise SystemExit(f"class {name} not found under megatron/")
        paths.sort(key=lambda p: (not p.startswith(prefer), p))
        path = paths[0]
        if path not in self.files:
            self.files[path] = ast.parse(git_show(self.git_dir, self.commit, path))
        for node in self.files[path].body:
            if isinstance(node, ast.ClassDef) and node.name == name:
                return path, node
        raise SystemExit(f"class {name}: no top-level definition in {path}")

    def fields(self, name, prefer="megatron/"):
        path, node = self._class(name, prefer)
        out = []
        for base in node.bases:
            base_name = base.id if isinstance(base, ast.Name) else getattr(base, "attr", None)
            if base_name and base_name not in ("object", "ABC", "Enum"):
                out.extend(self.fields(base_name, prefer=path.rsplit("/", 1)[0]))
        seen = {f["name"] for f in out}
        for stmt in node.body:
            if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
                continue
            annotation = ast.unparse(stmt.annotation)
            if annotation.startswith("ClassVar"):
                continue
            field = {"name": stmt.target.id, "annotation": stmt.annotation, "default": None, "init": True,
                     "arg_names": None}
            value = stmt.value
            if isinstance(value, ast.Call) and getattr(value.func, "id", getattr(value.func, "attr", "")) == "field":
                for kw in value.keywords:
                    if kw.arg == "default":
                        field["default"] = literal(kw.value)
                    elif kw.arg == "init":
                        field["init"] = literal(kw.value)
                    elif kw.arg == "metadata" and isinstance(kw.value, ast.Dict):
                        for k, v in zip(kw.value.keys, kw.value.values):
                            if literal(k) == "argparse_meta" and isinstance(v, ast.Dict):
                                for mk, mv in zip(v.keys, v.values):
                                    if literal(mk) == "arg_names":
                                        field["arg_names"] = literal(mv)
            elif value is not None:
                field["default"] = literal(value)
            if field["name"] in seen:  # redefined in a subclass: the subclass's declaration wins
                out = [f for f in out if f["name"] != field["name"]]
            out.append(field)
        return out


def unwrap_optional(annotation):
    """The annotation inside Optional[X] / X | None, else the annotation."""
    if isinstance(annotation, ast.Subscript) and ast.unparse(annotation.value) in ("Optional", "typing.Optional"):
        return annotation.slice
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        if ast.unparse(annotation.right) == "None":
            return annotation.left
    if isinstance(annotation, ast.Subscript) and ast.unparse(annotation.value) in ("Union", "typing.Union"):
        elements = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else []
        if len(elements) == 2 and ast.unparse(elements[1]) == "None":
            return elements[0]
    return annotation


def literal_choices(annotation):
    inner = unwrap_optional(annotation)
    if isinstance(inner, ast.Subscript) and ast.unparse(inner.value) in ("Literal", "typing.Literal"):
        elements = inner.slice.elts if isinstance(inner.slice, ast.Tuple) else [inner.slice]
        return [literal(e) for e in elements]
    return None


def factory_flags(field):
    """ArgumentGroupFactory._build_argparse_kwargs_from_field's flag names for one field."""
    if field["arg_names"] is not None:
        return list(field["arg_names"])
    name = field["name"]
    inner = unwrap_optional(field["annotation"])
    if ast.unparse(inner) == "bool" and field["default"] is not False:  # store_false: `--no-` and `--disable-`
        return ["--no-" + name.replace("_", "-"), "--disable-" + name.replace("_", "-")]
    return ["--" + name.replace("_", "-")]


def megatron(git_dir, commit):
    path = "megatron/training/arguments.py"
    tree = ast.parse(git_show(git_dir, commit, path))
    flags, choices = set(), {}
    dataclasses = DataclassFields(git_dir, commit)
    for function in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]:
        assigned = {}
        for node in ast.walk(function):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                assigned[node.targets[0].id] = node.value
        for node in ast.walk(function):
            if not isinstance(node, ast.Call):
                continue
            if isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
                names = [a.value for a in node.args if isinstance(a, ast.Constant) and str(a.value).startswith("--")]
                flags.update(names)
                for kw in node.keywords:
                    if kw.arg == "choices" and (values := literal(kw.value)) is not None:
                        for name in names:
                            choices[name] = list(values)
            elif getattr(node.func, "id", None) == "ArgumentGroupFactory":
                cls = node.args[0]
                cls_name = cls.id if isinstance(cls, ast.Name) else cls.attr
                exclude = []
                for kw in node.keywords:
                    if kw.arg == "exclude":
                        value = assigned.get(kw.value.id) if isinstance(kw.value, ast.Name) else kw.value
                        exclude = literal(value) or []
                for field in dataclasses.fields(cls_name):
                    if field["name"] in exclude or field["init"] is False:
                        continue
                    names = factory_flags(field)
                    flags.update(names)
                    if (values := literal_choices(field["annotation"])) is not None:
                        for name in names:
                            choices[name] = values
    # --recompute-modules is a List[str]: TransformerConfig.__post_init__ checks it against `allowed_modules`.
    _, config = dataclasses._class("TransformerConfig", "megatron/core/")
    for node in ast.walk(config):
        if isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == ["allowed_modules"]:
            choices["--recompute-modules"] = sorted(literal(node.value))
    paths = [path, "megatron/training/argument_utils.py"] + sorted(dataclasses.files)
    header = [
        "Megatron-LM's command-line flags (easyplan export --to megatron writes only these; docs/FORMATS.md).",
        f"Generated by scripts/runtime_vocabulary.py from NVIDIA/Megatron-LM at {commit}:",
        "the flags of megatron/training/arguments.py's add_argument calls and those its ArgumentGroupFactory",
        "(megatron/training/argument_utils.py) derives from the dataclasses below, with their literal choices",
        "(--recompute-modules: the allowed_modules TransformerConfig.__post_init__ checks).",
        "Do not edit: regenerate it for another commit.",
    ]
    source = {"repo": "NVIDIA/Megatron-LM", "paths": paths, "commit": commit}
    return emit(header, source, {"flags": sorted(flags)}, choices)


# ---- MaxText ----

def maxtext(git_dir, commit):
    types_path = "src/maxtext/configs/types.py"
    tree = ast.parse(git_show(git_dir, commit, types_path))
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}

    def is_model(name, seen=()):
        node = classes.get(name)
        if node is None or name in seen:
            return False
        for base in node.bases:
            base_name = ast.unparse(base)
            if base_name in ("BaseModel", "pydantic.BaseModel") or is_model(base_name, seen + (name,)):
                return True
        return False

    keys = set()
    for name, node in classes.items():
        if not is_model(name):
            continue
        for stmt in node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                if not ast.unparse(stmt.annotation).startswith("ClassVar"):
                    keys.add(stmt.target.id)
    decoders_path = "src/maxtext/layers/decoders.py"
    decoders = ast.parse(git_show(git_dir, commit, decoders_path))
    remat = []
    for function in [n for n in ast.walk(decoders) if isinstance(n, ast.FunctionDef) and n.name == "get_remat_policy"]:
        for node in ast.walk(function):
            # cfg.remat_policy == "x", cfg.remat_policy in ("x", "y")
            if isinstance(node, ast.Compare) and ast.unparse(node.left) == "cfg.remat_policy":
                for comparator in node.comparators:
                    value = literal(comparator)
                    for v in (value if isinstance(value, tuple) else (value,)):
                        if isinstance(v, str) and v not in remat:
                            remat.append(v)
    header = [
        "MaxText's config keys (easyplan export --to maxtext writes only these; docs/FORMATS.md).",
        f"Generated by scripts/runtime_vocabulary.py from AI-Hypercomputer/maxtext at {commit}:",
        "the fields of the pydantic models of src/maxtext/configs/types.py (pyconfig accepts a key that is a",
        "field of MaxTextConfig or of a model nested in it), and the remat_policy values get_remat_policy in",
        "src/maxtext/layers/decoders.py handles. Do not edit: regenerate it for another commit.",
    ]
    source = {"repo": "AI-Hypercomputer/maxtext", "paths": [types_path, decoders_path], "commit": commit}
    return emit(header, source, {"keys": sorted(keys)}, {"remat_policy": sorted(remat)})


def main(argv):
    if len(argv) != 4 or argv[1] not in ("megatron", "maxtext"):
        raise SystemExit(__doc__)
    _, runtime, git_dir, commit = argv
    commit = subprocess.run(["git", "--git-dir", git_dir, "rev-parse", commit], check=True, capture_output=True,
                            text=True).stdout.strip()
    sys.stdout.write(megatron(git_dir, commit) if runtime == "megatron" else maxtext(git_dir, commit))


if __name__ == "__main__":
    main(sys.argv)
