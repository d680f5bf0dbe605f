"""Endgame's TMA instrs (`Sm90_tma_{load,load_multicast,store,reduce_add}_{1..5}d`, specs/
dialects.md DIAL-1): upstream's keyword checks, and an expect-tx byte count of the tensor's own
element type (SEM-8.6, TX-1). tests/programs_tk/tk_tma_gemm* verify them in a kernel."""

from __future__ import annotations

import pytest

from verifier.diagnostics import RejectedInput
from verifier.lang import (
    Sm90_tma_load_2d, Sm90_tma_load_multicast_2d, Sm90_tma_reduce_add_3d, Sm90_tma_store_1d)
from verifier.lang.stdlib.instrs_sm90_tma import ENDGAME_TMA_INSTRS
from verifier.lang.stdlib.timelines import InstrTL
from verifier.semantics.transactions import tma_bytes

LOAD = dict(size0=64, size1=64, smem_box=None, dst="bf16", src="bf16")


@pytest.mark.rule("DIAL-1")
def test_every_rank_and_kind() -> None:
    assert len(ENDGAME_TMA_INSTRS) == 20
    assert Sm90_tma_store_1d.instr_tl is InstrTL.tma_to_gmem_async_instr
    assert Sm90_tma_reduce_add_3d.params[0].access == "a"
    assert Sm90_tma_load_2d.tma is not None and Sm90_tma_load_multicast_2d.barrier_units == 1


@pytest.mark.rule("SEM-8.6")
@pytest.mark.parametrize("types, expected", [("bf16", 64 * 64 * 2), ("f32", 64 * 64 * 4)])
def test_expect_tx_counts_the_element_type(types: str, expected: int) -> None:
    kw = Sm90_tma_load_2d.instantiate({**LOAD, "dst": types, "src": types})
    assert tma_bytes(Sm90_tma_load_2d.tma, kw, types) == (expected, expected)


@pytest.mark.rule("DIAL-1")
@pytest.mark.parametrize("instr, kw, words", [
    (Sm90_tma_load_2d, {**LOAD, "smem_box": (1, 32, 64)}, "isn't compatible with expected box"),
    (Sm90_tma_load_2d, {k: v for k, v in LOAD.items() if k != "smem_box"}, "smem_box"),
    (Sm90_tma_load_2d, {**LOAD, "src": "f32"}, "must be the same type"),
    (Sm90_tma_load_2d, {**LOAD, "swizzle": 16}, "swizzle=16"),
    (Sm90_tma_load_multicast_2d, {**LOAD, "ncta": 3, "cta_stride": 1}, "divisible by ncta=3"),
])
def test_bad_keywords(instr, kw, words) -> None:
    with pytest.raises(RejectedInput, match="Failed to instantiate") as e:
        instr.instantiate(kw)
    assert e.value.code == "ERR-P07" and words in e.value.message
