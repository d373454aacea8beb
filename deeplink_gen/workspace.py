"""A workspace is a directory with vendors/*.yaml and catalog/*.yaml. Loading
it runs the whole validation pipeline: YAML -> schema -> model -> semantics."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from deeplink_gen import schemacheck, yamlload
from deeplink_gen.catalog import load_catalog
from deeplink_gen.errors import Diagnostics, Loc, UserError, did_you_mean
from deeplink_gen.model import Catalog, Vendor
from deeplink_gen.paths import catalog_files, vendor_files
from deeplink_gen.vendor import check_unique_identity, check_vendor, check_wrapper_uses, parse_vendor


@dataclass(frozen=True)
class Workspace:
    root: Path
    catalog: Catalog
    vendors: tuple[Vendor, ...]

    def vendor(self, name: str) -> Vendor:
        return next(v for v in self.vendors if v.name == name)

    def rel(self, path: str | Path) -> str:
        """A path relative to the workspace root, with forward slashes."""
        return Path(path).resolve().relative_to(self.root.resolve()).as_posix()


def _load_docs(paths: list[Path], schema: str, diags: Diagnostics) -> list[yamlload.Document]:
    docs = []
    for path in paths:
        try:
            raw = yamlload.read(path)
            doc = yamlload.loads(raw, str(path))
        except UserError as exc:
            diags.extend(exc.diagnostics)
            continue
        problems = schemacheck.check_cached(doc, raw, schema)
        if problems:
            diags.extend(problems)
            continue
        docs.append(doc)
    return docs


def load(root: Path, only: list[str] | None = None) -> Workspace:
    """Load and validate; raise UserError listing every problem found."""
    diags = Diagnostics()
    if not root.is_dir():
        raise UserError([_top(root, "workspace directory does not exist")])
    cat_paths = catalog_files(root)
    if not cat_paths:
        raise UserError([_top(root / "catalog", "no catalog files (catalog/*.yaml) in the workspace")])
    all_vendor_paths = vendor_files(root)
    available = [p.stem for p in all_vendor_paths]
    if only:
        unknown = [n for n in only if n not in available]
        for name in unknown:
            diags.add(Loc(str(root / "vendors")), "--vendor",
                      f"no vendor file vendors/{name}.yaml{did_you_mean(name, available)}"
                      f" (available: {', '.join(available) or 'none'})")
        diags.raise_if_any()
    vendor_paths = [p for p in all_vendor_paths if not only or p.stem in only]
    catalog = load_catalog(_load_docs(cat_paths, "catalog", diags), diags)
    vendors = [parse_vendor(d, diags) for d in _load_docs(vendor_paths, "vendor", diags)]
    for v in vendors:
        check_vendor(v, catalog, diags)
        check_wrapper_uses(v, catalog, diags)
    check_unique_identity(vendors, diags)
    diags.raise_if_any()
    return Workspace(root, catalog, tuple(vendors))


def _top(path: Path, message: str):
    from deeplink_gen.errors import Diagnostic

    return Diagnostic(Loc(str(path)), "(workspace)", message)
