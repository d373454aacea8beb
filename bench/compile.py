"""Measure what the generated kernels cost the C++ compiler, as ratios within one run.

    python bench/compile.py [--runs 1] [--vendor camb] [--torch-python PY] [--jobs 2] [--shards 2,4]
                            [--time-report]

Renders the vendor's kernels (`render --vendor V --out TMP --allow-outside-workspace`)
as one translation unit and as 2 and 4 shards (`--shards`), then compiles each file
with g++ the way a DIPU build compiles a torch_dipu source, as closely as the repository
allows: a full object compile `-std=c++17 -fPIC -O2 -c -o /dev/null`, the torch ABI flag
of the chosen torch, -DDIPU_TORCH_VERSION, against that torch's headers, the DIPU
declaration headers in tests/include and DIOPI headers written from the bundled prototype
snapshot (the same headers tests/helpers.py `syntax_check` uses). DIPU's real headers
define more inline code than those declarations, so absolute figures are a lower bound;
the ratios are what to compare.

Reports, per configuration (min wall of --runs, max peak RSS; peak RSS is the
compiler's, from wait4's rusage of each g++ process):
  * the include block alone (the one-file render up to its first namespace): the fixed
    cost every translation unit pays before any wrapper;
  * the one file without its DIPU_LIBRARY_IMPL blocks: the wrappers alone, so that the
    difference to the one-file build is what registering them costs;
  * the one file with its blocks registering through TORCH_FN, as DIPU's own generated
    file does, instead of through RegisterByPointer: what that registration costs;
  * the one-file build: wall and peak RSS;
  * 2 and 4 shards (--shards) compiled --jobs at a time: the wall of the whole build, each shard's
    peak RSS, and the ratios shard wall / one-file wall and max shard peak / one-file peak.
Wall-clock seconds on this machine; another process on the machine skews them, so
compare the ratios of one run. --time-report prints g++ -ftime-report's top phases of
the one-file build.
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

print = functools.partial(print, flush=True)  # noqa: A001 -- progress shows while g++ runs

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from helpers import INCLUDE, diopi_include, torch_include_flags, torch_root, torch_version_code  # noqa: E402

OPS = "dipu/torch_dipu/csrc_dipu/aten/ops"


def render(out: Path, vendor: str, shards: int) -> list[Path]:
    """The kernels translation units of *vendor* rendered into *out* by this checkout."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    subprocess.run([sys.executable, "-m", "deeplink_gen", "render", "--vendor", vendor, "--out", str(out),
                    "--allow-outside-workspace", "--shards", str(shards)],
                   cwd=REPO, env=env, check=True, capture_output=True)
    return sorted((out / vendor / OPS).glob("AutoGenedKernels*.cpp"))


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


def build(cmd: list[str], sources: list[Path], jobs: int) -> tuple[float, list[int]]:
    """(wall seconds of the whole build, peak RSS of each source) with *jobs* compiles at a time."""
    start = time.perf_counter()
    with ThreadPoolExecutor(jobs) as pool:
        results = list(pool.map(lambda s: compile_one(cmd, s), sources))
    return time.perf_counter() - start, [peak for _, peak in results]


def include_block(kernels: Path, dest: Path) -> Path:
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--vendor", default="camb")
    ap.add_argument("--torch-python", type=Path, default=None,
                    help="a Python whose torch's headers to compile against (default: this one's)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--shards", type=lambda text: [int(n) for n in text.split(",")], default=[2, 4],
                    metavar="N,N", help="the shard counts to build (default: 2,4)")
    ap.add_argument("--time-report", action="store_true")
    args = ap.parse_args()

    cmd = compile_command(args.torch_python)
    tmp = Path(tempfile.mkdtemp(prefix="deeplink-gen-bench-compile-"))
    one = render(tmp / "s1", args.vendor, 1)
    shards = {n: render(tmp / f"s{n}", args.vendor, n) for n in args.shards}
    empty = include_block(one[0], tmp / "includes.cpp")
    unregistered = without_registrations(one[0], tmp / "unregistered.cpp")
    torch_fn = through_torch_fn(one[0], tmp / "torch_fn.cpp")
    version = subprocess.run(["g++", "-dumpfullversion"], capture_output=True, text=True).stdout.strip()
    torch_dir = torch_root(args.torch_python)
    print(f"vendor {args.vendor}; g++ {version}; torch {torch_dir.parent.name}/{torch_dir.name} "
          f"(DIPU_TORCH_VERSION={torch_version_code(args.torch_python)}); {os.cpu_count()} cores; "
          f"{args.runs} run(s); -j{args.jobs}")
    print("flags: " + " ".join(a for a in cmd[1:] if a.startswith(("-std", "-f", "-O", "-D", "-c"))))

    samples = {"includes": [], "unregistered": [], "torch_fn": [], "one": [], **{n: [] for n in args.shards}}
    for _ in range(args.runs):
        samples["includes"].append(build(cmd, [empty], 1))
        samples["unregistered"].append(build(cmd, [unregistered], 1))
        samples["torch_fn"].append(build(cmd, [torch_fn], 1))
        samples["one"].append(build(cmd, one, 1))
        for n in args.shards:
            samples[n].append(build(cmd, shards[n], args.jobs))

    def best(key):
        runs = samples[key]
        return min(w for w, _ in runs), [max(p) for p in zip(*(peaks for _, peaks in runs))]

    one_wall, (one_peak,) = best("one")
    lines = sum(len(p.read_text().splitlines()) for p in one)

    def row(label, wall, peaks, detail=""):
        print(f"{label:<34} {wall:7.1f} {max(peaks):9d}  {wall / one_wall:6.2f} {max(peaks) / one_peak:6.2f}{detail}")

    print(f"\n{'build':<34} {'wall s':>7} {'peak MiB':>9}  {'wall/1':>6} {'peak/1':>6}")
    row("include block only", *best("includes"))
    row("one file, no registrations", *best("unregistered"))
    row("one file, registered via TORCH_FN", *best("torch_fn"))
    row(f"one file ({lines} lines)", one_wall, [one_peak])
    for n in args.shards:
        wall, peaks = best(n)
        row(f"{n} shards, -j{args.jobs}", wall, peaks, f"   per shard: {' '.join(str(p) for p in peaks)} MiB")
    if args.time_report:
        time_report(cmd, one[0])


if __name__ == "__main__":
    main()
