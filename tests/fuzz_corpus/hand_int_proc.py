from verifier.lang import *

k = proc(3)
