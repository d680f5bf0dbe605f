"""Unit evaluation (COLL-1.3, 1.6) and domain completion (COLL-1.5, 1.10).

Reads `CollUnit`s and concrete (blockDim, clusterDim); produces integer domains and boxes and
`Completion` records (the prepend, the deleted 1-coordinates, the ordered list of splits).
Errors are `RejectedInput` without a location. Non-goals: no tilings here (see tiling.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import prod

from verifier.diagnostics import RejectedInput
from verifier.lang.stdlib.units import CollSizeExpr, CollUnit

Box = tuple[int | None, ...]


class CompletionError(RejectedInput):
    """Domain completion or alignment failure (ERR-A21); unit matching turns it into a
    mismatch text, loop derivation into "Failed to compile"."""


def size_text(expr: CollSizeExpr) -> str:
    """`blockDim / 64`, `clusterDim * blockDim`, `3 * blockDim / 4`. Rules: COLL-1.3"""
    names = ["clusterDim"] * max(expr.c_pow, 0) + ["blockDim"] * max(expr.b_pow, 0)
    num, den = expr.coeff.numerator, expr.coeff.denominator
    parts = ([str(num)] if num != 1 or not names else []) + names
    text = " * ".join(parts)
    for name, power in (("clusterDim", expr.c_pow), ("blockDim", expr.b_pow)):
        text += f" / {name}" * max(-power, 0)
    if den != 1:
        text += f" / {den}"
    return text


def eval_size(expr: CollSizeExpr, block_dim: int, cluster_dim: int) -> int:
    """Evaluate a size expression; non-integers are "has divisibility issue with" (ERR-A21).

    Rules: COLL-1.3
    """
    value: Fraction = expr.evaluate(block_dim, cluster_dim)
    if value.denominator != 1:
        raise CompletionError(f"{size_text(expr)} has divisibility issue with "
                              f"blockDim={block_dim} clusterDim={cluster_dim}",
                              code="ERR-A21", rule="COLL-1.3")
    return int(value)


def unit_text(unit: CollUnit, block_dim: int | None = None,
              cluster_dim: int | None = None) -> str:
    """`CollUnit((blockDim,), (40,), ...)`-style description for error messages."""
    dom = ", ".join(size_text(d) for d in unit.domain)
    box = ", ".join("None" if b is None else size_text(b) for b in unit.box)
    return f"CollUnit(({dom},), ({box},), ...)"


def unit_label(unit: CollUnit) -> str:
    """The unit's name for messages; unnamed units print as `CollUnit((blockDim / 64, 64), ...)`
    with their current (scaled) domain and box."""
    if "CollUnit(" not in unit.name:
        return unit.name
    dom = ", ".join(size_text(d) for d in unit.domain)
    box = ", ".join("None" if b is None else size_text(b) for b in unit.box)
    return f"CollUnit(({dom}{',' if len(unit.domain) == 1 else ''}), " \
           f"({box}{',' if len(unit.box) == 1 else ''}))"


def eval_unit(unit: CollUnit, block_dim: int, cluster_dim: int) -> tuple[tuple[int, ...], Box]:
    """Concrete (domain, box) of a unit; checks well-formedness (D11, ERR-O09).

    Rules: COLL-1.3
    """
    domain = tuple(eval_size(d, block_dim, cluster_dim) for d in unit.domain)
    box = tuple(None if b is None else eval_size(b, block_dim, cluster_dim) for b in unit.box)
    for d_c, b_c in zip(domain, box):
        if d_c < 1 or (b_c is not None and not 1 <= b_c <= d_c):
            raise RejectedInput(f"ill-formed CollUnit {unit_label(unit)}: evaluates to "
                                f"domain={domain}, box={box} (need 1 <= box entry <= domain "
                                "entry)",
                                code="ERR-O09", rule="COLL-1.3")
    return domain, box


def align_unit(domain: tuple[int, ...], box: Box, unit: CollUnit,
               tiling_domain: tuple[int, ...]) -> tuple[tuple[int, ...], Box]:
    """Aligned form: (D_i, B_i) with B_i not in {None, D_i} becomes (D_i/B_i, B_i), box (1, B_i).

    Rules: COLL-1.6
    """
    new_domain: list[int] = []
    new_box: list[int | None] = []
    for d_c, b_c in zip(domain, box):
        if b_c is None or b_c == d_c:
            new_domain.append(d_c)
            new_box.append(b_c)
            continue
        if d_c % b_c != 0:
            raise CompletionError(f"Invalid alignment for CollUnit({domain}, {box}): {b_c} "
                                  f"doesn't divide {d_c} (change clusterDim/blockDim?); "
                                  f"domain={tiling_domain}", code="ERR-A21", rule="COLL-1.6")
        new_domain += [d_c // b_c, b_c]
        new_box += [1, b_c]
    return tuple(new_domain), tuple(new_box)


def _suffix_products(domain: tuple[int, ...]) -> list[int]:
    out = [1]
    for c in reversed(domain):
        out.append(out[-1] * c)
    out.reverse()
    return out


@dataclass(frozen=True, slots=True)
class Completion:
    """Bringing `source` to the common refinement with `target` (COLL-1.10).

    `prepend` is the coordinate prepended to a partial source (None if none); `removed` the
    deleted 1-coordinates (positions after earlier deletions); `splits` the ordered
    (current index, factor) splits; `domain` the result. Rules: COLL-1.10
    """

    source: tuple[int, ...]
    target: tuple[int, ...]
    prepend: int | None
    removed: tuple[int, ...]
    splits: tuple[tuple[int, int], ...]
    domain: tuple[int, ...]

    def _err(self, detail: str) -> CompletionError:
        return CompletionError(f"Domain completion for {self.source} and {self.target} failed: "
                               f"{detail}", code="ERR-A21", rule="COLL-1.10")

    def translate_box(self, box: Box, prepend: int | None = None) -> Box:
        """Box entries on the completed domain (COLL-1.5); `prepend` fills a prepended
        coordinate (1 = unitary, None = agnostic). Rules: COLL-1.5, COLL-1.10"""
        if len(box) != len(self.source):
            raise self._err(f"box {box} has the wrong length")
        coords: list[int | None] = list(box)
        if self.prepend is not None:
            coords.insert(0, prepend)
        for i in self.removed:
            if coords[i] not in (None, 1):
                raise self._err(f"expected coords[{i}]=1 in coords={coords}")
            del coords[i]
        for idx, factor in self.splits:
            c = coords[idx]
            if c is None:
                coords[idx:idx + 1] = [None, None]
            elif c < factor:
                coords[idx:idx + 1] = [1, c]
            else:
                if c % factor != 0:
                    raise self._err(f"{factor} doesn't divide {c}")
                coords[idx:idx + 1] = [c // factor, factor]
        return tuple(coords)


def complete(source: tuple[int, ...], target: tuple[int, ...],
             allow_partial_source: bool) -> Completion:
    """Common refinement of `source` toward `target` by the chain-merge formulation (D11):
    the result's boundary chain is the union of both chains, which must be a divisibility
    chain. Rules: COLL-1.10
    """
    probe = Completion(source, target, None, (), (), source)
    total_s, total_t = prod(source), prod(target)
    prepend = None
    coords = list(source)
    if allow_partial_source and total_s != total_t:
        if total_t % total_s != 0:
            raise probe._err(f"{total_s} doesn't divide {total_t}")
        prepend = total_t // total_s
        coords.insert(0, prepend)
    elif total_s % total_t != 0:
        raise probe._err(f"{total_t} doesn't divide {total_s}")
    removed: list[int] = []
    kept: list[int] = []
    for i, c in enumerate(coords):
        if c == 1:
            removed.append(i - len(removed))
        else:
            kept.append(c)
    tgt = tuple(c for c in target if c != 1)
    s_suffix = _suffix_products(tuple(kept))
    t_bounds = sorted(set(_suffix_products(tgt)))
    splits: list[tuple[int, int]] = []
    for i in range(len(kept) - 1, -1, -1):
        lo_b, hi_b = s_suffix[i + 1], s_suffix[i]
        prev = lo_b
        for bound in (b for b in t_bounds if lo_b < b < hi_b):
            if bound % prev != 0:
                raise probe._err(f"{prev} doesn't divide {bound}")
            if (hi_b // prev) % (bound // prev) != 0:
                raise probe._err(f"{bound // prev} doesn't divide {hi_b // prev}")
            splits.append((i, bound // prev))
            prev = bound
    domain = list(kept)
    for idx, factor in splits:
        domain[idx:idx + 1] = [domain[idx] // factor, factor]
    return Completion(source, target, prepend, tuple(removed), tuple(splits), tuple(domain))


def common_domain(tiling_domain: tuple[int, ...], unit_domain: tuple[int, ...]
                  ) -> tuple[Completion, Completion]:
    """(unit toward tiling with partial prepend, tiling toward unit); both must agree.

    Rules: COLL-1.10, COLL-2.2
    """
    unit_c = complete(unit_domain, tiling_domain, allow_partial_source=True)
    tiling_c = complete(tiling_domain, unit_domain, allow_partial_source=False)
    if unit_c.domain != tiling_c.domain or tiling_c.removed:
        raise tiling_c._err(f"completions disagree: {unit_c.domain} vs {tiling_c.domain}")
    return unit_c, tiling_c
