"""Guard alternation of mbarriers and cluster syncs, and the placement of TMA loads between
an Await and its Arrive (language.md §5.6: LANG-5.16, 5.17, 5.18).

Reads the statement list that allocates a barrier variable; walks it syntactically (`with`
bodies and `cuda_threads` bodies inlined, `if`/`seq` bodies balanced on their own) and raises
ERR-A32 at the first statement out of order. Non-goals: the collectives of the statements
(barrier_exprs), the dynamic ring invariant (an obligation of its own).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from verifier.diagnostics import RejectedInput
from verifier.lang.ir import ir
from verifier.lang.ir.printer import stmt_lines
from verifier.semantics.access import walk_stmts


@dataclass
class _Walk:
    guard: ir.Sym
    target: ir.Sym
    # await first? shared by nested walks: a guarded pair is await-first, a cluster sync
    # arrive-first, a self-guarded mbarrier keeps the order of its first use (None until then)
    order: list[bool | None]
    arrive_first_only: bool  # CudaClusterSync (LANG-5.16)
    state: str | None = None  # None (balanced), "awaited", "arrived"
    pending: list[ir.Call] = field(default_factory=list)  # TMA loads awaiting their Arrive

    def error(self, msg: str, s: ir.Stmt, rule: str = "LANG-5.16") -> RejectedInput:
        return RejectedInput(msg, s.loc, code="ERR-A32", rule=rule)

    def block(self, stmts: tuple[ir.Stmt, ...]) -> None:
        for s in stmts:
            self.stmt(s)

    def stmt(self, s: ir.Stmt) -> None:
        g, z = self.guard.name, self.target.name
        match s:
            case ir.Warps(body=body) | ir.For(mode=ir.CudaThreads(), body=body):
                self.block(body)
            case ir.For(body=body) | ir.If(body=body):
                bodies = [body] + ([s.orelse] if isinstance(s, ir.If) else [])
                for b in bodies:
                    if not uses(b, self.guard, self.target):
                        continue
                    if self.state is not None or self.pending:
                        raise self.error(f"Await/Arrive in {_describe(s)} forbidden here when "
                                         f"Await({g})->Arrive({z}) sees usage outside "
                                         f"{_describe(s)}", s, "LANG-5.17")
                    inner = _Walk(self.guard, self.target, self.order, self.arrive_first_only)
                    inner.block(b)
                    if inner.state is not None or inner.pending:
                        raise self.error(f"{_describe(s)} body ends without completing Await({g})"
                                         f" -> Arrive(...) >> {z}", s, "LANG-5.17")
            case ir.Await(target=ref) if ref.buf == self.guard:
                if self.order[0] is None:
                    self.order[0] = True
                if self.state == "awaited" or self.pending or \
                        (self.state is None and not self.order[0] and not self.arrive_first_only):
                    raise self.error(f"expect Arrive(...) >> {z} before Await({g}, ...)", s)
                if self.state is None and self.arrive_first_only:
                    raise self.error(f"expect Arrive(...) >> {z} before {_text(s)}", s)
                self.state = None if self.state == "arrived" else "awaited"
            case ir.Arrive(targets=refs) if any(r.buf == self.target for r in refs):
                if self.order[0] is None:
                    self.order[0] = False
                if self.state == "arrived" or (self.state is None and self.order[0]):
                    raise self.error(f"expect Await({g}, ...) before Arrive(...) >> {z}", s)
                for call in self.pending:
                    _names_subset(call, s)
                self.pending = []
                self.state = None if self.state == "awaited" else "arrived"
            case ir.Call(trailing=refs) if refs and refs[0].buf == self.target:
                # LANG-5.18: between the thread's Await(guard) and its Arrive >> target
                ready = self.state == "awaited" if self.order[0] else self.state is None
                if not ready:
                    raise self.error(f"expect Await({g}, ...) before {_text(s)}", s, "LANG-5.18")
                self.pending.append(s)
            case _:
                pass


def _names_subset(call: ir.Call, arrive: ir.Arrive) -> None:
    """The call names a subset of the Arrive's elements: for some expression of the Arrive,
    every dimension where the call has an interval is an interval there too (LANG-5.18)."""
    ref = call.trailing[0]
    call_iv = [isinstance(a, ir.Interval) for a in ref.idx]
    for t in arrive.targets:
        arr_iv = [isinstance(a, ir.Interval) for a in t.idx]
        if all(m or not c for m, c in zip(arr_iv, call_iv)):
            return
    raise RejectedInput(f"{_text(call)} isn't naming a subset of barriers used in "
                        f"{_text(arrive)}", call.loc, code="ERR-A32", rule="LANG-5.18")


def check(stmts: tuple[ir.Stmt, ...], decl_loc: object, guard: ir.Sym, target: ir.Sym,
          arrive_first_only: bool = False) -> None:
    """LANG-5.16..5.18 for one barrier variable `target` guarded by `guard`."""
    order: list[bool | None] = [False if arrive_first_only else True if guard != target
                                else None]
    walk = _Walk(guard, target, order, arrive_first_only)
    walk.block(stmts)
    if walk.pending:
        call = walk.pending[0]
        raise RejectedInput(f"{_text(call)} without Arrive(...) >> {target.name} in body",
                            call.loc, code="ERR-A32", rule="LANG-5.18")
    if walk.state is not None:
        missing = f"Arrive(...) >> {target.name}" if walk.state == "awaited" else \
            f"Await({guard.name}, ...)"
        what = "Await" if walk.state == "awaited" else "Arrive"
        raise RejectedInput(f"{what} without subsequent {missing} in body", decl_loc,  # type: ignore[arg-type]
                            code="ERR-A32", rule="LANG-5.17")


def uses(stmts: tuple[ir.Stmt, ...], guard: ir.Sym, target: ir.Sym) -> bool:
    for s in walk_stmts(stmts):
        if isinstance(s, ir.Await) and s.target.buf == guard:
            return True
        if isinstance(s, ir.Arrive) and any(r.buf == target for r in s.targets):
            return True
        if isinstance(s, ir.Call) and s.trailing and s.trailing[0].buf == target:
            return True
    return False


def _describe(s: ir.Stmt) -> str:
    return f"sequential {s.iter.name}-loop" if isinstance(s, ir.For) else "if"


def _text(s: ir.Stmt) -> str:
    return stmt_lines(s, 0)[0].strip()
