"""What every artifact is rendered from."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from deeplink_gen.cache import NO_MEMO, Memo
from deeplink_gen.errors import Loc
from deeplink_gen.model import Prototypes, ResolvedVendor, Vendor
from deeplink_gen.options import Options
from deeplink_gen.input_paths import workspace_name


@dataclass(frozen=True)
class Job:
    rv: ResolvedVendor
    source: str               # the vendor file, relative to the workspace (named in every header)
    protos: Prototypes
    options: Options = Options()                  # the run's options (manifest.json records them)
    root: Path | None = None                      # the workspace
    memo: Memo = field(default=NO_MEMO, compare=False, repr=False)   # where each op's code is kept between runs
    origins: dict = field(default_factory=dict, compare=False, repr=False)   # origin() of each file so far
    host_plans: list = field(default_factory=list, compare=False, repr=False)   # host_diopi_plan(), once

    @property
    def vendor(self) -> Vendor:
        return self.rv.vendor

    def host_diopi_plan(self):
        """The host DIOPI library's plan (diopi_library: aten_cpu), made once for the library and the manifest."""
        if not self.host_plans:
            from deeplink_gen.plan.host_diopi import plan_host_diopi

            self.host_plans.append(plan_host_diopi(self.rv, self.protos))
        return self.host_plans[0]

    def library_functions(self) -> tuple[str, ...] | None:
        """The DIOPI functions of the library rendered for the vendor (None: it renders none)."""
        return self.host_diopi_plan().names() if self.vendor.diopi_library is not None else None

    def origin(self, loc: Loc) -> str:
        """The file *loc* is in, as generated code names it: relative to the
        workspace, or deeplink_gen/... for what ships with deeplink-gen
        (resolved once per file in this job)."""
        found = self.origins.get(loc.file)
        if found is None:
            found = self.origins[loc.file] = workspace_name(loc.file, self.root)
        return found
