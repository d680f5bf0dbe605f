"""PR-8 (specs/verification.md): one query for an operand that both branches of an `if` read
alike, such as `if k == 0:` the overwriting tcgen05.mma `else:` the accumulating one (BW-2.3).

Two read sites are *twins* when they are the same access (variable, element, kind, qual-tls,
loops, tiling) of the one statement of each branch, and the branches hold nothing else: no
sync site, no other access of the variable, no other statement with accesses. Every other
site is then ordered the same way against both, so the *merged* site (the then-branch read
without the `if` condition) has, instance for instance, the accesses of the two twins at
positions no other site can tell apart. A hazard pair of each twin with one partner is
settled by the merged pair's query when that query is unsat; any other answer sends the twins
to their own queries, which alone report counterexamples.
"""

from __future__ import annotations

from dataclasses import replace

from verifier.check.sites import AccessSite, ProgramModel
from verifier.semantics.rules import AccessKind

Path = tuple[int, ...]


def _branch(a: AccessSite, b: AccessSite) -> Path | None:
    """The `if`'s path P when a is at P + (0, i, sub) and b at P + (1, j, sub)."""
    pa, pb = a.ctx.path, b.ctx.path
    if len(pa) != len(pb) or len(pa) < 3 or pa[-1] != pb[-1]:
        return None
    prefix = pa[:-3]
    if pb[:-3] != prefix or pa[-3] != 0 or pb[-3] != 1:
        return None
    return prefix


def _alike(a: AccessSite, b: AccessSite) -> bool:
    """Same access but for the last `if` condition's polarity and the position."""
    ca, cb = a.ctx.conds, b.ctx.conds
    if not ca or len(ca) != len(cb) or ca[:-1] != cb[:-1]:
        return False
    (cond_a, pol_a), (cond_b, pol_b) = ca[-1], cb[-1]
    if cond_a is not cond_b or not pol_a or pol_b:
        return False
    if replace(b.ctx, conds=ca, path=a.ctx.path) != a.ctx:
        return False
    return replace(b, id=a.id, loc=a.loc, ctx=a.ctx) == a


def _candidate(s: AccessSite) -> bool:
    return s.tracked and s.kind is AccessKind.read and not s.is_free and s.trailing is None \
        and len(s.ctx.path) >= 3


def merged_sites(model: ProgramModel) -> dict[int, AccessSite]:
    """Site id -> the merged site, for each twin (both twins map to one object)."""
    reads = [s for s in model.accesses if _candidate(s)]
    sync_paths = [x.ctx.path for x in (*model.fences, *model.arrives, *model.awaits,
                                       *model.tmas)]
    sync_paths += [p for d in model.barriers.values() for p in (d.ctx.path, d.free_ctx.path)]
    out: dict[int, AccessSite] = {}
    by_then: dict[tuple[object, ...], AccessSite] = {}
    for s in reads:
        if s.ctx.path[-3] == 0:
            by_then[(s.buf, s.ctx.path[:-3], s.ctx.path[-1])] = s
    for b in reads:
        if b.ctx.path[-3] != 1:
            continue
        a = by_then.get((b.buf, b.ctx.path[:-3], b.ctx.path[-1]))
        if a is None or _branch(a, b) is None or not _alike(a, b):
            continue
        if not _alone(model, sync_paths, a) or not _alone(model, sync_paths, b):
            continue
        merged = replace(a, ctx=replace(a.ctx, conds=a.ctx.conds[:-1]))
        out[a.id] = out[b.id] = merged
    return out


def _alone(model: ProgramModel, sync_paths: list[Path], site: AccessSite) -> bool:
    """The site's statement is all its branch holds: no sync site in the branch, every
    access in it is of that statement, and only this one of the site's variable."""
    stmt = site.ctx.path[:-1]
    branch = stmt[:-1]
    n = len(branch)
    if any(p[:n] == branch for p in sync_paths):
        return False
    inside = [s for s in model.accesses if s.ctx.path[:n] == branch]
    return all(s.ctx.path[:-1] == stmt and len(s.ctx.path) == len(site.ctx.path)
               for s in inside) and sum(s.buf == site.buf for s in inside) == 1
