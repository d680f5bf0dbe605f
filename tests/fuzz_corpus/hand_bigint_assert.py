from verifier.lang import *

@proc
def k(n: size):
    assert n == 10**400
