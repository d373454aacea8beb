"""A vendor's own C++ beside what is rendered: runtime.vendorapi (headers and code pasted into
vendorapi.h, which every runtime file includes) and build.hand_written (files of
vendors/<name>/ copied byte for byte into the vendor folder, inputs of the render like the
vendor file). Through the CLI on a scratch copy of the bundled workspace, with hostsim (a
vendor without an SDK)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import REPO, copy_workspace, dipu_checkout, edit, error_lines, line_of, run_cli, syntax_check, vendor_dir

VENDOR = "hostsim"
HEADERS = "  headers: [cerrno, cstdlib, cstring]\n"
BUILD = '  sources: ["*.cpp"]\n'
VENDORAPI = """  vendorapi:
    includes: [cstdint]
    code: |
      enum class NativeMemoryFormat_t : int32_t { Undefined = -1, NCHW = 0, NHWC = 1 };
      #define HOSTSIM_DRV_CHECK(Expr) HOSTSIM_CALL(Expr)
      namespace hostapi = ::dipu;
"""
# A hand-written source that uses what runtime.vendorapi.code declares, through vendorapi.h.
SHIM = b"""#include <csrc_dipu/vendor/vendorapi.h>

namespace dipu {
int hostsimFormatCode(NativeMemoryFormat_t format);
int hostsimFormatCode(NativeMemoryFormat_t format) {
  hostapi::deviceStream_t unused = nullptr;
  static_cast<void>(unused);
  return static_cast<int>(format);
}
}  // namespace dipu
"""
# Bytes a text-mode copy would change: CRLF, no final newline, non-ASCII UTF-8.
PATCH = "// r\u00e9glage\r\nint hostsimPatch() { return 1; }\r\n// no final newline".encode()
HEADER = b"#pragma once\n#define HOSTSIM_HELPER 1\n"


def _workspace(tmp_path: Path, listed: str, *, vendorapi: bool = False, sources: str = BUILD) -> Path:
    """hostsim with build.hand_written: *listed* (YAML flow text) and the files shim.cpp,
    patch/y.cpp, include/helper.h (plus notes.txt, which no list names) in vendors/hostsim/."""
    ws = copy_workspace(tmp_path / "ws", own_catalog=False)
    vendor_file = ws / "vendors" / f"{VENDOR}.yaml"
    edit(vendor_file, BUILD, f"{sources}  hand_written: {listed}\n")
    if vendorapi:
        edit(vendor_file, HEADERS, HEADERS + VENDORAPI)
    folder = ws / "vendors" / VENDOR
    for rel, data in (("shim.cpp", SHIM), ("patch/y.cpp", PATCH), ("include/helper.h", HEADER),
                      ("notes.txt", b"not copied\n")):
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(data)
    return ws


def _render(ws: Path, *args: str) -> Path:
    result = run_cli("render", "--vendor", VENDOR, *args, cwd=ws)
    assert result.exit_code == 0, result.output
    return vendor_dir(ws / "generated", VENDOR)


LISTED = "[shim.cpp, patch/y.cpp, include/helper.h]"


def test_vendorapi_code_is_pasted_at_file_scope(tmp_path: Path):
    ws = _workspace(tmp_path, "[shim.cpp]", vendorapi=True)
    text = (_render(ws) / "vendorapi.h").read_text()
    assert "#include <cstring>\n#include <cstdint>\n" in text
    line = line_of(ws / "vendors" / f"{VENDOR}.yaml", "enum class NativeMemoryFormat_t")
    pasted = text.index(f'#line {line} "vendors/{VENDOR}.yaml"\n'
                        "enum class NativeMemoryFormat_t : int32_t { Undefined = -1, NCHW = 0, NHWC = 1 };\n"
                        "#define HOSTSIM_DRV_CHECK(Expr) HOSTSIM_CALL(Expr)\n"
                        "namespace hostapi = ::dipu;\n#line ")
    # after every include, before the handle types and the checkers, which may name its types
    assert text.rindex("#include ") < pasted < text.index("namespace dipu {\n")
    assert pasted < text.index("#define ")


def test_vendorapi_without_code_adds_only_includes(tmp_path: Path):
    bundled = copy_workspace(tmp_path / "bundled", own_catalog=False)
    before = (_render(bundled) / "vendorapi.h").read_text()
    ws = _workspace(tmp_path, "[shim.cpp]", vendorapi=True)
    edit(ws / "vendors" / f"{VENDOR}.yaml", VENDORAPI, "  vendorapi:\n    includes: [cstdint]\n")
    after = (_render(ws) / "vendorapi.h").read_text()
    assert after == before.replace("#include <cstring>\n", "#include <cstring>\n#include <cstdint>\n")


def test_vendorapi_takes_only_its_keys(tmp_path: Path):
    ws = _workspace(tmp_path, "[shim.cpp]", vendorapi=True)
    vendor_file = edit(ws / "vendors" / f"{VENDOR}.yaml", "    code: |\n", "    prelude: |\n")
    errors = error_lines(run_cli("validate", cwd=ws))
    assert any(f"vendors/{VENDOR}.yaml:{line_of(vendor_file, 'prelude:')}:" in e and "runtime.vendorapi" in e
               and "prelude" in e for e in errors), errors


@pytest.mark.slow
def test_hand_written_source_compiles_with_the_vendorapi_code(tmp_path: Path):
    """shim.cpp uses the enum and the namespace alias of runtime.vendorapi.code through the
    rendered vendorapi.h, as it is included in DIPU's build."""
    ws = _workspace(tmp_path, "[shim.cpp]", vendorapi=True)
    folder = _render(ws)
    overlay = tmp_path / "overlay"
    (overlay / "csrc_dipu" / "vendor").mkdir(parents=True)
    shutil.copy(folder / "vendorapi.h", overlay / "csrc_dipu" / "vendor" / "vendorapi.h")
    result = syntax_check(folder / "shim.cpp", overlay=overlay, extra=["-Werror", "-Werror=missing-declarations"])
    assert result.returncode == 0, result.stderr
    # A mistake in the pasted code is reported at its line of the vendor file.
    edit(ws / "vendors" / f"{VENDOR}.yaml", "namespace hostapi = ::dipu;", "namespace hostapi = ::nowhere;")
    shutil.copy(_render(ws) / "vendorapi.h", overlay / "csrc_dipu" / "vendor" / "vendorapi.h")
    result = syntax_check(folder / "shim.cpp", overlay=overlay)
    line = line_of(ws / "vendors" / f"{VENDOR}.yaml", "namespace hostapi")
    assert result.returncode != 0 and f"vendors/{VENDOR}.yaml:{line}:" in result.stderr, result.stderr


def test_hand_written_files_are_copied_byte_for_byte(tmp_path: Path):
    ws = _workspace(tmp_path, LISTED)
    folder = _render(ws)
    assert (folder / "shim.cpp").read_bytes() == SHIM
    assert (folder / "patch" / "y.cpp").read_bytes() == PATCH
    assert (folder / "include" / "helper.h").read_bytes() == HEADER
    assert not (folder / "notes.txt").exists(), "a file no list names is not copied"
    manifest = json.loads((ws / "generated" / VENDOR / "manifest.json").read_text())
    paths = {f["path"] for f in manifest["files"]}
    prefix = f"dipu/torch_dipu/csrc_dipu/vendor/{VENDOR}/"
    assert {prefix + rel for rel in ("shim.cpp", "patch/y.cpp", "include/helper.h")} <= paths
    assert prefix + "notes.txt" not in paths
    # render --into puts them where DIPU's vendor folder has its files.
    tree = dipu_checkout(tmp_path / "checkout")
    assert run_cli("render", "--vendor", VENDOR, "--into", str(tree), cwd=ws).exit_code == 0
    assert (tree / prefix / "patch" / "y.cpp").read_bytes() == PATCH


def test_a_link_that_stays_in_the_folder_is_read_through(tmp_path: Path):
    ws = _workspace(tmp_path, "[alias.h]")
    os.symlink("include/helper.h", ws / "vendors" / VENDOR / "alias.h")
    assert (_render(ws) / "alias.h").read_bytes() == HEADER


def test_an_edited_hand_written_file_is_stale_and_rerendered(tmp_path: Path):
    ws = _workspace(tmp_path, LISTED)
    folder = _render(ws)
    assert run_cli("render", "--vendor", VENDOR, "--check", cwd=ws).exit_code == 0
    edited = PATCH + b"\n// edited\n"
    (ws / "vendors" / VENDOR / "patch" / "y.cpp").write_bytes(edited)
    stale = run_cli("render", "--vendor", VENDOR, "--check", cwd=ws)
    assert stale.exit_code == 1 and "patch/y.cpp" in stale.stderr, stale.output
    assert (folder / "patch" / "y.cpp").read_bytes() == PATCH, "--check writes nothing"
    _render(ws)
    assert (folder / "patch" / "y.cpp").read_bytes() == edited
    assert run_cli("render", "--vendor", VENDOR, "--check", cwd=ws).exit_code == 0


def _outside(ws: Path) -> None:
    os.symlink("../hostsim.yaml", ws / "vendors" / VENDOR / "out.cpp")


def _blob(ws: Path) -> None:
    (ws / "vendors" / VENDOR / "blob.cpp").write_bytes(b"int x;\n// \xff\n")


def _mine(rel: str):
    """A hand-written file at *rel*, a name render writes itself (or a folder of one)."""
    def setup(ws: Path) -> None:
        path = ws / "vendors" / VENDOR / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("// mine\n")
    return setup


def _both(*rels: str):
    """Hand-written files at each of *rels*."""
    def setup(ws: Path) -> None:
        for rel in rels:
            _mine(rel)(ws)
    return setup


RELPATH = "expected a relative path inside vendors/<name>/"
# (list, what to set up, the index of the item reported, what the message says)
MISTAKES = {
    "absolute": ("[/etc/hostname]", None, 0, RELPATH),
    "up": ("[shim.cpp, ../hostsim.yaml]", None, 1, RELPATH),
    "backslash": ('["patch\\\\y.cpp"]', None, 0, RELPATH),
    "empty part": ("[patch//y.cpp]", None, 0, RELPATH),
    "dot part": ("[./shim.cpp]", None, 0, RELPATH),
    "duplicate": ("[shim.cpp, patch/y.cpp, shim.cpp]", None, 2,
                  "'shim.cpp' is named twice (first as build.hand_written[0])"),
    "missing": ("[shim.cpp, nothere.cpp]", None, 1, "no file vendors/hostsim/nothere.cpp"),
    "folder": ("[patch]", None, 0, "vendors/hostsim/patch: a directory is not a regular file"),
    "link outside": ("[out.cpp]", _outside, 0, "vendors/hostsim/out.cpp is a link that leads outside vendors/hostsim/"),
    "rendered header": ("[vendorapi.h]", _mine("vendorapi.h"), 0,
                        "'vendorapi.h' is also a rendered file of the vendor folder"),
    "rendered cmake": ("[CMakeLists.txt]", _mine("CMakeLists.txt"), 0, "'CMakeLists.txt' is also a rendered file"),
    "rendered generator": ("[HostsimGeneratorImpl.cpp]", _mine("HostsimGeneratorImpl.cpp"), 0,
                           "is also a rendered file"),
    "rendered conformance": ("[conformance/CMakeLists.txt]", _mine("conformance/CMakeLists.txt"), 0,
                             "is also a rendered file"),
    "rendered folder": ("[conformance]", _mine("conformance"), 0,
                        "'conformance' and the rendered file 'conformance/CMakeLists.txt' cannot both be"),
    "not utf-8": ("[blob.cpp]", _blob, 0, "vendors/hostsim/blob.cpp:2:4: not UTF-8 text (byte 0xff)"),
    # Names CMake splits or expands, or some file system refuses or takes for another file.
    "semicolon": ('["a;b.cpp"]', _mine("a;b.cpp"), 0, "the file name holds ;, which CMake"),
    "dollar": ('["a$b.cpp"]', _mine("a$b.cpp"), 0, "the file name holds $"),
    "quote": ("['a\"b.cpp']", _mine('a"b.cpp'), 0, 'the file name holds "'),
    "leading dash": ('["-x.cpp"]', _mine("-x.cpp"), 0, "the file name starts with '-'"),
    "windows device": ("[aux.cpp]", _mine("aux.cpp"), 0, "the file name is a device name on Windows"),
    "windows device folder": ("[Com1/x.h]", _mine("Com1/x.h"), 0, "a name in its path, 'Com1', is a device name"),
    "case of a rendered file": ("[Deviceimpl.cpp]", _mine("Deviceimpl.cpp"), 0,
                                "'Deviceimpl.cpp' and 'deviceimpl.cpp' differ only in case"),
    "case of a rendered folder": ("[Conformance/x.h]", _mine("Conformance/x.h"), 0,
                                  "'Conformance' and 'conformance' differ only in case"),
    "case of another": ("[shim.cpp, Shim.cpp]", _mine("Shim.cpp"), 1, "'Shim.cpp' and 'shim.cpp' differ only in case"),
    "case of a folder": ("[patch/y.cpp, PATCH/z.cpp]", _mine("PATCH/z.cpp"), 1,
                         "'PATCH' and 'patch' differ only in case"),
    # é composed (NFC) and decomposed (NFD): two files on Linux, one on macOS.
    "normalisation of another": ('["\u00e9.cpp", "e\u0301.cpp"]', _both("\u00e9.cpp", "e\u0301.cpp"), 1,
                                 "'e\u0301.cpp' (e\\u0301.cpp) and '\u00e9.cpp' (\\u00e9.cpp) differ only in Unicode "
                                 "normalisation"),
    "normalisation and case": ('["\u00e9/x.cpp", "E\u0301/y.cpp"]', _both("\u00e9/x.cpp", "E\u0301/y.cpp"), 1,
                               "'E\u0301' (E\\u0301) and '\u00e9' (\\u00e9) differ only in Unicode normalisation"),
}


@pytest.mark.parametrize("case", sorted(MISTAKES))
def test_a_bad_hand_written_item_is_reported_where_it_is_named(tmp_path: Path, case: str):
    listed, setup, index, message = MISTAKES[case]
    ws = _workspace(tmp_path, listed)
    if setup is not None:
        setup(ws)
    line = line_of(ws / "vendors" / f"{VENDOR}.yaml", "hand_written:")
    for args in (("validate",), ("render", "--vendor", VENDOR)):
        errors = error_lines(run_cli(*args, cwd=ws))
        assert any(f"vendors/{VENDOR}.yaml:{line}:" in e and f"error: build.hand_written[{index}]: " in e
                   and message in e for e in errors), errors
    assert not (ws / "generated").exists()


def test_an_unlisted_file_the_build_cannot_take_is_reported_at_the_file(tmp_path: Path):
    """Without build.hand_written every file of the folder is copied: each is checked by its own name."""
    ws = _workspace(tmp_path, LISTED)
    edit(ws / "vendors" / f"{VENDOR}.yaml", f"  hand_written: {LISTED}\n", "")
    for rel in ("a;b.cpp", "Deviceimpl.cpp"):
        _mine(rel)(ws)
    for args in (("validate",), ("render", "--vendor", VENDOR)):
        errors = error_lines(run_cli(*args, cwd=ws))
        assert any(f"vendors/{VENDOR}/a;b.cpp:1:1: error: (sources): the file name holds ;" in e for e in errors), errors
        assert any(f"vendors/{VENDOR}/Deviceimpl.cpp:1:1: error: (sources): 'Deviceimpl.cpp' and 'deviceimpl.cpp'" in e
                   for e in errors), errors
    assert not (ws / "generated").exists()


def _configure(folder: Path, tmp_path: Path) -> str:
    """VENDOR_FILES of the rendered vendor folder, added as csrc_dipu/CMakeLists.txt adds it."""
    project = tmp_path / "project"
    shutil.copytree(folder, project / "vendor")
    (project / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.18)\nproject(fake LANGUAGES NONE)\nadd_subdirectory(vendor)\n"
        'message(STATUS "VENDOR_FILES=[${VENDOR_FILES}]")\n')
    r = subprocess.run(["cmake", "-S", str(project), "-B", str(tmp_path / "build")], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return next(line for line in r.stdout.splitlines() if "VENDOR_FILES=" in line)


@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake not installed")
@pytest.mark.parametrize("sources, patch_built", [(BUILD, False), ('  sources: ["*.cpp", "patch/*.cpp"]\n', True)])
def test_build_sources_decide_which_hand_written_files_are_compiled(tmp_path: Path, sources: str, patch_built: bool):
    """A top-level .cpp is compiled by the default *.cpp glob; one in a subfolder only when a glob names it."""
    ws = _workspace(tmp_path, LISTED, sources=sources)
    files = _configure(_render(ws), tmp_path)
    assert "/vendor/shim.cpp" in files and "/vendor/deviceimpl.cpp" in files, files
    assert ("/vendor/patch/y.cpp" in files) is patch_built, files
    assert "helper.h" not in files


@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake not installed")
def test_build_time_render_follows_a_hand_written_edit(tmp_path: Path):
    """cmake/DeeplinkGen.cmake declares the files of vendors/<name>/ as inputs: an edit re-renders."""
    ws = _workspace(tmp_path, LISTED)
    command = tmp_path / "deeplink-gen"     # this checkout's command
    command.write_text(f'#!/bin/sh\nPYTHONPATH="{REPO}" exec "{sys.executable}" -m deeplink_gen "$@"\n')
    command.chmod(0o755)
    project = tmp_path / "project"
    project.mkdir()
    (project / "CMakeLists.txt").write_text(f"""
cmake_minimum_required(VERSION 3.19)
project(consumer NONE)
include({(REPO / "cmake" / "DeeplinkGen.cmake").as_posix()})
deeplink_gen_render(VENDOR {VENDOR} WORKSPACE {ws.as_posix()} OUTPUT_DIR ${{CMAKE_BINARY_DIR}}/gen
                    COMMAND {command.as_posix()})
""")
    build = tmp_path / "build"

    def run(*args: str) -> str:
        proc = subprocess.run(["cmake", *args], capture_output=True, text=True, timeout=300,
                              env=dict(os.environ, PYTHONPATH=str(REPO)))     # the helper imports deeplink_gen
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc.stdout + proc.stderr

    run("-S", str(project), "-B", str(build))
    copy = vendor_dir(build / "gen", VENDOR) / "patch" / "y.cpp"
    assert copy.read_bytes() == PATCH
    run("--build", str(build), "--target", f"deeplink_gen_{VENDOR}")
    assert f"rendering {VENDOR}" not in run("--build", str(build), "--target", f"deeplink_gen_{VENDOR}")
    (ws / "vendors" / VENDOR / "patch" / "y.cpp").write_bytes(b"// edited\n")
    assert f"rendering {VENDOR}" in run("--build", str(build), "--target", f"deeplink_gen_{VENDOR}")
    assert copy.read_bytes() == b"// edited\n"


def test_without_a_list_a_link_leading_out_of_the_folder_is_refused(tmp_path: Path):
    """Without build.hand_written every file of vendors/<name>/ is copied: one that is a link
    leading out of the folder is refused as it is when a list names it, and nothing is copied
    from outside; a link that stays inside is read through."""
    ws = copy_workspace(tmp_path / "ws", own_catalog=False)
    folder = ws / "vendors" / VENDOR
    folder.mkdir()
    (folder / "shim.cpp").write_bytes(SHIM)
    os.symlink("shim.cpp", folder / "alias.cpp")
    outside = tmp_path / "outside.cpp"
    outside.write_text("int outside;\n")
    os.symlink(outside, folder / "link.cpp")
    errors = error_lines(run_cli("render", "--vendor", VENDOR, cwd=ws))
    assert any(f"{folder}/link.cpp:1:1: error: " in e and "is a link that leads outside vendors/hostsim/" in e
               for e in errors), errors
    assert not (ws / "generated").exists()
    (folder / "link.cpp").unlink()
    assert (_render(ws) / "alias.cpp").read_bytes() == SHIM
