"""Where spork-verify keeps its files between runs (a leaf: any package may import it).

The proof cache folder (specs/cli.md CLI-7) and the key that authenticates its entries
(specs/threat_model.md SEC-7). The key lives outside the cache folder, so that a cache shared
or restored from elsewhere never carries it, and every loading child is denied reading it
(SEC-3).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

ENV_CACHE_DIR = "SPORK_VERIFY_CACHE_DIR"
ENV_KEY_FILE = "SPORK_VERIFY_KEY_FILE"


def cache_dir(environ: Mapping[str, str] = os.environ) -> Path:
    """$SPORK_VERIFY_CACHE_DIR, else $XDG_CACHE_HOME/spork-verify, else ~/.cache/spork-verify."""
    if environ.get(ENV_CACHE_DIR):
        return Path(environ[ENV_CACHE_DIR])
    base = environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "spork-verify"


def key_file(environ: Mapping[str, str] = os.environ) -> Path:
    """$SPORK_VERIFY_KEY_FILE, else $XDG_STATE_HOME/spork-verify/cache.key, else
    ~/.local/state/spork-verify/cache.key."""
    if environ.get(ENV_KEY_FILE):
        return Path(environ[ENV_KEY_FILE])
    base = environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "spork-verify" / "cache.key"
