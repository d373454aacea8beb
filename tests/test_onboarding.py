"""The edits DIPU needs outside the vendor folder: onboarding/dipu.patch (and
diopi.patch) applied by the real `git apply` to a stand-in checkout holding
the lines they need (tests/fixtures/dipu_checkout), the checklist and
snippets agreeing with it, and `render --vendor V --into DIR`: it writes the
files and applies the edits, changes nothing when run again, follows a
changed vendor or shard count, refuses a tree the edits do not fit (unless
--force) and leaves the checkout as it was when it cannot finish."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest

from helpers import DIPU_CHECKOUT, REPO, dipu_checkout, edit, error_lines, git_apply, run_cli, tree_state
from deeplink_gen.interfaces.dipu import edit_sites

CSRC = "dipu/torch_dipu/csrc_dipu/CMakeLists.txt"
OPS = "dipu/torch_dipu/csrc_dipu/aten/ops"
BASEDEF = "dipu/torch_dipu/csrc_dipu/runtime/device/basedef.h"
HELPER = "dipu/torch_dipu/csrc_dipu/utils/vender_helper.hpp"
DIPU_CMAKE = "dipu/CMakeLists.txt"
DIOPI_CMAKE = "dipu/third_party/DIOPI/impl/CMakeLists.txt"
TEST_BASE = "dipu/tests/pytorch_test_base.py"
EDITED = (DIPU_CMAKE, CSRC, BASEDEF, HELPER, TEST_BASE)


def _new_vendor(ws: Path, name: str = "acme") -> Path:
    result = run_cli("new-vendor", name, cwd=ws)
    assert result.exit_code == 0, result.output
    return ws


def _render(ws: Path, vendor: str, *args: str) -> Path:
    result = run_cli("render", "--vendor", vendor, *args, cwd=ws)
    assert result.exit_code == 0, result.output
    return ws / "generated" / vendor


def _into(ws: Path, vendor: str, dest: Path, *args: str):
    return run_cli("render", "--vendor", vendor, "--into", str(dest), *args, cwd=ws)


def _kernel_rule_gone(text: str) -> None:
    assert "add_custom_command" not in text and "autogen_wrapped_code" not in text
    assert 'include("${CMAKE_CURRENT_SOURCE_DIR}/aten/ops/AutoGenedKernels.cmake")' in text


def _listed(cmake: Path) -> list[str]:
    return re.findall(r'"\$\{CMAKE_CURRENT_LIST_DIR\}/([^"]+)"', cmake.read_text())


def _added(patch: Path) -> list[str]:
    return [line[1:] for line in patch.read_text().splitlines() if line.startswith("+") and not line.startswith("+++")]


class _Torch:
    """Enough of torch for the module level of DIPU's pytorch_test_base.py: its dtypes, as names."""

    def __getattr__(self, name: str) -> str:
        return f"torch.{name}"


def _test_base_loads(tree: Path, vendor_type: str, monkeypatch) -> dict:
    """Run the module level of the checkout's dipu/tests/pytorch_test_base.py for a device of
    *vendor_type*, every tests.pytorch_config_<type> a stand-in; the names it defines."""
    for module in set(re.findall(r"^\s*from (tests\.pytorch_config_\w+) import", (tree / TEST_BASE).read_text(), re.M)):
        config = types.ModuleType(module)
        config.DISABLED_TESTS, config.TEST_PRECISIONS = {f"{module}.disabled"}, {f"{module}.precision": 1e-2}
        monkeypatch.setitem(sys.modules, module, config)
    ns = {"dipu": types.SimpleNamespace(vendor_type=vendor_type), "torch": _Torch(), "DeviceTypeTestBase": object}
    exec(compile((tree / TEST_BASE).read_text(), str(tree / TEST_BASE), "exec"), ns)
    return ns


def _loaded_config(ns: dict) -> str | None:
    """The config module whose settings the test base took, or None (DIPU's defaults)."""
    if not ns["_DISABLED_TESTS"]:
        assert ns["_TEST_PRECISIONS"] == {}
        return None
    (disabled,) = ns["_DISABLED_TESTS"]
    module = disabled.removesuffix(".disabled")
    assert ns["_TEST_PRECISIONS"] == {f"{module}.precision": 1e-2}
    return module


# ---------------------------------------------------------------- the upstream lines

def test_the_checkout_fixture_holds_the_upstream_excerpts():
    """The stand-in checkout and the excerpts the patches take their context from are the
    same upstream lines: the first line of each fixture file says which lines it holds."""
    for path, ex in edit_sites().items():
        fixture = DIPU_CHECKOUT / (path if ex.repo == "dipu" else f"dipu/third_party/DIOPI/{path}")
        head, *body = fixture.read_text().splitlines(keepends=True)
        m = re.search(rf"lines (\d+)-(\d+) of {re.escape(path)} at ", head)
        assert m, (fixture, head)
        first, last = int(m.group(1)), int(m.group(2))
        assert len(body) == last - first + 1, fixture
        assert first <= ex.first_line and ex.first_line + len(ex.lines) - 1 <= last, path
        start = ex.first_line - first
        assert tuple(body[start:start + len(ex.lines)]) == ex.lines, path


# ---------------------------------------------------------------- the patch, with git apply

# The bundled vendors DIPU knows by their whole identity, with their device types; only MLU, GCU,
# CUDA and MUXI have a branch in DIPU's pytorch_test_base.py that loads their test config.
KNOWN = {"camb": "MLU", "ascend": "NPU", "cuda": "CUDA", "droplet": "DROPLET"}


@pytest.mark.parametrize("vendor", sorted(KNOWN))
def test_known_vendor_patch_is_the_kernel_rule_and_the_missing_test_config_and_git_applies_it(
        rendered: Path, vendor: str, tmp_path: Path, monkeypatch):
    patch = rendered / vendor / "onboarding" / "dipu.patch"
    covered = KNOWN[vendor] in ("MLU", "CUDA")
    assert re.findall(r"^diff --git a/(\S+)", patch.read_text(), re.M) == ([CSRC] if covered else [TEST_BASE, CSRC])
    assert (rendered / vendor / "onboarding" / "diopi.patch").exists() == (vendor in ADAPTOR_FOLDERS)
    tree = dipu_checkout(tmp_path / "dipu")
    proc = git_apply(patch, tree, "--check")
    assert proc.returncode == 0, proc.stderr
    assert git_apply(patch, tree).returncode == 0
    _kernel_rule_gone((tree / CSRC).read_text())
    assert git_apply(patch, tree, "--reverse", "--check").returncode == 0     # recognisably applied
    config = KNOWN[vendor].lower()
    assert (rendered / vendor / f"dipu/tests/pytorch_config_{config}.py").is_file()
    assert _loaded_config(_test_base_loads(tree, KNOWN[vendor], monkeypatch)) == f"tests.pytorch_config_{config}"
    row = re.search(r"^\| 7 \| `dipu/tests/pytorch_test_base.py` \|.*$",
                    (rendered / vendor / "onboarding" / "ONBOARDING.md").read_text(), re.M)
    assert row and row.group().endswith("| present upstream |" if covered else "| **to add (dipu.patch)** |"), row


# The DIOPI folder each bundled vendor with an adaptor builds (IMPL_OPT ascend builds impl/ascend_npu).
ADAPTOR_FOLDERS = {"camb": "camb", "ascend": "ascend_npu"}


@pytest.mark.parametrize("vendor", sorted(ADAPTOR_FOLDERS))
def test_diopi_patch_hands_the_adaptor_over_and_git_applies_it(rendered: Path, vendor: str, tmp_path: Path):
    """DIOPI's vendor CMakeLists.txt stops running DIOPI's generator and compiles the rendered adaptor."""
    patch = rendered / vendor / "onboarding" / "diopi.patch"
    cmake = f"impl/{ADAPTOR_FOLDERS[vendor]}/CMakeLists.txt"
    assert re.findall(r"^diff --git a/(\S+)", patch.read_text(), re.M) == [cmake]
    diopi = dipu_checkout(tmp_path / "dipu") / "dipu/third_party/DIOPI"
    subprocess.run(["git", "init", "-q"], cwd=diopi, check=True)
    assert git_apply(patch, diopi, "--check").returncode == 0
    assert git_apply(patch, diopi).returncode == 0
    text = (diopi / cmake).read_text()
    assert "python3" not in text and "add_custom_target" not in text
    assert f"list(APPEND IMPL_SRC ${{DIOPI_IMPL_DIR}}/{vendor}/adaptor/diopi_adaptor.cpp)" in text
    assert (rendered / vendor / "dipu/third_party/DIOPI/impl" / vendor / "adaptor" / "diopi_adaptor.cpp").is_file()
    checklist = (rendered / vendor / "onboarding" / "ONBOARDING.md").read_text()
    assert f"| 9 | DIOPI `{cmake}` |" in checklist and "**to replace (diopi.patch)**" in checklist


def test_into_hands_the_adaptor_over(workspace: Path, tmp_path: Path):
    tree = dipu_checkout(tmp_path / "dipu")
    result = _into(workspace, "camb", tree)
    assert result.exit_code == 0, result.output
    diopi = tree / "dipu/third_party/DIOPI"
    assert "list(APPEND IMPL_SRC ${DIOPI_IMPL_DIR}/camb/adaptor/diopi_adaptor.cpp)" in \
        (diopi / "impl/camb/CMakeLists.txt").read_text()
    assert (diopi / "impl/camb/adaptor/diopi_adaptor.cpp").is_file()
    again = _into(workspace, "camb", tree)
    assert again.exit_code == 0 and "0 applied" in again.stdout, again.output


def test_new_vendor_patch_makes_every_edit(workspace: Path, tmp_path: Path):
    out = _render(_new_vendor(workspace), "acme")
    patch = out / "onboarding" / "dipu.patch"
    assert sorted(re.findall(r"^diff --git a/(\S+)", patch.read_text(), re.M)) == sorted(EDITED)
    tree = dipu_checkout(tmp_path / "dipu")
    assert git_apply(patch, tree).returncode == 0
    assert 'list(APPEND DEVICE_ACME "ACME" "acme")\n' in (tree / DIPU_CMAKE).read_text()
    assert ("elseif(${DEVICE} IN_LIST DEVICE_ACME)\n  set(USE_ACME ON)\n  set(UsedVendor acme)\n"
            '  set(DIOPI_IMPL_OPT "acme")\nelse()\n') in (tree / DIPU_CMAKE).read_text()
    assert "  KLX,      // Kunlunxin\n  ACME,     // acme\n};\n" in (tree / BASEDEF).read_text()
    helper = (tree / HELPER).read_text()
    # vender_helper.hpp is in namespace dipu: the enumerator needs devapis::, as DIPU spells its own.
    assert '    case devapis::VendorDeviceType::ACME:\n      return "ACME";\n    default:' in helper
    assert "  DIPU_MAY_CAST_VENDOR_NAME_TO_DEVICE_TYPE(acme, ACME);\n#undef" in helper
    _kernel_rule_gone((tree / CSRC).read_text())
    assert ('        torch.bfloat16,\n    }\nelif dipu.vendor_type == "ACME":\n'
            "    from tests.pytorch_config_acme import DISABLED_TESTS, TEST_PRECISIONS\n\n"
            "    _DISABLED_TESTS = DISABLED_TESTS\n    _TEST_PRECISIONS = TEST_PRECISIONS\n\n\nclass DIPUTestBase"
            ) in (tree / TEST_BASE).read_text()
    # DIOPI does not know IMPL_OPT acme: an optional patch from DIOPI's root.
    diopi = out / "onboarding" / "diopi.patch"
    assert git_apply(diopi, tree / "dipu" / "third_party" / "DIOPI", "--check").returncode == 0
    assert set(_added(diopi)) == {'list(APPEND IMPL_ACME "ACME" "acme")', "elseif (${IMPL_OPT} IN_LIST IMPL_ACME)",
                                  "    add_subdirectory(acme)"}


def test_a_new_vendors_pytorch_tests_load_its_config(workspace: Path, tmp_path: Path, monkeypatch):
    """DIPU's pytorch_test_base.py picks a config by device type for MLU, GCU, CUDA and MUXI only:
    the patch adds ACME's branch, which git apply and render --into make alike, and the others
    keep theirs."""
    out = _render(_new_vendor(workspace), "acme")
    reference = dipu_checkout(tmp_path / "reference")
    pristine = _test_base_loads(reference, "ACME", monkeypatch)
    assert _loaded_config(pristine) is None                                  # upstream: never loaded
    assert git_apply(out / "onboarding" / "dipu.patch", reference).returncode == 0
    tree = dipu_checkout(tmp_path / "dipu")
    result = _into(workspace, "acme", tree)
    assert result.exit_code == 0, result.output
    assert (tree / TEST_BASE).read_bytes() == (reference / TEST_BASE).read_bytes()
    assert (tree / "dipu/tests/pytorch_config_acme.py").is_file()             # the module the branch imports
    for vendor_type, module in (("ACME", "tests.pytorch_config_acme"), ("MLU", "tests.pytorch_config_mlu"),
                                ("GCU", "tests.pytorch_config_gcu"), ("CUDA", "tests.pytorch_config_cuda"),
                                ("MUXI", "tests.pytorch_config_muxi"), ("NPU", None)):
        ns = _test_base_loads(tree, vendor_type, monkeypatch)
        assert _loaded_config(ns) == module, vendor_type
    # ACME keeps DIPU's default unsupported dtypes; MLU still gets its own.
    assert _test_base_loads(tree, "ACME", monkeypatch)["device_unsupported_dtypes"] == \
        {"torch.complex32", "torch.complex64", "torch.complex128"}
    assert "torch.float64" in _test_base_loads(tree, "MLU", monkeypatch)["device_unsupported_dtypes"]
    checklist = (out / "onboarding" / "ONBOARDING.md").read_text()
    assert ('| 7 | `dipu/tests/pytorch_test_base.py` | `elif dipu.vendor_type == "ACME":` in the chain that picks '
            "the PyTorch test config, importing `DISABLED_TESTS, TEST_PRECISIONS` from `tests.pytorch_config_acme` "
            "(rendered) | **to add (dipu.patch)** |") in checklist
    assert "edit 7 adds the branch that imports it for `ACME`" in checklist


def test_patch_does_not_depend_on_shards_and_its_kernel_hunk_not_on_the_vendor(workspace: Path):
    _new_vendor(workspace)
    one = (_render(workspace, "acme") / "onboarding" / "dipu.patch").read_text()
    three = (_render(workspace, "acme", "--shards", "3") / "onboarding" / "dipu.patch").read_text()
    assert one == three
    camb = (_render(workspace, "camb", "--shards", "2") / "onboarding" / "dipu.patch").read_text()
    hunk = camb[camb.index(f"diff --git a/{CSRC}"):]
    assert hunk in one


def test_identity_is_compared_whole(workspace: Path, tmp_path: Path):
    """camb with DIPU's name but its own aliases and device type: the patch changes
    DIPU's lines for camb instead of claiming them present."""
    edit(workspace / "vendors/camb.yaml", "  device_type: MLU", "  device_type: CAMBRICON")
    edit(workspace / "vendors/camb.yaml", "  cmake_aliases: [CAMB, camb]", "  cmake_aliases: [CAMB, camb, cambricon]")
    out = _render(workspace, "camb")
    tree = dipu_checkout(tmp_path / "dipu")
    assert git_apply(out / "onboarding" / "dipu.patch", tree).returncode == 0
    cmake = (tree / DIPU_CMAKE).read_text()
    assert 'list(APPEND DEVICE_CAMB "CAMB" "camb" "cambricon")\n' in cmake
    assert 'list(APPEND DEVICE_CAMB "CAMB" "camb")\n' not in cmake
    assert cmake.count("IN_LIST DEVICE_CAMB)") == 1                   # the branch is DIPU's, unchanged
    helper = (tree / HELPER).read_text()
    assert "DIPU_MAY_CAST_VENDOR_NAME_TO_DEVICE_TYPE(camb, CAMBRICON);" in helper
    assert "DIPU_MAY_CAST_VENDOR_NAME_TO_DEVICE_TYPE(camb, MLU);" not in helper
    assert "case devapis::VendorDeviceType::CAMBRICON:" in helper
    assert "  CAMBRICON, // camb\n" in (tree / BASEDEF).read_text()
    checklist = (out / "onboarding" / "ONBOARDING.md").read_text()
    assert '**to change: DIPU has "CAMB" "camb" (dipu.patch)**' in checklist
    assert "**to change: DIPU has MLU (dipu.patch)**" in checklist


def test_scaffolding_a_vendor_dipu_knows_keeps_its_identity(workspace: Path):
    _new_vendor(workspace, "kunlunxin")
    text = (workspace / "vendors/kunlunxin.yaml").read_text()
    assert "device_type: KLX" in text and "cmake_aliases: [kunlunxin, klx]" in text
    assert "diopi_impl: kunlunxin" in text
    patch = (_render(workspace, "kunlunxin") / "onboarding" / "dipu.patch").read_text()
    # DIPU's identity edits are all there; its test base loads no config for KLX.
    assert re.findall(r"^diff --git a/(\S+)", patch, re.M) == [TEST_BASE, CSRC]


def test_an_alias_of_another_dipu_vendor_is_an_error(workspace: Path):
    _new_vendor(workspace)
    edit(workspace / "vendors/acme.yaml", "cmake_aliases: [ACME, acme]", "cmake_aliases: [ACME, klx]")
    lines = error_lines(run_cli("validate", cwd=workspace))
    assert any("vendor.cmake_aliases: 'klx' is DIPU's -DDEVICE alias for kunlunxin" in line for line in lines), lines


def test_checklist_snippets_and_next_steps_agree_with_the_patch(workspace: Path):
    result = run_cli("new-vendor", "acme", cwd=workspace)
    assert result.exit_code == 0
    out = _render(workspace, "acme")
    snippets = "".join(p.read_text() for p in sorted((out / "onboarding").glob("*.snippet")))
    for line in _added(out / "onboarding" / "dipu.patch") + _added(out / "onboarding" / "diopi.patch"):
        assert line in snippets, line
    checklist = (out / "onboarding" / "ONBOARDING.md").read_text()
    for needle in ('list(APPEND DEVICE_ACME "ACME" "acme")', "DIPU_MAY_CAST_VENDOR_NAME_TO_DEVICE_TYPE(acme, ACME);",
                   'case devapis::VendorDeviceType::ACME: return "ACME";', "AutoGenedKernels.cmake",
                   "render --vendor acme --into", "DIPU_WITH_DIOPI_LIBRARY=DISABLE"):
        assert needle in checklist, needle
        assert needle in result.stdout, needle                     # new-vendor prints the same checklist
    assert "aborts the process" in checklist
    # Only DIPU's known vendors say "present upstream", and ascend's DIOPI builds impl/ascend_npu.
    assert "present upstream" not in checklist
    assert "Overlay" not in checklist


def test_ascend_checklist_names_the_folder_diopi_builds(rendered: Path):
    text = (rendered / "ascend" / "onboarding" / "ONBOARDING.md").read_text()
    assert "`IMPL_ASCEND`, which builds `impl/ascend_npu`" in text
    assert "add_subdirectory(ascend)" not in (rendered / "ascend" / "onboarding" /
                                             "diopi_impl_CMakeLists.txt.snippet").read_text()


@pytest.mark.skipif(shutil.which("cmake") is None, reason="needs cmake")
def test_kernel_list_with_cmake(workspace: Path, tmp_path: Path):
    out = _render(workspace, "camb", "--shards", "2")
    listing = out / OPS / "AutoGenedKernels.cmake"
    script = tmp_path / "probe.cmake"
    script.write_text(f'set(UsedVendor "${{VENDOR}}")\ninclude("{listing}")\n'
                      'foreach(f IN LISTS GENERATED_KERNELS)\n'
                      '  if(NOT EXISTS "${f}")\n    message(FATAL_ERROR "missing ${f}")\n  endif()\n'
                      '  message(STATUS "kernel ${f}")\nendforeach()\n')
    ok = subprocess.run(["cmake", "-DVENDOR=camb", "-P", str(script)], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert re.findall(r"kernel .*/(AutoGenedKernels_\d\.cpp)", ok.stdout) == ["AutoGenedKernels_0.cpp",
                                                                               "AutoGenedKernels_1.cpp"]
    wrong = subprocess.run(["cmake", "-DVENDOR=ascend", "-P", str(script)], capture_output=True, text=True)
    assert wrong.returncode != 0 and "lists the kernels rendered for camb" in wrong.stderr


# ---------------------------------------------------------------- render --into

def test_into_writes_files_and_applies_the_edits(workspace: Path, tmp_path: Path):
    _new_vendor(workspace)
    tree = dipu_checkout(tmp_path / "dipu")
    result = _into(workspace, "acme", tree, "--shards", "2")
    assert result.exit_code == 0, result.output
    assert "edits: 7 applied, 0 already applied" in result.stdout
    _kernel_rule_gone((tree / CSRC).read_text())
    assert _listed(tree / OPS / "AutoGenedKernels.cmake") == ["AutoGenedKernels_0.cpp", "AutoGenedKernels_1.cpp"]
    assert (tree / OPS / "AutoGenedKernels_1.cpp").is_file()
    assert (tree / "dipu/torch_dipu/csrc_dipu/vendor/acme/deviceimpl.cpp").is_file()
    assert (tree / "dipu/third_party/DIOPI/impl/acme/device_configs.py").is_file()
    assert not (tree / "onboarding").exists() and not (tree / "manifest.json").exists()
    assert (tree / DIPU_CMAKE).stat().st_mode & 0o111                # DIPU's 100755 file stays executable
    # Exactly what git apply makes of the rendered patch.
    patch = _render(workspace, "acme", "--shards", "2") / "onboarding" / "dipu.patch"
    reference = dipu_checkout(tmp_path / "reference")
    assert git_apply(patch, reference).returncode == 0
    for rel in EDITED:
        assert (tree / rel).read_bytes() == (reference / rel).read_bytes(), rel
    # The DIOPI patch waits for DIOPI's impl/acme/CMakeLists.txt.
    assert "IMPL_ACME" not in (tree / DIOPI_CMAKE).read_text()
    assert "diopi.patch not applied" in result.stderr


def test_into_twice_changes_nothing(workspace: Path, tmp_path: Path):
    _new_vendor(workspace)
    tree = dipu_checkout(tmp_path / "dipu")
    # What a killed run would have left beside a file it writes: swept.
    (tree / "dipu" / ".CMakeLists.txt.12345.deeplink-gen-old").write_text("stale\n")
    mine = tree / "dipu" / ".CMakeLists.txt.mine.deeplink-gen-old"      # not named as a run names them
    mine.write_text("my own\n")
    assert _into(workspace, "acme", tree).exit_code == 0
    assert not (tree / "dipu" / ".CMakeLists.txt.12345.deeplink-gen-old").exists() and mine.exists()
    before = tree_state(tree)
    result = _into(workspace, "acme", tree)
    assert result.exit_code == 0, result.output
    assert tree_state(tree) == before
    assert "0 written" in result.stdout and "0 removed" in result.stdout
    assert "edits: 0 applied, 7 already applied" in result.stdout
    assert (tree / TEST_BASE).read_text().count('elif dipu.vendor_type == "ACME":') == 1


def test_into_follows_a_changed_vendor_and_shard_count(workspace: Path, tmp_path: Path):
    tree = dipu_checkout(tmp_path / "dipu")
    assert _into(workspace, "camb", tree, "--shards", "2").exit_code == 0
    before = tree_state(tree)
    edit(workspace / "vendors/camb.yaml", "  autocompare: false", "  autocompare: true")
    result = _into(workspace, "camb", tree, "--shards", "3")
    assert result.exit_code == 0, result.output
    after = tree_state(tree)
    assert "edits: 0 applied, 2 already applied" in result.stdout     # patched for 2 shards, fits 3
    assert _listed(tree / OPS / "AutoGenedKernels.cmake") == [f"AutoGenedKernels_{i}.cpp" for i in range(3)]
    assert "_autocompare" in (tree / OPS / "AutoGenedKernels_0.cpp").read_text()
    # Files the change does not touch keep their bytes and mtime.
    vendor_files = [rel for rel in before if "/vendor/camb/" in rel]
    assert vendor_files and all(after[rel] == before[rel] for rel in vendor_files)
    assert after[CSRC] == before[CSRC]
    shards = sorted(p.name for p in (tree / OPS).glob("AutoGenedKernels_*"))
    assert shards[:4] == ["AutoGenedKernels_0.cpp", "AutoGenedKernels_0.pasted.inc", "AutoGenedKernels_1.cpp",
                          "AutoGenedKernels_1.pasted.inc"]
    result = _into(workspace, "camb", tree, "--shards", "1")
    assert result.exit_code == 0
    assert sorted(p.name for p in (tree / OPS).glob("AutoGenedKernels*")) == [
        "AutoGenedKernels.cmake", "AutoGenedKernels.cpp", "AutoGenedKernels.pasted.inc"]
    assert result.stdout.count("removed: ") == len(shards)


def test_into_refuses_a_tree_it_does_not_recognise(workspace: Path, tmp_path: Path):
    empty = tmp_path / "empty"
    empty.mkdir()
    result = _into(workspace, "camb", empty)
    assert error_lines(result) == [] and result.exit_code == 1
    assert "is not a deeplink.framework checkout: it has no dipu/CMakeLists.txt" in result.stderr
    assert "--force" not in result.stderr          # no advice to write into an unrelated folder
    assert not any(empty.iterdir())
    # DIPU's dipu/ folder instead of the repository root.
    tree = dipu_checkout(tmp_path / "dipu")
    result = _into(workspace, "camb", tree / "dipu")
    assert result.exit_code == 1 and "give the repository root, its parent" in result.stderr
    # The file that is missing is the one named: csrc_dipu's CMakeLists.txt, or one that is not a file.
    moved = tmp_path / "csrc.txt"
    (tree / CSRC).rename(moved)
    os.mkfifo(tree / CSRC)
    result = _into(workspace, "camb", tree)
    assert result.exit_code == 1 and f"it has no {CSRC} (a regular file)" in result.stderr, result.stderr
    (tree / CSRC).unlink()
    moved.rename(tree / CSRC)
    # A kernel rule that is not DIPU 9dd38082's.
    edit(tree / CSRC, "  COMMENT ", "  COMMENT  ")
    before = tree_state(tree)
    result = _into(workspace, "camb", tree)
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "is not a DIPU checkout that the edits for camb fit" in result.stderr
    assert f"error: {CSRC}: kernels: include aten/ops/AutoGenedKernels.cmake instead of DIPU's generator rule" \
        in result.stderr
    assert tree_state(tree) == before


def test_into_refuses_a_tree_onboarded_for_another_new_vendor(workspace: Path, tmp_path: Path):
    _new_vendor(workspace, "acme")
    _new_vendor(workspace, "zeta")
    tree = dipu_checkout(tmp_path / "dipu")
    assert _into(workspace, "acme", tree).exit_code == 0
    before = tree_state(tree)
    result = _into(workspace, "zeta", tree)
    assert result.exit_code == 1
    assert f"error: {BASEDEF}: VendorDeviceType::ZETA: neither" in result.stderr
    assert tree_state(tree) == before
    # A vendor DIPU knows needs only the kernel rule, which is already there, and DIOPI's adaptor rule.
    result = _into(workspace, "camb", tree)
    assert result.exit_code == 0 and "edits: 1 applied, 1 already applied" in result.stdout


def test_force_writes_and_lists_the_edits_that_do_not_fit(workspace: Path, tmp_path: Path):
    _new_vendor(workspace)
    tree = dipu_checkout(tmp_path / "dipu")
    edit(tree / CSRC, "  COMMENT ", "  COMMENT  ")
    result = _into(workspace, "acme", tree, "--force")
    assert result.exit_code == 0, result.output
    assert "edits: 6 applied, 0 already applied" in result.stdout
    assert f"warning: {CSRC}: kernels: include aten/ops/AutoGenedKernels.cmake instead of DIPU's generator rule: " \
           "not applied" in result.stderr
    assert "add_custom_command" in (tree / CSRC).read_text()
    assert "ACME," in (tree / BASEDEF).read_text()
    assert (tree / OPS / "AutoGenedKernels_0.cpp").is_file()
    # --force into a folder that is no checkout at all: the files, and every edit listed.
    empty = tmp_path / "empty"
    empty.mkdir()
    result = _into(workspace, "acme", empty, "--force")
    assert result.exit_code == 0 and result.stderr.count("not applied, the file does not have") == 7
    assert (empty / OPS / "AutoGenedKernels_0.cpp").is_file()


@pytest.mark.parametrize("kind", ["large", "fifo"])
def test_a_file_to_edit_that_cannot_be_read_is_named_as_such(workspace: Path, tmp_path: Path, kind: str):
    """A file the edits go to that is there but too large to read, or not a regular file,
    is reported as what it is, not as missing; --force leaves it and says so."""
    _new_vendor(workspace)
    tree = dipu_checkout(tmp_path / "dipu")
    target = tree / BASEDEF
    if kind == "large":
        with open(target, "ab") as f:
            f.truncate(17 << 20)
    else:
        target.unlink()
        os.mkfifo(target)
    why = "file is larger than 16 MiB" if kind == "large" else "a FIFO is not a regular file"
    before = tree_state(tree)
    result = _into(workspace, "acme", tree)
    assert result.exit_code == 1
    assert f"{tree / BASEDEF}:1:1: error: --into: {why}" in result.stderr, result.stderr
    assert "no such file" not in result.stderr
    assert tree_state(tree) == before
    result = _into(workspace, "acme", tree, "--force")
    assert result.exit_code == 0, result.output
    assert f"note: {BASEDEF} was not read ({why}" in result.stderr


def test_diopi_parts_need_a_populated_submodule(workspace: Path, tmp_path: Path):
    _new_vendor(workspace)
    bare = dipu_checkout(tmp_path / "bare", diopi=False)
    result = _into(workspace, "acme", bare)
    assert result.exit_code == 0, result.output
    assert not any((bare / "dipu/third_party/DIOPI").iterdir())
    assert "dipu/third_party/DIOPI is not populated" in result.stderr
    # With DIOPI's implementation folder in place, diopi.patch is applied too.
    tree = dipu_checkout(tmp_path / "dipu")
    impl = tree / "dipu/third_party/DIOPI/impl/acme/CMakeLists.txt"
    impl.parent.mkdir(parents=True)
    impl.write_text("add_library(diopi_impl SHARED)\n")
    result = _into(workspace, "acme", tree)
    assert result.exit_code == 0, result.output
    assert "edits: 9 applied" in result.stdout
    text = (tree / DIOPI_CMAKE).read_text()
    assert "elseif (${IMPL_OPT} IN_LIST IMPL_ACME)\n    add_subdirectory(acme)\nelse()" in text
    assert impl.read_text() == "add_library(diopi_impl SHARED)\n"


def test_into_works_inside_another_git_repository(workspace: Path, tmp_path: Path):
    """Where `git apply` would skip every file and succeed."""
    outer = tmp_path / "outer"
    outer.mkdir()
    subprocess.run(["git", "init", "-q", str(outer)], check=True)
    tree = dipu_checkout(outer / "sub" / "dipu-checkout")
    result = _into(workspace, "droplet", tree)
    assert result.exit_code == 0, result.output
    _kernel_rule_gone((tree / CSRC).read_text())


def test_a_failed_write_leaves_the_checkout_as_it_was(workspace: Path, tmp_path: Path):
    _new_vendor(workspace)
    tree = dipu_checkout(tmp_path / "dipu")
    (tree / OPS / "AutoGenedKernels.cmake").mkdir(parents=True)       # in the way of a file written late
    before = tree_state(tree)
    result = _into(workspace, "acme", tree)
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "cannot write" in result.stderr and "the checkout was left as it was" in result.stderr
    assert tree_state(tree) == before
    leftovers = [p for p in tree.rglob("*") if "deeplink-gen" in p.name]
    assert leftovers == []
    assert sorted(p.name for p in (tree / OPS).iterdir()) == ["AutoGenedKernels.cmake"]


@pytest.mark.parametrize("args", [
    ["--all", "--into", "{tree}"],
    ["--vendor", "camb", "--vendor", "ascend", "--into", "{tree}"],
    ["--vendor", "camb", "--into", "{tree}", "--check"],
    ["--vendor", "camb", "--into", "{tree}", "--out", "{tree}"],
    ["--vendor", "camb", "--force"],
    ["--vendor", "camb", "--into", "{tree}/missing"],
])
def test_into_usage_errors_exit_2(workspace: Path, tmp_path: Path, args: list[str]):
    tree = dipu_checkout(tmp_path / "dipu")
    before = tree_state(tree)
    result = run_cli("render", *[a.format(tree=tree) for a in args], cwd=workspace)
    assert result.exit_code == 2, result.output
    assert tree_state(tree) == before


def test_each_render_ends_with_the_next_step(workspace: Path, tmp_path: Path):
    """render says how to put the vendor into DIPU; render --into says how to build DIPU then, without a
    DIOPI library while DIOPI has no implementation folder for the vendor."""
    _new_vendor(workspace)
    for _ in range(2):                    # written, then unchanged (the stamps' short cut)
        result = run_cli("render", "--vendor", "acme", cwd=workspace)
        assert result.stdout.splitlines()[-1].startswith(f"next: deeplink-gen -C {workspace} render --vendor acme --into CHECKOUT")
    tree = dipu_checkout(tmp_path / "dipu")
    result = _into(workspace, "acme", tree)
    last = result.stdout.splitlines()[-1]
    assert last.startswith(f"next: build DIPU: cd {tree / 'dipu'} && cmake -S . -B build"), last
    assert "-DDEVICE=ACME -DWITH_DIOPI_LIBRARY=DISABLE && cmake --build build" in last
    result = _into(workspace, "droplet", dipu_checkout(tmp_path / "dipu2"))
    last = result.stdout.splitlines()[-1]
    assert "-DDEVICE=DROPLET && cmake --build build" in last and "WITH_DIOPI_LIBRARY" not in last
    # A vendor whose DIOPI library is rendered builds that library first, and DIPU links it.
    hostsim_tree = dipu_checkout(tmp_path / "dipu3")
    result = _into(workspace, "hostsim", hostsim_tree)
    last = result.stdout.splitlines()[-1]
    library = hostsim_tree / "dipu/third_party/DIOPI/impl/hostsim"
    assert last.startswith(f"next: build DIPU on hostsim's DIOPI library: cmake -S {library} -B build-diopi"), last
    assert "-DDEVICE=HOSTSIM -DWITH_DIOPI_LIBRARY=$PWD/build-diopi" in last
    assert "scripts/try_without_a_chip.py" in last and (REPO / "scripts" / "try_without_a_chip.py").is_file()


def test_into_removes_only_kernel_files_it_or_dipus_generator_wrote(workspace: Path, tmp_path: Path):
    """A file named like a kernel file that neither deeplink-gen nor DIPU's generator wrote is
    someone's: --into leaves it and says so; DIPU's own generated file and shards of an earlier
    render go."""
    tree = dipu_checkout(tmp_path / "dipu")
    ops = tree / OPS
    ops.mkdir(parents=True, exist_ok=True)
    (ops / "AutoGenedKernels.cpp").write_text("// autogened file\n#include <array>\n")
    (ops / "AutoGenedKernels_7.cpp").write_text("// mine\n")
    (ops / "AutoGenedKernels_9.pasted.inc").write_text("// mine too\n")
    # Mentioning deeplink-gen's header does not make a file deeplink-gen's: only its first line can.
    (ops / "AutoGenedKernelsHelpers.h").write_text("// Unlike AutoGenedKernels_0.cpp (@generated by deeplink-gen), "
                                                    "this file is hand-written.\n")
    (ops / "AutoGenedKernels_15.cpp").write_text("@generated by deeplink-gen from my notes; DO NOT EDIT.\n")
    result = _into(workspace, "camb", tree, "--shards", "2")
    assert result.exit_code == 0, result.output
    assert (ops / "AutoGenedKernels_7.cpp").read_text() == "// mine\n"
    assert (ops / "AutoGenedKernels_9.pasted.inc").read_text() == "// mine too\n"
    assert not (ops / "AutoGenedKernels.cpp").exists() and f"removed: {OPS}/AutoGenedKernels.cpp" in result.stdout
    assert (f"neither deeplink-gen nor DIPU's kernel generator wrote them (DIPU's build compiles only the files "
            f"AutoGenedKernels.cmake lists): {OPS}/AutoGenedKernelsHelpers.h, {OPS}/AutoGenedKernels_15.cpp, "
            f"{OPS}/AutoGenedKernels_7.cpp, "
            f"{OPS}/AutoGenedKernels_9.pasted.inc" in result.output.replace("\n", " ").replace("  ", " ")), result.output
    # A shard of this render is removed by the next render with fewer; a copy of it someone kept is not.
    backup = ops / "AutoGenedKernels_1.cpp.orig"
    backup.write_bytes((ops / "AutoGenedKernels_1.cpp").read_bytes())
    assert _into(workspace, "camb", tree, "--shards", "1").exit_code == 0
    assert not (ops / "AutoGenedKernels_1.cpp").exists() and (ops / "AutoGenedKernels_7.cpp").exists()
    assert backup.exists() and (ops / "AutoGenedKernelsHelpers.h").exists()
