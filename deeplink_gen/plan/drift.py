"""Drift between two torch versions, without text: for every catalog entry
and vendor replacement that applies to both, how torch changed its op
(arguments renamed, retyped, given another default, added, removed, moved;
returns changed; the op removed), which of the entry's custom snippets name
a changed argument, whether the entry would break on the newer torch, and
the torch: gate that would keep it where it works. Also the overloads each
op's base name gained or lost.

An entry breaks when the newer torch removes its op, when its own schema:
no longer stands for torch's (validation would reject it), or, without a
schema:, when its custom code or call names an argument torch renamed or
removed, or custom code where the argument is a C++ value of its schema type
(code hooks, alloc, autograd forward_code and wrapper_return, call expressions;
not a bare call argument, which is converted by its type) names an argument
torch retyped."""

from __future__ import annotations

from dataclasses import dataclass

from deeplink_gen.cpptext import referenced_names
from deeplink_gen.errors import Loc
from deeplink_gen.model import CatalogEntry, OpTable, TorchGate, TorchVersion, Workspace
from deeplink_gen.translate.args import AUX_SUFFIX, LOCAL_SUFFIX

# How an argument (or the op) changed; the kinds that can break code that names the argument.
RENAMED, RETYPED, DEFAULT, ADDED, REMOVED, MOVED = "renamed", "retyped", "default", "added", "removed", "moved"
NAMING_BREAKS = (RENAMED, REMOVED, MOVED)
_SUFFIXES = ("",) + tuple(sorted(set(LOCAL_SUFFIX.values()) | set(AUX_SUFFIX.values())))


@dataclass(frozen=True)
class Change:
    kind: str            # one of the kinds above, or "return"
    name: str            # the argument (its old name; the new one for added)
    old: str = ""        # e.g. "int[] stride", or a default
    new: str = ""


@dataclass(frozen=True)
class Use:
    """A snippet of the entry that names changed arguments."""

    where: str           # "call", "code.beginning", "alloc.out", "autograd.grad_code", ...
    loc: Loc
    names: tuple[str, ...]
    bare_call: bool = False   # only as bare call arguments (converted by type)


@dataclass(frozen=True)
class Gate:
    """A proposed torch: gate for an entry that breaks."""

    text: str            # the entry's gate with the new bound, e.g. ">=2.1,<2.2"
    bound: TorchVersion  # the first version (major.minor) with the change
    exact: bool          # False when versions between two snapshots are unknown (the bound is the latest possible)
    after: TorchVersion  # the last version known to have the old schema


@dataclass(frozen=True)
class OpDrift:
    op: str
    definition: str             # "catalog", or "vendor <name>" for a replacement
    loc: Loc
    entry_gate: str             # the entry's own torch: gate ("" when none)
    removed: bool
    changes: tuple[Change, ...]
    uses: tuple[Use, ...]
    breaks: tuple[str, ...]     # why the entry would break on the newer torch
    gate: Gate | None = None
    old_schema: str = ""
    new_schema: str = ""
    pinned: bool = False        # its schema: still stands for torch's and keeps the old names and integer types
    pin: str = ""               # a schema: that would keep the old names and integer types on both (when one can)


@dataclass(frozen=True)
class Overloads:
    base: str
    added: tuple[str, ...]
    removed: tuple[str, ...]


@dataclass(frozen=True)
class Drift:
    old: OpTable
    new: OpTable
    checked: int                  # entries that apply to both versions
    ops: tuple[OpDrift, ...]      # those with a change, catalog order then vendors
    overloads: tuple[Overloads, ...]

    @property
    def breaking(self) -> tuple[OpDrift, ...]:
        return tuple(d for d in self.ops if d.breaks)


def _type(a) -> str:
    """An argument's type as written, with its alias annotation (``Tensor(a!)``)."""
    return str(a).split(" ", 1)[0]


def _default(a) -> str:
    return "(no default)" if a.default is None else a.default


def _section(args, a) -> str:
    if a in args.out:
        return "out"
    return "kwarg" if a in args.flat_kwarg_only else "positional"


def changes(old, new) -> tuple[Change, ...]:
    """How FunctionSchema *new* differs from *old*, argument by argument: an
    argument keeps its name, or is renamed when one of the same kind of
    argument (positional, keyword-only, out) and a new name stands at its place."""
    oa, na = list(old.arguments.flat_all), list(new.arguments.flat_all)
    old_names = {a.name for a in oa}
    new_by_name = {a.name: a for a in na}
    taken: set[str] = set()
    out: list[Change] = []
    for i, a in enumerate(oa):
        b = new_by_name.get(a.name)
        if b is None and i < len(na) and na[i].name not in old_names \
                and _section(new.arguments, na[i]) == _section(old.arguments, a):
            b = na[i]
            out.append(Change(RENAMED, a.name, a.name, b.name))
        if b is None:
            out.append(Change(REMOVED, a.name, f"{_type(a)} {a.name}"))
            continue
        taken.add(b.name)
        if _type(a) != _type(b):
            out.append(Change(RETYPED, a.name, _type(a), _type(b)))
        if a.default != b.default:
            out.append(Change(DEFAULT, a.name, _default(a), _default(b)))
        if _section(old.arguments, a) != _section(new.arguments, b):
            out.append(Change(MOVED, a.name, _section(old.arguments, a), _section(new.arguments, b)))
    for b in na:
        if b.name not in taken and b.name not in old_names:
            out.append(Change(ADDED, b.name, "", f"{_type(b)} {b.name}" + (f"={b.default}" if b.default else "")))
    old_returns = ", ".join(str(r) for r in old.returns)
    new_returns = ", ".join(str(r) for r in new.returns)
    if old_returns != new_returns:
        out.append(Change("return", "", old_returns, new_returns))
    return tuple(out)


def _named(text: str, names: set[str]) -> tuple[str, ...]:
    """The *names* that C++ text refers to, also through their converted locals (``strideDiopiSize``)."""
    words = set(referenced_names(text))
    return tuple(sorted(n for n in names if any(n + s in words for s in _SUFFIXES)))


def uses(entry: CatalogEntry, names: set[str], at=lambda loc: loc) -> tuple[Use, ...]:
    """Every snippet of *entry* that names one of *names*; *at* maps each place (to the workspace)."""
    out = []
    bare = [a.text for a in entry.call.args if a.is_name]
    expr = [a.text for a in entry.call.args if not a.is_name]
    in_bare = tuple(sorted(n for n in names if n in bare))
    in_expr = _named(" , ".join(expr), names)
    if in_expr:
        out.append(Use("call", at(entry.call.loc), in_expr))
    if in_bare and not set(in_bare) <= set(in_expr):
        out.append(Use("call", at(entry.call.loc), tuple(n for n in in_bare if n not in in_expr), bare_call=True))
    for hook, text in entry.code:
        found = _named(text.value, names)
        if found:
            out.append(Use(f"code.{hook}", at(text.loc), found))
    for alloc in entry.alloc:
        found = _named(alloc.expr.value, names)
        if found:
            out.append(Use(f"alloc.{alloc.name.value}", at(alloc.name.loc), found))
    ag = entry.autograd
    if ag is not None:
        for key, text in ag.texts():
            found = _named(text.value, names)
            if found:
                out.append(Use(f"autograd.{key}", at(ag.loc), found))
        for key in ("forward_args", "saved"):
            found = tuple(sorted(n for n in names if n in getattr(ag, key)))
            if found:
                out.append(Use(f"autograd.{key}", at(ag.loc), found))
    return tuple(out)


# Where the wrapper's arguments are in scope, as the wrapper's C++ parameters (the
# autograd backward's grad_code and return_code see only the saved values, <name>_);
# and of those, where a value of a new C++ type breaks code written for the old one
# (saved: and forward_args: only pass the value on, which works with either type).
IN_SCOPE = ("call", "code.", "alloc.", "autograd.forward_code", "autograd.wrapper_return", "autograd.saved",
            "autograd.forward_args")
TYPED = ("call", "code.", "alloc.", "autograd.forward_code", "autograd.wrapper_return")


def _breaks(entry: CatalogEntry, found: tuple[Change, ...], snippets: tuple[Use, ...], new_version) -> list[str]:
    out = []
    by_name = {}
    for c in found:
        by_name.setdefault(c.name, []).append(c)
    for use in snippets:
        if not use.where.startswith(IN_SCOPE):
            continue
        for name in use.names:
            for c in by_name.get(name, ()):
                if c.kind in NAMING_BREAKS or (c.kind == RETYPED and not use.bare_call and use.where.startswith(TYPED)):
                    what = {RENAMED: f"which torch {new_version} calls '{c.new}'",
                            REMOVED: f"which torch {new_version} no longer has",
                            MOVED: f"which torch {new_version} makes {c.new}, not {c.old}",
                            RETYPED: f"which is {c.new} in torch {new_version} (was {c.old})"}[c.kind]
                    out.append(f"{use.where} ({use.loc}) names '{name}', {what}")
    if any(c.kind == "return" for c in found) and (entry.alloc or entry.returns):
        out.append(f"its alloc:/returns: follow the returns, which torch {new_version} changed")
    return out


def _gate(entry: CatalogEntry, op: str, old: OpTable, new: OpTable, between: list[OpTable]) -> Gate:
    """The gate that keeps *entry* on the versions with *old*'s schema: below the
    first table (of the snapshots between, then *new*) where the op differs."""
    before = old.get(op)
    last, first = old.version, new.version
    for table in between + [new]:
        now = table.get(op)
        if now is None or before is None or now.schema != before.schema:
            first = table.version
            break
        last = table.version
    bound = TorchVersion(first.major, first.minor)
    exact = (first.major, first.minor) == (last.major, last.minor + 1)
    # The entry's own clauses stay, except upper bounds the new one makes redundant.
    kept = [f"{op}{v.major}.{v.minor}" + (f".{v.patch}" if v.patch else "")
            for op, v in (entry.torch.clauses if entry.torch is not None else ())
            if not (op in ("<", "<=") and v >= bound)]
    return Gate(",".join(kept + [f"<{bound.major}.{bound.minor}"]), bound, exact, last)


def _definitions(ws: Workspace):
    """(entry, definition, extra gate) for every catalog entry and vendor replacement."""
    for entry in ws.catalog.entries:
        yield entry, "catalog", None
    for vendor in ws.vendors:
        for o in vendor.overrides:
            if o.replace is not None:
                yield o.replace, f"vendor {vendor.name}", o.torch


def _admits(gate: TorchGate | None, version: TorchVersion) -> bool:
    return gate is None or gate.admits(version)


def drift(ws: Workspace, old: OpTable, new: OpTable, between: list[OpTable], parse, difference) -> Drift:
    """*between*: the op tables of the versions strictly between, oldest first
    (for the gates); *parse*: schema string -> torchgen FunctionSchema;
    *difference*: why a written schema cannot stand for torch's, or None
    (validation's rule)."""
    def at(loc: Loc) -> Loc:
        """A place named relative to the workspace, so reports do not depend on where they are made."""
        return Loc(ws.rel(loc.file), loc.line, loc.col)

    found, bases, checked = [], {}, 0
    for entry, definition, outer in _definitions(ws):
        both = all(_admits(g, v) for g in (entry.torch, outer) for v in (old.version, new.version))
        before = old.get(entry.op)
        if not both or before is None:
            continue
        checked += 1
        bases.setdefault(before.base_name, None)
        after = new.get(entry.op)
        gate_text = entry.torch.text if entry.torch is not None else ""
        if after is None:
            found.append(OpDrift(entry.op, definition, at(entry.loc), gate_text, True, (), (),
                                 (f"torch {new.version} has no op {entry.op}",),
                                 _gate(entry, entry.op, old, new, between), before.schema))
            continue
        if after.schema == before.schema:
            continue
        diff = changes(parse(before.schema), parse(after.schema))
        touched = {c.name for c in diff if c.kind in NAMING_BREAKS + (RETYPED,)}
        snippets = uses(entry, touched, at)
        pinned = False
        if entry.schema_text is not None:
            why = difference(parse(entry.schema_text.value), parse(after.schema))
            breaks = [f"its schema: ({at(entry.schema_text.loc)}) no longer stands for torch {new.version}'s: {why}"] \
                if why is not None else []
            pinned = why is None
        else:
            breaks = _breaks(entry, diff, snippets, new.version)
        pin = before.schema if breaks and entry.schema_text is None \
            and difference(parse(before.schema), parse(after.schema)) is None else ""
        found.append(OpDrift(entry.op, definition, at(entry.loc), gate_text, False, diff, snippets, tuple(breaks),
                             _gate(entry, entry.op, old, new, between) if breaks else None,
                             before.schema, after.schema, pinned, pin))
    overloads = []
    for base in sorted(bases):
        before, after = set(old.overloads(base)), set(new.overloads(base))
        if before != after:
            overloads.append(Overloads(base, tuple(sorted(after - before)), tuple(sorted(before - after))))
    return Drift(old, new, checked, tuple(found), tuple(overloads))

