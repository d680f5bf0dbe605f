"""The bijection between kernel updates and reference updates (CHAIN-7).

For one output buffer, the kernel's families and the reference's families (`terms`) are grouped
by term shape. isl proposes `phi`, the map from each kernel instance (element e, its free
updates) to the reference instance with the same element and the same operand elements, and its
inverse `psi`. Z3 then proves, for all sizes satisfying both procs' asserts:
  (a) every kernel instance has phi(k), a reference instance of e with the same operands,
  (b) phi is injective (no reference update is computed twice),
  (c) every reference instance r is phi(psi(r)) (no reference update is missing).
So the multisets of terms added to e are equal (CHAIN-7.1). An isl answer this module cannot
read makes the proof inapplicable (`MatchGap`), never proved.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import islpy as isl

from verifier.chain.isl_bridge import IslGap, pieces, space_text, tuple_text
from verifier.chain.presburger import (
    TRUE, Aff, Formula, conj, disj, eq, formula_text, neg, subst)
from verifier.chain.terms import Family, atoms, signature


class MatchGap(Exception):
    """The proof does not apply (isl's proposal is missing or unreadable); names why."""


@dataclass(frozen=True)
class Query:
    """Formulas that must all be unsatisfiable; a model of one is a counterexample whose
    variables the listed families name (the kernel's, then the reference's)."""

    id: str
    kind: str  # map | injective | surjective | unmatched-kernel | unmatched-reference
    text: str
    parts: tuple[Formula, ...]
    kernel: tuple[Family, ...]
    reference: tuple[Family, ...]


def _e_names(rank: int) -> tuple[str, ...]:
    return tuple(f"e{i}" for i in range(rank))


def _atom_affs(f: Family) -> list[Aff]:
    return [a for at in atoms(f.term) for a in at.index]


def _family_map_text(tag: str, f: Family, es: tuple[str, ...], context: Formula) -> str:
    src = tuple_text(tag, [*es, *f.prim])
    outs = [f"t{n}" for n in range(len(_atom_affs(f)))]
    dst = tuple_text("T", [*es, *outs])
    body = formula_text(conj([f.cond(), context,
                              *(eq(Aff.var(t), a) for t, a in zip(outs, _atom_affs(f)))]))
    defd = f.defd()
    if defd:
        body = f"exists ({', '.join(defd)} : {body})"
    return f"{src} -> {dst} : {body}"


def _union(params: tuple[str, ...], parts: list[str]) -> isl.UnionMap:
    return isl.UnionMap(f"{space_text(params)}{{ {'; '.join(parts)} }}")


def _split(umap: isl.UnionMap) -> dict[tuple[str, str], isl.Map]:
    out: dict[tuple[str, str], isl.Map] = {}
    maps: list[isl.Map] = []
    umap.foreach_map(maps.append)
    for m in maps:
        out[(m.get_tuple_name(isl.dim_type.in_), m.get_tuple_name(isl.dim_type.out))] = m
    return out


@dataclass(frozen=True)
class Fn:
    """A proposed function from a family's (e, prim) to another family's (e, prim)."""

    target: int
    cond: Formula
    values: tuple[Aff, ...]


def _functions(umap: isl.UnionMap, src: str, srcs: list[tuple[str, ...]], dst: str,
               ) -> dict[int, list[Fn]]:
    out: dict[int, list[Fn]] = {}
    for (a, b), m in _split(umap).items():
        i, j = int(a[len(src):]), int(b[len(dst):])
        try:
            if not m.is_single_valued():  # duplicates: any one candidate; (b) and (c) check
                m = m.lexmin()
            pma = isl.PwMultiAff.from_map(m)
        except isl.Error as e:
            raise MatchGap(f"isl finds no single matching update ({e})") from None
        try:
            out.setdefault(i, []).extend(Fn(j, c, v) for c, v in pieces(pma, srcs[i]))
        except IslGap as e:
            raise MatchGap(str(e)) from None
    return out


def _instantiate(fam: Family, es: tuple[str, ...], values: tuple[Aff, ...],
                 tag: str) -> Family:
    env = dict(zip([*es, *fam.prim], values))
    names = {n: f"{tag}{n}" for n in fam.defd()}
    return fam.renamed(env, names)


def _same(a: list[Aff], b: list[Aff]) -> Formula:
    return conj(eq(x, y) for x, y in zip(a, b, strict=True))


def queries(kernel: list[Family], reference: list[Family], rank: int, params: tuple[str, ...],
            context: Formula) -> list[Query]:
    """The obligations (a), (b), (c) for one output buffer. Rules: CHAIN-7.1, CHAIN-7.2"""
    es = _e_names(rank)
    shapes = sorted({signature(f.term) for f in kernel} | {signature(f.term) for f in reference})
    out: list[Query] = []
    for shape in shapes:
        ks = [f for f in kernel if signature(f.term) == shape]
        rs = [f for f in reference if signature(f.term) == shape]
        uninit = "uninit" in shape  # garbage never equals garbage: such updates must not occur
        if uninit or not rs:
            out += [Query(f"unmatched-kernel/{shape}/{i}", "unmatched-kernel",
                          f"the kernel adds no term {shape} the reference lacks",
                          (conj([context, f.cond()]),), (f,), ()) for i, f in enumerate(ks)]
        if uninit or not ks:
            out += [Query(f"unmatched-reference/{shape}/{j}", "unmatched-reference",
                          f"the reference adds no term {shape} the kernel lacks",
                          (conj([context, f.cond()]),), (), (f,)) for j, f in enumerate(rs)]
        if not uninit and ks and rs:
            out += _bijection(shape, ks, rs, es, params, context)
    return out


def _bijection(shape: str, ks: list[Family], rs: list[Family], es: tuple[str, ...],
               params: tuple[str, ...], context: Formula) -> list[Query]:
    kmap = _union(params, [_family_map_text(f"K{i}", f, es, context) for i, f in enumerate(ks)])
    rmap = _union(params, [_family_map_text(f"R{j}", f, es, context) for j, f in enumerate(rs)])
    phi_map = kmap.apply_range(rmap.reverse())
    ksrc = [(*es, *f.prim) for f in ks]
    rsrc = [(*es, *f.prim) for f in rs]
    phi = _functions(phi_map, "K", ksrc, "R")
    out: list[Query] = []
    for i, k in enumerate(ks):  # (a)
        base = conj([context, k.cond()])
        fns = phi.get(i, [])
        parts = [conj([base, *(neg(fn.cond) for fn in fns)])]
        for n, fn in enumerate(fns):
            r = _instantiate(rs[fn.target], es, fn.values, f"a{n}_")
            same = conj([*(eq(v, Aff.var(e)) for v, e in zip(fn.values, es)),
                         _same(_atom_affs(k), _atom_affs(r))])
            parts += [conj([base, fn.cond, d]) for d in r.not_exists(same)]
        out.append(Query(f"map/{shape}/K{i}", "map",
                         f"every kernel update {shape} matches a reference update of the same "
                         "element with the same operands", tuple(parts), (k,), ()))
    for (i1, k1), (i2, k2) in itertools.combinations_with_replacement(enumerate(ks), 2):  # (b)
        a = _instantiate(k1, es, tuple(Aff.var(v) for v in (*es, *k1.prim)), "")
        b_names = {v: f"b_{v}" for v in (*k2.prim, *k2.defd())}
        b = k2.renamed({}, b_names)
        clash = []
        for f1 in phi.get(i1, []):
            for f2 in phi.get(i2, []):
                if f1.target != f2.target:
                    continue
                v2 = tuple(x.subst({o: Aff.var(n) for o, n in b_names.items()})
                           for x in f2.values)
                clash.append(conj([f1.cond, subst(f2.cond, {o: Aff.var(n)
                                                            for o, n in b_names.items()}),
                                   _same(list(f1.values), list(v2))]))
        distinct = TRUE if i1 != i2 else neg(_same([Aff.var(v) for v in k1.prim],
                                                    [Aff.var(b_names[v]) for v in k2.prim]))
        both = conj([context, a.cond(), b.cond(), distinct])
        out.append(Query(f"injective/{shape}/K{i1}/K{i2}", "injective",
                         "no two kernel updates compute the same reference update",
                         tuple(conj([both, c]) for c in clash), (a, b), ()))
    psi = _functions(phi_map.reverse(), "R", rsrc, "K")
    for j, r in enumerate(rs):  # (c)
        base = conj([context, r.cond()])
        fns = psi.get(j, [])
        parts = [conj([base, *(neg(fn.cond) for fn in fns)])]
        for n, fn in enumerate(fns):
            k = _instantiate(ks[fn.target], es, fn.values, f"c{n}_")
            back = [conj([subst(g.cond, dict(zip(ksrc[fn.target], fn.values))),
                          _same([x.subst(dict(zip(ksrc[fn.target], fn.values)))
                                 for x in g.values], [Aff.var(v) for v in (*es, *r.prim)])])
                    for g in phi.get(fn.target, []) if g.target == j]
            parts += [conj([base, fn.cond, d]) for d in k.not_exists(disj(back))]
        out.append(Query(f"surjective/{shape}/R{j}", "surjective",
                         f"every reference update {shape} is computed by the kernel",
                         tuple(parts), (), (r,)))
    return out
