"""Checks of a vendor's dtypes and layouts sections: the functions and
tensors they name exist in DIOPI, targets are supported, and no rule set
chains or cycles. A dtype DIPU can hand to DIOPI that is neither supported
nor converted is valid but reaches the library as it is, which the vendor
either means (dtypes.pass_through) or is warned about."""

from __future__ import annotations

from deeplink_gen.errors import Diagnostics, Loc, Suggestion, display_path
from deeplink_gen.interfaces.diopi import CONVERSION_PRIMITIVES
from deeplink_gen.model import DiopiArgKind, DtypeRules, Prototype, Prototypes, Rule, Vendor
from deeplink_gen.model.dtypes import DTYPES, FROM_DIPU, LEVELS, UNCONVERTED_FATE


def _check_function(fn: str, loc: Loc, section: str, protos: Prototypes, diags: Diagnostics) -> Prototype | None:
    p = protos.get(fn)
    where = (section, "functions", fn)
    if p is None:
        diags.add(loc, where, f"'{fn}' is not a DIOPI function in the DIOPI prototypes ({display_path(protos.source)})",
                  Suggestion(fn, protos.functions))
        return None
    if fn in CONVERSION_PRIMITIVES:
        diags.add(loc, where, f"{fn} is a conversion primitive of the adaptor; its tensors cannot be converted")
        return None
    if p.allocates:
        ptr = next(x.name for x in p.params if x.kind == DiopiArgKind.HANDLE_PTR)
        diags.add(loc, where, f"{fn} fills in tensor handles ('{ptr}'); the adaptor passes it through unconverted")
        return None
    return p


def _check_tensor(p: Prototype, name: str, loc: Loc, where: tuple, diags: Diagnostics) -> bool:
    param = p.param(name)
    if param is None or not param.is_tensor:
        tensors = p.tensor_names()
        diags.add(loc, where, f"'{name}' is not a tensor argument of {p.name}",
                  Suggestion(name, tensors, f" (tensors: {', '.join(tensors)}; declared at {p.loc})"))
        return False
    return True


def check_dtypes(vendor: Vendor, protos: Prototypes, diags: Diagnostics) -> None:
    dtypes = vendor.dtypes
    supported = set(dtypes.supported.value) if dtypes.supported is not None else set(DTYPES)

    def check_rule(rule: Rule, where: tuple, below: tuple[Rule, ...] = ()) -> None:
        if rule.keeps:
            if not any(r.source == rule.source for r in below):
                diags.add(rule.loc, where + (rule.source,),
                          f"keeps {rule.source} as it is, but no lower level converts {rule.source}"
                          if rule.level != "common" else f"converts {rule.source} to itself")
        elif rule.target not in supported:
            diags.add(rule.loc, where + (rule.source,),
                      f"converts to {rule.target}, which is not in dtypes.supported "
                      f"({', '.join(d for d in DTYPES if d in supported)})")

    for r in dtypes.convert:
        check_rule(r, ("dtypes", "convert"))
    for f in dtypes.functions:
        where = ("dtypes", "functions", f.function)
        p = _check_function(f.function, f.loc, "dtypes", protos, diags)
        for r in f.convert:
            check_rule(r, where + ("convert",), dtypes.convert)
        for t, tloc, rules in f.tensors:
            if p is not None:
                _check_tensor(p, t, tloc, where + ("tensors", t), diags)
            for r in rules:
                check_rule(r, where + ("tensors", t), dtypes.rules(f.function))
    if not any(path[:1] == ("dtypes",) for path in vendor.rejected):    # rules taken out: warnings would follow from them
        _check_unconverted(dtypes, diags)
    # Chains and cycles, on every merged rule set that can apply.
    seen: set[tuple] = set()
    scopes: list[tuple[str | None, str | None, tuple]] = [(None, None, ("dtypes", "convert"))]
    for f in dtypes.functions:
        scopes.append((f.function, None, ("dtypes", "functions", f.function)))
        scopes.extend((f.function, t, ("dtypes", "functions", f.function, "tensors", t)) for t, _l, _r in f.tensors)
    for fn, tensor, where in scopes:
        rules = dtypes.rules(fn, tensor) if fn is not None else dtypes.convert
        by_source = {r.source: r for r in rules}
        for r in rules:
            again = by_source.get(r.target)
            if again is None or r.source == r.target:
                continue
            culprit = max(r, again, key=lambda x: LEVELS.index(x.level))
            key = (culprit.loc, r.source, r.target)
            if key in seen:
                continue
            seen.add(key)
            kind = "a cycle" if again.target == r.source else "a chain"
            diags.add(culprit.loc, where,
                      f"rules {r.source}->{r.target} ({r.loc}) and {again.source}->{again.target} ({again.loc}) "
                      f"form {kind}; every conversion must end at a supported dtype in one step")


def _check_unconverted(dtypes: DtypeRules, diags: Diagnostics) -> None:
    """pass_through names only dtypes that would pass unconverted; any other such dtype is a warning."""
    unconverted = dtypes.unconverted()
    meant = dtypes.pass_through.value if dtypes.pass_through is not None else ()
    for d in meant:
        why = ("is never handed to DIOPI by DIPU" if d not in FROM_DIPU
               else "is supported" if dtypes.supported is None or d in dtypes.supported.value
               else "is converted by a common rule" if d not in unconverted else None)
        if why:
            diags.add(dtypes.pass_through.loc, ("dtypes", "pass_through"),
                      f"{d} {why}; pass_through lists dtypes that reach the DIOPI library unconverted")
    unmeant = [d for d in unconverted if d not in meant]
    if unmeant:
        are, them = ("are", "them") if len(unmeant) > 1 else ("is", "it")
        diags.warn(dtypes.supported.loc, ("dtypes", "supported"),
                   f"{', '.join(unmeant)} {are} neither supported nor converted by a common rule (a function's own "
                   f"rules may convert some): such tensors {UNCONVERTED_FATE}; add {them} to supported, convert "
                   f"{them}, or list {them} under dtypes.pass_through")


def check_layouts(vendor: Vendor, protos: Prototypes, diags: Diagnostics) -> None:
    for f in vendor.layouts.functions:
        where = ("layouts", "functions", f.function)
        p = _check_function(f.function, f.loc, "layouts", protos, diags)
        if p is None:
            continue
        named = {}
        for t, located in f.tensors:
            _check_tensor(p, t, located.loc, where + ("tensors", t), diags)
            named[t] = located
        for c in f.contiguous:
            if _check_tensor(p, c.value, c.loc, where + ("contiguous",), diags) and c.value in named:
                diags.add(c.loc, where + ("contiguous",),
                          f"'{c.value}' also has a layout under tensors (at {named[c.value].loc}); keep one")
