"""The abstract machine (concrete reading) and the static site model; no Z3 here."""

from verifier.semantics.machine import run_machine
from verifier.semantics.sites import ProgramModel
from verifier.semantics.state import Finding
from verifier.semantics.static import analyze

__all__ = ["run_machine", "ProgramModel", "Finding", "analyze"]
