"""JSON Schema validation of loaded documents, with errors mapped back to
file:line:col and friendly messages (unknown keys get a did-you-mean)."""

from __future__ import annotations

import functools
import hashlib
import json
from typing import Any

import jsonschema

from deeplink_gen import digests
from deeplink_gen.cache import Memo
from deeplink_gen.cpptext import CONTROL
from deeplink_gen.load import unquoted
from deeplink_gen.errors import Diagnostic, Suggestion, excerpt, key_path, sort_key
from deeplink_gen.model.dtypes import DTYPE_ALIASES
from deeplink_gen.yamlfile import Document
from deeplink_gen.input_paths import schema_dir

# The characters of a value a schema error quotes.
_SHOWN = 40

_TYPE_NAMES = {
    "object": "a mapping", "array": "a list", "string": "a string", "boolean": "true or false",
    "integer": "an integer", "number": "a number", "null": "null",
}


@functools.lru_cache(maxsize=None)
def load_schema(name: str) -> dict:
    return json.loads((schema_dir() / f"{name}.schema.json").read_text(encoding="utf-8"))


def _pattern(validator, pattern, instance, schema):
    """A `pattern` string is a single-line value (a name, a path, a header) that templates paste
    into C++, CMake, Python or YAML text, where a control character would end a comment or a
    statement; Python's `$` also matches before a trailing newline. So a value that matches its
    pattern is still refused when it holds one."""
    errors = list(jsonschema.Draft7Validator.VALIDATORS["pattern"](validator, pattern, instance, schema))
    if not errors and validator.is_type(instance, "string") and CONTROL.search(instance):
        errors.append(jsonschema.ValidationError(f"{instance!r} holds a control character (such as a newline)"))
    yield from errors


_Validator = jsonschema.validators.extend(jsonschema.Draft7Validator, {"pattern": _pattern})


@functools.lru_cache(maxsize=None)
def _validator(name: str) -> jsonschema.Draft7Validator:
    # Schemas refer to each other by relative URL (vendor ops.<op>.replace is a
    # catalog entry), resolved here from the packaged files, never the network.
    from referencing import Registry, Resource

    registry = Registry().with_resources(
        (load_schema(other)["$id"], Resource.from_contents(load_schema(other)))
        for other in ("catalog", "vendor", "workspace"))
    return _Validator(load_schema(name), registry=registry)


def _describe(value: Any, written: str | None = None) -> str:
    """*value* as a message shows it: a number as it was written (2.10, which YAML reads as 2.1)."""
    if written is not None:
        return excerpt(written, _SHOWN)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (dict, list)):
        return _TYPE_NAMES["object" if isinstance(value, dict) else "array"]
    return excerpt(repr(value), _SHOWN)


def _expected(schema: dict) -> str:
    kinds = schema.get("type")
    if isinstance(kinds, list):
        return " or ".join(_TYPE_NAMES.get(k, k) for k in kinds)
    return _TYPE_NAMES.get(kinds, str(kinds))


def _read_as_number(value: Any, error: jsonschema.ValidationError, where: tuple, written: str | None) -> str:
    """Why text written as `torch: 2.2` fails: YAML reads a number there (2.10 even as 2.1)."""
    if error.validator != "type" or "string" not in (error.validator_value if isinstance(error.validator_value, list)
                                                     else [error.validator_value]):
        return ""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return ""
    key = f"{where[-1]}: " if where and isinstance(where[-1], str) else ""
    shown = _describe(value, written)
    return (f" (YAML reads an unquoted {shown} as a number, not text: quote it as written, "
            f"as in {key}\"{shown}\")")


def _home(root: dict, where: tuple, key: str) -> tuple | None:
    """The nearest section enclosing *where* that has *key* (a key nested one
    section too deep, as `generator:` under `runtime.comm:`), or None."""
    for depth in range(len(where) - 1, -1, -1):
        if key in _keys_at(root, where[:depth]):
            return where[:depth]
    return None


def _keys_at(root: dict, where: tuple) -> set[str]:
    """The keys the schema *root* names for the mapping at *where* (none where it cannot tell)."""
    node = _deref(root, root)
    for part in where:
        props = node.get("properties", {})
        if isinstance(part, str) and part in props:
            node = props[part]
        elif isinstance(part, int) and isinstance(node.get("items"), dict):
            node = node["items"]
        elif isinstance(node.get("additionalProperties"), dict):
            node = node["additionalProperties"]
        else:
            return set()
        node = _deref(root, node)
    return set(node.get("properties", {}))


def _deref(root: dict, node: dict) -> dict:
    """*node* with its $ref within the same schema followed (another file's: left as is)."""
    while isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/"):
        target = root
        for part in node["$ref"][2:].split("/"):
            target = target.get(part, {}) if isinstance(target, dict) else {}
        node = target
    return node


def _messages(doc: Document, error: jsonschema.ValidationError, root: dict) -> list[Diagnostic]:
    where = tuple(error.absolute_path)
    instance = error.instance
    written = doc.written.get(where) if type(instance) in (int, float) else None
    kind = error.validator
    flow = unquoted.message(doc, error)
    if flow is not None:
        return [Diagnostic(doc.loc(where), where, flow)]
    expected = error.schema.get("x-expected")
    if expected and kind in ("pattern", "oneOf", "anyOf", "type", "enum"):
        return [Diagnostic(doc.loc(where), where,
                           f"expected {expected}, got {_describe(instance, written)}"
                           f"{_read_as_number(instance, error, where, written)}")]
    if kind == "additionalProperties" and isinstance(instance, dict):
        known = set(error.schema.get("properties", {}))
        renamed = error.schema.get("x-renamed", {})
        out = []
        for extra in sorted(set(instance) - known):
            loc, key = doc.loc(where + (extra,), key=True), where + (extra,)
            home = _home(root, where, extra)
            if extra in renamed:
                out.append(Diagnostic(loc, key, f"unknown key '{extra}'; this is '{renamed[extra]}' here"))
            elif home is not None:
                beside = where[len(home)]
                out.append(Diagnostic(loc, key, f"unknown key '{extra}' here; it belongs "
                                                + (f"under '{key_path(home)}'" if home else "at the top level")
                                                + (f", beside '{beside}': indent it as '{beside}:' is"
                                                   if isinstance(beside, str) else "")))
            else:
                out.append(Diagnostic(loc, key, f"unknown key '{extra}'", hint=Suggestion(extra, known)))
        if out:
            return out
    if kind == "required":
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        return [Diagnostic(doc.loc(where), where, f"missing required key '{missing}'")]
    if kind == "type":
        hint = ""
        if error.validator_value == "boolean" and isinstance(instance, str) and instance.lower() in (
                "yes", "no", "on", "off", "y", "n"):
            hint = " (write true or false)"
        hint = hint or _read_as_number(instance, error, where, written)
        return [Diagnostic(doc.loc(where), where,
                           f"expected {_expected(error.schema)}, got {_describe(instance, written)}{hint}")]
    if kind == "enum":
        return [Diagnostic(doc.loc(where), where, *_not_one_of(instance, error))]
    if kind == "pattern":
        return [Diagnostic(doc.loc(where), where, _pattern_message(instance, error))]
    if kind in ("oneOf", "anyOf"):
        # The alternatives whose type fits the value are the ones the author meant: report their
        # problems (an unknown key, a value not in an enum) rather than "not valid here".
        branches: dict = {}
        for e in error.context or ():
            branches.setdefault(e.schema_path[0], []).append(e)
        meant = [errs for errs in branches.values()
                 if not any(e.validator == "type" and tuple(e.absolute_path) == where for e in errs)]
        if len(meant) == 1:
            return [m for e in meant[0] for m in _messages(doc, e, root)]
        best = jsonschema.exceptions.best_match(error.context) if error.context else None
        if best is not None and tuple(best.absolute_path) != where:
            return _messages(doc, best, root)
        return [Diagnostic(doc.loc(where), where,
                           f"{_describe(instance)} is not valid here: {error.schema.get('description', error.message)}")]
    if kind == "minProperties":
        return [Diagnostic(doc.loc(where), where, "must not be empty")]
    if kind == "uniqueItems":
        return [Diagnostic(doc.loc(where), where, "list items must be unique")]
    return [Diagnostic(doc.loc(where), where, error.message)]


def _pattern_message(value: Any, error: jsonschema.ValidationError) -> str:
    what = error.schema.get("description", "")
    if error.schema.get("pattern") == "^[A-Za-z_][A-Za-z0-9_]*$" or "identifier" in what:
        return f"{_describe(value)} is not a C identifier"
    first = what.split(". ")[0] if what else f"must match {error.schema.get('pattern')}"
    return f"{_describe(value)} is not valid: {first}"


def _not_one_of(value: Any, error: jsonschema.ValidationError) -> tuple[str, str, Suggestion]:
    """An enum's message, severity and suggestion (dtype names also by their other spellings)."""
    options = [str(o) for o in error.validator_value]
    aliases = tuple((a, d) for a, d in DTYPE_ALIASES.items() if d in options)
    aliases += tuple((f"torch.{a}", d) for a, d in aliases + tuple((o, o) for o in options))   # torch.float32
    return (f"{_describe(value)} is not one of: {', '.join(options)}", "error",
            Suggestion(str(value), options, aliases=aliases))


def _name_message(value: Any, error: jsonschema.ValidationError) -> str:
    if error.schema.get("x-expected"):
        return f"{_describe(value)} is not {error.schema['x-expected']}"
    if "." in str(error.schema.get("pattern", "")):
        return f"{_describe(value)} is not an op name (expected name or name.overload, e.g. add.out)"
    return f"{_describe(value)} is not a C identifier"


def check_cached(doc: Document, raw: bytes, schema_name: str, memo: Memo) -> list[Diagnostic]:
    """check(), skipped for file contents that already passed the same schemas,
    and for each `ops` entry that passed them as it is now in an earlier
    version of the same file: editing one op checks that op alone. Both are
    kept in *memo* (the schemas are part of every key)."""
    key = digests.digest("valid", schema_name, hashlib.sha256(raw).hexdigest())
    if memo.get("valid", key) is True:
        return []
    entries = _entry_digests(doc, schema_name)
    file_key = digests.digest("valid-ops", schema_name, doc.path)
    passed = memo.get("valid-ops", file_key) if entries else None
    skip = {name for name, d in entries.items() if d in passed} if isinstance(passed, list) else set()
    problems = check(doc, schema_name, skip)
    if not problems:
        memo.put("valid", key, True)
        if entries:
            memo.put("valid-ops", file_key, sorted(entries.values()))
    return problems


def _entry_digests(doc: Document, schema_name: str) -> dict[str, str]:
    """A digest of each entry under `ops` ({} where there is no such mapping). The schemas
    judge an entry by its name and value alone, and `repr` tells apart every value YAML
    gives (1, 1.0, true and "1"; the order of keys too, which costs only a miss)."""
    ops = doc.data.get("ops") if isinstance(doc.data, dict) else None
    if not isinstance(ops, dict):
        return {}
    return {name: hashlib.sha256(repr((schema_name, name, value)).encode()).hexdigest()
            for name, value in ops.items() if type(name) is str}


def prune(doc: Document, schema_name: str) -> bool:
    """Take what the schema rejects out of *doc* (see load/prune.py); False when nothing is left."""
    from deeplink_gen.load import prune as pruning

    return doc.data is not None and pruning.prune(doc, _validator(schema_name))


def check(doc: Document, schema_name: str, passed: set[str] = frozenset()) -> list[Diagnostic]:
    """Every schema violation in *doc*, sorted by position; the entries under `ops`
    named in *passed* are known to pass and are not checked again."""
    if doc.data is None:
        return [Diagnostic(doc.loc(()), (), "file is empty")]
    data = doc.data
    if passed:
        data = dict(data, ops={name: value for name, value in data["ops"].items() if name not in passed})
    out: list[Diagnostic] = []
    validator = _validator(schema_name)
    for error in validator.iter_errors(data):
        if "propertyNames" in error.schema_path:
            # The instance is the offending key; point at the key itself.
            where = tuple(error.absolute_path) + (error.instance,)
            if error.validator == "enum":
                out.append(Diagnostic(doc.loc(where, key=True), where, *_not_one_of(error.instance, error)))
            else:
                out.append(Diagnostic(doc.loc(where, key=True), where, _name_message(error.instance, error)))
            continue
        out.extend(_messages(doc, error, validator.schema))
    return sorted(set(out), key=sort_key)
