"""Early-release points of shared-memory allocations: where codegen may reuse an allocation's
storage before the end of its scope, if the release is proved (SEM-4.7, specs/codegen.md CG-R1).

The spec frees an allocation at the end of its block (SEM-4.7). Upstream's suballocator frees
a shared-memory variable X earlier: just before the first statement of X's block, after X's
last use, that contains another shared-memory allocation; the space is then reused. Here that
point is only a *candidate*: the encoder proves the free check of X at it (the same SEM-4.7
check, stricter than at the end of the block), the concrete machine can replay it, and codegen
overlaps a later allocation with X only when the certificate names the release as proved.

One function, `early_releases`, finds the candidates; the static checks, the machine and
codegen all call it on the same IR, so they agree on each release's id.
Non-goals: deciding whether a release holds (the encoder's obligations do that).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass

from verifier.lang.ir import ir

RELEASE_PREFIX = "release:"  # obligation ids of early releases (they never decide a verdict)


@dataclass(frozen=True)
class EarlyRelease:
    """X = `alloc` may be released just before `block[index]`: no statement from there to the
    end of the block names X or a window of it. `id` is unique within the proc."""

    alloc: ir.Alloc
    block: tuple[ir.Stmt, ...]
    index: int
    id: str

    @property
    def before(self) -> ir.Stmt:
        """The statement the release precedes (it allocates shared memory)."""
        return self.block[self.index]


def _is_smem(s: ir.Stmt) -> bool:
    return isinstance(s, ir.Alloc) and not isinstance(s.typ, ir.BarrierType) and \
        bool(getattr(s.mem, "is_smem", False))


_FIELDS: dict[type, tuple[str, ...]] = {}  # the fields `_children` reads, per class


def _children(node: object) -> Iterator[object]:
    """Every field value of an IR node but the callee of a call (a proc or instr object) and
    source locations; tuples are flattened."""
    names = _FIELDS.get(type(node))
    if names is None:
        names = _FIELDS[type(node)] = () if not dataclasses.is_dataclass(node) or \
            isinstance(node, type) else tuple(f.name for f in dataclasses.fields(node)
                                              if f.name not in ("loc", "callee"))
    for name in names:
        value = getattr(node, name)
        if isinstance(value, tuple):
            yield from value
        else:
            yield value


def named_syms(node: object, out: set[ir.Sym]) -> set[ir.Sym]:
    """Every Sym anywhere below `node` (statements, expressions, windows, barrier refs, tensor
    maps): an over-approximation of the variables it uses, which is the safe side here."""
    stack = [node]
    while stack:
        x = stack.pop()
        if isinstance(x, ir.Sym):
            out.add(x)
        elif isinstance(x, tuple):
            stack.extend(x)
        else:
            stack.extend(_children(x))
    return out


def _aliases(body: tuple[ir.Stmt, ...]) -> dict[ir.Sym, set[ir.Sym]]:
    """For every variable, itself and the window statements taken (transitively) from it."""
    windows = [s for s in ir.statements(body) if isinstance(s, ir.WindowStmt)]
    names: dict[ir.Sym, set[ir.Sym]] = {}
    for s in windows:
        names[s.name] = named_syms(s.rhs, set())
    changed = True
    while changed:
        changed = False
        for w, syms in names.items():
            grown = set().union(*(names.get(x, set()) for x in syms)) | syms
            if grown != syms:
                names[w] = grown
                changed = True
    out: dict[ir.Sym, set[ir.Sym]] = {}
    for w, syms in names.items():
        for x in syms:
            out.setdefault(x, {x}).add(w)
    return out


def _blocks(stmts: tuple[ir.Stmt, ...]) -> Iterator[tuple[ir.Stmt, ...]]:
    """Every block of statements, pre-order (a block before the blocks nested in it)."""
    yield stmts
    for s in stmts:
        for attr in ("body", "orelse"):
            inner = getattr(s, attr, None)
            if inner is not None:
                yield from _blocks(inner)


def early_releases(body: tuple[ir.Stmt, ...]) -> list[EarlyRelease]:
    """The candidate early release of every shared-memory allocation that has one, in
    pre-order. Rules: SEM-4.7 (the check proved at the point), CG-R1."""
    aliases = _aliases(body)
    out: list[EarlyRelease] = []
    seen: dict[str, int] = {}
    for block in _blocks(body):
        uses = [named_syms(s, set()) for s in block]
        holds = [any(_is_smem(t) for t in ir.statements((s,))) for s in block]
        for k, s in enumerate(block):
            if not _is_smem(s):
                continue
            assert isinstance(s, ir.Alloc)
            if isinstance(s.typ, ir.Tensor) and s.typ.ring is not None:
                continue  # DIAL-18: a data ring's space is persistent (never released early)
            names = aliases.get(s.name, {s.name})
            last = max((i for i in range(k + 1, len(block)) if uses[i] & names), default=k)
            index = next((i for i in range(last + 1, len(block)) if holds[i]), None)
            if index is None:
                continue
            at = block[index].loc
            rid = f"{s.name.name}@{s.loc.line}:{s.loc.col}->{at.line}:{at.col}"
            seen[rid] = seen.get(rid, 0) + 1
            if seen[rid] > 1:  # statements copied by a scheduling operation keep their loc
                rid = f"{rid}#{seen[rid]}"
            out.append(EarlyRelease(s, block, index, rid))
    return out


__all__ = ["EarlyRelease", "RELEASE_PREFIX", "early_releases", "named_syms"]
