"""The sequential behaviour of every instr, as data (CHAIN-1.4).

Each entry is the body upstream's `@instr` declares for the instruction (its `behavior`), written
`loops: statement`: `m<16, k<K: rmem[m, k] = src[m, k]` runs `rmem[m, k] = src[m, k]` for
m in [0, 16), k in [0, K). Extents are integers, template keywords (K, size) or size parameters
of the instr (the host copies' m, n, o, ...). Parameters are indexed through the call's windows.
The hardware's precision (tf32 rounding of the mma operands) is not part of the behaviour:
the erased proc computes in the element type of its buffers (specs/chain.md, CHAIN-1.4).

Instrs whose effect crosses threads (warp shuffles) have no sequential behaviour: erasing a
kernel that calls one is unsupported (CHAIN-1.5).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

from verifier.lang.stdlib.instrs import INSTRS

_HOST_DIMS = "mnopq"


def _host_copies() -> dict[str, str]:
    out: dict[str, str] = {}
    for name in INSTRS:
        rank = name.split("_")[-1][0]
        if not name.startswith(("cudaMemcpyAsync_", "cudaMemsetAsync0_")) or not rank.isdigit():
            continue
        dims = _HOST_DIMS[:int(rank)]
        loops = ", ".join(f"{d}<{d}" for d in dims)
        idx = ", ".join(dims)
        rhs = "0.0" if name.startswith("cudaMemset") else f"src[{idx}]"
        out[name] = f"{loops}: dst[{idx}] = {rhs}"
    return out


def _sm80() -> dict[str, str]:
    out = {
        "Sm80_cp_async_f32": "i<size: smem[i] = gmem[i]",
        "Sm80_mma_load_a_row_major_tf32": "m<16, k<K: rmem[m, k] = src[m, k]",
        "Sm80_mma_load_a_col_major_tf32": "m<16, k<K: rmem[m, k] = src[k, m]",
        "Sm80_mma_load_b_row_major_tf32": "k<K, n<8: rmem[k, n] = src[k, n]",
        "Sm80_mma_load_b_col_major_tf32": "k<K, n<8: rmem[k, n] = src[n, k]",
        "Sm80_mma_tf32": "m<16, n<8, k<K: D[m, n] += A[m, k] * B[k, n]",
        "Sm80_mma_zero_d_tf32": "m<16, n<8: rmem[m, n] = 0.0",
    }
    for verb, op in (("store", "="), ("reduce", "+="), ("atomic_reduce", "+=")):
        out[f"Sm80_mma_{verb}_d_row_major_tf32"] = f"m<16, n<8: dst[m, n] {op} rmem[m, n]"
        out[f"Sm80_mma_{verb}_d_col_major_tf32"] = f"m<16, n<8: dst[n, m] {op} rmem[m, n]"
    return out


BEHAVIOUR_TEXT: Mapping[str, str] = MappingProxyType({**_host_copies(), **_sm80()})

# Instrs with no sequential behaviour, and why (CHAIN-1.5).
NO_BEHAVIOUR: Mapping[str, str] = MappingProxyType({
    "cuda_shfl_xor_sync_1f32": "a warp shuffle exchanges values between threads",
    "cuda_shfl_xor_sync_1f32_sum": "a warp shuffle exchanges values between threads",
})


@dataclass(frozen=True, slots=True)
class Behaviour:
    """`for loops: lhs (= | +=) rhs`; rhs is a Python expression AST over `param[idx]`."""

    loops: tuple[tuple[str, str], ...]  # (iterator, extent: int literal, keyword or size param)
    lhs: str
    lhs_idx: tuple[str, ...]
    reduce: bool
    rhs: ast.expr


_ENTRY = re.compile(r"^(?P<loops>[^:]*):\s*(?P<lhs>\w+)\[(?P<idx>[^\]]*)\]\s*(?P<op>\+?=)\s*"
                    r"(?P<rhs>.+)$")


def behaviour(name: str) -> Behaviour:
    m = _ENTRY.match(BEHAVIOUR_TEXT[name])
    assert m is not None, name
    loops = tuple(tuple(part.strip().split("<")) for part in m["loops"].split(","))
    return Behaviour(loops, m["lhs"], tuple(i.strip() for i in m["idx"].split(",")),  # type: ignore[arg-type]
                     m["op"] == "+=", ast.parse(m["rhs"], mode="eval").body)
