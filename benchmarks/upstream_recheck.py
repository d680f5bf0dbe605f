"""Rebuild one proc of an upstream test file and run upstream's own sync_check on it (issue 8).

Run by benchmarks/upstream_conformance.py with *upstream's* Python, for a test where
spork-verify refutes a proc that upstream's static compile accepts: does upstream's own
concrete checker, at the counterexample's sizes, report a hazard too?
`UPSTREAM_PY upstream_recheck.py TEST_FILE MKPROC KWARGS_JSON SIZES_JSON`, with
CAMSPORK_JIT_DIR set; KWARGS_JSON maps each keyword to its source text, evaluated in the test
module's namespace. Prints one JSON line: {"upstream": "raises" (a hazard: CamsporkError)|"cannot check" (another
error: a limitation of upstream's checker)|"passes"|"not rebuilt", "message": ...}; with a
hazard also its "kind" (RAW, WAR, WAW; endgame's free_missing_sync, ...), "variable" (the
buffer, `free(x)` as `x`) and "free" (whether it is at a free), or for unequal barrier counts
"barrier-count" and the "line" of the barrier's allocation, for an endgame ring element
arrived twice "second-arrive" and the barrier, read off
the remark upstream's checker writes to its debug log ("WAW HAZARD @ free(s[0])"), so that
the caller compares them with spork-verify's finding instead of only "upstream raised".
A proc that calls another proc (upstream's sync_check refuses those calls) is checked through
its callees, at the sizes the call gives them.
"""

from __future__ import annotations

import importlib
import json
import re
import sys
from pathlib import Path


def main() -> int:
    test, mkproc = Path(sys.argv[1]).resolve(), sys.argv[2]
    kwargs_text, sizes = json.loads(sys.argv[3]), json.loads(sys.argv[4])
    sys.dont_write_bytecode = True
    sys.path.insert(0, str(test.parent))
    try:
        module = importlib.import_module(test.stem)
        scope = vars(module)
        kwargs = {k: eval(text, scope) for k, text in kwargs_text.items()}  # noqa: S307
        built = scope[mkproc](**kwargs)
    except Exception as e:  # the proc cannot be rebuilt outside its test
        print(json.dumps({"upstream": "not rebuilt", "message": f"{type(e).__name__}: {e}"}))
        return 0
    checks = []
    for p in built if isinstance(built, (list, tuple)) else [built]:
        checks.extend(_callees(p, sizes) or [(p, sizes, {})])
    remarks = _capture_remarks()
    for p, at, actual in checks:
        try:
            p.sync_check(**at)
        except Exception as e:  # a finding (CamsporkError) or a limitation of upstream's
            first = (str(e).strip().splitlines() or [""])[0]
            first = re.sub(r"^\S+\.py:\d+:\d+:(\(\w+\))*:?\s*", "", first)  # no paths
            found = type(e).__name__ == "CamsporkError"
            out = {"upstream": "raises" if found else "cannot check",
                   "message": f"{type(e).__name__}: {first[:160]}"}
            hazard = next((m for m in map(_HAZARD.search, remarks) if m), None)
            count = next((m for m in map(_COUNT.search, remarks) if m), None)
            twice = next((m for m in map(_TWICE.search, remarks) if m), None)
            if found and twice and not hazard:  # DIAL-10: a one-shot element arrived twice
                out.update(kind="second-arrive", variable=twice["var"],
                           message=f"{type(e).__name__}: {twice[0]}")
            if found and count and not hazard:  # names no variable: the barrier's line
                out.update(kind="barrier-count", line=int(count["line"]),
                           message=f"{type(e).__name__}: {count['what']} (line {count['line']})")
            if found and hazard:  # a callee's parameter is named as the caller's argument
                out.update(kind=hazard["kind"], variable=actual.get(hazard["var"], hazard["var"]),
                           free=bool(hazard["free"]),
                           message=f"{type(e).__name__}: {hazard[0]}")
            print(json.dumps(out))
            return 0
    print(json.dumps({"upstream": "passes", "message": ""}))
    return 0


# camspork_jit and dev26 name RAW, WAR and WAW; endgame also `free_missing_sync` (a free not
# ordered after an access: our WAW or WAR at free(x)) and a few kinds of its own
_HAZARD = re.compile(r"(?P<kind>RAW|WAR|WAW|free_missing_sync|free_missing_arrive|use_after_free|"
                     r"use_before_alloc) HAZARD @ (?P<free>free\()?(?P<var>\w+)[^\n]*")


# endgame's one-shot ring elements (our SECOND ARRIVE, DIAL-10)
_TWICE = re.compile(r"Arrived twice on one-shot arrive barrier @ (?P<var>\w+)[^\n]*")


# a barrier freed with unequal counts: the remark names the allocation's line, not the variable
_COUNT = re.compile(r"^\S*?:(?P<line>\d+):\d+:(?:\(s\d+\))?:?\n"
                    r"(?P<what>Arrive count \(\d+\) != Await count \(\d+\))", re.M)


def _capture_remarks() -> list[str]:
    """The remarks upstream's checker logs when it finds a hazard (its default debug log
    drops them; the detail of the CamsporkError is only there)."""
    from exo.core import LoopIR

    remarks: list[str] = []
    LoopIR.BaseCompilerDebugLog.remark = lambda self, proc, text: remarks.append(text)
    return remarks


def _callees(p, sizes):  # type: ignore[no-untyped-def]
    """Upstream's sync_check refuses a proc that calls a non-instr proc (a test app's CPU
    wrapper around the kernel): check each called proc instead, at the sizes its control
    arguments take (constants, or the caller's sizes by name), with the caller's buffer behind
    each tensor parameter (spork-verify inlines the call and names the caller's, CALL-2);
    [] when there is no such call."""
    from exo.API import Procedure
    from exo.core.LoopIR import LoopIR

    out = []
    for s in p._loopir_proc.body:
        if not isinstance(s, LoopIR.Call) or s.f.instr is not None:
            continue
        at, actual = {}, {}
        for arg, formal in zip(s.args, s.f.args):
            if formal.type.is_numeric():
                if getattr(arg, "name", None) is not None:
                    actual[str(formal.name)] = str(arg.name)
                continue
            if isinstance(arg, LoopIR.Read) and not arg.idx and str(arg.name) in sizes:
                at[str(formal.name)] = sizes[str(arg.name)]
            elif isinstance(arg, LoopIR.Const):
                at[str(formal.name)] = arg.val
        out.append((Procedure(s.f), at, actual))
    return out


if __name__ == "__main__":
    sys.exit(main())
