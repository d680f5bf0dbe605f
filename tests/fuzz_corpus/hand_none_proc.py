from verifier.lang import *

k = proc(None)
