"""Read a JSON report (the contract of docs/json-contract.md) back into `ProcResult`s, so a
saved report can be rendered in another format and the contract is checked to round-trip."""

from __future__ import annotations

import json
from typing import Any

from verifier.diagnostics import SrcLoc
from verifier.results import (ChainResult, ChainStatus, Counterexample, Finding, FindingKind,
                              Isolation, ObligationResult, ObligationStatus, ProcResult, Recheck,
                              Related, ReleaseResult, ScheduledBy, SyncCheckResult,
                              SyncCheckStatus, Verdict)


def _loc(d: dict[str, Any]) -> SrcLoc:
    return SrcLoc(d["file"], d["line"], d["col"])


def _finding(d: dict[str, Any]) -> Finding:
    c = d.get("counterexample")
    cex = None if c is None else Counterexample(dict(c["sizes"]), dict(c["iterators"]),
                                                list(c["threads"]), list(c["index"]),
                                                c["replayed"])
    related = tuple(Related(_loc(r), r["role"]) for r in d["related"])
    return Finding(FindingKind(d["kind"]), d["message"], d["variable"], _loc(d["location"]),
                   related, cex, d.get("rule", ""), d.get("code", ""), d.get("hint", ""))


def _chain(d: dict[str, Any]) -> ChainResult:
    obligations = tuple(ObligationResult(o["id"], o["rule"], o["kind"],
                                         ObligationStatus(o["status"]), o.get("time_s", 0.0))
                        for o in d["obligations"])
    return ChainResult(d["reference"], ChainStatus(d["status"]), d["message"],
                       d["reassociated"], tuple(dict(s) for s in d["tested_sizes"]),
                       obligations, d.get("time_s", 0.0))


def _obligation(d: dict[str, Any]) -> ObligationResult:
    c = d.get("recheck")
    again = None if c is None else Recheck(c["solver"], c["answer"], c.get("reason", ""),
                                           c.get("time_s", 0.0))
    return ObligationResult(d["id"], d["rule"], d["kind"], ObligationStatus(d["status"]),
                            d.get("time_s", 0.0), d.get("query_hash", ""),
                            rlimit=d.get("rlimit", 0), discharged_by=d.get("discharged_by", ""),
                            stopped_by=d.get("stopped_by", ""), recheck=again)


def results_from_json(text: str) -> list[ProcResult]:
    doc = json.loads(text)
    out = []
    for r in doc["results"]:
        obligations = tuple(_obligation(o) for o in r["obligations"])
        out.append(ProcResult(r["file"], r["proc"], Verdict(r["verdict"]), r.get("time_s", 0.0),
                              obligations, tuple(_finding(f) for f in r["findings"]),
                              load_output=r.get("load_output", ""),
                              sizes=tuple(r.get("sizes", {}).items()),
                              assumptions=tuple(r.get("assumptions", {}).items()),
                              chain=_chain(r["chain"]) if "chain" in r else None,
                              releases=tuple(_release(x) for x in r.get("releases", ())),
                              scheduled_by=ScheduledBy(**r["scheduled_by"])
                              if "scheduled_by" in r else None,
                              isolation=Isolation(r["isolation"]["landlock_abi"])
                              if "isolation" in r else None,
                              sync_checks=tuple(_sync_check(s)
                                                for s in r.get("sync_checks", ()))))
    return out


def _sync_check(d: dict[str, Any]) -> SyncCheckResult:
    return SyncCheckResult(d["proc"], tuple(d["sizes"].items()), _loc(d["location"]),
                           SyncCheckStatus(d["status"]), d["settled_by"], d["message"],
                           d["certificate"] or "",
                           _finding(d["finding"]) if d["finding"] is not None else None,
                           d.get("time_s", 0.0))


def _release(d: dict[str, Any]) -> ReleaseResult:
    return ReleaseResult(d["id"], d["variable"], _loc(d["location"]), d["proved"], d["reason"],
                         tuple(_obligation(o) for o in d["obligations"]))
