"""Compiler launcher for bench/compile.py: runs a compile, then appends one JSON line
(the object file, wall seconds, the compiler's peak RSS in MiB) to the file named by
DEEPLINK_GEN_BENCH_LOG. CMake runs it through CMAKE_CXX_COMPILER_LAUNCHER."""

import json
import os
import subprocess
import sys
import time

argv = sys.argv[1:]
start = time.perf_counter()
proc = subprocess.Popen(argv)
_, status, usage = os.wait4(proc.pid, 0)
wall = time.perf_counter() - start
output = argv[argv.index("-o") + 1] if "-o" in argv else ""
with open(os.environ["DEEPLINK_GEN_BENCH_LOG"], "a") as log:
    log.write(json.dumps({"output": output, "wall": wall, "peak": usage.ru_maxrss // 1024}) + "\n")
sys.exit(os.waitstatus_to_exitcode(status))
