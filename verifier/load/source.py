"""A kernel file's bytes → the text Python would run (specs/loading.md LOAD-1).

The text is read as the interpreter reads a source file: a UTF-8 byte-order mark, else a PEP 263
coding declaration on line 1 or 2, else UTF-8; `\\r\\n` and a lone `\\r` end lines as `\\n`
does; form feeds and the other characters `str.splitlines` would also split on (`\\x0c`,
`\\x1c`, `\\x85`, U+2028, ...) are not line ends. What Python refuses (an unknown or non-text
encoding, bytes the encoding cannot decode, a NUL, a UTF-16/32 file) is refused here with the
line:column and what to change, so no later stage meets a text Python would not have run.

Non-goals: syntax (the compiler's, `load.run_file`) and what the program means.
"""

from __future__ import annotations

import codecs
import io
import re
import tokenize
from pathlib import Path

from verifier.diagnostics import RejectedInput, SrcLoc
from verifier.user_files import UnreadableFile, read_user_file

MAX_SOURCE_BYTES = 16 << 20

_WIDE_BOMS = ((codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
              (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16"))
_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=]")  # PEP 263, as tokenize matches it


def _refuse(path: str, message: str, line: int = 1, col: int = 1) -> RejectedInput:
    return RejectedInput(message, SrcLoc(path, line, col), code="ERR-P00", rule="LOAD-1")


def read_source(path: str | Path) -> str:
    """The text of a user file as Python would run it; a missing, unreadable or special file
    (FIFO, device, socket, folder), or one Python would not decode, is ERR-P00 (LOAD-1)."""
    name = str(path)
    try:
        data = read_user_file(name, MAX_SOURCE_BYTES)
    except UnreadableFile as e:
        raise RejectedInput(f"{name}: {e}", SrcLoc(name, 0, 0), code="ERR-P00",
                            rule="LOAD-1") from None
    if len(data) > MAX_SOURCE_BYTES:
        raise RejectedInput(f"{name} is larger than {MAX_SOURCE_BYTES >> 20} MiB; a kernel file "
                            "is Python source of a few kilobytes", SrcLoc(name, 0, 0),
                            code="ERR-P00", rule="LOAD-1")
    return decode_source(name, data)


def _cookie_line(data: bytes) -> int:
    """The line (1 or 2) of the coding declaration that named an encoding."""
    first, _, rest = data.partition(b"\n")
    return 1 if _COOKIE.match(first) else 2 if _COOKIE.match(rest.partition(b"\n")[0]) else 1


def source_encoding(path: str, data: bytes) -> str:
    """The encoding Python would read `data` in (tokenize.detect_encoding: BOM, PEP 263)."""
    for bom, name in _WIDE_BOMS:
        if data.startswith(bom):
            raise _refuse(path, f"the file is {name}-encoded (byte-order mark); Python reads "
                          "source files as UTF-8 (or the encoding of a coding declaration): "
                          "save it as UTF-8")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as e:
        if e.msg.startswith("invalid or missing encoding declaration"):
            return "utf-8"  # line 1 or 2 is not UTF-8: decoding says where (a binary file?)
        if data.startswith(codecs.BOM_UTF8):
            raise _refuse(path, "the file starts with a UTF-8 byte-order mark but its coding "
                          "declaration names another encoding: Python would not run it; "
                          "remove one of them", _cookie_line(data)) from None
        raise _refuse(path, f"{e.msg.rstrip('.')}: Python would not run this file; declare an "
                      "encoding Python knows (`# -*- coding: utf-8 -*-`) or remove the "
                      "declaration", _cookie_line(data)) from None
    return encoding


_LINE_END = re.compile(rb"\r\n|\r|\n")


def _position(data: bytes, at: int, encoding: str) -> tuple[int, int]:
    """1-based line and column (in characters) of byte offset `at`, lines ended as Python
    ends them."""
    ends = list(_LINE_END.finditer(data, 0, at))
    start = ends[-1].end() if ends else 0
    return len(ends) + 1, len(data[start:at].decode(encoding, errors="replace")) + 1


def decode_source(path: str, data: bytes) -> str:
    """`data` as the text Python would run: decoded in the encoding it would use, line ends
    made `\\n`; else a located ERR-P00 saying what to change (LOAD-1)."""
    encoding = source_encoding(path, data)
    try:
        text = data.decode(encoding)
    except LookupError:  # rot13, hex: codecs, but not text encodings
        raise _refuse(path, f"the coding declaration names {encoding!r}, which is not a text "
                      "encoding: Python would not run this file; declare utf-8",
                      _cookie_line(data)) from None
    except UnicodeDecodeError as e:
        line, col = _position(data, e.start, encoding)
        raise _refuse(path, f"the file is not {_label(encoding)} text (byte 0x{data[e.start]:02x} "
                      f"at offset {e.start}; a binary file?): save it as UTF-8", line,
                      col) from None
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\0" in text:
        at = text.index("\0")
        raise _refuse(path, "the file contains a NUL character (a binary file?); a kernel file "
                      "is Python source text", text.count("\n", 0, at) + 1,
                      at - text.rfind("\n", 0, at))
    return text


def _label(encoding: str) -> str:
    return "UTF-8" if encoding in ("utf-8", "utf-8-sig") else f"{encoding} (its coding " \
        "declaration)"


def python_lines(text: str) -> list[str]:
    """The lines of a decoded source as Python numbers them (each with its `\\n`): only `\\n`
    ends a line, unlike `str.splitlines`, which also splits at form feeds and U+2028."""
    lines = text.split("\n")
    out = [line + "\n" for line in lines[:-1]]
    return out + [lines[-1]] if lines[-1] else out
