"""SARIF 2.1.0 for code-scanning tools (GitHub, VS Code SARIF viewer, ...).

One result per finding, `ruleId` = its ERR-* code, rules taken from the error catalogue. A race
(RAW/WAR/WAW) carries a codeFlow with two threadFlows, the earlier access's thread and the later
access's thread, each located at its statement; a known missing-sync position is a
relatedLocation. A proc that is not proved and has no finding still gets one result, so no
non-proved verdict (including ones this module does not know by name) is lost.
"""

from __future__ import annotations

import json
import os
from pathlib import PurePath
from typing import Any
from urllib.parse import quote

from verifier import __version__
from verifier.diagnostics import SrcLoc
from verifier.report.catalog import catalog
from verifier.report.text import NOT_A_PROOF, verdict_words
from verifier.results import ChainStatus, Finding, FindingKind, ProcResult, Verdict

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/" \
    "sarif-schema-2.1.0.json"
RACE_KINDS = (FindingKind.RAW, FindingKind.WAR, FindingKind.WAW)
_LEVEL = {Verdict.refuted.value: "error", Verdict.rejected.value: "error",
          Verdict.no_hazard_at_sizes.value: "note"}  # others: warning


def _uri(file: str) -> str:
    """The file as a URI reference: its bytes percent-encoded, also those of a name that is not
    UTF-8 (held as surrogate escapes) and control characters, so the URI is the real name."""
    path = os.fsencode(PurePath(file).as_posix())
    return ("file://" if PurePath(file).is_absolute() else "") + quote(path)


def physical_location(loc: SrcLoc) -> dict[str, Any]:
    where: dict[str, Any] = {"artifactLocation": {"uri": _uri(loc.file)}}
    if loc.line > 0:
        where["region"] = {"startLine": loc.line, "startColumn": max(loc.col, 1)}
    return where


def _location(loc: SrcLoc, text: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {"physicalLocation": physical_location(loc)}
    if text:
        out["message"] = {"text": text}
    return out


def _thread_label(f: Finding, role: str) -> str:
    """`task 0, thread 64` for role `earlier`, from the counterexample's thread list."""
    if f.counterexample is not None:
        for t in f.counterexample.threads:
            name, _, who = t.partition(":")
            if name.strip() == role:
                return who.strip()
    return "some thread"


def _code_flow(f: Finding) -> dict[str, Any] | None:
    earlier = next((r.loc for r in f.related if r.role == "earlier access"), None)
    if f.kind not in RACE_KINDS or earlier is None:
        return None
    flows = []
    for order, (role, loc) in enumerate((("earlier", earlier), ("later", f.loc)), start=1):
        who = _thread_label(f, role)
        flows.append({
            "id": role, "message": {"text": f"{role} access by {who}"},
            "locations": [{"location": _location(loc, f"{role} access to {f.variable or '?'}"
                                                      f" ({who})"),
                           "executionOrder": order, "importance": "essential"}]})
    return {"message": {"text": f"{f.kind.value} on {f.variable}: the later access does not "
                                "see the earlier one"},
            "threadFlows": flows}


def _message(r: ProcResult, f: Finding) -> str:
    text = f"{f.message} (proc {r.proc}, verdict {r.verdict.value})"
    c = f.counterexample
    if c is not None:
        sizes = ", ".join(f"{k}={v}" for k, v in sorted(c.sizes.items())) or "none"
        how = " replayed by running both procs" if f.kind is FindingKind.chain else \
            " replayed on the abstract machine"
        text += f"; counterexample at sizes {sizes}" + (how if c.replayed else " NOT replayed")
    if f.hint:
        text += f". Fix: {f.hint}"
    return text


def _level(r: ProcResult, f: Finding | None) -> str:
    if r.internal_error:
        return "error"
    if f is not None and f.kind in (FindingKind.unknown, FindingKind.unsupported):
        return "warning"
    return _LEVEL.get(r.verdict.value, "warning")


def _rule_id(r: ProcResult, f: Finding | None) -> str:
    if f is not None and (f.code or f.rule):
        return f.code or f.rule
    return f"verdict-{r.verdict.value}"


def _result(r: ProcResult, f: Finding | None) -> dict[str, Any]:
    loc = f.loc if f is not None else (r.loc or SrcLoc(r.file, 0, 0))
    props: dict[str, Any] = {"proc": r.proc, "verdict": r.verdict.value}
    out: dict[str, Any] = {"ruleId": _rule_id(r, f), "level": _level(r, f),
                           "locations": [_location(loc)]}
    if r.sizes:
        props["sizes"] = dict(r.sizes)
    if f is None:
        out["message"] = {"text": f"proc {r.proc}: {verdict_words(r, lower=True)}"
                                  f"{' (internal error)' if r.internal_error else ''}"
                                  f"{' (' + NOT_A_PROOF + ')' if r.sizes else ''}"}
    else:
        out["message"] = {"text": _message(r, f)}
        props.update(kind=f.kind.value, variable=f.variable, rule=f.rule)
        related = [_location(rel.loc, rel.role) for rel in f.related
                   if not (rel.role == "later access" and rel.loc == f.loc)]
        if related:
            out["relatedLocations"] = [{"id": i, **rel} for i, rel in enumerate(related)]
        flow = _code_flow(f)
        if flow is not None:
            out["codeFlows"] = [flow]
        if f.counterexample is not None:
            c = f.counterexample
            props["counterexample"] = {"sizes": c.sizes, "iterators": c.iterators,
                                       "threads": list(c.threads), "index": list(c.index),
                                       "replayed": c.replayed}
    out["properties"] = props
    return out


def _chain_note(r: ProcResult) -> dict[str, Any]:
    """A chain that was asked for and not proved (tested, unknown, ...): a warning."""
    assert r.chain is not None
    loc = r.loc or SrcLoc(r.file, 0, 0)
    return {"ruleId": f"chain-{r.chain.status.value}", "level": "warning",
            "locations": [_location(loc)],
            "message": {"text": f"proc {r.proc}: chain vs {r.chain.reference}: "
                                f"{r.chain.summary()}: {r.chain.message}"},
            "properties": {"proc": r.proc, "verdict": r.verdict.value,
                           "chain": r.chain.status.value}}


def _rules(used: set[str]) -> list[dict[str, Any]]:
    rules = []
    for entry in catalog().values():
        rule: dict[str, Any] = {
            "id": entry.code, "shortDescription": {"text": entry.title},
            "fullDescription": {"text": f"{entry.title} (rule {entry.rule}); message: "
                                        f"{entry.messages}"},
            "properties": {"rule": entry.rule, "stage": entry.stage}}
        if entry.fix:
            rule["help"] = {"text": entry.fix}
        rules.append(rule)
    known = {r["id"] for r in rules}
    for rule_id in sorted(used - known):  # verdict-* and codes outside the catalogue
        rules.append({"id": rule_id, "shortDescription": {"text": rule_id}})
    return rules


def to_sarif(results: list[ProcResult]) -> str:
    sarif_results = []
    for r in results:
        if r.findings:
            sarif_results += [_result(r, f) for f in r.findings]
        elif r.verdict is not Verdict.proved:
            sarif_results.append(_result(r, None))
        if r.chain is not None and r.chain.status not in (ChainStatus.proved,
                                                          ChainStatus.refuted):
            sarif_results.append(_chain_note(r))
    rules = _rules({res["ruleId"] for res in sarif_results})
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    for res in sarif_results:
        res["ruleIndex"] = index[res["ruleId"]]
    run = {"tool": {"driver": {"name": "spork-verify", "version": __version__,
                               "semanticVersion": __version__, "rules": rules}},
           "invocations": [{"executionSuccessful": not any(r.internal_error for r in results)}],
           "results": sarif_results,
           "properties": {"procs": [{"file": r.file, "proc": r.proc, "verdict": r.verdict.value,
                                     **({"chain": r.chain.summary()} if r.chain else {})}
                                    for r in results]}}
    doc = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
    return json.dumps(doc, indent=2) + "\n"
