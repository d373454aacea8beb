"""Comparing a catalog entry's own schema: with the chosen torch's. Argument
names, int vs SymInt, return names and default values may differ (the
wrapper takes the entry's names and integer types, which c10 accepts for
torch's schema); everything else must be the same."""

from __future__ import annotations


def _type(t) -> str:
    return str(t).replace("SymInt", "int")


def _annotation(a) -> str:
    return str(a.annotation) if a.annotation is not None else ""


def difference(written, torch) -> str | None:
    """Why torchgen FunctionSchema *written* cannot stand for *torch*, or None."""
    if str(written.name) != str(torch.name):
        return f"it names '{written.name}', not '{torch.name}'"
    w, t = written.arguments, torch.arguments
    if (len(w.flat_positional), len(w.flat_kwarg_only), len(w.out)) != \
            (len(t.flat_positional), len(t.flat_kwarg_only), len(t.out)):
        return (f"it has {len(w.flat_positional)} positional, {len(w.flat_kwarg_only)} keyword-only and "
                f"{len(w.out)} out arguments; torch's has {len(t.flat_positional)}, {len(t.flat_kwarg_only)} "
                f"and {len(t.out)}")
    for i, (a, b) in enumerate(zip(w.flat_all, t.flat_all), 1):
        if _type(a.type) != _type(b.type):
            return f"argument {i} ('{a.name}') is {a.type}, torch's ('{b.name}') is {b.type}"
        if _annotation(a) != _annotation(b):
            return f"argument {i} ('{a.name}') is annotated ({_annotation(a)}), torch's ({_annotation(b)})"
    if len(written.returns) != len(torch.returns):
        return f"it returns {len(written.returns)} value(s), torch's {len(torch.returns)}"
    for i, (a, b) in enumerate(zip(written.returns, torch.returns), 1):
        if _type(a.type) != _type(b.type) or _annotation(a) != _annotation(b):
            return f"return {i} is {a.type}{'(' + _annotation(a) + ')' if a.annotation else ''}, torch's is " \
                   f"{b.type}{'(' + _annotation(b) + ')' if b.annotation else ''}"
    return None
