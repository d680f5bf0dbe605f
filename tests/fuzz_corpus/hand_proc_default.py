from verifier.lang import *

@proc
def k(n: size = 3):
    pass
