"""`p.sync_check(**sizes)` as upstream's scripts call it: the concrete machine at those sizes
(API-3; specs/loading.md SYNC-1..7).

`check_call` is what every call does at once (SYNC-2): the sizes name exactly the proc's size
arguments and satisfy its asserts, else it raises as upstream's does. `answer` is the
machine's own answer, run to the end: never stopped by a clock, since a run cut short answers
nothing (SYNC-3, SYNC-6). `sync_check` is both, raising on a hazard as upstream's does: the
in-process loader (tests, upstream's test harness) installs it into `ir.SYNC_CHECK_HOOK`; the
loading child records calls instead (`verifier/load/sync_record.py`) and runs this only for a
call whose exception the file could catch. The machine is imported on first run, so a size
check costs no more than `verifier.lang`.
"""

from __future__ import annotations

import operator
import sys
from typing import TYPE_CHECKING, Mapping

from verifier.diagnostics import (
    InternalError, RejectedInput, SharedLimitation, SporkError, Unsupported)
from verifier.lang.ir import ir
from verifier.semantics.exprs import PY_OPS, admits, eval_expr, layout_free
from verifier.semantics.sync_remarks import log_sync_error

__all__ = ["answer", "as_upstream", "check_call", "install", "sync_check"]

if TYPE_CHECKING:
    from verifier.semantics.state import Finding


def call_words(proc: ir.Proc, sizes: Mapping[str, int]) -> str:
    """`k.sync_check(n=512)`: how messages name a call."""
    return f"{proc.name}.sync_check({', '.join(f'{k}={v}' for k, v in sizes.items())})"


def _refuse(proc: ir.Proc, sizes: Mapping[str, object], problem: str) -> RejectedInput:
    """Without a place: the loader locates it at the call, the innermost line of the user's
    code (LOAD-3)."""
    err = RejectedInput(f"{call_words(proc, sizes)}: {problem}",  # type: ignore[arg-type]
                        rule="API-3")
    err.proc = proc.name
    return err


def check_call(proc: ir.Proc, sizes: Mapping[str, object]) -> dict[str, int]:
    """The sizes as integers, in the proc's argument order; RejectedInput naming the proc when
    one is missing, unknown, not an integer, outside its argument's range, or when an assert
    excludes them (SYNC-2, as upstream's)."""
    controls = {a.name.name: a for a in proc.args if isinstance(a.typ, ir.Control)}
    missing = [n for n in controls if n not in sizes]
    unknown = [n for n in sizes if n not in controls]
    if missing:
        raise _refuse(proc, sizes, f"no value for {', '.join(missing)}")
    if unknown:
        raise _refuse(proc, sizes, f"{', '.join(unknown)} is not a size or index argument")
    values: dict[str, int] = {}
    for name, arg in controls.items():
        try:
            value = operator.index(sizes[name])  # an int, or numpy's; never a float
        except TypeError:
            value = None
        if value is None or not admits(arg.typ.kind, value):  # type: ignore[union-attr]
            raise _refuse(proc, sizes, f"{name}={sizes[name]!r} is not a value of its "
                          f"argument ({arg.typ.kind})")  # type: ignore[union-attr]
        values[name] = value
    env = {controls[name].name: value for name, value in values.items()}
    for pred in layout_free(proc.preds):
        if not bool(eval_expr(pred, env, PY_OPS)):
            raise _refuse(proc, sizes, "these sizes violate the proc's asserts (the one at "
                          f"{pred.loc})")
    return values


Answer = tuple[str, "Finding | None", str]  # (status, the first finding, why not run)


def answer(proc: ir.Proc, sizes: dict[str, int]) -> Answer:
    """The machine's answer at `sizes` (after `check_call`), run to the end, never stopped by
    a clock: (`no-hazard`, None, ""), (`hazard`, its first finding, ""), or (`not-run`, None,
    why) for a construct outside its fragment. SharedLimitation (outside upstream's checker
    too) raises, naming the proc; anything else the machine raises is an InternalError."""
    from verifier.semantics.run import run_machine

    try:
        holds, findings = run_machine(proc, sizes)
    except SharedLimitation as e:
        e.proc = e.proc or proc.name
        raise
    except Unsupported as e:
        return "not-run", None, e.message
    except SporkError as e:
        e.proc = e.proc or proc.name
        raise
    except Exception as e:
        err = InternalError(f"{proc.name}.sync_check: the concrete machine failed: "
                            f"{type(e).__name__}: {e}", rule="API-3")
        err.proc = proc.name
        raise err from None
    if not holds:  # check_call ran first; the machine's own precondition check agrees
        raise _refuse(proc, sizes, "these sizes violate the proc's asserts")
    return ("hazard", findings[0], "") if findings else ("no-hazard", None, "")


def as_upstream(proc: ir.Proc, sizes: dict[str, int], result: Answer) -> None:
    """What upstream's `sync_check` does with the answer: raise on a hazard, located at it,
    naming the proc, sizes and kind. A proc outside the machine's fragment is skipped with a
    note on stderr (the proof reports it unsupported)."""
    status, found, why = result
    if status == "not-run":
        print(f"spork-verify: {call_words(proc, sizes)} did not run: {why} (API-3)",
              file=sys.stderr)
    if found is not None:
        log_sync_error(proc, sizes, found)  # API-6: the debug log's sync-error remarks
        err = RejectedInput(f"{call_words(proc, sizes)} found a {found.kind} hazard: "
                            f"{found.message}{': ' + found.lacking if found.lacking else ''}",
                            found.loc, rule="API-3", variable=found.variable)
        err.proc = proc.name
        raise err


def sync_check(proc: ir.Proc, sizes: Mapping[str, object]) -> None:
    """Upstream's `sync_check`, at once: `check_call`, the machine's answer, `as_upstream`."""
    values = check_call(proc, sizes)
    as_upstream(proc, values, answer(proc, values))


def install() -> None:
    """`p.sync_check(...)` runs at once (the in-process loader: tests, upstream's harness)."""
    ir.SYNC_CHECK_HOOK[0] = sync_check
