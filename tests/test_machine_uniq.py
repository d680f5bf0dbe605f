"""The batched machine's distinct-value helpers (semantics/uniq.py) are np.unique: dense
arrays take the marking path, sparse ones the sorting one (issue 20)."""

from __future__ import annotations

import numpy as np
import pytest

from verifier.semantics.uniq import unique_first, unique_inverse, unique_values


def arrays() -> list[np.ndarray]:
    rng = np.random.default_rng(20)
    out = [np.zeros(0, dtype=np.int64), np.array([7], dtype=np.int64),
           np.full(50, -3, dtype=np.int64)]
    for n in (1, 10, 1000):
        out.append(rng.integers(0, 8, n))  # dense: marking
        out.append(rng.integers(-500, 500, n))  # dense, negative
        out.append(rng.integers(0, 1 << 60, n))  # sparse: sorting
        out.append(np.concatenate([rng.integers(0, 4, n), [1 << 50]]))  # sparse by one value
    return out


@pytest.mark.parametrize("a", arrays(), ids=lambda a: f"n{a.size}")
def test_helpers_are_np_unique(a: np.ndarray) -> None:
    want, first, inv = np.unique(a, return_index=True, return_inverse=True)
    assert np.array_equal(unique_values(a), want)
    got, got_inv = unique_inverse(a)
    assert np.array_equal(got, want) and np.array_equal(got_inv, inv.reshape(-1))
    got, got_first, got_inv = unique_first(a)
    assert np.array_equal(got, want) and np.array_equal(got_first, first) and \
        np.array_equal(got_inv, inv.reshape(-1))
