"""Seeded mutations of the correct programs and a scalable ping-pong kernel (issue 11).

Mutants are made on the source text, one change each, of every line of a proved program that
holds a sync statement, a ring index, a guard or a loop bound:

* sync: a `Fence`, `Arrive` or `Await` line removed (replaced by `pass`);
* await-n: an `Await`'s N changed by one;
* ring: the index of a barrier or of a `% RING`-style slot shifted by one;
* guard: an `if` condition dropped (`if True:`) or its comparison made one wider;
* bound: a `seq` loop's upper bound raised by one.

A mutant may still be correct (an equivalent mutant) or be rejected by the static checks; the
campaign reports every verdict and times each proof.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Mutant:
    source: Path
    line: int  # 1-based
    what: str  # sync | await-n | ring | guard | bound
    text: str  # the whole mutated file


_SYNC = re.compile(r"^(\s*)(Fence|Arrive|Await)\(")
_AWAIT_N = re.compile(r"(Await\(.*,\s*)(-?\w[\w\s+\-*]*)(\)\s*)$")
_BARRIER_INDEX = re.compile(r"(>>\s*\w+\[|Await\(\w+\[)([^\]]+)(\])")
_SLOT = re.compile(r"(\([^()]+\)|\b[a-z_]\w*)\s*%\s*([A-Z]\w*|2)\b")
_GUARD = re.compile(r"^(\s*)if (.+):\s*$")
_COMPARE = re.compile(r"(<=|>=|<|>)")
_SEQ = re.compile(r"seq\(([^,]+),\s*([^()]*(?:\([^()]*\))?[^()]*)\)")


def _variants(line: str) -> Iterator[tuple[str, str]]:
    m = _SYNC.match(line)
    if m:
        yield "sync", f"{m.group(1)}pass\n"
        n = _AWAIT_N.search(line.rstrip("\n"))
        if m.group(2) == "Await" and n:
            yield "await-n", line[:n.start(2)] + f"({n.group(2)}) + 1" + n.group(3).rstrip() + "\n"
    b = _BARRIER_INDEX.search(line)
    if b:
        yield "ring", line[:b.start(2)] + f"({b.group(2)}) + 1" + line[b.end(2):]
    s = _SLOT.search(line)
    if s and not line.lstrip().startswith("#"):
        yield "ring", line[:s.start(1)] + f"({s.group(1)} + 1)" + line[s.end(1):]
    g = _GUARD.match(line)
    if g:
        yield "guard", f"{g.group(1)}if True:\n"
        c = _COMPARE.search(g.group(2))
        if c:
            wider = {"<": "<=", ">": ">=", "<=": "<= 1 +", ">=": ">= -1 +"}[c.group(1)]
            yield "guard", line[:line.index(g.group(2)) + c.start()] + wider + \
                line[line.index(g.group(2)) + c.end():]
    q = _SEQ.search(line)
    if q:
        yield "bound", line[:q.start(2)] + f"{q.group(2)} + 1" + line[q.end(2):]


def mutants(path: Path) -> list[Mutant]:
    lines = path.read_text().splitlines(keepends=True)
    out = []
    for k, line in enumerate(lines):
        if line.lstrip().startswith("#"):
            continue
        for what, new in _variants(line):
            if new != line:
                out.append(Mutant(path, k + 1, what,
                                  "".join(lines[:k] + [new] + lines[k + 1:])))
    return out


def ping_pong(phases: int, drop_fence: int | None = None) -> str:
    """A kernel that passes a 256-element SMEM tile back and forth between two buffers for
    `phases` phases (each thread reads its mirror element), a CTA fence between phases;
    `drop_fence` removes the fence after that phase (a RAW race)."""
    body = ["from verifier.lang import *", "", "", "@proc",
            "def ping_pong(n: size, x: f32[n] @ CudaGmemLinear, y: f32[n] @ CudaGmemLinear):",
            "    assert n % 256 == 0",
            "    with CudaDeviceFunction(blockDim=256):",
            "        for blk in cuda_tasks(0, n / 256):",
            "            a: f32[256] @ CudaSmemLinear",
            "            b: f32[256] @ CudaSmemLinear",
            "            for t in cuda_threads(0, 256):",
            "                a[t] = x[256 * blk + t]",
            "            Fence(cuda_in_order, cuda_in_order)"]
    for p in range(phases):
        src, dst = ("a", "b") if p % 2 == 0 else ("b", "a")
        body += ["            for t in cuda_threads(0, 256):",
                 f"                {dst}[t] = {src}[255 - t] + 1.0"]
        if p != drop_fence:
            body.append("            Fence(cuda_in_order, cuda_in_order)")
    last = "b" if phases % 2 == 1 else "a"
    body += ["            for t in cuda_threads(0, 256):",
             f"                y[256 * blk + t] = {last}[t]",
             "            Fence(cuda_in_order, cuda_in_order)", ""]
    return "\n".join(body)
