# Type stubs of the easyplan package (api/python/easyplan/__init__.py), rendered from the command table
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

class Model:
    warnings: list[str]
    def __init__(self, config: ConfigLike = None, *, defaults: str = 'add_basic', set: SetLike | None = None,
        overrides: str | None = None, devices: int | None = None, strict: bool = False,
        schemas_dir: str | None = None, easydel_version: str | None = None, max_input_bytes: int = 67108864,
        max_depth: int = 200, max_values: int = 1000000, max_layers: int = 4096, max_output_bytes: int = 268435456,
        max_microbatch_count: int = 65536, max_timeline_passes: int = 1048576) -> None: ...
    @property
    def config(self) -> dict[str, Any]: ...
    def activations(self, *, set: SetLike | None = None, mesh: MeshLike | None = None, dcn: MeshLike | None = None,
        max_devices: int = 4194304, layout: str = 'bthd', qkv_mni: bool = False,
        softmax_aux_ndim: int | None = None, dtype: str | None = None, kernel: str | None = None,
        cache: str = 'transformer', page_size: int | None = None, num_pages: int | None = None,
        cache_version: str | None = None, mode: str = 'train', batch: int | None = None, seq: int | None = None) -> dict[str, Any]: ...
    def check(self, *, set: SetLike | None = None, tree: TreeLike | None = None,
        from_: str | os.PathLike[str] | None = None, layout: str = 'easydel', dtype: str | None = None,
        max_tensors: int = 10000000, rules: str = 'builtin', uneven: str = 'replicate', max_rules: int = 100000,
        mesh: MeshLike | None = None, dcn: MeshLike | None = None, max_devices: int = 4194304, level: str = 'all',
        seed: int = 0, memory: bool = False, max_numeric_devices: int = 64, pp_schedule: str = '1f1b',
        virtual_stages: int = 1, pp_layers: str | None = None) -> dict[str, Any]: ...
    def cost(self, *, set: SetLike | None = None, tree: TreeLike | None = None,
        from_: str | os.PathLike[str] | None = None, layout: str = 'easydel', dtype: str | None = None,
        max_tensors: int = 10000000, rules: str = 'builtin', uneven: str = 'replicate', max_rules: int = 100000,
        mesh: MeshLike | None = None, dcn: MeshLike | None = None, max_devices: int = 4194304, mode: str = 'train',
        batch: int | None = None, seq: int | None = None, max_length: int | None = None, optimizer: str = 'adamw',
        grad_dtype: str | None = None, opt_state_dtype: str = 'float32', master_weights: bool = False,
        max_memory: str | None = None, hardware: str | None = None, microbatches: int = 1, decode: bool = False,
        precision: str = 'bf16', pp_schedule: str = '1f1b', virtual_stages: int = 1, pp_layers: str | None = None,
        torus: str | None = None) -> dict[str, Any]: ...
    def explain(self, pattern: str, *, set: SetLike | None = None, tree: TreeLike | None = None,
        from_: str | os.PathLike[str] | None = None, layout: str = 'easydel', dtype: str | None = None,
        max_tensors: int = 10000000, rules: str = 'builtin', uneven: str = 'replicate', max_rules: int = 100000,
        mesh: MeshLike | None = None, dcn: MeshLike | None = None, max_devices: int = 4194304) -> str: ...
    def export(self, to: str, *, set: SetLike | None = None, tree: TreeLike | None = None,
        from_: str | os.PathLike[str] | None = None, layout: str | None = None, dtype: str | None = None,
        max_tensors: int = 10000000, rules: str = 'builtin', uneven: str = 'replicate', max_rules: int = 100000,
        mesh: MeshLike | None = None, dcn: MeshLike | None = None, max_devices: int = 4194304,
        format: str = 'text', batch: int | None = None, seq: int | None = None, microbatches: int = 1,
        pp_schedule: str = '1f1b', virtual_stages: int = 1, pp_layers: str | None = None) -> str: ...
    def memory(self, *, set: SetLike | None = None, tree: TreeLike | None = None,
        from_: str | os.PathLike[str] | None = None, layout: str = 'easydel', dtype: str | None = None,
        max_tensors: int = 10000000, rules: str = 'builtin', uneven: str = 'replicate', max_rules: int = 100000,
        mesh: MeshLike | None = None, dcn: MeshLike | None = None, max_devices: int = 4194304, mode: str = 'train',
        batch: int | None = None, seq: int | None = None, max_length: int | None = None, optimizer: str = 'adamw',
        grad_dtype: str | None = None, opt_state_dtype: str = 'float32', master_weights: bool = False,
        max_memory: str | None = None, hardware: str | None = None, microbatches: int = 1,
        pp_schedule: str = '1f1b', virtual_stages: int = 1, pp_layers: str | None = None) -> dict[str, Any]: ...
    def plan(self, *, set: SetLike | None = None, tree: TreeLike | None = None,
        from_: str | os.PathLike[str] | None = None, layout: str = 'easydel', dtype: str | None = None,
        max_tensors: int = 10000000, rules: str = 'builtin', uneven: str = 'replicate', max_rules: int = 100000,
        mesh: MeshLike | None = None, dcn: MeshLike | None = None, max_devices: int = 4194304,
        rank: int | None = None, summary: bool = False, microbatches: int = 1, pp_schedule: str = '1f1b',
        virtual_stages: int = 1, pp_layers: str | None = None) -> Plan: ...
    def report(self, output: str | os.PathLike[str] | None = None, *, set: SetLike | None = None,
        tree: TreeLike | None = None, from_: str | os.PathLike[str] | None = None, layout: str = 'easydel',
        dtype: str | None = None, max_tensors: int = 10000000, rules: str = 'builtin', uneven: str = 'replicate',
        max_rules: int = 100000, mesh: MeshLike | None = None, dcn: MeshLike | None = None,
        max_devices: int = 4194304, mode: str | None = None, batch: int | None = None, seq: int | None = None,
        max_length: int | None = None, optimizer: str = 'adamw', grad_dtype: str | None = None,
        opt_state_dtype: str = 'float32', master_weights: bool = False, max_memory: str | None = None,
        hardware: str | None = None, microbatches: int = 1, decode: bool = False, precision: str = 'bf16',
        pp_schedule: str = '1f1b', virtual_stages: int = 1, pp_layers: str | None = None, torus: str | None = None) -> str: ...
    def resolve(self, *, set: SetLike | None = None, provenance: bool = False) -> dict[str, Any]: ...
    def suggest(self, *, set: SetLike | None = None, devices: int | None = None, uneven: str = 'replicate',
        mode: str = 'train', batch: int | None = None, seq: int | None = None, max_length: int | None = None,
        optimizer: str = 'adamw', grad_dtype: str | None = None, opt_state_dtype: str = 'float32',
        master_weights: bool = False, max_memory: str | None = None, hardware: str | None = None,
        decode: bool = False, precision: str = 'bf16', pp_schedule: str = '1f1b', virtual_stages: int = 1,
        pp_layers: str | None = None, slices: int = 1, rules: str | Sequence[str] | None = None,
        torus: str | None = None, top: int = 5, max_pp: int = 1, max_microbatches: int = 64,
        max_tpot: float | None = None, report: str | os.PathLike[str] | None = None) -> dict[str, Any]: ...
    def tree(self, *, set: SetLike | None = None, tree: TreeLike | None = None,
        from_: str | os.PathLike[str] | None = None, layout: str = 'easydel', dtype: str | None = None,
        max_tensors: int = 10000000, include_buffers: bool = False, diff: bool = False) -> dict[str, Any]: ...
    def validate(self, *, set: SetLike | None = None, tree: TreeLike | None = None,
        from_: str | os.PathLike[str] | None = None, layout: str = 'easydel', dtype: str | None = None,
        max_tensors: int = 10000000, rules: str = 'builtin', uneven: str = 'replicate', max_rules: int = 100000,
        mesh: MeshLike | None = None, dcn: MeshLike | None = None, max_devices: int = 4194304,
        mode: str | None = None, batch: int | None = None, seq: int | None = None, max_length: int | None = None,
        optimizer: str = 'adamw', grad_dtype: str | None = None, opt_state_dtype: str = 'float32',
        master_weights: bool = False, max_memory: str | None = None, hardware: str | None = None,
        microbatches: int = 1, pp_schedule: str = '1f1b', virtual_stages: int = 1, pp_layers: str | None = None) -> dict[str, Any]: ...

def activations(config: ConfigLike, *, defaults: str = 'add_basic', set: SetLike | None = None,
    overrides: str | None = None, devices: int | None = None, strict: bool = False, schemas_dir: str | None = None,
    easydel_version: str | None = None, mesh: MeshLike | None = None, dcn: MeshLike | None = None,
    max_devices: int = 4194304, layout: str = 'bthd', qkv_mni: bool = False, softmax_aux_ndim: int | None = None,
    dtype: str | None = None, kernel: str | None = None, cache: str = 'transformer', page_size: int | None = None,
    num_pages: int | None = None, cache_version: str | None = None, mode: str = 'train', batch: int | None = None,
    seq: int | None = None, max_input_bytes: int = 67108864, max_depth: int = 200, max_values: int = 1000000,
    max_layers: int = 4096, max_output_bytes: int = 268435456, max_microbatch_count: int = 65536,
    max_timeline_passes: int = 1048576) -> dict[str, Any]: ...
def check(config: ConfigLike = None, *, defaults: str = 'add_basic', set: SetLike | None = None,
    overrides: str | None = None, devices: int | None = None, strict: bool = False, schemas_dir: str | None = None,
    easydel_version: str | None = None, tree: TreeLike | None = None, from_: str | os.PathLike[str] | None = None,
    layout: str = 'easydel', dtype: str | None = None, max_tensors: int = 10000000, rules: str = 'builtin',
    uneven: str = 'replicate', max_rules: int = 100000, mesh: MeshLike | None = None, dcn: MeshLike | None = None,
    max_devices: int = 4194304, level: str = 'all', seed: int = 0, memory: bool = False,
    max_numeric_devices: int = 64, pp_schedule: str = '1f1b', virtual_stages: int = 1,
    pp_layers: str | None = None, max_input_bytes: int = 67108864, max_depth: int = 200, max_values: int = 1000000,
    max_layers: int = 4096, max_output_bytes: int = 268435456, max_microbatch_count: int = 65536,
    max_timeline_passes: int = 1048576) -> dict[str, Any]: ...
def cost(config: ConfigLike = None, *, defaults: str = 'add_basic', set: SetLike | None = None,
    overrides: str | None = None, devices: int | None = None, strict: bool = False, schemas_dir: str | None = None,
    easydel_version: str | None = None, tree: TreeLike | None = None, from_: str | os.PathLike[str] | None = None,
    layout: str = 'easydel', dtype: str | None = None, max_tensors: int = 10000000, rules: str = 'builtin',
    uneven: str = 'replicate', max_rules: int = 100000, mesh: MeshLike | None = None, dcn: MeshLike | None = None,
    max_devices: int = 4194304, mode: str = 'train', batch: int | None = None, seq: int | None = None,
    max_length: int | None = None, optimizer: str = 'adamw', grad_dtype: str | None = None,
    opt_state_dtype: str = 'float32', master_weights: bool = False, max_memory: str | None = None,
    hardware: str | None = None, microbatches: int = 1, decode: bool = False, precision: str = 'bf16',
    pp_schedule: str = '1f1b', virtual_stages: int = 1, pp_layers: str | None = None, torus: str | None = None,
    max_input_bytes: int = 67108864, max_depth: int = 200, max_values: int = 1000000, max_layers: int = 4096,
    max_output_bytes: int = 268435456, max_microbatch_count: int = 65536, max_timeline_passes: int = 1048576) -> dict[str, Any]: ...
def explain(config: ConfigLike, pattern: str, *, defaults: str = 'add_basic', set: SetLike | None = None,
    overrides: str | None = None, devices: int | None = None, strict: bool = False, schemas_dir: str | None = None,
    easydel_version: str | None = None, tree: TreeLike | None = None, from_: str | os.PathLike[str] | None = None,
    layout: str = 'easydel', dtype: str | None = None, max_tensors: int = 10000000, rules: str = 'builtin',
    uneven: str = 'replicate', max_rules: int = 100000, mesh: MeshLike | None = None, dcn: MeshLike | None = None,
    max_devices: int = 4194304, max_input_bytes: int = 67108864, max_depth: int = 200, max_values: int = 1000000,
    max_layers: int = 4096, max_output_bytes: int = 268435456, max_microbatch_count: int = 65536,
    max_timeline_passes: int = 1048576) -> str: ...
def export(config: ConfigLike, to: str, *, defaults: str = 'add_basic', set: SetLike | None = None,
    overrides: str | None = None, devices: int | None = None, strict: bool = False, schemas_dir: str | None = None,
    easydel_version: str | None = None, tree: TreeLike | None = None, from_: str | os.PathLike[str] | None = None,
    layout: str | None = None, dtype: str | None = None, max_tensors: int = 10000000, rules: str = 'builtin',
    uneven: str = 'replicate', max_rules: int = 100000, mesh: MeshLike | None = None, dcn: MeshLike | None = None,
    max_devices: int = 4194304, format: str = 'text', batch: int | None = None, seq: int | None = None,
    microbatches: int = 1, pp_schedule: str = '1f1b', virtual_stages: int = 1, pp_layers: str | None = None,
    max_input_bytes: int = 67108864, max_depth: int = 200, max_values: int = 1000000, max_layers: int = 4096,
    max_output_bytes: int = 268435456, max_microbatch_count: int = 65536, max_timeline_passes: int = 1048576) -> str: ...
def memory(config: ConfigLike = None, *, defaults: str = 'add_basic', set: SetLike | None = None,
    overrides: str | None = None, devices: int | None = None, strict: bool = False, schemas_dir: str | None = None,
    easydel_version: str | None = None, tree: TreeLike | None = None, from_: str | os.PathLike[str] | None = None,
    layout: str = 'easydel', dtype: str | None = None, max_tensors: int = 10000000, rules: str = 'builtin',
    uneven: str = 'replicate', max_rules: int = 100000, mesh: MeshLike | None = None, dcn: MeshLike | None = None,
    max_devices: int = 4194304, mode: str = 'train', batch: int | None = None, seq: int | None = None,
    max_length: int | None = None, optimizer: str = 'adamw', grad_dtype: str | None = None,
    opt_state_dtype: str = 'float32', master_weights: bool = False, max_memory: str | None = None,
    hardware: str | None = None, microbatches: int = 1, pp_schedule: str = '1f1b', virtual_stages: int = 1,
    pp_layers: str | None = None, max_input_bytes: int = 67108864, max_depth: int = 200, max_values: int = 1000000,
    max_layers: int = 4096, max_output_bytes: int = 268435456, max_microbatch_count: int = 65536,
    max_timeline_passes: int = 1048576) -> dict[str, Any]: ...
def plan(config: ConfigLike = None, *, defaults: str = 'add_basic', set: SetLike | None = None,
    overrides: str | None = None, devices: int | None = None, strict: bool = False, schemas_dir: str | None = None,
    easydel_version: str | None = None, tree: TreeLike | None = None, from_: str | os.PathLike[str] | None = None,
    layout: str = 'easydel', dtype: str | None = None, max_tensors: int = 10000000, rules: str = 'builtin',
    uneven: str = 'replicate', max_rules: int = 100000, mesh: MeshLike | None = None, dcn: MeshLike | None = None,
    max_devices: int = 4194304, rank: int | None = None, summary: bool = False, microbatches: int = 1,
    pp_schedule: str = '1f1b', virtual_stages: int = 1, pp_layers: str | None = None,
    max_input_bytes: int = 67108864, max_depth: int = 200, max_values: int = 1000000, max_layers: int = 4096,
    max_output_bytes: int = 268435456, max_microbatch_count: int = 65536, max_timeline_passes: int = 1048576) -> Plan: ...
def report(config: ConfigLike = None, output: str | os.PathLike[str] | None = None, *, defaults: str = 'add_basic',
    set: SetLike | None = None, overrides: str | None = None, devices: int | None = None, strict: bool = False,
    schemas_dir: str | None = None, easydel_version: str | None = None, tree: TreeLike | None = None,
    from_: str | os.PathLike[str] | None = None, layout: str = 'easydel', dtype: str | None = None,
    max_tensors: int = 10000000, rules: str = 'builtin', uneven: str = 'replicate', max_rules: int = 100000,
    mesh: MeshLike | None = None, dcn: MeshLike | None = None, max_devices: int = 4194304, mode: str | None = None,
    batch: int | None = None, seq: int | None = None, max_length: int | None = None, optimizer: str = 'adamw',
    grad_dtype: str | None = None, opt_state_dtype: str = 'float32', master_weights: bool = False,
    max_memory: str | None = None, hardware: str | None = None, microbatches: int = 1, decode: bool = False,
    precision: str = 'bf16', pp_schedule: str = '1f1b', virtual_stages: int = 1, pp_layers: str | None = None,
    torus: str | None = None, max_input_bytes: int = 67108864, max_depth: int = 200, max_values: int = 1000000,
    max_layers: int = 4096, max_output_bytes: int = 268435456, max_microbatch_count: int = 65536,
    max_timeline_passes: int = 1048576) -> str: ...
def resolve(config: ConfigLike, *, defaults: str = 'add_basic', set: SetLike | None = None,
    overrides: str | None = None, devices: int | None = None, strict: bool = False, schemas_dir: str | None = None,
    easydel_version: str | None = None, provenance: bool = False, max_input_bytes: int = 67108864,
    max_depth: int = 200, max_values: int = 1000000, max_layers: int = 4096, max_output_bytes: int = 268435456,
    max_microbatch_count: int = 65536, max_timeline_passes: int = 1048576) -> dict[str, Any]: ...
def suggest(config: ConfigLike, *, defaults: str = 'add_basic', set: SetLike | None = None,
    overrides: str | None = None, devices: int | None = None, strict: bool = False, schemas_dir: str | None = None,
    easydel_version: str | None = None, uneven: str = 'replicate', mode: str = 'train', batch: int | None = None,
    seq: int | None = None, max_length: int | None = None, optimizer: str = 'adamw', grad_dtype: str | None = None,
    opt_state_dtype: str = 'float32', master_weights: bool = False, max_memory: str | None = None,
    hardware: str | None = None, decode: bool = False, precision: str = 'bf16', pp_schedule: str = '1f1b',
    virtual_stages: int = 1, pp_layers: str | None = None, slices: int = 1,
    rules: str | Sequence[str] | None = None, torus: str | None = None, top: int = 5, max_pp: int = 1,
    max_microbatches: int = 64, max_tpot: float | None = None, report: str | os.PathLike[str] | None = None,
    max_input_bytes: int = 67108864, max_depth: int = 200, max_values: int = 1000000, max_layers: int = 4096,
    max_output_bytes: int = 268435456, max_microbatch_count: int = 65536, max_timeline_passes: int = 1048576) -> dict[str, Any]: ...
def tree(config: ConfigLike = None, *, defaults: str = 'add_basic', set: SetLike | None = None,
    overrides: str | None = None, devices: int | None = None, strict: bool = False, schemas_dir: str | None = None,
    easydel_version: str | None = None, tree: TreeLike | None = None, from_: str | os.PathLike[str] | None = None,
    layout: str = 'easydel', dtype: str | None = None, max_tensors: int = 10000000, include_buffers: bool = False,
    diff: bool = False, max_input_bytes: int = 67108864, max_depth: int = 200, max_values: int = 1000000,
    max_layers: int = 4096, max_output_bytes: int = 268435456, max_microbatch_count: int = 65536,
    max_timeline_passes: int = 1048576) -> dict[str, Any]: ...
def validate(config: ConfigLike = None, *, defaults: str = 'add_basic', set: SetLike | None = None,
    overrides: str | None = None, devices: int | None = None, strict: bool = False, schemas_dir: str | None = None,
    easydel_version: str | None = None, tree: TreeLike | None = None, from_: str | os.PathLike[str] | None = None,
    layout: str = 'easydel', dtype: str | None = None, max_tensors: int = 10000000, rules: str = 'builtin',
    uneven: str = 'replicate', max_rules: int = 100000, mesh: MeshLike | None = None, dcn: MeshLike | None = None,
    max_devices: int = 4194304, mode: str | None = None, batch: int | None = None, seq: int | None = None,
    max_length: int | None = None, optimizer: str = 'adamw', grad_dtype: str | None = None,
    opt_state_dtype: str = 'float32', master_weights: bool = False, max_memory: str | None = None,
    hardware: str | None = None, microbatches: int = 1, pp_schedule: str = '1f1b', virtual_stages: int = 1,
    pp_layers: str | None = None, max_input_bytes: int = 67108864, max_depth: int = 200, max_values: int = 1000000,
    max_layers: int = 4096, max_output_bytes: int = 268435456, max_microbatch_count: int = 65536,
    max_timeline_passes: int = 1048576) -> dict[str, Any]: ...
