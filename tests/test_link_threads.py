"""Choices E4-E5 and PR-6 (specs/verification.md): the representative link thread of an instance is the
lowest thread of its ground-truth set (COLL-4.4) at every thread-loop valuation, and −1 (no
thread) outside them; and the E5 order (anchored before quantified) proves the SMEM frees of a
2×2 cluster fed by multicast (the sporkbench Sm90a GEMMs' pattern) at an anchored level."""

from __future__ import annotations

from pathlib import Path

import z3

from verifier.check import analyze
from verifier.collectives import membership, thread_groups
from verifier.collectives.symbolic import Z3Arith
from verifier.encode import instances, verify_proc
from verifier.encode.instances import Encoder
from verifier.encode.obligations import ObligationBuilder
from verifier.encode.solver import QUANTIFIED_RLIMIT, Status, prepare, solve
from verifier.load.load import load_procs
from verifier.results import Verdict

PROGRAM = Path(__file__).resolve().parent / "programs_hopper" / "s14m_multicast_tma_cluster.py"


def test_representative_is_the_lowest_member_of_each_instance() -> None:
    (proc,) = load_procs(str(PROGRAM))
    model = analyze(proc)
    enc = Encoder({}, (), z3.Context())
    contexts = {id(s.ctx): s.ctx for s in [*model.awaits, *model.arrives, *model.fences]}
    checked = 0
    for ctx in contexts.values():
        groups = thread_groups(ctx.tiling, ctx.device.cfg)
        iters = {s: z3.Int(f"{s.name}#{s.id}", enc.zctx) for s in ctx.thread_iters}
        rep = enc.representative(ctx, iters)
        assert rep is not None
        for values, threads in groups.groups.items():
            at = [(iters[s], z3.IntVal(v, enc.zctx)) for s, v in zip(groups.keys, values)]
            n = z3.simplify(z3.substitute(rep, *at)).as_long()
            assert n == min(threads)
            inside = membership(ctx.tiling, z3.IntVal(n, enc.zctx),
                                {s: v for s, v in zip(groups.keys, values)}, Z3Arith(enc.zctx),
                                ctx.device.cfg)
            assert z3.is_true(z3.simplify(z3.substitute(inside, *at)))
            checked += 1
        if groups.keys:
            outside = [(iters[s], z3.IntVal(-5, enc.zctx)) for s in groups.keys]
            assert z3.simplify(z3.substitute(rep, *outside)).as_long() == -1
    assert checked > 4  # the 2×2 cluster's per-CTA collectives were listed


def test_cluster_frees_need_a_representative_link_thread_at_the_anchored_level() -> None:
    """The anchored chain-2 query (step (1, True)) of every SMEM free proves it, and does so
    only with E4's representatives for the frees of what the multicast TMA wrote."""
    (proc,) = load_procs(str(PROGRAM))
    model = analyze(proc)

    def anchored_answers() -> dict[str, Status]:
        builder = ObligationBuilder(model, z3.Context())
        frees = [o for o in builder.hazards() if o.rule == "SEM-4.7" and not o.discharged_by]
        return {o.id: solve(prepare(o.build(1, True).constraints, 60_000_000)).status
                for o in frees}

    with_e4 = anchored_answers()
    assert len(with_e4) >= 6 and set(with_e4.values()) == {Status.proved}
    saved = instances.MAX_GROUPS
    instances.MAX_GROUPS = -1  # no collective is listed: no representative
    try:
        without = anchored_answers()
    finally:
        instances.MAX_GROUPS = saved
    assert without["WAW:A_s@34:21->28:13"] is Status.candidate
    assert without["WAW:B_s@36:21->29:13"] is Status.candidate


def test_cluster_frees_are_proved_without_a_quantified_query() -> None:
    (proc,) = load_procs(str(PROGRAM))
    result = verify_proc(proc)
    assert result.verdict is Verdict.proved
    frees = [o for o in result.obligations if o.rule == "SEM-4.7" and not o.discharged_by]
    assert frees
    assert all(o.rlimit < QUANTIFIED_RLIMIT for o in frees)  # anchored queries decided them


def test_sync_sites_that_never_run_are_dead_and_live_ones_are_not() -> None:
    """PR-6 (`pruning.dead`): after cut_loop, `if iter_k >= 1` inside `for iter_k in seq(0, 1)`
    never runs; the same `if` in the remainder loop, and every site of s14m, do."""
    from verifier.check.sites import Context, Loop
    from verifier.diagnostics import SrcLoc
    from verifier.encode.pruning import dead
    from verifier.lang.ir import ir

    loc = SrcLoc("k.py", 1, 1)
    k, n = ir.Sym("iter_k", 1), ir.Sym("n", 2)

    def ctx(lo: ir.Expr, hi: ir.Expr, cond: ir.Expr, polarity: bool = True) -> Context:
        return Context(loops=(Loop(k, lo, hi, "seq", loc),), conds=((cond, polarity),))

    one, zero = ir.Const(1, loc), ir.Const(0, loc)
    at_least_one = ir.BinOp(">=", ir.Var(k, loc), one, loc)
    assert dead(ctx(zero, one, at_least_one), [n])
    assert not dead(ctx(one, ir.Var(n, loc), at_least_one), [n])
    assert not dead(ctx(zero, one, at_least_one, polarity=False), [n])  # the else branch runs
    assert dead(ctx(one, ir.Var(n, loc), at_least_one, polarity=False), [n])
    assert dead(ctx(one, one, ir.Const(True, loc)), [n])  # an empty loop
    (proc,) = load_procs(str(PROGRAM))
    model = analyze(proc)
    assert not any(dead(s.ctx, model.sizes) for s in
                   [*model.fences, *model.arrives, *model.awaits, *model.accesses])
