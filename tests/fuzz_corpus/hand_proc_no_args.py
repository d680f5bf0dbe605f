from verifier.lang import *

@proc
def k():
    pass
