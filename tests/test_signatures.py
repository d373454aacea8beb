"""Every wrapper signature rendered for a bundled vendor (camb) is the one
torch's dispatcher expects for the op.

Compiling cannot show this (ecosystem.md §9.1: c10 compares a kernel's C++
signature with the op's schema only when it is registered), so the test
builds a small library with torch.utils.cpp_extension: one stub per
registered op, declared exactly as the rendered wrapper (the declaration line
is taken from the rendered AutoGenedKernels.cpp, only the name changes),
registered for PrivateUse1 the way the rendered file registers it (its
RegisterByPointer, taken from the rendered file, handed TORCH_FN(stub) as
DIPU's macros hand it the wrapper), each in its own try/catch so a mismatch
is reported per op. Negative controls, derived from
rendered signatures by a deliberate mistake (a missing parameter, double for
int64_t, a return by value for a returned reference), are registered for
PrivateUse2 and must each be reported. One build, ~1 minute and ~1.7 GB.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from helpers import kernels, run_cli
from helpers import copy_workspace

VENDOR = "camb"


def registered_wrappers(text: str) -> list[tuple[str, str]]:
    """(op, registered function) for every registration line, in order."""
    return re.findall(r'^ +\w+_REGISTER\("([^"]+)", (?:::)?\w+, (?:(?:true|false) /\*whether force fallback\*/,\s*)?'
                      r'dipu::native::(\w+)[,)]', text, re.M)


def declaration(text: str, function: str) -> tuple[str, str]:
    """(return type, parameter list) of a rendered function definition."""
    m = re.search(rf"^(\S.*?) {re.escape(function)}\((.*)\) \{{$", text, re.M)
    assert m, f"definition of {function} not found"
    return m.group(1), m.group(2)


def registrar(text: str) -> str:
    """The rendered file's RegisterByPointer, through which its blocks register every wrapper."""
    m = re.search(r"^struct RegisterByPointer \{\n.*?^\};\n", text, re.S | re.M)
    assert m, "RegisterByPointer not found"
    return m.group()


def stub(index: int, ret: str, params: str) -> str:
    return f'{ret} stub_{index}({params}) {{\n  throw std::runtime_error("stub");\n}}\n'


SOURCE = """\
#include <stdexcept>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <torch/library.h>

namespace {{

std::vector<std::string>& failures() {{
  static std::vector<std::string> all;
  return all;
}}

// Register one kernel; a signature torch rejects is recorded, not fatal.
#define CHECKED_IMPL(tag, op, fn)                                              \\
  try {{                                                                       \\
    RegisterByPointer{{m}}.impl(op, TORCH_FN(fn));                             \\
  }} catch (const std::exception& e) {{                                        \\
    std::string what = e.what();                                               \\
    failures().push_back(std::string(tag) + " " + op + ": " + what.substr(0, what.find('\\n'))); \\
  }}

{registrar}
{stubs}
std::string all_failures() {{
  std::string out;
  for (const auto& f : failures()) {{
    out += f + "\\n";
  }}
  return out;
}}

}}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {{
{positive}
}}

TORCH_LIBRARY_IMPL(aten, PrivateUse2, m) {{
{negative}
}}

TORCH_LIBRARY(dlg_sigcheck, m) {{
  m.def("failures() -> str", &all_failures);
  m.def("probe(Tensor x) -> Tensor");
}}

// A kernel registered through RegisterByPointer is the one the dispatcher calls.
at::Tensor probe(const at::Tensor& x) {{
  return x + 1;
}}

TORCH_LIBRARY_IMPL(dlg_sigcheck, CPU, m) {{
  RegisterByPointer{{m}}.impl("probe", TORCH_FN(probe));
}}
"""


def negative_controls(text: str, wrappers: dict[str, str]) -> list[tuple[str, str, str]]:
    """(op, return type, parameters) with one deliberate mistake each."""
    out = []
    ret, params = declaration(text, wrappers["add.out"])
    assert ", const at::Scalar & alpha" in params
    out.append(("add.out", ret, params.replace(", const at::Scalar & alpha", "")))          # missing parameter
    ret, params = declaration(text, wrappers["_softmax.out"])
    assert "int64_t dim" in params
    out.append(("_softmax.out", ret, params.replace("int64_t dim", "double dim")))          # wrong type
    ret, params = declaration(text, wrappers["mul.out"])
    assert ret == "at::Tensor &"
    out.append(("mul.out", "at::Tensor", params))                                          # by value
    return out


@pytest.mark.slow
def test_rendered_signatures_register_with_torch(tmp_path: Path):
    ws = copy_workspace(tmp_path / "ws")
    result = run_cli("render", "--vendor", VENDOR, cwd=ws)
    assert result.exit_code == 0, result.output
    text = kernels(ws / "generated" / VENDOR, pasted=False)
    regs = registered_wrappers(text)
    assert len(regs) > 200, "registrations not found"
    wrappers = dict(regs)
    assert len(wrappers) == len(regs), "an op is registered twice"

    stubs, positive, negative = [], [], []
    for i, (op, function) in enumerate(regs):
        stubs.append(stub(i, *declaration(text, function)))
        positive.append(f'  CHECKED_IMPL("PrivateUse1", "{op}", stub_{i})')
    controls = negative_controls(text, wrappers)
    for j, (op, ret, params) in enumerate(controls, start=len(regs)):
        stubs.append(stub(j, ret, params))
        negative.append(f'  CHECKED_IMPL("PrivateUse2", "{op}", stub_{j})')
    source = tmp_path / "signature_stubs.cpp"
    source.write_text(SOURCE.format(registrar=registrar(text), stubs="\n".join(stubs), positive="\n".join(positive),
                                    negative="\n".join(negative)), encoding="utf-8")

    import torch
    from torch.utils import cpp_extension

    build = tmp_path / "build"
    build.mkdir()
    cpp_extension.load(name="dlg_sigcheck", sources=[str(source)], build_directory=str(build),
                       extra_cflags=["-O0", "-g0"], is_python_module=False, verbose=False)
    failures = [line for line in torch.ops.dlg_sigcheck.failures().splitlines() if line]
    assert torch.ops.dlg_sigcheck.probe(torch.zeros(2)).tolist() == [1.0, 1.0]

    mismatched = [f for f in failures if f.startswith("PrivateUse1 ")]
    assert mismatched == [], "rendered signatures torch rejects:\n" + "\n".join(mismatched)
    for op, _ in regs:
        assert torch._C._dispatch_has_kernel_for_dispatch_key(f"aten::{op}", "PrivateUse1"), op
    # Every deliberate mistake is reported, naming its op.
    reported = {f.split(":", 1)[0].split(" ", 1)[1] for f in failures if f.startswith("PrivateUse2 ")}
    assert reported == {op for op, _, _ in controls}, failures
