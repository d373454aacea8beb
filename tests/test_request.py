"""One render request, one key: every choice of the command line is part of
the key without being listed by hand, and the pipeline's stages keep
nothing between runs on their own (only what they are handed as a Memo)."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from helpers import REPO, copy_workspace, edit
from deeplink_gen.options import Options
from deeplink_gen.request import Request

# A value other than the default for each type an option may have.
_OTHER = {"bool | None": True, "int | None": 3, "str | None": "2.1.1", "Path | None": Path("include")}


def test_every_option_changes_the_key(tmp_path: Path):
    ws = copy_workspace(tmp_path / "ws")
    base = Request(ws, ("camb",))
    keys = {base.key("render")}
    for field in dataclasses.fields(Options):
        assert field.type in _OTHER, f"an option of a new type: {field.name}: {field.type}"
        changed = Request(ws, ("camb",), dataclasses.replace(Options(), **{field.name: _OTHER[field.type]}))
        keys.add(changed.key("render"))
    assert len(keys) == len(dataclasses.fields(Options)) + 1 and None not in keys


def test_key_follows_inputs_and_vendors_but_not_the_output_folder(tmp_path: Path):
    ws = copy_workspace(tmp_path / "ws")
    first = Request(ws, ("camb",), out=tmp_path / "a")
    assert first.key("render") == Request(ws, ("camb",), out=tmp_path / "b").key("render")
    assert first.key("render") != Request(ws, ("ascend",)).key("render")
    assert first.key("render") != first.key("model")
    assert first.unchanged()
    edit(ws / "vendors" / "camb.yaml", "camb", "camb ")     # a changed byte, same meaning
    assert not first.unchanged()
    assert Request(ws, ("camb",)).key("render") != first.key("render")


def _calls_the_store(path: Path) -> list[str]:
    """Where *path* reads or writes the cache store itself (cache.load/store, or imports them)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "cache" \
                and node.attr in ("load", "store", "MEMO"):
            found.append(f"{path.relative_to(REPO)}:{node.lineno}: cache.{node.attr}")
        if isinstance(node, ast.ImportFrom) and node.module == "deeplink_gen.cache":
            found += [f"{path.relative_to(REPO)}:{node.lineno}: imports {a.name}"
                      for a in node.names if a.name in ("load", "store", "MEMO")]
    return found


@pytest.mark.parametrize("part", ["pipeline.py", "load", "validate", "plan", "render"])
def test_the_pipeline_keeps_nothing_itself(part: str):
    base = REPO / "deeplink_gen" / part
    files = [base] if base.is_file() else sorted(base.rglob("*.py"))
    assert files
    assert [hit for f in files for hit in _calls_the_store(f)] == []
