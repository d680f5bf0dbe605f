"""How benchmarks/upstream_conformance.py counts a test (issue 18): a front-end rejection is a
version difference, never "stricter"; upstream's re-run hazard agrees only with the same kind
on the same variable (endgame's free_missing_sync standing for our WAW/WAR at that free).
The script runs upstream; these rows are built by hand, so no upstream is needed."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import upstream_conformance as conf  # noqa: E402


def _row(verdict: str, message: str, codes: list[str]) -> dict:
    return {"outcome": "failed", "longrepr": "E   upstream_adapter.SporkVerifyRejection: x",
            "calls": [{"proc": "p", "verdict": verdict, "message": message, "codes": codes}]}


def test_a_front_end_rejection_is_a_version_difference() -> None:
    kind, why = conf.classify(_row(
        "rejected", "k.py:3:5: error[ERR-P09]: CudaDeviceFunction() got an unexpected keyword "
        "argument 'unsafe_no_shutdown_cluster_sync'", ["ERR-P09"]))
    assert kind == "version" and "ERR-P09" in why


def test_a_static_rule_of_ours_stays_stricter() -> None:
    kind, _ = conf.classify(_row("rejected", "k.py:9:9: collective[ERR-A23]: Distributed memory "
                                 "deduction for full failed", ["ERR-A23"]))
    assert kind == "stricter"


def test_a_refutation_is_stricter_whatever_the_codes() -> None:
    kind, why = conf.classify(_row("refuted", "WAW: WAW HAZARD @ C[0]", ["ERR-V02"]))
    assert kind == "stricter" and why.startswith("refuted")


def test_upstream_agrees_only_on_the_same_kind_and_variable() -> None:
    ours = {"kind": "WAW", "variable": "smem", "free": True}
    assert conf.same_hazard({"kind": "WAW", "variable": "smem", "free": True}, ours)
    assert not conf.same_hazard({"kind": "WAW", "variable": "acc", "free": True}, ours)
    assert not conf.same_hazard({"kind": "RAW", "variable": "smem", "free": False}, ours)
    assert not conf.same_hazard({"kind": "WAW", "variable": "smem", "free": False}, ours)
    # endgame names a free not ordered after an access free_missing_sync
    assert conf.same_hazard({"kind": "free_missing_sync", "variable": "smem", "free": True}, ours)
    assert not conf.same_hazard({"kind": "free_missing_sync", "variable": "smem", "free": True},
                                {"kind": "RAW", "variable": "smem", "free": False})
    assert not conf.same_hazard({"kind": "use_after_free", "variable": "smem", "free": False},
                                ours)
    # unequal barrier counts: upstream names the allocation's line, not the variable
    count = {"kind": "barrier-count", "variable": "cg", "free": False, "line": 368}
    assert conf.same_hazard({"kind": "barrier-count", "line": 368}, count)
    assert not conf.same_hazard({"kind": "barrier-count", "line": 12}, count)
    assert not conf.same_hazard({"kind": "barrier-count", "line": 368}, ours)
    # endgame's "Arrived twice on one-shot arrive barrier @ bar[0]" is our SECOND ARRIVE (DIAL-10)
    second = {"kind": "barrier-count", "variable": "bar", "free": False, "second": True}
    assert conf.same_hazard({"kind": "second-arrive", "variable": "bar"}, second)
    assert not conf.same_hazard({"kind": "second-arrive", "variable": "bar"}, count)
    assert not conf.same_hazard({"kind": "second-arrive", "variable": "bar"},
                                {"kind": "WAR", "variable": "bar", "free": True})


def test_a_remark_compared_with_upstreams_golden_names_what_differs(tmp_path: Path) -> None:
    """A debug-log remark file spork-verify wrote, compared byte for byte with upstream's
    golden (API-6): equal only when equal; otherwise the test's row is `unsupported`, naming
    what the golden holds that our analysis does not, and how many of our lines it has."""
    import upstream_adapter as adapter

    (tmp_path / "debug").mkdir()
    ours = "def k():\n    # Domain (ω.D) = [ 256]\n    # n = 5\n    pass\n"
    (tmp_path / "debug" / "k-analysis.py").write_text(ours)
    golden = tmp_path / "golden.txt"
    golden.write_text("def k():\n    # Domain (ω.D) = [ 256]\n    # f.py:3:4:(s10):\n"
                      "    # New VisRecord:\n    pass\n")
    adapter._calls.clear()
    assert not adapter.RemarkGolden(tmp_path, golden) == ours
    (call,) = adapter._calls
    assert call["verdict"] == "unsupported" and call["proc"] == "k-analysis.py"
    assert call["message"].startswith("not supported by spork-verify: remark `analysis` vs "
                                      "upstream's golden, byte for byte: 1/2 of our lines are "
                                      "in it; it also holds VisRecord traces, stmt ids (s40), "
                                      "its printer's layout (k-analysis.py: ")
    kind, why = conf.classify({"outcome": "failed", "longrepr": "E   AssertionError",
                               "calls": [call]})
    assert kind == "unsupported" and why == call["message"][:150]
    # the same text: equal; a string that is no remark file written: not equal, nothing noted
    golden.write_text(ours)
    assert adapter.RemarkGolden(tmp_path, golden) == ours
    assert not adapter.RemarkGolden(tmp_path, golden) == "int main() {}"
    assert len(adapter._calls) == 1
    adapter._calls.clear()
