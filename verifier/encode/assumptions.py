"""Assumed sizes (`--assume NAME=VALUE`, specs/cli.md CLI-11): extra preconditions of a proof.

Reads a proc and the NAME=VALUE mapping; refuses, as a located usage error (RejectedInput,
ERR-USAGE), a name that is not a `size` argument of the proc and a value outside the size
type. The proof is then the ordinary one over the remaining sizes, as if the proc began with
`assert NAME == VALUE`: values the asserts exclude, or that leave no statement to run, are
`vacuous` (VAC-1, VAC-2 in encode/vacuity.py), exactly as that assert would be. Non-goals:
checking them at run time (codegen's CG-A1).
"""

from __future__ import annotations

from collections.abc import Mapping

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


__all__ = ["check_assumed_names"]
