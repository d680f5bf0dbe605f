"""Run upstream Exo-GPU's tests/cuda files, unmodified, against spork-verify (issue 8).

Usage: python3 benchmarks/upstream_conformance.py UPSTREAM_CHECKOUT [TEST_FILE_NAME ...]
       [--upstream-python PY] [--timeout S] [--file-timeout S] [--proc-limit S]

Each file runs in its own pytest subprocess with benchmarks/upstream_adapter.py standing in
for upstream's conftest (the files are copied to a scratch folder so upstream's conftest is not
picked up). With --upstream-python (a Python with upstream's exo and pytest installed), the
list of tests comes from upstream's own collection (benchmarks/upstream_collect.py), so a file
spork-verify cannot collect is still counted test by test and device tests are known by their
fixtures, and a test whose procs are built by upstream rewrites spork-verify does not reproduce
(API-2) gets them from upstream: the adapter runs the test's proc construction in that Python
and verifies the procs upstream prints (specs/upstream_api.md SCHED-2). Every test is classified:
  same        outcome as upstream (accepted, or rejected and the test's key-word asserts pass)
  same-ctext  accepted as upstream; the test then reads upstream's generated C text (out of
              scope, not compared)
  same-vacuous accepted as upstream (every static rule holds); the proc accesses no memory
              and has no barrier, so spork-verify's verdict is `vacuous`, not `proved`
  no-keywords both reject, but our message lacks a key word the test asserts
  stricter    we refute a proc upstream's static compile accepts, or reject it by a static
              rule of ours (reason printed; with --upstream-python a refuted proc is rebuilt
              under upstream and its own sync_check run at our counterexample's sizes:
              "agrees" only when upstream reports a hazard of the same kind on the same
              variable, "differs" when it reports another one, "REVIEW" when it passes)
  review      a refutation upstream's own sync_check does not reproduce: it passes at our
              counterexample's sizes (with --upstream-python). A rule of ours upstream lacks,
              or a version difference in the semantics: listed for review, never counted as
              stricter
  version     we reject a construct of this upstream version that spork-verify's front end
              does not read (a parse or load error, ERR-P*): a version difference, never
              counted as stricter
  SUSPECT     upstream rejects and we accept: a soundness suspect, listed by name
  unsupported a proc ended unsupported/unknown (not Hopper)
  hopper      unsupported naming a Hopper construct (TMA, wgmma, clusters, multicast): a
              gap of the Hopper work (any other unsupported step, in an Sm90a test too, is
              `unsupported`, with its reason)
  blocked     a missing API or a file that fails at collection (never counted as a rejection)
  gpu-only    the test needs a device
  self-skip   the test skips itself (upstream's run skips it too); not counted
  other       anything else (failure text printed)
The non-GPU tests are all tests but gpu-only and self-skip; the summary gives the share that
is same or stricter, of them and of them without the Hopper-pending rows.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from harness import load_average

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from verifier.load.load_scheduled import JIT_ENV, build_folder  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
KINDS = ("same", "same-ctext", "same-vacuous", "no-keywords", "stricter", "review", "version",
         "SUSPECT", "unsupported", "hopper", "blocked", "gpu-only", "self-skip", "other")
GPU_FIXTURES = {"compiler_Sm80", "compiler_Sm90a"}
_API_ERRORS = re.compile(r"^E\s+(AttributeError|ImportError|NameError|TypeError|"
                         r"ModuleNotFoundError)(: .*)?$", re.M)
_ERROR_LINE = re.compile(r"^E\s+(.*)$", re.M)
# Constructs of the Hopper issue: their procs end unsupported until it lands.
_HOPPER = re.compile(r"wgmma|TMA|tensor map|multicast|CudaClusterSync|Sm90|Hopper|"
                     r"trailing barrier", re.I)


def _first_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[0][:150]


def _reason(calls: list[dict], verdicts: set[str]) -> str:
    """Why we are stricter: the first rejection or refutation, saying which it is."""
    call = next(c for c in calls if c["verdict"] in verdicts)
    text = _first_line(call["message"])
    if "scheduled_by" in call:  # SCHED-2: built by upstream's rewrites, its printed text
        text += " (in the proc upstream Exo-GPU's own rewrites built, as upstream printed it)"
    if call["verdict"] == "refuted":
        return f"refuted, a hazard upstream's static compile does not check: {text}"
    return f"rejected: {text}"


def _version_difference(calls: list[dict]) -> str:
    """The front-end error of a rejected proc (ERR-P*: the file or the text upstream printed
    does not parse or load under spork-verify, e.g. a keyword or name of a newer upstream):
    a version difference, not a rule of ours that upstream lacks; "" otherwise."""
    for c in calls:
        if c["verdict"] == "rejected" and any(code.startswith("ERR-P")
                                              for code in c.get("codes", ())):
            return f"front end ({', '.join(c['codes'])}): {_first_line(c['message'])}"
    return ""


def classify(rec: dict) -> tuple[str, str]:
    calls, text = rec["calls"], rec["longrepr"]
    verdicts = {c["verdict"] for c in calls}
    if rec["outcome"] == "skipped":
        if "GPU-only" in text:
            return "gpu-only", ""
        return "self-skip", f"skipped: {text[:100]}"
    if verdicts & {"unsupported", "unknown"}:
        why = next(c["message"] for c in calls if c["verdict"] in ("unsupported", "unknown"))
        if _HOPPER.search(why):
            return "hopper", _first_line(why)
        return "unsupported", _first_line(why)
    if rec["outcome"] == "passed" and "vacuous" in verdicts:
        return "same-vacuous", "accepted; no memory access or barrier, so nothing to prove"
    if rec["outcome"] == "passed":
        return "same", ""
    if "CTextOutOfScope" in text and verdicts <= {"proved", "vacuous"}:
        return "same-ctext", "accepted; the test then reads generated C text (not compared)"
    if "DID NOT RAISE" in text:
        return "SUSPECT", "upstream rejects; spork-verify accepted"
    rejected = verdicts & {"rejected", "refuted"}
    version = _version_difference(calls)
    if version and "refuted" not in verdicts and "pytest.raises" not in text:
        return "version", version
    if rejected and "SporkVerifyRejection" in text and "pytest.raises" not in text:
        return "stricter", _reason(calls, rejected)
    if rejected and "AssertionError" in text:
        return "no-keywords", (_ERROR_LINE.findall(text) or [""])[0][:150]
    if rejected:
        return "stricter", _reason(calls, rejected)
    api = _API_ERRORS.findall(text)
    if api:
        return "blocked", "".join(api[-1])[:150]
    return "other", ((_ERROR_LINE.findall(text) or [text[-150:]])[-1])[:150]


def upstream_tests(checkout: Path, python: str) -> dict[str, list[str]]:
    """{file::test: fixtures} from upstream's own collection of tests/cuda."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "tests.json"
        env = dict(os.environ, SPORK_UPSTREAM_TESTS=str(out),
                   PYTHONPATH=str(ROOT / "benchmarks"))
        subprocess.run([python, "-m", "pytest", "tests/cuda", "--collect-only", "-q",
                        "-p", "upstream_collect", "-p", "no:cacheprovider"], cwd=checkout,
                       env=env, capture_output=True, timeout=600)
        if not out.exists():
            raise SystemExit(f"{python} could not collect {checkout}/tests/cuda")
        tests = json.loads(out.read_text())
    return {node.split("/")[-1]: fixtures for node, fixtures in tests.items()}


def run_file(test: Path, scratch: Path, timeout: float, file_timeout: float,
             proc_limit: float = 0.0, upstream_python: str | None = None) -> list[dict]:
    copy = scratch / test.name
    shutil.copy(test, copy)
    log = scratch / f"{test.stem}.jsonl"
    env = dict(os.environ, SPORK_CONFORMANCE_LOG=str(log), SPORK_CONFORMANCE_TIMEOUT=str(timeout),
               SPORK_CONFORMANCE_PROC_LIMIT=str(proc_limit),
               SPORK_UPSTREAM_CHECKOUT=str(test.parents[2]),
               **({"SPORK_CONFORMANCE_EXO_GPU_PYTHON": upstream_python} if upstream_python
                  else {}),
               PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "benchmarks")]))
    cmd = [sys.executable, "-m", "pytest", str(copy), "-q", "-p", "upstream_adapter",
           "--noconftest", "-p", "no:cacheprovider", "--rootdir", str(scratch)]
    try:
        subprocess.run(cmd, cwd=scratch, env=env, capture_output=True, timeout=file_timeout)
    except subprocess.TimeoutExpired:
        print(f"{test.name}: file timed out after {file_timeout:.0f} s; partial results",
              file=sys.stderr)
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def file_rows(test: Path, records: list[dict], expected: dict[str, list[str]] | None
              ) -> list[tuple[str, str, str]]:
    """(test name, kind, reason) for every test of the file: upstream's list when known, so
    a test spork-verify never ran (collection failed) is `blocked`, never dropped."""
    collect_errors = [r["longrepr"] for r in records if r.get("when") == "collect"]
    ran = {r["nodeid"].split("::", 1)[-1]: r for r in records if r.get("when") != "collect"}
    rows: list[tuple[str, str, str]] = []
    names = list(ran)
    if expected is not None:
        names = [n.split("::", 1)[1] for n in expected if n.startswith(test.name + "::")]
    for name in names:
        fixtures = (expected or {}).get(f"{test.name}::{name}", [])
        if GPU_FIXTURES & set(fixtures):
            rows.append((name, "gpu-only", ""))
        elif name in ran:
            rows.append((name, *classify(ran[name])))
        else:
            why = _ERROR_LINE.findall(collect_errors[0]) if collect_errors else []
            rows.append((name, "blocked", "not run: " + (why[-1] if why else
                                                         "file failed at collection")[:140]))
    if expected is None and collect_errors:
        why = _ERROR_LINE.findall(collect_errors[0])
        rows.append(("<collection>", "blocked", "file failed at collection, its tests are not "
                     f"counted (give --upstream-python): {(why or ['?'])[-1][:120]}"))
    return rows


def same_hazard(theirs: dict, ours: dict) -> bool:
    """Upstream's hazard is ours: the same variable, and the same kind, or endgame's
    `free_missing_sync` at the free our WAW/WAR at free(x) names; unequal barrier counts
    (upstream names no variable there) at the same allocation line; endgame's "Arrived twice
    on one-shot arrive barrier @ z[...]" is our SECOND ARRIVE on z (DIAL-10)."""
    if theirs.get("kind") == "barrier-count":
        return ours.get("kind") == "barrier-count" and theirs.get("line") == ours.get("line")
    if theirs.get("variable") != ours.get("variable"):
        return False
    if theirs.get("kind") == "second-arrive":  # DIAL-10: our SECOND ARRIVE finding
        return ours.get("kind") == "barrier-count" and bool(ours.get("second"))
    if theirs.get("kind") == "free_missing_sync":
        return bool(ours.get("free")) and ours.get("kind") in ("WAW", "WAR")
    return theirs.get("kind") == ours.get("kind") and \
        bool(theirs.get("free")) == bool(ours.get("free"))


def upstream_recheck(python: str, copy: Path, rec: dict) -> str:
    """For a row where we refute a proc upstream's compile accepts: what upstream's own
    sync_check says of the same proc at our counterexample's sizes, compared by hazard kind
    and variable. Upstream's checker is built once per interpreter in spork-verify's private
    build folder (SCHED-7), not in the scratch folder of each run."""
    call = next((c for c in rec["calls"] if c["verdict"] == "refuted"), None)
    build = call.get("build") if call else None
    if not build or build["mkproc"] == "<lambda>":
        return "upstream's sync_check not re-run (proc not rebuildable)"
    sizes = call.get("sizes", {})
    folder = build_folder(python)
    env = {**os.environ, JIT_ENV: str(folder / "jit")}
    env.pop("PYTHONPATH", None)
    try:
        r = subprocess.run([python, str(ROOT / "benchmarks" / "upstream_recheck.py"), str(copy),
                            build["mkproc"], json.dumps(build["kwargs"]), json.dumps(sizes)],
                           capture_output=True, text=True, cwd=folder, env=env,
                           timeout=900)
        got = json.loads(r.stdout.strip().splitlines()[-1])
    except (subprocess.TimeoutExpired, IndexError, json.JSONDecodeError):
        return "upstream's sync_check not re-run (failed)"
    at = ", ".join(f"{k}={v}" for k, v in sizes.items()) or "no sizes"
    if got["upstream"] == "raises":
        ours = call.get("hazard", {})
        if same_hazard(got, ours):
            return f"upstream's own sync_check ({at}) agrees: {got['message'][:90]}"
        return (f"upstream's own sync_check ({at}) differs: it reports {got['message'][:90]}, "
                f"we report {ours.get('kind')} on {ours.get('variable')}")
    if got["upstream"] == "cannot check":
        return f"upstream's sync_check cannot check it: {got['message'][:110]}"
    if got["upstream"] == "passes":
        return f"REVIEW: upstream's own sync_check ({at}) passes"
    return f"upstream's sync_check not re-run ({got['message'][:80]})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkout")
    ap.add_argument("files", nargs="*", help="test file names under tests/cuda (default: all)")
    ap.add_argument("--upstream-python", help="a Python with upstream's exo and pytest: its "
                    "collection lists the tests")
    ap.add_argument("--timeout", type=float, default=20.0, help="proof timeout per proc (s)")
    ap.add_argument("--file-timeout", type=float, default=1800.0)
    ap.add_argument("--proc-limit", type=float, default=0.0, help="wall-clock seconds per "
                    "verified proc (0: none); a proc past it is `unknown`")
    args = ap.parse_args()
    folder = Path(args.checkout).resolve() / "tests" / "cuda"
    tests = sorted(folder.glob("test_*.py"))
    if args.files:
        tests = [t for t in tests if t.name in args.files]
    expected = upstream_tests(folder.parents[1], args.upstream_python) \
        if args.upstream_python else None
    totals: Counter[str] = Counter()
    by_kind: dict[str, list[str]] = {k: [] for k in KINDS}
    rechecks: Counter[str] = Counter()  # first word of each re-run's outcome
    print(f"load average at start: {load_average()}")
    if expected is not None:
        print(f"upstream's collection: {len(expected)} tests in tests/cuda")
    with tempfile.TemporaryDirectory() as tmp:
        for test in tests:
            counts: Counter[str] = Counter()
            print(f"\n== {test.name}")
            records = run_file(test, Path(tmp), args.timeout, args.file_timeout,
                               args.proc_limit, args.upstream_python)
            by_name = {r["nodeid"].split("::", 1)[-1]: r for r in records}
            for name, kind, why in file_rows(test, records, expected):
                if kind == "stricter" and why.startswith("refuted") and args.upstream_python:
                    why += "; " + upstream_recheck(args.upstream_python, Path(tmp) / test.name,
                                                   by_name[name])
                    tail = why.rsplit("; ", 1)[1]
                    rechecks["agrees" if " agrees: " in tail else "differs" if
                             " differs: " in tail else "REVIEW" if
                             tail.startswith("REVIEW") else "cannot-check" if
                             "cannot check" in tail else "not re-run"] += 1
                    if tail.startswith("REVIEW"):
                        kind = "review"
                counts[kind] += 1
                by_kind[kind].append(f"{test.name}::{name}")
                if kind not in ("same", "same-ctext", "same-vacuous", "gpu-only"):
                    print(f"  {kind:11} {name}: {why}")
            print("  " + "  ".join(f"{k}={counts[k]}" for k in KINDS))
            totals.update(counts)
    summary(totals, by_kind)
    if rechecks:
        print("refuted-stricter rows re-run under upstream's own sync_check: " +
              ", ".join(f"{k}={v}" for k, v in sorted(rechecks.items())) +
              " (agrees: the same hazard kind on the same variable; differs: another hazard; "
              "REVIEW: upstream's passes at those sizes)")
    print(f"load average at end: {load_average()}")
    return 0


def summary(totals: Counter[str], by_kind: dict[str, list[str]]) -> None:
    total = sum(totals.values())
    runnable = total - totals["gpu-only"] - totals["self-skip"]
    good = totals["same"] + totals["same-ctext"] + totals["same-vacuous"] + totals["stricter"]
    print("\n== totals: " + "  ".join(f"{k}={totals[k]}" for k in KINDS))
    print(f"tests seen: {total}; non-GPU (all but gpu-only and self-skip): {runnable}")
    if runnable:
        print(f"same or stricter: {good} of {runnable} = {100 * good / runnable:.1f} %")
        rest = runnable - totals["hopper"]
        if rest:
            print(f"same or stricter without the {totals['hopper']} Hopper-pending rows: "
                  f"{good} of {rest} = {100 * good / rest:.1f} %")
    print("soundness suspects (upstream rejects, we accept): " +
          (", ".join(by_kind["SUSPECT"]) or "none"))
    print("refutations upstream's own sync_check does not reproduce (review, not counted): " +
          (", ".join(by_kind["review"]) or "none"))
    print("blocked: " + (", ".join(by_kind["blocked"]) or "none"))


if __name__ == "__main__":
    sys.exit(main())
