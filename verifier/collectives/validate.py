"""Ground truth versus model: prove that a tiling's model equals its generated guards.

Reads a `Tiling`; proves with Z3 that Encoding A (the tiling model) and Encoding B (the
guards) agree for every thread and every iterator value in range (COLL-6.2), and checks by
evaluation that no thread runs an out-of-range iteration or divides a negative value. On
failure raises `ERR-V08` with a counterexample. Results are cached per tiling.
Non-goals: unit typing (matching.py).
"""

from __future__ import annotations

from functools import lru_cache

from verifier.collectives.membership import (
    membership,
    model_membership,
    model_thread_set,
    thread_groups,
)
from verifier.collectives.symbolic import Z3Arith, find_model
from verifier.collectives.tiling import Tiling, by_position
from verifier.diagnostics import RejectedInput
from verifier.lang.stdlib.config import CudaDeviceFunction

DISAGREE = "tiling model disagrees with generated guards"
# COLL-6.2: a tiling whose instances times threads is at most this is decided by the exact
# enumeration (well under a ms on sporkbench tilings) instead of Z3 (a query: up to ~100 ms)
ENUMERATE_LIMIT = 1 << 18


def _thread_text(t: Tiling, n: int) -> str:
    if t.cluster_dim == 1:
        return f"thread n={n}"
    return f"thread n={n} (CTA rank {n // t.block_dim}, threadIdx.x {n % t.block_dim})"


def _xor_query(t: Tiling, dev: CudaDeviceFunction) -> dict[str, int] | None | str:
    keyed = t.iter_guards()
    names = ["n"] + [f"s{i}" for i in range(len(keyed))]

    def build(arith: Z3Arith, var: dict[str, object]):  # type: ignore[no-untyped-def]
        n = var["n"]
        iters = {g.iter_key: var[f"s{i}"] for i, g in enumerate(keyed)}
        bounds = [arith.in_range(n, 0, t.num_threads)]
        bounds += [arith.in_range(iters[g.iter_key], 0, g.tile_count) for g in keyed]
        mem_a = model_membership(t, n, iters, arith, dev)
        mem_b = membership(t, n, iters, arith, dev)
        return arith.and_(*bounds, arith.xor(mem_a, mem_b))

    return find_model(build, names)


def _enumerated_disagreement(t: Tiling, dev: CudaDeviceFunction) -> str | None:
    """Exact: compare both sets instance by instance (small tilings, and where Z3 answers
    unknown)."""
    tg = thread_groups(t, dev)
    for sigma in tg.instances():
        iters = dict(zip(tg.keys, sigma))
        truth = tg.groups.get(sigma, frozenset())
        model = model_thread_set(t, iters)
        if truth != model:
            n = min(truth ^ model)
            return _describe(t, n, sigma, n in model)
    return None


def _describe(t: Tiling, n: int, sigma: tuple[int, ...], in_model: bool) -> str:
    names = [g.iter_name or g.c_name for g in t.iter_guards()]
    values = ", ".join(f"{name}={v}" for name, v in zip(names, sigma))
    claim = ("the tiling claims it but the guards reject it" if in_model
             else "the guards accept it but the tiling excludes it")
    where = f" with {values}" if values else ""
    return (f"{DISAGREE}: {_thread_text(t, n)}{where}: {claim} "
            f"(tiling {t.describe()}, box={t.box})")


def validation_failure(t: Tiling, dev: CudaDeviceFunction) -> str | None:
    """None if model and guards agree, else the ERR-V08 message (it names iterators, never
    their keys: one answer per tiling up to its keys, `tiling.by_position`).
    Rules: COLL-6.2, COLL-7.3"""
    return _validation_failure(by_position(t)[0], dev)


@lru_cache(maxsize=1024)
def _validation_failure(t: Tiling, dev: CudaDeviceFunction) -> str | None:
    tg = thread_groups(t, dev)
    if tg.anomalies:
        n, text = tg.anomalies[0]
        return f"{DISAGREE}: {_thread_text(t, n)} {text} (tiling {t.describe()})"
    if not any(a.ops for a in t.axes) and not t.guards:
        return None
    if tg.num_instances() * t.num_threads <= ENUMERATE_LIMIT and \
            _enumerated_disagreement(t, dev) is None:
        return None  # exact; a disagreement is described by Z3's model, as before
    answer = _xor_query(t, dev)
    if answer is None:
        return None
    if isinstance(answer, str):
        return _enumerated_disagreement(t, dev)
    sigma = tuple(answer[f"s{i}"] for i in range(len(t.iter_guards())))
    n = answer["n"]
    in_model = n in model_thread_set(t, dict(zip(tg.keys, sigma)))
    return _describe(t, n, sigma, in_model)


def validate_tiling(t: Tiling, dev: CudaDeviceFunction) -> None:
    """Prove Encoding A <=> Encoding B for all threads and iterator values in range; raise
    `ERR-V08` ("tiling model disagrees with generated guards") with a counterexample.

    Rules: COLL-6.2, COLL-6.3, COLL-7.3
    """
    message = validation_failure(t, dev)
    if message is not None:
        raise RejectedInput(message, code="ERR-V08", rule="COLL-6.2")
