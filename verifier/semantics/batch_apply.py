"""The checks and history updates of one region (batch.py) per buffer, with numpy.

Per element, the region's accesses in trace order are checked exactly as the machine checks
them one at a time (SEM-4.5): an access against the records live at it, i.e. the region's last
mutate before it on that element (with the reads since, for a mutate), or the element's history
from before the region while the region has not mutated it. Records made in the region keep
the visibility they were made with until the region ends (no sync runs inside), so a check
against one depends only on the two accesses' signatures and collectives (memoised), and a
check against an older history only on that history and the access (memoised per region; for
single-thread collectives one mask of passing threads per history, `Record.passing`).

The new histories follow SEM-2.6: a mutate keeps only itself, reads accumulate. Records are
made once per (signature, collective) and shared by every element they land on; identical read
records are kept once, and single-thread or per-thread read records of one signature on an
element are kept as one per-thread family over their union (SEM-4.4: a family is exactly the set
of its members' records). Both are the same visibility state as the one-at-a-time machine's,
without its origins: this path only decides that no check fails; when one does, `Diverge` makes
the caller rerun the reference machine, which reports it (fast.py).

Since an element's outcome depends only on its older history and its accesses, a buffer's
elements that share both are checked once: `apply_region` runs a buffer on the cells of
cells.py (Choice M14) where they are fewer than its elements, and "element" below means either.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from verifier.semantics import rules
from verifier.semantics.batch import LocalBuf, NotBatched, Site
from verifier.semantics.cells import compress
from verifier.semantics.histories import EMPTY, BufInstance
from verifier.semantics.records import FIDX, FLAGS_ALL, QIDX, TEMP, Group, Record, passes
from verifier.semantics.rules import AccessKind, Flag
from verifier.semantics.threads import Threads
from verifier.semantics.uniq import unique_first, unique_inverse, unique_values

_ISSUE_ONLY = 1 << FIDX[Flag.issue]
_KIND_CODE = {AccessKind.read: 0, AccessKind.write: 1, AccessKind.read_write: 2}
_MFLAG = np.array([FIDX[Flag.full], FIDX[Flag.temp], FIDX[Flag.full]], dtype=np.int64)
_RNG = np.random.default_rng(20)


class Diverge(Exception):
    """A check failed (or the batched path met what it does not model): the reference machine
    reruns the proc and reports."""


class Sig:
    """What a check or a new record needs of one access: SEM-3.3's entry and the conv bit."""

    __slots__ = ("kind", "quals", "qbits", "conv", "q", "flags0", "mflag", "key")

    def __init__(self, kind: AccessKind, entry: rules.QualEntry, quals: tuple[int, ...],
                 qbits: int, conv: bool) -> None:
        self.kind, self.quals, self.qbits, self.conv = kind, quals, qbits, conv
        self.q = QIDX[entry.q0]
        self.flags0 = _ISSUE_ONLY if entry.q0 in rules.OUT_OF_ORDER else FLAGS_ALL
        self.mflag = FIDX[Flag.full] if kind is AccessKind.read else \
            FIDX[rules.mutate_flag(kind)]
        self.key = (kind, entry, conv)


class Elements:
    """The element accesses of one buffer in a region: element, position, collective, sig."""

    def __init__(self) -> None:
        self.parts: list[tuple[np.ndarray, ...]] = []

    def add(self, elem: np.ndarray, pos: np.ndarray, col: np.ndarray, sig: np.ndarray) -> None:
        self.parts.append((elem, pos, col, sig))

    def arrays(self) -> tuple[np.ndarray, ...]:
        return tuple(np.concatenate([p[k] for p in self.parts]) for k in range(4))


def in_bounds(site: Site) -> Site | None:
    """The site without its empty boxes (they touch nothing, not even a bounds check), None
    when none is left; Diverge when a box leaves the buffer (SEM-4.3: the reference reports)."""
    shape = site.buf.shape
    if len(site.lo) != len(shape):
        raise Diverge("index rank")
    keep = np.ones(len(site.pos), dtype=bool)
    for lo, hi in zip(site.lo, site.hi):
        keep &= hi > lo
    for (lo, hi), n in zip(zip(site.lo, site.hi), shape):
        if ((lo < 0) & keep).any() or ((hi > n) & keep).any():
            raise Diverge("out of bounds")
    if not keep.any():
        return None
    if keep.all():
        return site
    rows = np.flatnonzero(keep)
    return replace(site, lo=[a[rows] for a in site.lo], hi=[a[rows] for a in site.hi],
                   cols=site.cols[rows], pos=site.pos[rows],
                   inst=None if site.inst is None else site.inst[rows])


def expand(m: Any, site: Site, entry: Elements) -> None:
    """The site's element accesses (C order within a box, as SEM-4.3); its boxes are in
    bounds and non-empty (`in_bounds`)."""
    buf, shape = site.buf, site.buf.shape
    lo, cols, pos = site.lo, site.cols, site.pos
    ext = np.stack([h - a for h, a in zip(site.hi, lo)], axis=1) if shape else \
        np.zeros((len(pos), 0), dtype=np.int64)
    strides = [int(np.prod(shape[k + 1:], dtype=np.int64)) for k in range(len(shape))]
    base = sum((a * s for a, s in zip(lo, strides)), np.zeros(len(ext), dtype=np.int64))
    if site.inst is not None:
        base = base + site.inst * buf.size
    sigs = sig_ids(m, site, cols)
    if not len(ext) or (ext == ext[0]).all():
        uniq, inv = ext[:1], None
    else:  # distinct extents (rows), each row as one mixed-radix number
        key, bound = np.zeros(len(ext), dtype=np.int64), 1
        for d in range(ext.shape[1]):
            radix = int(ext[:, d].max()) + 1
            bound *= radix
            if bound >= 1 << 62:
                raise NotBatched("extents too large for one key")
            key = key * radix + ext[:, d]
        _, first, inv = unique_first(key)
        uniq = ext[first]
    for k, e in enumerate(uniq):
        sel = slice(None) if inv is None else np.flatnonzero(inv == k)
        offs = np.zeros(1, dtype=np.int64)
        for n_d, s_d in zip(e.tolist(), strides):
            offs = (offs[:, None] + np.arange(n_d, dtype=np.int64)[None, :] * s_d).reshape(-1)
        size = len(offs)
        entry.add((base[sel][:, None] + offs[None, :]).reshape(-1), np.repeat(pos[sel], size),
                  np.repeat(cols[sel], size), np.repeat(sigs[sel], size))


def sig_ids(m: Any, site: Site, cols: np.ndarray) -> np.ndarray:
    """The signature id of each instance (conv depends on whether its collective is one
    thread, SEM-4.1)."""
    buf = site.buf
    cached = buf.entries.get(site.instr_tl)
    if cached is None:
        entry = rules.qual_entry(buf.mem.family, site.instr_tl, f"{buf.sym.name} @ {buf.mem}")
        cached = buf.entries[site.instr_tl] = (entry, *m.qual_codes(entry))
    entry, quals, qbits = cached
    uniq, inv = unique_inverse(cols)
    ids = []
    for c in uniq.tolist():
        t = m.cols[c]
        single = t.task is not None and t.mask & (t.mask - 1) == 0 and t.mask != 0
        conv = rules.access_convergent(entry.q0, site.kind, site.in_instr, t.task is not None,
                                       single)
        k = m.sig_ids.get((site.kind, entry, conv))  # Sig.key, without making the Sig
        ids.append(m.sig_id(Sig(site.kind, entry, quals, qbits, conv)) if k is None else k)
    return np.asarray(ids, dtype=np.int64)[inv]


def apply_region(m: Any, sites: list[Site]) -> None:
    """Check every access of the region (Diverge on a failure) and then update the histories;
    per buffer on cells where they pay (cells.py, Choice M14), else on elements."""
    per_buf: dict[int, tuple[Any, list[Site]]] = {}
    for site in sites:
        if site.kind not in _KIND_CODE:
            raise NotBatched("atomic access")
        kept = in_bounds(site)
        if kept is not None and site.buf.tracked:
            per_buf.setdefault(id(site.buf), (site.buf, []))[1].append(kept)
    plans = []
    for buf, kept_sites in per_buf.values():
        grid, cell_sites = compress(buf, kept_sites) or (None, kept_sites)
        if grid is not None:
            buf, kept_sites = grid.cells, cell_sites
        elems = Elements()
        for site in kept_sites:
            expand(m, site, elems)
        plans.append((check_buffer(m, buf, *elems.arrays()), grid))
    for plan, grid in plans:
        if plan is not None:
            update_buffer(m, *plan)
            if grid is not None:
                grid.write_back()


def check_buffer(m: Any, buf: Any, elem: np.ndarray, pos: np.ndarray, col: np.ndarray,
                 sig: np.ndarray) -> tuple[Any, ...] | None:
    """SEM-4.5 on every element access of `buf`; what `update_buffer` needs, or None."""
    kind = m.sig_kind[sig]
    if not kind.any():
        return check_reads(m, buf, elem, col, sig)
    order = np.argsort(elem, kind="stable")  # sites are runs sorted by element: cheap
    start = np.ones(len(elem), dtype=bool)
    start[1:] = elem[order[1:]] != elem[order[:-1]]
    if not (start[1:] | (pos[order[1:]] > pos[order[:-1]])).all():
        top = int(pos.max()) + 1
        order = np.argsort(elem * top + pos) if int(elem.max()) < (1 << 62) // top else \
            np.lexsort((pos, elem))
        start[1:] = elem[order[1:]] != elem[order[:-1]]
    elem, col, sig, kind = elem[order], col[order], sig[order], kind[order]
    n = len(elem)
    idx = np.arange(n, dtype=np.int64)
    run0 = np.maximum.accumulate(np.where(start, idx, 0))
    is_mut = kind != 0
    last = np.maximum.accumulate(np.where(is_mut, idx, -1))
    prev = np.empty(n, dtype=np.int64)
    prev[0] = -1
    prev[1:] = last[:-1]
    prev[prev < run0] = -1
    # the region's last mutate before an access, checked with the access's flag
    a = np.flatnonzero(prev >= 0)
    pairs = [(prev[a], a, _MFLAG[kind[a]])]
    # reads before a mutate (since the previous one), checked with temp
    nxt = np.minimum.accumulate(np.where(is_mut, idx, n)[::-1])[::-1]
    r = np.flatnonzero(~is_mut & (nxt < n))
    r = r[elem[np.minimum(nxt[r], n - 1)] == elem[r]]
    pairs.append((r, nxt[r], np.full(len(r), TEMP, dtype=np.int64)))
    check_pairs(m, np.concatenate([p[0] for p in pairs]), np.concatenate([p[1] for p in pairs]),
                np.concatenate([p[2] for p in pairs]), sig, col)
    if isinstance(buf, LocalBuf):
        return None
    flat = buf.ids.reshape(-1)
    old = flat[elem]
    first = np.flatnonzero((prev < 0) & (old != EMPTY))
    check_old(m, old[first], sig[first], col[first])
    ends = np.flatnonzero(np.append(start[1:], True))
    lm = last[ends]
    lm[lm < run0[ends]] = -1
    run = np.cumsum(start) - 1  # run (element) number of each access
    keep = ~is_mut & (idx > lm[run])  # the reads after the run's last mutate stay
    mut = np.where(lm >= 0, sig[lm] * len(m.cols) + col[lm], -1)
    return buf, elem[ends], old[ends], run[keep], sig[keep], col[keep], mut


def check_reads(m: Any, buf: Any, elem: np.ndarray, col: np.ndarray, sig: np.ndarray
                ) -> tuple[Any, ...] | None:
    """A buffer the region only reads: each access checks the older history alone (reads
    never check reads), in any order; every read record stays (SEM-2.6)."""
    if isinstance(buf, LocalBuf):
        return None
    elems, run = unique_inverse(elem)
    old = buf.ids.reshape(-1)[elems]
    hist = old[run]
    first = np.flatnonzero(hist != EMPTY)
    check_old(m, hist[first], sig[first], col[first])
    return buf, elems, old, run, sig, col, np.full(len(elems), -1, dtype=np.int64)


def check_pairs(m: Any, a: np.ndarray, b: np.ndarray, flag: np.ndarray, sig: np.ndarray,
                col: np.ndarray) -> None:
    """Access b against the record the region made for access a (same element)."""
    if not len(a):
        return
    ns, nc = len(m.sigs), len(m.cols)
    if ns * ns * nc * nc * 4 >= 1 << 62:
        raise NotBatched("too many signatures")
    key = (((sig[a] * nc + col[a]) * ns + sig[b]) * nc + col[b]) * 4 + flag
    for k in unique_values(key).tolist():
        rest, f = divmod(k, 4)
        rest, cb = divmod(rest, nc)
        rest, sb = divmod(rest, ns)
        sa, ca = divmod(rest, nc)
        t = (sa, ca, sb, cb, f)
        ok = m.pair_ok.get(t)
        if ok is None:
            ok = m.pair_ok[t] = m.prototype(sa, ca).lacking(
                m.cols[cb], m.sigs[sb].quals, m.sigs[sb].qbits, f, m.sigs[sb].conv) is None
        if not ok:
            raise Diverge("hazard in region")


def check_old(m: Any, hist: np.ndarray, sig: np.ndarray, col: np.ndarray) -> None:
    """Accesses against the element's history from before the region (SEM-4.5)."""
    if not len(hist):
        return
    single = m.col_thread[col]
    one = single >= 0
    if one.any():
        s1, t1 = sig[one], single[one]
        hists, rank = unique_inverse(hist[one])  # ids are sparse in the table: ranked first
        uniq, inv = unique_inverse(rank * len(m.sigs) + s1)
        width = m.current_dev_threads or 1
        tasks = m.col_task[col[one]]
        if (tasks != tasks[0]).any():
            raise NotBatched("collectives of several tasks")
        task = int(tasks[0])
        hs, ss = np.divmod(uniq, len(m.sigs))
        memos: dict[int, dict[tuple[int, int], int]] = {}  # per signature (task is one)
        masks = [m.history_passing(h, m.sigs[s], task, memos.setdefault(s, {}))
                 for h, s in zip(hists[hs].tolist(), ss.tolist())]
        if (t1 >= width).any() or not _bits(masks, width)[inv, t1].all():
            raise Diverge("hazard against an older history")
    many = np.flatnonzero(~one)
    if len(many):
        check_many(m, hist[many], sig[many], col[many])


def check_many(m: Any, hist: np.ndarray, sig: np.ndarray, col: np.ndarray) -> None:
    """check_old for collectives of several threads: each distinct (history, signature,
    task) reduced to its distinct `Record.terms`, which few histories differ in, and each
    distinct (terms, collective) decided once."""
    ns, nc = len(m.sigs), len(m.cols)
    task = m.col_task[col]
    cpu = task < 0  # 𝔾 (CPU scope): Record.lacking, per distinct (history, sig, collective)
    if cpu.any():
        hists, rank = unique_inverse(hist[cpu])
        hs, rest = np.divmod(unique_values((rank * ns + sig[cpu]) * nc + col[cpu]), ns * nc)
        ss, cs = np.divmod(rest, nc)
        for h, s, c in zip(hists[hs].tolist(), ss.tolist(), cs.tolist()):
            if not m.history_ok_everyone(h, m.sigs[s], m.cols[c]):
                raise Diverge("hazard against an older history")
        hist, sig, col, task = hist[~cpu], sig[~cpu], col[~cpu], task[~cpu]
    if not len(hist):
        return
    hists, hrank = unique_inverse(hist)
    tasks, trank = unique_inverse(task)
    nt = len(tasks)
    keys, kinv = unique_inverse((hrank * ns + sig) * nt + trank)
    rest, ts = np.divmod(keys, nt)
    hs, ss = np.divmod(rest, ns)
    distinct: dict[tuple[Any, ...], int] = {}
    terms_of: dict[tuple[int, int, int, int], Any] = {}
    tids = [distinct.setdefault(m.history_terms(h, m.sigs[s], t, terms_of), len(distinct))
            for h, s, t in zip(hists[hs].tolist(), ss.tolist(), tasks[ts].tolist())]
    by_id = list(distinct)
    pairs = np.asarray(tids, dtype=np.int64)[kinv] * nc + col
    for k in unique_values(pairs).tolist():
        t, c = divmod(k, nc)
        mask = m.cols[c].mask
        if not all(passes(x, mask) for x in by_id[t]):
            raise Diverge("hazard against an older history")


def _bits(masks: list[int], width: int) -> np.ndarray:
    """Bits 0..width-1 of each mask, one row per mask."""
    size = (width + 7) // 8
    keep = (1 << width) - 1
    raw = b"".join((mask & keep).to_bytes(size, "little") for mask in masks)
    return np.unpackbits(np.frombuffer(raw, dtype=np.uint8).reshape(len(masks), size),
                         axis=1, bitorder="little")[:, :width].astype(bool)


def update_buffer(m: Any, buf: BufInstance, elems: np.ndarray, old: np.ndarray,
                  read_run: np.ndarray, read_sig: np.ndarray, read_col: np.ndarray,
                  mut: np.ndarray) -> None:
    """SEM-2.6 for every element the region touched (`elems`, their older histories `old`):
    the reads that stay (by run, i.e. position in `elems`) and the last mutate (signature *
    collectives + collective, -1: none) give its new history."""
    reads = read_sets(m, read_run, read_sig, read_col, len(elems))
    has = mut >= 0
    mid = np.full(len(elems), -1, dtype=np.int64)
    if has.any():
        nc = len(m.cols)
        uniq, inv = unique_inverse(mut[has])
        made = [m.region_record(*divmod(k, nc)) for k in uniq.tolist()]
        mid[has] = np.asarray(made, dtype=np.int64)[inv.reshape(-1)]
    base = np.where(has, -1, old)
    nr, nm = len(m.region.read_groups) + 1, len(m.region.groups) + 1
    uniq, inv = unique_inverse(((base + 1) * nr + reads + 1) * nm + mid + 1)
    rest, mts = np.divmod(uniq, nm)
    bs, rsets = np.divmod(rest, nr)
    table, read_groups, groups = m.table, m.region.read_groups, m.region.groups
    hids = []
    for b, rset, mt in zip((bs - 1).tolist(), (rsets - 1).tolist(), (mts - 1).tolist()):
        old_reads, old_muts = ((), ()) if b < 0 else table.histories[b]
        hids.append(table.intern(old_reads + read_groups[rset] if rset >= 0 else old_reads,
                                 (groups[mt],) if mt >= 0 else old_muts))
    buf.ids.reshape(-1)[elems] = np.asarray(hids, dtype=np.int64)[inv]
    buf.wrote(hids)


def read_sets(m: Any, run: np.ndarray, sig: np.ndarray, col: np.ndarray, nruns: int
              ) -> np.ndarray:
    """Per run, the id of its set of read records (-1: none), exactly: equal hashes are
    confirmed element by element."""
    out = np.full(nruns, -1, dtype=np.int64)
    if not len(run):
        return out
    nc = len(m.cols)
    codes, rank = unique_inverse(sig * nc + col)  # few distinct (signature, collective)
    if nruns * len(codes) >= 1 << 62:
        raise Diverge("too many read records")
    r, k = np.divmod(unique_values(run * len(codes) + rank), len(codes))
    code = codes[k]
    s, c = np.divmod(code, nc)
    first = np.ones(len(r), dtype=bool)
    first[1:] = r[1:] != r[:-1]
    seg = np.cumsum(first) - 1
    seg_start = np.flatnonzero(first)
    seg_len = np.diff(np.append(seg_start, len(r)))
    salt = _RNG.integers(1, 1 << 62, size=2)
    h = np.add.reduceat((code * salt[0]) ^ (code >> 7), seg_start) + seg_len * salt[1]
    _, rep, group = unique_first(h)
    # exactness: every segment equals its group's representative, in length and code by code
    if (seg_len[rep[group]] != seg_len).any():
        raise Diverge("read-set hash collision")  # never seen; the reference decides then
    rep_start = seg_start[rep[group]]
    offset = np.arange(len(r)) - seg_start[seg]
    if (code[rep_start[seg] + offset] != code).any():
        raise Diverge("read-set hash collision")  # never seen; the reference decides then
    ids = []
    for k in rep.tolist():
        lo, hi = seg_start[k], seg_start[k] + seg_len[k]
        ids.append(m.read_set(tuple(zip(s[lo:hi].tolist(), c[lo:hi].tolist()))))
    out[r[seg_start]] = np.asarray(ids, dtype=np.int64)[group]
    return out


def new_record(m: Any, sig: Sig, threads: Threads, per_thread: bool) -> Record:
    group = Group()
    m.table.groups.append(group)
    rec = Record(threads, sig.q, sig.flags0, per_thread, m.covs.empty, set(), None, 0, group)
    m.add_records(threads.task, [rec])
    return rec
