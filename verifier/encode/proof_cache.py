"""On-disk proof cache: solver answers keyed by the query's text, solver version and budget.

An entry is a small JSON file named by `Query.key` (sha256 of the canonical SMT-LIB2 text, the
solver name and version, the rlimit, the seed and the solve mode), so a hit returns exactly
what `solver.solve` would compute (D3, specs/verification.md). Writes go to a temporary file in
the same directory, then `os.replace`: concurrent runs see a whole entry or none. An entry that
cannot be read, does not parse, names another key or fails its checksum is ignored (and
recomputed), never trusted. Answers stopped by the wall-clock safety net are never stored.

Location: $SPORK_VERIFY_CACHE_DIR, else $XDG_CACHE_HOME/spork-verify,
else ~/.cache/spork-verify (specs/cli.md, CLI-7).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from verifier.encode.solver import Answer, Status

FORMAT = 1  # bump when the entry layout changes: older entries are then ignored
ENV_DIR = "SPORK_VERIFY_CACHE_DIR"


def default_dir(environ: Mapping[str, str] = os.environ) -> Path:
    if environ.get(ENV_DIR):
        return Path(environ[ENV_DIR])
    base = environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "spork-verify"


def _payload(key: str, answer: Answer) -> dict:
    return {"format": FORMAT, "key": key, "status": answer.status.value,
            "reason": answer.reason, "constants": dict(answer.constants),
            "rlimit": answer.rlimit, "stopped_by": answer.stopped_by}


def _checksum(payload: dict) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


class ProofCache:
    """One cache directory (created on first write)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.hits = 0
        self.misses = 0

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> Answer | None:
        try:
            data = json.loads(self._path(key).read_text())
            payload = data["payload"]
            ok = isinstance(payload, dict) and payload.get("format") == FORMAT and \
                payload.get("key") == key and data.get("checksum") == _checksum(payload)
            answer = _answer(payload) if ok else None
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            answer = None
        if answer is None:
            self.misses += 1
        else:
            self.hits += 1
        return answer

    def put(self, key: str, answer: Answer) -> None:
        if not answer.deterministic:
            return
        payload = _payload(key, answer)
        text = json.dumps({"payload": payload, "checksum": _checksum(payload)}, sort_keys=True)
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
            try:
                with os.fdopen(fd, "w") as f:
                    f.write(text)
                os.replace(tmp, path)
            except BaseException:
                os.unlink(tmp)
                raise
        except OSError:
            pass  # a cache that cannot be written only costs time


def _answer(payload: dict) -> Answer | None:
    status = Status(payload["status"])
    constants = payload["constants"]
    if not (isinstance(constants, dict) and all(isinstance(k, str) and type(v) is int
                                                for k, v in constants.items())):
        return None
    rlimit, stopped = payload["rlimit"], payload["stopped_by"]
    if type(rlimit) is not int or stopped not in ("", "rlimit") or \
            not isinstance(payload["reason"], str):
        return None
    if status is not Status.candidate and constants:
        return None
    return Answer(status, payload["reason"], constants, rlimit, stopped)
