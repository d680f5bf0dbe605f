"""Seeded wrong kernels for the chain (tests/test_chain.py, benchmarks/chain.py): each is a
bundled example with one textual change. They stay correctly synchronized, so the S/M proof
cannot see the bug; only the chain against the reference can."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
CHAIN = EXAMPLES / "chain"
GEMM_REF = str(CHAIN / "gemm_ref.py") + ":gemm"
SAXPY_REF = str(CHAIN / "saxpy_ref.py") + ":saxpy"
ROW_SUMS_REF = str(CHAIN / "row_sums_ref.py") + ":row_sums"

# (example file stem, proc, reference): the bundled examples whose chain is proved.
PROVED = (
    ("gemm_sm80", "gemm_sm80", GEMM_REF),
    ("gemm_sm80_ws", "gemm_sm80_ws", GEMM_REF),
    ("smem_matmul", "smem_matmul", GEMM_REF),
    ("cp_async_stage", "stage_copy", str(CHAIN / "copy_ref.py") + ":copy"),
    ("cp_async_double_buffer", "double_buffer", str(CHAIN / "every_fourth_ref.py") +
     ":every_fourth"),
    ("ws_ring", "ws_ring", str(CHAIN / "reverse_rows_ref.py") + ":reverse_rows"),
    ("smem_exchange", "smem_exchange", str(CHAIN / "reverse_blocks_ref.py") + ":reverse_blocks"),
    ("saxpy", "saxpy", SAXPY_REF),
)


@dataclass(frozen=True)
class Mutant:
    name: str
    example: str  # the proc, also the file's stem
    old: str
    new: str
    why: str
    kind: str  # what the chain reports: missing | duplicated | different | testing
    output: str = "C"

    @property
    def reference(self) -> str:
        return {"saxpy": SAXPY_REF, "block_reduce": ROW_SUMS_REF}.get(self.example, GEMM_REF)


MUTANTS = {m.name: m for m in (
    Mutant("skip_last_ktile", "gemm_sm80", "for kt in seq(0, K / 32):",
           "for kt in seq(0, K / 32 - 1):", "the k loop stops one tile early", "missing"),
    Mutant("guard_off_by_one", "gemm_sm80", "if kt + RING - 1 < K / 32:",
           "if kt + RING < K / 32:", "the prefetch guard is off by one: the last k-tile is "
           "never loaded and its ring slot still holds an older tile", "duplicated"),
    Mutant("wrong_accumulator", "gemm_sm80", "Sm80_mma_tf32(D[mw, nw, i, j, :, :]",
           "Sm80_mma_tf32(D[mw, nw, j, i, :, :]", "the mma accumulates into D[j, i]",
           "different"),
    Mutant("wrong_tile_offset", "gemm_sm80",
           "A[128 * m + 32 * r + t / 8, 32 * (kt + RING - 1) + 4 * (t % 8) : "
           "32 * (kt + RING - 1) + 4 * (t % 8) + 4]",
           "A[128 * m + 32 * r + t / 8, 32 * kt + 4 * (t % 8) : 32 * kt + 4 * (t % 8) + 4]",
           "the main loop loads A's k-tile kt instead of kt + RING - 1", "different"),
    Mutant("wrong_slot_read", "gemm_sm80", "A_s[kt % RING, 64 * mw",
           "A_s[(kt + 1) % RING, 64 * mw", "the fragments of A are read from the next ring slot",
           "different"),
    Mutant("kk_short", "gemm_sm80", "for kk in seq(0, 4):", "for kk in seq(0, 3):",
           "the inner k loop covers 24 of the 32 columns of a k-tile", "missing"),
    Mutant("store_reduce", "gemm_sm80", "Sm80_mma_store_d_row_major_tf32(",
           "Sm80_mma_reduce_d_row_major_tf32(", "C += D instead of C = D: C's initial value "
           "stays in the sum", "different"),
    Mutant("b_col_major", "gemm_sm80", "Sm80_mma_load_b_row_major_tf32(",
           "Sm80_mma_load_b_col_major_tf32(", "B's fragments are loaded transposed",
           "different"),
    Mutant("drops_y", "saxpy", "= a * xv + y[256 * blk + t]", "= a * xv",
           "y = a * x drops the `+ y` of the reference", "different", "y"),
    Mutant("wrong_partner", "block_reduce", "s[t] += s[t + 2]", "s[t] += s[t + 3]",
           "one level of the tree adds the wrong partner (the proof does not apply to the "
           "tree: the labelled test finds it)", "testing", "out"),
)}


def write_mutant(m: Mutant, folder: Path) -> Path:
    """The example with the change applied, as `folder/<example>_<name>.py` (proc renamed)."""
    text = (EXAMPLES / f"{m.example}.py").read_text()
    assert text.count(m.old) == 1, m.name
    text = text.replace(m.old, m.new).replace(f"def {m.example}(", f"def {proc_name(m)}(")
    path = folder / f"{proc_name(m)}.py"
    path.write_text(f"# Seeded chain bug: {m.why}.\n" + text)
    return path


def proc_name(m: Mutant) -> str:
    return f"{m.example}_{m.name}"


# Changes that keep the GEMM correct: the chain must still prove them (no false refutation).
EQUIVALENT = (
    Mutant("ring4", "gemm_sm80", "RING = 3\n", "RING = 4\n", "a four-slot ring", "proved"),
    Mutant("swap_ij", "gemm_sm80", """                                for i in seq(0, 4):
                                    for j in seq(0, 4):
                                        Sm80_mma_tf32(D[mw, nw, i, j, :, :]""",
           """                                for j in seq(0, 4):
                                    for i in seq(0, 4):
                                        Sm80_mma_tf32(D[mw, nw, i, j, :, :]""",
           "the mma loops in the other order", "proved"),
)
