"""The abstract machine (the concrete parallel reading) and its rule tables; no Z3 here.

The static rules live in `verifier.check`, which may read these rule tables; nothing here
imports `verifier.check` (architecture.md §1).
"""

from verifier.semantics.run import run_machine
from verifier.semantics.state import Finding

__all__ = ["run_machine", "Finding"]
