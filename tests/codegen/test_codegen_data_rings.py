"""The shared memory of endgame's data rings in CUDA (specs/dialects.md DIAL-18 part 3, DIAL-20):
a data ring's bytes are reserved for the whole kernel, so an allocation after the end of its
scope never takes them (DIAL-20's free check, every access complete, relies on it)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from codegen_support import hand_certified

from verifier.codegen import emit_cuda

NESTED = '''from verifier.lang import *


@proc
def dr_nested(K: size, A: f32[K, 128] @ CudaGmemLinear, out: f32[128] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=128):
        for task in cuda_tasks(0, 1):
            g: barrier[(K + 1) @ ring_buffer_by(1)] @ CudaMbarrierPreArrive(1)
            for r in seq(0, 1):
                x: f32[K @ ring_buffer_by(1), 128].ring_guarded_by(g) @ CudaSmemLinear
                for k in seq(0, K):
                    Await(g[k], cuda_in_order, 0)
                    for t in cuda_threads(0, 128):
                        x[k, t] = A[k, t]
                    Arrive(cuda_in_order) >> g[k + 1]
            y: f32[128] @ CudaSmemLinear
            for t in cuda_threads(0, 128):
                y[t] = A[0, t]
                out[t] = y[t]
            Fence(cuda_in_order, cuda_in_order)
'''


def _offset(text: str, name: str) -> int:
    (found,) = re.findall(rf"float\* const {name} = reinterpret_cast<float\*>\(exo_smem \+ "
                          r"(\d+)\);", text)
    return int(found)


@pytest.mark.rule("DIAL-20")
def test_an_allocation_after_a_data_rings_scope_does_not_take_its_bytes(tmp_path: Path) -> None:
    path = tmp_path / "dr_nested.py"
    path.write_text(NESTED)
    text = emit_cuda(*hand_certified(path, "dr_nested"))
    x, y = _offset(text, "x"), _offset(text, "y")
    assert x + 512 <= y or y + 512 <= x, (x, y)  # 128 floats each, disjoint
