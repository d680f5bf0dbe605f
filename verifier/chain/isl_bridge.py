"""isl as an untrusted oracle (CHAIN-5): it proposes last writers and instance maps.

isl computes exact lexicographic maxima and inverses of Presburger relations; this module
writes `presburger` formulas as isl text and reads isl's piecewise quasi-affine answers back as
`presburger` terms. Nothing isl says is believed: every proposal is checked by Z3 (`smt`), so an
isl mistake or a conversion gap can only cost a proof, never make one.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import islpy as isl

from verifier.chain.presburger import (
    Aff, Formula, aff_text, conj, disj, eq, formula_text, ge)


class IslGap(Exception):
    """isl's answer has a shape this bridge does not read (the proof then is not attempted)."""


def space_text(params: Sequence[str]) -> str:
    return f"[{', '.join(params)}] -> " if params else ""


def tuple_text(name: str, entries: Sequence[Aff | str]) -> str:
    return f"{name}[{', '.join(e if isinstance(e, str) else aff_text(e) for e in entries)}]"


def set_of(params: Sequence[str], name: str, dims: Sequence[str], cond: Formula) -> isl.Set:
    return isl.Set(f"{space_text(params)}{{ {tuple_text(name, dims)} : {formula_text(cond)} }}")


def map_of(params: Sequence[str], disjuncts: Sequence[tuple[str, str, Formula]]) -> isl.Map:
    """A relation given as (source tuple text, target tuple text, condition) disjuncts."""
    body = "; ".join(f"{src} -> {dst} : {formula_text(c)}" for src, dst, c in disjuncts)
    return isl.Map(f"{space_text(params)}{{ {body} }}")


def _frac(v: isl.Val) -> Fraction:
    return Fraction(v.to_str())


def _names(obj: isl.Aff | isl.Constraint, kind: isl.dim_type) -> list[str]:
    return [obj.get_dim_name(kind, i) for i in range(obj.dim(kind))]


def aff_of(aff: isl.Aff, var_kind: isl.dim_type, var_names: Sequence[str]) -> Aff:
    """An isl aff (over params and `var_kind` dims named `var_names`) as a term. isl writes
    `(sum + sum_i c_i * div_i + const) / den` with `div_i = floor(get_div(i))`; an aff with a
    denominator is read as its floor (only exact values are ever believed: Z3 checks)."""
    den = _frac(aff.get_denominator_val())
    parts: list[tuple[Aff, Fraction]] = []
    for kind, names in ((isl.dim_type.param, _names(aff, isl.dim_type.param)),
                        (var_kind, list(var_names))):
        for i, name in enumerate(names):
            c = _frac(aff.get_coefficient_val(kind, i))
            if c:
                parts.append((Aff.var(name), c))
    for i in range(aff.dim(isl.dim_type.div)):
        c = _frac(aff.get_coefficient_val(isl.dim_type.div, i))
        if c:
            parts.append((aff_of(aff.get_div(i), var_kind, var_names), c))
    const = _frac(aff.get_constant_val()) * den
    scaled = [(a, c * den) for a, c in parts]
    if any(c.denominator != 1 for _, c in scaled) or const.denominator != 1:
        raise IslGap(f"non-integral aff {aff}")
    acc = Aff.num(int(const))
    for a, c in scaled:
        acc = acc + a.scale(int(c))
    return acc.floordiv(int(den)) if den != 1 else acc


def set_formula(s: isl.Set, names: Sequence[str]) -> Formula:
    """A set over dims `names` (and params) as a formula: a disjunction of basic sets."""
    s = s.compute_divs().remove_redundancies()
    out = []
    for bset in s.get_basic_sets():
        parts = []
        for c in bset.get_constraints():
            a = aff_of(c.get_aff(), isl.dim_type.in_, names)
            parts.append(eq(a, 0) if c.is_equality() else ge(a, 0))
        out.append(conj(parts))
    return disj(out)


def pieces(pma: isl.PwMultiAff, names: Sequence[str]) -> list[tuple[Formula, tuple[Aff, ...]]]:
    """The pieces of a piecewise multi-aff over domain dims `names`: (condition, values)."""
    out: list[tuple[Formula, tuple[Aff, ...]]] = []
    errors: list[Exception] = []

    def one(dom: isl.Set, maff: isl.MultiAff) -> None:
        try:
            vals = tuple(aff_of(maff.get_at(i), isl.dim_type.in_, names)
                         for i in range(maff.dim(isl.dim_type.out)))
            out.append((set_formula(dom, names), vals))
        except Exception as e:  # noqa: BLE001 - isl swallows callback exceptions; re-raised
            errors.append(e)

    pma.foreach_piece(one)
    if errors:
        if not isinstance(errors[0], (IslGap, isl.Error)):
            raise errors[0]
        raise IslGap(str(errors[0]))
    return out
