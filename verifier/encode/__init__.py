"""Obligations as Z3 formulas, the solver seam, and the verify driver with replay."""

from verifier.encode.verify import Options, concrete_verdict, verify_proc

__all__ = ["Options", "concrete_verdict", "verify_proc"]
