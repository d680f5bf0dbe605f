"""Blackwell programs are verified but not lowered yet: codegen refuses them up front, naming
the first tcgen05 construct, rather than failing on whichever lowering table lacks a row
(specs/blackwell.md "Code generation")."""

from __future__ import annotations

from verifier.diagnostics import Unsupported
from verifier.lang.ir import ir
from verifier.lang.stdlib.timelines import SyncTL

_TCGEN05_SYNC = frozenset({SyncTL.tcgen05_commit, SyncTL.tcgen05_ld, SyncTL.tcgen05_st,
                           SyncTL.tcgen05_before_thread_sync, SyncTL.tcgen05_after_thread_sync})


def _blackwell(s: ir.Stmt) -> str | None:
    if isinstance(s, ir.Alloc) and getattr(s.mem, "name", "").startswith("Sm100_"):
        return f"{s.name.name} @ {s.mem}"
    if isinstance(s, ir.Call) and s.callee.root().name.startswith("Sm100_"):
        return f"{s.callee.root().name}"
    for tl in (getattr(s, "first", None), getattr(s, "second", None)):
        if tl in _TCGEN05_SYNC:
            return f"sync-tl {tl}"
    return None


def refuse_sm100(proc: ir.Proc) -> None:
    """Unsupported (ERR-V11) at the first Blackwell construct of the proc, if any."""
    for s in ir.statements(proc.body):
        what = _blackwell(s)
        if what is not None:
            raise Unsupported(f"not supported by spork-verify's code generator: {what} (sm_100a "
                              "tcgen05 lowering is not implemented; the proc is verified, but "
                              "no CUDA is emitted for it)", s.loc, code="ERR-V11",
                              rule="LANG-8.1")
