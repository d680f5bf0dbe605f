"""Which sync events and chains can carry an access's record to a later access: static
facts over the site model (SEM-1.8 order, SEM-5.4 chaining, SEM-6.3-6.5 pairing), no Z3.

A chain is a path of the static sync graph (e → g when τ2(e).F meets τ1(g).F) through
events that can sit between the two accesses in one task, in that order. `visibility.py`
turns each chain into Z3 terms over witness instances.
"""

from __future__ import annotations

import bisect
import itertools
from dataclasses import dataclass

import networkx as nx

from verifier.semantics import rules
from verifier.semantics.rules import Flag
from verifier.check.sites import (
    AccessSite, ArriveSite, AwaitSite, Context, FenceSite, Loop, ProgramModel,
)
from verifier.encode.pruning import dead

MAX_CHAIN = 3  # longest fence chain tried when shorter ones leave a spurious candidate


@dataclass(frozen=True)
class Event:
    """A sync event of a chain: a Fence, or an Arrive paired with an Await on one barrier
    variable (witness at the Arrive, augment at the Await: SEM-6.3, 6.4, 6.9)."""

    key: tuple[object, ...]
    first: rules.SyncSets
    second: rules.SyncSets
    fence: FenceSite | None = None
    arrive: ArriveSite | None = None
    await_: AwaitSite | None = None
    tag_site: AccessSite | None = None  # a TMA access whose own tags the Await retires

    @property
    def device(self) -> object:
        site = self.fence or self.arrive or self.await_
        assert site is not None
        return site.ctx.device

    @property
    def first_ctx(self) -> Context:
        site = self.fence or self.arrive or self.tag_site
        assert site is not None
        return site.ctx

    @property
    def last_ctx(self) -> Context:
        site = self.fence or self.await_
        assert site is not None
        return site.ctx


def may_precede(x: Context, y: Context) -> bool:
    """Some instance of x comes before some instance of y within one task (SEM-1.8): x is
    textually first, or the two share a loop inside the task (x in an earlier iteration).
    Otherwise every `before(x, y)` between instances of one task is false, and a chain
    that needs one is left out (it could only add an unsatisfiable disjunct)."""
    if x.path < y.path:
        return True
    dev = x.device
    outside = set(dev.outer_loops + dev.task_loops) if dev is not None else set()
    for p, q in zip(x.loops, y.loops):
        if p != q:
            return False
        if p.sym not in outside:
            return True
    return False


def _ordered(chain: tuple[Event, ...], a: Context, b: Context) -> bool:
    """The chain's events can sit between a and b in this order (may_precede links; a
    Fence is one instance, its own first and last, an Arrive must precede its Await)."""
    own = chain[0].tag_site is not None  # a's own tags: the chain starts at a itself
    if not (own or may_precede(a, chain[0].first_ctx)) or \
            not may_precede(chain[-1].last_ctx, b):
        return False
    if any(e.fence is None and not may_precede(e.first_ctx, e.last_ctx) for e in chain):
        return False
    return all(may_precede(x.last_ctx, y.first_ctx) for x, y in zip(chain, chain[1:]))


def _between(e: Event, a: Context, b: Context) -> bool:
    """Some instance of e can follow a and precede b (`may_precede`, SEM-1.8)."""
    return may_precede(a, e.first_ctx) and may_precede(e.last_ctx, b) and \
        (e.fence is not None or may_precede(e.first_ctx, e.last_ctx))


def _after_own(e: Event, b: Context) -> bool:
    """The Await of a's own tag event can follow a and precede b (as `_ordered` asks)."""
    return may_precede(e.first_ctx, e.last_ctx) and may_precede(e.last_ctx, b)


def sync_events(model: ProgramModel) -> list[Event]:
    """Every sync event of the proc but those with a site that never runs (PR-6,
    `pruning.dead`): a chain through one could only add an unsatisfiable disjunct."""
    live = {id(ctx): not dead(ctx, model.sizes) for ctx in
            [s.ctx for s in (*model.fences, *model.arrives, *model.awaits, *model.accesses)]}
    events = [e for e in _all_events(model) if all(
        live[id(site.ctx)] for site in (e.fence, e.arrive, e.await_, e.tag_site)
        if site is not None)]
    return events


def _all_events(model: ProgramModel) -> list[Event]:
    events = [Event(("F", f.id), rules.SYNC_SETS[f.first], rules.SYNC_SETS[f.second], fence=f)
              for f in model.fences]
    for arr in model.arrives:
        for aw in model.awaits:
            if aw.barrier == arr.barrier:
                events.append(Event(("P", arr.id, aw.id), rules.SYNC_SETS[arr.first],
                                    rules.SYNC_SETS[aw.second], arrive=arr, await_=aw))
    nothing = rules.SyncSets(frozenset(), frozenset())
    for site in model.accesses:  # SEM-6.5: a TMA's records carry tags of their own
        if site.trailing is None:
            continue
        for aw in model.awaits:
            if aw.barrier == site.trailing.barrier:
                events.append(Event(("T", site.id, aw.id), nothing, rules.SYNC_SETS[aw.second],
                                    await_=aw, tag_site=site))
    return events


def grants(second: rules.SyncSets, quals: frozenset, flag: Flag) -> bool:
    """A full augment with τ2 grants `flag` on some qual-tl of X (SEM-5.2)."""
    if flag is Flag.temp:
        return bool(second.temporal & quals)
    return bool(second.full & quals)


@dataclass(frozen=True)
class Chain:
    events: tuple[Event, ...]


def _inner_loop(ctx: Context) -> Loop | None:
    """The outermost loop of ctx inside the task (not a task or outer loop): two contexts
    share a loop inside the task iff they share this one (`may_precede`)."""
    dev = ctx.device
    outside = set(dev.outer_loops + dev.task_loops) if dev is not None else set()
    return next((lp for lp in ctx.loops if lp.sym not in outside), None)


class BetweenIndex:
    """Which of some items (each a first and a last context) can lie between two sites in
    one task, found without looking at every item (a kernel of 3,000 fenced phases has 3,000
    fences, and its pairs look at one or two). An item x with may_precede(a, first(x)),
    may_precede(last(x), b) and may_precede(first(x), last(x)) starts textually between a and
    b or inside the outermost loop inside the task of a or of b (specs/verification.md,
    "Chains that cannot be ordered"), so `candidates` returns those: a superset, in item
    order, for the caller's exact test."""

    def __init__(self, spans: list[tuple[Context, Context]]) -> None:
        order = sorted(range(len(spans)), key=lambda k: spans[k][0].path)
        self._order = order
        self._paths = [spans[k][0].path for k in order]
        self._by_loop: dict[Loop, list[int]] = {}
        for k, (first, last) in enumerate(spans):
            for ctx in (first,) if first is last else (first, last):
                loop = _inner_loop(ctx)
                if loop is not None:
                    self._by_loop.setdefault(loop, []).append(k)

    def candidates(self, a: Context, b: Context) -> list[int]:
        found: set[int] = set()
        if a.path < b.path:
            found.update(self._order[bisect.bisect_right(self._paths, a.path):
                                     bisect.bisect_left(self._paths, b.path)])
        for ctx in (a, b):
            loop = _inner_loop(ctx)
            if loop is not None:
                found.update(self._by_loop.get(loop, ()))
        return sorted(found)


class EventIndex:
    """The sync events that can sit between two accesses (`BetweenIndex`, then `_between`
    exactly; an Await retiring a's own tags, SEM-6.5, starts at a itself)."""

    def __init__(self, events: list[Event]) -> None:
        self.events = events
        self._between = BetweenIndex([(e.first_ctx, e.last_ctx) for e in events])
        self._own: dict[int, list[int]] = {}
        for k, e in enumerate(events):
            if e.tag_site is not None:
                self._own.setdefault(e.tag_site.id, []).append(k)

    def window(self, a: AccessSite, b: AccessSite) -> list[Event]:
        """The events that can sit between a and b in one task, in `events` order."""
        found = set(self._between.candidates(a.ctx, b.ctx)) | set(self._own.get(a.id, ()))
        out = []
        for k in sorted(found):
            e = self.events[k]
            if e.device is a.ctx.device and (_between(e, a.ctx, b.ctx) or
                                             e.tag_site is a and _after_own(e, b.ctx)):
                out.append(e)
        return out


def candidate_chains(index: EventIndex, a: AccessSite, b: AccessSite, flag: Flag,
                     max_chain: int = MAX_CHAIN, temporal: bool = False) -> list[Chain]:
    """Chains of sync events that can carry a's record to b with the flag: paths of the
    static sync graph (e → g when τ2(e).F meets τ1(g).F, chaining, SEM-5.4) over the events
    that can sit between a and b, at most `max_chain` long, in this order. With `temporal`,
    e → g when τ2(e).T meets τ1(g).T: how an endgame ring slot's storage is ordered (DIAL-6)."""
    if a.ctx.device is None or a.ctx.device is not b.ctx.device:
        return []
    window = index.window(a, b)
    # DIAL-6: an ordering-only record (ring storage) is ordered by τ1.T, which holds τ1.F
    starts = [e for e in window if a.qual.q0 in (e.first.temporal if temporal else e.first.full)
              or e.tag_site is a]
    ends = {e.key for e in window if grants(e.second, b.qual.extended, flag)}
    chains: list[Chain] = []
    by_key = {e.key: e for e in window}
    graph: nx.DiGraph | None = None
    for s in starts:
        if s.key in ends:
            chains.append(Chain((s,)))
        if max_chain < 2:
            continue
        if graph is None:
            graph = nx.DiGraph()
            graph.add_nodes_from(by_key)
            graph.add_edges_from((e.key, h.key) for e, h in itertools.product(window, repeat=2)
                                 if ((e.second.temporal & h.first.temporal) if temporal
                                     else (e.second.full & h.first.full)))
        for path in nx.all_simple_paths(graph, s.key, list(ends - {s.key}),
                                        cutoff=max_chain - 1):
            chains.append(Chain(tuple(by_key[k] for k in path)))
    return [c for c in chains if _ordered(c.events, a.ctx, b.ctx)]
