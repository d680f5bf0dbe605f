from verifier.lang import *
