"""The DIOPI dtype/layout adaptor of one vendor (adaptor/diopi_adaptor.cpp,
adaptor_runtime.hpp, impl_functions.hpp), for vendors with a dtypes or
layouts section; for a vendor whose DIOPI library is rendered too, it wraps
what that library implements."""

from __future__ import annotations

from deeplink_gen import output_paths
from deeplink_gen.interfaces.diopi import CONVERSION_PRIMITIVES
from deeplink_gen.plan.adaptor import plan_adaptor
from deeplink_gen.render.job import Job
from deeplink_gen.render.templating import render as render_template
from deeplink_gen.translate.conversion import namespace_of

FILES = ("impl_functions.hpp", "adaptor_runtime.hpp", "diopi_adaptor.cpp")


def render(job: Job) -> dict[str, str]:
    if not job.vendor.converts:
        return {}
    plan = plan_adaptor(job.rv, job.protos, job.library_functions())
    ctx = dict(source=job.source, vendor=job.vendor, plans=plan.functions, casts=plan.casts,
               decls=plan.declared, commit=job.protos.commit, headers=plan.headers,
               converts=any(not f.passthrough for f in plan.functions),
               primitives={p: namespace_of(job.vendor, p) for p in CONVERSION_PRIMITIVES})
    return {output_paths.adaptor(job.vendor, name): render_template(f"adaptor/{name}.j2", **ctx) for name in FILES}
