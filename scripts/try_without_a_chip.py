#!/usr/bin/env python3
"""Try deeplink-gen without a chip: DIPU built for the hostsim vendor, and DIPU's own unit tests run on it.

Given a deeplink.framework checkout (DIPU 9dd38082 with its submodules) and a Python with torch 2.2.2,
this does each step of docs/hostsim.md in order, printing what it does; a step that fails stops the run
and says what to fix. Its steps:

  check        the checkout, its submodules, the tools, and the Python (torch 2.2.2 and what the tests import)
  render       deeplink-gen render --vendor hostsim --into the checkout
  patch        DIPU 9dd38082's one line that gcc >= 11 rejects
  torch-cmake  a copy of torch's CMake config with its CUDA parts off (no CUDA toolkit is needed)
  diopi        hostsim's DIOPI library, libdiopi_impl.so on ATen's CPU kernels
  configure    DIPU, with -DDEVICE=hostsim and that library
  build        DIPU
  smoke        import torch_dipu and add two tensors on the device
  tests        each of DIPU's unit test files in its own process, with a time limit

The results go to WORK/results.md: each test file's result and time, the cause of each failure, and
which of the library's functions each file reached (DEEPLINK_GEN_REACHED); logs go to WORK/logs/.
Only the standard library is used, and torch is only ever imported by the Python given with --python.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DIPU_COMMIT = "9dd38082"
TORCH = "2.2.2"
# What the Python needs: torch with the CUDA wheels it loads at import, and what DIPU's tests import.
PIP = f"-m pip install torch=={TORCH} 'numpy<2' expecttest torchvision==0.17.2"
SUBMODULES = ("dipu/third_party/DIOPI/proto/include/diopi/functions.h",
              "dipu/third_party/kineto/libkineto/CMakeLists.txt",
              "dipu/third_party/kineto/libkineto/third_party/fmt/CMakeLists.txt")
LIBRARY = "dipu/third_party/DIOPI/impl/hostsim"
STEPS = ("check", "render", "patch", "torch-cmake", "diopi", "configure", "build", "smoke", "tests")
# torch's CMake files hard-code its CUDA build as `if(ON)` blocks; each edit turns one off: (file, a
# line inside the block, which names it). Caffe2Targets.cmake's `torch` target is handled apart.
CUDA_BLOCKS = (("Caffe2/Caffe2Config.cmake", "public/cuda.cmake"),
               ("Torch/TorchConfig.cmake", "TORCH_CUDA_LIBRARIES"))
TORCH_TARGET = ('INTERFACE_LINK_LIBRARIES "torch_cpu_library;torch_cuda_library"',
                'INTERFACE_LINK_LIBRARIES "torch_cpu_library"')
# DIPU 9dd38082's DIPUEvent.h declares a constexpr move constructor that gcc >= 11 rejects.
EVENT_HEADER = "dipu/torch_dipu/csrc_dipu/runtime/core/DIPUEvent.h"
EVENT_LINE = re.compile(r"^(\s*)constexpr (DIPUEvent\(DIPUEvent&& other\) noexcept)$", re.M)
# Run by the given Python: where torch is (found without importing it), then what imports.
PROBE = textwrap.dedent("""
    import importlib, importlib.util, json, os
    spec = importlib.util.find_spec("torch")
    out = {"torch_dir": os.path.dirname(spec.origin) if spec and spec.origin else None, "imports": {}}
    for name in ("torch", "numpy", "expecttest", "torchvision"):
        try:
            out["imports"][name] = getattr(importlib.import_module(name), "__version__", "")
        except Exception as e:
            out["imports"][name] = "error: " + (str(e).splitlines() or [type(e).__name__])[0]
    print(json.dumps(out))
""")


class Failure(Exception):
    """A step that cannot go on; the message says what to fix."""


@dataclasses.dataclass(frozen=True)
class Run:
    checkout: Path
    python: Path
    work: Path
    jobs: int
    timeout: int
    tests: str

    @property
    def dipu(self) -> Path:
        return self.checkout / "dipu"

    @property
    def logs(self) -> Path:
        return self.work / "logs"

    @property
    def torch_copy(self) -> Path:
        return self.work / "torch"

    def env(self) -> dict[str, str]:
        """The environment of every build and test command: the given Python is `python` on PATH
        (DIPU's CMake calls `python` by name)."""
        env = dict(os.environ, PATH=f"{self.work / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
        env.pop("PYTHONPATH", None)
        return env


def say(text: str) -> None:
    print(text, flush=True)


def command(run: Run, name: str, argv: list[str], cwd: Path, env: dict[str, str] | None = None,
            fix: str = "", echo: bool = False) -> None:
    """Runs *argv*, its output going to logs/NAME.log and echoed (*echo*) or, for a build, its progress
    lines every 30 s; on failure, the log's tail and *fix*."""
    run.logs.mkdir(parents=True, exist_ok=True)
    log_path = run.logs / f"{name}.log"
    say(f"    $ {shlex.join(argv)}")
    shown = 0.0
    with open(log_path, "w") as log, subprocess.Popen(argv, cwd=cwd, env=env or run.env(), stdout=subprocess.PIPE,
                                                     stderr=subprocess.STDOUT, text=True, errors="replace") as proc:
        for line in proc.stdout:
            log.write(line)
            progress = re.match(r"\[(\d+)/(\d+)\]", line)
            if echo:
                say(f"    {line.rstrip()}")
            elif progress and (int(progress[1]) == int(progress[2]) or time.monotonic() - shown > 30):
                say(f"    {line.strip()[:110]}")
                shown = time.monotonic()
    if proc.returncode != 0:
        tail = log_path.read_text(errors="replace").splitlines()[-25:]
        raise Failure("\n".join([f"`{argv[0]}` exited with {proc.returncode}; the end of {log_path}:",
                                 *("    " + t for t in tail), *([fix] if fix else [])]))


def probe(run: Run) -> dict:
    try:
        done = subprocess.run([str(run.python), "-c", PROBE], capture_output=True, text=True, timeout=300)
    except OSError as e:
        raise Failure(f"--python {run.python} cannot run: {e.strerror}") from None
    if done.returncode != 0:
        raise Failure(f"--python {run.python} failed to start:\n{done.stderr.strip()}")
    return json.loads(done.stdout.splitlines()[-1])


def step_check(run: Run) -> dict:
    if not (run.dipu / "CMakeLists.txt").is_file() or not (run.dipu / "torch_dipu").is_dir():
        raise Failure(f"{run.checkout} is not a deeplink.framework checkout: it has no dipu/CMakeLists.txt "
                      "and dipu/torch_dipu/")
    head = subprocess.run(["git", "-C", str(run.checkout), "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode != 0:
        raise Failure(f"{run.checkout} is not a git checkout, and DIPU's CMake runs `git rev-parse`: clone it with "
                      "`git clone --recursive https://github.com/DeepLink-org/deeplink.framework`")
    if not head.stdout.startswith(DIPU_COMMIT):
        say(f"    warning: the checkout is at {head.stdout[:8]}; this was made for DIPU {DIPU_COMMIT}")
    missing = [m for m in SUBMODULES if not (run.checkout / m).is_file()]
    if missing:
        raise Failure(f"a submodule is missing ({missing[0]}): run `git -C {run.checkout} submodule update --init "
                      "--recursive`")
    for tool in ("cmake", "g++", "git"):
        if shutil.which(tool) is None:
            raise Failure(f"`{tool}` is not on PATH: install it")
    found = probe(run)
    imports, install = found["imports"], f"{run.python} {PIP}"
    if found["torch_dir"] is None:
        raise Failure(f"{run.python} has no torch: `{install}`")
    version = re.search(r"^__version__ = '([^'+]*)", (Path(found["torch_dir"]) / "version.py").read_text(), re.M)
    if version is None or version[1] != TORCH:
        raise Failure(f"{run.python} has torch {version[1] if version else '(unknown)'}, and hostsim's library is "
                      f"rendered for torch "
                      f"{TORCH}, which DIPU {DIPU_COMMIT} supports: use a Python with `{install}`")
    for name in ("torch", "numpy", "expecttest"):
        if imports[name].startswith("error"):
            raise Failure(f"{run.python} cannot import {name} ({imports[name][7:]}): `{install}` installs it and, "
                          "for torch, the CUDA runtime wheels it loads (no GPU is needed)")
    if not imports["numpy"].startswith("1."):
        raise Failure(f"torch {TORCH} needs numpy < 2, and {run.python} has {imports['numpy']}: `{install}`")
    if imports["torchvision"].startswith("error"):
        say(f"    warning: no torchvision: the test files that import it fail (`{install}`)")
    if subprocess.run([sys.executable, "-m", "deeplink_gen", "--version"], cwd=REPO, capture_output=True).returncode:
        raise Failure(f"{sys.executable} cannot run deeplink-gen: `{sys.executable} -m pip install -e {REPO}`, "
                      "or run this script with the Python that has it")
    wrapper = run.work / "bin" / "python"
    wrapper.parent.mkdir(parents=True, exist_ok=True)
    wrapper.write_text(f"#!/bin/sh\nexec {shlex.quote(str(run.python))} \"$@\"\n")
    wrapper.chmod(0o755)
    say(f"    torch {imports['torch']} at {found['torch_dir']}")
    return found


def step_render(run: Run, found: dict) -> None:
    command(run, "render", [sys.executable, "-m", "deeplink_gen", "-C", str(REPO), "render", "--vendor", "hostsim",
                            "--into", str(run.checkout)], cwd=REPO, env=dict(os.environ), echo=True)


def step_patch(run: Run, found: dict) -> None:
    header = run.checkout / EVENT_HEADER
    text = header.read_text()
    if EVENT_LINE.search(text):
        header.write_text(EVENT_LINE.sub(r"\1\2", text))
        say(f"    {EVENT_HEADER}: dropped `constexpr` from DIPUEvent's move constructor (gcc >= 11 rejects it)")
    else:
        say(f"    {EVENT_HEADER}: nothing to change")


def step_torch_cmake(run: Run, found: dict) -> None:
    torch_dir = Path(found["torch_dir"])
    copy = run.torch_copy
    shutil.rmtree(copy, ignore_errors=True)
    for part in ("Torch", "Caffe2", "ATen"):
        shutil.copytree(torch_dir / "share" / "cmake" / part, copy / "share" / "cmake" / part, symlinks=True)
    for part in ("include", "lib"):
        (copy / part).symlink_to(torch_dir / part)
    for name, marker in CUDA_BLOCKS:
        path = copy / "share" / "cmake" / name
        lines = path.read_text().splitlines(keepends=True)
        blocks = [i for i, line in enumerate(lines) if line.rstrip() == "if(ON)"
                  and marker in "".join(lines[i:_block_end(lines, i)])]
        if len(blocks) != 1:
            raise Failure(f"{torch_dir / 'share/cmake' / name}: expected one `if(ON)` block naming {marker}, found "
                          f"{len(blocks)}: is this torch {TORCH}'s CUDA wheel?")
        lines[blocks[0]] = "if(OFF)  # CUDA off: no CUDA toolkit\n"
        path.write_text("".join(lines))
    targets = copy / "share" / "cmake" / "Caffe2" / "Caffe2Targets.cmake"
    text = targets.read_text()
    if text.count(TORCH_TARGET[0]) != 1:
        raise Failure(f"{targets.name}: target torch does not link {TORCH_TARGET[0]}: is this torch {TORCH}?")
    targets.write_text(text.replace(*TORCH_TARGET))
    say(f"    {copy / 'share/cmake'}: Caffe2Config, TorchConfig and Caffe2Targets without CUDA")


def _block_end(lines: list[str], start: int) -> int:
    """The line after the `endif()` that closes the column-0 block opened at *start*."""
    for i in range(start + 1, len(lines)):
        if lines[i].startswith("endif("):
            return i + 1
    return len(lines)


def _generator() -> list[str]:
    return ["-G", "Ninja"] if shutil.which("ninja") else []


def step_diopi(run: Run, found: dict) -> None:
    build = run.work / "build-diopi"
    command(run, "diopi-configure", ["cmake", "-S", str(run.checkout / LIBRARY), "-B", str(build), *_generator(),
                                     "-DCMAKE_BUILD_TYPE=Release", f"-DTORCH_DIR={found['torch_dir']}"],
            cwd=run.work)
    command(run, "diopi-build", ["cmake", "--build", str(build), "-j", str(run.jobs)], cwd=run.work)


def step_configure(run: Run, found: dict) -> None:
    cmake = run.torch_copy / "share" / "cmake"
    # In the checkout: DIPU's CMake runs `git rev-parse` in the current folder.
    command(run, "configure", ["cmake", "-S", str(run.dipu), "-B", str(run.work / "build-dipu"), *_generator(),
                               "-DCMAKE_BUILD_TYPE=Release", "-DDEVICE=hostsim", "-DENABLE_LTO=OFF",
                               f"-DWITH_DIOPI_LIBRARY={run.work / 'build-diopi'}", f"-DTorch_DIR={cmake / 'Torch'}",
                               f"-DCaffe2_DIR={cmake / 'Caffe2'}", f"-DPython3_EXECUTABLE={run.python}"],
            cwd=run.dipu)


def step_build(run: Run, found: dict) -> None:
    command(run, "build", ["cmake", "--build", str(run.work / "build-dipu"), "-j", str(run.jobs)], cwd=run.dipu,
            fix="a compile error in a file deeplink-gen wrote (`@generated by deeplink-gen`) is deeplink-gen's to fix")


def step_smoke(run: Run, found: dict) -> None:
    code = ("import torch, torch_dipu; x = torch.arange(6.).cuda(); y = (x + x).cpu(); "
            "assert y.tolist() == [0, 2, 4, 6, 8, 10], y; print('x + x on', x.device, '->', y.tolist())")
    command(run, "smoke", [str(run.python), "-c", code], cwd=run.dipu, env=_test_env(run, None))
    say("    " + (run.logs / "smoke.log").read_text().strip().splitlines()[-1])


def _test_env(run: Run, reached: Path | None) -> dict[str, str]:
    env = dict(run.env(), PYTHONPATH=str(run.dipu))
    if reached is not None:
        env["DEEPLINK_GEN_REACHED"] = str(reached)
    return env


@dataclasses.dataclass(frozen=True)
class Outcome:
    file: str
    result: str           # pass, fail, timeout or crash
    seconds: float
    cause: str
    reached: frozenset[str]


def run_test(run: Run, path: Path) -> Outcome:
    reached = run.work / "reached" / f"{path.stem}.txt"
    reached.parent.mkdir(parents=True, exist_ok=True)
    reached.unlink(missing_ok=True)
    log_path = run.logs / "tests" / f"{path.stem}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    with open(log_path, "w") as log:
        proc = subprocess.Popen([str(run.python), str(path)], cwd=run.dipu, env=_test_env(run, reached), stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
        try:
            code = proc.wait(timeout=run.timeout)
        except subprocess.TimeoutExpired:
            code = None
        finally:                      # a timeout, or Ctrl-C: the file's own session keeps no child
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    seconds = time.monotonic() - start
    output = log_path.read_text(errors="replace")
    names = frozenset(reached.read_text().split()) if reached.is_file() else frozenset()
    if code is None:
        return Outcome(path.name, "timeout", seconds, f"still running after {run.timeout} s", names)
    if code < 0:
        return Outcome(path.name, "crash", seconds, f"killed by {signal.Signals(-code).name}", names)
    if code == 0:
        skipped = re.search(r"^OK \(skipped=(\d+)\)", output, re.M)
        return Outcome(path.name, "pass", seconds, f"{skipped[1]} skipped" if skipped else "", names)
    return Outcome(path.name, "fail", seconds, cause(output), names)


def cause(output: str) -> str:
    """What made a test file fail: its first failing test and the exception it ended with, or the
    last exception in the output (an error before any test ran)."""
    exception = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit)\b.*)$", re.M)
    first = re.search(r"^(?:FAIL|ERROR): (\S+)[^\n]*\n(?:(?![-=]{20,})[^\n]*\n)*?[-=]{20,}\n(.*?)(?=^[-=]{20,}$|\Z)", output, re.M | re.S)
    if first:
        raised = exception.findall(first[2])
        return f"{first[1]}: {(raised or [first[2].strip().splitlines()[-1]])[-1].strip()}"
    raised = exception.findall(output)
    lines = [line for line in output.splitlines() if line.strip()]
    return (raised or lines or ["exited with an error and no output"])[-1].strip()


def step_tests(run: Run, found: dict) -> None:
    files = sorted((run.dipu / "tests" / "python" / "unittests").glob(run.tests))
    if not files:
        raise Failure(f"no test file matches {run.tests} in {run.dipu / 'tests/python/unittests'}")
    outcomes = []
    for i, path in enumerate(files, 1):
        outcome = run_test(run, path)
        outcomes.append(outcome)
        say(f"    [{i}/{len(files)}] {outcome.file}: {outcome.result} ({outcome.seconds:.0f} s)"
            + (f": {outcome.cause[:100]}" if outcome.result not in ("pass",) else ""))
    implemented = sorted(set(re.findall(r"^diopiError_t (diopi\w+)\(",
                                        (run.checkout / LIBRARY / "functions" / "functions.cpp").read_text(), re.M)))
    report = results(outcomes, implemented)
    (run.work / "results.md").write_text(report)
    say("\n" + report.split("\n\n| file")[0])
    say(f"\nthe table: {run.work / 'results.md'}; each file's output: {run.logs / 'tests'}")


def _cell(cause: str, width: int = 240) -> str:
    """A cause as one table cell: the log holds the rest."""
    cause = cause.replace("|", "/")
    return cause if len(cause) <= width else cause[:width - 3] + "..."


def results(outcomes: list[Outcome], implemented: list[str]) -> str:
    counts = {r: sum(o.result == r for o in outcomes) for r in ("pass", "fail", "timeout", "crash")}
    reached = set().union(*(o.reached for o in outcomes)) & set(implemented)
    none = [o.file for o in outcomes if o.result == "pass" and not o.reached]
    lines = [f"# DIPU's unit tests on hostsim",
             "",
             f"{len(outcomes)} files: " + ", ".join(f"{n} {r}" for r, n in counts.items()) + ".",
             f"They reached {len(reached)} of the {len(implemented)} functions hostsim's DIOPI library implements; "
             f"{len(none)} of the files that pass reached none (they pass without the library).",
             "",
             "| file | result | seconds | functions reached | cause |",
             "|---|---|---|---|---|"]
    lines += [f"| {o.file} | {o.result} | {o.seconds:.0f} | {len(o.reached)} | {_cell(o.cause)} |" for o in outcomes]
    lines += ["", "Functions no file reached: " + (", ".join(sorted(set(implemented) - reached)) or "none"), ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog="Steps: " + ", ".join(STEPS)
                                     + ". See docs/hostsim.md.")
    parser.add_argument("--dipu", type=Path, required=True, metavar="CHECKOUT",
                        help="a deeplink.framework checkout (git, with its submodules)")
    parser.add_argument("--python", type=Path, default=Path(sys.executable),
                        help=f"the Python with torch {TORCH} (default: this one); `PYTHON {PIP}` gives it all")
    parser.add_argument("--work", type=Path, help="where builds, logs and results go (default: CHECKOUT/build-hostsim)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="parallel compile jobs")
    parser.add_argument("--timeout", type=int, default=900, help="seconds each test file may run (default: 900)")
    parser.add_argument("--tests", default="test_*.py", help="which test files, a glob (default: test_*.py)")
    parser.add_argument("--from", dest="first", choices=STEPS[1:], help="start at this step (check always runs)")
    parser.add_argument("--to", dest="last", choices=STEPS, help="stop after this step")
    args = parser.parse_args(argv)
    checkout = args.dipu.resolve()
    run = Run(checkout, args.python.absolute(), (args.work or checkout / "build-hostsim").resolve(), args.jobs,
              args.timeout, args.tests)
    first = STEPS.index(args.first) if args.first else 1
    last = STEPS.index(args.last) if args.last else len(STEPS) - 1
    chosen = ["check", *STEPS[first:last + 1]] if last else ["check"]
    try:
        name = "check"
        say(f"[1/{len(chosen)}] check")
        found = step_check(run)
        for i, name in enumerate(chosen[1:], 2):
            say(f"[{i}/{len(chosen)}] {name}")
            globals()["step_" + name.replace("-", "_")](run, found)
    except Failure as e:
        say(f"error: {name}: {e}")
        return 1
    except KeyboardInterrupt:
        say(f"interrupted in step {name}")
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
