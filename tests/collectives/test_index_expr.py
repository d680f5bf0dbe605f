"""Index expressions (COLL-4.1, 4.2), the Arith readings (COLL-7.1) and domain completion."""

from __future__ import annotations

import pytest
import z3

from verifier.collectives import (
    IndexExpr,
    IntArith,
    Z3Arith,
    complete,
    membership,
    model_membership,
    thread_set,
    tile_threads,
    tile_warps,
    top_tiling,
)
from verifier.collectives.completion import CompletionError, eval_unit
from verifier.diagnostics import RejectedInput
from verifier.lang.stdlib.config import CudaDeviceFunction, CudaWarps
from verifier.lang.stdlib.units import CollUnit, blockDim, cuda_quadpair, cuda_warpgroup

X = IndexExpr.thread_idx(256)


@pytest.mark.rule("COLL-4.2")
def test_normalisation_and_c_text() -> None:
    assert X.to_c() == "threadIdx.x"
    assert X.div(16).to_c() == "threadIdx.x / 16"
    assert X.sub(0).div(1) == X
    assert X.div(2).div(8).to_c() == "threadIdx.x / 16"
    assert X.sub(32).sub(32).to_c() == "(threadIdx.x - 64)"
    assert X.mod(128).sub(64).to_c() == "(threadIdx.x % 128 - 64)"
    assert X.sub(256).div(128).to_c() == "((threadIdx.x - 256) / 128)"
    assert X.mod(1) == IndexExpr.constant(0)
    assert X.div(16).mod(16) == X.div(16)
    assert X.mod(16).mod(4).to_c() == "threadIdx.x % 4"
    assert X.sub(64).mod(32).to_c() == "threadIdx.x % 32"
    assert IndexExpr.cta_rank(4).to_c() == "blockIdx.x % 4"
    assert IndexExpr.cta_rank(8).div(2).to_c() == "blockIdx.x % 8 / 2"
    assert IndexExpr.cta_rank(8).mod(2).to_c() == "blockIdx.x % 2"
    assert IndexExpr.constant(5).sub(2).div(2) == IndexExpr.constant(1)


@pytest.mark.rule("COLL-7.1")
@pytest.mark.rule("COLL-7.3")
def test_term_readings_agree() -> None:
    exprs = [X.mod(128).sub(64), X.sub(32).div(4), X.div(8).mod(16), IndexExpr.cta_rank(8).div(2)]
    arith = IntArith()
    zarith = Z3Arith(z3.Context())
    xv, rv = zarith.var("x"), zarith.var("r")
    for e in exprs:
        term = e.to_term(xv, rv, zarith)
        for x, r in ((0, 0), (77, 3), (200, 7)):
            assert e.to_term(x, r, arith) == e.evaluate(x, r)
            value = z3.simplify(z3.substitute(term, (xv, zarith.const(x)), (rv, zarith.const(r))))
            assert value.as_long() == e.evaluate(x, r)


@pytest.mark.rule("COLL-7.1")
def test_division_only_by_positive_constants() -> None:
    with pytest.raises(AssertionError):
        IntArith().floordiv(5, 0)
    with pytest.raises(AssertionError):
        Z3Arith(z3.Context()).mod(z3.Int("a", z3.Context()), -2)


@pytest.mark.rule("COLL-1.10")
def test_domain_completion() -> None:
    comp = complete((8,), (256,), allow_partial_source=True)
    assert comp.domain == (32, 8) and comp.prepend == 32
    assert comp.translate_box((1,), None) == (None, 1)
    comp = complete((384,), (8,), allow_partial_source=False)
    assert comp.domain == (48, 8) and comp.splits == ((0, 8),)
    assert comp.translate_box((128,)) == (16, 8)
    assert complete((4, 384), (12, 128), False).domain == (4, 3, 128)
    assert complete((256,), (2, 4, 32), False).domain == (2, 4, 32)
    with pytest.raises(CompletionError, match="Domain completion for"):
        complete((4, 6), (3, 8), False)
    with pytest.raises(CompletionError, match="8 doesn't divide 23"):
        complete((256,), (8,), False).translate_box((23,))


@pytest.mark.rule("COLL-1.5")
def test_split_of_small_box_keeps_it_inner() -> None:
    comp = complete((4, 384), (4, 12, 32), False)
    assert comp.domain == (4, 12, 32)
    assert comp.translate_box((1, 128)) == (1, 4, 32)
    assert complete((8,), (2, 4), False).translate_box((3,)) == (1, 3)


@pytest.mark.rule("COLL-1.3")
def test_unit_evaluation() -> None:
    assert eval_unit(cuda_quadpair, 64, 1) == ((4, 16), (2, 4))
    with pytest.raises(RejectedInput, match="blockDim / 64 has divisibility issue with "
                                            "blockDim=96"):
        eval_unit(CollUnit((blockDim / 64, 64), (blockDim / 64, 1)), 96, 1)


@pytest.mark.rule("COLL-7.2")
@pytest.mark.rule("COLL-7.3")
def test_z3_membership_matches_ground_truth() -> None:
    dev = CudaDeviceFunction(blockDim=256, clusterDim=2)
    wg = tile_threads(top_tiling(dev), "wg", "wg", 0, 2, cuda_warpgroup, dev)
    body, _ = tile_warps(wg, CudaWarps(3, 4), dev, "")
    arith = Z3Arith(z3.Context())
    for wg_val in (0, 1):
        truth = thread_set(body, {"wg": wg_val}, dev)
        assert truth == {r * 256 + 128 * wg_val + x for r in (0, 1) for x in range(96, 128)}
        for n in (0, 97, 127, 224, 300, 353, 480, 511):
            for formula in (membership, model_membership):
                term = formula(body, arith.const(n), {"wg": arith.const(wg_val)}, arith, dev)
                assert z3.is_true(z3.simplify(term)) == (n in truth)
