"""What comes from the user's file system: reading a file the user names (a kernel PATH,
`--check-cert FILE.cu`) without ever blocking on it, quoting a line of a source file, and
showing names and text on a terminal; a leaf module every package may import (specs/cli.md
CLI-2, CLI-5, specs/loading.md LOAD-1).

`open()` on a named pipe waits for a writer that may never come, a character device such as
`/dev/zero` never ends, and a socket cannot be opened at all: anything but a regular file is
refused by its kind before it is opened. The check is made again on the open descriptor (opened
non-blocking), so a file swapped for a FIFO between the two cannot hang the run either. The one
exception is a descriptor this process already holds (`/dev/stdin`, `/dev/fd/N`,
`/proc/self/fd/N`): piping a kernel in (`spork-verify /dev/stdin < k.py`) reads the pipe to
its end, as the user asked.

A file name is the user's bytes: `printable` shows its control characters and undecodable
bytes as escapes, so a name cannot recolour the terminal or move its cursor.

Non-goals: decoding a kernel's bytes (`verifier.load.source` does, as Python would).
"""

from __future__ import annotations

import contextlib
import inspect
import linecache
import os
import re
import stat
import sys
from typing import Any

from verifier.diagnostics import SrcLoc, char_column

_OWN_DESCRIPTOR = re.compile(r"/dev/stdin|/dev/fd/\d+|/proc/self/fd/\d+")


class UnreadableFile(Exception):
    """The path cannot be read as a file; the message says why and what to name instead."""


def _kind_of(mode: int) -> str:
    """What a non-regular file is, in words."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _refusal(mode: int) -> UnreadableFile:
    if stat.S_ISDIR(mode):
        return UnreadableFile("is a folder; name a file")
    return UnreadableFile(
        f"is {_kind_of(mode)}, not a regular file: reading it could wait for a writer or never "
        "end; name the file itself (to pipe one in, give /dev/stdin)")


def is_own_descriptor(name: str) -> bool:
    """Whether `name` is a descriptor this process holds (a pipe the user gave us)."""
    return _OWN_DESCRIPTOR.fullmatch(os.path.normpath(name)) is not None


def read_user_file(name: str, limit: int) -> bytes:
    """At most `limit + 1` bytes of the regular file `name` (the caller refuses more); raises
    UnreadableFile for a missing, unreadable or special file, never blocks on one."""
    own = is_own_descriptor(name)
    try:
        mode = os.stat(name).st_mode
    except OSError as e:
        raise UnreadableFile(f"cannot read it: {e.strerror}") from None
    if stat.S_ISDIR(mode) or not (stat.S_ISREG(mode) or own):
        raise _refusal(mode)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(name, flags)
    except OSError as e:
        raise UnreadableFile(f"cannot read it: {e.strerror}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not (stat.S_ISREG(mode) or own):  # replaced by a FIFO or device since the stat
            raise _refusal(mode)
        os.set_blocking(fd, True)  # a pipe the user gave: read it to its end
        chunks, size = [], 0
        while size <= limit and (chunk := os.read(fd, min(1 << 20, limit + 1 - size))):
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    except OSError as e:
        raise UnreadableFile(f"cannot read it: {e.strerror}") from None
    finally:
        os.close(fd)


def source_lines(file: str, module_globals: dict[str, Any] | None = None) -> list[str]:
    """The lines of a source file as `linecache` holds them (the text that was loaded and
    verified), else read through it; [] for a file that cannot be read as Python source (an
    unknown coding declaration, undecodable bytes) or is not a regular file (never opened: a
    FIFO would block), so quoting a line in a report never fails."""
    if file not in linecache.cache:
        with contextlib.suppress(OSError):
            if not stat.S_ISREG(os.stat(file).st_mode):
                return []
    try:
        return linecache.getlines(file, module_globals)
    except (OSError, LookupError, UnicodeError, SyntaxError, ValueError):
        return []


def source_line(file: str, line: int) -> str:
    """Line `line` (1-based) of `file` as `source_lines` reads it, "" when there is none."""
    lines = source_lines(file)
    return lines[line - 1] if 0 < line <= len(lines) else ""


def call_site(depth: int = 2) -> SrcLoc:
    """Where the script called an upstream API function: the caller of the function `depth`
    frames up, with its column (SCHED-1: an error is located at the call, not `<unknown>`)."""
    frame = sys._getframe(depth)
    positions = inspect.getframeinfo(frame).positions
    col = positions.col_offset if positions and positions.col_offset is not None else 0
    file = frame.f_code.co_filename
    return SrcLoc(file, frame.f_lineno, char_column(source_line(file, frame.f_lineno), col))


def escape_char(ch: str) -> str:
    """One character as `\\xNN`, `\\uNNNN` or `\\UNNNNNNNN` (a surrogate escape as the byte)."""
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:  # a byte of a file name that is not UTF-8 (surrogate escape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 \
        else f"\\U{code:08x}"


def printable_text(text: str) -> str:
    """`text` (a message, a quoted source line, what a file printed) for a terminal: every
    character Python calls non-printable (controls such as ESC, format characters such as bidi
    overrides, separators other than the space) but newline and tab as an escape, so the text
    is shown, never obeyed."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c in "\n\t" else escape_char(c) for c in text)


def printable(name: str) -> str:
    """A file name for text output: as `printable_text`, the newline and tab escaped too, and a
    backslash doubled, so the name printed is unambiguous. JSON and SARIF keep the name."""
    if name.isprintable() and "\\" not in name:
        return name
    return "".join("\\\\" if c == "\\" else c if c.isprintable() else escape_char(c) for c in name)


def printable_loc(loc: SrcLoc) -> str:
    """`file:line:col` for text output, the file name as `printable` shows it."""
    return f"{printable(loc.file)}:{loc.line}:{loc.col}"
