"""What the kernel PATH itself can do to the gate (issue 19; specs/cli.md CLI-2, specs/loading.md
LOAD-1): special files are refused by kind before they are opened, every encoding and line ending
Python accepts is read as Python reads it (and what Python refuses is refused, located), source
locations stay right under every line ending, and file names are shown escaped in text while
JSON, SARIF and JUnit keep them."""

from __future__ import annotations

import ast
import codecs
import contextlib
import importlib.util
import json
import os
import signal
import socket
import stat
from pathlib import Path
from typing import Iterator
from urllib.parse import unquote_to_bytes
from xml.dom import minidom

import pytest

from verifier.cli import main
from verifier.diagnostics import RejectedInput
from verifier.load.source import decode_source, python_lines
from verifier.user_files import UnreadableFile, printable, read_user_file

from conftest import EXAMPLES, default_first

BUG = EXAMPLES / "smem_exchange_bug_nofence.py"
BUG_TEXT = BUG.read_text()
BUG_AT = ":15:36:"  # the racing read of tile[255 - t], as the LF file has it
SAXPY_TEXT = (EXAMPLES / "saxpy.py").read_text()


@contextlib.contextmanager
def deadline(seconds: int) -> Iterator[None]:
    """Fail instead of hanging the suite if a read blocks (a FIFO without a writer)."""
    def expire(signum: int, frame: object) -> None:
        raise TimeoutError(f"blocked for {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def run(capsys: pytest.CaptureFixture[str], *args: object, stdout_only: bool = False
        ) -> tuple[int, str]:
    """Exit code, and stdout and stderr together (stdout alone for a document)."""
    with deadline(120):
        code = main([*map(str, args), "--no-progress"])
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err
    return code, out.out if stdout_only else out.out + out.err


# ---------------------------------------------------------------- special files (CLI-2)

def _block_device() -> str | None:
    with contextlib.suppress(OSError):
        for entry in os.scandir("/dev"):
            with contextlib.suppress(OSError):
                if stat.S_ISBLK(entry.stat().st_mode):
                    return entry.path
    return None


def test_fifo_is_refused_without_blocking(capsys: pytest.CaptureFixture[str],
                                          tmp_path: Path) -> None:
    fifo = tmp_path / "kernel.py"
    os.mkfifo(fifo)
    code, text = run(capsys, fifo)
    assert code == 2
    assert f"{fifo}:0:0: static[ERR-P00]: " in text and "is a named pipe (FIFO)" in text
    code, text = run(capsys, "--check-cert", fifo)
    assert code == 2 and f"--check-cert {fifo}: is a named pipe (FIFO)" in text


@pytest.mark.parametrize("device", ["/dev/null", "/dev/zero", "/dev/urandom"])
def test_character_device_is_refused(capsys: pytest.CaptureFixture[str], device: str) -> None:
    if not os.path.exists(device):
        pytest.skip(f"{device} does not exist here")
    code, text = run(capsys, device)
    assert code == 2 and f"{device}:0:0: static[ERR-P00]: " in text
    assert "is a character device, not a regular file" in text


def test_socket_and_block_device_are_refused(capsys: pytest.CaptureFixture[str],
                                             tmp_path: Path) -> None:
    path = tmp_path / "k.py"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        code, text = run(capsys, path)
    assert code == 2 and "is a socket, not a regular file" in text
    device = _block_device()
    if device is not None:
        with pytest.raises(UnreadableFile, match="is a block device"):
            read_user_file(device, 100)


def test_file_swapped_for_a_fifo_after_the_check_is_refused(monkeypatch: pytest.MonkeyPatch,
                                                            tmp_path: Path) -> None:
    """The kind is checked again on the descriptor, opened non-blocking: a file replaced by a
    FIFO between `stat` and `open` neither blocks nor is read."""
    fifo = tmp_path / "k.py"
    os.mkfifo(fifo)
    regular = os.stat(EXAMPLES / "saxpy.py")
    real_stat = os.stat
    monkeypatch.setattr(os, "stat", lambda p, *a, **k: regular if str(p) == str(fifo)
                        else real_stat(p, *a, **k))
    with deadline(30), pytest.raises(UnreadableFile, match="named pipe"):
        read_user_file(str(fifo), 100)


# ---------------------------------------------------------------- encodings and line ends

def _variants() -> dict[str, bytes]:
    lines = BUG_TEXT.split("\n")
    latin = "# r\xe9sum\xe9 \xa9\n"
    return {
        "crlf": BUG_TEXT.replace("\n", "\r\n").encode(),
        "cr_only": BUG_TEXT.replace("\n", "\r").encode(),
        "mixed_ends": "".join(line + ("\r\n", "\r", "\n")[i % 3]
                              for i, line in enumerate(lines[:-1])).encode(),
        "form_feed_lines": BUG_TEXT.replace("\n\n\n@proc", "\n\x0c\n\x0c\n@proc")
                                   .replace("\n            tile: f32", "\n\x0c            tile: f32")
                                   .replace("\n            for t in cuda_threads(0, 256):\n    "
                                            "            y[", "\n\x0c\n            for t in "
                                            "cuda_threads(0, 256):\n                y[")
                                   .encode(),
        "form_feed_before_decorator": BUG_TEXT.replace("\n@proc", "\n\x0c@proc").encode(),
        "separators_in_comment": BUG_TEXT.replace("# Middle fence",
                                                  "# Middle\x85 \u2028 \x1c\x1d\x1e\x0b fence")
                                         .encode(),
        "utf8_bom": codecs.BOM_UTF8 + BUG_TEXT.encode(),
        "bom_and_utf8_cookie": codecs.BOM_UTF8 + b"# -*- coding: utf-8 -*-\n" +
        "\n".join(lines[1:]).encode(),
        "latin1_cookie": ("# -*- coding: latin-1 -*-\n" + latin + "\n".join(lines[2:]))
        .encode("latin-1"),
        "cookie_on_line_2": ("#!/usr/bin/env python3\n# vim: set fileencoding=cp1252 :\n" +
                             "# \u20ac\n" + "\n".join(lines[3:])).encode("cp1252"),
        "euc_jp_cookie": ("# coding: euc-jp\n# \u3042\u3044\n" + "\n".join(lines[2:]))
        .encode("euc-jp"),
    }


ACCEPTED = _variants()


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_python_accepted_file_is_read_as_python_reads_it(name: str) -> None:
    data = ACCEPTED[name]
    ours = decode_source(f"{name}.py", data)
    assert not python_refuses(data)
    assert ast.dump(ast.parse(ours)) == ast.dump(ast.parse(data)), name  # Python's own reading
    extra = 1 if name == "form_feed_lines" else 0  # one form-feed line added in the body
    assert len(python_lines(ours)) == len(python_lines(BUG_TEXT)) + extra, name


@pytest.mark.parametrize("name", ["crlf", "cr_only", "mixed_ends", "form_feed_lines",
                                  "form_feed_before_decorator", "latin1_cookie"])
def test_locations_survive_every_line_ending(capsys: pytest.CaptureFixture[str],
                                             tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.py"
    path.write_bytes(ACCEPTED[name])
    code, text = run(capsys, path)
    extra = 1 if name == "form_feed_lines" else 0  # one more line before the racing read
    assert code == 1, text
    assert f"{path}:{15 + extra}:36: RAW[ERR-V01]: RAW HAZARD @ tile[255]" in text, text
    assert f"{15 + extra:8d} |                 y[256 * blk + t] = tile[255 - t] * 2.0" in text


def test_columns_count_characters_not_bytes(capsys: pytest.CaptureFixture[str],
                                            tmp_path: Path) -> None:
    path = tmp_path / "wide.py"
    path.write_text(BUG_TEXT.replace("y: f32[n]", "\u00ff\u00ff: f32[n]")
                    .replace("y[256 * blk + t] = tile", "\u00ff\u00ff[256 * blk + t] = tile"))
    code, text = run(capsys, path)
    assert code == 1 and f"{path}:15:37: RAW[ERR-V01]" in text, text  # ÿÿ: 2 chars, 4 bytes


def python_refuses(data: bytes) -> bool:
    """Whether `python FILE` would refuse the bytes: its reader decodes the whole file strictly
    (as `importlib.util.decode_source` does; `compile(bytes)` alone lets bad bytes in comments
    through), then compiles."""
    try:
        compile(importlib.util.decode_source(data), "<file>", "exec")
    except (SyntaxError, UnicodeDecodeError, LookupError):
        return True
    return False


# (name, bytes, words of the message, line:col)
REFUSED = [
    ("unknown_encoding", b"# -*- coding: klingon -*-\n" + SAXPY_TEXT.encode(),
     "unknown encoding: klingon", "1:1"),
    ("unknown_encoding_line_2", b"#!/usr/bin/python\n# coding=klingon\n" + SAXPY_TEXT.encode(),
     "unknown encoding: klingon", "2:1"),
    ("not_a_text_encoding", b"# coding: rot13\n" + SAXPY_TEXT.encode(),
     "'rot13', which is not a text encoding", "1:1"),
    ("bom_with_latin1_cookie", codecs.BOM_UTF8 + b"# coding: latin-1\n" + SAXPY_TEXT.encode(),
     "byte-order mark but its coding declaration names another", "1:1"),
    ("cookie_on_line_3_is_ignored", b"#\n#\n# coding: latin-1\n# caf\xe9\n" +
     SAXPY_TEXT.encode(), "not UTF-8 text (byte 0xe9", "4:6"),
    ("undecodable_in_declared_encoding", b"# coding: ascii\n# caf\xc3\xa9\n" +
     SAXPY_TEXT.encode(), "not ascii (its coding declaration) text (byte 0xc3", "2:6"),
    ("undecodable_after_cr_only_lines", b"x = 1\ry = 2\r# \xff\r", "byte 0xff", "3:3"),
    ("utf16_cookie", b"# coding: utf-16\nx = 1\n", "not utf-16 (its coding declaration) text",
     ""),
    ("utf32_bom", SAXPY_TEXT.encode("utf-32"), "UTF-32-encoded (byte-order mark)", "1:1"),
    ("nul_after_cr", b"x = 1\r\x00\r", "NUL character", "2:1"),
]


@pytest.mark.parametrize("name,data,words,where", REFUSED, ids=[r[0] for r in REFUSED])
def test_what_python_refuses_is_refused_located(capsys: pytest.CaptureFixture[str],
                                                tmp_path: Path, name: str, data: bytes,
                                                words: str, where: str) -> None:
    assert python_refuses(data)
    path = tmp_path / f"{name}.py"
    path.write_bytes(data)
    code, text = run(capsys, path)
    assert code == 2 and words in text, text
    assert f"{path}:{where}: static[ERR-P00]: " in text if where else f"{path}:" in text
    assert "PROVED" not in text


def test_decoding_raises_located_errors_only() -> None:
    for name, data, _, _ in REFUSED:
        with pytest.raises(RejectedInput) as caught:
            decode_source(name, data)
        assert caught.value.code == "ERR-P00" and caught.value.rule == "LOAD-1"


# ---------------------------------------------------------------- file names in the output

NAMES = {"esc": "esc\x1b[31mred.py", "newline": "two\nlines.py", "bidi": "rlo\u202egnp.py",
         "not_utf8": os.fsdecode(b"bad\xffname.py"), "backslash": "back\\x1b.py"}
SHOWN = {"esc": "esc\\x1b[31mred.py", "newline": "two\\x0alines.py", "bidi": "rlo\\u202egnp.py",
         "not_utf8": "bad\\xffname.py", "backslash": "back\\\\x1b.py"}


@pytest.mark.parametrize("key", default_first([(k,) for k in sorted(NAMES)], keep=2))
def test_names_are_escaped_in_text_and_kept_in_documents(capsys: pytest.CaptureFixture[str],
                                                         tmp_path: Path, key: str) -> None:
    path = tmp_path / NAMES[key]
    path.write_text(BUG_TEXT)
    code, text = run(capsys, path)
    shown = printable(str(path))
    assert code == 1 and shown.endswith(SHOWN[key])
    assert f"{shown}: smem_exchange_bug_nofence: REFUTED" in text
    assert f"{shown}{BUG_AT} RAW[ERR-V01]" in text
    assert "\x1b" not in text and "\u202e" not in text and "\udcff" not in text

    code, text = run(capsys, path, "--format", "json", stdout_only=True)
    assert code == 1 and json.loads(text)["results"][0]["file"] == str(path)

    code, text = run(capsys, path, "--format", "sarif", stdout_only=True)
    sarif = json.loads(text)
    uri = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"][
        "artifactLocation"]["uri"]
    assert code == 1 and unquote_to_bytes(uri.removeprefix("file://")) == os.fsencode(path)
    assert all(c.isascii() and c.isprintable() for c in uri)

    code, text = run(capsys, path, "--format", "junit", stdout_only=True)
    assert code == 1
    minidom.parseString(text.encode("utf-8", errors="surrogateescape"))  # well-formed XML
