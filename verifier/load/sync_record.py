"""The file's own `p.sync_check(**sizes)` calls, recorded while it loads (specs/loading.md
SYNC-1..3).

Upstream's `sync_check` runs its checker at those sizes and raises on a hazard. Run on the
concrete machine while the file loads, a call at sporkbench's sizes takes minutes, and the
proof that follows answers it for all sizes at once. So in the loading child a call checks its
sizes at once (SYNC-2), is recorded, and returns None; the verifier settles it after the proofs
(`verifier/cli_sync.py`). A call whose exception the file could catch (inside a `try` or `with`
body of the user's code, or off the main thread) cannot be answered later without changing
what the file does: it runs the machine at once, as upstream's does (SYNC-3).

The machine and the size check live in `verifier.semantics`, which `load` may not import: the
process entry passes them in (`install`).
"""

from __future__ import annotations

import ast
import linecache
import sys
import threading
from dataclasses import dataclass
from types import FrameType
from typing import Any, Callable, Mapping

from verifier.diagnostics import UNKNOWN_LOC, SrcLoc
from verifier.lang.ir import ir
from verifier.load.load import is_user_file


@dataclass(frozen=True)
class SyncCall:
    """One call: the proc object itself (so the verifier matches it to that proc's result, not
    to another proc of the same name, LOAD-5), its sizes and where the file called it."""

    proc: ir.Proc
    sizes: tuple[tuple[str, int], ...]
    loc: SrcLoc


# The semantics module (`verifier.semantics.sync_check`), imported by the entry's loader on
# first use; and the calls recorded since the last `take()`.
_SEMANTICS: list[Callable[[], Any]] = []
_CALLS: list[SyncCall] = []


def install(semantics: Callable[[], Any]) -> None:
    """Record `p.sync_check(...)` calls from now on; `semantics()` gives the module with
    `check_call`, `answer` and `as_upstream` (imported on the first call)."""
    _SEMANTICS[:] = [semantics]
    _CALLS.clear()
    ir.SYNC_CHECK_HOOK[0] = record


def take() -> tuple[SyncCall, ...]:
    """The calls recorded so far, in call order; the record starts empty again."""
    out = tuple(_CALLS)
    _CALLS.clear()
    return out


def record(proc: ir.Proc, sizes: Mapping[str, object]) -> None:
    """The hook behind `Proc.sync_check` in the loading child."""
    semantics = _SEMANTICS[0]()
    frame = sys._getframe(2)  # the caller of Proc.sync_check
    loc = call_site(frame)
    values = semantics.check_call(proc, sizes)  # SYNC-2: raises at once, as upstream's
    _CALLS.append(SyncCall(proc, tuple(values.items()), loc))
    if observed(frame):  # SYNC-3: the file could catch the exception, so it runs now; its
        # answer steers the file only: the verifier answers the call again after the proofs
        semantics.as_upstream(proc, values, semantics.answer(proc, values))


def call_site(frame: FrameType | None) -> SrcLoc:
    """The innermost line of the user's code on the stack (LOAD-3)."""
    while frame is not None:
        if is_user_file(frame.f_code.co_filename):
            return SrcLoc(frame.f_code.co_filename, frame.f_lineno, 1)
        frame = frame.f_back
    return UNKNOWN_LOC


def observed(frame: FrameType | None) -> bool:
    """Whether an exception raised here could be caught by the file: a frame of the user's
    code is inside the body of a `try` (any handler, or a `finally` that returns) or of a
    `with` (its manager may suppress it), or this is not the main thread (an exception there
    ends the thread, not the file)."""
    if threading.current_thread() is not threading.main_thread():
        return True
    while frame is not None:
        name = frame.f_code.co_filename
        if is_user_file(name) and any(lo <= frame.f_lineno <= hi for lo, hi in _guarded(name)):
            return True
        frame = frame.f_back
    return False


_GUARDED: dict[str, tuple[tuple[int, int], ...]] = {}


def _guarded(filename: str) -> tuple[tuple[int, int], ...]:
    """Line ranges of the `try` and `with` bodies of a file (its text as it ran: linecache)."""
    if filename not in _GUARDED:
        try:
            tree = ast.parse("".join(linecache.getlines(filename)), filename)
        except (SyntaxError, ValueError):
            _GUARDED[filename] = ((1, sys.maxsize),)  # unreadable: assume it may catch
            return _GUARDED[filename]
        ranges = []
        for node in ast.walk(tree):
            if isinstance(node, (ast.Try, ast.TryStar, ast.With, ast.AsyncWith)) and node.body:
                ranges.append((node.body[0].lineno,
                               node.body[-1].end_lineno or node.body[-1].lineno))
        _GUARDED[filename] = tuple(ranges)
    return _GUARDED[filename]
