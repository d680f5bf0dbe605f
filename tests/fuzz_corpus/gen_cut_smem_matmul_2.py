# expect: smem_matmul proved
# Tiled shared-memory matmul C = A @ B, one 16x16 output tile per task, one output element per
# thread (thread 16 * ty + tx owns acc[ty, tx]). Per k-tile: load A_s and B_s, CTA fence (RAW),
# accumulate, CTA fence (protects the next k-tile's overwrite of A_s/B_s: WAR; the last one also
# orders the final reads before the free of A_s/B_s).
from verifier.lang import 