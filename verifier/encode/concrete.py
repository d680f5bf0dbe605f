"""The concrete mode (`--sizes`): one run of the abstract machine at sizes the user names.

Reads a proc and a NAME=VALUE mapping; refuses sizes that name no control argument, leave one
out, or that the argument types or asserts exclude (RejectedInput at the assert's line,
CLI-2); produces a `ProcResult` whose verdict is `refuted` or `no-hazard-at-sizes` — never
`proved`, since one size is not all sizes. Non-goals: proving anything for other sizes.
"""

from __future__ import annotations

import time

from verifier.diagnostics import RejectedInput
from verifier.lang.ir import ir
from verifier.results import ProcResult
from verifier.semantics.exprs import CONTROL_RANGES, PY_OPS, admits, eval_expr, layout_free
from verifier.encode.verify import concrete_verdict, machine_finding


def check_sizes(proc: ir.Proc, sizes: dict[str, int]) -> None:
    """The sizes name exactly the proc's control arguments, and satisfy the argument types
    and every assert (Rules: LANG-2.3, LANG-2.5)."""
    controls = {a.name.name: a for a in proc.args if isinstance(a.typ, ir.Control)}
    known = ", ".join(controls) or "none"
    unknown = [name for name in sizes if name not in controls]
    if unknown:
        raise RejectedInput(f"--sizes names {', '.join(unknown)}, which is not a size argument "
                            f"of proc {proc.name} (its size arguments: {known})", proc.loc,
                            code="ERR-USAGE", rule="LANG-2.3")
    missing = [name for name in controls if name not in sizes]
    if missing:
        raise RejectedInput(f"--sizes lacks a value for {', '.join(missing)} of proc {proc.name}",
                            proc.loc, code="ERR-USAGE", rule="LANG-2.3")
    for name, arg in controls.items():
        kind = arg.typ.kind
        if not admits(kind, sizes[name]):
            lo, hi = CONTROL_RANGES[kind]
            raise RejectedInput(f"--sizes {name}={sizes[name]}: {name} is a {kind} of proc "
                                f"{proc.name}, " + (f"at least {lo}" if hi is None else
                                                    f"{lo} to {hi}"),
                                arg.loc, code="ERR-USAGE",
                                rule="LANG-2.5" if kind == "size" else "LANG-2.3")
    env = {controls[name].name: value for name, value in sizes.items()}
    given = ", ".join(f"{k}={v}" for k, v in sizes.items())
    for pred in layout_free(proc.preds):
        if not bool(eval_expr(pred, env, PY_OPS)):
            raise RejectedInput(f"--sizes {given} violates this assert of proc {proc.name}; "
                                "choose sizes that satisfy every assert (or drop --sizes to "
                                "prove all sizes at once)", pred.loc, code="ERR-USAGE",
                                rule="LANG-2.5")


def run_concrete(proc: ir.Proc, sizes: dict[str, int]) -> ProcResult:
    """One machine run at `sizes`, after `check_sizes`."""
    start = time.perf_counter()
    check_sizes(proc, sizes)
    verdict, found = concrete_verdict(proc, sizes)
    findings = (machine_finding(found, sizes, True),) if found is not None else ()
    return ProcResult(proc.loc.file, proc.name, verdict, time.perf_counter() - start, (),
                      findings, proc.loc, sizes=tuple(sizes.items()))


__all__ = ["check_sizes", "run_concrete"]
