"""Validation of the kernel vocabulary: calls name only what exists, hook fields
are the only free-form C++, unknown keys and contradictory settings are
errors that name file:line (both places for conflicts), exit code 1."""

from __future__ import annotations

import re
from pathlib import Path
from textwrap import dedent, indent


import pytest

from helpers import error_lines, kernels, line_of as line_in, run_cli

from deeplink_gen.translate.args import AUX_SUFFIX, LOCAL_SUFFIX
from deeplink_gen.validate.locals import WRAPPER_LOCALS

VENDOR = dedent("""\
    vendor:
      name: droplet
      device_type: DROPLET
    """)


def make(tmp_path: Path, catalog: str, vendor: str = VENDOR) -> Path:
    ws = tmp_path / "ws"
    (ws / "catalog").mkdir(parents=True)
    (ws / "vendors").mkdir()
    (ws / "catalog" / "ops.yaml").write_text("ops:\n" + indent(dedent(catalog), "  "), encoding="utf-8")
    (ws / "vendors" / "droplet.yaml").write_text(vendor, encoding="utf-8")
    (ws / "deeplink-gen.yaml").write_text("bundled_catalog: false\n")
    return ws


def errors(ws: Path) -> list[str]:
    return error_lines(run_cli("validate", cwd=ws))


def line_of(ws: Path, needle: str, file: str = "catalog/ops.yaml") -> int:
    return line_in(ws / file, needle)


def test_valid_vocabulary_passes(tmp_path: Path):
    ws = make(tmp_path, """\
      equal:
        call: diopiEqual(ctx, &out, self, other)
        locals: [out]
        code:
          beginning: |
            bool out = false;
    """)
    result = run_cli("validate", cwd=ws)
    assert result.exit_code == 0, result.output


def test_unknown_entry_key(tmp_path: Path):
    ws = make(tmp_path, """\
      relu_:
        call: diopiReluInp(ctx, self)
        custom_code_before_return: "x;"
    """)
    (err,) = errors(ws)
    assert f"ops.yaml:{line_of(ws, 'custom_code_before_return')}:" in err
    assert "unknown key 'custom_code_before_return'" in err


def test_unknown_hook(tmp_path: Path):
    ws = make(tmp_path, """\
      relu_:
        call: diopiReluInp(ctx, self)
        code:
          at_the_end: "x;"
    """)
    (err,) = errors(ws)
    assert "unknown key 'at_the_end'" in err


def test_call_may_not_name_undeclared_locals(tmp_path: Path):
    ws = make(tmp_path, """\
      sum.IntList_out:
        call: diopiSum(ctx, out, self, dimSize)
        code:
          beginning: |
            ::diopiSize_t dimSize = toDiopiSize(dim);
    """)
    (err,) = errors(ws)
    assert "'dimSize' is not an argument of sum.IntList_out" in err
    # Listing it under locals: makes it valid.
    text = (ws / "catalog" / "ops.yaml").read_text().replace("    code:", "    locals: [dimSize]\n    code:")
    (ws / "catalog" / "ops.yaml").write_text(text)
    assert run_cli("validate", cwd=ws).exit_code == 0


def test_handle_names_only_for_converted_arguments(tmp_path: Path):
    ws = make(tmp_path, """\
      add.out:
        call: diopiAdd(ctx, out, selfDiopiTensorHandle, otherHandle, alpha)
    """)
    (err,) = errors(ws)
    assert "'otherHandle' is not an argument of add.out" in err


def test_locals_without_code(tmp_path: Path):
    ws = make(tmp_path, """\
      relu_:
        call: diopiReluInp(ctx, tmp)
        locals: [tmp]
    """)
    (err,) = errors(ws)
    assert "locals/ins/outs/sizes name variables of the custom code, but the entry has no code:" in err


def test_local_shadowing_an_argument(tmp_path: Path):
    ws = make(tmp_path, """\
      relu_:
        call: diopiReluInp(ctx, self)
        ins: [self]
        code:
          beginning: "// nothing\\n"
    """)
    (err,) = errors(ws)
    assert "'self' is an argument of relu_, not a local of the custom code" in err


def test_fresh_return_needs_alloc_or_locals(tmp_path: Path):
    ws = make(tmp_path, """\
      relu:
        call: diopiRelu(ctx, out, self)
        code:
          beginning: |
            auto out = nodispatch::empty_like(self);
    """)
    (err,) = errors(ws)
    assert "relu returns a new tensor 'out'" in err


def test_returns_length(tmp_path: Path):
    ws = make(tmp_path, """\
      relu:
        call: diopiRelu(ctx, y, self)
        returns: [y, z]
        alloc:
          y: nodispatch::empty_like(self)
    """)
    (err,) = errors(ws)
    assert "relu has 1 return(s), not 2" in err


def test_no_device_check_must_name_a_tensor(tmp_path: Path):
    ws = make(tmp_path, """\
      add.out:
        call: diopiAdd(ctx, out, self, other, alpha)
        no_device_check: [alpha]
    """)
    (err,) = errors(ws)
    assert "'alpha' is not a device-checked tensor of add.out" in err


def test_dummy_call_needs_code(tmp_path: Path):
    ws = make(tmp_path, """\
      relu_:
        call: diopiReluInp(ctx, self)
        dummy_call: true
    """)
    (err,) = errors(ws)
    assert f"ops.yaml:{line_of(ws, 'dummy_call')}:" in err
    assert "dummy_call skips DIOPI" in err


def test_dummy_call_conflicts_with_fallback_block(tmp_path: Path):
    ws = make(tmp_path, """\
      relu_:
        call: diopiReluInp(ctx, self)
        dummy_call: true
        fallback_to_cpu: true
        code:
          beginning: "return self;\\n"
    """)
    (err,) = errors(ws)
    assert f"ops.yaml:{line_of(ws, 'fallback_to_cpu')}:" in err
    assert f"dummy_call is set at " in err and f"ops.yaml:{line_of(ws, 'dummy_call')}:" in err.split("dummy_call is set at")[1]


def test_force_fallback_needs_custom_fallback(tmp_path: Path):
    ws = make(tmp_path, """\
      addmm.out:
        call: diopiAddmm(ctx, out, self, mat1, mat2, beta, alpha)
        force_fallback: true
    """)
    (err,) = errors(ws)
    assert "force_fallback needs custom_fallback: true" in err


def test_register_false_conflicts(tmp_path: Path):
    ws = make(tmp_path, """\
      addmm.out:
        call: diopiAddmm(ctx, out, self, mat1, mat2, beta, alpha)
        register: false
        custom_fallback: true
    """)
    (err,) = errors(ws)
    assert "custom_fallback has no effect: the op is not registered (register: false at" in err


def test_vendor_autocompare_on_unregistered_op(tmp_path: Path):
    ws = make(tmp_path, """\
      relu_:
        call: diopiReluInp(ctx, self)
        register: false
    """, VENDOR + "ops:\n  relu_:\n    autocompare: true\n")
    (err,) = errors(ws)
    assert f"droplet.yaml:{line_of(ws, 'autocompare', 'vendors/droplet.yaml')}:" in err
    assert f"register: false at " in err and "ops.yaml:" in err


def test_helper_with_its_own_schema(tmp_path: Path):
    """An unregistered entry with a schema is a helper, also when torch has an op of its name: its
    schema need not be torch's (topsrider's max_pool2d_backward takes input and Tensor? indices),
    and a vendor cannot register it."""
    catalog = """\
      max_pool2d_backward:
        schema: max_pool2d_backward(Tensor grad_output, Tensor input, int[2] kernel_size, int[2] stride, int[2] padding, int[2] dilation, bool ceil_mode, Tensor? indices=None) -> Tensor
        call: diopiMaxPool2dBackward(ctx, out, grad_output, input, kernel_size, stride, padding, dilation, ceil_mode, indices)
        alloc:
          out: nodispatch::empty(input.sizes(), grad_output.options())
        register: false
    """
    ws = make(tmp_path, catalog)
    result = run_cli("validate", cwd=ws)
    assert result.exit_code == 0, result.output
    ws = make(tmp_path / "registered", catalog, VENDOR + "ops:\n  max_pool2d_backward:\n    register: true\n")
    (err,) = errors(ws)
    assert f"droplet.yaml:{line_of(ws, 'register: true', 'vendors/droplet.yaml')}:" in err
    assert "is a helper with its own schema" in err and "a helper is never registered" in err


def test_vendor_register_override_and_memory_format_are_validated(tmp_path: Path):
    ws = make(tmp_path, """\
      relu_:
        call: diopiReluInp(ctx, self)
    """, VENDOR + "ops:\n  relu_:\n    memory_format: nhwc\n")
    (err,) = errors(ws)
    assert "'nhwc' is not one of: contiguous, channels_last, preserve" in err


def test_autograd_references_and_kind(tmp_path: Path):
    ws = make(tmp_path, """\
      relu:
        call: diopiRelu(ctx, out, self)
        alloc:
          out: nodispatch::empty_like(self)
        autograd:
          backward: threshold_backward
          return_code: "return {result};\\n"
      relu_:
        call: diopiReluInp(ctx, self)
        autograd:
          backward: relu
          return_code: "return {result};\\n"
    """)
    errs = errors(ws)
    assert any("'threshold_backward' is not in the op catalog" in e for e in errs)
    assert any("autograd wraps functional ops only; relu_ is inplace" in e for e in errs)


def test_autograd_requires_return_code(tmp_path: Path):
    ws = make(tmp_path, """\
      relu:
        call: diopiRelu(ctx, out, self)
        alloc:
          out: nodispatch::empty_like(self)
        autograd:
          backward: relu
    """)
    (err,) = errors(ws)
    assert "missing required key 'return_code'" in err


def test_helper_ops(tmp_path: Path):
    ws = make(tmp_path, """\
      my_helper:
        call: diopiRelu(ctx, out, self)
    """)
    (err,) = errors(ws)
    assert "a DIPU-private helper needs schema: and register: false" in err
    ws = make(tmp_path / "b", """\
      my_helper:
        schema: "my_helper(Tensr self) -> Tensor"
        register: false
        call: diopiRelu(ctx, out, self)
    """)
    (err,) = errors(ws)
    assert re.search(r"ops\.my_helper\.schema: not a valid ATen schema", err)


def test_dummy_call_checks_the_function_but_not_the_arguments(tmp_path: Path):
    ws = make(tmp_path, """\
      relu_:
        call: diopiReluInp(ctx, self, notAnArgument)
        dummy_call: true
        code:
          beginning: "return self;\\n"
    """)
    result = run_cli("validate", cwd=ws)
    assert result.exit_code == 0, result.output
    ws = make(tmp_path / "b", """\
      relu_:
        call: diopiReluInpX(ctx, self)
        dummy_call: true
        code:
          beginning: "return self;\\n"
    """)
    (err,) = errors(ws)
    assert "'diopiReluInpX' is not a DIOPI operator" in err


# ---------------------------------------------------------------- vendor replace: (per-vendor definitions)

REPLACE_CATALOG = """\
    abs.out:
      call: diopiAbs(ctx, out, self)
      autocompare: false
    """


def test_replace_is_checked_like_a_catalog_entry(tmp_path: Path):
    ws = make(tmp_path, REPLACE_CATALOG, VENDOR + dedent("""\
        ops:
          abs.out:
            replace:
              call: diopiAbs(ctx, out, selff)
              dummy_call: true
              fallback_to_cpu: true
              colour: red
        """))
    errs = errors(ws)
    vendor = "vendors/droplet.yaml"
    assert any(re.search(rf"{vendor}:{line_of(ws, 'colour', vendor)}:\d+: error: ops\S*abs\.out\S*replace\S*colour: "
                         r"unknown key 'colour'", e) for e in errs), errs
    # Schema errors stop there; fix the key and the semantic checks of a catalog entry apply.
    text = (ws / vendor).read_text().replace("      colour: red\n", "")
    (ws / vendor).write_text(text)
    errs = errors(ws)
    assert any(re.search(rf"{vendor}:{line_of(ws, 'fallback_to_cpu', vendor)}:\d+: error: \S*replace\S*fallback_to_cpu: "
                         r"the CPU-fallback block can never run: dummy_call is set at \S*droplet\.yaml:\d+", e)
               for e in errs), errs
    text = text.replace("      dummy_call: true\n      fallback_to_cpu: true\n", "")
    (ws / vendor).write_text(text)
    errs = errors(ws)
    assert any(re.search(rf"{vendor}:\d+:\d+: error: \S*replace\S*call: 'selff' is not an argument of abs\.out", e)
               for e in errs), errs


def test_replace_conflicts_name_both_places(tmp_path: Path):
    ws = make(tmp_path, REPLACE_CATALOG, VENDOR + dedent("""\
        ops:
          abs.out:
            enabled: true
            autocompare: true
            replace:
              call: diopiAbs(ctx, out, self)
              enabled: false
              autocompare: false
        """))
    vendor = "vendors/droplet.yaml"
    errs = errors(ws)
    enabled_outer = line_of(ws, "enabled: true", vendor)
    assert any(re.search(rf"{vendor}:{line_of(ws, 'enabled: false', vendor)}:\d+: error: \S*replace\S*enabled: "
                         rf"'enabled' is also set beside replace: at \S*droplet\.yaml:{enabled_outer}:", e)
               for e in errs), errs
    assert any(re.search(rf"{vendor}:{line_of(ws, 'autocompare: true', vendor)}:\d+: error: \S*autocompare: conflicts "
                         rf"with the vendor's replacement, which marks abs\.out as not comparable at "
                         rf"\S*droplet\.yaml:{line_of(ws, 'autocompare: false', vendor)}:", e) for e in errs), errs


def test_replace_changes_only_that_vendor(tmp_path: Path):
    ws = make(tmp_path, """\
        abs.out:
          call: diopiAbs(ctx, out, self)
        """, VENDOR + dedent("""\
        ops:
          abs.out:
            replace:
              call: diopiNeg(ctx, out, self)
              autocompare: false
        """))
    (ws / "vendors" / "other.yaml").write_text("vendor:\n  name: other\n  device_type: OTHER\n")
    result = run_cli("render", "--all", "--autocompare", cwd=ws)
    assert result.exit_code == 0, result.output
    mine = kernels(ws / "generated" / "droplet", pasted=False)
    other = kernels(ws / "generated" / "other", pasted=False)
    assert '_REGISTER("abs.out", ::diopiNeg, dipu::native::dipu_abs_out);' in mine
    assert "NO_CUSTOMFALLBACK_NO_AUTOCOMPARE_REGISTER(\"abs.out\"" in mine and "dipu_abs_out_autocompare" not in mine
    assert 'NO_CUSTOMFALLBACK_WITH_AUTOCOMPARE_REGISTER("abs.out", ::diopiAbs, dipu::native::dipu_abs_out);' in other
    manifest = (ws / "generated" / "droplet" / "manifest.json").read_text()
    assert '"definition": "vendor"' in manifest


# ---------------------------------------------------------------- the wrapper's scope, empty expressions


def render_errors(ws: Path) -> list[str]:
    """The errors of `render --all`, which must fail and write nothing."""
    errs = error_lines(run_cli("render", "--all", cwd=ws))
    assert not (ws / "generated").exists()
    return errs


@pytest.mark.parametrize("expr", ["'/* nothing */'", "''", "'   '", '"\\n"', "'/* a */ /* b */'"])
def test_empty_alloc_expression(tmp_path: Path, expr: str):
    ws = make(tmp_path, f"""\
      add.Tensor:
        call: diopiAdd(ctx, out, self, other, alpha)
        alloc:
          out: {expr}
    """)
    (err,) = render_errors(ws)
    assert f"ops.yaml:{line_of(ws, 'out: ')}:" in err
    assert "ops[add.Tensor].alloc.out: the expression is empty (only blanks or comments)" in err


def test_empty_alloc_expression_in_a_replacement(tmp_path: Path):
    ws = make(tmp_path, """\
      add.Tensor:
        call: diopiAdd(ctx, out, self, other, alpha)
        alloc:
          out: nodispatch::empty_like(self)
    """, VENDOR + dedent("""\
        ops:
          add.Tensor:
            replace:
              call: diopiAdd(ctx, out, self, other, alpha)
              alloc:
                out: /* later */
        """))
    vendor = "vendors/droplet.yaml"
    (err,) = render_errors(ws)
    assert f"{vendor}:{line_of(ws, 'out: /*', vendor)}:" in err
    assert "ops[add.Tensor].replace.alloc.out: the expression is empty" in err


def test_comment_only_call_argument(tmp_path: Path):
    ws = make(tmp_path, """\
      abs.out:
        call: diopiAbs(ctx, out, /* self */)
    """)
    (err,) = render_errors(ws)
    assert f"ops.yaml:{line_of(ws, 'call:')}:" in err
    assert "ops[abs.out].call: argument 3 ('/* self */') is empty" in err


@pytest.mark.parametrize("name", sorted(WRAPPER_LOCALS) + ["outDiopiTensorHandle", "tDiopiTensorHandle"])
def test_locals_may_not_name_what_the_wrapper_declares(tmp_path: Path, name: str):
    ws = make(tmp_path, f"""\
      abs.out:
        call: diopiAbs(ctx, out, t)
        ins: [t]
        locals: [{name}]
        code:
          beginning: |
            at::Tensor t = self;
            int {name} = 0;
    """)
    (err,) = render_errors(ws)
    assert f"ops.yaml:{line_of(ws, 'locals:')}:" in err
    assert f"ops[abs.out].locals: '{name}' is declared by the generated wrapper" in err


def test_a_converted_form_the_call_does_not_pass_may_be_a_local(tmp_path: Path):
    # DIPU's norm.out declares dimDiopiSize itself and passes it: the wrapper then declares none.
    ws = make(tmp_path, """\
      norm.out:
        call: diopiNorm(ctx, out, self, p, dimDiopiSize)
        locals: [dimDiopiSize]
        code:
          beginning: |
            ::diopiSize_t dimDiopiSize = toDiopiSize(dim);
    """)
    result = run_cli("validate", cwd=ws)
    assert result.exit_code == 0, result.output


def test_wrapper_locals_are_what_the_template_declares(tmp_path: Path):
    """WRAPPER_LOCALS lists every name a rendered wrapper declares in its function scope
    besides converted forms (<name>DiopiTensorHandle, ...): a new one in the template fails here."""
    ws = tmp_path / "ws"
    (ws / "vendors").mkdir(parents=True)
    (ws / "vendors" / "droplet.yaml").write_text(VENDOR)    # the bundled catalog, every switch at its default
    result = run_cli("render", "--all", cwd=ws)
    assert result.exit_code == 0, result.output
    text = kernels(ws / "generated" / "droplet", pasted=False)    # custom code is not pasted in
    bodies = re.findall(r"^\S[^\n]* dipu_\w+(?<!_autocompare)(?<!_wrapper)\([^\n]*\) \{\n(.*?)^\}$", text, re.S | re.M)
    assert len(bodies) > 200
    declaration = re.compile(r"^  (?:\[\[maybe_unused\]\] )?(?:const )?(?!return\b)[\w:<>]+[ &*]+(\w+) *[=({;]", re.M)
    declared = {name for body in bodies for name in declaration.findall(body)}
    suffixes = tuple(set(LOCAL_SUFFIX.values()) | set(AUX_SUFFIX.values()))
    own = {name for name in declared if not name.endswith(suffixes)}
    assert own == set(WRAPPER_LOCALS)


def test_ins_listed_twice(tmp_path: Path):
    ws = make(tmp_path, """\
      abs.out:
        call: diopiAbs(ctx, out, t)
        ins: [t, t?]
        code:
          beginning: |
            at::Tensor t = self;
    """)
    (err,) = render_errors(ws)
    assert f"ops.yaml:{line_of(ws, 'ins:')}:" in err
    assert "ops[abs.out].ins: 't' is listed twice (ins: t and ins: t?)" in err


@pytest.mark.parametrize("name", ["context", "ctx", "ret", "class", "namespace"])
def test_schema_argument_named_like_a_wrapper_local_or_a_keyword(tmp_path: Path, name: str):
    ws = make(tmp_path, f"""\
      add.out:
        schema: "aten::add.out(Tensor self, Tensor {name}, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)"
        call: diopiAdd(ctx, out, self, {name}, alpha)
    """)
    (err,) = render_errors(ws)
    assert f"ops.yaml:{line_of(ws, 'schema:')}:" in err
    assert f"ops[add.out].schema: argument '{name}' of add.out " in err
    assert ("C++ keyword" in err) == (name in ("class", "namespace"))


def test_import_skips_an_entry_whose_argument_is_a_wrapper_local(tmp_path: Path):
    functions = tmp_path / "diopi_functions.yaml"
    functions.write_text('- schema: "aten::add.out(Tensor self, Tensor context, *, Scalar alpha=1, Tensor(a!) out) '
                         '-> Tensor(a!)"\n  interface: diopiAdd(ctx, out, self, context, alpha)\n')
    result = run_cli("import-dipu", "--functions", str(functions), "--vendors", "camb", "--out", str(tmp_path / "ws"))
    assert result.exit_code == 0, result.output
    assert "diopi_functions.yaml:1:1: warning: 'add.out' is not valid for deeplink-gen: argument 'context'" in result.stderr
    assert "add.out" not in (tmp_path / "ws" / "catalog" / "dipu.yaml").read_text()
