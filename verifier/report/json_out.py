"""The stable JSON contract of architecture.md §4 (schema version in "schema")."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from verifier import __version__
from verifier.diagnostics import SrcLoc
from verifier.results import (
    ChainResult, Finding, ObligationResult, ProcResult, ReleaseResult, SyncCheckResult)

# 2: verdicts `vacuous` and `no-hazard-at-sizes` (a --sizes run that finds nothing was `proved`
# in 1: the meaning of a value changed), obligation `query_hash`/`recheck`, result `sizes`
SCHEMA_VERSION = 2


def _loc(loc: SrcLoc) -> dict[str, Any]:
    return {"file": loc.file, "line": loc.line, "col": loc.col}


def _finding(f: Finding) -> dict[str, Any]:
    out: dict[str, Any] = {
        "kind": f.kind.value, "message": f.message, "variable": f.variable,
        "location": _loc(f.loc), "rule": f.rule, "code": f.code,
        "related": [{**_loc(r.loc), "role": r.role} for r in f.related],
        "counterexample": None,
    }
    if f.hint:
        out["hint"] = f.hint
    if f.counterexample is not None:
        c = f.counterexample
        out["counterexample"] = {"sizes": dict(sorted(c.sizes.items())),
                                 "iterators": dict(sorted(c.iterators.items())),
                                 "threads": list(c.threads), "index": list(c.index),
                                 "replayed": c.replayed}
    return out


def _obligation(o: ObligationResult) -> dict[str, Any]:
    out: dict[str, Any] = {"id": o.id, "rule": o.rule, "kind": o.kind,
                           "status": o.status.value, "time_s": round(o.time_s, 4),
                           "rlimit": o.rlimit}
    if o.discharged_by:
        out["discharged_by"] = o.discharged_by
    if o.stopped_by:
        out["stopped_by"] = o.stopped_by
    if o.query_hash:
        out["query_hash"] = o.query_hash
    if o.recheck is not None:
        c = o.recheck
        out["recheck"] = {"solver": c.solver, "answer": c.answer, "reason": c.reason,
                          "time_s": round(c.time_s, 4)}
    return out


def result_dict(r: ProcResult) -> dict[str, Any]:
    out = {
        "file": r.file, "proc": r.proc, "verdict": r.verdict.value, "time_s": round(r.time_s, 4),
        "obligations": [_obligation(o) for o in r.obligations],
        "findings": [_finding(f) for f in r.findings],
        "certificate": r.certificate.digest() if r.certificate else None,
        "load_output": r.load_output,
        **({"chain": _chain(r.chain)} if r.chain is not None else {}),
        **({"scheduled_by": asdict(r.scheduled_by)} if r.scheduled_by is not None else {}),
    }
    if r.sizes:
        out["sizes"] = dict(r.sizes)
    if r.assumptions:  # CLI-11
        out["assumptions"] = dict(r.assumptions)
    if r.releases:
        out["releases"] = [_release(x) for x in r.releases]
    if r.isolation is not None:  # SEC-2..SEC-6: how the file was confined while it loaded
        out["isolation"] = {"level": r.isolation.level,
                            "landlock_abi": r.isolation.landlock_abi}
    if r.sync_checks:  # the file's own sync_check calls on this proc (SYNC-7)
        out["sync_checks"] = [_sync_check(s) for s in r.sync_checks]
    return out


def _sync_check(s: SyncCheckResult) -> dict[str, Any]:
    return {"proc": s.proc, "sizes": dict(s.sizes), "location": _loc(s.loc),
            "status": s.status.value, "settled_by": s.settled_by, "message": s.message,
            "certificate": s.certificate or None,
            "finding": _finding(s.finding) if s.finding is not None else None,
            "time_s": round(s.time_s, 4)}


def _release(x: ReleaseResult) -> dict[str, Any]:
    """An early release (specs/codegen.md CG-R1..R3): codegen's, never part of the verdict."""
    return {"id": x.id, "variable": x.variable, "location": _loc(x.loc), "proved": x.proved,
            "reason": x.reason, "obligations": [_obligation(o) for o in x.obligations]}


def _chain(c: ChainResult) -> dict[str, Any]:
    return {"reference": c.reference, "status": c.status.value, "message": c.message,
            "reassociated": c.reassociated, "tested_sizes": [dict(sorted(s.items()))
                                                             for s in c.tested_sizes],
            "time_s": round(c.time_s, 4),
            "obligations": [{"id": o.id, "rule": o.rule, "kind": o.kind,
                             "status": o.status.value, "time_s": round(o.time_s, 4)}
                            for o in c.obligations]}


def to_json(results: list[ProcResult]) -> str:
    doc = {"tool": "spork-verify", "version": __version__, "schema": SCHEMA_VERSION,
           "results": [result_dict(r) for r in results]}
    return json.dumps(doc, indent=2) + "\n"
