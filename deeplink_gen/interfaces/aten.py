"""What the chosen torch says about ATen ops, read through torchgen (never
by importing torch). The op index (name -> schema string and variants) is
built from torchgen's native_functions.yaml once per torch build and cached
on disk; schemas are parsed with torchgen.model.FunctionSchema only for the
ops that are used."""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import re
from importlib import metadata
from pathlib import Path

from deeplink_gen.errors import Diagnostic, UserError
from deeplink_gen.model import AtenOp, CatalogEntry, TorchVersion
from deeplink_gen.output.atomic import write_cache
from deeplink_gen.paths import cache_dir

_CACHE_FORMAT = 2


def _torchgen_dir() -> Path:
    """The torchgen package in use, located without importing it."""
    spec = importlib.util.find_spec("torchgen")
    if spec is None or not spec.submodule_search_locations:
        raise UserError([Diagnostic(None, None, "torchgen is not installed: install the torch whose ops to render "
                                                "(it ships torchgen; the PyPI package named torchgen is another project)")])
    return Path(next(iter(spec.submodule_search_locations))).resolve()


@functools.lru_cache(maxsize=1)
def installed_torch_version() -> TorchVersion:
    """The version of the torch that ships the torchgen in use (read from its
    torch/version.py, never by importing torch), else torch's metadata."""
    version_file = _torchgen_dir().parent / "torch" / "version.py"
    try:
        found = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)", version_file.read_text(encoding="utf-8"), re.M)
    except OSError:
        found = None
    return TorchVersion.parse(found.group(1) if found else metadata.version("torch"))


def _native_dir() -> Path:
    """torchgen's packaged ATen data."""
    return _torchgen_dir() / "packaged" / "ATen" / "native"


def _build_index(yaml_path: Path) -> dict[str, list]:
    from torchgen.gen import parse_native_yaml

    parsed = parse_native_yaml(str(yaml_path), str(yaml_path.parent / "tags.yaml"))
    index = {}
    for f in parsed.native_functions:
        variants = sorted(v.name for v in f.variants)
        index[str(f.func.name)] = [str(f.func), variants, f.use_const_ref_for_mutable_tensors,
                                   f.part_of_structured_group]
    return dict(sorted(index.items()))


@functools.lru_cache(maxsize=1)
def native_functions_digest() -> str:
    return hashlib.sha256((_native_dir() / "native_functions.yaml").read_bytes()).hexdigest()


@functools.lru_cache(maxsize=1)
def op_index() -> dict[str, AtenOp]:
    yaml_path = _native_dir() / "native_functions.yaml"
    cache = cache_dir() / f"aten-ops-{_CACHE_FORMAT}-{native_functions_digest()[:20]}.json"
    try:
        raw = json.loads(cache.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raw = None
    if not isinstance(raw, dict):
        raw = _build_index(yaml_path)
        write_cache(cache, json.dumps(raw).encode("utf-8"))
    return {name: AtenOp(name, schema, tuple(variants), const_ref, ilist)
            for name, (schema, variants, const_ref, ilist) in raw.items()}


def lookup(name: str) -> AtenOp | None:
    return op_index().get(name)


def op_of(entry: CatalogEntry) -> AtenOp | None:
    """The op a catalog entry defines: torch's, or a DIPU-private helper (an
    op torch does not have, defined by the entry's schema: and never
    registered: register: false); None when it is neither."""
    found = lookup(entry.op)
    if found is not None:
        return found
    if entry.schema_text is not None and entry.register is not None and not entry.register.value:
        return AtenOp(entry.op, entry.schema_text.value.strip().removeprefix("aten::"), ("function",), helper=True)
    return None


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
