"""DIOPI's impl/<vendor>/convert_config.yaml. DIPU reads the same file for
its memory-format placeholders, so layouts are always written as strings."""

from __future__ import annotations

from deeplink_gen import output_paths
from deeplink_gen.plan.convert_config import plan_convert_config
from deeplink_gen.render.job import Job
from deeplink_gen.render.templating import render as render_template


def render(job: Job) -> dict[str, str]:
    items = plan_convert_config(job.vendor)
    if not items:
        return {}
    return {output_paths.convert_config(job.vendor): render_template(
        "adaptor/convert_config.yaml.j2", source=job.source, items=items, vendor=job.vendor)}
