"""Exact verdicts and independent checks at the command line: `vacuous` (VAC-1, VAC-2), the
concrete mode's `no-hazard-at-sizes` and its refusals, `--smt2 DIR` and `--recheck cvc5`
(specs/cli.md CLI-1, CLI-2, CLI-10; specs/verification.md)."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest
import z3

from verifier.cli import main
from verifier.encode.recheck import RecheckSession
from verifier.results import Recheck

from conftest import EXAMPLES, PROGRAMS

SAXPY = EXAMPLES / "saxpy.py"
HAS_CVC5 = importlib.util.find_spec("cvc5") is not None


def run(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.rule("SEM-1.1")
def test_vacuous_procs_exit_3_located_never_proved(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--format", "json", PROGRAMS / "vacuous.py")
    assert code == 3
    verdicts = {r["proc"]: r for r in json.loads(out)["results"]}
    assert verdicts.pop("one_instance_is_enough")["verdict"] == "proved"
    for name, r in verdicts.items():
        assert r["verdict"] == "vacuous" and r["certificate"] is None, name
        (finding,) = r["findings"]
        assert finding["code"] == "ERR-V12" and finding["location"]["line"] > 0, name
    assert verdicts["asserts_contradict"]["findings"][0]["location"]["line"] == 23


@pytest.mark.rule("LANG-2.5")
@pytest.mark.parametrize("sizes, line, words", [
    ("n=100", 8, "violates this assert"),  # saxpy asserts n % 256 == 0
    ("n=-256", 7, "at least 0"),
    ("m=4", 7, "not a size argument"),
])
def test_sizes_outside_the_asserts_are_refused(capsys: pytest.CaptureFixture[str],
                                               sizes: str, line: int, words: str) -> None:
    code, out, _ = run(capsys, "--sizes", sizes, SAXPY)
    assert code == 2 and "PROVED" not in out and "NO HAZARD" not in out
    assert re.search(rf"saxpy\.py:{line}:\d+: .*{words}", out), out


def test_concrete_run_is_not_called_proved(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--sizes", "n=512", SAXPY)
    assert code == 0 and "saxpy: NO HAZARD at n=512" in out and "not a proof" in out
    assert "PROVED" not in out
    code, out, _ = run(capsys, "--format", "json", "--sizes", "n=512", SAXPY)
    (r,) = json.loads(out)["results"]
    assert code == 0 and r["verdict"] == "no-hazard-at-sizes" and r["sizes"] == {"n": 512}


def test_smt2_writes_every_query_as_hashed(capsys: pytest.CaptureFixture[str],
                                           tmp_path: Path) -> None:
    code, out, _ = run(capsys, "--format", "json", "--smt2", tmp_path / "q", SAXPY)
    (r,) = json.loads(out)["results"]
    files = sorted((tmp_path / "q" / "saxpy").glob("*.smt2"))
    solved = [o for o in r["obligations"] if not o.get("discharged_by")]  # PR-*: no query
    assert code == 0 and len(files) == len(solved) > 0
    hashes = {o["id"]: o["query_hash"] for o in solved}
    for path in files:
        text = path.read_text()
        ob_id = re.search(r"^;; obligation (\S+) ", text, re.M).group(1)  # type: ignore[union-attr]
        assert f"query hash {hashes[ob_id]}" in text
        s = z3.Solver()
        s.from_string(text)
        assert s.check() == z3.unsat, path.name  # the text is the proved query


@pytest.mark.parametrize("argv, words", [
    (["--smt2", SAXPY], "is not a folder"),
    (["--smt2", "q", "--sizes", "n=256"], "--sizes runs the concrete machine"),
    (["--recheck", "z3"], "invalid choice"),
])
def test_smt2_and_recheck_misuse_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                         argv: list[object], words: str) -> None:
    code, _, err = run(capsys, SAXPY, *[tmp_path / a if a == "q" else a for a in argv])
    assert code == 2 and words in err


def test_recheck_without_cvc5_is_a_usage_error(capsys: pytest.CaptureFixture[str],
                                               tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "fake" / "cvc5"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('no cvc5 here')\n")
    monkeypatch.setenv("PYTHONPATH", str(fake.parent))
    code, out, err = run(capsys, "--recheck", "cvc5", SAXPY)
    assert code == 2 and "cvc5 is not installed" in err and "PROVED" not in out
    assert "pip install -e '.[cvc5]'" in err  # a command that works: no index has spork-verify


@pytest.mark.skipif(not HAS_CVC5, reason="cvc5 not installed (pip install -e '.[cvc5]')")
def test_recheck_cvc5_agrees_on_every_proved_obligation(capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    code, out, _ = run(capsys, "--format", "json", "--recheck", "cvc5", SAXPY,
                       EXAMPLES / "smem_exchange_bug_nofence.py")
    assert code == 1
    saxpy, bug = json.loads(out)["results"]
    assert saxpy["verdict"] == "proved"
    solved = [o for o in saxpy["obligations"] if not o.get("discharged_by")]  # PR-*: no query
    answers = [o["recheck"] for o in solved]
    assert len(answers) == len(solved) > 0
    assert all(a["answer"] == "unsat" and a["solver"].startswith("cvc5-") for a in answers)
    # refuted obligations are replayed on the machine, not re-decided
    assert all("recheck" not in o for o in bug["obligations"] if o["status"] == "refuted")


@pytest.mark.rule("SEM-1.1")
def test_a_disagreement_is_an_internal_error(capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A second solver that finds a proved query satisfiable: not proved, exit 4, ERR-V13."""
    monkeypatch.setattr(RecheckSession, "_start", lambda self: setattr(self, "name", "fake-1"))
    monkeypatch.setattr(RecheckSession, "_stop", lambda self: None)
    monkeypatch.setattr(RecheckSession, "decide",
                        lambda self, text: Recheck("fake-1", "sat", "", 0.0))
    code, out, _ = run(capsys, "--recheck", "cvc5", SAXPY)
    assert code == 4 and "PROVED" not in out and "ERR-V13" in out
    assert "solvers disagree" in out


def test_smt2_write_failure_is_said_and_exits_2(capsys: pytest.CaptureFixture[str],
                                                tmp_path: Path) -> None:
    """A folder that cannot take the files mid-run (here a file where the proc's folder goes):
    the report is complete, stderr says why, exit 2, no traceback."""
    (tmp_path / "q").mkdir()
    (tmp_path / "q" / "saxpy").write_text("in the way")
    code, out, err = run(capsys, "--smt2", tmp_path / "q", SAXPY)
    assert code == 2 and "saxpy: PROVED" in out
    assert "cannot write the queries of saxpy" in err and "Traceback" not in err


def test_check_cert_source_from_the_header(capsys: pytest.CaptureFixture[str],
                                           tmp_path: Path) -> None:
    """Without PATH the source named in the header is read; when it is gone: exit 2, saying
    to give it."""
    source = tmp_path / "saxpy.py"
    source.write_text(SAXPY.read_text())
    code, _, _ = run(capsys, "--emit-cuda", tmp_path / "cu", source)
    cu = tmp_path / "cu" / "saxpy.cu"
    assert code == 0 and cu.is_file()
    code, out, _ = run(capsys, "--check-cert", cu)
    assert code == 0 and "matches" in out, out
    source.unlink()
    code, _, err = run(capsys, "--check-cert", cu)
    assert code == 2 and "is not a file here" in err and "--check-cert FILE.cu PATH" in err


def test_proc_verdict_fails_closed_on_any_status_but_proved() -> None:
    """Only all-proved obligations make a proc proved; an unsupported or unknown obligation
    (or one of a status added later) never does (specs/verification.md, line 3)."""
    from verifier.encode.verify import proc_verdict
    from verifier.results import ObligationStatus as S, Verdict

    assert proc_verdict({S.proved}, False) is Verdict.proved
    assert proc_verdict(set(), False) is Verdict.proved  # no obligation: nothing to discharge
    assert proc_verdict({S.proved, S.unsupported}, False) is Verdict.unsupported
    assert proc_verdict({S.proved, S.unknown}, False) is Verdict.unknown
    assert proc_verdict({S.unknown, S.unsupported}, False) is Verdict.unsupported
    assert proc_verdict({S.proved, S.unknown, S.refuted}, False) is Verdict.refuted
    assert proc_verdict({S.proved}, True) is Verdict.refuted  # a replayed counterexample
