"""What the installed torch says about ATen ops, read through torchgen (never
by importing torch). The op index (name -> schema string and variants) is
built from torchgen's native_functions.yaml once per torch build and cached on
disk; schemas are parsed with torchgen.model.FunctionSchema only for the ops
that are used."""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import tempfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from deeplink_gen.model import TorchVersion

_CACHE_FORMAT = 2


@dataclass(frozen=True)
class AtenOp:
    name: str
    schema: str
    variants: tuple[str, ...]  # "function" and/or "method"
    const_ref_for_mutable: bool = False  # torchgen passes mutable tensors as const&
    ilistref: bool = False               # torchgen passes Tensor[] as ITensorListRef

    @functools.cached_property
    def func(self):
        from torchgen.model import FunctionSchema

        return FunctionSchema.parse(self.schema)


def installed_torch_version() -> TorchVersion:
    return TorchVersion.parse(metadata.version("torch"))


def _native_dir() -> Path:
    """torchgen's packaged ATen data, located without importing torchgen."""
    spec = importlib.util.find_spec("torchgen")
    root = Path(next(iter(spec.submodule_search_locations))).resolve()
    return root / "packaged" / "ATen" / "native"


def cache_dir() -> Path:
    env = os.environ.get("DEEPLINK_GEN_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "deeplink-gen"


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
    digest = native_functions_digest()[:20]
    cache = cache_dir() / f"aten-ops-{_CACHE_FORMAT}-{digest}.json"
    raw = None
    try:
        raw = json.loads(cache.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raw = None
    if not isinstance(raw, dict):
        raw = _build_index(yaml_path)
        try:
            cache.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=cache.parent, prefix=".aten-", suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(raw, fh)
            os.replace(tmp, cache)
        except OSError:
            pass  # a read-only cache directory only costs time
    return {name: AtenOp(name, schema, tuple(variants), const_ref, ilist)
            for name, (schema, variants, const_ref, ilist) in raw.items()}


def lookup(name: str) -> AtenOp | None:
    return op_index().get(name)
