"""Measure what the generated kernels cost the build, as ratios within one run.

    python bench/compile.py --dipu CHECKOUT [--shards 2,4,8] [--pch 8] [--jobs 2]
                            [--torch-python PY] [--anatomy] [--time-report]

The edit-build loop, against DIPU's own generated kernels file for the same op file.
CHECKOUT is a deeplink.framework checkout at 9dd38082 with its submodules (DIOPI, and
kineto with its fmt). Its op file (dipu/scripts/autogen_diopi_wrapper/diopi_functions.yaml)
is imported for camb (`import-dipu --vendors camb --torch-version 2.2.2`, with DIOPI's
camb convert_config.yaml) and rendered with each --shards count; DIPU's own generator
is run on the same file as DIPU's build runs it for camb. Each of these is then built
by ninja from a CMake project of its own that compiles the kernel files as DIPU's build
compiles torch_dipu's sources: CMAKE_BUILD_TYPE Release with DIPU's link-time
optimisation on (-O3 -flto), C++17, -fPIC, DIPU_TORCH_VERSION and torch's ABI flag,
against the checkout's own DIPU, DIOPI and kineto headers and torch's (of --torch-python,
which must be a torch DIPU builds with; default: the tests' torch 2.2.2). The rendered
projects list their files through the rendered AutoGenedKernels.cmake, as DIPU's does.
DIPU's headers include a vendor's vendorapi.h, and camb's needs its SDK: the bundled
hostsim vendor's stands in for it. DIPU 9dd38082's DIPUEvent.h is read without the
`constexpr` that gcc >= 11 rejects (the checkout is not changed).

For each build: the full kernels build (ninja -jJOBS from nothing: wall, and the largest
peak RSS of any one compile, from wait4's rusage through bench/rusage.py), then the loop
a vendor engineer runs, each step through `render` and ninja as they are:
  * a one-line edit in the custom code of the op in the middle of catalog/dipu.yaml;
  * `add.out: {autocompare: true}` added to vendors/camb.yaml;
each with the render's wall, ninja's wall and the files ninja compiled. For DIPU's own
file, any edit regenerates the whole file, so its rebuild is its full build. --pch N
also builds N shards with the vendor file's defaults.precompiled_header chosen, set up by
the rendered AutoGenedKernels.cmake as in DIPU's build, to measure whether it pays.

--anatomy adds rows that tell where one file's compile time goes (g++ directly, -O2,
against the declaration headers of tests/include): the include block alone, the one
file without its DIPU_LIBRARY_IMPL blocks, and the one file registering through TORCH_FN
as DIPU's generated file does; --time-report prints g++ -ftime-report's top phases.

Wall-clock seconds on this machine; another process on the machine skews them, so
compare the ratios of one run.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

print = functools.partial(print, flush=True)  # noqa: A001 -- progress shows while the builds run

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "scripts"))

from bench import dipu_generator, edit_catalog  # noqa: E402
from helpers import (INCLUDE, OPS, diopi_include, dipu_torch_python, torch_include_flags, torch_root,  # noqa: E402
                     torch_version_code)
from try_without_a_chip import EVENT_HEADER, EVENT_LINE  # noqa: E402

GENERATOR = "dipu/scripts/autogen_diopi_wrapper"
VENDOR = "camb"
CONVERT = f"dipu/third_party/DIOPI/impl/{VENDOR}/convert_config.yaml"
# The checkout's headers, beside its csrc_dipu: (include directory, a file it must hold).
THIRD_PARTY = (("dipu/third_party/DIOPI/proto/include", "diopi/functions.h"),
               ("dipu/third_party/kineto/libkineto/include", "libkineto.h"),
               ("dipu/third_party/kineto/libkineto/src", "ActivityBuffers.h"),
               ("dipu/third_party/kineto/libkineto/third_party/fmt/include", "fmt/format.h"))
VENDOR_EDIT = "  add.out: {autocompare: true}"
PROJECT = """cmake_minimum_required(VERSION 3.18)
project(torch_dipu LANGUAGES CXX)
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_POSITION_INDEPENDENT_CODE ON)
set(CMAKE_INTERPROCEDURAL_OPTIMIZATION ON)
set(UsedVendor {vendor})
set(DIPU_TORCH_VERSION {version})
{sources}
add_library(torch_dipu OBJECT ${{GENERATED_KERNELS}})
target_compile_definitions(torch_dipu PRIVATE DIPU_TORCH_VERSION={version} USE_KINETO _GLIBCXX_USE_CXX11_ABI={abi})
target_include_directories(torch_dipu PRIVATE {includes})
target_include_directories(torch_dipu SYSTEM PRIVATE {system})
target_compile_options(torch_dipu PRIVATE -iquote {ops} -w)
"""


def run(*argv, **kwargs) -> subprocess.CompletedProcess:
    """*argv* run to its end; its output is shown only if it fails."""
    proc = subprocess.run([str(a) for a in argv], capture_output=True, text=True, **kwargs)
    if proc.returncode:
        sys.exit(f"{' '.join(str(a) for a in argv)} failed:\n{(proc.stdout + proc.stderr)[-4000:]}")
    return proc


def deeplink_gen(*args, cache: Path) -> float:
    """Wall seconds of one deeplink-gen command, run as a user runs it (a process of its own)."""
    env = dict(os.environ, PYTHONPATH=str(REPO), DEEPLINK_GEN_CACHE_DIR=str(cache))
    env.pop("PYTHONDONTWRITEBYTECODE", None)   # as installed from a wheel: bytecode, not source
    start = time.perf_counter()
    run(sys.executable, "-m", "deeplink_gen", *args, env=env, cwd=REPO)
    return time.perf_counter() - start


def dipu_includes(checkout: Path, tmp: Path) -> list[Path]:
    """The include directories of DIPU's own headers: csrc_dipu's headers copied (DIPUEvent.h
    without its `constexpr`, the hostsim vendor's vendorapi.h as csrc_dipu/vendor/vendorapi.h),
    then the checkout's DIOPI, kineto and fmt headers."""
    missing = [f"{inc}/{probe}" for inc, probe in THIRD_PARTY if not (checkout / inc / probe).is_file()]
    if missing:
        sys.exit(f"{checkout}: not a deeplink.framework checkout with its submodules (missing {', '.join(missing)}); "
                 "git submodule update --init --recursive dipu/third_party/DIOPI dipu/third_party/kineto")
    root = tmp / "include"
    source = checkout / "dipu" / "torch_dipu"
    for header in (*source.rglob("*.h"), *source.rglob("*.hpp")):
        dest = root / header.relative_to(source)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(header, dest)
    event = root / Path(EVENT_HEADER).relative_to("dipu/torch_dipu")
    event.write_text(EVENT_LINE.sub(r"\1\2", event.read_text()))
    hostsim = tmp / "hostsim"
    deeplink_gen("render", "--vendor", "hostsim", "--out", hostsim, "--allow-outside-workspace", cache=tmp / "cache")
    vendorapi = root / "csrc_dipu" / "vendor" / "vendorapi.h"
    shutil.copyfile(hostsim / "hostsim" / "dipu/torch_dipu/csrc_dipu/vendor/hostsim/vendorapi.h", vendorapi)
    return [root, *(checkout / inc for inc, _ in THIRD_PARTY)]


@dataclass(frozen=True)
class Build:
    label: str
    shards: int | None        # None: DIPU's own generated file
    pch: bool = False


@dataclass
class Step:
    label: str
    render: float             # seconds; 0 for DIPU's file
    wall: float               # ninja's seconds
    compiled: list[str]
    peak: int                 # MiB, the largest compile of the step


class Project:
    """One build's CMake project, its render and its ninja build folder."""

    def __init__(self, build: Build, tmp: Path, args, includes: list[Path]):
        self.build, self.args = build, args
        self.dir = tmp / build.label.replace(" ", "-").replace(",", "")
        self.ws, self.out, self.log = self.dir / "ws", self.dir / "out", self.dir / "compiles.jsonl"
        self.cache = tmp / "cache"
        if build.shards is None:
            ops = includes[0] / "csrc_dipu" / "aten" / "ops"
            run(*dipu_generator(args.dipu, ops / "AutoGenedKernels.cpp"))
            sources = f'set(GENERATED_KERNELS "{ops / "AutoGenedKernels.cpp"}")'
        else:
            shutil.copytree(tmp / "ws", self.ws)
            if build.pch:
                choose_precompiled_header(self.ws / "vendors" / f"{VENDOR}.yaml")
            self.render()
            ops = self.out / VENDOR / OPS
            sources = f'include("{ops / "AutoGenedKernels.cmake"}")'
        torch = torch_include_flags(args.torch_python)[1::2]
        self.dir.mkdir(parents=True, exist_ok=True)
        (self.dir / "CMakeLists.txt").write_text(PROJECT.format(
            vendor=VENDOR, version=torch_version_code(args.torch_python), abi=cxx_abi(args.torch_python),
            sources=sources, includes=" ".join(f'"{i}"' for i in includes), system=" ".join(f'"{t}"' for t in torch),
            ops=f'"{includes[0] / "csrc_dipu" / "aten" / "ops"}"'))
        run("cmake", "-G", "Ninja", "-S", self.dir, "-B", self.dir / "build", "-DCMAKE_BUILD_TYPE=Release",
            f"-DCMAKE_CXX_COMPILER_LAUNCHER={sys.executable};{REPO / 'bench' / 'rusage.py'}")

    def render(self) -> float:
        return deeplink_gen("-C", self.ws, "render", "--vendor", VENDOR, "--shards", self.build.shards,
                            "--out", self.out, "--allow-outside-workspace", cache=self.cache)

    def ninja(self, label: str, render: float = 0.0) -> Step:
        self.log.unlink(missing_ok=True)
        env = dict(os.environ, DEEPLINK_GEN_BENCH_LOG=str(self.log))
        start = time.perf_counter()
        run("ninja", "-C", self.dir / "build", f"-j{self.args.jobs}", env=env)
        wall = time.perf_counter() - start
        done = [json.loads(line) for line in self.log.read_text().splitlines()] if self.log.is_file() else []
        return Step(label, render, wall, sorted(Path(d["output"]).name.removesuffix(".o") for d in done),
                    max((d["peak"] for d in done), default=0))

    def loop(self) -> list[Step]:
        steps = [self.ninja("full build")]
        if self.build.shards is None:
            return steps
        edit_catalog(self.ws / "catalog" / "dipu.yaml")
        steps.append(self.ninja("one-line catalog edit", self.render()))
        edit_vendor(self.ws / "vendors" / f"{VENDOR}.yaml")
        steps.append(self.ninja("one-op vendor edit", self.render()))
        return steps


def edit_vendor(path: Path) -> None:
    """`add.out: {autocompare: true}` as the first entry of *path*'s `ops:`."""
    text = path.read_text()
    if "\nops:\n" not in text:
        sys.exit(f"{path}: no `ops:` section to add an entry to")
    path.write_text(text.replace("\nops:\n", f"\nops:\n{VENDOR_EDIT}\n", 1))


def choose_precompiled_header(path: Path) -> None:
    """`precompiled_header: true` as the first key of *path*'s `defaults:` (added at its end if it has none)."""
    text = path.read_text()
    if "\ndefaults:\n" in text:
        path.write_text(text.replace("\ndefaults:\n", "\ndefaults:\n  precompiled_header: true\n", 1))
    else:
        path.write_text(text.rstrip("\n") + "\ndefaults:\n  precompiled_header: true\n")


def loop(args) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="deeplink-gen-bench-compile-"))
    includes = dipu_includes(args.dipu, tmp)
    deeplink_gen("import-dipu", "--functions", args.dipu / GENERATOR / "diopi_functions.yaml",
                 *(["--convert-config", f"{VENDOR}={args.dipu / CONVERT}"] if (args.dipu / CONVERT).is_file() else []),
                 "--vendors", VENDOR, "--torch-version", "2.2.2", "--out", tmp / "ws", cache=tmp / "cache")
    builds = [Build("DIPU's generated file", None),
              *(Build(f"{n} shards" if n > 1 else "one file", n) for n in args.shards),
              *(Build(f"{n} shards, PCH", n, pch=True) for n in args.pch)]
    version = run("g++", "-dumpfullversion").stdout.strip()
    print(f"{VENDOR} import of {args.dipu / GENERATOR / 'diopi_functions.yaml'}; g++ {version}; "
          f"torch {torch_root(args.torch_python)} (DIPU_TORCH_VERSION={torch_version_code(args.torch_python)}); "
          f"{os.cpu_count()} cores; ninja -j{args.jobs}; in {tmp}")
    results = []
    for build in builds:
        print(f"  {build.label} ...")
        results.append((build, Project(build, tmp, args, includes).loop()))
    (dipu_full,) = results[0][1]
    print(f"\n{'build':<22} {'step':<22} {'render s':>8} {'ninja s':>8} {'x DIPU':>7} "
          f"{'peak MiB':>9} {'x DIPU':>7}  compiled")
    for build, steps in results:
        for step in steps:
            print(f"{build.label:<22} {step.label:<22} {step.render:8.2f} {step.wall:8.1f} "
                  f"{step.wall / dipu_full.wall:7.2f} {step.peak:9d} {step.peak / dipu_full.peak:7.2f}  "
                  f"{len(step.compiled)}: {' '.join(step.compiled)}")


def cxx_abi(python: Path | None) -> str:
    """The libstdc++ ABI *python*'s torch was built with (its TorchConfig.cmake says when it is the old one)."""
    config = torch_root(python) / "share" / "cmake" / "Torch" / "TorchConfig.cmake"
    text = config.read_text() if config.is_file() else ""
    return "0" if "-D_GLIBCXX_USE_CXX11_ABI=0" in text else "1"


def compile_command(python: Path | None) -> list[str]:
    return ["g++", "-std=c++17", "-fPIC", "-O2", f"-D_GLIBCXX_USE_CXX11_ABI={cxx_abi(python)}",
            f"-DDIPU_TORCH_VERSION={torch_version_code(python)}",
            f"-I{INCLUDE / 'dipu'}", f"-I{diopi_include()}", f"-iquote{INCLUDE / 'dipu'}",
            *torch_include_flags(python), "-c", "-o", "/dev/null"]


def compile_one(cmd: list[str], source: Path) -> tuple[float, int]:
    """(wall seconds, peak RSS in MiB) of compiling *source*; fails loudly on a compile error."""
    start = time.perf_counter()
    proc = subprocess.Popen([*cmd, str(source)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    stderr = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        sys.exit(f"g++ failed on {source}:\n{stderr.decode()[-4000:]}")
    return wall, usage.ru_maxrss // 1024


def first_includes(kernels: Path, dest: Path) -> Path:
    """A translation unit holding only the includes of *kernels* (everything before its first namespace)."""
    text = kernels.read_text()
    dest.write_text(text[:text.index("\nnamespace ")] + "\n")
    return dest


def without_registrations(kernels: Path, dest: Path) -> Path:
    """*kernels* without its DIPU_LIBRARY_IMPL blocks: the wrappers alone, to
    tell what registering them (m.impl(..., TORCH_FN(wrapper)) per op) costs."""
    text = kernels.read_text()
    start = text.index("DIPU_LIBRARY_IMPL(")
    dest.write_text(text[:start] + text[text.index("}  // namespace at", start):])
    return dest


def through_torch_fn(kernels: Path, dest: Path) -> Path:
    """*kernels* with its blocks registering each wrapper through TORCH_FN, as DIPU's
    own generated file does, instead of through RegisterByPointer."""
    text = kernels.read_text()
    text = re.sub(r"(DIPU_LIBRARY_IMPL\(aten, \w+, )library\) \{\n  RegisterByPointer m\{library\};\n",
                  r"\1m) {\n", text)
    if "RegisterByPointer m" in text:
        sys.exit(f"{kernels}: a registration block this script does not recognise")
    dest.write_text(text)
    return dest


def time_report(cmd: list[str], source: Path, top: int = 12) -> None:
    proc = subprocess.run([*cmd, "-ftime-report", str(source)], capture_output=True, text=True)
    rows = []
    phase = re.compile(r"\s*(.+?)\s*:" + r"\s*[\d.]+\s*\(\s*\d+%\)" * 2 + r"\s*([\d.]+)\s*\(\s*(\d+)%\)")
    for line in proc.stderr.splitlines():
        m = phase.match(line)
        if m and m.group(1) != "TOTAL":
            rows.append((float(m.group(2)), int(m.group(3)), m.group(1)))
    print(f"\ng++ -ftime-report, one file: top {top} phases by wall")
    for secs, pct, name in sorted(rows, reverse=True)[:top]:
        print(f"  {name:<40} {secs:7.2f}s {pct:3d}%")


def anatomy(args) -> None:
    """Where one file's compile time goes: g++ directly, against tests/include's declarations."""
    cmd = compile_command(args.torch_python)
    tmp = Path(tempfile.mkdtemp(prefix="deeplink-gen-bench-anatomy-"))
    out = tmp / "out"
    deeplink_gen("render", "--vendor", VENDOR, "--shards", 1, "--out", out, "--allow-outside-workspace",
                 cache=tmp / "cache")
    one = out / VENDOR / OPS / "AutoGenedKernels.cpp"
    # beside the file, which includes its .pasted.inc from its own folder
    rows = [("include block only", first_includes(one, one.with_name("includes.cpp"))),
            ("one file, no registrations", without_registrations(one, one.with_name("unregistered.cpp"))),
            ("one file, registered via TORCH_FN", through_torch_fn(one, one.with_name("torch_fn.cpp"))),
            (f"one file ({len(one.read_text().splitlines())} lines)", one)]
    measured = [(label, compile_one(cmd, source)) for label, source in rows]
    one_wall, one_peak = measured[-1][1]
    print(f"\n{'g++ -O2, declaration headers':<34} {'wall s':>7} {'peak MiB':>9}  {'wall/1':>6} {'peak/1':>6}")
    for label, (wall, peak) in measured:
        print(f"{label:<34} {wall:7.1f} {peak:9d}  {wall / one_wall:6.2f} {peak / one_peak:6.2f}")
    if args.time_report:
        time_report(cmd, one)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dipu", type=Path, metavar="CHECKOUT",
                    help="a deeplink.framework checkout at 9dd38082 with its submodules (the loop needs it)")
    ap.add_argument("--torch-python", type=Path, default=None,
                    help="a Python whose torch's headers to compile against (default: the tests' torch 2.2.2)")
    ap.add_argument("--jobs", type=int, default=2)
    counts = lambda text: [int(n) for n in text.split(",") if n]  # noqa: E731
    ap.add_argument("--shards", type=counts, default=[2, 4, 8], metavar="N,N",
                    help="the shard counts to build (default: 2,4,8)")
    ap.add_argument("--pch", type=counts, default=[], metavar="N,N",
                    help="shard counts to build again with a precompiled header (default: none)")
    ap.add_argument("--anatomy", action="store_true", help="also the rows of where one file's time goes")
    ap.add_argument("--time-report", action="store_true", help="with --anatomy: g++ -ftime-report's top phases")
    args = ap.parse_args()
    if args.dipu is None and not args.anatomy:
        ap.error("--dipu CHECKOUT is needed to measure the loop (or give --anatomy alone)")
    if args.torch_python is None:
        args.torch_python = dipu_torch_python()
    if args.dipu is not None:
        loop(args)
    if args.anatomy:
        anatomy(args)


if __name__ == "__main__":
    main()
