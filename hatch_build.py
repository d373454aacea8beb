"""Build hook: compile the templates to Python modules in the package
(deeplink_gen/render/precompile.py says why), for wheels and editable installs."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class CompileTemplates(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict) -> None:
        package = Path(self.root) / "deeplink_gen"
        spec = importlib.util.spec_from_file_location("deeplink_gen_precompile", package / "render" / "precompile.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        compiled = module.build(package)
        build_data["artifacts"].append(f"/{compiled.relative_to(self.root).as_posix()}")
