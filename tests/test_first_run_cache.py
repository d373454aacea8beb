"""The test suite's first-run downloads (torch 2.2.2's virtual environment, NVIDIA's header
wheels) are made once per machine: two test runs that share the cache, started together,
both get the folder, made by one of them, and neither fails on the other's half-made one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from helpers import REPO

MAKE = """
import sys, time
sys.path.insert(0, {tests!r})
from pathlib import Path
from helpers import made_once
target = Path({target!r})
def make():
    target.mkdir(parents=True)
    with open({log!r}, "a") as log:
        log.write("made\\n")
    time.sleep(1.0)                      # long enough for the other run to arrive meanwhile
    (target / "payload").write_text("whole")
made_once(target, make)
print((target / "payload").read_text())
"""


def test_two_runs_sharing_the_cache_make_it_once(tmp_path: Path):
    target, log = tmp_path / "cache" / "headers", tmp_path / "made.log"
    code = MAKE.format(tests=str(REPO / "tests"), target=str(target), log=str(log))
    runs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)]
    results = [run.communicate(timeout=60) + (run.returncode,) for run in runs]
    assert all(rc == 0 and out.strip() == "whole" for out, _, rc in results), results
    assert log.read_text() == "made\n"
    # a later run finds it ready and makes nothing
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    assert log.read_text() == "made\n"
