"""Values as JSON and back, for the cache folder: plain data, bytes, tuples,
frozensets, paths, enums and the dataclasses of deeplink-gen's own modules.
Every JSON object in an entry is one tagged value ({"t": [...]} a tuple,
{"c": class, "f": [field values]} a dataclass, ...), so json builds the
values bottom-up through one hook. Decoding builds nothing else (a class is
looked up by name among deeplink_gen's modules and must be a dataclass or an
enum there), so reading an entry never runs code that whoever wrote the
folder chose; anything else is a DecodeError, and the cache treats the entry
as a miss."""

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


_PLAIN = (type(None), bool, int, float, str)


@functools.lru_cache(maxsize=None)
def _fields(cls) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls) if f.init)


def _sort_key(encoded) -> str:
    return encoded if isinstance(encoded, str) else json.dumps(encoded, sort_keys=True)


def _encode(value):
    cls = type(value)
    if cls in _PLAIN:
        return value
    if cls is list:
        return [_encode(v) for v in value]
    if cls is tuple:
        return {"t": [_encode(v) for v in value]}
    if cls is dict:
        return {"d": [[_encode(k), _encode(v)] for k, v in value.items()]}
    if cls is frozenset:
        return {"fs": sorted((_encode(v) for v in value), key=_sort_key)}
    if isinstance(value, PurePath):
        return {"p": str(value)}
    if cls is bytes:
        return {"b": base64.b64encode(value).decode("ascii")}
    if cls.__module__.startswith("deeplink_gen."):
        name = f"{cls.__module__}:{cls.__qualname__}"
        if isinstance(value, enum.Enum):
            return {"e": name, "v": _encode(value.value)}
        if dataclasses.is_dataclass(value):
            return {"c": name, "f": [_encode(getattr(value, f)) for f in _fields(cls)]}
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


def _hashable(value):
    """*value*, which a key or set member must be; DecodeError for a list (JSON's only unhashable value)."""
    if type(value) is list:
        raise DecodeError("unhashable value")
    return value


def _dataclass(name: str, values: list):
    cls = _class(name)
    names = _fields(cls) if dataclasses.is_dataclass(cls) else None
    if names is None or type(values) is not list or len(values) != len(names):
        raise DecodeError(f"not a dataclass of these fields: {name}")
    try:
        return cls(**dict(zip(names, values)))
    except Exception as exc:      # its own checks refused the values
        raise DecodeError(f"{name}: {exc}") from None


def _enum(name: str, value):
    cls = _class(name)
    if not issubclass(cls, enum.Enum):
        raise DecodeError(f"not an enum: {name}")
    return cls(value)


def _object(data: dict):
    """The value one tagged JSON object stands for (its members are decoded already)."""
    if len(data) == 1:
        (tag, body), = data.items()
        if tag == "t" and type(body) is list:
            return tuple(body)
        if tag == "d" and type(body) is list:
            return {_hashable(k): v for k, v in body}
        if tag == "fs" and type(body) is list:
            return frozenset(_hashable(v) for v in body)
        if tag == "p" and type(body) is str:
            return Path(body)
        if tag == "b" and type(body) is str:
            return base64.b64decode(body, validate=True)
    elif len(data) == 2:
        if type(data.get("c")) is str and "f" in data:
            return _dataclass(data["c"], data["f"])
        if type(data.get("e")) is str and "v" in data:
            return _enum(data["e"], data["v"])
    raise DecodeError("malformed entry")


def loads(raw: bytes):
    """The value dumps() made; DecodeError for anything else."""
    try:
        return json.loads(raw, object_hook=_object)
    except DecodeError:
        raise
    except (ValueError, TypeError, KeyError, RecursionError, binascii.Error) as exc:
        raise DecodeError(str(exc)) from None
