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
                                                                                for i19 in seq(0, 2):
                                                                                    for i20 in seq(0, 2):
                                                                                        for i21 in seq(0, 2):
                                                                                            for i22 in seq(0, 2):
                                                                                                for i23 in seq(0, 2):
                                                                                                    for i24 in seq(0, 2):
                                                                                                        for i25 in seq(0, 2):
                                                                                                            for i26 in seq(0, 2):
                                                                                                                for i27 in seq(0, 2):
                                                                                                                    for i28 in seq(0, 2):
                                                                                                                        for i29 in seq(0, 2):
                                                                                                                            for i30 in seq(0, 2):
                                                                                                                                for i31 in seq(0, 2):
                                                                                                                                    for i32 in seq(0, 2):
                                                                                                                                        for i33 in seq(0, 2):
                                                                                                                                            for i34 in seq(0, 2):
                                                                                                                                                for i35 in seq(0, 2):
                                                                                                                                                    for i36 in seq(0, 2):
                                                                                                                                                        for i37 in seq(0, 2):
                                                                                                                                                            for i38 in seq(0, 2):
                                                                                                                                                                for i39 in seq(0, 2):
                                                                                                                                                                    x[0] = 1.0
