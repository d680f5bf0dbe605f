# expect: smem_matmul proved
# Tiled shared-memory matmul C = A @ B, one 16x16 output tile per task, one output element per
# thread (thread 16 * ty + tx owns acc[ty, tx]). Per k-tile: load A_s and 