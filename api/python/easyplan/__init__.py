"""easyplan: the configuration compiler and sharding planner, from Python.

Every function mirrors an ``easyplan`` command and takes the CLI's options as keyword arguments
(``--max-tensors`` becomes ``max_tensors``; ``--from`` is ``from_``). Results are plain Python data
equal to the command's ``--format json`` output::

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

import json as _json
import os as _os
import tempfile as _tempfile
import warnings as _warnings

from . import _easyplan

__version__ = _easyplan.__version__

__all__ = [
    "BadInputError",
    "InternalError",
    "Model",
    "Plan",
    "PlanError",
    "activations",
    "check",
    "cost",
    "explain",
    "export",
    "memory",
    "plan",
    "report",
    "resolve",
    "suggest",
    "tree",
    "validate",
]


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
    for diag in result.get("diags", []):
        if diag["severity"] == "warning":
            _warnings.warn(diag["text"], stacklevel=3)
    error = result.get("error")
    if error is None:
        return result
    if error.get("kind") == "bad_input":
        raise BadInputError(error)
    raise InternalError(error.get("text", error.get("message", "internal error")))


_CONFIG_OPTIONS = frozenset(_easyplan.option_names("model"))


def _option_dict(options):
    """Keyword arguments as the native option table reads them (from_ -> from, None = not given)."""
    out = {}
    for key, value in options.items():
        if key == "from_":
            key = "from"
        if isinstance(value, tuple):
            value = list(value)
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
    with the config options ``defaults``, ``set`` (a list of ``"KEY=VALUE"`` or a dict), ``overrides``,
    ``devices``, ``strict`` and ``schemas_dir``, and the limits ``max_layers`` and ``max_output_bytes``
    (the CLI's global ``--max-layers`` and ``--max-output-bytes``). Every stage that does not depend on the mesh (the
    tree, the rule matches) is computed on first use and kept, so planning it on many meshes repeats
    only the mesh-dependent work. Safe to use from many threads.

    A method's ``set=`` is applied after the Model's own (its config resolved again for that call, as
    ``--set`` after the file); the other config options belong to the Model, and a method given one
    raises :class:`BadInputError` naming it rather than ignoring it.
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
        tree = options.get("tree")
        layout = options.get("layout") if command != "activations" else None
        tree_json = _tree_json(tree, layout)
        if tree_json is not None:
            options = dict(options)
            del options["tree"]
        options_json = _json.dumps(_option_dict(options))
        if command == "plan":
            return _raise_on_error(self._model.plan(options_json, tree_json))
        return _raise_on_error(self._model.run(command, options_json, tree_json))

    def resolve(self, **options):
        """The resolved config; ``provenance=True`` wraps it as {"config", "provenance"}."""
        return _json.loads(self._run("resolve", options)["text"])

    def tree(self, **options):
        """The parameter tree (``easyplan tree --format json``)."""
        return _json.loads(self._run("tree", options)["text"])

    def plan(self, **options):
        """The shard plan on a mesh, as a :class:`Plan` (``easyplan plan --format json``)."""
        result = self._run("plan", options)
        return Plan(result["plan"], _json.loads(result["extra"]))

    def validate(self, **options):
        """The plan's findings for CI (``easyplan validate --format json``); ``result["ok"]`` is the verdict."""
        return _json.loads(self._run("validate", options)["text"])

    def explain(self, pattern, **options):
        """How the rules and the mesh decide the sharding of tensors whose name ``pattern`` finds (text)."""
        return self._run("explain", dict(options, pattern=pattern))["text"]

    def activations(self, **options):
        """The activation, KV-cache and expert-mesh shardings of a runtime mode (``easyplan activations``)."""
        return _json.loads(self._run("activations", options)["text"])

    def memory(self, **options):
        """The bytes every device holds for a training or serving step (``easyplan memory --format json``).
        A plan with errors still has its figures, with "ok": False and its "findings" added."""
        return _json.loads(self._run("memory", options)["text"])

    def check(self, **options):
        """Execute the plan on simulated devices (``easyplan check --format json``): the layout check,
        and a tiny model's sharded forward pass against the unsharded one; ``result["ok"]`` is the verdict."""
        return _json.loads(self._run("check", options)["text"])

    def cost(self, **options):
        """One configuration's estimated step on ``hardware`` (``easyplan cost --format json``): step time,
        compute, communication, exposed communication, tokens/s, MFU, memory and the plan's "findings"
        (a plan with errors is priced as it is laid out; only one that cannot be priced gives
        {"ok": False, "findings": [...]})."""
        return _json.loads(self._run("cost", options)["text"])

    def suggest(self, report=None, **options):
        """Every mesh, checkpoint policy and microbatch count for ``devices`` chips of ``hardware``,
        ranked by step time (``easyplan suggest --format json``): candidates, rejections, Pareto front.
        ``report="page.html"`` also writes the winner's page with every candidate (``suggest --report``)
        when something fits."""
        if report is None:
            return _json.loads(self._run("suggest", options)["text"])
        result = self._run("suggest", dict(options, report=True))
        extra = _json.loads(result["extra"]) if result["extra"] else None
        if extra and "report" in extra:
            _write_atomically(report, extra["report"])
        return _json.loads(result["text"])

    def report(self, output=None, **options):
        """The plan as one self-contained HTML page (``easyplan report``): mesh, memory per device (with
        ``mode``, ``batch`` and ``seq``), step time per layer (with ``hardware`` too), tensors, findings.
        Returns the page; ``output="plan.html"`` also writes it (atomically)."""
        page = self._run("report", options)["text"]
        if output is not None:
            _write_atomically(output, page)
        return page


    def export(self, to, **options):
        """The plan as another runtime reads it (``easyplan export --to TO``), as text: ``jax`` (a Python
        module), ``jax-json``, ``xla-hlo``, ``shardy`` (``format="json"`` for JSON instead of lines),
        ``torch``, ``hf-tp-plan`` or ``json``. ``torch`` and ``hf-tp-plan`` plan HF tensor names unless
        ``layout`` or ``tree`` is given. A plan with errors raises :class:`PlanError`."""
        result = self._run("export", dict(options, to=to))
        if result["failed"]:
            raise PlanError(_json.loads(result["text"])["findings"])
        return result["text"]


def _write_atomically(path, text):
    """Writes ``text`` to ``path`` through a temporary file beside it, so a reader never sees half a page."""
    path = _os.fspath(path)
    directory = _os.path.dirname(_os.path.abspath(path))
    fd, temp = _tempfile.mkstemp(prefix=".easyplan-", dir=directory)
    try:
        with _os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        _os.replace(temp, path)
    except BaseException:
        if _os.path.exists(temp):
            _os.unlink(temp)
        raise


def _split(config, options):
    """(Model, command options): a Model is used as it is; else one is loaded with the config options."""
    if isinstance(config, Model):
        # set= is honoured by the Model's methods (its config resolved again with them); the other config
        # options shape the Model itself.
        given = sorted(k for k in options if k in _CONFIG_OPTIONS and k != "set" and options[k] is not None)
        if given:
            raise BadInputError({"message": "config options " + ", ".join(given) + " belong to the Model: pass "
                                            "them to easyplan.Model(...)",
                                 "text": "easyplan: error: config options " + ", ".join(given) +
                                         " belong to the Model: pass them to easyplan.Model(...)"})
        return config, options
    model_options = {k: v for k, v in options.items() if k in _CONFIG_OPTIONS}
    rest = {k: v for k, v in options.items() if k not in _CONFIG_OPTIONS}
    return Model(config, **model_options), rest


def resolve(config, **options):
    """``easyplan resolve``: the complete config EasyDeL would use, every default and derived field."""
    model, rest = _split(config, options)
    return model.resolve(**rest)


def tree(config=None, **options):
    """``easyplan tree``: every tensor of the model (name, shape, dtype) and the totals."""
    model, rest = _split(config, options)
    return model.tree(**rest)


def plan(config=None, **options):
    """``easyplan plan``: lay the partition rules on the mesh. Returns a :class:`Plan`."""
    model, rest = _split(config, options)
    return model.plan(**rest)


def validate(config=None, **options):
    """``easyplan validate``: findings for CI (unmatched tensors, bad axes, indivisible dims, memory)."""
    model, rest = _split(config, options)
    return model.validate(**rest)


def explain(config, pattern, **options):
    """``easyplan explain``: every rule tried for tensors matching ``pattern``, and who holds what."""
    model, rest = _split(config, options)
    return model.explain(pattern, **rest)


def activations(config, **options):
    """``easyplan activations``: the shardings of one runtime mode (train, prefill, decode, insert)."""
    model, rest = _split(config, options)
    return model.activations(**rest)


def memory(config, **options):
    """``easyplan memory``: will it fit? Parameters, gradients, optimizer, activations, KV cache per device."""
    model, rest = _split(config, options)
    return model.memory(**rest)


def check(config, **options):
    """``easyplan check``: prove the plan by executing it on simulated devices (layout, numeric, memory)."""
    model, rest = _split(config, options)
    return model.check(**rest)


def cost(config, **options):
    """``easyplan cost``: one configuration's step time, communication, tokens/s, MFU and memory on
    ``hardware``."""
    model, rest = _split(config, options)
    return model.cost(**rest)


def suggest(config, **options):
    """``easyplan suggest``: which mesh, checkpoint policy and microbatch count for ``devices`` chips of
    ``hardware``, ranked by step time, with why #1 wins and the commands that reproduce each."""
    model, rest = _split(config, options)
    return model.suggest(**rest)


def report(config=None, output=None, **options):
    """``easyplan report``: the plan as one self-contained HTML page; ``output`` also writes it."""
    model, rest = _split(config, options)
    return model.report(output, **rest)


def export(config, to, **options):
    """``easyplan export``: the plan for another runtime (JAX, PyTorch DTensor, transformers, XLA), as text."""
    model, rest = _split(config, options)
    return model.export(to, **rest)


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
