"""Catalog files (catalog/*.yaml), and the same entry shape under a vendor's
ops.<op>.replace, into CatalogEntry values."""

from __future__ import annotations

from deeplink_gen.cpptext import parse_call
from deeplink_gen.errors import Diagnostics, ParseError
from deeplink_gen.yamlfile import Document
from deeplink_gen.model.catalog import AUTOGRAD_CODE, Alloc
from deeplink_gen.model import Autograd, Catalog, CatalogEntry, DiopiCall, Located, TorchGate

# Keys whose position validation may need to point at.
_LIST_KEYS = ("locals", "ins", "outs", "sizes", "no_device_check", "returns", "alloc", "code")


def _located(doc: Document, where: tuple, raw: dict, key: str):
    if key not in raw:
        return None
    return Located(raw[key], doc.loc(where + (key,)))


def parse_entry(doc: Document, op: str, raw: dict, diags: Diagnostics, where: tuple,
                file_includes: tuple[str, ...] = ()) -> CatalogEntry | None:
    """*where*: the key path of the entry (ops.<op> in a catalog file,
    ops.<op>.replace in a vendor file); *file_includes*: the includes: of its
    catalog file. None when the call cannot be read."""
    try:
        function, args = parse_call(raw["call"])
    except ParseError as exc:
        diags.add(doc.loc(where + ("call",)), where + ("call",), str(exc))
        return None
    torch_gate = None
    if "torch" in raw:
        try:
            torch_gate = TorchGate.parse(raw["torch"], doc.loc(where + ("torch",)))
        except ParseError as exc:
            diags.add(doc.loc(where + ("torch",)), where + ("torch",), str(exc))
            return None
    code = tuple((hook, Located(text, doc.text_loc(where + ("code", hook))))
                 for hook, text in sorted((raw.get("code") or {}).items()))
    autograd = None
    if "autograd" in raw:
        ag, at = raw["autograd"], where + ("autograd",)
        autograd = Autograd(
            loc=doc.loc(at, key=True),
            backward=Located(ag["backward"], doc.loc(at + ("backward",))),
            forward=Located(ag["forward"], doc.loc(at + ("forward",))) if "forward" in ag else None,
            saved=tuple(ag.get("saved") or ()),
            forward_args=tuple(ag.get("forward_args") or ()),
            **{k: Located(ag[k], doc.text_loc(at + (k,))) for k in AUTOGRAD_CODE if k in ag},
        )
    keys = tuple(Located(k, doc.loc(where + (k,))) for k in _LIST_KEYS if k in raw)
    alloc = tuple(Alloc(Located(name, doc.loc(where + ("alloc", name), key=True)),
                        Located(expr, doc.text_loc(where + ("alloc", name))))
                  for name, expr in sorted((raw.get("alloc") or {}).items()))
    return CatalogEntry(
        op=op, loc=doc.loc(where, key=True), call=DiopiCall(function, args, doc.loc(where + ("call",))),
        where=where,
        code=code,
        locals=tuple(raw.get("locals") or ()),
        ins=tuple((n.rstrip("?"), n.endswith("?")) for n in raw.get("ins") or ()),
        outs=tuple(raw.get("outs") or ()),
        no_device_check=tuple(raw.get("no_device_check") or ()),
        dummy_call=_located(doc, where, raw, "dummy_call"),
        custom_fallback=_located(doc, where, raw, "custom_fallback"),
        force_fallback=_located(doc, where, raw, "force_fallback"),
        register=_located(doc, where, raw, "register"),
        autograd=autograd,
        sizes=tuple(raw.get("sizes") or ()),
        returns=tuple(raw.get("returns") or ()),
        schema_text=_located(doc, where, raw, "schema"),
        alloc=alloc,
        enabled=_located(doc, where, raw, "enabled"),
        autocompare=_located(doc, where, raw, "autocompare"),
        fallback_to_cpu=_located(doc, where, raw, "fallback_to_cpu"),
        device_guard=_located(doc, where, raw, "device_guard"),
        torch=torch_gate,
        doc=raw.get("doc", ""),
        keys=keys,
        includes=tuple(dict.fromkeys(tuple(raw.get("includes") or ()) + file_includes)),
    )


def load_catalog(docs: list[Document], diags: Diagnostics) -> Catalog:
    """Every entry of every file, in file order (duplicates included: validate reports them)."""
    entries = []
    for doc in docs:
        file_includes = tuple(doc.data.get("includes") or ())
        for op, raw in (doc.data.get("ops") or {}).items():
            entry = parse_entry(doc, op, raw, diags, ("ops", op), file_includes)
            if entry is not None:
                entries.append(entry)
    return Catalog(tuple(entries), tuple(d.path for d in docs))
