# expect: stage_copy proved
# language.md Example L2: per-thread cp.async into SMEM with one commit-group queue per thread
# (cg[t], LANG-5.21). Thread t copies stage[4t : 4t + 4] from row `row` of src; its
# Arrive(Sm80_cp_async) >> cg[t] commits the copy and Await(cg[t], cuda_in_order, 0)
# (cp.async.wait_group 0) makes it visible to thread t; the CTA fence then publishes every
# thread's copy to every thread, so thread t may read stage[32j + t] (written by thread 8j + t/4).
# The final CTA fence orders the reads before the free of `stage`. cg has a = w = 1 at its free.
from verifier.lang import *


@proc
def stage_copy(n: size, src: f32[n, 128] @ CudaGmemLinear, d