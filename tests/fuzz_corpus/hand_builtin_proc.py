from verifier.lang import *

k = proc(print)
