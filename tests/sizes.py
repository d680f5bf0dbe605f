"""Small size valuations satisfying a proc's asserts, found with Z3 (test helper)."""

from __future__ import annotations

import z3

from verifier.lang.ir import ir
from verifier.semantics.exprs import eval_expr, strides_read
from verifier.encode.instances import z3_ops


def sample_sizes(proc: ir.Proc, count: int = 3, bound: int = 64) -> list[dict[str, int]]:
    ctx = z3.Context()
    ops, lift = z3_ops(ctx)  # constant sub-expressions stay ints until lifted
    controls = [a for a in proc.args if isinstance(a.typ, ir.Control)]
    env = {a.name: z3.Int(a.name.name, ctx) for a in controls}
    s = z3.Solver(ctx=ctx)
    for a in controls:
        s.add(env[a.name] >= (1 if a.typ.kind == "size" else 0), env[a.name] <= bound * 16)
    strides = {k: z3.Int(k.name, ctx) for p in proc.preds for k in strides_read(p)}
    for p in proc.preds:  # a window's stride is one more unknown (LANG-2.8)
        v = lift(eval_expr(p, {**env, **strides}, ops))
        s.add(v if z3.is_bool(v) else v != 0)
    out: list[dict[str, int]] = []
    total = z3.Sum([v for v in env.values()]) if env else z3.IntVal(0, ctx)
    while len(out) < count and s.check() == z3.sat:
        m = s.model()
        sizes = {a.name.name: m.eval(env[a.name], model_completion=True).as_long()
                 for a in controls}
        out.append(sizes)
        if not env:
            break
        s.add(z3.Or([env[a.name] != sizes[a.name.name] for a in controls]))
        s.add(total <= sum(sizes.values()) * 2 + 16)
    return out


def check_symbolic_equals_concrete(proc: ir.Proc, count: int = 3, bound: int = 32) -> None:
    """Differential check (architecture.md §3): at `count` small sizes the fixed-size proof and
    the concrete machine give the same verdict (the machine's `no-hazard-at-sizes` is a
    fixed-size proof's `proved`, specs/verification.md)."""
    from verifier.encode import Options, concrete_verdict, verify_proc
    from verifier.results import Verdict

    all_sizes = sample_sizes(proc, count=count, bound=bound)
    assert all_sizes, "the asserts admit no small size"
    for sizes in all_sizes:
        concrete, _ = concrete_verdict(proc, sizes)
        symbolic = verify_proc(proc, Options(fixed_sizes=sizes, point=True)).verdict
        assert symbolic is not Verdict.unknown, f"unknown at {sizes}"
        same = Verdict.proved if concrete is Verdict.no_hazard_at_sizes else concrete
        assert symbolic == same, f"at {sizes}: symbolic {symbolic}, concrete {concrete}"
