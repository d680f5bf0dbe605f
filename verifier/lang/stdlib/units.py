"""Collective units as user-facing objects (COLL-1.3): `CollUnit`, `blockDim`, `clusterDim`.

Units are plain immutable data evaluated against concrete (blockDim, clusterDim) by the
collectives package; this module only builds and validates them (stage O errors).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from verifier.diagnostics import RejectedInput


@dataclass(frozen=True, slots=True)
class CollSizeExpr:
    """coeff * blockDim^b * clusterDim^c, with a rational coefficient (COLL-1.3)."""

    coeff: Fraction
    b_pow: int = 0
    c_pow: int = 0

    def __mul__(self, other: object) -> "CollSizeExpr":
        if isinstance(other, CollSizeExpr):
            return CollSizeExpr(self.coeff * other.coeff, self.b_pow + other.b_pow,
                                self.c_pow + other.c_pow)
        if isinstance(other, int) and not isinstance(other, bool):
            return CollSizeExpr(self.coeff * other, self.b_pow, self.c_pow)
        return NotImplemented

    __rmul__ = __mul__

    def __truediv__(self, other: object) -> "CollSizeExpr":
        if isinstance(other, CollSizeExpr):
            return CollSizeExpr(self.coeff / other.coeff, self.b_pow - other.b_pow,
                                self.c_pow - other.c_pow)
        if isinstance(other, int) and not isinstance(other, bool) and other != 0:
            return CollSizeExpr(self.coeff / other, self.b_pow, self.c_pow)
        return NotImplemented

    def __rtruediv__(self, other: object) -> "CollSizeExpr":
        if isinstance(other, int) and not isinstance(other, bool):
            return CollSizeExpr(Fraction(other) / self.coeff, -self.b_pow, -self.c_pow)
        return NotImplemented

    def evaluate(self, block_dim: int, cluster_dim: int) -> Fraction:
        return (self.coeff * Fraction(block_dim) ** self.b_pow
                * Fraction(cluster_dim) ** self.c_pow)

    def __str__(self) -> str:
        parts = []
        if self.coeff != 1 or (self.b_pow == 0 and self.c_pow == 0):
            parts.append(str(self.coeff))
        for name, power in (("clusterDim", self.c_pow), ("blockDim", self.b_pow)):
            if power > 0:
                parts.extend([name] * power)
        text = " * ".join(parts)
        for name, power in (("clusterDim", self.c_pow), ("blockDim", self.b_pow)):
            if power < 0:
                text += f" / {name}" * (-power)
        return text


blockDim = CollSizeExpr(Fraction(1), b_pow=1)
clusterDim = CollSizeExpr(Fraction(1), c_pow=1)

SizeLike = CollSizeExpr | int


def _as_size(value: object) -> CollSizeExpr:
    if isinstance(value, CollSizeExpr):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return CollSizeExpr(Fraction(value))
    raise RejectedInput(f"CollUnit entry {value!r} is not an int or blockDim/clusterDim expression",
                        code="ERR-O09", rule="COLL-1.3")


@dataclass(frozen=True, slots=True)
class CollUnit:
    """A collective unit: a domain and a box (None = agnostic) of size expressions (COLL-1.3)."""

    domain: tuple[CollSizeExpr, ...]
    box: tuple[CollSizeExpr | None, ...]
    name: str = ""
    scaled_dim_idx: int | None = None

    def __init__(self, domain: tuple[SizeLike, ...], box: tuple[SizeLike | None, ...],
                 name: str | None = None, scaled_dim_idx: int | None = None) -> None:
        domain_t = tuple(_as_size(d) for d in domain)
        box_t = tuple(None if b is None else _as_size(b) for b in box)
        if len(domain_t) != len(box_t):
            raise RejectedInput(f"ill-formed CollUnit: domain {len(domain_t)} entries, box "
                                f"{len(box_t)}", code="ERR-O09", rule="COLL-1.3")
        object.__setattr__(self, "domain", domain_t)
        object.__setattr__(self, "box", box_t)
        object.__setattr__(self, "name", name or _default_name(domain_t, box_t))
        object.__setattr__(self, "scaled_dim_idx", scaled_dim_idx)

    def scaled(self, factor: object) -> "CollUnit":
        """`k * U` multiplies box[scaled_dim_idx] by k (COLL-1.3, ERR-O08); an integral float
        (`(N1 / Nw) * cuda_warp` with N1 / Nw == 4.0) counts as its int, as upstream."""
        if isinstance(factor, float) and factor.is_integer():
            factor = int(factor)
        if not isinstance(factor, int) or isinstance(factor, bool) or factor <= 0:
            raise RejectedInput(f"CollUnit {self.name} must be scaled by positive int, not "
                                f"{factor!r}", code="ERR-O08", rule="COLL-1.3")
        if self.scaled_dim_idx is None:
            raise RejectedInput(f"CollUnit {self.name} cannot be scaled", code="ERR-O08",
                                rule="COLL-1.3")
        k = self.scaled_dim_idx
        entry = self.box[k]
        assert entry is not None
        box = self.box[:k] + (entry * factor,) + self.box[k + 1:]
        name = f"{factor} * {self.name}"
        return CollUnit(self.domain, box, name, self.scaled_dim_idx)

    def __rmul__(self, factor: object) -> "CollUnit":
        return self.scaled(factor)

    def __mul__(self, factor: object) -> "CollUnit":
        return self.scaled(factor)

    def __str__(self) -> str:
        return self.name


def _default_name(domain: tuple[CollSizeExpr, ...], box: tuple[CollSizeExpr | None, ...]) -> str:
    dom = ", ".join(str(d) for d in domain)
    bx = ", ".join("None" if b is None else str(b) for b in box)
    return f"CollUnit(({dom},), ({bx},))"


B, C = blockDim, clusterDim
standalone_thread = CollUnit((1,), (1,), "standalone_thread", 0)
cuda_thread = CollUnit((B,), (1,), "cuda_thread", 0)
cuda_quadpair = CollUnit((B / 16, 16), (2, 4), "cuda_quadpair", None)
cuda_warp = CollUnit((B,), (32,), "cuda_warp", 0)
cuda_warpgroup = CollUnit((B,), (128,), "cuda_warpgroup", 0)
cuda_cta_in_cluster = CollUnit((C * B,), (B,), "cuda_cta_in_cluster", 0)
cuda_cluster = CollUnit((C * B,), (C * B,), "cuda_cluster", 0)
cuda_warp_in_cluster = CollUnit((C, B), (1, 32), "cuda_warp_in_cluster", 0)
cuda_agnostic_sub_cta = CollUnit((C, B), (1, None), "cuda_agnostic_sub_cta", None)
cuda_agnostic_intact_cta = CollUnit((C, B), (None, B), "cuda_agnostic_intact_cta", None)


def cuda_cta_in_cluster_strided(stride: int) -> CollUnit:
    return CollUnit((C / stride, stride, B), (1, 1, B),
                    f"cuda_cta_in_cluster_strided({stride})", 0)


def cuda_warp_in_cluster_strided(stride: int) -> CollUnit:
    return CollUnit((C / stride, stride, B), (1, 1, 32),
                    f"cuda_warp_in_cluster_strided({stride})", 0)


def cuda_threads_strided(count: int, stride: int) -> CollUnit:
    return CollUnit((B / stride, stride), (1, count),
                    f"cuda_threads_strided({count}, {stride})", 0)
