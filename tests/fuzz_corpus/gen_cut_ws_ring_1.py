# expect: ws_ring proved
# Warp-specialized producer/consumer through an R = 3 slot SMEM ring (semantics.md Example S7,
# one ring per task). Warp 0 produces, warp 1 consumes; `full` and `e