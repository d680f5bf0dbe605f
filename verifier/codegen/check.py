"""`--check-cert`: does an emitted `.cu` file still say exactly what spork-verify wrote, for
the IR and the proof it names?

Reads the file's bytes, the proc of its source and the certificate of a fresh proof of that
proc (the CLI runs the proof; codegen never imports the encoder); produces the list of every
mismatch, staged so the first failing stage is reported: (1) the file contradicts itself
(seal, certificate digest, CUDA digest, header rendering: any edit of any byte); (2) the proc
is not the certified one (name, IR hash); (3) the CUDA text is not what codegen emits for it;
(4) the fresh proof does not reproduce the certificate (verdict, solver, obligations, query
hashes, the chain claim). Rules: LANG-8.1 (specs/codegen.md, specs/cli.md CLI-9).
"""

from __future__ import annotations

from verifier.diagnostics import SporkError
from verifier.lang.ir import ir
from verifier.lang.ir.printer import ir_hash
from verifier.results import Certificate
from verifier.codegen.certificate import Emitted, read_emitted
from verifier.codegen.emit import emit_cuda


def _first_difference(expected: str, actual: str) -> str:
    exp, act = expected.split("\n"), actual.split("\n")
    for k, (a, b) in enumerate(zip(exp, act), 1):
        if a != b:
            return f"body line {k}: expected {a[:60]!r}, found {b[:60]!r}"
    return f"the body has {len(act)} lines, expected {len(exp)}"


def proc_problems(emitted: Emitted, proc: ir.Proc) -> list[str]:
    """Stages (2) and (3): the proc and the text codegen emits for it."""
    cert = emitted.cert
    if proc.name != cert.proc:
        return [f"the file is certified for proc {cert.proc}, not {proc.name}"]
    if ir_hash(proc) != cert.ir_hash:
        return [f"the IR of {proc.loc.file}:{proc.name} differs from the certified IR (the "
                "source changed since the file was emitted)"]
    try:
        again, _ = read_emitted(emit_cuda(proc, cert).encode("utf-8"))
    except SporkError as e:
        return [f"spork-verify no longer emits CUDA for {proc.name}: {e.message}"]
    assert again is not None
    body = again.body
    if proc.loc.file != emitted.source:  # the same IR from a copy of the source elsewhere:
        body = body.replace(proc.loc.file, emitted.source)  # comments name the emitting path
    if body != emitted.body:
        return ["the CUDA text is not what spork-verify emits for this proc: "
                + _first_difference(body, emitted.body)]
    return []


def proof_problems(recorded: Certificate, fresh: Certificate | None, verdict: str) -> list[str]:
    """Stage (4): a fresh proof reproduces the certificate's solver, obligations and hashes."""
    if fresh is None:
        return [f"the proof does not reproduce: the proc is now {verdict}, not proved"]
    if fresh.solver != recorded.solver:
        return [f"the certificate was made with {recorded.solver}, this run uses {fresh.solver}: "
                "the query hashes cannot be compared (re-emit the file with this solver)"]
    problems = []
    old, new = dict(recorded.obligations), dict(fresh.obligations)
    for ob_id in sorted(old.keys() - new.keys()):
        problems.append(f"certified obligation {ob_id} is not an obligation of the proc")
    for ob_id in sorted(new.keys() - old.keys()):
        problems.append(f"obligation {ob_id} of the proc is not in the certificate")
    for ob_id in sorted(old.keys() & new.keys()):
        if old[ob_id] != new[ob_id]:
            problems.append(f"the re-run proof's query hash of obligation {ob_id} is "
                            f"{new[ob_id]}, the certificate says {old[ob_id]}")
    if len(recorded.obligations) != len(old):
        problems.append("the certificate names an obligation twice")
    if fresh.releases != recorded.releases:
        problems.append(f"the certificate's early releases (CG-R1) are {recorded.releases!r}, "
                        f"the re-run gives {fresh.releases!r}")
    if fresh.assumptions != recorded.assumptions:  # CLI-11
        problems.append(f"the certificate assumes {recorded.assumptions!r}, the re-run proof "
                        f"assumes {fresh.assumptions!r}")
    if fresh.chain != recorded.chain:
        problems.append(f"the certificate says the chain is {recorded.chain!r}, the re-run "
                        f"gives {fresh.chain!r}")
    return problems


__all__ = ["proc_problems", "proof_problems"]
