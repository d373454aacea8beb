"""What the installed torch says about ATen ops, read through torchgen (never
by importing torch). The op index (name -> schema string, variants and the
per-op torchgen flags of ROW_FIELDS) is built from torchgen's
native_functions.yaml once per torch build and cached on disk; schemas are
parsed with torchgen.model.FunctionSchema only for the ops that are used,
whichever op table (installed or a shipped snapshot) they come from."""

from __future__ import annotations

import functools
import hashlib
import re
from pathlib import Path

from deeplink_gen import cache, digests
from deeplink_gen.errors import Diagnostic, UserError
from deeplink_gen.model import AtenOp, OpTable, TorchVersion
from deeplink_gen.input_paths import package_dir, torch_version_file, torchgen_native_dir

_CACHE_FORMAT = 4


def _torchgen_dir() -> Path:
    """The torchgen package in use, located without importing it."""
    found = package_dir("torchgen")
    if found is None or not found.is_dir():
        raise UserError([Diagnostic(None, None, "torchgen is not installed: install the torch whose ops to render "
                                                "(it ships torchgen; the PyPI package named torchgen is another project)")])
    return found.resolve()


@functools.lru_cache(maxsize=1)
def installed_torch_version() -> TorchVersion:
    """The version of the torch that ships the torchgen in use (read from its
    torch/version.py, never by importing torch), else torch's metadata."""
    version_file = torch_version_file(_torchgen_dir())
    try:
        found = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)", version_file.read_text(encoding="utf-8"), re.M)
    except OSError:
        found = None
    if found:
        return TorchVersion.parse(found.group(1))
    from importlib import metadata

    return TorchVersion.parse(metadata.version("torch"))


def _native_dir() -> Path:
    """torchgen's packaged ATen data."""
    return torchgen_native_dir(_torchgen_dir())


# The per-op facts the index keeps, in row order (the cache and the shipped snapshots share it).
# cpu_kernel: a CPU kernel serves the op (see _without_cpu_kernel); snapshots of format 1 lack it.
ROW_FIELDS = ("schema", "variants", "const_ref_for_mutable", "ilistref", "composite_implicit",
              "composite_explicit", "cpu_kernel")


def _row(f, no_cpu_kernel: frozenset[str]) -> list:
    """One torchgen NativeFunction as an index row (see ROW_FIELDS)."""
    return [str(f.func), sorted(v.name for v in f.variants), f.use_const_ref_for_mutable_tensors,
            f.part_of_structured_group, f.has_composite_implicit_autograd_kernel,
            f.has_composite_explicit_autograd_kernel or f.has_composite_explicit_autograd_non_functional_kernel,
            str(f.func.name) not in no_cpu_kernel]


def build_index(yaml_path: Path) -> dict[str, list]:
    """Every op of a native_functions.yaml as a row, sorted by name."""
    from torchgen.gen import parse_native_yaml

    parsed = parse_native_yaml(str(yaml_path), str(yaml_path.parent / "tags.yaml"))
    no_cpu = _without_cpu_kernel(yaml_path)
    return dict(sorted((str(f.func.name), _row(f, no_cpu)) for f in parsed.native_functions))


def ops_from_rows(rows: dict[str, list], optional_spelling: str | None = None) -> dict[str, AtenOp]:
    """Index rows -> AtenOps (rows without cpu_kernel, of a format-1 snapshot, leave it
    unknown); raises ValueError (or TypeError) on a malformed row. *optional_spelling*:
    how the C++ API of the rows' torch spells an optional type, when it is not the
    installed torchgen's way."""
    out = {}
    for name, row in rows.items():
        if not isinstance(row, list) or len(row) not in (len(ROW_FIELDS) - 1, len(ROW_FIELDS)):
            raise ValueError(f"{name}: expected a row of {len(ROW_FIELDS)} fields ({', '.join(ROW_FIELDS)})")
        schema, variants, const_ref, ilist, implicit, explicit, *cpu = row
        out[name] = AtenOp(name, schema, tuple(variants), bool(const_ref), bool(ilist), False, bool(implicit),
                           bool(explicit), cpu_kernel=bool(cpu[0]) if cpu else None,
                           optional_spelling=optional_spelling)
    return out


@functools.lru_cache(maxsize=1)
def optional_spelling() -> str:
    """How the installed torchgen spells an optional C++ type: c10::optional (torch 2.2 and
    older) or ::std::optional."""
    from torchgen.api.types import BaseCType, OptionalCType, tensorT

    return OptionalCType(BaseCType(tensorT)).cpp_type().split("<", 1)[0]


@functools.lru_cache(maxsize=1)
def native_functions_digest() -> str:
    return hashlib.sha256((_native_dir() / "native_functions.yaml").read_bytes()).hexdigest()


@functools.lru_cache(maxsize=1)
def fresh_rows() -> dict[str, list]:
    """The installed torch's index rows, built from its torchgen now."""
    return build_index(_native_dir() / "native_functions.yaml")


def installed_rows() -> dict[str, list]:
    """The installed torch's index rows, built once per torch build and cached on disk."""
    key = digests.digest("aten-ops", str(_CACHE_FORMAT), native_functions_digest())
    raw = cache.load("aten-ops", key)
    if not isinstance(raw, dict):
        raw = fresh_rows()
        cache.store("aten-ops", key, raw)
    return raw


@functools.lru_cache(maxsize=1)
def installed_table() -> OpTable:
    """The installed torch's op table."""
    return OpTable(installed_torch_version(), ops_from_rows(installed_rows()), "the installed torch")


def _without_cpu_kernel(yaml_path: Path) -> frozenset[str]:
    """The ops of a native_functions.yaml that no CPU kernel serves: their native_functions.yaml
    dispatch names neither CPU nor a Composite key (cudnn_*, batch_norm_stats, ...).
    An op without dispatch: is composite, a structured_delegate's is its delegate's, and
    a ufunc_inner_loop makes a CPU kernel too."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    entries = yaml.load(yaml_path.read_text(encoding="utf-8"), Loader=loader)
    out = set()
    for f in entries:
        if "structured_delegate" in f or "ufunc_inner_loop" in f:
            continue
        keys = [k.strip() for key in (f.get("dispatch") or {}) for k in key.split(",")]
        if keys and not any(k == "CPU" or k.startswith("Composite") for k in keys):
            out.add(f["func"].split("(", 1)[0].strip())
    return frozenset(out)


@functools.lru_cache(maxsize=None)
def parse_schema(schema: str):
    """torchgen's FunctionSchema of a schema string (parsed once per string);
    raises what torchgen raises on a malformed one (see SCHEMA_ERRORS)."""
    from torchgen.model import FunctionSchema

    return FunctionSchema.parse(schema.strip().removeprefix("aten::"))


# What torchgen raises on a schema it cannot read.
SCHEMA_ERRORS = (AssertionError, RuntimeError, ValueError, KeyError, IndexError)


def function_schema(op: AtenOp):
    """torchgen's FunctionSchema of *op*. A helper's schema may be malformed:
    validation calls this first and reports it."""
    return parse_schema(op.schema)
