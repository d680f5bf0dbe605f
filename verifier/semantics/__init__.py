"""The abstract machine (the concrete parallel reading) and its rule tables; no Z3 here.

The static rules live in `verifier.check`, which may read these rule tables; nothing here
imports `verifier.check` (architecture.md §1). `run_machine` and `Finding` are imported on
first use, so that a module needing only the rule tables or `sync_check`'s size check (the
loading child) does not pay for the machine's imports (numpy among them).
"""

from __future__ import annotations

from typing import Any

__all__ = ["run_machine", "Finding"]


def __getattr__(name: str) -> Any:
    if name == "run_machine":
        from verifier.semantics.run import run_machine
        return run_machine
    if name == "Finding":
        from verifier.semantics.state import Finding
        return Finding
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
