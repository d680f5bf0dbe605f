from verifier.lang import *
from os import *
@proc
def k(n: size):
    pass
