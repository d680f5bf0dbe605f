"""Property campaign for the collective algebra (issue: collectives exact and proven so).

Random nests of cuda_threads / CudaWarps with random units: the tiling model, the emitted
guards (Encoding B, simulated with C division) and brute-force thread sets must agree; any
disagreement raises. Prints the number of nests checked and the time.

    python benchmarks/collectives_campaign.py [--stock 5000] [--any 5000]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "collectives"))
import test_tiling_properties as props  # noqa: E402


def campaign(strategy, prop, count: int) -> int:  # type: ignore[no-untyped-def]
    seen = [0]

    @settings(max_examples=count, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def run(nest) -> None:  # type: ignore[no-untyped-def]
        seen[0] += 1
        prop(*nest)

    run()
    return seen[0]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--stock", type=int, default=5000)
    ap.add_argument("--any", type=int, default=5000)
    args = ap.parse_args()
    total, t0 = 0, time.perf_counter()
    for name, strategy, prop, count in (
            ("stock units", props.stock_nests(), props.stock_property, args.stock),
            ("strided / partial-domain / named warps", props.any_nests(), props.build_any,
             args.any)):
        start = time.perf_counter()
        n = campaign(strategy, prop, count)
        total += n
        print(f"{name:<40} {n:>7} nests checked, 0 disagreements, "
              f"{time.perf_counter() - start:8.1f} s")
    print(f"{'total':<40} {total:>7} nests checked, 0 disagreements, "
          f"{time.perf_counter() - t0:8.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
