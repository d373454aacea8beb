"""Resolution: every op of a vendor with its final settings and where each
came from. Precedence: CLI flag > vendor per-op override > vendor default >
catalog entry > built-in default. A catalog entry that marks an op as not
comparable (autocompare: false), without CPU fallback (fallback_to_cpu:
false) or without a device guard (device_guard: false) states a fact about
the op and always wins."""

from __future__ import annotations

from dataclasses import dataclass

from deeplink_gen import aten
from deeplink_gen.catalog import aten_op
from deeplink_gen.errors import Loc
from deeplink_gen.model import BUILTIN_DEFAULTS, SWITCHES, CatalogEntry, TorchVersion, Vendor
from deeplink_gen.signature import OpSignature, signature_of
from deeplink_gen.workspace import Workspace

_FACTS = ("autocompare", "fallback_to_cpu", "device_guard")


@dataclass(frozen=True)
class Setting:
    value: bool
    source: str          # "command line", "vendor op override", "vendor default", "catalog", "built-in default"
    loc: Loc | None = None

    def describe(self) -> str:
        where = f" ({self.loc})" if self.loc else ""
        return f"{str(self.value).lower():5} from {self.source}{where}"


@dataclass(frozen=True)
class ResolvedOp:
    entry: CatalogEntry
    aten: aten.AtenOp
    sig: OpSignature
    enabled: Setting
    settings: tuple[tuple[str, Setting], ...]
    memory_format: Setting | None = None   # value: contiguous | channels_last | preserve
    replaced: CatalogEntry | None = None   # the catalog entry, when the vendor replaced it (entry)

    @property
    def op(self) -> str:
        return self.entry.op

    def get(self, name: str) -> Setting:
        return dict(self.settings)[name]

    def on(self, name: str) -> bool:
        return self.get(name).value


@dataclass(frozen=True)
class Skipped:
    op: str
    reason: str


@dataclass(frozen=True)
class ResolvedVendor:
    vendor: Vendor
    torch_version: TorchVersion
    ops: tuple[ResolvedOp, ...]      # enabled and disabled, catalog order
    skipped: tuple[Skipped, ...]     # not applicable to this torch version
    shards: Setting = Setting(1, "built-in default")   # kernel translation units (value: int)

    @property
    def enabled_ops(self) -> tuple[ResolvedOp, ...]:
        return tuple(o for o in self.ops if o.enabled.value)


def _switch(name: str, entry: CatalogEntry, vendor: Vendor, cli: dict, origin: str = "catalog") -> Setting:
    fact = getattr(entry, name, None) if name in _FACTS else None
    if fact is not None and fact.value is False:
        return Setting(False, origin, fact.loc)
    if cli.get(name) is not None:
        return Setting(bool(cli[name]), "command line")
    override = vendor.override(entry.op)
    if override is not None and override.switch(name) is not None:
        s = override.switch(name)
        return Setting(s.value, "vendor op override", s.loc)
    default = vendor.default(name)
    if default is not None:
        return Setting(default.value, "vendor default", default.loc)
    return Setting(BUILTIN_DEFAULTS[name], "built-in default")


def _op_flag(name: str, entry: CatalogEntry, vendor: Vendor, origin: str = "catalog") -> Setting:
    """`enabled` or `register`: vendor op override > catalog (or replacement) > true."""
    stated, overridden = vendor.op_flag(name, entry)
    if stated is None:
        return Setting(True, "built-in default")
    return Setting(stated.value, "vendor op override" if overridden else origin, stated.loc)


def memory_format_of(layout: str) -> str:
    """DIPU's reading of a layout string for memory-format placeholders
    (dipu-kernels.md §14): NCHW -> contiguous; NLC/NHWC/NDHWC -> channels_last;
    anything else -> preserve."""
    if "NCHW" in layout:
        return "contiguous"
    if any(t in layout for t in ("NLC", "NHWC", "NDHWC")):
        return "channels_last"
    return "preserve"


def _memory_format(entry: CatalogEntry, vendor: Vendor) -> Setting | None:
    """The memory format for the op's placeholders: a per-op override, else
    the vendor's layouts for the op's DIOPI function (function-level, else
    the default), read as DIPU reads convert_config.yaml."""
    override = vendor.override(entry.op)
    if override is not None and override.memory_format is not None:
        return Setting(override.memory_format.value, "vendor op override", override.memory_format.loc)
    conversions = getattr(vendor, "conversions", None)
    if conversions is None:
        return None
    function = entry.call.function
    tokens = conversions.function_layouts(function)
    if tokens:
        f = conversions.layouts_of(function)
        return Setting(memory_format_of(",".join(tokens)), f"vendor layouts for {function}", f.loc)
    if conversions.default_layout is not None:
        return Setting(memory_format_of(conversions.default_layout.value), "vendor default layout",
                       conversions.default_layout.loc)
    return None


def resolve(ws: Workspace, vendor: Vendor, torch_version: TorchVersion, cli: dict | None = None) -> ResolvedVendor:
    cli = cli or {}
    ops, skipped = [], []
    for catalog_entry in ws.catalog.entries:
        entry = vendor.definition(catalog_entry)
        replaced = entry is not catalog_entry
        origin = "vendor replace" if replaced else "catalog"
        if entry.torch is not None and not entry.torch.admits(torch_version):
            skipped.append(Skipped(entry.op, f"torch {torch_version} is outside '{entry.torch.text}'"))
            continue
        op = aten_op(entry)
        sig = signature_of(op, entry.returns)
        settings = tuple((name, _switch(name, entry, vendor, cli, origin)) for name in SWITCHES)
        settings += (("register", _op_flag("register", entry, vendor, origin)),)
        ops.append(ResolvedOp(entry, op, sig, _op_flag("enabled", entry, vendor, origin), settings,
                              _memory_format(entry, vendor), catalog_entry if replaced else None))
    return ResolvedVendor(vendor, torch_version, tuple(ops), tuple(skipped), _shards(vendor, cli))


def _shards(vendor: Vendor, cli: dict) -> Setting:
    if cli.get("shards") is not None:
        return Setting(int(cli["shards"]), "command line")
    if vendor.shards is not None:
        return Setting(vendor.shards.value, "vendor default", vendor.shards.loc)
    return Setting(1, "built-in default")
