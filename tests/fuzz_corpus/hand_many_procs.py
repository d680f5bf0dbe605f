from verifier.lang import *

@proc
def k1(n: size):
    pass

@proc
def k2(n: size):
    pass

@proc
def k3(n: size):
    pass

@proc
def k4(n: size):
    pass

@proc
def k5(n: size):
    pass

@proc
def k6(n: size):
    pass

@proc
def k7(n: size):
    pass

@proc
def k8(n: size):
    pass

@proc
def k9(n: size):
    pass

@proc
def k10(n: size):
    pass

@proc
def k11(n: size):
    pass

@proc
def k12(n: size):
    pass

@proc
def k13(n: size):
    pass

@proc
def k14(n: size):
    pass

@proc
def k15(n: size):
    pass

@proc
def k16(n: size):
    pass

@proc
def k17(n: size):
    pass

@proc
def k18(n: size):
    pass

@proc
def k19(n: size):
    pass

@proc
def k20(n: size):
    pass

@proc
def k21(n: size):
    pass

@proc
def k22(n: size):
    pass

@proc
def k23(n: size):
    pass

@proc
def k24(n: size):
    pass

@proc
def k25(n: size):
    pass

@proc
def k26(n: size):
    pass

@proc
def k27(n: size):
    pass

@proc
def k28(n: size):
    pass

@proc
def k29(n: size):
    pass

@proc
def k30(n: size):
    pass

@proc
def k31(n: size):
    pass

@proc
def k32(n: size):
    pass

@proc
def k33(n: size):
    pass

@proc
def k34(n: size):
    pass

@proc
def k35(n: size):
    pass

@proc
def k36(n: size):
    pass

@proc
def k37(n: size):
    pass

@proc
def k38(n: size):
    pass

@proc
def k39(n: size):
    pass

@proc
def k40(n: size):
    pass


