from verifier.lang import *

@proc
def k(n: size):
    undefined_thing(n)
