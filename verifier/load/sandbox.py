"""Confine the process that runs a kernel file (specs/threat_model.md SEC-2, SEC-3).

Standard library only (ctypes system calls), with no import of the verifier: the Exo-GPU child
runs in the user's interpreter, where spork-verify need not be installed, and loads this file
by path. Linux only; elsewhere `landlock_abi()` is 0 and `confine` refuses.

`confine(policy)` makes the calling process, and everything it starts, unable to
* write, create, remove, rename or truncate anything outside `policy.writable` (Landlock
  filesystem rules, ABI >= 1; truncation from ABI 3, device ioctls from ABI 5);
* read a file beneath `policy.hidden` (the proof cache's key) or a device file other than
  /dev/null, /dev/zero, /dev/random, /dev/urandom (everything else stays readable and
  executable: a kernel file imports from anywhere);
* signal, ptrace or read the memory of any process outside its own Landlock domain (ptrace
  scoping is part of every Landlock ABI; signals and abstract unix sockets from ABI 6);
* keep any capability (the bounding set is emptied, so a root process loses them for good).
It sets no_new_privs first, as Landlock requires of an unprivileged process.

`supervise(run)` forks: the child runs `run` (which confines itself first) and the parent,
a child subreaper (PR_SET_CHILD_SUBREAPER), waits for it and then kills every process left
below it (a `setsid` grandchild included: orphans are re-parented to the subreaper), and
exits with the child's status. Non-goals: network access, CPU and memory limits, and
processes that services outside the tree start on the file's behalf (specs/threat_model.md).
"""

from __future__ import annotations

import ctypes
import errno
import os
import resource
import signal
import stat
import sys
from dataclasses import dataclass
from typing import Callable, NoReturn

# System call numbers: Landlock's are the same on every architecture (asm-generic numbering).
_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_DUMPABLE, _PR_CAPBSET_DROP, _PR_SET_NO_NEW_PRIVS = 4, 24, 38
_PR_SET_CHILD_SUBREAPER, _PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 36, 47, 4
_CAPSET_VERSION_3 = 0x20080522
_SYS_CAPSET = {"x86_64": 126, "aarch64": 91}

# Filesystem access rights, by the ABI that introduced them.
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_ABI1_ALL = (1 << 13) - 1  # EXECUTE .. MAKE_SYM
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # allowed on a file rule
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1
SIGNAL_SCOPE_ABI = 6  # the first ABI that keeps signals inside the domain

# Devices a kernel file may open (reading; writing only /dev/null).
_DEVICES = {"/dev/null": READ_FILE | WRITE_FILE, "/dev/zero": READ_FILE,
            "/dev/random": READ_FILE, "/dev/urandom": READ_FILE}
CONFINE_FAILED = 121  # exit status of a child that could not confine itself (fail closed)


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _syscall(number: int, *args: object) -> int:
    result = _libc().syscall(ctypes.c_long(number), *args)
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    return int(result)


def _prctl(option: int, arg: int = 0) -> int:
    result = _libc().prctl(option, ctypes.c_ulong(arg), ctypes.c_ulong(0), ctypes.c_ulong(0),
                           ctypes.c_ulong(0))
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    return int(result)


def landlock_abi() -> int:
    """The Landlock ABI version this kernel offers; 0 when it has none (not Linux, older
    than 5.13, or Landlock not enabled among the boot's LSMs)."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        return _syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0),
                        ctypes.c_uint32(_CREATE_RULESET_VERSION))
    except OSError:  # ENOSYS (no such call), EOPNOTSUPP (disabled at boot)
        return 0


def handled_rights(abi: int) -> int:
    """Every filesystem right the kernel can restrict at this ABI (all of them are handled,
    so whatever is not granted by a rule is denied)."""
    rights = _ABI1_ALL
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


@dataclass(frozen=True)
class Policy:
    """What a confined process may touch: all rights beneath `writable`; reading and
    executing everywhere except beneath `hidden` and in /dev (but `_DEVICES`)."""

    writable: tuple[str, ...]
    hidden: tuple[str, ...] = ()

    def as_json(self) -> dict[str, list[str]]:
        return {"writable": list(self.writable), "hidden": list(self.hidden)}

    @staticmethod
    def from_json(data: dict[str, list[str]]) -> "Policy":
        return Policy(tuple(data["writable"]), tuple(data["hidden"]))


def _beneath(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def readable_roots(hidden: tuple[str, ...]) -> list[str]:
    """The fewest paths whose subtrees cover everything except `hidden` (and /dev): a path
    above a hidden one is replaced by its entries, recursively (Landlock only grants)."""
    hidden = tuple(os.path.realpath(h) for h in hidden) + ("/dev",)
    out: list[str] = []

    def cover(path: str) -> None:
        if any(_beneath(path, h) for h in hidden):
            return
        if not any(_beneath(h, path) for h in hidden):
            out.append(path)
            return
        try:
            names = sorted(os.listdir(path))
        except OSError:
            return
        for name in names:
            cover(os.path.join(path, name))

    cover("/")
    return out


def _add_rule(ruleset: int, path: str, rights: int, handled: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # gone meanwhile, or unreachable: nothing to grant
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            rights &= _FILE_RIGHTS
        rule = _PathBeneathAttr(rights & handled, fd)
        _syscall(_SYS_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH),
                 ctypes.byref(rule), ctypes.c_uint32(0))
    finally:
        os.close(fd)


def _drop_capabilities() -> None:
    """No capability now or after an execve (a kernel file run by root keeps none)."""
    for cap in range(64):
        try:
            _prctl(_PR_CAPBSET_DROP, cap)
        except OSError as e:
            if e.errno == errno.EINVAL:
                break  # past the last capability this kernel knows
            if e.errno != errno.EPERM:  # EPERM: not ours to drop (an unprivileged user)
                raise
    try:
        _libc().prctl(_PR_CAP_AMBIENT, ctypes.c_ulong(_PR_CAP_AMBIENT_CLEAR_ALL),
                      ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0))
    finally:
        header = (ctypes.c_uint32 * 2)(_CAPSET_VERSION_3, 0)
        data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable (x2): all empty
        number = _SYS_CAPSET.get(os.uname().machine)
        if number is not None:
            _syscall(number, ctypes.byref(header), ctypes.byref(data))


def confine(policy: Policy, abi: int | None = None) -> int:
    """Confine this process (and its future children) to `policy`; the ABI used. Raises
    OSError when the kernel has no Landlock or refuses: the caller must then not run the
    file (fail closed)."""
    abi = landlock_abi() if abi is None else abi
    if abi < 1:
        raise OSError(errno.EOPNOTSUPP, "this kernel offers no Landlock")
    handled = handled_rights(abi)
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= SIGNAL_SCOPE_ABI else 0
    attr = _RulesetAttr(handled, 0, scoped)
    size = ctypes.sizeof(attr) if abi >= SIGNAL_SCOPE_ABI else 8
    ruleset = _syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size),
                       ctypes.c_uint32(0))
    try:
        _add_rule(ruleset, "/", READ_DIR, handled)  # listing stays possible everywhere
        for root in readable_roots(policy.hidden):
            _add_rule(ruleset, root, READ_FILE | READ_DIR | EXECUTE, handled)
        for device, rights in _DEVICES.items():
            _add_rule(ruleset, device, rights, handled)
        for folder in policy.writable:
            _add_rule(ruleset, folder, handled, handled)
        _prctl(_PR_SET_NO_NEW_PRIVS, 1)
        _drop_capabilities()
        _syscall(_SYS_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0))
    finally:
        os.close(ruleset)
    return abi


def make_undumpable() -> None:
    """Keep other processes of this user from reading this one's memory, environment or
    descriptors through /proc (PR_SET_DUMPABLE 0); a no-op where prctl is missing."""
    if sys.platform.startswith("linux"):
        try:
            _prctl(_PR_SET_DUMPABLE, 0)
        except OSError:
            pass


def _children() -> list[int]:
    """This process's children (their parent pid is ours), read from /proc."""
    me, out = os.getpid(), []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rpartition(b")")[2].split()
        except OSError:
            continue
        if len(fields) > 1 and int(fields[1]) == me:
            out.append(int(name))
    return out


def kill_descendants() -> None:
    """Kill every process below this subreaper: its children, then the orphans of those that
    the kernel re-parents here, until none is left."""
    while True:
        children = _children()
        if not children:
            return
        for pid in children:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for pid in children:
            try:
                os.waitpid(pid, 0)  # once reaped, its own children are already ours
            except ChildProcessError:
                pass


def _exit_like(status: int) -> NoReturn:
    """Exit as the child did: with its code, or dying of its signal (no core file)."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        signal.signal(number, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [number])
        os.kill(os.getpid(), number)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def supervise(run: Callable[[], NoReturn]) -> NoReturn:
    """Fork; the child runs `run` (never returns). This process forwards SIGUSR1 (the
    parent's request for a traceback) to it, ends it and all its descendants on SIGTERM or
    SIGHUP or when it exits, and exits with its status. Rules: SEC-4"""
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    pid = os.fork()
    if pid == 0:
        try:
            run()
        finally:
            os._exit(CONFINE_FAILED)

    def forward(number: int, _frame: object) -> None:
        try:
            os.kill(pid, number)
        except ProcessLookupError:
            pass

    def end(_number: int, _frame: object) -> None:
        kill_descendants()
        os._exit(CONFINE_FAILED)

    signal.signal(signal.SIGUSR1, forward)
    signal.signal(signal.SIGTERM, end)
    signal.signal(signal.SIGHUP, end)
    _, status = os.waitpid(pid, 0)
    kill_descendants()
    _exit_like(status)
