from verifier.lang import *

@proc
def k(n: 42, x: f32[n] @ 7):
    pass
