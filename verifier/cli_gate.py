"""What one run of spork-verify trusts (specs/threat_model.md, specs/cli.md CLI-12).

Reads the command line and how kernel files can be confined on this machine; decides which
proof cache the run reads and writes (`--cache-mode`, `--ci`), whether it may write or accept
certificates, and says on stderr what the machine cannot protect. Kernel files are untrusted
code: without Landlock they run unconfined, so such a run neither reads nor writes the proof
cache and writes or accepts no certificate (SEC-6), and `--ci` refuses to run at all.
Non-goals: the confinement itself (`load/sandbox.py`), the cache's MAC (`encode/proof_cache.py`).
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from pathlib import Path
from typing import Any

import verifier
from verifier.cli_io import UsageError
from verifier.encode.proof_cache import KeyUnavailable, load_key
from verifier.load.load_isolated import isolation
from verifier.locations import cache_dir, key_file
from verifier.results import Isolation

CACHE_MODES = ("user", "private")


def add_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cache-mode", choices=CACHE_MODES, default="user",
                   help="user (default): read and write the on-disk proof cache, each entry "
                   "authenticated with this user's key; private: only answers this run "
                   "computed itself (no disk cache read or written)")
    p.add_argument("--no-cache", action="store_true", help="the same as --cache-mode private")
    p.add_argument("--ci", action="store_true",
                   help="for a CI gate: --cache-mode private, and refuse to run (exit 2) where "
                   "kernel files cannot be confined (no Landlock)")


def cache_mode(args: argparse.Namespace) -> str:
    if getattr(args, "no_cache", False) or getattr(args, "ci", False):
        return "private"
    return str(getattr(args, "cache_mode", "user"))


def cache_options(args: argparse.Namespace) -> dict[str, Any]:
    """`Options` fields of the proof cache: the user's cache with its key, or none (private
    mode, no confinement, or a key that cannot be used). Rules: SEC-6, SEC-7, CLI-12"""
    if cache_mode(args) == "private" or not isolation().confined:
        return {"cache_dir": None, "cache_key": None}
    try:
        key = load_key(key_file())
    except KeyUnavailable:
        return {"cache_dir": None, "cache_key": None}  # said once by `announce`
    return {"cache_dir": cache_dir(), "cache_key": key}


def announce(args: argparse.Namespace) -> Isolation:
    """Before any file loads: refuse `--ci` without confinement (exit 2); say on stderr what
    this machine cannot protect and why the cache is off. Rules: SEC-5, SEC-6, CLI-12"""
    found = isolation()
    if getattr(args, "ci", False) and not found.confined:
        raise UsageError(f"--ci: {found.warning()}; run the gate on such a Linux, or drop --ci")
    if found.warning():
        print(f"spork-verify: warning: {found.warning()}", file=sys.stderr)
    if not found.confined:
        preload_verifier()
    elif cache_mode(args) == "user":
        try:
            load_key(key_file())
        except KeyUnavailable as e:
            print(f"spork-verify: warning: the proof cache is off for this run: {e}",
                  file=sys.stderr)
    return found


def certificates_allowed() -> bool:
    """Whether this run may write (`--emit-cuda`) or accept (`--check-cert`) certificates:
    only when kernel files were confined while they loaded. Rules: SEC-6"""
    return isolation().confined


def preload_verifier() -> None:
    """Import every module of the verifier before an unconfined kernel file runs, so that a
    file rewriting the installed package cannot change what this run computes (only later
    runs: SEC-6 says so)."""
    root = Path(verifier.__file__).parent
    for module in pkgutil.walk_packages([str(root)], prefix="verifier."):
        if module.name.endswith(("exo_gpu_child", "pytest_plugin", "__main__")):
            continue  # another interpreter's script; pytest's, imported by pytest alone
        try:
            importlib.import_module(module.name)
        except ImportError:
            pass  # an optional dependency (cvc5) that is not installed


__all__ = ["CACHE_MODES", "add_options", "announce", "cache_mode", "cache_options",
           "certificates_allowed"]
