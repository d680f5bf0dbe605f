# expect: stage_copy proved
# language.md Example L2: per-thread cp.async into SMEM with one commit-group queue per thread
# (cg[t], LA