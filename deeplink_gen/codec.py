"""Values as JSON and back, for the cache folder: plain data, bytes, tuples,
frozensets, paths, enums and the dataclasses of deeplink-gen's own modules.
Decoding builds nothing else (a class is looked up by name among
deeplink_gen's modules and must be a dataclass or an enum there), so
reading an entry never runs code that whoever wrote the folder chose;
anything else is a DecodeError, and the cache treats the entry as a miss."""

from __future__ import annotations

import base64
import binascii
import dataclasses
import enum
import functools
import importlib
import json
from pathlib import Path, PurePath


class DecodeError(ValueError):
    pass


def _encode(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list):
        return [_encode(v) for v in value]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return {"t": [_encode(v) for v in value]}
    if isinstance(value, frozenset):
        return {"fs": sorted((_encode(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))}
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value):
            return {"d": {k: _encode(v) for k, v in value.items()}}
        return {"m": [[_encode(k), _encode(v)] for k, v in value.items()]}
    if isinstance(value, PurePath):
        return {"p": str(value)}
    if isinstance(value, bytes):
        return {"b": base64.b64encode(value).decode("ascii")}
    cls = type(value)
    if cls.__module__.startswith("deeplink_gen."):
        name = f"{cls.__module__}:{cls.__qualname__}"
        if isinstance(value, enum.Enum):
            return {"e": name, "v": _encode(value.value)}
        if dataclasses.is_dataclass(value):
            return {"c": name, "f": {f.name: _encode(getattr(value, f.name))
                                     for f in dataclasses.fields(value) if f.init}}
    raise TypeError(f"cannot store a {cls.__module__}.{cls.__qualname__}")


def dumps(value) -> bytes:
    """*value* as JSON bytes; TypeError for what cannot be stored."""
    return json.dumps(_encode(value), ensure_ascii=False, separators=(",", ":")).encode("utf-8")


@functools.lru_cache(maxsize=None)
def _class(name: str):
    module, _, qualname = name.partition(":")
    if not module.startswith("deeplink_gen.") or not qualname:
        raise DecodeError(f"not a deeplink-gen type: {name}")
    try:
        cls = importlib.import_module(module)
        for part in qualname.split("."):
            cls = getattr(cls, part)
    except (ImportError, AttributeError) as exc:
        raise DecodeError(str(exc)) from None
    if not isinstance(cls, type):
        raise DecodeError(f"not a class: {name}")
    return cls


def _decode(data):
    if data is None or isinstance(data, (bool, int, float, str)):
        return data
    if isinstance(data, list):
        return [_decode(v) for v in data]
    if not isinstance(data, dict) or len(data) not in (1, 2):
        raise DecodeError("malformed entry")
    if "t" in data:
        return tuple(_decode(v) for v in data["t"])
    if "fs" in data:
        return frozenset(_decode(v) for v in data["fs"])
    if "d" in data:
        return {k: _decode(v) for k, v in data["d"].items()}
    if "m" in data:
        return {_decode(k): _decode(v) for k, v in data["m"]}
    if "p" in data:
        return Path(data["p"])
    if "b" in data:
        return base64.b64decode(data["b"], validate=True)
    if "e" in data:
        cls = _class(data["e"])
        if not issubclass(cls, enum.Enum):
            raise DecodeError(f"not an enum: {data['e']}")
        return cls(_decode(data["v"]))
    if "c" in data:
        cls = _class(data["c"])
        if not dataclasses.is_dataclass(cls):
            raise DecodeError(f"not a dataclass: {data['c']}")
        return cls(**{k: _decode(v) for k, v in data["f"].items()})
    raise DecodeError("malformed entry")


def loads(raw: bytes):
    """The value dumps() made; DecodeError for anything else."""
    try:
        return _decode(json.loads(raw))
    except DecodeError:
        raise
    except (ValueError, TypeError, KeyError, RecursionError, binascii.Error) as exc:
        raise DecodeError(str(exc)) from None
