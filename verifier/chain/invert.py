"""Closed forms for a writer's iterators from the element it writes (CHAIN-3.4).

isl's last writers are exact but written in whatever form its integer programming reached, and
it splits one writer into many pieces that differ only in that form. Where a writer's index is
a mixed-radix combination of its iterators (`32 * r + t / 8`, `4 * (t % 8) + i`, with constant
ranges), each iterator has a short closed form in the element's coordinates:
`t = 8 * (x1 % 32) + x2 / 4`. `tidy` offers these (and isl's own forms) as the one piece
per writer the proof then works with. It is only a proposal: the last-writer obligations check
it, and where they fail isl's own pieces are used.
"""

from __future__ import annotations

from verifier.chain.dataflow import LastWriter, Piece, writes_before
from verifier.chain.presburger import (
    Aff, And, Cmp, Floor, Formula, conj, disj, lex_lt, neg)
from verifier.chain.program import Program, Stmt


def _const_bounds(dom: Formula) -> dict[str, tuple[int | None, int | None]]:
    """Constant lower and upper bounds (inclusive) of single variables in a conjunction."""
    out: dict[str, list[int | None]] = {}
    parts = dom.parts if isinstance(dom, And) else (dom,)
    for p in parts:
        if isinstance(p, Cmp) and not p.eq and len(p.aff.coeffs) == 1:
            (key, c), = p.aff.coeffs
            if isinstance(key, str) and c in (1, -1):
                lo_hi = out.setdefault(key, [None, None])
                if c == 1:  # key + k >= 0
                    lo_hi[0] = -p.aff.const if lo_hi[0] is None else max(lo_hi[0], -p.aff.const)
                else:  # -key + k >= 0
                    lo_hi[1] = p.aff.const if lo_hi[1] is None else min(lo_hi[1], p.aff.const)
    return {k: (v[0], v[1]) for k, v in out.items()}


class _Digits:
    """Each iterator as digits: v = r0 + d1 * g1 + ... for the divisors it is floored by."""

    def __init__(self, w: Stmt) -> None:
        self.bounds = _const_bounds(w.domain)
        divisors: dict[str, set[int]] = {v: set() for v in w.iters}
        for a in w.write.index:
            for key, _ in a.coeffs:
                if isinstance(key, Floor) and len(key.arg.coeffs) == 1 and key.arg.const == 0:
                    (var, c), = key.arg.coeffs
                    if isinstance(var, str) and c == 1 and var in divisors:
                        divisors[var].add(key.d)
        self.divs = {v: sorted(ds) for v, ds in divisors.items()}
        self.ranges: dict[str, int | None] = {}
        self.parts: dict[str, list[tuple[str, int]]] = {}  # v -> [(digit, weight)]
        for v, ds in self.divs.items():
            lo, hi = self.bounds.get(v, (None, None))
            chain = [1, *ds]
            if any(b % a for a, b in zip(chain, chain[1:])) or (ds and lo != 0):
                self.parts[v] = [(v, 1)]
                self.ranges[v] = None if hi is None or lo != 0 else hi + 1
                continue
            top = None if hi is None else -(-(hi + 1) // chain[-1])
            names = [f"{v}#{k}" for k in range(len(chain))]
            for k, name in enumerate(names):
                self.ranges[name] = chain[k + 1] // chain[k] if k + 1 < len(chain) else top
            self.parts[v] = list(zip(names, chain))

    def atom(self, key: str | Floor) -> dict[str, int] | None:
        """A variable or floor(v / d) as digits (None: not expressible)."""
        if isinstance(key, str):
            return dict(self.parts[key]) if key in self.parts else None
        (var, _), = key.arg.coeffs
        assert isinstance(var, str)
        return {name: weight // key.d for name, weight in self.parts[var] if weight >= key.d}


def closed_forms(w: Stmt, target: tuple[Aff, ...]) -> dict[str, Aff]:
    """Closed forms of `w`'s iterators such that `w` writes element `target`, where the
    mixed-radix shape allows; other iterators are left out."""
    digits = _Digits(w)
    solved: dict[str, Aff] = {}
    for a, x in zip(w.write.index, target, strict=True):
        lin: dict[str, int] = {}
        rest = Aff.num(a.const)
        ok = True
        for key, c in a.coeffs:
            name = key if isinstance(key, str) else None
            if name is not None and name not in digits.parts:
                rest = rest + Aff.var(name).scale(c)  # a size: moves to the other side
                continue
            if isinstance(key, Floor) and not (len(key.arg.coeffs) == 1 and key.arg.const == 0
                                               and next(iter(key.arg.coeffs))[0] in digits.parts):
                ok = False
                break
            part = digits.atom(key)
            if part is None:
                ok = False
                break
            for digit, weight in part.items():
                lin[digit] = lin.get(digit, 0) + c * weight
        lin = {d: c for d, c in lin.items() if c}
        if not ok or not lin or any(c <= 0 for c in lin.values()):
            continue
        value = x - rest
        order = sorted(lin, key=lambda d: lin[d])
        span = 0  # the largest value the lower digits reach
        for k, d in enumerate(order):
            if lin[d] <= span:
                break
            rng = digits.ranges.get(d)
            last = k == len(order) - 1
            if rng is None and not last:
                break
            q = value.floordiv(lin[d])
            solved.setdefault(d, q if last else q.mod(rng))  # type: ignore[arg-type]
            if rng is not None:
                span += lin[d] * (rng - 1)
    out: dict[str, Aff] = {}
    for v in w.iters:
        parts = digits.parts[v]
        if all(name in solved for name, _ in parts):
            acc = Aff.num(0)
            for name, weight in parts:
                acc = acc + solved[name].scale(weight)
            out[v] = acc
    return out


def tidy(prog: Program, lw: LastWriter) -> LastWriter | None:
    """A one-piece-per-writer proposal built from `lw` (None when a writer's iterators have
    no single form): closed forms where the index allows, else isl's shortest form; writer W's
    region is "W's proposed instance writes the element before the read, and no other
    writer's proposed instance does so later". Only a proposal: `dataflow.obligations`
    checks it. Rules: CHAIN-3.4"""
    groups: dict[int, list[Piece]] = {}
    for pc in lw.pieces:
        groups.setdefault(pc.writer.id, []).append(pc)
    proposed: list[tuple[Stmt, tuple[Aff, ...]]] = []
    for group in groups.values():
        w = group[0].writer
        nice = closed_forms(w, lw.sink.access.index)
        values = []
        for k, v in enumerate(w.iters):
            forms = {pc.values[k] for pc in group}
            if v in nice:
                values.append(nice[v])
            elif len(forms) == 1:
                values.append(forms.pop())
            else:
                return None
        proposed.append((w, tuple(values)))
    exists = [writes_before(prog, w, dict(zip(w.iters, vals)), lw.sink) for w, vals in proposed]
    pieces = []
    for (w, vals), here in zip(proposed, exists):
        sched = tuple(a.subst(dict(zip(w.iters, vals))) for a in w.sched)
        later = [conj([there, lex_lt(sched, tuple(a.subst(dict(zip(o.iters, ovals)))
                                                  for a in o.sched))])
                 for (o, ovals), there in zip(proposed, exists) if o is not w]
        pieces.append(Piece(conj([here, neg(disj(later))]), w, vals))
    return LastWriter(lw.sink, tuple(pieces), lw.none)
