from verifier.lang import *

@proc
def k(*args, **kwargs):
    pass
