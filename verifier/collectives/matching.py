"""Unit completion and unit matching of scopes (COLL-1.13, 1.14, 2.6, 3.1..3.3).

Reads a `Tiling` and a `CollUnit`; produces the unit-completed tiling (labelled axes), the
algebraic match verdict with upstream's mismatch text, and the semantic verdict on the guard
formula (every instance's ground-truth thread set is an instance of the unit's aligned
unitary type). The two must agree, else `ERR-V08`. Also the fence-scope classification and
the one-thread check for scalar writes. Non-goals: deriving tilings, distributed memory.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from math import prod

from verifier.collectives.completion import (
    CompletionError,
    align_unit,
    common_domain,
    complete,
    eval_unit,
    unit_label,
)
from verifier.collectives.membership import thread_groups
from verifier.collectives.tiling import Label, Tiling, apply_splits, by_position
from verifier.collectives.validate import DISAGREE, validate_tiling
from verifier.diagnostics import InternalError, RejectedInput
from verifier.lang.stdlib.config import CudaDeviceFunction
from verifier.lang.stdlib.units import (
    CollUnit,
    cuda_cluster,
    cuda_cta_in_cluster,
    cuda_thread,
    cuda_warp,
)


@lru_cache(maxsize=1024)
def unit_completion(t: Tiling, unit: CollUnit) -> Tiling:
    """Align the unit, complete it with unitary prepend, complete the tiling to the same
    domain and label each axis from the completed unit box (None -> agnostic, 1 -> subdiv,
    D_k -> intact). Raises `CompletionError` (ERR-A21). Rules: COLL-1.6, COLL-1.13
    """
    u_domain, u_box = eval_unit(unit, t.block_dim, t.cluster_dim)
    a_domain, a_box = align_unit(u_domain, u_box, unit, t.domain)
    unit_c, tiling_c = common_domain(t.domain, a_domain)
    unit_box = unit_c.translate_box(a_box, prepend=1)
    axes = apply_splits(t.axes, tiling_c.splits)
    labelled = []
    for axis, u_k in zip(axes, unit_box):
        if u_k is None:
            label = Label.AGNOSTIC
        elif u_k == 1:
            label = Label.SUBDIV
        elif u_k == axis.extent:
            label = Label.INTACT
        else:
            raise InternalError(f"unit completion of {unit_label(unit)} left box entry {u_k} on "
                                f"an axis of extent {axis.extent}")
        labelled.append(replace(axis, label=label))
    return replace(t, axes=tuple(labelled), record=None)


def expected_box(t: Tiling) -> tuple[int | None, ...]:
    """Per axis: 1 (subdiv), D_k (intact) or None (agnostic). Rules: COLL-1.14"""
    return tuple(1 if a.label is Label.SUBDIV else a.extent if a.label is Label.INTACT
                 else None for a in t.axes)


def algebraic_mismatch(t: Tiling, unit: CollUnit) -> str | None:
    """COLL-1.14's verdict: None if the scope is a U-scope, else the mismatch text (the
    completion error, or "domain=..., box=... (k threads); expected box=...").

    Rules: COLL-1.13, COLL-1.14
    """
    try:
        done = unit_completion(t, unit)
    except RejectedInput as err:
        if isinstance(err, CompletionError) or err.code == "ERR-O09":
            return err.message
        raise
    box, expect = done.box, expected_box(done)
    if all(e is None or b == e for b, e in zip(box, expect)):
        return None
    return (f"domain={done.domain}, box={box} ({prod(box)} threads); "
            f"expected box={expect}")


def unit_type(unit: CollUnit, block_dim: int, cluster_dim: int
              ) -> tuple[tuple[int, ...], tuple[Label, ...]] | None:
    """The unit's aligned unitary collective type on [0, N): (domain, labels), or None if
    the unit cannot be evaluated or aligned at this size. Rules: COLL-1.4, COLL-1.6
    """
    total = block_dim * cluster_dim
    try:
        u_domain, u_box = eval_unit(unit, block_dim, cluster_dim)
        a_domain, a_box = align_unit(u_domain, u_box, unit, (total,))
        comp = complete(a_domain, (total,), allow_partial_source=True)
        box = comp.translate_box(a_box, prepend=1)
    except RejectedInput:
        return None
    labels = tuple(Label.AGNOSTIC if b is None else Label.SUBDIV if b == 1 else Label.INTACT
                   for b in box)
    return comp.domain, labels


def _is_instance(members: frozenset[int], domain: tuple[int, ...],
                 labels: tuple[Label, ...]) -> bool:
    if not members:
        return False
    pitches = [prod(domain[m + 1:]) for m in range(len(domain))]
    sizes = 1
    for extent, pitch, label in zip(domain, pitches, labels):
        coords = {(n // pitch) % extent for n in members}
        if label is Label.SUBDIV and len(coords) != 1:
            return False
        if label is Label.INTACT and len(coords) != extent:
            return False
        sizes *= len(coords)
    return sizes == len(members)


def semantic_match(t: Tiling, unit: CollUnit, dev: CudaDeviceFunction
                   ) -> tuple[bool, tuple[int, ...] | None]:
    """Whether every instance's ground-truth thread set is an instance of the unit's type
    (subdiv / intact / product closure / non-emptiness, by enumeration), and a failing
    iterator tuple (values, in guard order: one answer per tiling up to its iterator keys,
    `tiling.by_position`). Rules: COLL-3.3, COLL-7.4
    """
    return _semantic_match(by_position(t)[0], unit, dev)


@lru_cache(maxsize=2048)
def _semantic_match(t: Tiling, unit: CollUnit, dev: CudaDeviceFunction
                    ) -> tuple[bool, tuple[int, ...] | None]:
    typ = unit_type(unit, t.block_dim, t.cluster_dim)
    tg = thread_groups(t, dev)
    for sigma in tg.instances():
        members = tg.groups.get(sigma, frozenset())
        if typ is None or not _is_instance(members, *typ):
            return False, sigma
    return True, None


def match_mismatch(t: Tiling, unit: CollUnit, dev: CudaDeviceFunction) -> str | None:
    """Unit match confirmed on the guard formula: None if the scope is a U-scope, else the
    mismatch text. Disagreement between algebra and guards raises `ERR-V08`; a matching
    completed tiling is itself validated (COLL-6.2). Rules: COLL-1.14, COLL-3.3, COLL-6.2
    """
    text = algebraic_mismatch(t, unit)
    semantic, witness = semantic_match(t, unit, dev)
    if (text is None) != semantic:
        names = ", ".join(f"{g.iter_name or g.c_name}={v}"
                          for g, v in zip(t.iter_guards(), witness or ()))
        label = unit_label(unit)
        detail = (f"the tiling matches {label} but the executing threads"
                  f"{' for ' + names if names else ''} are not one {label} instance"
                  if text is None else
                  f"the tiling does not match {label} ({text}) but every executing thread "
                  f"set is a {label} instance")
        raise RejectedInput(f"{DISAGREE}: {detail} (tiling {t.describe()})", code="ERR-V08",
                            rule="COLL-3.3")
    if text is None:
        validate_tiling(unit_completion(t, unit), dev)
    return text


def matches_unit(t: Tiling, unit: CollUnit, dev: CudaDeviceFunction) -> str | None:
    """Public unit check: None = the scope matches `unit`, else the mismatch text.

    Rules: COLL-1.13, COLL-1.14, COLL-3.3
    """
    return match_mismatch(t, unit, dev)


def require_unit(t: Tiling, unit: CollUnit, dev: CudaDeviceFunction, callee: str) -> None:
    """An instruction's needed unit: "wrong collective unit (need U) for F(): ..." (ERR-A19).

    Rules: COLL-3.1
    """
    text = match_mismatch(t, unit, dev)
    if text is not None:
        raise RejectedInput(f"wrong collective unit (need {unit_label(unit)}) for {callee}(): "
                            f"{text}", code="ERR-A19", rule="COLL-3.1")


def fence_scope(t: Tiling, dev: CudaDeviceFunction) -> str:
    """Garden-variety Fence scope: "cluster" (C > 1 and cuda_cluster), else "thread" / "warp"
    / "cta" for cuda_thread / cuda_warp / cuda_cta_in_cluster, tried in that order; else
    "Fence collective unit matched no known case" (ERR-L02). Rules: COLL-3.2, LANG-5.20
    """
    if dev.clusterDim > 1 and match_mismatch(t, cuda_cluster, dev) is None:
        return "cluster"
    for unit, scope in ((cuda_thread, "thread"), (cuda_warp, "warp"),
                        (cuda_cta_in_cluster, "cta")):
        if match_mismatch(t, unit, dev) is None:
            return scope
    raise RejectedInput(f"Fence collective unit matched no known case: domain={t.domain}, "
                        f"box={t.box} ({t.box_threads} threads)", code="ERR-L02",
                        rule="COLL-3.2")


def one_thread(t: Tiling, dev: CudaDeviceFunction) -> None:
    """Scalar `=`/`+=` need a one-thread box: "write must be executed by one thread only
    (current: N threads)" (ERR-A18). Rules: COLL-2.6
    """
    validate_tiling(t, dev)
    if t.box_threads != 1:
        raise RejectedInput(f"write must be executed by one thread only (current: "
                            f"{t.box_threads} threads)", code="ERR-A18", rule="COLL-2.6")
