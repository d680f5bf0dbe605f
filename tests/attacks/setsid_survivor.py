# attack: a process outlives the load (issue 19, SEC-4). This kernel file starts a
# grandchild in a session of its own (`setsid`), which would keep running after the verdict,
# and prints its pid (the report carries it as the file's load output).
# expect: setsid_survivor refuted RAW tile 21
import os
import subprocess
import sys

from verifier.lang import *


@proc
def setsid_survivor(n: size, x: f32[n] @ CudaGmemLinear, y: f32[n] @ CudaGmemLinear):
    assert n % 256 == 0
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, n / 256):
            tile: f32[256] @ CudaSmemLinear
            for t in cuda_threads(0, 256):
                tile[t] = x[256 * blk + t]
            for t in cuda_threads(0, 256):
                y[256 * blk + t] = tile[255 - t] * 2.0
            Fence(cuda_in_order, cuda_in_order)


survivor = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                            start_new_session=True, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(f"survivor pid {survivor.pid} pgid {os.getpgid(survivor.pid)}", flush=True)
