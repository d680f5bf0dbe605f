# expect: stage_copy proved
# language.md Example L2: per-thread cp.async into SMEM with one commit-group queue per thread
# (cg[t], LANG-5.21). Thread t copies stage[4t : 4t + 4] from row `row` of src; its
# Arrive(Sm80_cp_async) >> cg[t] commits the copy and Await(cg[