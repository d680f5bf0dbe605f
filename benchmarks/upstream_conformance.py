"""Run upstream Exo-GPU's tests/cuda files, unmodified, against spork-verify (issue 8).

Usage: python3 benchmarks/upstream_conformance.py UPSTREAM_CHECKOUT [TEST_FILE_NAME ...]
       [--timeout S] [--file-timeout S]

Each file runs in its own pytest subprocess with benchmarks/upstream_adapter.py standing in
for upstream's conftest (the files are copied to a scratch folder so upstream's conftest is not
picked up). Every test is classified:
  same        outcome as upstream (accepted, or rejected and the test's key-word asserts pass)
  no-keywords both reject, but our message lacks a key word the test asserts
  stricter    we reject/refute a proc upstream's static compile accepts (reason printed)
  SUSPECT     upstream rejects and we accept: a soundness suspect, listed by name
  unsupported a proc ended unsupported/unknown
  blocked     a missing API (never counted as a rejection)
  gpu-only    the test needs a device
  other       anything else (failure text printed)
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

ROOT = Path(__file__).resolve().parent.parent
KINDS = ("same", "no-keywords", "stricter", "SUSPECT", "unsupported", "blocked", "gpu-only",
         "other")
_API_ERRORS = re.compile(r"^E\s+(AttributeError|ImportError|NameError|TypeError|"
                         r"ModuleNotFoundError)(: .*)?$", re.M)
_ERROR_LINE = re.compile(r"^E\s+(.*)$", re.M)


def classify(rec: dict) -> tuple[str, str]:
    calls, text = rec["calls"], rec["longrepr"]
    verdicts = {c["verdict"] for c in calls}
    if rec["outcome"] == "skipped":
        return ("gpu-only", "") if "GPU-only" in text else ("other", f"skipped: {text[:100]}")
    if verdicts & {"unsupported", "unknown"}:
        why = next(c["message"] for c in calls if c["verdict"] in ("unsupported", "unknown"))
        return "unsupported", why.splitlines()[0][:140] if why else ""
    if rec["outcome"] == "passed":
        return "same", ""
    if "DID NOT RAISE" in text:
        return "SUSPECT", "upstream rejects; spork-verify accepted"
    rejected = verdicts & {"rejected", "refuted"}
    if rejected and "SporkVerifyRejection" in text and "pytest.raises" not in text:
        why = next(c["message"] for c in calls if c["verdict"] in rejected)
        return "stricter", (why.splitlines() or [""])[0][:140]
    if rejected and "AssertionError" in text:
        return "no-keywords", (_ERROR_LINE.findall(text) or [""])[0][:140]
    if rejected:
        why = next(c["message"] for c in calls if c["verdict"] in rejected)
        return "stricter", (why.splitlines() or [""])[0][:140]
    api = _API_ERRORS.findall(text)
    if api:
        return "blocked", "".join(api[-1])[:140]
    return "other", ((_ERROR_LINE.findall(text) or [text[-140:]])[-1])[:140]


def run_file(test: Path, scratch: Path, timeout: float, file_timeout: float) -> list[dict]:
    copy = scratch / test.name
    shutil.copy(test, copy)
    log = scratch / f"{test.stem}.jsonl"
    env = dict(os.environ, SPORK_CONFORMANCE_LOG=str(log), SPORK_CONFORMANCE_TIMEOUT=str(timeout),
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkout")
    ap.add_argument("files", nargs="*", help="test file names under tests/cuda (default: all)")
    ap.add_argument("--timeout", type=float, default=20.0, help="proof timeout per proc (s)")
    ap.add_argument("--file-timeout", type=float, default=1800.0)
    args = ap.parse_args()
    folder = Path(args.checkout) / "tests" / "cuda"
    tests = sorted(folder.glob("test_*.py"))
    if args.files:
        tests = [t for t in tests if t.name in args.files]
    totals: Counter[str] = Counter()
    suspects: list[str] = []
    print(f"load average at start: {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as tmp:
        for test in tests:
            counts: Counter[str] = Counter()
            print(f"\n== {test.name}")
            for rec in run_file(test, Path(tmp), args.timeout, args.file_timeout):
                kind, why = classify(rec)
                counts[kind] += 1
                if kind == "SUSPECT":
                    suspects.append(f"{test.name}::{rec['nodeid'].split('::')[-1]}")
                if kind not in ("same", "gpu-only"):
                    print(f"  {kind:11} {rec['nodeid'].split('::')[-1]}: {why}")
            print("  " + "  ".join(f"{k}={counts[k]}" for k in KINDS))
            totals.update(counts)
    total = sum(totals.values())
    runnable = total - totals["gpu-only"]
    good = totals["same"] + totals["stricter"]
    print("\n== totals: " + "  ".join(f"{k}={totals[k]}" for k in KINDS))
    if runnable:
        print(f"non-GPU tests: {runnable}; same or stricter: {good} ({100 * good / runnable:.1f} %)"
              f"  (stricter reasons above must be checked by hand)")
    print("soundness suspects (upstream rejects, we accept): " + (", ".join(suspects) or "none"))
    print(f"load average at end: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
