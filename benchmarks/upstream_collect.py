"""pytest plugin run by upstream's own Python: lists every test of tests/cuda (issue 8).

benchmarks/upstream_conformance.py runs `UPSTREAM_PYTHON -m pytest tests/cuda --collect-only
-p upstream_collect` inside the checkout, so the list of tests and the fixtures each one
requests come from upstream's own collection: a file that spork-verify cannot collect is then
still counted test by test, and tests that need a device are known by their fixtures.
Writes {nodeid: [fixture names]} as JSON to $SPORK_UPSTREAM_TESTS.
"""

from __future__ import annotations

import json
import os

import pytest


def pytest_collection_finish(session: pytest.Session) -> None:
    out = os.environ.get("SPORK_UPSTREAM_TESTS")
    if not out:
        return
    tests = {item.nodeid: sorted(getattr(item, "fixturenames", ())) for item in session.items}
    with open(out, "w", encoding="utf-8") as f:
        json.dump(tests, f)
