# attack: the verifier stopped by the file it loads (issue 19, SEC-5). This kernel file sends
# SIGSTOP to its ancestors that run spork-verify (at most two: the loader and the CLI), which
# would hang the run. (It never goes further, so that a test never stops its own runner.)
# expect: stop_parent refuted RAW tile 20
import os
import signal

from verifier.lang import *


@proc
def stop_parent(n: size, x: f32[n] @ CudaGmemLinear, y: f32[n] @ CudaGmemLinear):
    assert n % 256 == 0
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, n / 256):
            tile: f32[256] @ CudaSmemLinear
            for t in cuda_threads(0, 256):
                tile[t] = x[256 * blk + t]
            for t in cuda_threads(0, 256):
                y[256 * blk + t] = tile[255 - t] * 2.0
            Fence(cuda_in_order, cuda_in_order)


def _verifier_ancestors() -> list[tuple[int, str]]:
    out, pid = [], os.getppid()
    while pid > 1 and len(out) < 2:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
            with open(f"/proc/{pid}/stat") as f:
                parent = int(f.read().rpartition(")")[2].split()[1])
        except OSError:
            break
        if "verifier" not in cmdline and "spork" not in cmdline:
            break
        out.append((pid, cmdline))
        pid = parent
    return out


for _pid, _cmdline in _verifier_ancestors():
    try:
        os.kill(_pid, signal.SIGSTOP)
        print(f"stopped {_pid}: {_cmdline[:60]}", flush=True)
    except OSError as e:
        print(f"could not stop {_pid}: {e}", flush=True)
