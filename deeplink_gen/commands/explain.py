"""`deeplink-gen explain OP --vendor V`: every setting that shapes one op for
one vendor, with the place each comes from: its definition, the switches,
the vendor's reason, and the dtype and layout rules its DIOPI function gets.
Without OP, one line per op of the vendor."""

from __future__ import annotations


import click

from deeplink_gen import output_paths, pipeline
from deeplink_gen.commands import next_step, stored, torch_choice
from deeplink_gen.errors import Diagnostic, UserError, did_you_mean, excerpt
from deeplink_gen.model import OpOverride, ResolvedOp, ResolvedVendor, Vendor, Workspace
from deeplink_gen.model.dtypes import UNCONVERTED_FATE
from deeplink_gen.options import Options, Torch
from deeplink_gen.plan.kernels import shard_of
from deeplink_gen.request import Request
from deeplink_gen.translate.signature import wrapper_name


def _row(label: str, text: str) -> str:
    return f"  {label:16}{text}"


def _conversions(vendor: Vendor, function: str) -> list[str]:
    """The dtype and layout rules that apply to *function*'s tensors, with where each is written."""
    lines = []
    dtypes, layouts = vendor.dtypes, vendor.layouts
    if dtypes.supported is not None:
        lines.append(_row("dtypes", f"supported: {', '.join(dtypes.supported.value)} ({dtypes.supported.loc})"))
    rules = dtypes.rules(function)
    if rules:
        lines.append(_row("dtype rules", ", ".join(f"{r.source}->{r.target} ({r.level}, {r.loc})" for r in rules)))
    f = dtypes.of(function)
    for tensor, _loc, own in f.tensors if f is not None else ():
        merged = dtypes.rules(function, tensor)
        lines.append(_row(f"  {tensor}", ", ".join(f"{r.source}->{r.target} ({r.level}, {r.loc})" for r in merged)
                          + f"; accepts {', '.join(_accepted(vendor, merged))}"))
    lines.append(_row("accepts", ", ".join(_accepted(vendor, rules))))
    unconverted = dtypes.unconverted(function)
    if unconverted:
        meant = f"listed in dtypes.pass_through at {dtypes.pass_through.loc}; " if dtypes.pass_through else ""
        lines.append(_row("", f"passed through unconverted: {', '.join(unconverted)} ({meant}such tensors "
                              f"{UNCONVERTED_FATE})"))
    chosen = layouts.function_layouts(function)
    fl = layouts.of(function)
    if chosen:
        lines.append(_row("layouts", f"{', '.join(chosen)} for {function} ({fl.loc})"))
    elif layouts.default is not None:
        lines.append(_row("layouts", f"{layouts.default.value} (vendor default, {layouts.default.loc})"))
    for tensor, located in fl.tensors if fl is not None else ():
        lines.append(_row(f"  {tensor}", f"layouts {', '.join(located.value)} ({located.loc})"))
    for c in fl.contiguous if fl is not None else ():
        lines.append(_row(f"  {c.value}", f"contiguous ({c.loc})"))
    return lines


def _accepted(vendor: Vendor, rules) -> tuple[str, ...]:
    from deeplink_gen.model.dtypes import accepted

    supported = vendor.dtypes.supported.value if vendor.dtypes.supported is not None else None
    return accepted(supported, rules)


def explain_op(found: ResolvedOp, rv: ResolvedVendor) -> list[str]:
    e = found.entry
    op = found.op
    lines = [f"{op}  ({e.loc})", _row("schema", found.aten.schema), _row("wrapper", wrapper_name(op)),
             _row("DIOPI call", str(e.call))]
    if found.replaced is not None:
        lines.append(_row("definition", f"vendor replace ({e.loc}), instead of the catalog's ({found.replaced.loc})"))
    else:
        lines.append(_row("definition", f"catalog ({e.loc})"))
    if found.enabled.value:
        count = int(rv.shards.value)
        index = shard_of(op, count)
        where = f" ({rv.shards.loc})" if rv.shards.loc else ""
        lines.append(_row("shard", f"{index} of {count}: {output_paths.kernels(count)[index].rsplit('/', 1)[-1]}"
                                   f" (shards: from {rv.shards.source}{where})"))
    lines.append(_row("enabled", found.enabled.describe()))
    override = rv.vendor.override(op)
    if found.reason:
        lines.append(_row("reason", f"{found.reason} ({override.loc})"))
    lines += [_row(name, s.describe()) for name, s in found.settings]
    if found.memory_format is not None and any("PREFERRED_MEMORY_FORMAT_PLACEHOLDER" in t.value for _, t in e.code):
        lines.append(_row("memory_format", found.memory_format.describe()))
    for label in ("dummy_call", "custom_fallback", "force_fallback"):
        located = getattr(e, label)
        if located is not None:
            lines.append(_row(label, f"{str(located.value).lower():5} from catalog ({located.loc})"))
    for hook, text in e.code:
        count = text.value.count("\n") + (0 if text.value.endswith("\n") else 1)
        lines.append(f"  code.{hook:11}{count} line{'s' if count != 1 else ''} of C++ ({text.loc})")
    for label, names in (("locals", e.locals), ("ins", [n + ("?" if o else "") for n, o in e.ins]),
                         ("outs", e.outs), ("no_device_check", e.no_device_check), ("includes", e.includes)):
        if names:
            lines.append(_row(label, ", ".join(names)))
    if e.autograd is not None:
        ag = e.autograd
        forward = ag.forward.value if ag.forward is not None else op
        lines.append(_row("autograd", f"forward {forward}, backward {ag.backward.value}"
                                      f"{', saves ' + ', '.join(ag.saved) if ag.saved else ''} ({ag.loc})"))
    return lines + _conversions(rv.vendor, e.call.function)


def _gated_override(override: OpOverride | None, rv: ResolvedVendor) -> list[str]:
    """A vendor override whose torch: gate leaves out the chosen torch, said so."""
    if override is None or override.torch is None or override.torch.admits(rv.torch_version):
        return []
    return [_row("override", f"not applied: torch {rv.torch_version} is outside '{override.torch.text}' "
                             f"({override.torch.loc})")]


def _resolved(request: Request) -> tuple[Torch, Workspace, ResolvedVendor]:
    """The request's torch, its checked workspace, and its one vendor resolved."""
    (vendor,) = request.vendors
    torch = torch_choice.of_request(request)
    ws = stored.checked(request, torch).ws
    return torch, ws, pipeline.resolve(ws, ws.vendor(vendor), torch, request.options)


def run(request: Request, op: str) -> list[str]:
    (vendor,) = request.vendors
    torch, ws, rv = _resolved(request)
    found = next((r for r in rv.ops if r.op == op), None)
    if found is not None:
        return explain_op(found, rv) + _gated_override(ws.vendor(vendor).override(op), rv)
    skipped = next((s for s in rv.skipped if s.op == op), None)
    if skipped is not None:
        return [f"{op}: not rendered: {skipped.reason}"]
    raise UserError([Diagnostic(None, None, _not_in_catalog(op, ws, torch, request.options))])


def _not_in_catalog(op: str, ws, torch: Torch, options: Options) -> str:
    """Why *op* has nothing to explain: a torch op the catalog lacks (and how to add it, with the DIOPI
    functions its name suggests), or no op at all (and the nearest name)."""
    table = torch.op_table()
    overloads = sorted(n for n in ws.catalog.names() if n.split(".")[0] in (op, op + "_") and n != op)
    if op not in table.ops and overloads:
        return (f"'{op}' names no single op: the op catalog has {_some(overloads)}; "
                f"explain one of them (explain --vendor V lists every op)")
    if op not in table.ops:
        return (f"'{excerpt(op)}' is neither in the op catalog nor an op of torch {table.version}"
                f"{did_you_mean(op, [*ws.catalog.names(), *table.ops])}")
    base = "diopi" + "".join(part.capitalize() for part in op.split(".")[0].strip("_").split("_"))
    declared = [f for f in (base, base + "Inp") if options.prototypes().get(f) is not None]
    diopi = (f"; DIOPI declares {' and '.join(declared)}" if declared
             else f"; DIOPI declares no {base}: the op needs one, or a catalog entry with dummy_call or custom code")
    return (f"'{op}' is an op of torch {table.version} that the op catalog does not define: add it to a "
            f"catalog/*.yaml of the workspace (ops: {{{op}: {{call: ...}}}}; see docs/op-catalog.md){diopi}")


def _some(names: list[str], shown: int = 8) -> str:
    return ", ".join(names[:shown]) + (f" and {len(names) - shown} more" if len(names) > shown else "")


def listing(request: Request) -> list[str]:
    """Every op of the vendor, one line each: state, DIOPI function, definition; then the ops this torch skips."""
    (vendor,) = request.vendors
    _, _, rv = _resolved(request)
    width = max((len(r.op) for r in rv.ops), default=0)
    left_out = (f", {len(rv.skipped)} catalog entr{'y' if len(rv.skipped) == 1 else 'ies'} left out for this torch"
                if rv.skipped else "")
    lines = [f"{vendor}: {len(rv.enabled_ops)} of {len(rv.ops)} catalog ops enabled{left_out}, torch {rv.torch_version} "
             "(explain OP --vendor V shows one)"]
    for r in rv.ops:
        state = ("registered" if r.on("register") else "helper") if r.enabled.value else "disabled"
        where = "vendor" if r.replaced is not None else "catalog"
        lines.append(f"  {r.op:{width}}  {state:10}  {r.entry.call.function:28}  {where} ({r.entry.loc})")
    lines += [f"  {s.op:{width}}  skipped: {s.reason}" + (f"  catalog ({s.loc})" if s.loc is not None else "")
              for s in rv.skipped]
    return lines


def main(request: Request, op: str | None) -> None:
    """`explain`: one op's settings and where each comes from, or (without *op*) the vendor's listing."""
    (vendor,) = request.vendors
    prog = next_step.prog(request.root)
    click.echo("\n".join(run(request, op) if op is not None else listing(request)))
    if op is None:
        next_step.show(f"{prog} explain OP --vendor {vendor}   (one op: its settings and where each comes from)")
    else:
        next_step.show(f"change it under ops: {op}: in vendors/{vendor}.yaml, then {prog} render --vendor {vendor}")
