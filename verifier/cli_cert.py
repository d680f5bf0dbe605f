"""`spork-verify --check-cert FILE.cu [PATH...]`: is an emitted CUDA file exactly what
spork-verify wrote, for the proc, IR and proof it names? (specs/cli.md CLI-9)

Reads FILE.cu and its source (PATH, or the source path its header records); checks, in order,
the file against itself (any edited byte), the proc's IR and the CUDA text codegen emits for
it, and a fresh proof of the proc (same solver, same obligations, same query hashes). Exit 0
when everything matches, 5 (`CERT_MISMATCH`) with every mismatch of the first failing stage
named, 2 when FILE.cu or the source cannot be read. Decides no verdict of its own.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import TYPE_CHECKING

from verifier.cli_chain import named_references, with_chain
from verifier.cli_gate import certificates_allowed
from verifier.cli_io import (
    UsageError, interruptible_solvers, read_file_bytes, say, stop_if_interrupted)
from verifier.codegen import MARKERS, proc_problems, proof_problems, read_emitted
from verifier.lang.ir import ir
from verifier.load.load_scheduled import PRINTED_MARK, load_file
from verifier.results import NO_CHAIN, ProcResult, assumed_words

if TYPE_CHECKING:
    from verifier.encode import Options

CERT_MISMATCH = 5  # CLI-1: the file does not match its certificate
CODE = "ERR-V14"


def _mismatch(cu_file: str, problems: list[str]) -> int:
    for problem in problems:
        print(f"{cu_file}: error[{CODE}]: does not match its certificate: {problem}")
    print(f"{cu_file}: certificate check FAILED ({len(problems)} mismatch(es)); re-emit it with "
          "spork-verify --emit-cuda DIR SOURCE")
    return CERT_MISMATCH


def source_file(named: str) -> str:
    """The user's file behind a location: a proc Exo-GPU printed carries `FILE@exo-gpu/PROC.py`
    (SCHED-3), and it is FILE that is loaded again (with --exo-gpu-python)."""
    return named.rpartition(PRINTED_MARK)[0] or named


def _find_proc(name: str, paths: list[str], load_timeout: float, exo_gpu_python: str | None
               ) -> tuple[ir.Proc | None, int | None]:
    """The proc called `name` in the first of `paths` that has one; exit 2 on a file that
    does not load."""
    for path in paths:
        loaded = load_file(path, load_timeout, exo_gpu_python)
        if loaded.error is not None:
            say(loaded.error.render())
            return None, 2
        for p in loaded.procs:
            if p.name == name:
                return p, None
    return None, None


# the reference in a chain summary (results.ChainResult.summary): `STATUS against REF...` or
# `tested equivalent to REF at sizes ...`
_CHAIN_REFERENCE = re.compile(r"^(?:\w+ against|tested equivalent to) (?P<ref>\S+:\w+)(?: |$)")


def _with_recorded_chain(result: ProcResult, proc: ir.Proc, claim: str) -> ProcResult:
    """`result` with the chain re-run against the reference the certificate's chain claim
    names: relative to the source's folder when its `# spork-verify: against` line names it,
    else to the working folder (as the run that emitted it). Rules: CHAIN-9.4"""
    found = _CHAIN_REFERENCE.match(claim)
    if found is None or result.certificate is None:
        return result  # proof_problems names the unreproduced claim
    reference = found["ref"]
    named = named_references(proc.loc.file)
    base = Path(proc.loc.file).parent if reference in (named.get(proc.name), named.get(None)) \
        else None
    return with_chain(result, proc, reference, base, None)


def check_cert(cu_file: str, paths: list[str], load_timeout: float, opts: "Options",
               exo_gpu_python: str | None = None) -> int:
    """Rules: LANG-8.1"""
    from verifier.encode import verify_proc
    from verifier.encode.solver import stop_checks_on_interrupt

    if not certificates_allowed():  # SEC-6: the source would load unconfined
        raise UsageError(f"--check-cert {cu_file}: kernel files cannot be confined on this "
                         "machine (no Landlock), so no certificate is accepted here (SEC-6)")
    data = read_file_bytes("--check-cert", cu_file)
    if not any(marker in data for marker in MARKERS):
        raise UsageError(f"--check-cert {cu_file}: carries no spork-verify certificate; name a "
                         ".cu file written by --emit-cuda")
    emitted, problems = read_emitted(data)
    if emitted is None or problems:
        return _mismatch(cu_file, problems)
    source = source_file(emitted.source)
    sources = paths or [source]
    if not paths and not Path(source).is_file():
        raise UsageError(f"--check-cert {cu_file}: its source {emitted.source} (named in the "
                         "header) is not a file here; give the source: --check-cert FILE.cu PATH")
    proc, failed = _find_proc(emitted.cert.proc, sources, load_timeout, exo_gpu_python)
    if failed is not None:
        return failed
    if proc is None:  # the wrong source named: not an edit of the file
        raise UsageError(f"--check-cert {cu_file}: it is certified for proc "
                         f"{emitted.cert.proc}, which {', '.join(sources)} does not define; "
                         f"give the source it was emitted from ({emitted.source})")
    problems = proc_problems(emitted, proc)
    if problems:
        return _mismatch(cu_file, problems)
    with interruptible_solvers(stop_checks_on_interrupt()):
        assumed = dict(emitted.cert.assumptions)  # re-applied from the header (CLI-11)
        result = verify_proc(proc, dataclasses.replace(opts, fixed_sizes=assumed or None),
                             lambda done, known: stop_if_interrupted())
        stop_if_interrupted()  # checks cancelled by Ctrl-C are not a mismatch: exit 130 (CLI-4)
        if emitted.cert.chain != NO_CHAIN:  # a chain claim is re-checked too, never trusted
            result = _with_recorded_chain(result, proc, emitted.cert.chain)
            stop_if_interrupted()
    problems = proof_problems(emitted.cert, result.certificate, result.verdict.value)
    if problems:
        return _mismatch(cu_file, problems)
    cert = emitted.cert
    assumed = f" with {assumed_words(cert.assumptions)}" if cert.assumptions else ""
    print(f"{cu_file}: certificate {cert.digest()[:16]} matches {proc.loc.file}:{proc.name}: "
          f"seal, CUDA text and IR, and a re-run proof{assumed} ({len(cert.obligations)} "
          f"obligations, the same query hashes, {cert.solver})")
    return 0


__all__ = ["CERT_MISMATCH", "check_cert"]
