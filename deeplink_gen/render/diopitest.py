"""The diopi_test device runtime (DIOPI impl/<impl>/test/conform_test.cpp):
the extern "C" functions of conform_test.h at the pinned DIOPI commit, built
from the same vendor calls as DIPU's device functions; and the test/
CMakeLists.txt that turns it, with diopi_test's own sources, into the Python
modules diopi_test imports (DIOPI's build adds it under -DTEST=ON)."""

from __future__ import annotations

from deeplink_gen import output_paths
from deeplink_gen.interfaces.diopi import impl_folder
from deeplink_gen.plan.runtime import plan_diopi_test, plan_test_sdk
from deeplink_gen.render.job import Job
from deeplink_gen.render.templating import render as render_template


def render(job: Job) -> dict[str, str]:
    vendor, spec = job.vendor, job.vendor.runtime
    if spec is None:
        return {}
    plan = plan_diopi_test(spec)
    return {
        output_paths.conform_test(vendor): render_template(
            "diopi_test/conform_test.cpp.j2", source=job.source, vendor=vendor, spec=spec, e=plan.entries,
            init=plan.init, fin=plan.finalize, generator_state=plan.generator_state, checkers=plan.checkers,
        ),
        output_paths.diopi_test_cmake(vendor): render_template(
            "diopi_test/CMakeLists.txt.j2", source=job.source, vendor=vendor, folder=impl_folder(vendor.diopi_impl),
            sdk=plan_test_sdk(vendor.build),
        ),
    }
