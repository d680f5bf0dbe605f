"""Leave a SARIF file behind when spork-verify ended without writing its report.

`python3 .ci/usage_sarif.py SARIF EXIT_CODE STDERR_FILE [PATH]`, run by the GitHub Action
(`action.yml`) after spork-verify. A run that refused its command line (exit 2: a bad option, no
PATH) or could not be installed writes no report; code scanning would then show nothing at all,
as if every kernel were fine. This writes a SARIF 2.1.0 file with one error result (rule
`ERR-USAGE`) saying so, located at PATH (the first kernel path given). A SARIF file spork-verify
did write is left as it is. Standard library only: it runs when spork-verify is not installed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/" \
    "sarif-schema-2.1.0.json"
KEEP_CHARS = 4000  # of spork-verify's stderr, the end (where its error is)


def has_report(sarif: Path) -> bool:
    try:
        doc = json.loads(sarif.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(doc, dict) and isinstance(doc.get("runs"), list) and bool(doc["runs"])


def usage_document(exit_code: str, stderr: str, path: str) -> dict[str, object]:
    said = stderr.strip()[-KEEP_CHARS:] or "(nothing on stderr)"
    text = f"spork-verify ended with exit code {exit_code} before writing its report, so no " \
        f"kernel was verified: {said}"
    return {"$schema": SCHEMA, "version": "2.1.0", "runs": [{
        "tool": {"driver": {"name": "spork-verify", "rules": [{
            "id": "ERR-USAGE", "shortDescription": {"text": "spork-verify did not run: a "
                                                             "usage error or a failed install"},
            "help": {"text": "Fix the action's inputs (paths, args, ref) as the message says; "
                             "spork-verify's exit codes are listed in specs/cli.md (CLI-1)."}}]}},
        "invocations": [{"executionSuccessful": False, "exitCode": int(exit_code)
                         if exit_code.lstrip("-").isdigit() else 2}],
        "results": [{"ruleId": "ERR-USAGE", "ruleIndex": 0, "level": "error",
                     "message": {"text": text},
                     "locations": [{"physicalLocation": {"artifactLocation": {"uri": path}}}]}],
    }]}


def main(argv: list[str]) -> int:
    sarif, exit_code, stderr_file = Path(argv[0]), argv[1], Path(argv[2])
    path = argv[3] if len(argv) > 3 and argv[3] else "."
    if has_report(sarif):
        return 0
    try:
        stderr = stderr_file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        stderr = ""
    sarif.parent.mkdir(parents=True, exist_ok=True)
    sarif.write_text(json.dumps(usage_document(exit_code, stderr, path), indent=2) + "\n",
                     encoding="utf-8")
    print(f"spork-verify wrote no report (exit code {exit_code}); {sarif} holds one result "
          "saying so", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
