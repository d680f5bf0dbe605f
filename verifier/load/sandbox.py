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
from typing import Any, Callable, NoReturn

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
    abi: int | None = None  # the Landlock ABI to use (None: the kernel's; tests ask for less)

    def as_json(self) -> dict[str, object]:
        return {"writable": list(self.writable), "hidden": list(self.hidden), "abi": self.abi}

    @staticmethod
    def from_json(data: dict[str, Any]) -> "Policy":
        return Policy(tuple(data["writable"]), tuple(data["hidden"]), data.get("abi"))


def _beneath(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def readable_roots(hidden: tuple[str, ...]) -> list[str]:
    """The fewest paths whose subtrees cover everything except `hidden` (and /dev): a path
    above a hidden one is replaced by its entries, recursively (Landlock only grants). A
    symbolic link among them is left out: a rule would follow it, possibly to a hidden path."""
    hidden = tuple(os.path.realpath(h) for h in hidden) + ("/dev",)
    out: list[str] = []

    def cover(path: str) -> None:
        if any(_beneath(path, h) for h in hidden) or os.path.islink(path):
            return  # a link's target is covered (or not) under its own path
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


# Seccomp (SEC-5): system calls that act on another process by its pid, Landlock or not.
_SECCOMP_MODE_FILTER, _SECCOMP_RET_ALLOW, _SECCOMP_RET_ERRNO = 2, 0x7FFF0000, 0x00050000
_BPF_LD_W_ABS, _BPF_JEQ_K, _BPF_JGE_K, _BPF_RET_K = 0x20, 0x15, 0x35, 0x06
_X32_SYSCALL_BIT = 0x40000000
_AF_UNIX = 1
# machine -> (audit arch, {name: number})
_SYSCALLS = {
    "x86_64": (0xC000003E, {
        "kill": 62, "tkill": 200, "tgkill": 234, "rt_sigqueueinfo": 129,
        "rt_tgsigqueueinfo": 297, "pidfd_send_signal": 424, "fcntl": 72, "ioctl": 16,
        "socket": 41, "prlimit64": 302, "setpriority": 141, "sched_setaffinity": 203,
        "sched_setparam": 142, "sched_setscheduler": 144, "sched_setattr": 314,
        "ioprio_set": 251, "chmod": 90, "fchmod": 91, "fchmodat": 268, "fchmodat2": 452,
        "chown": 92, "fchown": 93, "lchown": 94, "fchownat": 260}),
    "aarch64": (0xC00000B7, {
        "kill": 129, "tkill": 130, "tgkill": 131, "rt_sigqueueinfo": 138,
        "rt_tgsigqueueinfo": 240, "pidfd_send_signal": 424, "fcntl": 25, "ioctl": 29,
        "socket": 198, "prlimit64": 261, "setpriority": 140, "sched_setaffinity": 122,
        "sched_setparam": 118, "sched_setscheduler": 119, "sched_setattr": 274,
        "ioprio_set": 30, "fchmod": 52, "fchmodat": 53, "fchmodat2": 452, "fchownat": 54,
        "fchown": 55}),
}
# name -> (argument, values refused); (argument, None): refused unless it is 0 (this
# process); (-1, ()): refused outright. The signal calls are added when Landlock cannot scope
# signals (ABI < 6). Calls a machine's table lacks (aarch64 has no chmod) are left out.
_ALWAYS: dict[str, tuple[int, tuple[int, ...] | None]] = {
    "socket": (0, (_AF_UNIX,)),  # no unix socket: no daemon (systemd, docker) acts for it
    "prlimit64": (0, None), "setpriority": (1, None), "sched_setaffinity": (0, None),
    "sched_setparam": (0, None), "sched_setscheduler": (0, None), "sched_setattr": (0, None),
    "ioprio_set": (1, None),
    # Landlock does not cover metadata: no mode or owner change anywhere (e.g. the package
    # made writable by others)
    **{name: (-1, ()) for name in ("chmod", "fchmod", "fchmodat", "fchmodat2", "chown",
                                   "fchown", "lchown", "fchownat")},
}
_UNSCOPED: dict[str, tuple[int, tuple[int, ...] | None]] = {
    "fcntl": (1, (8, 10, 15)),  # F_SETOWN, F_SETSIG, F_SETOWN_EX: SIGIO to another process
    "ioctl": (1, (0x8901, 0x8902)),  # FIOSETOWN, SIOCSPGRP
}
_SIGNAL_CALLS = ("kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo")


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8),
                ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_SockFilter))]


def _filter_program(arch: int, numbers: dict[str, int], scoped: bool, me: int
                    ) -> list[tuple[int, int, int, int]]:
    """The BPF program: EPERM for the calls above when they name another process (or a unix
    socket), for any other architecture's calls and for x32 calls; ALLOW otherwise. A signal
    call is allowed only towards this process itself (`me`; pid 0, a group, is refused)."""
    deny = _SECCOMP_RET_ERRNO | errno.EPERM
    rules = dict(_ALWAYS) if scoped else {**_ALWAYS, **_UNSCOPED}
    checks = [(numbers[name], arg, refused) for name, (arg, refused) in rules.items()
              if name in numbers]
    if not scoped:
        checks += [(numbers[name], 0, ("me",)) for name in _SIGNAL_CALLS]
        checks.append((numbers["pidfd_send_signal"], -1, ()))
    prog = [(_BPF_LD_W_ABS, 0, 0, 4), (_BPF_JEQ_K, 1, 0, arch), (_BPF_RET_K, 0, 0, deny),
            (_BPF_LD_W_ABS, 0, 0, 0), (_BPF_JGE_K, 0, 1, _X32_SYSCALL_BIT),
            (_BPF_RET_K, 0, 0, deny)]
    for number, arg, refused in checks:
        block: list[tuple[int, int, int, int]] = []
        if arg < 0:  # refused outright
            block.append((_BPF_RET_K, 0, 0, deny))
        elif refused == ("me",):  # only this process: the low word of the pid is `me`
            block += [(_BPF_LD_W_ABS, 0, 0, 16 + 8 * arg), (_BPF_JEQ_K, 1, 0, me),
                      (_BPF_RET_K, 0, 0, deny), (_BPF_RET_K, 0, 0, _SECCOMP_RET_ALLOW)]
        elif refused is None:  # only this process: the argument is 0
            block += [(_BPF_LD_W_ABS, 0, 0, 16 + 8 * arg), (_BPF_JEQ_K, 1, 0, 0),
                      (_BPF_RET_K, 0, 0, deny), (_BPF_RET_K, 0, 0, _SECCOMP_RET_ALLOW)]
        else:
            block.append((_BPF_LD_W_ABS, 0, 0, 16 + 8 * arg))
            for k, value in enumerate(refused):
                block.append((_BPF_JEQ_K, len(refused) - k, 0, value))
            block += [(_BPF_RET_K, 0, 0, _SECCOMP_RET_ALLOW), (_BPF_RET_K, 0, 0, deny)]
        # not this call: skip the block, reloading the number it overwrote
        prog += [(_BPF_JEQ_K, 0, len(block), number), *block]
        if block[0][0] == _BPF_LD_W_ABS:
            prog.append((_BPF_LD_W_ABS, 0, 0, 0))
    return prog + [(_BPF_RET_K, 0, 0, _SECCOMP_RET_ALLOW)]


def on_linux() -> bool:
    return sys.platform.startswith("linux")


def filters_syscalls() -> bool:
    """Whether `confine` installs the seccomp filter on this machine (its table is here)."""
    return on_linux() and os.uname().machine in _SYSCALLS


def _filter_syscalls(scoped: bool) -> None:
    """Install the seccomp filter of `_filter_program` (no_new_privs is already set); on an
    architecture without a table here, nothing is filtered (specs/threat_model.md says so)."""
    table = _SYSCALLS.get(os.uname().machine)
    if table is None:
        return
    prog = _filter_program(table[0], table[1], scoped, os.getpid())
    code = (_SockFilter * len(prog))(*(_SockFilter(*ins) for ins in prog))
    fprog = _SockFprog(len(prog), code)
    _prctl_ptr(22, _SECCOMP_MODE_FILTER, ctypes.addressof(fprog))  # PR_SET_SECCOMP


def _prctl_ptr(option: int, arg: int, pointer: int) -> None:
    result = _libc().prctl(option, ctypes.c_ulong(arg), ctypes.c_void_p(pointer),
                           ctypes.c_ulong(0), ctypes.c_ulong(0))
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))


def confine(policy: Policy) -> int:
    """Confine this process (and its future children) to `policy`; the Landlock ABI used (0:
    the kernel has none, so only no_new_privs, the capabilities and the seccomp filter apply,
    and the filesystem is not confined). Raises OSError when the kernel refuses: the caller
    must then not run the file (fail closed)."""
    abi = landlock_abi() if policy.abi is None else policy.abi
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= SIGNAL_SCOPE_ABI else 0
    ruleset = _ruleset(policy, abi, scoped) if abi >= 1 else None
    try:
        _prctl(_PR_SET_NO_NEW_PRIVS, 1)
        _drop_capabilities()
        if ruleset is not None:
            _syscall(_SYS_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0))
        _filter_syscalls(scoped=bool(scoped))
    finally:
        if ruleset is not None:
            os.close(ruleset)
    return abi


def confine_or_exit(policy: Policy, who: str) -> None:
    """`confine`, or end this process (status CONFINE_FAILED, the reason on stderr): a file
    never runs unconfined where confinement was asked for (fail closed)."""
    try:
        confine(policy)
    except OSError as e:
        os.write(2, f"spork-verify: {who} could not confine itself: {e}\n".encode())
        os._exit(CONFINE_FAILED)


def _ruleset(policy: Policy, abi: int, scoped: int) -> int:
    """A Landlock ruleset granting `policy` (every right of the ABI handled, so what no rule
    grants is denied)."""
    handled = handled_rights(abi)
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
    except BaseException:
        os.close(ruleset)
        raise
    return ruleset


def shadow_writes(policy: Policy, note: Callable[[str], None]) -> None:
    """A write the file opens outside its private folder goes to a private copy instead of
    failing with EACCES (SEC-2 still refuses the real one): sporkbench's files dump their case
    list beside themselves (`open(__file__ + ".json", "w")`), output no proof reads. Every
    such path is passed to `note` once (the loading output says the write was kept private);
    `open` and `io.open` (pathlib too) are covered, `os.open` is not (it still fails)."""
    import builtins
    import hashlib
    import io

    real_open = io.open
    private = os.path.join(policy.writable[0], "shadowed-writes")
    seen: set[str] = set()

    def open_(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if isinstance(file, (str, bytes, os.PathLike)) and any(c in mode for c in "wax+"):
            path = os.path.abspath(os.fsdecode(file))
            if not any(_beneath(path, root) for root in policy.writable):
                os.makedirs(private, exist_ok=True)
                digest = hashlib.sha256(path.encode("utf-8", "surrogateescape")).hexdigest()
                file = os.path.join(private, f"{digest[:16]}-{os.path.basename(path)}")
                if path not in seen:
                    seen.add(path)
                    note(path)
        return real_open(file, mode, *args, **kwargs)

    builtins.open = open_  # type: ignore[assignment]
    io.open = open_  # type: ignore[assignment]


def make_undumpable() -> None:
    """Keep other processes of this user from reading this one's memory, environment or
    descriptors through /proc (PR_SET_DUMPABLE 0); a no-op where prctl is missing."""
    if sys.platform.startswith("linux"):
        try:
            _prctl(_PR_SET_DUMPABLE, 0)
        except OSError:
            pass


def _children() -> list[int]:
    """This process's children: from /proc/self/task/*/children, else (a kernel without
    CONFIG_PROC_CHILDREN) every process whose parent pid is ours."""
    try:
        out = []
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/children") as f:
                out += [int(pid) for pid in f.read().split()]
        return out
    except OSError:
        pass
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
    SIGHUP or when it exits, and exits with its status. The handlers are in place before the
    fork, so no signal can end this process and leave the child unsupervised. Rules: SEC-4"""
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    child = [0]

    def forward(number: int, _frame: object) -> None:
        if child[0]:
            try:
                os.kill(child[0], number)
            except ProcessLookupError:
                pass

    def end(_number: int, _frame: object) -> None:
        kill_descendants()
        os._exit(CONFINE_FAILED)

    ending = (signal.SIGTERM, signal.SIGHUP)
    signal.signal(signal.SIGUSR1, forward)
    for number in ending:
        signal.signal(number, end)
    child[0] = os.fork()
    if child[0] == 0:
        try:
            for number in (signal.SIGUSR1, *ending):
                signal.signal(number, signal.SIG_DFL)
            run()
        finally:
            os._exit(CONFINE_FAILED)
    _, status = os.waitpid(child[0], 0)
    kill_descendants()
    _exit_like(status)
