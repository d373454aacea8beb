"""manifest.json: every file rendered for a vendor and every op, with its
DIOPI function and flags."""

from __future__ import annotations

import hashlib
import json

from deeplink_gen import __version__, output_paths
from deeplink_gen.plan.host_diopi_calls import Glue
from deeplink_gen.plan.kernels import shard_of
from deeplink_gen.render.job import Job
from deeplink_gen.render.templating import render as render_template
from deeplink_gen.translate.signature import wrapper_name


def render(job: Job, files: dict[str, str]) -> dict[str, str]:
    rv = job.rv
    shards = int(rv.shards.value)
    ops = []
    vendor = rv.vendor
    for r in rv.ops:
        function = r.entry.call.function
        op = {
            "op": r.op,
            "enabled": r.enabled.value,
            "diopi": function,
            "wrapper": wrapper_name(r.op),
            "definition": "vendor" if r.replaced is not None else "catalog",
            "shard": shard_of(r.op, shards) if r.enabled.value else None,
            "flags": {name: s.value for name, s in r.settings},
        }
        if r.reason:
            op["reason"] = r.reason
        if r.memory_format is not None:
            op["memory_format"] = r.memory_format.value
        rules = vendor.dtypes.rules(function)
        if rules:
            op["dtype_rules"] = {rule.source: rule.target for rule in rules}
        layouts = vendor.layouts.function_layouts(function) or (
            (vendor.layouts.default.value,) if vendor.layouts.default is not None else ())
        if layouts:
            op["layouts"] = list(layouts)
        ops.append(op)
    body = {
        "vendor": rv.vendor.name,
        "device_type": rv.vendor.device_type,
        "tool_version": __version__,
        "torch_version": str(rv.torch_version),
        "options": job.options.recorded(),
        "files": [
            {"path": path, "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()}
            for path, text in sorted(files.items())
        ],
        "kernels": {
            "shards": shards,
            "precompiled_header": output_paths.KERNELS_PRECOMPILED in files,
            "files": [{"path": path, "ops": sum(1 for o in ops if o["shard"] == i),
                       "lines": files[path].count("\n") if path in files else 0}
                      for i, path in enumerate(output_paths.kernels(shards))],
        },
        "ops": ops,
        "skipped": [{"op": s.op, "reason": s.reason} for s in rv.skipped],
    }
    if vendor.diopi_library is not None:
        host = job.host_diopi_plan()
        body["diopi_library"] = {
            "kind": vendor.diopi_library.value,
            # Each function: the op it runs, and the op's argument (or fresh return) each DIOPI parameter becomes.
            # Values no parameter gives: "fixed" (null: absent), "same_rank" (keepdim: whether the first
            # tensor has the second's rank), "dtype_of" (a tensor's dtype). "forms": arguments given in another
            # shape, "classes_last" ((N, C, d...) as (N*d..., C)) or "flat" ((N, d...) as one dimension).
            "implemented": {f.name: _host_function(f) for f in host.functions},
            "not_implemented": dict(host.missing),
        }
    text = json.dumps(body, indent=2, sort_keys=False, ensure_ascii=True)
    return {output_paths.MANIFEST: render_template("manifest.json.j2", source=job.source,
                                                   body=text.partition("\n")[2])}


def _host_function(f) -> dict:
    """One function of the host DIOPI library, as manifest.json records it."""
    out = {"op": f.op, "args": [[a.param, a.aten] for a in f.args if a.param]}
    fixed = {a.aten: a.value for a in f.args if not a.param and a.glue is Glue.LITERAL}
    if fixed:
        out["fixed"] = fixed
    for glue in (Glue.SAME_RANK, Glue.DTYPE_OF):
        follows = {a.aten: list(a.value) for a in f.args if a.glue is glue}
        if follows:
            out[glue.value] = follows
    forms = {a.aten: a.glue.value for a in f.args if a.glue in (Glue.CLASSES_LAST, Glue.FLAT)}
    if forms:
        out["forms"] = forms
    return out
