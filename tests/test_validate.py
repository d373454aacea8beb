"""validate: the bundled workspace passes; each class of mistake is reported
at its file, line and key with exit code 1 and no traceback."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from deeplink_gen.errors import MAX_SHOWN
from helpers import REPO, edit, error_lines, line_of, run_cli


def test_bundled_workspace_validates(workspace: Path):
    result = run_cli("validate", cwd=workspace)
    assert result.exit_code == 0, result.output
    assert "5 vendors (ascend, camb, cuda, droplet, hostsim)" in result.output


# Each case: file to edit, text to replace, replacement, the text on the reported line, expected message.
CASES = {
    "yaml syntax": ("vendors/camb.yaml", "  device_type: MLU", "  device_type: MLU: bad", "device_type",
                    r"vendors/camb\.yaml:\d+:\d+: error: .*YAML syntax error"),
    "unknown key with hint": ("vendors/camb.yaml", "  device_type: MLU", "  device_typ: MLU", "device_typ",
                              r"vendor\.device_typ: unknown key 'device_typ'; did you mean 'device_type'\?"),
    "wrong type (YAML 1.1 trap)": ("vendors/camb.yaml", "  autocompare: false ", "  autocompare: no ",
                                   "autocompare: no",
                                   r"defaults\.autocompare: expected true or false, got 'no'"),
    "C++ in an identifier": ("vendors/camb.yaml", "  device_type: MLU", '  device_type: "MLU; system(0)"',
                             "device_type", r"vendor\.device_type: expected an upper-case C identifier"),
    "override of an unknown op": ("vendors/ascend.yaml", "  addmm.out:", "  addmn.out:", "addmn.out",
                                  r"ops\[addmn\.out\]: 'addmn\.out' is not in the op catalog; did you mean 'addmm\.out'\?"),
    "duplicate key": ("vendors/droplet.yaml", "  name: droplet\n", "  name: droplet\n  name: dropletx\n",
                      "name: dropletx", r"vendor\.name: duplicate key 'name' \(first defined at line \d+\)"),
    "op not in torch": ("catalog/reduce.yaml", "  mm.out:", "  mm.outt:", "mm.outt",
                        r"ops\[mm\.outt\]: 'mm\.outt' is not an op of the installed torch; did you mean 'mm\.out'\?"),
    "call names an unknown argument": ("catalog/reduce.yaml", "diopiMm(ctx, out, self, mat2)",
                                       "diopiMm(ctx, out, self, mat3)", "diopiMm",
                                       r"ops\[mm\.out\]\.call: 'mat3' is not an argument of mm\.out; did you mean 'mat2'\?"),
    "fresh return without alloc": ("catalog/pointwise.yaml",
                                   "  relu:\n    call: diopiRelu(ctx, out, self)\n    alloc:\n"
                                   "      out: 'nodispatch::empty_like(self)'\n",
                                   "  relu:\n    call: diopiRelu(ctx, out, self)\n", "  relu:", r"ops\.relu\.alloc: relu returns a new tensor 'out'"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_invalid_input_is_located(workspace: Path, case: str):
    rel, old, new, needle, pattern = CASES[case]
    path = workspace / rel
    edit(path, old, new)
    errors = error_lines(run_cli("validate", cwd=workspace))
    matching = [e for e in errors if re.search(pattern, e)]
    assert matching, errors
    line = line_of(path, needle)
    assert any(e.startswith(f"{path}:{line}:") or f"{rel}:{line}:" in e for e in matching), (line, matching)


def test_several_errors_in_one_run(workspace: Path):
    edit(workspace / "vendors/camb.yaml", "  device_type: MLU", "  device_typ: MLU")
    edit(workspace / "vendors/ascend.yaml", "  addmm.out:", "  addmn.out:")
    edit(workspace / "catalog/reduce.yaml", "diopiMm(ctx, out, self, mat2)", "diopiMm(ctx, out, self, mat3)")
    errors = error_lines(run_cli("validate", cwd=workspace))
    assert {e.split(":")[0].split("/")[-1] for e in errors} >= {"camb.yaml", "ascend.yaml", "reduce.yaml"}


def test_errors_shown_are_capped_and_the_rest_counted(workspace: Path):
    """20,000 overrides of unknown ops print the first hundred errors (their did-you-mean
    worked out for those alone) and count the others."""
    path = workspace / "vendors" / "droplet.yaml"
    unknown = "".join(f"  no_such_op_{i:05}.out: {{enabled: false}}\n" for i in range(20000))
    edit(path, "\nops:\n", "\nops:\n  addmn.out: {enabled: false}\n" + unknown)
    result = run_cli("validate", cwd=workspace)
    errors = error_lines(result)
    assert len(errors) == MAX_SHOWN
    assert re.search(r"droplet\.yaml:\d+:\d+: error: ops\[addmn\.out\]: 'addmn\.out' is not in the op catalog; "
                     r"did you mean 'addmm\.out'\?", errors[0]), errors[0]
    assert result.stderr.splitlines()[-2:] == [f"... and {20001 - MAX_SHOWN} more errors not shown", "20001 errors"]


def test_conflicting_settings_name_both_locations(workspace: Path):
    edit(workspace / "catalog/reduce.yaml", "  mm.out:\n    call: diopiMm(ctx, out, self, mat2)",
          "  mm.out:\n    call: diopiMm(ctx, out, self, mat2)\n    autocompare: false")
    edit(workspace / "vendors/camb.yaml", "ops:\n", "ops:\n  mm.out:\n    autocompare: true\n")
    errors = error_lines(run_cli("validate", cwd=workspace))
    conflict = [e for e in errors if "conflicts with the catalog" in e]
    assert conflict and "catalog/reduce.yaml:" in conflict[0] and "vendors/camb.yaml:" in conflict[0]


def test_vendor_name_must_match_file(workspace: Path):
    edit(workspace / "vendors/camb.yaml", "  name: camb", "  name: cambx")
    errors = error_lines(run_cli("validate", cwd=workspace))
    assert any("must match the file name 'camb.yaml'" in e for e in errors)


def test_empty_and_non_mapping_files(workspace: Path):
    (workspace / "vendors/camb.yaml").write_text("")
    (workspace / "vendors/ascend.yaml").write_text("- just\n- a list\n")
    errors = error_lines(run_cli("validate", cwd=workspace))
    assert any("camb.yaml" in e and "file is empty" in e for e in errors)
    assert any("ascend.yaml:1:1" in e and "expected a mapping" in e for e in errors)


def test_unknown_vendor_on_command_line(workspace: Path):
    result = run_cli("validate", "--vendor", "cmab", cwd=workspace)
    assert result.exit_code == 1
    assert "no vendor file vendors/cmab.yaml; did you mean 'camb'?" in result.stderr


def test_validate_one_vendor_ignores_broken_others(workspace: Path):
    (workspace / "vendors/ascend.yaml").write_text("vendor: [")
    assert run_cli("validate", "--vendor", "camb", cwd=workspace).exit_code == 0


def test_disabling_an_op_that_custom_code_calls(workspace: Path):
    """add.out's code calls the add.Scalar_out wrapper; disabling that op for a
    vendor would leave an undefined function in its kernels."""
    assert "dipu_add_scalar_out(" in (workspace / "catalog/pointwise.yaml").read_text()
    edit(workspace / "vendors/camb.yaml", "ops:\n", "ops:\n  add.Scalar_out:\n    enabled: false\n")
    errors = error_lines(run_cli("validate", cwd=workspace))
    line = line_of(workspace / "vendors/camb.yaml", "enabled: false")
    hits = [e for e in errors if "add.Scalar_out is disabled for camb, but add.out calls dipu_add_scalar_out" in e]
    assert hits and f"camb.yaml:{line}:" in hits[0] and "catalog/pointwise.yaml:" in hits[0]
    # Disabling it for a vendor that also disables every caller is fine.
    edit(workspace / "vendors/camb.yaml", "ops:\n", "ops:\n" + "".join(
        f"  {op}:\n    enabled: false\n" for op in ("add.out", "add.Tensor", "add_.Tensor")))
    result = run_cli("validate", cwd=workspace)
    assert "add.Scalar_out is disabled" not in result.stderr, result.stderr


def test_custom_code_calling_the_wrapper_of_an_op_the_catalog_lacks(workspace: Path):
    """Code that calls dipu_<op> of a torch op with no catalog entry calls a wrapper no render
    makes: an error at the code, naming the op; a dipu_ name of no torch op (DIPU's own) is left."""
    catalog = workspace / "catalog/pointwise.yaml"
    text = catalog.read_text()
    catalog.write_text(text.replace("return dipu_add_scalar_out(self, other.item(), alpha, out);",
                                    "dipu_hypot_(out, other); dipu_own_helper(out);\n"
                                    "          return dipu_add_scalar_out(self, other.item(), alpha, out);", 1))
    errors = error_lines(run_cli("validate", cwd=workspace))
    line = line_of(catalog, "beginning: |") + 1         # where add.out's code starts
    assert any(f"pointwise.yaml:{line}:" in e and "add.out calls dipu_hypot_, the wrapper of hypot_, which "
               "the catalog has no entry for" in e for e in errors), errors
    assert not any("dipu_own_helper" in e for e in errors), errors


def test_torch_gate_without_minor_version(workspace: Path):
    """A gate bound must be X.Y or X.Y.Z; '>=2' is reported where it is written."""
    path = edit(workspace / "catalog/pointwise.yaml", "  relu:\n    call: diopiRelu(ctx, out, self)\n",
                "  relu:\n    torch: \">=2\"\n    call: diopiRelu(ctx, out, self)\n")
    line = line_of(path, 'torch: ">=2"')
    errors = error_lines(run_cli("validate", cwd=workspace))
    assert any(re.search(rf"pointwise\.yaml:{line}:\d+: error: ops\.relu\.torch: "
                         r"expected a torch version condition", e) for e in errors), errors
    # The file that failed is not half-read: no op of it is reported missing elsewhere.
    assert not [e for e in errors if "not in the op catalog" in e], errors


def test_autograd_backward_outside_the_torch_version(tmp_path: Path):
    """An autograd op whose backward op is gated out of the chosen torch cannot
    be rendered: validate and render both say so at autograd.backward."""
    ws = tmp_path / "ws"
    shutil.copytree(REPO / "tests/fixtures/kernels/features", ws)
    ops = edit(ws / "catalog/ops.yaml", "  convolution_transpose_backward:       # a DIPU-private helper",
               "  convolution_transpose_backward:\n    torch: \"<2.0\"       # a DIPU-private helper")
    line = line_of(ops, "      backward: convolution_transpose_backward")
    for command in (("validate",), ("render", "--all")):
        errors = error_lines(run_cli(*command, cwd=ws))
        assert any(re.search(rf"ops\.yaml:{line}:\d+: error: ops\[conv_transpose2d\.input\]\.autograd\.backward: "
                             r"'convolution_transpose_backward' does not apply to torch", e) for e in errors), errors
    assert not (ws / "generated").exists()


def test_validating_one_vendor_checks_it_against_the_others(workspace: Path):
    """validate --vendor acme sees that acme takes camb's device type and CMake alias, and says so
    at acme's own lines (the full validate says it at both files)."""
    acme = workspace / "vendors" / "acme.yaml"
    acme.write_text((workspace / "vendors" / "droplet.yaml").read_text()
                    .replace("name: droplet", "name: acme").replace("device_type: DROPLET", "device_type: MLU")
                    .replace("cmake_aliases: [DROPLET, droplet]", "cmake_aliases: [ACME, camb]"))
    errors = error_lines(run_cli("validate", "--vendor", "acme", cwd=workspace))
    assert any(re.search(rf"vendors/acme\.yaml:{line_of(acme, 'device_type: MLU')}:\d+: error: vendor\.device_type: "
                         r"device type 'MLU' is also camb's \(.*vendors/camb\.yaml:\d+:\d+\)", e) for e in errors), errors
    assert any(re.search(rf"vendors/acme\.yaml:{line_of(acme, 'cmake_aliases')}:\d+: error: vendor\.cmake_aliases: "
                         r"CMake alias camb also selects camb", e) for e in errors), errors
    assert all("vendors/acme.yaml" in e.split(": error:")[0] for e in errors), errors
    both = error_lines(run_cli("validate", cwd=workspace))
    assert any(e.split(": error:")[0].split("/")[-1].startswith("camb.yaml") for e in both), both


def test_hand_written_sources_are_checked_by_validate(workspace: Path):
    """vendors/<name>/ files are copied into DIPU's vendor folder: one named like a rendered file,
    or one that is not UTF-8 text, is reported by validate, not first by render."""
    folder = workspace / "vendors" / "droplet"
    folder.mkdir()
    (folder / "deviceimpl.cpp").write_text("// mine\n")
    (folder / "blob.bin").write_bytes(b"\xff\xfe\x00binary")
    errors = error_lines(run_cli("validate", "--vendor", "droplet", cwd=workspace))
    assert any("vendors/droplet/deviceimpl.cpp:1:1: error: (sources): 'deviceimpl.cpp' is also a rendered file" in e
               for e in errors), errors
    assert any("vendors/droplet/blob.bin:1:1: error: (sources): not UTF-8 text (byte 0xff)" in e for e in errors), errors


@pytest.mark.parametrize("name, why", [("class", "is a C/C++ keyword"),
                                       ("common", "is reserved: DIPU/DIOPI or Python use it themselves"),
                                       ("v" * 49, "is longer than 48 characters")])
def test_validate_refuses_a_vendor_name_new_vendor_refuses(workspace: Path, name: str, why: str):
    """A vendor file new-vendor would not make is refused by validate and render alike."""
    path = workspace / "vendors" / f"{name}.yaml"
    (workspace / "vendors" / "droplet.yaml").rename(path)
    edit(path, "  name: droplet\n", f"  name: {name}\n")
    line = line_of(path, f"  name: {name}")
    for command in (("validate",), ("render", "--vendor", name)):
        result = run_cli(*command, cwd=workspace)
        assert result.exit_code == 1, result.output
        assert any(e.startswith(f"{path}:{line}:") and "vendor.name" in e and f"'{name}' {why}" in e
                   for e in error_lines(result)), error_lines(result)
    assert not (workspace / "generated").exists()
    result = run_cli("new-vendor", name, cwd=workspace)
    assert result.exit_code == 1 and why in result.output, result.output


@pytest.mark.parametrize("gate", [">=2.5, <2.2", ">2.1.0,<2.1.1", "<0.0.0"])
def test_a_torch_gate_that_admits_no_version(workspace: Path, gate: str):
    vendor = workspace / "vendors" / "droplet.yaml"
    edit(vendor, "  bmm.out:\n    autocompare: false\n", f'  bmm.out:\n    torch: "{gate}"\n    autocompare: false\n')
    line = line_of(vendor, f'    torch: "{gate}"')
    errors = error_lines(run_cli("validate", cwd=workspace))
    assert errors == [f"{vendor}:{line}:12: error: ops[bmm.out].torch: '{gate}' admits no torch version"], errors


@pytest.mark.parametrize("old, new, key, said", [
    ("  headers: [tang_runtime.h, pccl.h]", "  headers: [../../etc/tang_runtime.h, pccl.h]", "runtime.headers[0]",
     "(no ..)"),
    ('  sources: ["*.cpp"]', '  sources: ["../*.cpp"]', "build.sources[0]", "(no ..)"),
    ("    include_suffixes: [include]", "    include_suffixes: [include/../..]", "build.toolkit.include_suffixes[0]",
     "(no ..)"),
    # A word of the build that starts with - is read as an option by the tools it reaches.
    ('  sources: ["*.cpp"]', '  sources: ["-x*.cpp"]', "build.sources[0]", "not starting with -"),
    ("    include_suffixes: [include]", "    include_suffixes: [-include]", "build.toolkit.include_suffixes[0]",
     "not starting with -"),
])
def test_paths_stay_in_their_folder_and_are_no_options(workspace: Path, old: str, new: str, key: str, said: str):
    """As catalog includes, runtime headers and build paths take no `..`, and no leading -."""
    vendor = workspace / "vendors" / "droplet.yaml"
    edit(vendor, old, new)
    errors = error_lines(run_cli("validate", cwd=workspace))
    assert len(errors) == 1 and errors[0].startswith(f"{vendor}:{line_of(vendor, new)}:") and key in errors[0] \
        and said in errors[0], errors


def test_a_dtype_in_another_spelling_is_named_in_its_own(workspace: Path):
    """fp16, double, long: torch's and common spellings of DIOPI's dtype names, as a value and as a key."""
    vendor = workspace / "vendors" / "droplet.yaml"
    edit(vendor, "  supported: [bool, int8, uint8, int32, float16, float32]",
         "  supported: [bool, int8, uint8, int32, fp16, float32]")
    edit(vendor, "  convert:\n    int64: int32", "  convert:\n    long: int32\n    double: float32")
    errors = error_lines(run_cli("validate", cwd=workspace))
    assert any("dtypes.supported[4]: 'fp16' is not one of:" in e and e.endswith("did you mean 'float16'?")
               for e in errors), errors
    assert any("dtypes.convert.long: 'long' is not one of:" in e and e.endswith("did you mean 'int64'?")
               for e in errors), errors
    assert any("dtypes.convert.double:" in e and e.endswith("did you mean 'float64'?") for e in errors), errors
    assert not any("C identifier" in e for e in errors), errors
