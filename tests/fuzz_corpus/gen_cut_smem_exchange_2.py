# expect: smem_exchange proved
# language.md Example L1: reverse a 256-element block through shared memory.
# Fence 1 makes the writes of `tile` visible to every thre