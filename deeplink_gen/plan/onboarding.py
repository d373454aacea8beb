"""The onboarding plan: every edit DIPU (and DIOPI) needs outside the vendor
folder, whether upstream already has it, and, for the ones it does not have,
where each goes in the upstream files: the changes the onboarding patches
are made of, still without their text. DIOPI's edits: an IMPL_* list when
DIOPI does not know the vendor's DIOPI_IMPL_OPT, and, for a vendor with an
adaptor whose DIOPI folder runs DIOPI's adaptor generator (its own rule or
ImplHelper.cmake's diopi_use_adapter), that rule replaced by compiling the
rendered adaptor. And DIPU's PyTorch test base
(dipu/tests/pytorch_test_base.py) loads the rendered pytorch_config of a
device type only when its if/elif chain names that type, so any other type
gets a branch at the chain's end.

"Upstream has it" compares the vendor's whole identity with DIPU's own
spelling of that vendor (interfaces/dipu.py UPSTREAM): folder name, device
type, -DDEVICE aliases and DIOPI_IMPL_OPT, and the DIOPI_IMPL_OPT with
DIOPI's IMPL_* lists. A vendor DIPU knows under the same name but with
another value gets a change of upstream's line, a vendor it does not know
gets lines added."""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace

from deeplink_gen.interfaces.diopi import IMPL_CHOICES, ImplChoice, impl_choice, impl_folder
from deeplink_gen.interfaces.dipu import (
    PYTORCH_CONFIG_TYPES, UPSTREAM, UPSTREAM_DEVICE_TYPES, Excerpt, UpstreamVendor, edit_sites,
)
from deeplink_gen.model import Vendor

DIPU_CMAKE = "dipu/CMakeLists.txt"
CSRC_CMAKE = "dipu/torch_dipu/csrc_dipu/CMakeLists.txt"
BASEDEF = "dipu/torch_dipu/csrc_dipu/runtime/device/basedef.h"
VENDER_HELPER = "dipu/torch_dipu/csrc_dipu/utils/vender_helper.hpp"
TEST_BASE = "dipu/tests/pytorch_test_base.py"
DIOPI_IMPL_CMAKE = "impl/CMakeLists.txt"           # from DIOPI's root
DIOPI_ROOT = "dipu/third_party/DIOPI"               # DIOPI's root in a deeplink.framework checkout
CONTEXT = 3                                         # context lines around each change, as git diff
DIOPI_KEYS = ("diopi", "adaptor")                   # the rows whose edits are DIOPI's (diopi.patch)


class Edit(enum.Enum):
    """A kind of change: its value names the macro of templates/onboarding/edits.j2 that
    writes its lines (and, with _label, the one that names it in a patch's hunk header)."""

    ALIAS_LIST = "alias_list"
    BRANCH = "branch"
    IMPL_OPT = "impl_opt"
    ENUMERATOR = "enumerator"
    TYPE_CASE = "type_case"
    NAME_MAP = "name_map"
    KERNEL_RULE = "kernel_rule"
    TEST_CONFIG = "test_config"
    IMPL_LIST = "impl_list"
    IMPL_BRANCH = "impl_branch"
    ADAPTOR_RULE = "adaptor_rule"


class Status(enum.Enum):
    PRESENT = "present"      # upstream already has exactly this: no edit
    ADD = "add"              # upstream does not have it: lines added
    CHANGE = "change"        # upstream has it with another value: its line changed
    REPLACE = "replace"      # always needed: DIPU's kernel rule
    OPTIONAL = "optional"    # DIOPI: needed once the DIOPI implementation folder exists


@dataclass(frozen=True)
class Change:
    """Upstream lines first .. first+count-1 of *path* replaced by the lines
    *edit* writes from *args* (count 0: the lines are inserted before line *first*)."""

    path: str
    first: int
    count: int
    edit: Edit
    args: tuple

    @property
    def end(self) -> int:
        return self.first + self.count


@dataclass(frozen=True)
class Row:
    """One line of the checklist."""

    number: int
    key: str                  # aliases, branch, enum, name_map, type_str, kernels, test_config, diopi, adaptor
    file: str                 # from the deeplink.framework root
    status: Status
    upstream: str | None      # upstream's value, for PRESENT and CHANGE rows
    snippet: str              # the snippet file in onboarding/
    changes: tuple[Change, ...]


@dataclass(frozen=True)
class OnboardingPlan:
    vendor: Vendor                        # its identity: name, device_type, cmake_aliases, diopi_impl
    list_name: str                        # the DEVICE_* list in dipu/CMakeLists.txt
    upstream: UpstreamVendor | None       # DIPU's own vendor of this name
    impl: ImplChoice | None               # DIOPI's IMPL_* list holding diopi_impl
    impl_list: str                        # that list's name, or the one diopi.patch adds
    diopi_dir: str                        # the DIOPI impl folder DIOPI builds for diopi_impl
    files_dir: str                        # the DIOPI impl folder of the vendor's own files (rendered there)
    kernels_cmake: str                    # the kernel list, from csrc_dipu/
    pytorch_config_loaded: bool           # pytorch_test_base.py imports this type's config
    has_runtime: bool
    has_build: bool
    rows: tuple[Row, ...]

    @property
    def dipu_changes(self) -> tuple[Change, ...]:
        return tuple(c for r in self.rows if r.key not in DIOPI_KEYS for c in r.changes)

    @property
    def diopi_changes(self) -> tuple[Change, ...]:
        return tuple(c for r in self.rows if r.key in DIOPI_KEYS for c in r.changes)

    @property
    def new_vendor(self) -> bool:
        return self.upstream is None

    def row(self, key: str) -> Row:
        return next(r for r in self.rows if r.key == key)


def _quoted(items) -> str:
    return " ".join(f'"{a}"' for a in items)


def _at(ex: Excerpt, predicate, start: int = 0) -> int:
    return ex.find(predicate, start)


def adaptor_rule_form(ex: Excerpt, start: int, stop: int) -> tuple[str, bool]:
    """The source list DIOPI's adaptor rule (upstream lines start..stop-1) adds the generated
    adaptor to, and whether the rule insists on an adaptor (a FATAL_ERROR when its input is
    missing). Two forms exist at 02f03c6a: the rule spelled out (an add_custom_target running
    gen.py, then list(APPEND <list> ...), optional: camb, ascend_npu, kunlunxin, topsrider),
    and a call of ImplHelper.cmake's diopi_use_adapter(... <list>) whose last argument is the
    list, after a FATAL_ERROR when convert_config.yaml is missing (muxi, torch)."""
    body = [ex.line(n).strip() for n in range(start, stop)]
    required = any("FATAL_ERROR" in line for line in body)
    for line in body:
        if line.startswith("diopi_use_adapter(") and line.endswith(")"):
            return line[:-1].split()[-1], required
    for line in body:
        if line.startswith("list(APPEND ") and "diopi_adaptor.cpp" in line:
            return line.split()[1], required
    raise LookupError(f"no adaptor sources in the {ex.path} excerpt")


def _row(key: str, file: str, status: Status, upstream: str | None, snippet: str, *changes: Change) -> Row:
    """A checklist line; plan_onboarding numbers the lines in order."""
    return Row(0, key, file, status, upstream, snippet, changes)


def _dipu_cmake_rows(vendor: Vendor, up: UpstreamVendor | None, list_name: str,
                     ex: Excerpt) -> list[Row]:
    """1-2: dipu/CMakeLists.txt, the -DDEVICE alias list and the branch of the vendor chain."""
    name, aliases, impl_opt = vendor.name, tuple(vendor.cmake_aliases), vendor.diopi_impl
    snippet = "dipu_CMakeLists.txt.snippet"
    chain = _at(ex, lambda line: line.startswith("if(${DEVICE} IN_LIST "))
    if up is None:
        last_list = max(n for n, line in enumerate(ex.lines, ex.first_line) if line.startswith("list(APPEND DEVICE_"))
        return [_row("aliases", DIPU_CMAKE, Status.ADD, None, snippet,
                     Change(DIPU_CMAKE, last_list + 1, 0, Edit.ALIAS_LIST, (list_name, aliases))),
                _row("branch", DIPU_CMAKE, Status.ADD, None, snippet,
                     Change(DIPU_CMAKE, _at(ex, lambda line: line == "else()", chain), 0, Edit.BRANCH,
                            (list_name, name, impl_opt)))]
    rows = []
    if aliases == up.cmake_aliases:
        rows.append(_row("aliases", DIPU_CMAKE, Status.PRESENT, _quoted(up.cmake_aliases), snippet))
    else:
        line = _at(ex, lambda text: text.startswith(f"list(APPEND {list_name} "))
        rows.append(_row("aliases", DIPU_CMAKE, Status.CHANGE, _quoted(up.cmake_aliases), snippet,
                         Change(DIPU_CMAKE, line, 1, Edit.ALIAS_LIST, (list_name, aliases))))
    if impl_opt == up.diopi_impl:
        rows.append(_row("branch", DIPU_CMAKE, Status.PRESENT, f'"{up.diopi_impl}"', snippet))
    else:
        branch = _at(ex, lambda text: text.endswith(f"IN_LIST {list_name})"), chain)
        line = _at(ex, lambda text: text.strip().startswith("set(DIOPI_IMPL_OPT "), branch)
        rows.append(_row("branch", DIPU_CMAKE, Status.CHANGE, f'"{up.diopi_impl}"', snippet,
                         Change(DIPU_CMAKE, line, 1, Edit.IMPL_OPT, (name, impl_opt))))
    return rows


def _device_type_rows(vendor: Vendor, up: UpstreamVendor | None, sites: dict[str, Excerpt]) -> list[Row]:
    """3: the enumerator; 4-5: both mappings of utils/vender_helper.hpp."""
    name, device_type = vendor.name, vendor.device_type
    rows = []
    ex = sites[BASEDEF]
    known_type = device_type in UPSTREAM_DEVICE_TYPES
    if known_type:
        rows.append(_row("enum", BASEDEF, Status.PRESENT, device_type, "basedef.h.snippet"))
    else:
        enum_start = _at(ex, lambda line: line.startswith("enum class VendorDeviceType"))
        rows.append(_row("enum", BASEDEF, Status.ADD, None, "basedef.h.snippet",
                         Change(BASEDEF, _at(ex, lambda line: line == "};", enum_start), 0, Edit.ENUMERATOR,
                                (device_type, name))))
    ex = sites[VENDER_HELPER]
    snippet = "vender_helper.hpp.snippet"
    if up is None:
        undef = _at(ex, lambda line: line.startswith("#undef DIPU_MAY_CAST_VENDOR_NAME_TO_DEVICE_TYPE"))
        rows.append(_row("name_map", VENDER_HELPER, Status.ADD, None, snippet,
                         Change(VENDER_HELPER, undef, 0, Edit.NAME_MAP, (name, device_type))))
    elif up.device_type == device_type:
        rows.append(_row("name_map", VENDER_HELPER, Status.PRESENT, up.device_type, snippet))
    else:
        line = _at(ex, lambda text: text.strip().startswith(f"DIPU_MAY_CAST_VENDOR_NAME_TO_DEVICE_TYPE({name}, "))
        rows.append(_row("name_map", VENDER_HELPER, Status.CHANGE, up.device_type, snippet,
                         Change(VENDER_HELPER, line, 1, Edit.NAME_MAP, (name, device_type))))
    if known_type:
        rows.append(_row("type_str", VENDER_HELPER, Status.PRESENT, device_type, snippet))
    else:
        to_str = _at(ex, lambda line: line.startswith("inline const char* VendorDeviceTypeToStr"))
        rows.append(_row("type_str", VENDER_HELPER, Status.ADD, None, snippet,
                         Change(VENDER_HELPER, _at(ex, lambda line: line.strip() == "default:", to_str), 0,
                                Edit.TYPE_CASE, (device_type,))))
    return rows


def _kernels_row(kernels_cmake: str, ex: Excerpt) -> Row:
    """6: DIPU's kernel rule (generated AutoGenedKernels.cpp) becomes an include of our list."""
    start = _at(ex, lambda line: line == "# Auto generated code.")
    stop = _at(ex, lambda line: line == "# Collect source files.", start)
    return _row("kernels", CSRC_CMAKE, Status.REPLACE, None, "csrc_dipu_CMakeLists.txt.snippet",
                Change(CSRC_CMAKE, start, stop - start, Edit.KERNEL_RULE, (kernels_cmake,)))


def _test_config_row(device_type: str, ex: Excerpt) -> Row:
    """7: DIPU's PyTorch test base imports dipu/tests/pytorch_config_<type>.py (rendered for every
    vendor) only for the device types of its if/elif chain; any other type gets a branch there."""
    module = f"tests.pytorch_config_{device_type.lower()}"
    if device_type in PYTORCH_CONFIG_TYPES:
        return _row("test_config", TEST_BASE, Status.PRESENT, device_type, "pytorch_test_base.py.snippet")
    chain = _at(ex, lambda line: line.startswith("if dipu.vendor_type == "))
    end = _at(ex, lambda line: line != "" and not line[0].isspace() and not line.startswith(("elif ", "else:")),
              chain + 1)
    while ex.line(end - 1).strip() == "":
        end -= 1
    return _row("test_config", TEST_BASE, Status.ADD, None, "pytorch_test_base.py.snippet",
                Change(TEST_BASE, end, 0, Edit.TEST_CONFIG, (device_type, module)))


def _diopi_row(impl_opt: str, impl: ImplChoice | None, sites: dict[str, Excerpt]) -> tuple[Row, str, str]:
    """8: DIOPI's impl/CMakeLists.txt, when DIOPI has no IMPL_* list for diopi_impl; with
    the IMPL_* list that builds it and the impl folder that list builds."""
    file = f"{DIOPI_ROOT}/{DIOPI_IMPL_CMAKE}"
    snippet = "diopi_impl_CMakeLists.txt.snippet"
    if impl is not None:
        return (_row("diopi", file, Status.PRESENT, f"{impl.list_name} -> impl/{impl.directory}", snippet),
                impl.list_name, impl.directory)
    taken = {c.list_name for c in IMPL_CHOICES}
    impl_list = f"IMPL_{impl_opt.upper()}"
    while impl_list in taken:
        impl_list += "_IMPL"
    ex = sites[DIOPI_IMPL_CMAKE]
    last_list = max(n for n, line in enumerate(ex.lines, ex.first_line) if line.startswith("list(APPEND IMPL_"))
    impl_chain = _at(ex, lambda line: line.startswith("if (${IMPL_OPT} IN_LIST "))
    row = _row("diopi", file, Status.OPTIONAL, None, snippet,
               Change(DIOPI_IMPL_CMAKE, last_list + 1, 0, Edit.IMPL_LIST, (impl_list, (impl_opt.upper(), impl_opt))),
               Change(DIOPI_IMPL_CMAKE, _at(ex, lambda line: line == "else()", impl_chain), 0, Edit.IMPL_BRANCH,
                      (impl_list, impl_opt)))
    return row, impl_list, impl_opt


def _adaptor_row(vendor_cmake: str, files_dir: str, ex: Excerpt) -> Row:
    """9: the vendor's DIOPI CMakeLists.txt compiles the rendered adaptor instead of running DIOPI's generator."""
    start = _at(ex, lambda line: line == "# adaptor")
    rule = _at(ex, lambda line: line == "if(USE_ADAPTOR)", start)
    stop = _at(ex, lambda line: line == "endif()", rule) + 1
    return _row("adaptor", f"{DIOPI_ROOT}/{vendor_cmake}", Status.REPLACE, None, "diopi.patch",
                Change(vendor_cmake, start, stop - start, Edit.ADAPTOR_RULE,
                       (files_dir, *adaptor_rule_form(ex, start, stop))))


def plan_onboarding(vendor: Vendor, kernels_cmake: str) -> OnboardingPlan:
    """*kernels_cmake*: the rendered kernel list, as csrc_dipu/CMakeLists.txt includes it."""
    up = UPSTREAM.get(vendor.name)
    list_name = up.list_name if up else f"DEVICE_{vendor.name.upper()}"
    sites = edit_sites()
    impl = impl_choice(vendor.diopi_impl)
    diopi, impl_list, diopi_dir = _diopi_row(vendor.diopi_impl, impl, sites)
    rows = _dipu_cmake_rows(vendor, up, list_name, sites[DIPU_CMAKE]) + _device_type_rows(vendor, up, sites)
    rows += [_kernels_row(kernels_cmake, sites[CSRC_CMAKE]), _test_config_row(vendor.device_type, sites[TEST_BASE]),
             diopi]
    files_dir = impl_folder(vendor.diopi_impl)
    vendor_cmake = f"impl/{diopi_dir}/CMakeLists.txt"
    if vendor.converts and vendor_cmake in sites:
        rows.append(_adaptor_row(vendor_cmake, files_dir, sites[vendor_cmake]))
    return OnboardingPlan(vendor, list_name, up, impl, impl_list, diopi_dir, files_dir, kernels_cmake,
                          vendor.device_type in PYTORCH_CONFIG_TYPES, vendor.runtime is not None,
                          vendor.build is not None, tuple(replace(r, number=i) for i, r in enumerate(rows, 1)))
