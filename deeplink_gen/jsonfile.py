"""Reading a JSON file: one deeplink-gen wrote and reads back (a manifest) or
one the user names (a coverage report as --baseline). Its size is bounded
(inputfile), its depth too, on the text (nesting: json's parser recurses per
level), and a file that is not JSON is a UserError at its line and column."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from deeplink_gen import inputfile, nesting
from deeplink_gen.errors import Diagnostic, Loc, UserError


def read(path: str | Path, key: tuple | str = ()) -> Any:
    """The JSON value in the file *path*; any problem is a UserError under *key*."""
    name = str(path)
    text = inputfile.decode(inputfile.read(path, key=key), name, key)
    nesting.check_json(text, name, key)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError([Diagnostic(Loc(name, exc.lineno, exc.colno), key, f"not JSON: {exc.msg}")]) from None
    except (ValueError, RecursionError) as exc:     # a number too long to convert
        raise UserError([Diagnostic(Loc(name, 1, 1), key, f"not JSON: {exc}")]) from None
