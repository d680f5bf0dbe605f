"""The file's own `p.sync_check(...)` calls (specs/loading.md SYNC-1..7): recorded while the
file loads, answered after the proofs by the proof, a proof at the call's sizes, or the
concrete machine run to the end; never claimed answered before."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from verifier.cli import exit_code, main
from verifier.cli_sync import _with
from verifier.diagnostics import SrcLoc
from verifier.encode.verify import proved_before
from verifier.load.load_isolated import load_isolated
from verifier.report.json_in import results_from_json
from verifier.results import (
    Finding, FindingKind, ObligationResult, ObligationStatus, ProcResult, SyncCheckResult,
    SyncCheckStatus, Verdict)

from conftest import EXAMPLES, ROOT

SCHEMA = json.loads((ROOT / "docs" / "json-schema.json").read_text())

HEAD = """from __future__ import annotations
from exo import *
from exo.platforms.cuda import *

"""

# every task writes x[0:256]: a WAW between tasks once there are two (n >= 512), none at 256
EVERY_TASK = HEAD + """@proc
def every_task(n: size, x: f32[n] @ CudaGmemLinear):
    assert n % 256 == 0
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, n / 256):
            for t in cuda_threads(0, 256):
                x[t] = 1.0
"""
EVERY_TASK_STORE = 11  # the line of the racy store

PROVED = (EXAMPLES / "smem_exchange.py").read_text()  # 19 lines, proc smem_exchange


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "k.py"
    path.write_text(text)
    return path


def _json(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, dict]:
    code = main(["--format", "json", "--no-progress", *map(str, args)])
    doc = json.loads(capsys.readouterr().out)
    jsonschema.Draft7Validator(SCHEMA).validate(doc)
    return code, doc


@pytest.mark.rule("SYNC-1")
def test_the_call_is_recorded_and_returns_none_at_once(tmp_path: Path) -> None:
    path = _write(tmp_path, EVERY_TASK + "import time\nt = time.perf_counter()\n"
                  "r = every_task.sync_check(n=256 * 4096)\n"
                  "print(r, time.perf_counter() - t < 1.0)\n")
    loaded = load_isolated(path)
    assert loaded.error is None
    (call,) = loaded.sync_calls
    assert call.proc is loaded.procs[0] and call.sizes == (("n", 256 * 4096),)
    assert call.loc.line == 14  # a record only: its answer comes after the proofs
    assert loaded.output == "None True\n"  # returned None at once; no note on stderr


@pytest.mark.rule("SYNC-2")
@pytest.mark.rule("API-3")
@pytest.mark.parametrize("call, words", [("n=100", "violate the proc's asserts"),
                                         ("", "no value for n"),
                                         ("n=256, m=1", "m is not a size"),
                                         ("n=256.0", "is not a value of its argument")])
def test_bad_sizes_stop_the_file_at_the_call(tmp_path: Path, call: str, words: str) -> None:
    path = _write(tmp_path, EVERY_TASK + f"every_task.sync_check({call})\nprint('went on')\n")
    loaded = load_isolated(path)
    err = loaded.error
    assert err is not None and words in err.message and err.rule == "API-3"
    assert err.proc == "every_task" and err.loc.line == 12 and "went on" not in loaded.output


@pytest.mark.rule("SYNC-4")
def test_a_proved_proc_covers_the_call_with_its_certificate(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, PROVED + "smem_exchange.sync_check(n=256 * 1024)\n")
    code, doc = _json(capsys, path)
    (res,) = doc["results"]
    (sc,) = res["sync_checks"]
    assert code == 0 and res["verdict"] == "proved"
    assert sc["status"] == "covered" and sc["settled_by"] == "proof"
    assert sc["certificate"] == res["certificate"] and sc["sizes"] == {"n": 262144}
    assert sc["location"]["line"] == 20 and sc["finding"] is None
    assert "spork-verify:" not in res["load_output"]  # nothing claimed while loading


@pytest.mark.rule("SYNC-5")
def test_a_refuted_proc_is_proved_again_at_the_call_sizes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, EVERY_TASK + "every_task.sync_check(n=256)\n"
                  "every_task.sync_check(n=1024)\n")
    code, doc = _json(capsys, path)
    (res,) = doc["results"]
    fine, racy = res["sync_checks"]
    assert code == 1 and res["verdict"] == "refuted"
    assert fine["status"] == "covered" and fine["settled_by"] == "proof-at-sizes"
    assert fine["certificate"] and fine["certificate"] != res["certificate"]
    assert "taken from the proof for all sizes" in fine["message"]
    assert racy["status"] == "hazard" and racy["settled_by"] == "proof-at-sizes"
    f = racy["finding"]
    assert f["kind"] == "WAW" and f["variable"] == "x"
    assert f["location"]["line"] == EVERY_TASK_STORE
    assert f["counterexample"]["sizes"] == {"n": 1024} and f["counterexample"]["replayed"]


@pytest.mark.rule("SYNC-3")
def test_a_call_the_file_catches_runs_at_once(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, EVERY_TASK + "try:\n    every_task.sync_check(n=512)\n"
                  "except Exception as e:\n    print('caught', type(e).__name__)\n"
                  "with open(__file__) as f:\n    every_task.sync_check(n=256)\n")
    loaded = load_isolated(path)
    assert loaded.error is None and loaded.output == "caught RejectedInput\n"
    racy, fine = loaded.sync_calls
    assert (racy.loc.line, fine.loc.line) == (13, 17)
    code, doc = _json(capsys, path)
    racy_json, fine_json = doc["results"][0]["sync_checks"]
    # answered again by the verifier, never by the file's own process (SEC-1)
    assert code == 1 and racy_json["status"] == "hazard"
    assert racy_json["settled_by"] == "proof-at-sizes"
    assert racy_json["finding"]["location"]["line"] == EVERY_TASK_STORE
    assert racy_json["finding"]["counterexample"]["sizes"] == {"n": 512}
    assert fine_json["status"] == "covered" and fine_json["settled_by"] == "proof-at-sizes"


@pytest.mark.rule("SYNC-6")
@pytest.mark.rule("SYNC-7")
def test_an_unbound_proc_is_answered_by_the_machine_under_the_first_result(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, PROVED + EVERY_TASK.removeprefix(HEAD).replace(
        "@proc\ndef every_task", "def make():\n  @proc\n  def every_task").replace(
        "\n    ", "\n      ") + "  every_task.sync_check(n=512)\nmake()\n")
    code, doc = _json(capsys, path)
    (res,) = doc["results"]
    (sc,) = res["sync_checks"]
    assert res["proc"] == "smem_exchange" and sc["proc"] == "every_task"
    assert sc["status"] == "hazard" and sc["settled_by"] == "machine"
    assert res["verdict"] == "proved" and code == 1  # a hazard: exit 1 (CLI-1)
    code, doc = _json(capsys, path, "--proc", "smem_exchange")  # every_task is left out by name
    assert code == 0 and "sync_checks" not in doc["results"][0]


@pytest.mark.rule("SYNC-7")
def test_a_proc_left_out_by_proc_is_not_answered(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, PROVED + EVERY_TASK.removeprefix(HEAD) +
                  "every_task.sync_check(n=1024)\n")
    code, doc = _json(capsys, path, "--proc", "smem_exchange")
    assert code == 0 and "sync_checks" not in doc["results"][0]


@pytest.mark.rule("SYNC-4")
@pytest.mark.rule("CLI-11")
def test_assumed_values_cover_only_calls_with_them(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, EVERY_TASK + "every_task.sync_check(n=256)\n"
                  "every_task.sync_check(n=512)\n")
    code, doc = _json(capsys, path, "--assume", "n=256")
    (res,) = doc["results"]
    inside, outside = res["sync_checks"]
    assert res["verdict"] == "proved" and inside["settled_by"] == "proof"
    assert outside["status"] == "hazard" and outside["settled_by"] == "proof-at-sizes"
    assert code == 1


@pytest.mark.rule("SYNC-6")
@pytest.mark.rule("LANG-6.3")
def test_per_cta_smem_in_a_cluster_is_not_run(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    from test_upstream_style import PER_CTA_SMEM

    path = _write(tmp_path, PER_CTA_SMEM + "\nper_cta.sync_check()\n")
    code, doc = _json(capsys, path)
    (res,) = doc["results"]
    (sc,) = res["sync_checks"]
    assert res["verdict"] == "unsupported" and code == 3
    assert sc["status"] == "not-run" and "cluster" in sc["message"]


@pytest.mark.rule("SYNC-7")
def test_text_report_says_how_each_call_was_answered(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, EVERY_TASK + "every_task.sync_check(n=256)\n"
                  "every_task.sync_check(n=1024)\n")
    assert main([str(path), "--no-progress"]) == 1
    out = capsys.readouterr().out
    assert f"{path}:12:1: every_task.sync_check(n=256): covered: proved at these sizes" in out
    assert f"{path}:13:1: every_task.sync_check(n=1024): HAZARD: at {path}:11:" in out
    assert "[a proof at these sizes" in out


@pytest.mark.rule("SYNC-7")
def test_sync_checks_round_trip_through_json(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, EVERY_TASK + "every_task.sync_check(n=1024)\n")
    _, doc = _json(capsys, path)
    (back,) = results_from_json(json.dumps(doc))
    (sc,) = back.sync_checks
    assert sc.status is SyncCheckStatus.hazard and sc.finding is not None
    assert sc.finding.counterexample is not None and sc.finding.counterexample.sizes == {"n": 1024}


def _result(verdict: Verdict) -> ProcResult:
    return ProcResult("k.py", "k", verdict, 0.0, loc=SrcLoc("k.py", 1, 1))


def _answer(status: SyncCheckStatus) -> SyncCheckResult:
    finding = Finding(FindingKind.RAW, "RAW HAZARD", "x", SrcLoc("k.py", 9, 5))
    return SyncCheckResult("k", (("n", 512),), SrcLoc("k.py", 20, 1), status, "machine", "at",
                           finding=finding if status is SyncCheckStatus.hazard else None)


@pytest.mark.rule("SYNC-7")
@pytest.mark.parametrize("before, after", [(Verdict.unknown, Verdict.refuted),
                                           (Verdict.unsupported, Verdict.refuted),
                                           (Verdict.refuted, Verdict.refuted)])
def test_a_hazard_refutes_a_proc_its_proof_left_open(before: Verdict, after: Verdict) -> None:
    r = _with(_result(before), _answer(SyncCheckStatus.hazard), own=True)
    assert r.verdict is after and exit_code([r]) == 1
    assert len(r.findings) == (1 if before is not Verdict.refuted else 0)
    other = _with(_result(Verdict.unknown), _answer(SyncCheckStatus.hazard), own=False)
    assert other.verdict is Verdict.unknown and exit_code([other]) == 1  # another proc's
    quiet = _with(_result(Verdict.unknown), _answer(SyncCheckStatus.no_hazard), own=True)
    assert quiet.verdict is Verdict.unknown and exit_code([quiet]) == 3


@pytest.mark.rule("SYNC-5")
def test_nothing_is_taken_from_a_proof_whose_premise_was_not_proved() -> None:
    def ob(id_: str, kind: str, status: ObligationStatus) -> ObligationResult:
        return ObligationResult(id_, "SEM-6.6", kind, status, 0.0)

    proved, unknown = ObligationStatus.proved, ObligationStatus.unknown
    base = [ob("balance:b@3:1", "barrier-count", proved), ob("RAW:x@4:1->5:1", "RAW", unknown)]
    r = ProcResult("k.py", "k", Verdict.unknown, 0.0, tuple(base))
    assert proved_before(r) == {"balance:b@3:1"}
    with_premise = ProcResult("k.py", "k", Verdict.unknown, 0.0,
                              tuple(base + [ob("extent@2:1", "premise", unknown)]))
    assert proved_before(with_premise) == frozenset()


@pytest.mark.rule("SYNC-6")
def test_a_rejected_proc_is_not_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The machine's semantics presumes the static rules: a rejected proc's call names the
    rule and runs nothing (sporkbench's legacy GEMMs: minutes of machine for no answer)."""
    path = _write(tmp_path, EVERY_TASK.replace("x[t] = 1.0", "x[t] = 1.0\n"
                  "            Fence(cuda_in_order, Sm80_cp_async)") +
                  "every_task.sync_check(n=256 * 1024)\n")
    code, doc = _json(capsys, path)
    (res,) = doc["results"]
    (sc,) = res["sync_checks"]
    assert res["verdict"] == "rejected" and code == 2
    assert sc["status"] == "not-run" and "ERR-L02" in sc["message"] and sc["time_s"] < 1


@pytest.mark.rule("SYNC-3", "SEC-1")
def test_the_reply_carries_no_answer_the_file_could_forge() -> None:
    """A call the child ran at once (SYNC-3) comes back as a bare record: the reply has no
    field or class through which the file's own process could state a finding or a verdict."""
    import dataclasses

    from verifier.load.load_protocol import _data_classes
    from verifier.load.sync_record import SyncCall

    assert [f.name for f in dataclasses.fields(SyncCall)] == ["proc", "sizes", "loc"]
    assert not [key for key in _data_classes() if key[0] == "verifier.results"]
