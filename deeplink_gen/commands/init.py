"""`deeplink-gen init [DIR]`: make DIR a workspace: vendors/, the JSON
Schemas the vendor files' first line names (schemas/, refreshed on every
run), deeplink-gen.yaml, an editor association, a CI workflow and a
pre-commit configuration that run `render --all --check`. Files a user may
edit are written only when missing."""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import click

from deeplink_gen import inputfile
from deeplink_gen.cpptext import CONTROL
from deeplink_gen.errors import Diagnostic, UserError
from deeplink_gen.interfaces.aten import installed_torch_version
from deeplink_gen.interfaces.dipu import SUPPORTED_TORCHS
from deeplink_gen.atomic import refuse_link_out, write_atomic
from deeplink_gen.commands import next_step
from deeplink_gen.commands.tool_source import ToolSource, installed_source, place
from deeplink_gen.input_paths import WORKSPACE_FILE, schema_dir
from deeplink_gen.render.templating import render

WORKFLOW = ".github/workflows/deeplink-gen.yml"
SCHEMAS = ("vendor.schema.json", "catalog.schema.json", "workspace.schema.json")
# Files init writes once (the user may edit them), by template.
ONCE = {
    WORKSPACE_FILE: "workspace/deeplink-gen.yaml.j2",
    ".vscode/settings.json": "workspace/vscode-settings.json.j2",
    WORKFLOW: "workspace/github-workflow.yml.j2",
    ".pre-commit-config.yaml": "workspace/pre-commit-config.yaml.j2",
}


@dataclass
class InitResult:
    created: list[str] = field(default_factory=list)
    refreshed: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def ensure_schemas(root: Path, result: InitResult) -> None:
    """schemas/*.schema.json as this deeplink-gen has them (what vendor files' modelines name)."""
    for name in SCHEMAS:
        data = (schema_dir() / name).read_bytes()
        target = root / "schemas" / name
        if inputfile.read_back(target) == data:
            result.kept.append(f"schemas/{name}")
            continue
        (result.refreshed if target.exists() else result.created).append(f"schemas/{name}")
        write_atomic(target, data, within=root)


def ensure_layout(root: Path, result: InitResult, *, settings: bool = False) -> None:
    """What new-vendor needs in any folder: vendors/ and the schemas; with *settings*, also
    deeplink-gen.yaml where there is none, so that the folder renders for DIPU's torch
    (not for whichever torch is installed)."""
    if root.exists() and not root.is_dir():
        raise UserError([Diagnostic(None, None, f"{root} exists and is not a folder")])
    _refuse_links(root, ("vendors/", "schemas/"))
    if not (root / "vendors").is_dir():
        (root / "vendors").mkdir(parents=True)
        result.created.append("vendors/")
    ensure_schemas(root, result)
    if settings and not os.path.lexists(root / WORKSPACE_FILE):
        write_atomic(root / WORKSPACE_FILE, render(ONCE[WORKSPACE_FILE], **_context(None)).encode("utf-8"),
                     within=root)
        result.created.append(WORKSPACE_FILE)


def _refuse_links(root: Path, rels) -> None:
    """Refuse before writing anything when the folder of one of *rels* (a folder itself when
    it ends in /) is a link leading out of the workspace."""
    for rel in rels:
        refuse_link_out(root, (root / rel) if rel.endswith("/") else (root / rel).parent, rel)


def _context(source: ToolSource | None) -> dict:
    return dict(torch_version=str(installed_torch_version()), target_torch=SUPPORTED_TORCHS[-1],
                tool_requirement=shlex.quote(source.requirement) if source is not None else "")


def init(root: Path, tool: str | None = None) -> InitResult:
    """*tool*: the requirement CI installs deeplink-gen with (default: tool_source.installed_source())."""
    if tool is not None and (not tool.strip() or CONTROL.search(tool)):
        raise UserError([Diagnostic(None, "--tool", f"{tool[:80]!r} is not a pip requirement (it is empty or "
                                                    "holds a line break or control character)")])
    if tool is not None and "${{" in tool:
        # GitHub substitutes ${{ ... }} in the workflow before any shell quoting applies.
        raise UserError([Diagnostic(None, "--tool", f"{tool[:80]!r} holds '${{{{', which GitHub Actions would "
                                                    "replace in the workflow before the shell sees it")])
    result = InitResult()
    _refuse_links(root, (*ONCE, "tools/"))
    ensure_layout(root, result)
    source = ToolSource(tool) if tool is not None else installed_source()
    context = _context(source)
    for rel, template in ONCE.items():
        target = root / rel
        if target.exists():
            result.kept.append(rel)
            continue
        if rel == WORKFLOW:
            copied = place(source, root)
            if copied is not None:
                result.created.append(copied)
            note = source.note(root, WORKFLOW)
            if note is not None:
                result.notes.append(note)
        write_atomic(target, render(template, **context).encode("utf-8"), within=root)
        result.created.append(rel)
    return result


def main(root: Path, tool: str | None) -> None:
    """`init`: the workspace made or refreshed, each file listed with what happened to it."""
    result = init(root, tool)
    for label, items in (("created", result.created), ("refreshed", result.refreshed), ("kept", result.kept)):
        for item in items:
            click.echo(f"{label:9} {root / item}")
    for note in result.notes:
        click.echo(f"note: {note}", err=True)
    wheels = [item for item in result.created if item.startswith("tools/")]
    if wheels:
        click.echo(f"note: commit {', '.join(wheels)}: the CI workflow installs deeplink-gen from it", err=True)
    next_step.show(f"{next_step.prog(root)} new-vendor NAME   (or: new-vendor NAME --like cuda)")
