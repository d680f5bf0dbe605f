"""The collective algebra: tilings, guards, unit checks and distributed memory (COLL-*).

Reads IR-level facts (device-function configs, `cuda_threads` units, `CudaWarps`) with
concrete blockDim/clusterDim; produces tilings with their generated guards, ground-truth
thread sets, unit-match verdicts and distribution deductions. Every tiling it returns has been
proven equal to its guards (COLL-6.2). Other packages import only the names below.
"""

from verifier.collectives.arith import Arith, BoolTerm, IntArith, Term
from verifier.collectives.completion import Completion, complete, eval_unit
from verifier.collectives.derive import tile_threads, tile_warps
from verifier.collectives.equivalence import base_mismatch, base_threads, confirm_same_base
from verifier.collectives.distributed import (
    Distribution,
    NotAVariable,
    deduce_distribution,
    owner_threads,
    roles_agree,
)
from verifier.collectives.index_expr import IndexExpr
from verifier.collectives.matching import (
    fence_scope,
    matches_unit,
    one_thread,
    require_unit,
    unit_completion,
)
from verifier.collectives.membership import (
    membership,
    model_membership,
    model_thread_set,
    thread_groups,
    thread_set,
)
from verifier.collectives.symbolic import Z3Arith
from verifier.collectives.tiling import (
    Axis,
    DimOp,
    Guard,
    Label,
    LoopRecord,
    Tiling,
    linear_base_offset,
    pow2_alignment,
    top_tiling,
)
from verifier.collectives.validate import validate_tiling

__all__ = [
    "Arith", "Axis", "BoolTerm", "base_mismatch", "base_threads", "confirm_same_base", "Completion", "DimOp", "Distribution", "Guard", "IndexExpr",
    "IntArith", "Label", "LoopRecord", "NotAVariable", "Term", "Tiling", "Z3Arith", "complete",
    "deduce_distribution", "eval_unit", "fence_scope", "linear_base_offset", "matches_unit",
    "membership", "model_membership", "model_thread_set", "one_thread", "owner_threads",
    "roles_agree",
    "thread_groups",
    "pow2_alignment", "require_unit", "thread_set", "tile_threads", "tile_warps",
    "top_tiling", "unit_completion", "validate_tiling",
]
