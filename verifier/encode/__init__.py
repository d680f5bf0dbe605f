"""Obligations as Z3 formulas, the solver seam, and the verify driver with replay.

`Options`, `verify_proc` and `concrete_verdict` are imported on first use, so that the command
line can start loading a file (a child process) before it pays for the prover's imports (z3,
networkx), and `verifier.encode.recheck` stays light."""

from __future__ import annotations

from typing import Any

__all__ = ["Options", "concrete_verdict", "verify_proc"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from verifier.encode import verify
        return getattr(verify, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
