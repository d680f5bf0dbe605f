"""Choice E4 (specs/verification.md): the representative link thread of an instance is the
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
from verifier.lang.load import load_procs
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
