"""The edits outside vendor/<name>/ that onboarding a vendor needs: a
checklist and one snippet per edited upstream file."""

from __future__ import annotations

from deeplink_gen.plan.onboarding import plan_onboarding
from deeplink_gen.render import paths
from deeplink_gen.render.job import Job
from deeplink_gen.render.templating import render as render_template

FILES = ("ONBOARDING.md", "dipu_CMakeLists.txt.snippet", "basedef.h.snippet", "vender_helper.hpp.snippet",
         "diopi_impl_CMakeLists.txt.snippet")


def render(job: Job, files: dict[str, str]) -> dict[str, str]:
    c = plan_onboarding(job.vendor)
    ctx = dict(source=job.source, c=c, ident=c.ident, list_name=c.list_name, enum_upstream=c.enum_upstream,
               vendor_upstream=c.vendor_upstream, has_runtime=c.has_runtime, has_build=c.has_build)
    return {paths.onboarding(name): render_template(f"onboarding/{name}.j2", **ctx) for name in FILES}
