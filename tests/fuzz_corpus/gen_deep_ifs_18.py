from verifier.lang import *

@proc
def k(n: size, x: f32[n] @ DRAM):
    if n > 0:
        if n > 1:
            if n > 2:
                if n > 3:
                    if n > 4:
                        if n > 5:
                            if n > 6:
                                if n > 7:
                                    if n > 8:
                                        if n > 9:
                                            if n > 10:
                                                if n > 11:
                                                    if n > 12:
                                                        if n > 13:
                                                            if n > 14:
                                                                if n > 15:
                                                                    if n > 16:
                                                                        if n > 17:
                                                                            x[0] = 1.0
