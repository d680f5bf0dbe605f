"""CPU seconds per test, which a loaded machine does not change much (wall time it does).

As a pytest plugin it appends one line per test to `$SUITE_CPU_OUT.<worker>.tsv`: wall seconds,
this process's CPU seconds and the CPU seconds of the child processes the test waited for
(the CLI, loading children, nvcc, pip). With xdist each worker writes its own file:

    PYTHONPATH=benchmarks SUITE_CPU_OUT=/tmp/cpu python3 -m pytest -n auto \\
        -p no:cacheprovider -p suite_cpu  # default run; -m "not slow": .ci/run's set
    python3 benchmarks/suite_cpu.py /tmp/cpu.*.tsv [--top N]

The second command prints the CPU seconds per test file and the N most expensive tests. The
sum leaves out collection and xdist's own work: time the whole run for those. On two cores a
quiet machine's wall time for the run is about its CPU seconds / 2 (issue 20: the default run
is to take at most 120 s of wall there).
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from collections import defaultdict
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: Any) -> Generator[None, None, None]:
    wall, own, children = time.perf_counter(), time.process_time(), _children_cpu()
    yield
    row = (time.perf_counter() - wall, time.process_time() - own, _children_cpu() - children)
    out = os.environ.get("SUITE_CPU_OUT", "suite_cpu")
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(f"{out}.{worker}.tsv", "a", encoding="utf-8") as f:
        f.write("\t".join(f"{x:.3f}" for x in row) + f"\t{item.nodeid}\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tsv", nargs="+", type=Path)
    parser.add_argument("--top", type=int, default=20)
    args = parser.parse_args()
    tests: dict[str, float] = {}
    for path in args.tsv:
        for line in path.read_text(encoding="utf-8").splitlines():
            _, own, children, nodeid = line.split("\t", 3)
            tests[nodeid] = float(own) + float(children)
    files: dict[str, list[float]] = defaultdict(list)
    for nodeid, cpu in tests.items():
        files[nodeid.split("::")[0]].append(cpu)
    print(f"{len(tests)} tests, {sum(tests.values()):.1f} s of CPU")
    print(f"{'CPU s':>8} {'tests':>6}  file")
    for name, cpus in sorted(files.items(), key=lambda kv: -sum(kv[1])):
        print(f"{sum(cpus):8.1f} {len(cpus):6d}  {name}")
    print(f"\n{'CPU s':>8}  the {args.top} most expensive tests")
    for nodeid, cpu in sorted(tests.items(), key=lambda kv: -kv[1])[:args.top]:
        print(f"{cpu:8.2f}  {nodeid}")


if __name__ == "__main__":
    main()
