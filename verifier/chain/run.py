"""Running both procs (CHAIN-8.3): counterexample replay and the labelled fallback test.

Both the erased kernel and the reference are compiled to C by exo-lang and gcc (in the exo-lang
child, `exo_bridge`) and run on the same inputs. Inputs are small integers stored in the element
type, so every sum of products the GEMM-like procs form is exact in f32 and the comparison is
exact up to the tolerance stated in `TOLERANCE` (which only matters for division).

Sizes for the fallback are models of the two procs' asserts found by Z3, smallest first, each
different from the ones before (`sample_sizes`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from verifier.chain import exo_bridge
from verifier.chain.exo_text import ERASED_NAME, module_source
from verifier.chain.presburger import Aff, Formula, conj, eq, neg
from verifier.chain.program import flatten
from verifier.chain.smt import Answer, check
from verifier.lang.ir import ir

REPLAY_SEEDS = (1, 2, 3)
REPLAY_RANGE = (1, 8)  # positive: a missing or duplicated product always changes the sum
TEST_RANGE = (-4, 4)
RTOL, ATOL = 1e-5, 1e-6
TOLERANCE = f"numpy.isclose(rtol={RTOL:g}, atol={ATOL:g}) on integer-valued inputs"


@dataclass(frozen=True)
class Difference:
    sizes: dict[str, int]
    output: str
    element: tuple[int, ...]
    kernel_value: float
    reference_value: float


def asserts(p: ir.Proc) -> Formula:
    """The proc's asserts (and sizes >= 1) as a formula, whatever its body holds."""
    return flatten(ir.Proc(p.name, p.args, p.preds, (), p.loc)).context


def sample_sizes(context: Formula, names: tuple[str, ...], count: int,
                 timeout_s: float) -> list[dict[str, int]]:
    """Up to `count` distinct size assignments satisfying `context`, small ones first."""
    out: list[dict[str, int]] = []
    for _ in range(count):
        fresh = conj([context, *(neg(conj(eq(Aff.var(n), s[n]) for n in names)) for s in out)])
        got = check(fresh, timeout_s, names)
        if got.answer is not Answer.sat or got.model is None:
            break
        out.append({n: got.model.get(n, 1) for n in names})
    return out


def _runs(erased: ir.Proc, ref_path: str, ref_name: str, sizes: list[dict[str, int]],
          seed: int, value_range: tuple[int, int]) -> list[dict]:
    return exo_bridge.run_both(module_source(erased, ERASED_NAME), ERASED_NAME,
                               (ref_path, ref_name), sizes, seed, *value_range)


def replay(erased: ir.Proc, ref_path: str, ref_name: str, sizes: dict[str, int], output: str,
           element: tuple[int, ...]) -> Difference | None:
    """Run both procs at `sizes`; the element's values where they differ (None: they agreed
    on every seed, so the candidate is not confirmed)."""
    for seed in REPLAY_SEEDS:
        (run,) = _runs(erased, ref_path, ref_name, [sizes], seed, REPLAY_RANGE)
        k, r = run["kernel"][output][element], run["reference"][output][element]
        if not np.isclose(k, r, rtol=RTOL, atol=ATOL):
            return Difference(sizes, output, element, float(k), float(r))
    return None


def test_equal(erased: ir.Proc, ref_path: str, ref_name: str, sizes: list[dict[str, int]],
               outputs: list[str]) -> Difference | None:
    """Both procs at every sizes on the same random inputs; the first differing element."""
    for run in _runs(erased, ref_path, ref_name, sizes, REPLAY_SEEDS[0], TEST_RANGE):
        for out in outputs:
            k, r = run["kernel"][out], run["reference"][out]
            bad = np.argwhere(~np.isclose(k, r, rtol=RTOL, atol=ATOL))
            if len(bad):
                at = tuple(int(i) for i in bad[0])
                return Difference(run["sizes"], out, at, float(k[at]), float(r[at]))
    return None
