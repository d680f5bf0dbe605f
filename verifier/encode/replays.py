"""Replays of candidate counterexamples on the concrete machine, and what they confirm.

A candidate is only a model of an over-approximating query; the machine's own finding at the
model's sizes is what makes an obligation `refuted` (specs/verification.md, Replay cost and
Choice E7). Kept apart from `verify.py`, which orders the obligations and their refinement.
"""

from __future__ import annotations

from math import prod

from verifier.lang.ir import ir
from verifier.semantics.state import Finding as MachineFinding
from verifier.encode.discharge import Discharger
from verifier.encode.obligations import Built, Obligation
from verifier.encode.solver import Outcome, Status, evaluate, prepare

Replays = dict[tuple, list[MachineFinding]]


def run_machine(proc: ir.Proc, sizes: dict[str, int], **kwargs: object
                ) -> tuple[bool, list[MachineFinding]]:
    """The concrete machine, imported on the first replay: a proof that replays nothing (every
    proved proc) does not pay for its imports (numpy among them)."""
    from verifier.semantics.run import run_machine as run

    return run(proc, sizes, **kwargs)  # type: ignore[arg-type]


def replay(proc: ir.Proc, sizes: dict[str, int], cache: Replays,
           target: tuple[str, str | None, object] | None = None) -> list[MachineFinding]:
    """Errors the machine finds at `sizes`, first in trace order first.

    A cheap run that stops at the first error comes first; when its error is not the target
    obligation's, the machine runs again collecting every error on the target's variable
    alone (a targeted replay, Choice M8 of specs/verification.md), up to the target's first
    occurrence (a run that reaches the end is marked complete for that variable, or for every
    variable when untargeted, and never repeated; running collect-all to the end costs far
    more than stopping at the target, measured on gemm_sm80 mutants: 292 s against 45 s)."""
    key = tuple(sorted(sizes.items()))
    complete = ("complete",) + key
    if key not in cache:
        holds, first = run_machine(proc, sizes)
        cache[key] = first if holds else []
        if not holds or not first:
            cache[complete] = []
    found = cache[key]
    hit = target is not None and any((f.kind, f.variable, f.loc) == target for f in found)
    only = frozenset({target[1]}) if target is not None and target[1] is not None else None
    scope = complete if only is None else ("complete",) + tuple(sorted(only)) + key
    if not hit and complete not in cache and scope not in cache:
        holds, found = run_machine(proc, sizes, collect_all=True,
                                   stop_at=target, only=only)  # type: ignore[arg-type]
        merged = list(cache[key]) if holds else []
        merged += [f for f in found if all((f.kind, f.variable, f.loc) !=
                                            (g.kind, g.variable, g.loc) for g in merged)]
        cache[key] = merged
        if not any((f.kind, f.variable, f.loc) == target for f in found):
            cache[scope] = []
    return cache[key]


def cost(outcome: Outcome, sizes: tuple[str, ...]) -> tuple[int, int]:
    """How large a candidate's replay is: the product, then the sum, of its sizes."""
    return _size([(outcome.model or {}).get(name, 0) for name in sizes])


def _size(values: list[int]) -> tuple[int, int]:
    values = [max(1, v) for v in values]
    return prod(values), sum(values)


def seen(ob: Obligation, replays: Replays) -> tuple[dict[str, int], MachineFinding] | None:
    """Sizes and error of an earlier replay that found this obligation's error (same kind,
    variable, statement): refinement cannot remove it, and no new replay is needed. Of several
    such replays the smallest (product, then sum of the sizes; then the first run) is named:
    the report's counterexample is then the smallest the machine has shown."""
    target = (ob.kind, ob.variable, ob.loc)
    shown = [(_size([value for _, value in key]), i, key, f)
             for i, (key, found) in enumerate(replays.items())
             if not (key and key[0] == "complete")
             for f in found if (f.kind, f.variable, f.loc) == target]
    if not shown:
        return None
    _, _, key, f = min(shown, key=lambda s: (s[0], s[1]))
    return dict(key), f


def replay_first(proc: ir.Proc, ob: Obligation, built: Built, rlimit: int,
                 sizes: tuple[str, ...], discharger: Discharger, replays: Replays,
                 keep_text: bool) -> tuple[Outcome | None, int]:
    """Choice E7 (replay first): the constraints of a candidate (the first step's, before the
    obligation's first quantified query) asked for a model as an exact query (smallest sizes
    first) and the model replayed at once. The outcome to report when the machine shows the
    obligation's own error there (refinement only removes spurious candidates, and this one is
    confirmed), else None; and the resource units the exact query used. A model found under the wall-clock safety net
    depends on the machine's speed: it is not replayed (refinement goes on, D1)."""
    q = prepare(built.constraints, rlimit, exact=True, nonlinear=built.nonlinear, sizes=sizes)
    discharger.submit(q)
    answer = discharger.answer(q)
    if answer.status is not Status.candidate or answer.stopped_by:
        return None, answer.rlimit
    model = evaluate(built.names, q.own_constants(answer.constants))
    replay(proc, {name: model[name] for name in sizes}, replays,
           (ob.kind, ob.variable, ob.loc))
    if seen(ob, replays) is None:
        return None, answer.rlimit
    return Outcome(Status.candidate, model, "", q.digest, answer.rlimit, "",
                   q.published if keep_text else ""), answer.rlimit
