"""What the YAML means, as frozen dataclasses. Everything parsed from a file
carries the Loc it came from, so later stages can point back at it. This
package imports nothing of deeplink-gen but `errors`."""

from deeplink_gen.model.catalog import HOOKS, Autograd, CallArg, Catalog, CatalogEntry, DiopiCall
from deeplink_gen.model.common import Located, TorchGate, TorchVersion
from deeplink_gen.model.dtypes import DtypeRules, FunctionDtypes, Rule
from deeplink_gen.model.implemented import Implemented, Namespace
from deeplink_gen.model.interfaces import (
    AtenOp, DiopiArgKind, DiopiLibrary, DiopiParam, DipuFunction, DipuParam, OpTable, Prototype, Prototypes,
    RuntimeHeader,
)
from deeplink_gen.model.layouts import FunctionLayouts, LayoutRules
from deeplink_gen.model.resolved import DEFAULT_SHARDS, ResolvedOp, ResolvedVendor, Setting, Skipped
from deeplink_gen.model.runtime import (
    BuildSpec, CallTemplate, Checker, CommSpec, DiopiTestSpec, GeneratorSpec, HandleTypes, Impl,
    RuntimeSpec, Toolkit, VendorApi,
)
from deeplink_gen.model.testconfig import DiopiTestRule, DisabledClass, DisabledTest, Precision, TensorSkip, TestConfig
from deeplink_gen.model.vendor import BUILTIN_DEFAULTS, FACTS, SWITCHES, OpOverride, SourceFile, Vendor, VendorIdentity
from deeplink_gen.model.workspace import Workspace

__all__ = [
    "HOOKS", "Autograd", "CallArg", "Catalog", "CatalogEntry", "DiopiCall", "Located", "TorchGate",
    "TorchVersion", "DtypeRules", "FunctionDtypes", "Rule", "Implemented", "Namespace", "AtenOp", "DiopiArgKind", "DiopiLibrary", "DiopiParam",
    "DipuFunction", "DipuParam", "OpTable", "Prototype", "Prototypes", "RuntimeHeader", "FunctionLayouts", "LayoutRules", "ResolvedOp",
    "ResolvedVendor", "Setting", "Skipped", "DEFAULT_SHARDS", "BuildSpec", "CallTemplate", "Checker", "CommSpec",
    "DiopiTestSpec", "GeneratorSpec", "HandleTypes", "Impl", "RuntimeSpec", "Toolkit", "VendorApi", "DiopiTestRule",
    "DisabledClass", "DisabledTest", "Precision", "TensorSkip", "TestConfig", "BUILTIN_DEFAULTS", "FACTS", "SWITCHES", "OpOverride", "SourceFile",
    "Vendor", "VendorIdentity", "Workspace",
]
