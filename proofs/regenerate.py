"""Regenerate the recorded proof reports of the examples and re-check every proof with two
solvers: `python proofs/regenerate.py [--check] [--no-recheck] [examples/NAME.py ...]` (every
example when none is named).

Each `proofs/<example>.json` is spork-verify's JSON report with timings (and the re-check
answers) removed and paths made relative, so a re-run on another machine reproduces it byte
for byte (same solver version); `--check` exits 1 if any recorded report differs.

Unless `--no-recheck`: the run also writes every obligation's SMT-LIB2 query (`--smt2`) and
re-decides each proved one with cvc5 (`--recheck cvc5`, pip install -e '.[cvc5]'); this
script then re-decides each proved obligation's written query with z3 as well, from the text
alone. It prints, per example, the obligations proved, those of them settled without a solver
(`pruned`, PR-* rules: no query to re-decide), and how many of the others each solver re-decided
as unsat (agrees), sat (disagrees) or unknown, merges those rows into `proofs/recheck.txt` (a run
over some examples updates their rows only), and exits 1 on any disagreement.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import z3

ROOT = Path(__file__).resolve().parent.parent
RECHECK = ROOT / "proofs" / "recheck.txt"
Z3_TIMEOUT_MS = 60_000
_OBLIGATION = re.compile(r"^;; obligation (\S+) ", re.M)
COLUMNS = ("example", "obligations", "proved", "pruned", "z3 unsat", "z3 sat", "z3 unknown",
           "cvc5 unsat", "cvc5 sat", "cvc5 unknown")


def run(example: Path, queries: Path | None) -> dict:
    """The example's JSON report; with `queries`, also written there and re-checked by cvc5."""
    extra = ["--smt2", str(queries), "--recheck", "cvc5"] if queries is not None else []
    out = subprocess.run([sys.executable, "-m", "verifier.cli", "--format", "json", *extra,
                          str(example.relative_to(ROOT))], cwd=ROOT, capture_output=True,
                         text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
    if not out.stdout.strip():
        sys.exit(f"{example.name}: no report (exit {out.returncode}): {out.stderr.strip()}")
    return json.loads(out.stdout)


def recorded(doc: dict) -> str:
    """The report as recorded: no timings, no re-check answers."""
    for res in doc["results"]:
        res.pop("time_s", None)
        for ob in res["obligations"]:
            ob.pop("time_s", None)
            ob.pop("recheck", None)
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


def z3_answers(folder: Path) -> dict[tuple[str, str], str]:
    """z3's answer to each written query, re-read from its text: (proc folder, id) -> answer."""
    answers = {}
    for path in sorted(folder.glob("*/*.smt2")):
        text = path.read_text(encoding="utf-8")
        found = _OBLIGATION.search(text)
        if found is None or ";; status proved;" not in text:
            continue
        s = z3.Solver()
        s.set(timeout=Z3_TIMEOUT_MS)
        s.from_string(text)
        answers[(path.parent.name, found.group(1))] = str(s.check())
    return answers


def recheck_row(example: Path, doc: dict, folder: Path) -> list[object]:
    z3s = z3_answers(folder)
    counts = {k: 0 for k in COLUMNS[1:]}
    for res in doc["results"]:
        for ob in res["obligations"]:
            counts["obligations"] += 1
            if ob["status"] != "proved":
                continue
            counts["proved"] += 1
            if ob.get("discharged_by"):  # settled without a solver (PR-*): no query
                counts["pruned"] += 1
                continue
            counts[f"z3 {z3s.get((res['proc'], ob['id']), 'unknown')}"] += 1
            answer = ob.get("recheck", {}).get("answer", "unknown")
            counts[f"cvc5 {answer}"] += 1
    return [example.stem, *counts.values()]


def table(rows: list[list[object]]) -> str:
    totals = ["total", *(sum(int(r[k]) for r in rows) for k in range(1, len(COLUMNS)))]
    body = [list(COLUMNS), *rows, totals]
    widths = [max(len(str(r[k])) for r in body) for k in range(len(COLUMNS))]
    lines = ["  ".join(str(v).rjust(w) if k else str(v).ljust(w)
                       for k, (v, w) in enumerate(zip(r, widths))) for r in body]
    return "\n".join(lines) + "\n"


def recorded_rows() -> dict[str, list[object]]:
    """The rows of proofs/recheck.txt, so a run over some examples updates only theirs."""
    if not RECHECK.exists():
        return {}
    rows = {}
    for line in RECHECK.read_text().splitlines():
        cells = line.split()
        if len(cells) == len(COLUMNS) and cells[0] != "total" and cells[1].isdigit():
            rows[cells[0]] = [cells[0], *map(int, cells[1:])]
    return rows


def write_table(rows: list[list[object]]) -> str:
    """Merge `rows` into proofs/recheck.txt (examples that no longer exist dropped)."""
    merged = recorded_rows()
    merged.update({str(r[0]): r for r in rows})
    stems = {p.stem for p in (ROOT / "examples").glob("*.py")}
    report = table([merged[k] for k in sorted(merged) if k in stems])
    RECHECK.write_text(
        "Every proved obligation of every example, re-decided from its SMT-LIB2 text "
        "(python proofs/regenerate.py):\npruned = proved without a solver (PR-* rules, no query), "
        "sat = a disagreement with the proof, unknown = "
        f"not decided (z3 limit {Z3_TIMEOUT_MS // 1000} s, cvc5 --timeout).\n\n" + report)
    return report


def main() -> int:
    check = "--check" in sys.argv
    recheck = "--no-recheck" not in sys.argv
    named = [Path(a).resolve() for a in sys.argv[1:] if not a.startswith("--")]
    differs, rows = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for example in named or sorted((ROOT / "examples").glob("*.py")):
            folder = Path(tmp) / example.stem if recheck else None
            doc = run(example, folder)
            if folder is not None:
                rows.append(recheck_row(example, doc, folder))
                print("  ".join(map(str, rows[-1])), file=sys.stderr, flush=True)
                if not check:
                    write_table([rows[-1]])  # kept as each example finishes
            target = ROOT / "proofs" / f"{example.stem}.json"
            text = recorded(doc)
            if check:
                if not target.exists() or target.read_text() != text:
                    differs.append(target.name)
            else:
                target.write_text(text)
    for name in differs:
        print(f"differs: {name}")
    disagree = 0
    if rows:
        print(table(rows), end="")
        disagree = sum(int(r[COLUMNS.index("z3 sat")]) + int(r[COLUMNS.index("cvc5 sat")])
                       for r in rows)
    return 1 if differs or disagree else 0


if __name__ == "__main__":
    sys.exit(main())
