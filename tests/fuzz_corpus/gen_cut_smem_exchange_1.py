# expect: smem_exchange proved
# language.md Example L1: reverse a 256-element bloc