"""easyplan: the configuration compiler and sharding planner, from Python.

Every function mirrors an ``easyplan`` command and takes the CLI's options as keyword arguments
(``--max-tensors`` becomes ``max_tensors``; ``--from`` is ``from_``). The functions, their signatures
and their docstrings are built from easyplan's command table (api/command_table.h), the one list of
every command and option the CLI's flags and ``--help`` come from too, so ``help(easyplan.cost)`` lists
every option ``easyplan cost --help`` does. Results are plain Python data equal to the command's
``--format json`` output::

    import easyplan
    plan = easyplan.plan("examples/llama-3.1-8b", mesh="dp=1,fsdp=4,ep=1,tp=2,sp=1")
    plan.specs["model/embed_tokens/embedding"]      # (('fsdp', 'sp'), 'tp')
    plan.to_dict() == json.loads(`easyplan plan ... --format json`)

``config`` is a path (a config.json or a directory holding one), a ``dict`` (for example
``transformers.AutoConfig.from_pretrained(...).to_dict()``), JSON text, or a :class:`Model`.
``tree=`` is a tree JSON file, a list of ``{"name", "shape", "dtype"}``, or a nested dict whose leaves
have ``.shape`` and ``.dtype`` (``jax.eval_shape`` output, numpy arrays) or are ``(shape, dtype)``
tuples, flattened with ``/`` as eformer flattens a state.

Bad input raises :class:`BadInputError` (a ``ValueError``) carrying the file, line, column, JSON
pointer and notes of the CLI's message; an internal error raises :class:`InternalError`. Findings
(unmatched tensors, indivisible dims, ...) are part of the result; only :func:`export`, which has no
artifact for a plan with errors, raises :class:`PlanError` with them. The native code
releases the GIL, so threads can plan at once; a :class:`Model` is safe to share between them.
"""

import inspect as _inspect
import json as _json
import keyword as _pykeyword
import warnings as _warnings

from . import _easyplan

__version__ = _easyplan.__version__



class BadInputError(ValueError):
    """Bad input (exit code 2 of the CLI): a config, option, rule file or tree easyplan cannot use.

    Attributes: ``message`` (the CLI's message), ``file``, ``line``, ``column``, ``pointer`` (RFC 6901
    JSON pointer), each ``None`` when unknown, and ``notes`` (a list of hints, did-you-mean included).
    ``str(error)`` is the CLI's full diagnostic.
    """

    def __init__(self, error):
        self.message = error.get("message", "")
        self.file = error.get("file")
        self.line = error.get("line")
        self.column = error.get("column")
        self.pointer = error.get("pointer")
        self.notes = list(error.get("notes", []))
        super().__init__(error.get("text", self.message))


class InternalError(RuntimeError):
    """A bug in easyplan (exit code 3 of the CLI). Please report it with the input that caused it."""


class PlanError(ValueError):
    """The plan has errors (exit code 1 of ``easyplan export``), so there is nothing to export.

    ``findings`` lists them as ``easyplan validate --format json`` does (each a dict with ``severity``,
    ``code``, ``message``, ...).
    """

    def __init__(self, findings):
        self.findings = findings
        errors = [f for f in findings if f.get("severity") == "error"]
        first = errors[0] if errors else (findings[0] if findings else {})
        summary = "the plan has %d error(s)" % len(errors)
        if first:
            summary += ": [%s] %s" % (first.get("code", ""), first.get("message", ""))
        super().__init__(summary)


def _raise_on_error(result):
    """The one place a native result becomes an exception: bad input, a bug, and (for a command whose
    plan with errors has no artifact, export) the findings."""
    for diag in result.get("diags", []):
        if diag["severity"] == "warning":
            _warnings.warn(diag["text"], stacklevel=4)
    error = result.get("error")
    if error is not None:
        if error.get("kind") == "bad_input":
            raise BadInputError(error)
        raise InternalError(error.get("text", error.get("message", "internal error")))
    spec = _COMMANDS.get(result.get("command"))
    if spec and spec["findings_instead_of_artifact"] and result.get("failed"):
        raise PlanError(_json.loads(result["text"])["findings"])
    return result


# ---- the command table: every command and option, as the CLI declares them ----

_TABLE = _json.loads(_easyplan.command_table())
_COMMANDS = {command["name"]: command for command in _TABLE["commands"]}

# The classes, then one function per command of the table (issue 46: the command names are not listed twice).
__all__ = ["BadInputError", "InternalError", "Model", "Plan", "PlanError"] + sorted(_COMMANDS)

_MODEL_OPTIONS = [o for o in _TABLE["model"] if o["surface"] != "cli"]
_CONFIG_OPTIONS = frozenset(o["name"] for o in _MODEL_OPTIONS)


def _keyword(name):
    """An option's Python keyword: its name, with ``_`` after a Python keyword (``from`` -> ``from_``)."""
    return name + "_" if _pykeyword.iskeyword(name) else name


def _option_dict(options):
    """Keyword arguments as the native option table reads them (from_ -> from, None = not given)."""
    out = {}
    for key, value in options.items():
        if key.endswith("_") and _pykeyword.iskeyword(key[:-1]):
            key = key[:-1]
        if isinstance(value, tuple):
            value = list(value)
        if hasattr(value, "__fspath__"):
            value = value.__fspath__()
        out[key] = value
    return out


def _config_source(config):
    if config is None:
        return "none", "", ""
    if isinstance(config, dict):
        return "text", _json.dumps(config), "<dict>"
    if isinstance(config, (bytes, bytearray)):
        config = config.decode("utf-8")
    if hasattr(config, "__fspath__"):
        return "path", str(config.__fspath__()), ""
    if isinstance(config, str):
        if config.lstrip().startswith("{"):
            return "text", config, "<json>"
        return "path", config, ""
    raise BadInputError({"message": "config: expected a path, a dict, JSON text or an easyplan.Model, found "
                                    + type(config).__name__,
                         "text": "easyplan: error: config: expected a path, a dict, JSON text or an "
                                 "easyplan.Model, found " + type(config).__name__})


# ---- trees given in Python ----

def _dtype_name(dtype):
    name = getattr(dtype, "name", None)
    if isinstance(name, str):
        return name
    return str(dtype)


def _is_leaf(value):
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return True
    return (isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], (tuple, list))
            and all(isinstance(d, int) for d in value[0]))


def _leaf_entry(name, value):
    if isinstance(value, tuple) and not hasattr(value, "shape"):
        shape, dtype = value
    else:
        shape, dtype = value.shape, value.dtype
    return {"name": name, "shape": [int(d) for d in shape], "dtype": _dtype_name(dtype)}


def _flatten(prefix, value, out):
    if _is_leaf(value):
        out.append(_leaf_entry(prefix, value))
        return
    if isinstance(value, dict) or hasattr(value, "items"):
        items = value.items()
    elif isinstance(value, (list, tuple)):
        items = enumerate(value)
    else:
        raise BadInputError({"message": f"tree: {prefix or '<root>'} is a {type(value).__name__}: expected a "
                                        "dict, a list, or a leaf with .shape and .dtype",
                             "pointer": "/" + prefix if prefix else None,
                             "text": f"easyplan: error: tree: {prefix or '<root>'} is a {type(value).__name__}: "
                                     "expected a dict, a list, or a leaf with .shape and .dtype"})
    for key, child in items:
        _flatten(f"{prefix}/{key}" if prefix else str(key), child, out)


def _tree_json(tree, layout):
    """JSON text of a tree given as a list of entries or a pytree; None for a path (or no tree)."""
    if tree is None or isinstance(tree, str) or hasattr(tree, "__fspath__"):
        return None
    if isinstance(tree, list) and all(isinstance(t, dict) and "name" in t for t in tree):
        params = [{"name": t["name"], "shape": [int(d) for d in t["shape"]], "dtype": _dtype_name(t["dtype"])}
                  for t in tree]
    else:
        params = []
        _flatten("", tree, params)
    return _json.dumps({"model_type": "", "layout": layout or "easydel", "params": params})


class Model:
    """One model, resolved once: its config (a path, dict, JSON text or None for EasyDeL's defaults)
    with the config options (``defaults``, ``set``, ``overrides``, ``devices``, ``strict``,
    ``schemas_dir``) and the input limits (``max_layers``, ``max_output_bytes``, ...: the CLI's global
    flags). Every stage that does not depend on the mesh (the tree, the rule matches) is computed on
    first use and kept, so planning it on many meshes repeats only the mesh-dependent work. Safe to use
    from many threads.

    Its methods are the commands (``model.cost(...)`` is ``easyplan cost``), taking every option of
    their command. A method's ``set=`` is applied after the Model's own (its config resolved again for
    that call, as ``--set`` after the file); the other config options belong to the Model, and a method
    given one raises :class:`BadInputError` naming it rather than ignoring it.
    """

    def __init__(self, config=None, **config_options):
        kind, payload, name = _config_source(config)
        result = _raise_on_error(_easyplan.load(kind, payload, name, _json.dumps(_option_dict(config_options))))
        self._model = result["model"]
        self._config_text = result["config"]
        self.warnings = [d["text"] for d in result["diags"]]

    @property
    def config(self):
        """The resolved config (what ``easyplan resolve`` prints)."""
        return _json.loads(self._config_text)

    def _run(self, command, options):
        """Runs `command`: its result as the CLI's ``--format json`` prints it (explain, export, report:
        their text), or a :class:`Plan` for plan."""
        spec = _COMMANDS[command]
        names = {o["name"]: o for o in spec["options"]}
        tree_json = None
        if "tree" in names:
            layout = options.get("layout") if names.get("layout", {}).get("group") == "tree" else None
            tree_json = _tree_json(options.get("tree"), layout)
        if tree_json is not None:
            options = dict(options)
            del options["tree"]
        options_json = _json.dumps(_option_dict(options))
        if spec["python_result"] == "plan":
            result = _raise_on_error(self._model.plan(options_json, tree_json))
            return Plan(result["plan"], _json.loads(result["extra"]))
        result = self._model.run(command, options_json, tree_json)
        result["command"] = command
        _raise_on_error(result)
        return result["text"] if spec["python_result"] == "text" else _json.loads(result["text"])


def _split(config, options, spec):
    """(Model, command options): a Model is used as it is; else one is loaded with the config options.
    An option the command reads as its own (its group there is not "config": suggest's devices, the chips
    it searches) stays the command's."""
    own = {o["name"] for o in spec["options"] if o["group"] != "config"}
    if isinstance(config, Model):
        # set= is honoured by the Model's methods (its config resolved again with them); the other config
        # options shape the Model itself.
        given = sorted(k for k in options
                       if k in _CONFIG_OPTIONS and k not in own and k != "set" and options[k] is not None)
        if given:
            raise BadInputError({"message": "config options " + ", ".join(given) + " belong to the Model: pass "
                                            "them to easyplan.Model(...)",
                                 "text": "easyplan: error: config options " + ", ".join(given) +
                                         " belong to the Model: pass them to easyplan.Model(...)"})
        return config, options
    model_options = {k: v for k, v in options.items() if k in _CONFIG_OPTIONS and k not in own}
    rest = {k: v for k, v in options.items() if k not in _CONFIG_OPTIONS or k in own}
    return Model(config, **model_options), rest


# ---- the functions, built from the command table ----

_ANNOTATIONS = {"flag": "bool", "string": "str", "int": "int", "unsigned": "int", "number": "float",
                "strings": "str | Sequence[str]", "mesh": "MeshLike", "sets": "SetLike"}
_PYTHON_TYPES = {"PathLike": "str | os.PathLike[str]"}
_RETURN_ANNOTATIONS = {"data": "dict[str, Any]", "text": "str", "plan": "Plan"}


def _annotation(option):
    if option["python_type"]:
        return _PYTHON_TYPES.get(option["python_type"], option["python_type"])
    return _ANNOTATIONS[option["type"]]


def _python_options(spec, method):
    """The options a function of `spec` takes as keywords, in --help order: every option Python may give
    (a method leaves out the config options that belong to its Model, all but ``set``)."""
    out = []
    for option in spec["options"]:
        if option["surface"] == "cli" or option["hidden"] or option["name"] in spec["python_positional"]:
            continue
        if method and option["group"] == "config" and option["name"] != "set":
            continue
        out.append(option)
    if not method:
        out += [o for o in _MODEL_OPTIONS if o["group"] == "limits"]
    return out


def _positional(spec):
    """(option, required) for each argument a function of `spec` takes by position after CONFIG."""
    options = {o["name"]: o for o in spec["options"]}
    return [(options[name], options[name]["required"] or options[name]["positional"])
            for name in spec["python_positional"]]


def _config_required(spec):
    config = next((o for o in spec["options"] if o["name"] == "config"), None)
    return bool(config and config["required"]) or any(required for _, required in _positional(spec))


def _signature(spec, method):
    P = _inspect.Parameter
    params = [P("self", P.POSITIONAL_OR_KEYWORD)] if method else [
        P("config", P.POSITIONAL_OR_KEYWORD, annotation="ConfigLike",
          default=P.empty if _config_required(spec) else None)]
    for option, required in _positional(spec):
        params.append(P(_keyword(option["name"]), P.POSITIONAL_OR_KEYWORD, annotation=_annotation(option),
                        default=P.empty if required else option["default"]))
    for option in _python_options(spec, method):
        params.append(P(_keyword(option["name"]), P.KEYWORD_ONLY, annotation=_annotation(option),
                        default=option["default"]))
    return _inspect.Signature(params, return_annotation=_RETURN_ANNOTATIONS[spec["python_result"]])


def _option_doc(option):
    default = option["default"]
    shown = "" if default is None or option["type"] == "flag" else ", default %r" % (default,)
    flag = option["flag"].split(",")[-1]
    return "    %s (%s%s): %s; the CLI's %s" % (_keyword(option["name"]), _annotation(option), shown,
                                                option["help"], flag)


def _docstring(spec, method):
    name = spec["name"]
    returns = spec["python_returns"] or "what ``easyplan %s --format json`` prints, as Python data" % name
    lines = ["``easyplan %s``: %s." % (name, spec["summary"]), "", "Returns %s." % returns, ""]
    if not method:
        lines += ["``config``: a path, a dict, JSON text, a :class:`Model` or None (EasyDeL's defaults).", ""]
    positional = ["``%s``: %s." % (_keyword(o["name"]), o["help"]) for o, _ in _positional(spec)]
    lines += positional + ([""] if positional else [])
    lines += ["Options (keyword only; None means not given):"]
    lines += [_option_doc(o) for o in _python_options(spec, method)]
    return "\n".join(lines)


def _bind(spec, args, options, skip_config):
    """Positional arguments as the keywords they stand for."""
    names = ([] if skip_config else ["config"]) + [_keyword(o["name"]) for o, _ in _positional(spec)]
    if len(args) > len(names):
        raise TypeError("%s() takes at most %d positional arguments (%d given)" % (spec["name"], len(names),
                                                                                    len(args)))
    bound = dict(zip(names, args))
    for key in bound:
        if key in options:
            raise TypeError("%s() got multiple values for argument '%s'" % (spec["name"], key))
    return {**bound, **options}


def _make_method(spec):
    def method(self, *args, **options):
        return self._run(spec["name"], _bind(spec, args, options, skip_config=True))
    method.__name__ = method.__qualname__ = spec["name"]
    method.__signature__ = _signature(spec, method=True)
    method.__doc__ = _docstring(spec, method=True)
    return method


def _make_function(spec):
    def function(*args, **options):
        options = _bind(spec, args, options, skip_config=False)
        model, rest = _split(options.pop("config", None), options, spec)
        return model._run(spec["name"], rest)
    function.__name__ = function.__qualname__ = spec["name"]
    function.__module__ = __name__
    function.__signature__ = _signature(spec, method=False)
    function.__doc__ = _docstring(spec, method=False)
    return function


def _model_signature():
    P = _inspect.Parameter
    params = [P("self", P.POSITIONAL_OR_KEYWORD), P("config", P.POSITIONAL_OR_KEYWORD, annotation="ConfigLike",
                                                    default=None)]
    params += [P(_keyword(o["name"]), P.KEYWORD_ONLY, annotation=_annotation(o), default=o["default"])
               for o in _MODEL_OPTIONS]
    return _inspect.Signature(params, return_annotation=None)


Model.__init__.__signature__ = _model_signature()
Model.__doc__ += "\n    Options (keyword only; None means not given):\n" + "\n".join(
    "    " + _option_doc(o) for o in _MODEL_OPTIONS)
for _spec in _TABLE["commands"]:
    setattr(Model, _spec["name"], _make_method(_spec))
    globals()[_spec["name"]] = _make_function(_spec)
del _spec


def _spec_tuple(spec):
    return tuple(tuple(entry) if isinstance(entry, list) else entry for entry in spec)


class Plan:
    """A shard plan.

    ``specs``: tensor name -> effective PartitionSpec as a tuple of ``None | str | tuple[str, ...]``;
    ``rules``: the ordered ``(regex, spec)`` list, specs resolved to mesh axes (eformer's
    ``match_partition_rules`` input); ``bytes_per_device``: one int per device; ``findings``: the
    findings (dicts with "code", "severity", "message", ...); ``ok``: no error findings.
    """

    def __init__(self, native, extra):
        self._native = native
        self._document = None
        self._specs = None
        self.rules = [(pattern, _spec_tuple(spec)) for pattern, spec in extra["rules"]]
        self.bytes_per_device = extra["bytes_per_device"]
        self.findings = extra["findings"]
        self.ok = not extra["failed"]

    def _doc(self):
        # The per-tensor document is rendered only when asked for: re-planning many meshes reads the
        # rules, bytes and findings alone.
        if self._document is None:
            self._document = _json.loads(self._native.json())
        return self._document

    @property
    def specs(self):
        if self._specs is None:
            self._specs = {p["name"]: _spec_tuple(p["effective_spec"]) for p in self._doc().get("params", [])}
        return self._specs

    def to_dict(self):
        """The plan as ``easyplan plan --format json`` prints it."""
        return _json.loads(_json.dumps(self._doc()))

    def to_jax(self):
        """tensor name -> ``jax.sharding.PartitionSpec``."""
        partition_spec = _jax_partition_spec()
        return {name: partition_spec(*spec) for name, spec in self.specs.items()}

    def to_jax_rules(self):
        """The rules as ``[(regex, jax.sharding.PartitionSpec)]``, for eformer's ``match_partition_rules``."""
        partition_spec = _jax_partition_spec()
        return [(pattern, partition_spec(*spec)) for pattern, spec in self.rules]

    def __repr__(self):
        mesh = self._doc().get("mesh", {})
        axes = ", ".join(f"{n}={s}" for n, s in zip(mesh.get("axis_names", []), mesh.get("shape", [])))
        return f"<easyplan.Plan {len(self.specs)} tensors on mesh {axes}, {len(self.findings)} findings>"


def _jax_partition_spec():
    try:
        from jax.sharding import PartitionSpec
    except ImportError as error:
        raise ImportError("easyplan.Plan.to_jax() needs the 'jax' package (pip install jax)") from error
    return PartitionSpec
