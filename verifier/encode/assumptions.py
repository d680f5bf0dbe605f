"""Assumed sizes (`--assume NAME=VALUE`, specs/cli.md CLI-11): extra preconditions of a proof.

Reads a proc, the NAME=VALUE mapping and (for the asserts) the obligation builder whose base
constraints already hold the equalities; refuses, as a located usage error (RejectedInput,
ERR-USAGE), a name that is not a `size` argument of the proc, a value outside the size type,
and values that together admit no size the proc's asserts allow (at the first assert that
excludes them). The proof is then the ordinary one over the remaining sizes, as if the proc
began with `assert NAME == VALUE`. Non-goals: checking them at run time (codegen's CG-A1).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import z3

from verifier.diagnostics import RejectedInput
from verifier.lang.ir import ir
from verifier.lang.ir.ir import CONTROL_KINDS
from verifier.semantics.exprs import CONTROL_RANGES, admits


INT64_MAX = (1 << 63) - 1


def check_assumed_names(proc: ir.Proc, assumed: Mapping[str, int],
                        kinds: tuple[str, ...] = CONTROL_KINDS) -> None:
    """Every assumed name is a control argument of the proc of one of `kinds` (the CLI's
    `--assume`: sizes only; a fixed-size run may fix any control) with a value its type
    admits. Rules: CLI-11, LANG-2.3, LANG-2.5"""
    controls = {a.name.name: a for a in proc.args
                if isinstance(a.typ, ir.Control) and a.typ.kind in kinds}
    what = "size" if kinds == ("size",) else "control"
    known = ", ".join(controls) or "none"
    for name, value in assumed.items():
        if name not in controls:
            raise RejectedInput(f"--assume names {name}, which is not a {what} argument of "
                                f"proc {proc.name} (its {what} arguments: {known}); select the "
                                "procs that have it with --proc", proc.loc, code="ERR-USAGE",
                                rule="CLI-11")
        kind = controls[name].typ.kind  # type: ignore[union-attr]
        if value > INT64_MAX:  # CG-A1 compares it with an int64_t argument
            raise RejectedInput(f"--assume {name}={value}: at most {INT64_MAX} (a control "
                                "argument is an int64_t in the emitted code)", controls[name].loc,
                                code="ERR-USAGE", rule="CLI-11")
        if not admits(kind, value):
            lo, hi = CONTROL_RANGES[kind]
            raise RejectedInput(f"--assume {name}={value}: {name} is a {kind} of proc "
                                f"{proc.name}, " + (f"at least {lo}" if hi is None else
                                                    f"{lo} to {hi}"),
                                controls[name].loc, code="ERR-USAGE", rule="LANG-2.5")


def check_assumed_asserts(proc: ir.Proc, assumed: Mapping[str, int], types: list[z3.BoolRef],
                          preds: list[z3.BoolRef], pinned: list[z3.BoolRef],
                          satisfiable: Callable[[list[z3.BoolRef]], bool]) -> None:
    """The asserts admit some size with the assumed values, when they admit any at all (a
    proc whose asserts admit nothing is vacuous, VAC-1, whatever is assumed). `types`,
    `preds` and `pinned` are the builder's constraints: argument types, one per assert, and
    the assumed equalities. Rules: CLI-11, LANG-2.5"""
    if not assumed or satisfiable(types + preds + pinned) or not satisfiable(types + preds):
        return
    given = ", ".join(f"{k}={v}" for k, v in assumed.items())
    for k, pred in enumerate(proc.preds):
        if not satisfiable(types + pinned + preds[:k + 1]):
            raise RejectedInput(f"--assume {given} violates this assert of proc {proc.name} "
                                "(no size it admits has these values); assume values the "
                                "asserts allow", pred.loc, code="ERR-USAGE", rule="CLI-11")
    raise RejectedInput(f"--assume {given}: the asserts of proc {proc.name} admit no size "
                        "with these values", proc.loc, code="ERR-USAGE", rule="CLI-11")


__all__ = ["check_assumed_asserts", "check_assumed_names"]
