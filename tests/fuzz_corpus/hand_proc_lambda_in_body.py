from verifier.lang import *

@proc
def k(n: size):
    f = lambda: 1
