"""`deeplink-gen new-vendor`: each mode scaffolds a vendor file that validates,
renders, and whose rendered runtime (and, once, kernels) compiles like the
bundled vendors'; bad names exit 1 and write nothing; cookiecutter leaves
HOME alone."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from helpers import (BUNDLED_VENDORS, INCLUDE, REPO, copy_workspace, diopi_include, run_cli, run_subprocess,
                     sdk_include_flags, syntax_check_kernels, torch_include_flags, torch_root, vendor_dir)

MODELINE = "# yaml-language-server: $schema=../schemas/vendor.schema.json"
FLAGS = ["g++", "-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", "-Werror=missing-declarations"]
SDK = INCLUDE / "sdk"
# name -> (new-vendor arguments, the bundled vendor whose SDK headers the compile check uses)
MODES = {
    "acme": ((), None),
    "tangy": (("--runtime-prefix", "tang", "--with-sources"), "droplet"),
    "drop2": (("--like", "droplet"), "droplet"),
    "cuda2": (("--like", "cuda"), "cuda"),          # the real CUDA and NCCL headers
}
HELPER_H = "#pragma once\r\nint tangyHelper();\r\n"       # CRLF on purpose: copied byte for byte
HELPER_CPP = '#include "tangy_helpers.h"\nint tangyHelper() { return 1; }\n'


def _snapshot(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
            for p in sorted(root.rglob("*"))}


@pytest.fixture(scope="module")
def scaffolded(tmp_path_factory) -> Path:
    ws = copy_workspace(tmp_path_factory.mktemp("newvendor") / "ws")
    for name, (args, _) in MODES.items():
        result = run_cli("new-vendor", name, *args, cwd=ws)
        assert result.exit_code == 0, result.output
    (ws / "vendors/tangy/tangy_helpers.h").write_bytes(HELPER_H.encode())
    (ws / "vendors/tangy/tangy_helpers.cpp").write_bytes(HELPER_CPP.encode())
    result = run_cli("render", *[a for n in MODES for a in ("--vendor", n)], cwd=ws)
    assert result.exit_code == 0, result.output
    return ws


@pytest.mark.parametrize("name", MODES)
def test_scaffold_validates_with_modeline_and_comments(scaffolded: Path, name: str):
    text = (scaffolded / "vendors" / f"{name}.yaml").read_text()
    assert text.splitlines()[0] == MODELINE
    assert "new-vendor" in text.splitlines()[1]
    assert text.count("\n#") > 10                     # sections are explained
    result = run_cli("validate", "--vendor", name, "--strict", cwd=scaffolded)
    assert result.exit_code == 0, result.output
    assert ": warning: " not in result.output


def _compile_runtime(generated: Path, name: str, sdk: str | None, tmp: Path) -> list[str]:
    vdir = vendor_dir(generated, name)
    overlay = tmp / "overlay"
    (overlay / "csrc_dipu" / "vendor").mkdir(parents=True)
    shutil.copy(vdir / "vendorapi.h", overlay / "csrc_dipu" / "vendor" / "vendorapi.h")
    sdk_flags = sdk_include_flags(sdk) if sdk else []
    dipu = [f"-I{overlay}", f"-I{INCLUDE / 'dipu'}", *sdk_flags, *torch_include_flags()]
    cls = "".join(p.capitalize() for p in name.split("_"))
    jobs = [FLAGS + dipu + [str(vdir / f)] for f in ("deviceimpl.cpp", "communicatorimpl.cpp", f"{cls}GeneratorImpl.cpp")]
    conform = generated / name / f"dipu/third_party/DIOPI/impl/{name}/test/conform_test.cpp"
    jobs.append(FLAGS + [f"-I{diopi_include()}", f"-I{SDK / 'common'}", *sdk_flags, str(conform)])
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda cmd: subprocess.run(cmd, capture_output=True, text=True, timeout=900), jobs))
    return [f"{cmd[-1]}:\n{r.stderr}" for cmd, r in zip(jobs, results) if r.returncode != 0]


@pytest.mark.parametrize("name", MODES)
def test_rendered_runtime_compiles(scaffolded: Path, name: str, tmp_path: Path):
    failures = _compile_runtime(scaffolded / "generated", name, MODES[name][1], tmp_path)
    assert not failures, "\n".join(failures)


def test_stub_kernels_compile(scaffolded: Path):
    result = syntax_check_kernels(scaffolded / "generated" / "acme", warnings=["-Wall", "-Wextra", "-Werror"])
    assert result.returncode == 0, result.stderr[-6000:]


def test_stub_runtime_is_unsupported_everywhere(scaffolded: Path):
    from deeplink_gen.interfaces.dipu import DEVICE_FUNCTIONS

    text = (vendor_dir(scaffolded / "generated", "acme") / "deviceimpl.cpp").read_text()
    for fn in DEVICE_FUNCTIONS:
        if fn.strong:
            assert f'"acme: {fn.name} is not supported"' in text
    assert "#include <" not in (vendor_dir(scaffolded / "generated", "acme") / "vendorapi.h").read_text().split(
        "#include <c10")[0]


def test_prefix_mode_uses_the_prefix(scaffolded: Path):
    text = (vendor_dir(scaffolded / "generated", "tangy") / "deviceimpl.cpp").read_text()
    for call in ("tangStreamCreate(stream)", "tangMalloc(p, nbytes)", "tangSetDevice(devId)", "DIPU_CALLTANGY("):
        assert call in text
    assert "#include <tang_runtime.h>" in (vendor_dir(scaffolded / "generated", "tangy") / "vendorapi.h").read_text()


def test_like_mode_keeps_comments_and_data_with_new_identity(scaffolded: Path):
    text = (scaffolded / "vendors" / "drop2.yaml").read_text()
    original = (REPO / "vendors" / "droplet.yaml").read_text()
    assert "# droplet bring-up: always compile the comparison twins" in text
    assert "name: drop2" in text and "device_type: DROP2" in text and "cmake_aliases: [DROP2, drop2]" in text
    assert "name: droplet" not in text and "device_type: DROPLET" not in text
    # everything after the identity is the same text
    assert text.split("\ndefaults:", 1)[1] == original.split("\ndefaults:", 1)[1]
    manifest = (scaffolded / "generated" / "drop2" / "manifest.json").read_text()
    assert '"device_type": "DROP2"' in manifest


@pytest.mark.parametrize("like", BUNDLED_VENDORS)
def test_like_takes_every_bundled_vendor_in_an_empty_folder(tmp_path: Path, like: str):
    """In a folder that is not a workspace yet, --like copies each bundled example; the copy
    validates and renders under its new name."""
    result = run_cli("new-vendor", "acme", "--like", like, cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert "\ntorch: 2.2.2\n" in (tmp_path / "deeplink-gen.yaml").read_text()     # DIPU's torch, not the installed one
    result = run_cli("validate", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert "1 vendor (acme)" in result.output and "torch 2.2.2" in result.output
    result = run_cli("render", "--vendor", "acme", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert (vendor_dir(tmp_path / "generated", "acme") / "deviceimpl.cpp").is_file()
    assert '"device_type": "ACME"' in (tmp_path / "generated" / "acme" / "manifest.json").read_text()


@pytest.mark.parametrize("like", ["camb", "ascend"])
def test_like_leaves_out_the_adaptor_section_of_the_copied_library(tmp_path: Path, like: str):
    """The adaptor section lists what the copied vendor's DIOPI library defines: kept, the copy's
    adaptor would call impl::<like>:: functions the new vendor's library lacks. It is left out
    with its comment, the file says so, and the rest is the same text."""
    result = run_cli("new-vendor", "acme", "--like", like, cwd=tmp_path)
    assert result.exit_code == 0, result.output
    text = (tmp_path / "vendors" / "acme.yaml").read_text()
    original = (REPO / "vendors" / f"{like}.yaml").read_text()
    assert "\nadaptor:\n" in original and "\nadaptor:" not in text
    assert f"# {like}'s adaptor section, the DIOPI functions {like}'s DIOPI library defines, was left out:" in text
    rest = original.split("\ndefaults:", 1)[1]
    section = re.search(r"\n(?:#.*\n)*adaptor:\n(?: .*\n)*\n", rest)
    assert text.split("\ndefaults:", 1)[1] == rest.replace(section.group(0), "\n", 1)
    result = run_cli("render", "--vendor", "acme", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    adaptor = tmp_path / "generated" / "acme" / "dipu/third_party/DIOPI/impl/acme/adaptor/diopi_adaptor.cpp"
    assert set(re.findall(r"::impl::(\w+)::", adaptor.read_text())) == {"acme"}


def test_like_leaves_out_a_block_style_adaptor_section_that_ends_the_file(tmp_path: Path):
    """As import-dipu writes it (one function a line), last in the file, without a final newline."""
    ws = copy_workspace(tmp_path / "ws")
    source = ws / "vendors" / "droplet.yaml"
    source.write_text(source.read_text() + "adaptor:\n  implemented:\n    droplet:\n    - diopiCastDtype\n"
                      "    - diopiCopyInp\n    - diopiAdd")
    result = run_cli("new-vendor", "acme", "--like", "droplet", cwd=ws)
    assert result.exit_code == 0, result.output
    text = (ws / "vendors" / "acme.yaml").read_text()
    assert "adaptor:" not in text and "diopiCopyInp" not in text and text.endswith('sources: ["*.cpp"]\n')
    assert run_cli("validate", "--vendor", "acme", "--strict", cwd=ws).exit_code == 0


def test_sources_folder_is_copied_into_the_vendor_folder(scaffolded: Path):
    vdir = vendor_dir(scaffolded / "generated", "tangy")
    assert (vdir / "tangy_helpers.h").read_bytes() == HELPER_H.encode()
    assert (vdir / "tangy_helpers.cpp").read_bytes() == HELPER_CPP.encode()
    assert not (vdir / "README.md").exists()
    assert "${CMAKE_CURRENT_SOURCE_DIR} PARENT_SCOPE" in (vdir / "CMakeLists.txt").read_text()
    readme = (scaffolded / "vendors" / "tangy" / "README.md").read_text()
    assert "return {{0, 0}};" in readme                  # C++ braces survive the template
    # The bundled vendors have no folder: their CMakeLists stays as it was.
    assert "CMAKE_CURRENT_SOURCE_DIR} PARENT_SCOPE" not in (
        vendor_dir(REPO / "generated", "droplet") / "CMakeLists.txt").read_text()


def test_a_source_named_like_a_rendered_file_is_an_error(tmp_path: Path):
    ws = copy_workspace(tmp_path / "ws")
    assert run_cli("new-vendor", "acme", "--with-sources", cwd=ws).exit_code == 0
    (ws / "vendors/acme/deviceimpl.cpp").write_text("// mine\n")
    result = run_cli("render", "--vendor", "acme", cwd=ws)
    assert result.exit_code == 1
    assert "deviceimpl.cpp" in result.stderr and "rendered file" in result.stderr
    assert not (ws / "generated" / "acme").exists()


def test_output_is_deterministic_and_prints_next_steps(tmp_path: Path):
    outputs = []
    for i in range(2):
        ws = copy_workspace(tmp_path / f"ws{i}")
        result = run_cli("new-vendor", "acme", "--runtime-prefix", "tang", cwd=ws)
        assert result.exit_code == 0, result.output
        outputs.append((ws / "vendors/acme.yaml").read_bytes())
    assert outputs[0] == outputs[1]
    out = result.stdout
    for needle in ("render --vendor acme", 'list(APPEND DEVICE_ACME "ACME" "acme")', "VendorDeviceType",
                   "DIPU_DEVICE=acme", "test_add.py"):
        assert needle in out


def test_force_replaces_an_existing_vendor(tmp_path: Path):
    ws = copy_workspace(tmp_path / "ws")
    result = run_cli("new-vendor", "droplet", "--force", cwd=ws)
    assert result.exit_code == 0, result.output
    assert "replaced" in result.stdout
    assert "unsupported" in (ws / "vendors/droplet.yaml").read_text()
    assert run_cli("validate", cwd=ws).exit_code == 0


@pytest.mark.parametrize("args, message", [
    (("Acme",), "not a lower-case C identifier"),
    (("1acme",), "not a lower-case C identifier"),
    (("acme-x",), "not a lower-case C identifier"),
    (("../x",), "is a path"),
    (("a/b",), "is a path"),
    (("/tmp/abs",), "is a path"),
    (("",), "empty"),
    (("class",), "C/C++ keyword"),
    (("common",), "reserved"),
    (("device",), "reserved"),
    (("con",), "device name on Windows"),
    (("lpt1",), "device name on Windows"),
    (("droplet",), "already exists; use --force"),
    (("acme", "--device-type", "DROPLET"), "already used by"),
    (("acme", "--device-type", "GCU"), "upstream DIPU's enumerator for topsrider"),
    (("acme", "--device-type", "Acme"), "not an upper-case C identifier"),
    (("acme", "--runtime-prefix", "ta-ng"), "runtime prefix"),
    # Before its length was checked, it named an error at a line of the vendor file never written.
    (("acme", "--runtime-prefix", "t" * 100_000), "is longer than 48 characters"),
    (("acme", "--like", "nosuch"), "no vendors/nosuch.yaml"),
])
def test_bad_input_exits_1_and_writes_nothing(tmp_path: Path, args, message):
    ws = copy_workspace(tmp_path / "ws")
    before = _snapshot(ws)
    result = run_cli("new-vendor", *args, cwd=ws)
    assert result.exit_code == 1, result.output
    assert message in result.stderr
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
    assert "Traceback" not in result.output
    assert _snapshot(ws) == before


def test_like_and_prefix_together_is_a_usage_error(tmp_path: Path):
    ws = copy_workspace(tmp_path / "ws")
    result = run_cli("new-vendor", "acme", "--like", "droplet", "--runtime-prefix", "tang", cwd=ws)
    assert result.exit_code == 2
    assert not (ws / "vendors/acme.yaml").exists()


def test_unknown_context_keys_are_rejected():
    from deeplink_gen.commands.new_vendor import check_context
    from deeplink_gen.errors import UserError

    with pytest.raises(UserError, match="not in cookiecutter.json: bogus"):
        check_context({"name": "acme", "device_type": "ACME", "bogus": 1})
    with pytest.raises(UserError, match="device_type"):
        check_context({"name": "acme", "device_type": "acme"})


def test_cookiecutter_leaves_home_alone(tmp_path: Path):
    ws = copy_workspace(tmp_path / "ws")
    home = tmp_path / "home"
    home.mkdir()
    before = _snapshot(ws)
    result = run_subprocess("-C", str(ws), "new-vendor", "acme", "--with-sources",
                            env={"HOME": str(home), "DEEPLINK_GEN_CACHE_DIR": str(tmp_path / "cache"),
                                 "XDG_CACHE_HOME": str(tmp_path / "cache")})
    assert result.returncode == 0, result.stderr
    assert list(home.iterdir()) == []
    after = _snapshot(ws)
    assert sorted(set(after) - set(before)) == [
        "schemas", "schemas/catalog.schema.json", "schemas/vendor.schema.json", "schemas/workspace.schema.json",
        "vendors/acme", "vendors/acme.yaml", "vendors/acme/README.md"]      # the schemas its modeline names
    assert not any("replay" in p or p.startswith(".") for p in after)
    assert sorted(os.listdir(ws)) == ["catalog", "deeplink-gen.yaml", "schemas", "vendors"]


def test_a_name_dipu_has_a_vendor_folder_for_is_warned_about(tmp_path: Path):
    """render --into would replace DIPU's own vendor/cuda/ files with the scaffold's stubs."""
    result = run_cli("new-vendor", "cuda", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert "warning: DIPU 9dd38082 has a vendor/cuda/ of its own: render --vendor cuda --into replaces" in result.stderr
    assert "--like cuda --force" in result.stderr
    assert result.stdout.rstrip().splitlines()[-1].startswith("next: ")
    plain = run_cli("new-vendor", "acme", cwd=tmp_path)
    assert plain.exit_code == 0 and "warning" not in plain.stderr


def test_a_workspace_torch_without_an_op_table_is_validates_business(tmp_path: Path):
    """deeplink-gen.yaml naming a torch with no op table here: the scaffold is written, and
    validate names that line (new-vendor once raised a traceback)."""
    (tmp_path / "deeplink-gen.yaml").write_text("torch: 2.5.0\n")
    result = run_cli("new-vendor", "acme", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    errors = run_cli("validate", cwd=tmp_path)
    assert errors.exit_code == 1 and "deeplink-gen.yaml:1:8: error: torch: no op table for torch 2.5.0" in errors.stderr


def _configure_conformance(generated: Path, name: str, build: Path, *defines: str) -> subprocess.CompletedProcess:
    """cmake-configure the rendered conformance folder of *name*, which adds its vendor folder as DIPU does."""
    folder = vendor_dir(generated, name) / "conformance"
    return subprocess.run(["cmake", "-S", str(folder), "-B", str(build), f"-DDIPU_INCLUDE_DIR={INCLUDE / 'dipu'}",
                           f"-DTORCH_DIR={torch_root()}", *defines], capture_output=True, text=True, timeout=300)


def test_untouched_stub_configures_without_an_sdk(tmp_path: Path):
    """init, new-vendor, render: the vendor folder configures with no SDK anywhere."""
    for args in (("init",), ("new-vendor", "zeta"), ("render", "--vendor", "zeta")):
        result = run_cli(*args, cwd=tmp_path)
        assert result.exit_code == 0, result.output
    configure = _configure_conformance(tmp_path / "generated", "zeta", tmp_path / "build")
    assert configure.returncode == 0, configure.stdout[-3000:] + configure.stderr[-3000:]
    assert "ZETA_ROOT" in (tmp_path / "vendors" / "zeta.yaml").read_text()   # named for when the SDK comes


def test_a_missing_sdk_names_the_variable_to_set(scaffolded: Path, tmp_path: Path):
    """A scaffold that needs an SDK, configured without one: one error, naming the root variable
    and what the root must contain."""
    configure = _configure_conformance(scaffolded / "generated", "tangy", tmp_path / "build",
                                       f"-DTANGY_ROOT={tmp_path / 'nosdk'}")
    assert configure.returncode != 0
    err = " ".join(configure.stderr.split())
    assert err.count("CMake Error") == 1 and "Could NOT find" not in err, configure.stderr
    assert (f"TangRT: the tangy SDK was not found in {tmp_path / 'nosdk'}. Set TANGY_ROOT (as -DTANGY_ROOT=<dir> "
            "or in the environment) to the SDK's install root, which must contain tang_runtime.h under include/, "
            "the tangrt library under lib64/ or lib/.") in err, configure.stderr


def test_scaffold_lists_each_functions_placeholders(scaffolded: Path):
    """Beside each runtime function, the placeholders its call may name: DIPU's own parameter
    names, irregular ones included (sendbuf in diclReduce, op in diclReduceScatter)."""
    from deeplink_gen.interfaces.dipu import COMM_FUNCTIONS, DEVICE_FUNCTIONS

    stub = (scaffolded / "vendors" / "acme.yaml").read_text()
    for fn in DEVICE_FUNCTIONS + COMM_FUNCTIONS:
        line = next(line for line in stub.splitlines() if re.match(rf"\s+(# )?{fn.key}: ", line))
        for name in fn.param_names:
            assert f"{{{name}}}" in line.split("placeholders")[1], line
    assert re.search(r"diclReduce: unsupported +# placeholders \{sendbuf\} \{recvBuf\}", stub)
    assert re.search(r"diclReduceScatter: unsupported +# placeholders .*\{recvCount\} \{datatype\} \{op\}", stub)
    assert re.search(r"memCopyH2D: unsupported +# placeholders \{nbytes\} \{dst\} \{src\} \{kind\}$", stub, re.M)
    prefix = (scaffolded / "vendors" / "tangy.yaml").read_text()
    assert re.search(r"#   mallocDevice +\{p\} \{nbytes\} \{throwExcepion\}$", prefix, re.M)
    assert re.search(r"diclReduce: unsupported +# placeholders \{sendbuf\}", prefix)


def test_one_starting_point_is_named_everywhere(tmp_path: Path):
    """README, init's next line and the scaffold's comment name the same example, cuda, and the
    quick start names --runtime-prefix."""
    init = run_cli("init", cwd=tmp_path)
    assert "new-vendor NAME --like cuda" in init.output, init.output
    assert run_cli("new-vendor", "zeta", cwd=tmp_path).exit_code == 0
    stub = (tmp_path / "vendors" / "zeta.yaml").read_text()
    readme = (REPO / "README.md").read_text()
    quick_start = readme.split("## Quick start for a vendor")[1].split("\n## ")[0]
    assert "`deeplink-gen new-vendor NAME --like cuda` starts from a complete CUDA-like example" in stub
    assert "--like cuda" in quick_start and "--runtime-prefix" in quick_start
    for text in (init.output, stub, quick_start):
        assert "--like droplet" not in text
