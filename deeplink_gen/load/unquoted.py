"""A text value written as `{name}` or `[a, b]` without quotes: YAML reads a
flow mapping or list there, and the schema would only say "unknown key
'name'" or "expected a string". Say what happened and what to write."""

from __future__ import annotations

from typing import Any

import jsonschema

from deeplink_gen.yamlfile import Document


def _takes_string(schema: dict) -> bool:
    kinds = schema.get("type")
    return kinds == "string" or (isinstance(kinds, list) and "string" in kinds)


def _meant_text(value: Any, error: jsonschema.ValidationError, where: tuple) -> bool:
    """*value* sits where text is expected: a plain type error, or an anyOf/oneOf
    with a text branch and a mapping that only names placeholders (`{devId}`)."""
    if error.validator == "type":
        return _takes_string({"type": error.validator_value})
    if error.validator in ("anyOf", "oneOf") and isinstance(value, dict) and value \
            and all(v is None for v in value.values()):
        return any(e.validator == "type" and tuple(e.absolute_path) == where and _takes_string({"type": e.validator_value})
                   for e in error.context or ())
    return False


def _quoted(text: str) -> str:
    return f'"{text}"' if '"' not in text else f"'{text}'"


def message(doc: Document, error: jsonschema.ValidationError) -> str | None:
    """The message for *error* when its value is an unquoted `{...}`/`[...]` meant as text."""
    where = tuple(error.absolute_path)
    text = doc.flows.get(where)
    value = error.instance
    if text is None or not _meant_text(value, error, where):
        return None
    what = "mapping" if isinstance(value, dict) else "list"
    key = where[-1] if where and isinstance(where[-1], str) else None
    said = f"{key}: " if key else "- "
    if error.schema.get("x-template") == "call" and isinstance(value, dict) and len(where) > 3 \
            and where[0] == "runtime" and isinstance(where[3], str):
        vendor = doc.data.get("vendor") if isinstance(doc.data, dict) else None
        prefix = vendor.get("name") if isinstance(vendor, dict) and isinstance(vendor.get("name"), str) else "sdk"
        function = where[3]
        call = f"{prefix}{function[:1].upper()}{function[1:]}({', '.join('{' + str(k) + '}' for k in value)})"
        return (f"unquoted {text} is a YAML {what}, not text: a runtime function is a call template with "
                f"the placeholders as arguments, such as {said}{call} (quote a value that starts with '{{')")
    return f"unquoted {text} is a YAML {what}, not text: quote the value, as in {said}{_quoted(text)}"
