from verifier.lang import *

@proc
def k(n: size, x: f32[n] @ DRAM):
    for i0 in seq(0, 2):
        for i1 in seq(0, 2):
            for i2 in seq(0, 2):
                for i3 in seq(0, 2):
                    for i4 in seq(0, 2):
                        for i5 in seq(0, 2):
                            for i6 in seq(0, 2):
                                for i7 in seq(0, 2):
                                    for i8 in seq(0, 2):
                                        for i9 in seq(0, 2):
                                            for i10 in seq(0, 2):
                                                for i11 in seq(0, 2):
                                                    for i12 in seq(0, 2):
                                                        for i13 in seq(0, 2):
                                                            for i14 in seq(0, 2):
                                                                for i15 in seq(0, 2):
                                                                    for i16 in seq(0, 2):
                                                                        for i17 in seq(0, 2):
                                                                            for i18 in seq(0, 2):
                                                                                x[0] = 1.0
