"""Values as JSON and back, for the cache folder: plain data, bytes, tuples,
frozensets, paths, and the enums and dataclasses of deeplink-gen's value
modules (_VALUE_MODULES: the model, diagnostics, the checked workspace).
Every JSON object in an entry is one tagged value ({"t": [...]} a tuple,
{"c": class, "f": [field values]} a dataclass, ...), so json builds the
values bottom-up through one hook. Decoding builds nothing else (a class is
looked up by name in a value module, whose import runs only definitions, and
must be a dataclass or an enum defined there), so reading an entry never runs
code that whoever wrote the folder chose. Each field of a dataclass must hold
what its annotation says (checker()), so that an entry someone wrote with a
valid checksum and the wrong shape is refused here, not found by a crash
later; anything else is a DecodeError, and the cache treats the entry as a
miss."""

from __future__ import annotations

import base64
import binascii
import dataclasses
import enum
import functools
import importlib
import json
import types
import typing
from pathlib import Path, PurePath


class DecodeError(ValueError):
    pass


_PLAIN = (type(None), bool, int, float, str)
# The modules (and packages) whose dataclasses and enums an entry may hold.
_VALUE_MODULES = ("deeplink_gen.model", "deeplink_gen.errors", "deeplink_gen.pipeline")


def _value_module(module: str) -> bool:
    return any(module == m or module.startswith(m + ".") for m in _VALUE_MODULES)


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
    if _value_module(cls.__module__):
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
    if not _value_module(module) or not qualname:
        raise DecodeError(f"not a type of deeplink-gen's values: {name}")
    try:
        cls = importlib.import_module(module)
        for part in qualname.split("."):
            cls = getattr(cls, part)
    except (ImportError, AttributeError) as exc:
        raise DecodeError(str(exc)) from None
    if not isinstance(cls, type) or cls.__module__ != module:
        raise DecodeError(f"not a class of {module}: {name}")
    return cls


def _hashable(value):
    """*value*, which a key or set member must be; DecodeError for a list (JSON's only unhashable value)."""
    if type(value) is list:
        raise DecodeError("unhashable value")
    return value


@functools.lru_cache(maxsize=None)
def _hints(cls) -> dict:
    """The resolved annotation of each field of *cls*: its names looked up in its module,
    else (a name imported there only for type checkers) in the value modules too."""
    try:
        return typing.get_type_hints(cls)
    except NameError:
        namespace = {}
        for module in ("deeplink_gen.model", "deeplink_gen.errors", cls.__module__):
            namespace.update(vars(importlib.import_module(module)))
        return typing.get_type_hints(cls, globalns=namespace)


def _anything(value) -> bool:
    return True


@functools.lru_cache(maxsize=None)
def checker(hint):
    """A test of whether a value is what the annotation *hint* says: classes, unions, the
    tuples, lists, dicts and frozensets of them, and generic dataclasses with the fields of
    their parameters checked (Located[int]: a Located whose value is an int); Any accepts
    anything."""
    if hint is typing.Any or isinstance(hint, typing.TypeVar):
        return _anything
    if hint is None or hint is type(None):
        return lambda v: v is None
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Union or origin is types.UnionType:
        tests = tuple(checker(a) for a in args)
        return lambda v: any(test(v) for test in tests)
    if origin is None:
        if hint is float:
            return lambda v: type(v) in (int, float)
        if hint is int:
            return lambda v: type(v) is int
        return (lambda v: isinstance(v, hint)) if isinstance(hint, type) else _anything
    if origin is typing.Literal:
        return lambda v: v in args
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            each = checker(args[0])
            return lambda v: type(v) is tuple and all(each(x) for x in v)
        tests = tuple(checker(a) for a in args)
        return lambda v: type(v) is tuple and (not tests or (len(v) == len(tests)
                                                               and all(t(x) for t, x in zip(tests, v))))
    if origin in (list, frozenset, set):
        each = checker(args[0]) if args else _anything
        return lambda v: type(v) is origin and all(each(x) for x in v)
    if origin is dict:
        key, val = (checker(args[0]), checker(args[1])) if args else (_anything, _anything)
        return lambda v: type(v) is dict and all(key(k) and val(x) for k, x in v.items())
    if not isinstance(origin, type):
        return _anything
    bound = dict(zip(getattr(origin, "__parameters__", ()), args))
    if dataclasses.is_dataclass(origin) and bound:     # Located[int]: a Located whose value is an int
        inner = tuple((name, checker(bound[hint])) for name, hint in _hints(origin).items() if hint in bound)
        return lambda v: isinstance(v, origin) and all(test(getattr(v, name)) for name, test in inner)
    return lambda v: isinstance(v, origin)


@functools.lru_cache(maxsize=None)
def _field_checks(cls) -> tuple:
    hints = _hints(cls)
    return tuple((name, hints[name], checker(hints[name])) for name in _fields(cls))


def _dataclass(name: str, values: list):
    cls = _class(name)
    names = _fields(cls) if dataclasses.is_dataclass(cls) else None
    if names is None or type(values) is not list or len(values) != len(names):
        raise DecodeError(f"not a dataclass of these fields: {name}")
    for (field, hint, test), value in zip(_field_checks(cls), values):
        if not test(value):
            raise DecodeError(f"{name}.{field}: not a {hint}")
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
