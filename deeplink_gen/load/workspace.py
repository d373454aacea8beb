"""A workspace directory (vendors/*.yaml, catalog/*.yaml) into a Workspace:
read, schema-check and parse every file, collecting every shape error.
The files are read through Sources, which can hold files not written yet
(a scaffold, an import) in their place, so that what a command is about to
write is checked exactly as the written files would be."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from deeplink_gen import inputfile
from deeplink_gen.errors import Diagnostic, Diagnostics, Loc, UserError, did_you_mean, display_path
from deeplink_gen import yamlfile
from deeplink_gen.cache import NO_MEMO, Memo
from deeplink_gen.load import schema
from deeplink_gen.load.catalog import load_catalog
from deeplink_gen.load.vendor import parse_identity, parse_vendor
from deeplink_gen.model import Catalog, VendorIdentity, Workspace
from deeplink_gen.input_paths import bundled_catalog_files, catalog_files, vendor_files, workspace_file


@dataclass(frozen=True)
class Sources:
    """Where a workspace's files are read from: its folder *root*, with *texts*
    standing in for the files at their paths; with *only_texts*, the folder's
    own files are left out and the workspace is *texts* alone."""

    root: Path
    texts: Mapping[Path, str] = field(default_factory=dict)
    only_texts: bool = False

    def _listed(self, folder: str, on_disk) -> list[Path]:
        held = {p for p in self.texts if p.parent == self.root / folder}
        return sorted(held if self.only_texts else held | set(on_disk(self.root)))

    def vendor_files(self) -> list[Path]:
        return self._listed("vendors", vendor_files)

    def catalog_files(self) -> list[Path]:
        return self._listed("catalog", catalog_files)

    def settings_file(self) -> Path | None:
        """deeplink-gen.yaml, if there is one."""
        path = workspace_file(self.root)
        return path if path in self.texts or (not self.only_texts and os.path.lexists(path)) else None

    def read(self, path: Path) -> bytes:
        held = self.texts.get(path)
        return inputfile.read(path) if held is None else held.encode("utf-8")


def read_documents(paths: list[Path], schema_name: str, diags: Diagnostics, memo: Memo = NO_MEMO,
                   partial: bool = False, read=inputfile.read) -> list[yamlfile.Document]:
    """Each file read once, parsed and checked against its schema (skipped for
    contents *memo* kept as valid); the files that pass are returned, the
    problems of the others added to *diags*. With *partial*, a file the schema
    rejects in part is returned too, with the rejected values taken out
    (Document.rejected), so that its other mistakes are found in the same run."""
    docs = []
    for path in paths:
        try:
            raw = read(path)
            doc = yamlfile.loads(raw, str(path))
        except UserError as exc:
            diags.extend(exc.diagnostics)
            continue
        problems = schema.check_cached(doc, raw, schema_name, memo)
        if problems:
            diags.extend(problems)
            if not (partial and schema.prune(doc, schema_name)):
                continue
        docs.append(doc)
    return docs


def _settings(sources: Sources) -> yamlfile.Document | None:
    """deeplink-gen.yaml, schema-checked, if there is one; raises UserError for a broken file."""
    path = sources.settings_file()
    if path is None:
        return None
    diags = Diagnostics()
    docs = read_documents([path], "workspace", diags, read=sources.read)
    diags.raise_if_any()
    return docs[0]


def _uses_bundled_catalog(settings: yamlfile.Document | None) -> bool:
    """deeplink-gen.yaml's bundled_catalog (default true)."""
    return settings is None or bool((settings.data or {}).get("bundled_catalog", True))


def target_torch(root: Path) -> tuple[str, Loc] | None:
    """deeplink-gen.yaml's torch (the version the workspace renders for) and where it is said."""
    doc = _settings(Sources(root))
    if doc is None or "torch" not in (doc.data or {}):
        return None
    return str(doc.data["torch"]), doc.loc(("torch",))


def _load_catalogs(sources: Sources, bundled: bool, diags: Diagnostics, memo: Memo) -> Catalog:
    """The bundled catalog (unless deeplink-gen.yaml turns it off) with the
    workspace's catalog/*.yaml on top: a workspace file adds ops and replaces
    every bundled entry of an op it defines."""
    own = load_catalog(read_documents(sources.catalog_files(), "catalog", diags, memo, read=sources.read), diags)
    if not bundled:
        return own
    bundled = load_catalog(read_documents(bundled_catalog_files(), "catalog", diags, memo), diags)
    replaced = {e.op for e in own.entries}
    return Catalog(tuple(e for e in bundled.entries if e.op not in replaced) + own.entries,
                   bundled.files + own.files)


def load_workspace(sources: Sources, only: Sequence[str] | None = None,
                   memo: Memo = NO_MEMO) -> tuple[Workspace, list[Diagnostic]]:
    """The workspace made of the files that have the right shape, and the
    shape problems of the others. Raise UserError when there is no workspace
    to speak of (no directory, no catalog, an unknown vendor asked for)."""
    root = sources.root
    if not sources.only_texts and not root.is_dir():
        raise UserError([Diagnostic(Loc(str(root)), "(workspace)", "workspace directory does not exist")])
    all_vendor_paths = sources.vendor_files()
    if not all_vendor_paths and sources.settings_file() is None and not sources.catalog_files():
        raise UserError([Diagnostic(None, "(workspace)", (
            f"{display_path(str(root.resolve()), root)} is not a deeplink-gen workspace: it has no deeplink-gen.yaml, vendors/*.yaml or "
            "catalog/*.yaml; run in the workspace's folder (or give it with -C DIR), or make this one with "
            "`deeplink-gen init`"))])
    settings = _settings(sources)
    if settings is not None and settings.data.get("bundled_catalog") is False and not sources.catalog_files():
        raise UserError([Diagnostic(settings.loc(("bundled_catalog",)), "bundled_catalog",
                                    "bundled_catalog is false but catalog/ has no *.yaml files: there is no catalog")])
    diags = Diagnostics()
    available = [p.stem for p in all_vendor_paths]
    for name in only or ():
        if name not in available:
            diags.add(Loc(str(root / "vendors")), "--vendor",
                      f"no vendor file vendors/{name}.yaml{did_you_mean(name, available)}"
                      f" (available: {', '.join(available) or 'none'})")
    diags.raise_if_any()
    if not sources.only_texts:
        _warn_unread(root, diags)
    vendor_paths = [p for p in all_vendor_paths if not only or p.stem in only]
    catalog = _load_catalogs(sources, _uses_bundled_catalog(settings), diags, memo)
    complete = not diags
    vendors = tuple(parse_vendor(d, diags) for d in read_documents(vendor_paths, "vendor", diags, memo, partial=True,
                                                                   read=sources.read))
    others = _identities([p for p in all_vendor_paths if p not in vendor_paths], memo, sources.read)
    return Workspace(root, catalog, vendors, complete, others), diags.items


def _warn_unread(root: Path, diags: Diagnostics) -> None:
    """A warning at each file of vendors/ or catalog/ that is YAML by its name but not read for it
    (acme.yml, dipu.YAML): the vendor or the ops it holds would be left out without a word."""
    for folder in ("vendors", "catalog"):
        if not (root / folder).is_dir():
            continue
        for path in sorted((root / folder).iterdir()):
            if path.suffix.lower() in (".yml", ".yaml") and path.suffix != ".yaml" and not path.name.startswith(".") \
                    and path.is_file():
                fix = (f"remove it, or merge it into {path.stem}.yaml" if path.with_suffix(".yaml").exists()
                       else f"rename it to {path.stem}.yaml")
                diags.warn(Loc(str(path), 1, 1), f"({folder})", f"is not read: only {folder}/*.yaml files are; {fix}")


def _identities(paths: list[Path], memo: Memo, read) -> tuple[VendorIdentity, ...]:
    """The identities of vendor files not asked for, for the checks across
    vendors; a file that does not load is that file's own business."""
    found = []
    for doc in read_documents(paths, "vendor", Diagnostics(), memo, read=read):
        found.append(parse_identity(doc))
    return tuple(found)
