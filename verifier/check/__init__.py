"""Static rules (LANG-*, COLL-* checks) and the site model the encoder reads.

Reads the IR, the collective algebra and the rule tables of `verifier.semantics`; never the
abstract machine, and the machine never reads this package (architecture.md §1).
"""

from verifier.check.sites import ProgramModel
from verifier.check.static import analyze

__all__ = ["ProgramModel", "analyze"]
