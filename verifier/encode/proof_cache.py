"""On-disk proof cache: solver answers keyed by the query's text, solver version and budget.

An entry is a small JSON file named by `Query.key` (sha256 of the canonical SMT-LIB2 text, the
solver name and version, the rlimit, the seed and the solve mode), so a hit returns exactly
what `solver.solve` would compute (D3, specs/verification.md). Writes go to a temporary file in
the same directory, then `os.replace`: concurrent runs see a whole entry or none. An entry that
cannot be read, does not parse, names another key or fails its MAC is ignored (and
recomputed), never trusted. Answers stopped by the wall-clock safety net are never stored.

Each entry carries an HMAC-SHA256 of its payload under the user's cache key (SEC-7): the cache
folder is untrusted (anything may write there, e.g. a CI cache restored from another branch),
and only a writer holding the key makes entries that are read back. The key is 32 random bytes
in a file of its own, outside the cache folder (so a shared cache never carries it), created
0600 in a 0700 folder, hidden from kernel files while they load (SEC-3).

Location: $SPORK_VERIFY_CACHE_DIR, else $XDG_CACHE_HOME/spork-verify,
else ~/.cache/spork-verify (specs/cli.md, CLI-7); the key: $SPORK_VERIFY_KEY_FILE, else
$XDG_STATE_HOME/spork-verify/cache.key, else ~/.local/state/spork-verify/cache.key.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import stat
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from verifier.locations import ENV_CACHE_DIR, cache_dir, key_file

if TYPE_CHECKING:
    from verifier.encode.solver import Answer

FORMAT = 2  # bump when the entry layout changes: older entries are then ignored (2: the MAC)
ENV_DIR = ENV_CACHE_DIR
KEY_BYTES = 32
default_dir = cache_dir
default_key_file = key_file


class KeyUnavailable(Exception):
    """The cache key cannot be read or made safely (a file others may read, a wrong owner, a
    folder that cannot be written): the run goes on without the disk cache (SEC-7)."""


def _read_key(path: Path) -> bytes | None:
    """The key in `path`, or None when there is none yet; KeyUnavailable when the file is not
    one only this user can read and write."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise KeyUnavailable(f"{path}: {e.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or \
                info.st_mode & 0o077:
            raise KeyUnavailable(f"{path} must be a regular file of this user that no one "
                                 "else can read or write (chmod 600)")
        data = os.read(fd, KEY_BYTES + 1)
    finally:
        os.close(fd)
    return data


def load_key(path: Path) -> bytes:
    """The cache key in `path`, made on first use (32 random bytes, 0600 in a 0700 folder;
    written beside it and linked into place, so concurrent runs agree on one key)."""
    for _ in range(50):
        data = _read_key(path)
        if data is not None and len(data) == KEY_BYTES:
            return data
        if data is not None:  # another run is writing it (never seen with link, but cheap)
            time.sleep(0.02)
            continue
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".key-")
            try:
                os.write(fd, secrets.token_bytes(KEY_BYTES))
                os.close(fd)
                os.link(tmp, path)
            except FileExistsError:
                pass  # another run made it first: read theirs
            finally:
                os.unlink(tmp)
        except OSError as e:
            raise KeyUnavailable(f"cannot make the cache key {path}: {e.strerror}") from None
    raise KeyUnavailable(f"{path} does not hold a key of {KEY_BYTES} bytes")


def _payload(key: str, answer: Answer) -> dict:
    return {"format": FORMAT, "key": key, "status": answer.status.value,
            "reason": answer.reason, "constants": dict(answer.constants),
            "rlimit": answer.rlimit, "stopped_by": answer.stopped_by}


class ProofCache:
    """One cache directory (created on first write), its entries authenticated with `key`
    (default: the user's key file, made on first use)."""

    def __init__(self, root: Path, key: bytes | None = None) -> None:
        self.root = Path(root)
        self.key = key if key is not None else load_key(default_key_file())
        self.hits = 0
        self.misses = 0

    def _mac(self, payload: dict) -> str:
        text = json.dumps(payload, sort_keys=True).encode()
        return hmac.new(self.key, text, hashlib.sha256).hexdigest()

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> Answer | None:
        try:
            data = json.loads(self._path(key).read_text())
            payload = data["payload"]
            mac = data["mac"]
            ok = isinstance(payload, dict) and isinstance(mac, str) and \
                hmac.compare_digest(mac, self._mac(payload)) and \
                payload.get("format") == FORMAT and payload.get("key") == key
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
        text = json.dumps({"payload": payload, "mac": self._mac(payload)}, sort_keys=True)
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
    from verifier.encode.solver import Answer, Status  # z3: not needed to open the cache

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
