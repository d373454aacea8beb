"""Warnings: valid input that cannot work as written. A vendor that defines
eventElapsedTime while createEvent disables timing is warned about at the
createEvent line (in custom code: the line naming the flag), with exit 0 and
the output written; --strict makes it exit
1 and write nothing; the warning shows on every run, also when results come
from the cache; the bundled vendors and the scaffolds give none. A dtype DIPU
hands to DIOPI that is neither supported nor converted warns at dtypes.supported
unless dtypes.pass_through lists it, and explain names it per function."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from helpers import edit, line_of, run_cli, run_subprocess

TIMED = "createEvent: tangEventCreateWithFlags({event}, tangEventDefault)"
UNTIMED = "createEvent: tangEventCreateWithFlags({event}, tangEventDisableTiming)"
ELAPSED = "eventElapsedTime: tangEventElapsedTime({time}, {start}, {end})"


def warning_lines(result) -> list[str]:
    assert "Traceback" not in result.output
    return [line for line in result.stderr.splitlines() if ": warning: " in line]


def untimed(ws: Path) -> Path:
    """Make the droplet copy create events without timing; returns its file."""
    return edit(ws / "vendors" / "droplet.yaml", TIMED, UNTIMED)


def assert_create_event_warning(ws: Path, result) -> None:
    path = ws / "vendors" / "droplet.yaml"
    line = line_of(path, "createEvent:")
    (warning,) = warning_lines(result)
    assert re.match(rf"({re.escape(str(path))}|.*vendors/droplet\.yaml):{line}:\d+: warning: "
                    r"runtime\.device\.functions\.createEvent: creates events with tangEventDisableTiming", warning), warning
    assert f"(line {line_of(path, 'eventElapsedTime:')})" in warning
    assert "create timed events" in warning and "eventElapsedTime: unsupported" in warning


def test_untimed_events_warn_at_create_event_line(workspace: Path):
    untimed(workspace)
    result = run_cli("validate", cwd=workspace)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("ok: ")
    assert_create_event_warning(workspace, result)
    assert result.stderr.splitlines()[-1] == "1 warning"


def test_render_warns_and_writes(workspace: Path):
    untimed(workspace)
    result = run_cli("render", "--vendor", "droplet", cwd=workspace)
    assert result.exit_code == 0, result.output
    assert_create_event_warning(workspace, result)
    assert "tangEventDisableTiming" in (workspace / "generated/droplet/dipu/torch_dipu/csrc_dipu/vendor/droplet/"
                                        "deviceimpl.cpp").read_text()


def test_strict_exits_1_and_writes_nothing(workspace: Path):
    untimed(workspace)
    result = run_cli("validate", "--strict", cwd=workspace)
    assert result.exit_code == 1, result.output
    assert_create_event_warning(workspace, result)
    assert result.stderr.splitlines()[-1] == "1 warning, treated as errors (--strict)"
    assert not result.stdout.startswith("ok: ")
    result = run_cli("render", "--vendor", "droplet", "--strict", cwd=workspace)
    assert result.exit_code == 1, result.output
    assert len(warning_lines(result)) == 1
    assert not (workspace / "generated").exists()


def test_strict_without_warnings_passes(workspace: Path):
    result = run_cli("validate", "--strict", cwd=workspace)
    assert result.exit_code == 0, result.output
    assert warning_lines(result) == []


def test_warning_shows_again_from_the_cache(workspace: Path, monkeypatch):
    """The second runs load nothing (loading fails if tried), yet warn as the first."""
    untimed(workspace)
    first = run_cli("validate", cwd=workspace)
    rendered = run_cli("render", "--vendor", "droplet", cwd=workspace)
    assert first.exit_code == rendered.exit_code == 0
    import deeplink_gen.load.workspace
    from deeplink_gen import pipeline

    def not_again(*args, **kwargs):
        raise AssertionError("loaded although stored results were there")

    monkeypatch.setattr(deeplink_gen.load.workspace, "load_workspace", not_again)
    again = run_cli("validate", cwd=workspace)
    assert again.exit_code == 0, again.output
    assert warning_lines(again) == warning_lines(first)
    monkeypatch.setattr(pipeline, "check", not_again)
    again = run_cli("render", "--vendor", "droplet", cwd=workspace)       # unchanged output: the stamps
    assert again.exit_code == 0, again.output
    assert warning_lines(again) == warning_lines(first)
    assert again.stdout.startswith("0 written")
    shutil.rmtree(workspace / "generated")                              # rendered before: the render cache
    again = run_cli("render", "--vendor", "droplet", cwd=workspace)
    assert again.exit_code == 0, again.output
    assert warning_lines(again) == warning_lines(first)
    assert (workspace / "generated/droplet/manifest.json").is_file()
    strict = run_cli("render", "--vendor", "droplet", "--strict", cwd=workspace)
    assert strict.exit_code == 1 and warning_lines(strict) == warning_lines(first)


def test_warning_goes_once_fixed(workspace: Path):
    path = untimed(workspace)
    assert warning_lines(run_cli("validate", cwd=workspace))
    assert warning_lines(run_cli("render", "--vendor", "droplet", cwd=workspace))
    edit(path, UNTIMED, TIMED)
    assert warning_lines(run_cli("validate", cwd=workspace)) == []
    result = run_cli("render", "--vendor", "droplet", "--strict", cwd=workspace)
    assert result.exit_code == 0, result.output
    assert warning_lines(result) == []


def test_warning_in_separate_processes_is_the_same(workspace: Path):
    untimed(workspace)
    runs = [run_subprocess("-C", str(workspace), "validate") for _ in range(2)]
    assert [r.returncode for r in runs] == [0, 0], runs[0].stderr
    assert runs[0].stderr == runs[1].stderr
    (warning,) = [line for line in runs[0].stderr.splitlines() if ": warning: " in line]
    line = line_of(workspace / "vendors/droplet.yaml", "createEvent:")
    assert warning.startswith(f"{workspace / 'vendors/droplet.yaml'}:{line}:"), warning
    strict = run_subprocess("-C", str(workspace), "validate", "--strict")
    assert strict.returncode == 1 and "Traceback" not in strict.stderr
    assert warning in strict.stderr.splitlines()


def test_bundled_vendors_give_no_warnings(workspace: Path):
    result = run_cli("validate", "--strict", cwd=workspace)
    assert result.exit_code == 0, result.output
    assert ": warning: " not in result.output


@pytest.mark.parametrize("elapsed", ["unsupported", "noop"])
def test_no_elapsed_time_no_warning(workspace: Path, elapsed: str):
    path = untimed(workspace)
    edit(path, ELAPSED, f"eventElapsedTime: {elapsed}")
    result = run_cli("validate", "--strict", cwd=workspace)
    assert result.exit_code == 0, result.output
    assert warning_lines(result) == []


CUSTOM = "createEvent:\n        custom: |2\n            {body}\n"
# createEvent's text -> the text on the line warned about (None: no warning)
SPELLINGS = {
    "call with CUDA's flag": ("createEvent: cudaEventCreateWithFlags({event}, cudaEventDisableTiming)", "createEvent:"),
    "upper-case macro": ("createEvent: aclrtCreateEventWithFlag({event}, ACL_EVENT_DISABLE_TIMING)", "createEvent:"),
    "call of a mapping": ('createEvent: {call: "tangEventCreateWithFlags({event}, tangEventDisableTiming)"}',
                          "createEvent:"),
    "custom code": (CUSTOM.format(body="tangEvent_t* made = event;\n"
                                       "            DIPU_CALLDROPLET(tangEventCreateWithFlags(made, tangEventDisableTiming));"),
                    "DIPU_CALLDROPLET(tangEventCreateWithFlags(made"),
    "only in comments": (CUSTOM.format(body="// tangEventDisableTiming would break eventElapsedTime\n"
                                            "            /* so would cudaEventDisableTiming */\n"
                                            "            DIPU_CALLDROPLET(tangEventCreate(event));"), None),
    "timed": (TIMED, None),
}


@pytest.mark.parametrize("case", sorted(SPELLINGS))
def test_disable_timing_spellings(workspace: Path, case: str):
    text, needle = SPELLINGS[case]
    path = edit(workspace / "vendors" / "droplet.yaml", TIMED, text)
    result = run_cli("validate", "--vendor", "droplet", cwd=workspace)
    assert result.exit_code == 0, result.output
    found = warning_lines(result)
    assert len(found) == (0 if needle is None else 1), found
    if needle is not None:
        assert f"droplet.yaml:{line_of(path, needle)}:" in found[0], found[0]
        assert ": warning: runtime.device.functions.createEvent: " in found[0]


def test_warnings_are_listed_with_errors(workspace: Path):
    """An invalid workspace reports its warnings too, counted apart from its errors."""
    untimed(workspace)
    edit(workspace / "vendors" / "camb.yaml", "  device_type: MLU", "  device_typ: MLU")
    result = run_cli("validate", cwd=workspace)
    assert result.exit_code == 1
    assert len(warning_lines(result)) == 1
    errors = [line for line in result.stderr.splitlines() if ": error: " in line]
    assert errors and result.stderr.splitlines()[-1] == f"{len(errors)} error{'s' if len(errors) != 1 else ''}, 1 warning"


SCAFFOLD_DTYPES = ("# dtypes:\n#   supported: [bool, int8, uint8, int32, float16, float32]\n"
                   "#   convert: {int64: int32, float64: float32}\n")
DTYPES = "dtypes:\n  supported: [bool, int8, uint8, int32, float16, float32]\n  convert: {int64: int32, float64: float32}\n"


def dtyped_scaffold(ws: Path) -> Path:
    """A new-vendor scaffold whose dtypes section is switched on: DIPU's int16, bfloat16,
    complex64 and complex128 are neither supported nor converted."""
    result = run_cli("new-vendor", "acme", cwd=ws)
    assert result.exit_code == 0, result.output
    return edit(ws / "vendors" / "acme.yaml", SCAFFOLD_DTYPES, DTYPES)


def test_a_dtype_neither_supported_nor_converted_warns(workspace: Path):
    path = dtyped_scaffold(workspace)
    result = run_cli("validate", "--vendor", "acme", cwd=workspace)
    assert result.exit_code == 0, result.output
    (warning,) = warning_lines(result)
    assert re.match(rf"(.*/)?vendors/acme\.yaml:{line_of(path, 'supported:')}:\d+: warning: dtypes\.supported: "
                    r"int16, bfloat16, complex64, complex128 are neither supported nor converted by a common rule",
                    warning), warning
    assert "reach the vendor's DIOPI functions as they are" in warning and "error status" in warning
    assert "dtypes.pass_through" in warning
    assert run_cli("validate", "--vendor", "acme", "--strict", cwd=workspace).exit_code == 1
    explained = run_cli("explain", "relu.out", "--vendor", "acme", cwd=workspace)
    assert explained.exit_code == 0, explained.output
    (line,) = [l for l in explained.stdout.splitlines() if "passed through unconverted" in l]
    assert "int16, bfloat16, complex64, complex128 (" in line and "error status" in line


def test_pass_through_says_the_library_decides(workspace: Path):
    path = dtyped_scaffold(workspace)
    edit(path, "  convert: {int64: int32", "  pass_through: [int16, bfloat16, complex64, complex128]\n  convert: {int64: int32")
    result = run_cli("validate", "--vendor", "acme", "--strict", cwd=workspace)
    assert result.exit_code == 0, result.output
    assert warning_lines(result) == []
    explained = run_cli("explain", "relu.out", "--vendor", "acme", cwd=workspace)
    assert "passed through unconverted: int16, bfloat16, complex64, complex128" in explained.stdout
    edit(path, "pass_through: [int16, bfloat16,", "pass_through: [int16, float64, bfloat16,")
    result = run_cli("validate", "--vendor", "acme", cwd=workspace)
    assert result.exit_code == 1
    assert re.search(rf"vendors/acme\.yaml:{line_of(path, 'pass_through:')}:\d+: error: dtypes\.pass_through: "
                     r"float64 is converted by a common rule", result.stderr), result.stderr
