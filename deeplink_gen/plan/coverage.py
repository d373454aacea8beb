"""Coverage: for every ATen op of one torch's op table and every vendor,
how a call of the op on the vendor's device is served, which DIOPI function
it calls, whether the vendor's DIOPI library defines that function, whether
autocompare and the CPU fallback are possible, and which dtypes it takes;
per vendor the counts; against a workload, what it would send to the CPU;
against a baseline, what was lost.

Every figure a report shows is decided here, "unknown" included (a count
that needs a DIOPI library no --impl gave), so that the text, Markdown and
HTML reports, which only lay the figures out, cannot disagree.

How an op is served follows the dispatcher's order for a backend key: a
kernel registered for the device (this workspace's, or DIPU's own), else a
CompositeExplicitAutograd kernel, else a CompositeImplicitAutograd
decomposition, else DIPU's boxed CPU fallback. At run time DIPU registers a
kernel only when the vendor's library defines its DIOPI function (a weak
symbol); `runs` says what happens then, when the library is known."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from deeplink_gen.errors import MAX_SHOWN, Loc, did_you_mean
from deeplink_gen.model import AtenOp, DiopiLibrary, OpTable, ResolvedOp, ResolvedVendor
from deeplink_gen.model.dtypes import DTYPES
from deeplink_gen.plan.reach import reached_functions

# A figure that depends on the vendor's DIOPI library, when no library was given.
UNKNOWN = "unknown"


class Reach(str, enum.Enum):
    """How a call of an op on the device is served, in the dispatcher's order."""

    REGISTERED = "registered"                   # a kernel of this workspace
    DIPU = "dipu"                               # DIPU's own kernel (RegisterDIPU.cpp)
    COMPOSITE_EXPLICIT = "composite-explicit"   # a CompositeExplicitAutograd kernel, for every backend
    COMPOSITE_IMPLICIT = "composite-implicit"   # decomposed into other ops (CompositeImplicitAutograd)
    CPU_FALLBACK = "cpu-fallback"               # DIPU's boxed fallback: copied to the CPU and back


# What each category means, for the reports.
REACH_MEANING = {
    Reach.REGISTERED: "registered by this workspace's kernels (enabled and registered for the vendor)",
    Reach.DIPU: "registered by DIPU itself (RegisterDIPU.cpp: empty, view, as_strided, ...)",
    Reach.COMPOSITE_EXPLICIT: "a CompositeExplicitAutograd kernel serves every backend (some only raise)",
    Reach.COMPOSITE_IMPLICIT: "inherited through a CompositeImplicitAutograd decomposition into other ops",
    Reach.CPU_FALLBACK: "none of these: DIPU's boxed CPU fallback runs it on the CPU",
}


class State(str, enum.Enum):
    """A per-op switch (autocompare, the CPU-fallback block) of a registered op."""

    ON = "on"          # rendered
    OFF = "off"        # possible, turned off by the vendor or the command line
    NEVER = "never"    # not possible: the op's entry says so, or nothing could run it


@dataclass(frozen=True)
class Cell:
    """One op for one vendor. The fields after runs are None unless the op is registered."""

    reach: Reach
    runs: Reach                          # reach at run time, given the library (= reach when it is unknown)
    diopi: str | None = None             # the DIOPI function the kernel calls
    implemented: bool | None = None      # whether the library defines it (None: unknown)
    autocompare: State | None = None
    fallback_to_cpu: State | None = None
    dtypes: tuple[str, ...] | None = None   # what the function takes after the vendor's dtype rules
    definition: str | None = None        # "catalog" or "vendor" (the vendor's replace:)

    @property
    def implemented_text(self) -> str:
        """yes, no or unknown for a registered op; empty otherwise."""
        if self.reach != Reach.REGISTERED:
            return ""
        return {True: "yes", False: "no", None: UNKNOWN}[self.implemented]

    @property
    def dtypes_text(self) -> str:
        if self.dtypes is None:
            return ""
        return "all" if tuple(self.dtypes) == DTYPES else " ".join(self.dtypes)


@dataclass(frozen=True)
class Row:
    op: AtenOp
    cells: tuple[Cell, ...]              # one per vendor, in Coverage.vendors order


@dataclass(frozen=True)
class Switch:
    """A per-op switch over one vendor's registered ops."""

    states: tuple[tuple[State, int], ...]        # registered ops per state

    @property
    def possible(self) -> int:
        return self.rendered + dict(self.states)[State.OFF]

    @property
    def rendered(self) -> int:
        return dict(self.states)[State.ON]


@dataclass(frozen=True)
class VendorSummary:
    name: str
    library: DiopiLibrary | None
    reach: tuple[tuple[Reach, int], ...]         # ops per category
    runs: tuple[tuple[Reach, int], ...]          # ops per category at run time
    implemented: tuple[int, int, int]            # registered ops whose function is defined / missing / unknown
    autocompare: Switch
    fallback_to_cpu: Switch

    def count(self, reach: Reach) -> int:
        return dict(self.reach)[reach]

    def running(self, reach: Reach) -> int | str:
        """The ops of category *reach* at run time, or UNKNOWN without the library."""
        return dict(self.runs)[reach] if self.library is not None else UNKNOWN

    @property
    def defined(self) -> int | str:
        """Registered ops whose DIOPI function the library defines, or UNKNOWN."""
        return self.implemented[0] if self.library is not None else UNKNOWN

    @property
    def missing(self) -> int | str:
        """Registered ops whose DIOPI function the library lacks, or UNKNOWN."""
        return self.implemented[1] if self.library is not None else UNKNOWN

    @property
    def defined_missing(self) -> str:
        """"defined / missing", or UNKNOWN."""
        return f"{self.defined} / {self.missing}" if self.library is not None else UNKNOWN


@dataclass(frozen=True)
class WorkloadVendor:
    name: str
    runs: tuple[tuple[Reach, int], ...]   # the workload's ops per category at run time
    to_cpu: tuple[str, ...]               # the workload's ops DIPU's CPU fallback would run
    unimplemented: tuple[str, ...]        # registered, but the library lacks their function

    def running(self, reach: Reach) -> int:
        return dict(self.runs)[reach]


@dataclass(frozen=True)
class Workload:
    source: str
    ops: tuple[str, ...]                       # the ops of the op table it names
    unknown: tuple[tuple[str, Loc, str], ...]  # names the op table does not have: (name, where, did-you-mean)
    vendors: tuple[WorkloadVendor, ...]


@dataclass(frozen=True)
class Baseline:
    """What an earlier coverage report says: per vendor, the registered ops and
    the DIOPI functions its library defined."""

    source: str
    registered: dict[str, frozenset[str]]
    implemented: dict[str, frozenset[str]]


class Lost(str, enum.Enum):
    """What a regression lost since the baseline."""

    UNREGISTERED = "unregistered"      # an op's registration
    UNIMPLEMENTED = "unimplemented"    # the library's definition of a DIOPI function

    @property
    def meaning(self) -> str:
        if self is Lost.UNREGISTERED:
            return "is no longer registered"
        return "is no longer defined by the DIOPI library"


@dataclass(frozen=True)
class Regression:
    vendor: str
    kind: Lost
    name: str


@dataclass(frozen=True)
class Comparison:
    source: str
    regressions: tuple[Regression, ...]
    notes: tuple[str, ...]              # what could not be compared, and why


@dataclass(frozen=True)
class Coverage:
    table: OpTable
    vendors: tuple[VendorSummary, ...]
    rows: tuple[Row, ...]
    workload: Workload | None = None
    baseline: Comparison | None = None

    @property
    def total(self) -> int:
        return len(self.rows)

    @property
    def with_library(self) -> tuple[VendorSummary, ...]:
        """The vendors whose DIOPI library is known: the reports' run-time figures are theirs."""
        return tuple(v for v in self.vendors if v.library is not None)

    def vendor_index(self, name: str) -> int:
        return next(i for i, v in enumerate(self.vendors) if v.name == name)


def _unregistered(op: AtenOp, dipu_ops: frozenset[str]) -> Reach:
    if op.name in dipu_ops:
        return Reach.DIPU
    if op.composite_explicit:
        return Reach.COMPOSITE_EXPLICIT
    if op.composite_implicit:
        return Reach.COMPOSITE_IMPLICIT
    return Reach.CPU_FALLBACK


def _state(possible: bool, on: bool) -> State:
    return State.NEVER if not possible else State.ON if on else State.OFF


def _registered_cell(r: ResolvedOp, rv: ResolvedVendor, library: DiopiLibrary | None, otherwise: Reach,
                     reached: tuple[str, ...]) -> Cell:
    e = r.entry
    function = e.call.function
    # The kernel is registered only when every weak DIOPI symbol its wrapper can reach is there.
    implemented = all(library.defines(f) for f in reached) if library is not None else None
    runs = Reach.REGISTERED
    if implemented is False:
        # Otherwise DIPU's CPU fallback serves the op; a custom fallback replaces it.
        runs = Reach.CPU_FALLBACK if e.flag("custom_fallback") else otherwise
    return Cell(Reach.REGISTERED, runs, function, implemented,
                _state(r.possible("autocompare"), r.on("autocompare")),
                _state(r.possible("fallback_to_cpu"), r.on("fallback_to_cpu")),
                rv.vendor.dtypes.accepted(function), "vendor" if r.replaced is not None else "catalog")


def _counts(values, kinds) -> tuple:
    values = list(values)
    return tuple((k, sum(1 for v in values if v == k)) for k in kinds)


def coverage(table: OpTable, resolved: list[ResolvedVendor], libraries: dict[str, DiopiLibrary],
             dipu_ops: frozenset[str], operators: frozenset[str]) -> Coverage:
    """Every op of *table* for every vendor (resolved for that table's torch); *operators*: the DIOPI operators."""
    registered = [{r.op: r for r in rv.enabled_ops if r.on("register") and not r.aten.helper and r.op in table.ops}
                  for rv in resolved]
    reached = [reached_functions(rv.enabled_ops, operators) for rv in resolved]
    rows = []
    for name in table.names():
        op = table.ops[name]
        otherwise = _unregistered(op, dipu_ops)
        cells = []
        for rv, ours, functions in zip(resolved, registered, reached):
            r = ours.get(name)
            cells.append(_registered_cell(r, rv, libraries.get(rv.vendor.name), otherwise, functions[name])
                         if r is not None else Cell(otherwise, otherwise))
        rows.append(Row(op, tuple(cells)))
    summaries = []
    for i, rv in enumerate(resolved):
        mine = [row.cells[i] for row in rows]
        ours = [c for c in mine if c.reach == Reach.REGISTERED]
        summaries.append(VendorSummary(
            rv.vendor.name, libraries.get(rv.vendor.name),
            _counts((c.reach for c in mine), Reach), _counts((c.runs for c in mine), Reach),
            (sum(1 for c in ours if c.implemented is True), sum(1 for c in ours if c.implemented is False),
             sum(1 for c in ours if c.implemented is None)),
            Switch(_counts((c.autocompare for c in ours), State)),
            Switch(_counts((c.fallback_to_cpu for c in ours), State))))
    return Coverage(table, tuple(summaries), tuple(rows))


def against(cov: Coverage, source: str, names: tuple[tuple[str, Loc], ...]) -> Workload:
    """What a workload naming *names* would run on each vendor."""
    by_name = {row.op.name: row for row in cov.rows}
    known = tuple(n for n, _ in names if n in by_name)
    unknown = tuple((n, loc, did_you_mean(n, by_name) if i < MAX_SHOWN else "")      # the first: each costs
                    for i, (n, loc) in enumerate((n, loc) for n, loc in names if n not in by_name))
    vendors = []
    for i, v in enumerate(cov.vendors):
        cells = [(n, by_name[n].cells[i]) for n in known]
        vendors.append(WorkloadVendor(
            v.name, _counts((c.runs for _, c in cells), Reach),
            tuple(sorted(n for n, c in cells if c.runs == Reach.CPU_FALLBACK)),
            tuple(sorted(n for n, c in cells if c.implemented is False))))
    return Workload(source, tuple(sorted(known)), unknown, tuple(vendors))


def registered_ops(cov: Coverage, vendor: str) -> frozenset[str]:
    i = cov.vendor_index(vendor)
    return frozenset(row.op.name for row in cov.rows if row.cells[i].reach == Reach.REGISTERED)


def compare(cov: Coverage, base: Baseline) -> Comparison:
    """Registered ops and implemented DIOPI functions the baseline had and this report has not."""
    regressions, notes = [], []
    for v in cov.vendors:
        if v.name not in base.registered:
            notes.append(f"{v.name}: not in the baseline")
            continue
        now = registered_ops(cov, v.name)
        regressions += [Regression(v.name, Lost.UNREGISTERED, op) for op in sorted(base.registered[v.name] - now)]
        before = base.implemented.get(v.name, frozenset())
        if v.library is None:
            if before:
                notes.append(f"{v.name}: DIOPI functions not compared (no --impl for {v.name})")
            continue
        regressions += [Regression(v.name, Lost.UNIMPLEMENTED, fn) for fn in sorted(before - v.library.functions)]
    for name in sorted(set(base.registered) - {v.name for v in cov.vendors}):
        notes.append(f"{name}: in the baseline, not in this report")
    return Comparison(base.source, tuple(regressions), tuple(notes))
