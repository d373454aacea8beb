"""The part of a document its schema accepts: every value the schema rejects
is taken out (an unknown key, a value of the wrong type or out of its enum; a
mapping missing a required key; a whole list for a rejected item, so that
the positions of the others stay right), again until what is left is valid.
The semantic checks then run on what is left, so that one run reports a
file's schema errors and its other mistakes together; the paths taken out
are kept so that a check does not report their absence as another mistake."""

from __future__ import annotations

import re

import jsonschema

from deeplink_gen.yamlfile import Document

MAX_ROUNDS = 32


def _extra_keys(error: jsonschema.ValidationError) -> list[str]:
    known = error.schema.get("properties", {})
    patterns = error.schema.get("patternProperties", {})
    return [k for k in error.instance if k not in known and not any(re.search(p, k) for p in patterns)]


def _rejected(error: jsonschema.ValidationError) -> list[tuple]:
    where = tuple(error.absolute_path)
    if "propertyNames" in error.schema_path:
        return [where + (error.instance,)]
    if error.validator == "additionalProperties" and isinstance(error.instance, dict) \
            and error.schema.get("additionalProperties") is False:
        return [where + (k,) for k in _extra_keys(error)] or [where]
    return [where]


def _whole_lists(path: tuple) -> tuple:
    """*path*, or the list that holds it: taking out one item would move the others."""
    while path and isinstance(path[-1], int):
        path = path[:-1]
    return path


def _take_out(data, path: tuple) -> None:
    node = data
    for step in path[:-1]:
        if isinstance(node, dict) and step in node:
            node = node[step]
        elif isinstance(node, list) and isinstance(step, int) and step < len(node):
            node = node[step]
        else:
            return
    if isinstance(node, dict):
        node.pop(path[-1], None)


def prune(doc: Document, validator: jsonschema.Validator) -> bool:
    """Take the rejected values out of *doc* (in place; the paths taken out
    go to doc.rejected); False when nothing valid is left (the document
    itself is rejected)."""
    for _ in range(MAX_ROUNDS):
        paths = {_whole_lists(p) for e in validator.iter_errors(doc.data) for p in _rejected(e)}
        if not paths:
            return True
        if () in paths:
            return False
        for path in sorted(paths, key=len):
            _take_out(doc.data, path)
            doc.rejected.add(path)
    return False


def gone(path: tuple, rejected) -> bool:
    """Whether *path* or a value around it was taken out."""
    return any(path[:n] in rejected for n in range(1, len(path) + 1))
