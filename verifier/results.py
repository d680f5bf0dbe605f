"""Plain-data results shared by encode, report, codegen and the CLI (no Z3 objects).

The verdict and finding-kind vocabularies are closed enums defined once here (style.md §13).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from enum import Enum

from verifier.diagnostics import SrcLoc


class Verdict(Enum):
    proved = "proved"  # every obligation discharged for all sizes
    refuted = "refuted"  # at least one counterexample confirmed by the concrete machine
    rejected = "rejected"  # a static error in the program
    unknown = "unknown"  # a timeout, or a counterexample the machine did not reproduce
    unsupported = "unsupported"  # a construct outside the encoding
    vacuous = "vacuous"  # the asserts admit no size, or no statement instance runs: nothing proved
    # `--sizes`: the concrete machine ran at those sizes and found no hazard (not a proof)
    no_hazard_at_sizes = "no-hazard-at-sizes"


class FindingKind(Enum):
    RAW = "RAW"
    WAR = "WAR"
    WAW = "WAW"
    barrier_count = "barrier-count"
    deadlock = "deadlock"
    ring_overrun = "ring-overrun"
    transaction_count = "transaction-count"
    out_of_bounds = "out-of-bounds"
    collective = "collective"
    static = "static"
    unsupported = "unsupported"
    unknown = "unknown"
    vacuous = "vacuous"
    chain = "chain-mismatch"  # the kernel's sequential reading differs from its reference


class ObligationStatus(Enum):
    proved = "proved"
    refuted = "refuted"
    unknown = "unknown"
    unsupported = "unsupported"


@dataclass(frozen=True)
class Related:
    loc: SrcLoc
    role: str  # earlier access | later access | missing sync


@dataclass(frozen=True)
class Counterexample:
    sizes: dict[str, int]
    iterators: dict[str, int]
    threads: list[str]
    index: list[int]
    replayed: bool


@dataclass(frozen=True)
class Finding:
    kind: FindingKind
    message: str
    variable: str | None
    loc: SrcLoc
    related: tuple[Related, ...] = ()
    counterexample: Counterexample | None = None
    rule: str = ""
    code: str = ""
    hint: str = ""


@dataclass(frozen=True)
class Recheck:
    """An independent solver's answer to a proved obligation's SMT-LIB2 query (`--recheck`):
    `unsat` agrees, `sat` disagrees (an internal error), `unknown` decides nothing."""

    solver: str  # name-version, e.g. cvc5-1.4.2
    answer: str  # unsat | sat | unknown
    reason: str = ""  # why unknown (timeout, incomplete, the solver failed)
    time_s: float = 0.0


@dataclass(frozen=True)
class ObligationResult:
    id: str
    rule: str
    kind: str
    status: ObligationStatus
    time_s: float
    query_hash: str = ""
    description: str = ""
    rlimit: int = 0  # Z3 resource units its queries used (deterministic; 0: no solver)
    discharged_by: str = ""  # the pruning rule (PR-*) that settled it without a solver
    stopped_by: str = ""  # "rlimit" | "wall-clock": the limit that made it unknown
    # the SMT-LIB2 text that decided it, kept only when asked (`--smt2`, `--recheck`)
    query: str = field(default="", repr=False, compare=False)
    recheck: Recheck | None = None
    note: str = ""  # where the obligation's rule departs from upstream's (shown under -v)


@dataclass(frozen=True)
class ReleaseResult:
    """An early release of a shared-memory variable (CG-R1, specs/codegen.md): its SEM-4.7
    free check proved at `loc` (just before that statement) lets codegen reuse the storage
    there; not proved, codegen keeps the storage to the end of the scope. Never a verdict."""

    id: str  # lang.lifetimes.EarlyRelease.id: VAR@alloc line:col->statement line:col
    variable: str
    loc: SrcLoc  # the statement the release precedes
    proved: bool
    reason: str = ""  # why not proved: the first failing obligation, its kind and status
    obligations: tuple[ObligationResult, ...] = ()


class ChainStatus(Enum):
    """The chain of equivalence with an exo-lang reference (specs/chain.md, CHAIN-9)."""

    proved = "proved"  # the same updates for all sizes satisfying the asserts (Z3)
    tested = "tested"  # equal outputs on random inputs at the listed sizes: not a proof
    refuted = "refuted"  # an element the two procs compute differently, replayed
    unknown = "unknown"  # a timeout, an unconfirmed proposal, or an unreplayed counterexample
    unsupported = "unsupported"  # outside the erasure or the proof, and not tested either
    vacuous = "vacuous"  # the two procs' asserts admit no sizes together


@dataclass(frozen=True)
class ChainResult:
    reference: str  # FILE.py:PROC as given
    status: ChainStatus
    message: str
    reassociated: bool = False  # the proof allowed += reductions to be summed in another order
    tested_sizes: tuple[dict[str, int], ...] = ()
    obligations: tuple[ObligationResult, ...] = ()
    time_s: float = 0.0

    def summary(self) -> str:
        """One line for certificates and headers."""
        if self.status is ChainStatus.tested:
            sizes = "; ".join(", ".join(f"{k}={v}" for k, v in sorted(s.items()))
                              for s in self.tested_sizes)
            return f"tested equivalent to {self.reference} at sizes {sizes}"
        extra = " (reassociating += reductions)" if self.reassociated else ""
        return f"{self.status.value} against {self.reference}{extra}"


SIGNAL_SCOPE_ABI = 6  # Landlock ABI that keeps the file's signals inside its domain (SEC-5)


@dataclass(frozen=True)
class Isolation:
    """How the process that ran a kernel file was confined (specs/threat_model.md SEC-2..6):
    the Landlock ABI the kernel offers (0: none) and whether a seccomp filter refuses the
    file's system calls on other processes (x86_64, aarch64). `full` (ABI >= 6): it writes
    only to its own temporary folder and signals, traces or reads no other process; `partial`
    (ABI 1-5): the same, with signals refused by the filter instead of Landlock; `none`: its
    filesystem access is not confined (the filter still applies), so nothing this run computes
    is stored (no cache entry, no certificate, SEC-6)."""

    landlock_abi: int
    syscall_filter: bool = True

    @property
    def level(self) -> str:
        if self.landlock_abi >= SIGNAL_SCOPE_ABI:
            return "full"
        return "partial" if self.landlock_abi >= 1 else "none"

    @property
    def confined(self) -> bool:
        return self.landlock_abi >= 1

    def warning(self) -> str:
        """What stderr says about what this machine cannot protect (empty when nothing)."""
        if self.level == "none":
            return ("this kernel offers no Landlock (Linux >= 5.13 with landlock among its "
                    "LSMs): kernel files can write wherever this user can, so the proof cache "
                    "is neither read nor written and no certificate is written or accepted "
                    "(SEC-6)")
        gaps = []
        if self.level != "full" and not self.syscall_filter:
            gaps.append("signal other processes of this user (stop or kill this run)")
        if self.landlock_abi < 3:
            gaps.append("truncate files it cannot write")
        if not gaps:
            return ""
        return (f"with this kernel's Landlock (ABI {self.landlock_abi}) a kernel file can "
                f"{' and '.join(gaps)} (SEC-5; Linux >= 6.12 prevents it)")


@dataclass(frozen=True)
class ScheduledBy:
    """Where a proc came from when upstream Exo-GPU's own rewrites built it (SCHED-6). The
    rewrites are not trusted: the text upstream printed, named by its hash, is the program
    verified; the locations of findings are lines of that text (`text_file`)."""

    tool: str  # "exo-gpu"
    python: str  # the interpreter given with --exo-gpu-python
    python_version: str
    exo_version: str  # upstream's package version in that interpreter
    text_sha256: str
    text_file: str  # `FILE@exo-gpu/PROC.py`, the name locations in the text carry


class SyncCheckStatus(Enum):
    """How a `p.sync_check(**sizes)` call of the user's file was settled (specs/loading.md
    SYNC-4..6)."""

    covered = "covered"  # a proof holds at these sizes: for all sizes, or at these (SYNC-4/5)
    no_hazard = "no-hazard"  # the concrete machine ran at these sizes to the end: none found
    hazard = "hazard"  # the machine found one at these sizes (replayed, never a guess)
    not_run = "not-run"  # the machine cannot run the proc (a construct outside its fragment)


@dataclass(frozen=True)
class SyncCheckResult:
    """One in-file `sync_check` call and its answer, reported with its proc's result."""

    proc: str
    sizes: tuple[tuple[str, int], ...]
    loc: SrcLoc  # the call, in the user's file
    status: SyncCheckStatus
    settled_by: str  # a SYNC_SETTLED_BY key
    message: str
    certificate: str = ""  # covered: the digest of the certificate of the proof that covers it
    finding: Finding | None = None  # hazard: the machine's finding
    time_s: float = 0.0


# who settled an in-file sync_check (specs/loading.md SYNC-3..6)
SYNC_SETTLED_BY = {
    "proof": "the proof for all sizes",
    "proof-at-sizes": "a proof at these sizes",
    "machine": "the concrete machine at these sizes",
}


@dataclass(frozen=True)
class ProcResult:
    file: str
    proc: str
    verdict: Verdict
    time_s: float
    obligations: tuple[ObligationResult, ...] = ()
    findings: tuple[Finding, ...] = ()
    loc: SrcLoc | None = None
    certificate: "Certificate | None" = None
    internal_error: bool = False
    load_output: str = ""  # what the file printed while it was loaded (specs/loading.md)
    sizes: tuple[tuple[str, int], ...] = ()  # the sizes of a concrete run (`--sizes`)
    chain: ChainResult | None = None  # only with --against (specs/chain.md)
    releases: tuple[ReleaseResult, ...] = ()  # early releases, proved procs only (CG-R1)
    scheduled_by: ScheduledBy | None = None  # built by upstream's rewrites (SCHED-6)
    # `--assume NAME=VALUE`: proved (or refuted) only for sizes with these values (CLI-11)
    assumptions: tuple[tuple[str, int], ...] = ()
    isolation: Isolation | None = None  # how the file was confined while it loaded (SEC-2)
    # the file's own `p.sync_check(...)` calls on this proc and their answers (SYNC-7)
    sync_checks: tuple[SyncCheckResult, ...] = ()


def assumed_words(assumptions: tuple[tuple[str, int], ...]) -> str:
    """`K_split = 1, M = 128`: how reports and messages name assumed sizes (CLI-11)."""
    return ", ".join(f"{name} = {value}" for name, value in assumptions)


NO_CHAIN = "not asked"  # Certificate.chain of a proof without a chain (specs/chain.md)
RELEASE_PROVED = "proved"  # Certificate.releases outcome that lets codegen reuse storage


@dataclass(frozen=True)
class Certificate:
    """Evidence that every obligation of one exact IR was discharged (architecture.md §5)."""

    proc: str
    ir_hash: str
    obligations: tuple[tuple[str, str], ...]  # (obligation id, query hash)
    solver: str
    tool_version: str
    chain: str = NO_CHAIN  # the chain result's summary (ChainResult.summary), CHAIN-9.4
    # CG-R1: (early-release id, "proved" or why not); the obligations of a proved one are in
    # `obligations` (ids `release:...`), and codegen reuses storage only where it says proved
    releases: tuple[tuple[str, str], ...] = ()
    # CLI-11: the proof holds only for sizes with these values (`--assume`); hashed with the
    # rest, and the emitted host function checks them at run time (CG-A1)
    assumptions: tuple[tuple[str, int], ...] = ()

    def _fields(self) -> dict[str, object]:
        """Without the chain when it was not asked for, nor releases or assumptions when
        there are none, so such a certificate reads (and hashes) as it did before they
        existed."""
        data = asdict(self)
        if self.chain == NO_CHAIN:
            del data["chain"]
        for optional in ("releases", "assumptions"):
            if not data[optional]:
                del data[optional]
        return data

    def digest(self) -> str:
        text = json.dumps(self._fields(), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()

    def to_json(self) -> str:
        return json.dumps(self._fields(), sort_keys=True)

    @staticmethod
    def from_json(text: str) -> "Certificate":
        """The certificate `to_json` wrote; ValueError when any field is missing, unknown or
        of the wrong type (a certificate read from a file may have been edited)."""
        data = json.loads(text)
        if not isinstance(data, dict) or not isinstance(data.get("obligations"), list):
            raise ValueError("a certificate is a JSON object with a list of obligations")
        obligations = data["obligations"]
        if not all(isinstance(o, list) and len(o) == 2 and all(isinstance(x, str) for x in o)
                   for o in obligations):
            raise ValueError("each obligation of a certificate is [id, query hash]")
        data["obligations"] = tuple(tuple(o) for o in obligations)
        releases = data.get("releases", [])
        if not isinstance(releases, list) or not all(
                isinstance(r, list) and len(r) == 2 and all(isinstance(x, str) for x in r)
                for r in releases):
            raise ValueError("each release of a certificate is [id, outcome]")
        data["releases"] = tuple(tuple(r) for r in releases)
        assumed = data.get("assumptions", [])
        if not isinstance(assumed, list) or not all(
                isinstance(a, list) and len(a) == 2 and isinstance(a[0], str)
                and type(a[1]) is int for a in assumed):
            raise ValueError("each assumption of a certificate is [size name, integer]")
        data["assumptions"] = tuple(tuple(a) for a in assumed)
        try:
            cert = Certificate(**data)
        except TypeError as e:  # a field missing or unknown
            raise ValueError(str(e)) from None
        if not all(isinstance(v, str) for v in (cert.proc, cert.ir_hash, cert.solver,
                                                cert.tool_version, cert.chain)):
            raise ValueError("the fields of a certificate are strings")
        return cert


