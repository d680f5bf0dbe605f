"""Upstream's debug log (`exo.core.LoopIR`): the remark files scripts and tests read (API-6).

Upstream Exo-GPU keeps, per proc, text files `DIR/debug/NAME-KIND.py` (the proc printed with
comment lines, "remarks", above statements) and writes them on `write_all_impl()` when a debug
folder was set (`set_global_debug_log_path`; none by default, and then the log is a no-op).
spork-verify serves the kinds it can fill from its own analysis, in upstream's words
(`REMARK_KINDS`, served: True); the others are never written, and `missing(path)` says why,
naming the remark kind, so a reader that opens one gets a precise `unsupported`.

Non-goals: the text is spork-verify's printer's, not upstream's; only the served remarks are
comparable with upstream's files (by the words they contain, not byte for byte).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Mapping

from verifier.diagnostics import SrcLoc
from verifier.lang.ir import ir
from verifier.lang.ir.printer import Remarks, proc_text

_INTERNAL = ("internal state of upstream's own checker, which spork-verify's analysis does not "
             "have (its collectives are symbolic and its machine keeps no VisRecords)")


@dataclass(frozen=True, slots=True)
class RemarkKind:
    """One kind of debug file, `NAME-KIND.py` (API-6)."""

    kind: str
    served: bool
    what: str


# Every kind upstream's compile and sync_check log (LoopIR_compiler.py, sync_check.py).
REMARK_KINDS: Mapping[str, RemarkKind] = MappingProxyType({k.kind: k for k in (
    RemarkKind("sync-error", True, "the proc p.sync_check(...) found a hazard in, with the "
               "hazard in upstream's words (`RAW HAZARD @ x[i, j]`) above the failing statement, "
               "the iterator values of that instance (`i = 3`) above their loops, and the "
               "earlier access"),
    RemarkKind("analysis", True, "the proc annotated with its collective analysis (each "
               "scope's thread domain and box, each cuda_threads loop's thread pitch and index "
               "expression, each distributed allocation's dimensions and thread pitch tuple), "
               "the static error above the statement that raised it, and a hazard "
               "p.sync_check(...) found, as in its sync-error remark"),
    RemarkKind("coll_analysis", False, "upstream's collective-analysis dump: " + _INTERNAL),
    RemarkKind("scheduled", False, "the proc as upstream's printer writes it after scheduling "
               "(spork-verify's printer differs)"),
    RemarkKind("camspork", False, "the program of upstream's C++ abstract machine (camspork): "
               + _INTERNAL),
)})


class BaseCompilerDebugLog:
    """The log when no debug folder is set: records nothing, writes nothing (as upstream)."""

    def get_path(self) -> Path | None:
        return None

    def log(self, proc_name: str, kind: str, proc: ir.Proc, remarks: Remarks,
            source: str = "") -> None:
        pass

    def write_all_impl(self) -> None:
        pass

    def enable_notify_user(self) -> None:
        pass


@dataclass
class CompilerDebugLog(BaseCompilerDebugLog):
    """The log of one debug folder: by (proc name, kind), the proc last logged and the remarks
    of each pass that logged it (upstream's files likewise gather the remarks of several
    passes); a pass that logs again replaces its own remarks, as a re-run would."""

    path: Path
    entries: dict[tuple[str, str], tuple[ir.Proc, dict[str, Remarks]]] = \
        field(default_factory=dict)

    def get_path(self) -> Path | None:
        return self.path

    def log(self, proc_name: str, kind: str, proc: ir.Proc, remarks: Remarks,
            source: str = "") -> None:
        """Set the remarks of pass `source` in `debug/PROC_NAME-KIND.py`, which prints `proc`
        with the remarks of every pass. Only served kinds are ever logged (API-6)."""
        assert REMARK_KINDS[kind].served, kind
        _, passes = self.entries.get((proc_name, kind), (proc, {}))
        self.entries[(proc_name, kind)] = (proc, {**passes, source: remarks})

    def write_all_impl(self) -> None:
        folder = self.path / "debug"
        folder.mkdir(parents=True, exist_ok=True)
        for (name, kind), (proc, passes) in self.entries.items():
            merged: dict[SrcLoc, list[str]] = {}
            for remarks in passes.values():
                for loc, lines in remarks.items():
                    merged.setdefault(loc, []).extend(lines)
            (folder / f"{name}-{kind}.py").write_text(proc_text(proc, merged))


def missing(path: str | Path) -> str | None:
    """Why the debug file `path` was not written, when it is a remark kind spork-verify does
    not serve: an `unsupported` message naming the kind (API-6); None otherwise."""
    name = Path(path).name
    if Path(path).parent.name != "debug" or not name.endswith(".py"):
        return None
    for kind in REMARK_KINDS.values():
        if not kind.served and name.endswith(f"-{kind.kind}.py"):
            return (f"not supported by spork-verify: upstream's debug-log remark "
                    f"`{kind.kind}` ({name}: {kind.what}); spork-verify writes only the "
                    f"{', '.join(k for k, v in REMARK_KINDS.items() if v.served)} remarks "
                    "(specs/upstream_api.md API-6)")
    return None


_logs: dict[Path, CompilerDebugLog] = {}
_global_path: list[Path | None] = [None]


def get_debug_log(path: Path | None) -> BaseCompilerDebugLog:
    """The log of folder `path` (one per folder), or the no-op log for None."""
    if path is None:
        return BaseCompilerDebugLog()
    return _logs.setdefault(Path(path), CompilerDebugLog(Path(path)))


def get_global_debug_log() -> BaseCompilerDebugLog:
    return get_debug_log(_global_path[0])


def get_global_debug_log_path() -> Path | None:
    return _global_path[0]


def set_global_debug_log_path(path: Path | None) -> None:
    _global_path[0] = None if path is None else Path(path)


__all__ = ["BaseCompilerDebugLog", "get_debug_log", "get_global_debug_log",
           "get_global_debug_log_path", "set_global_debug_log_path"]
