from verifier.lang import *

@proc
def k(n: size):
    with CudaDeviceFunction(blockDim=32):
        with CudaDeviceFunction(blockDim=32):
            with CudaDeviceFunction(blockDim=32):
                with CudaDeviceFunction(blockDim=32):
                    with CudaDeviceFunction(blockDim=32):
                        with CudaDeviceFunction(blockDim=32):
                            with CudaDeviceFunction(blockDim=32):
                                with CudaDeviceFunction(blockDim=32):
                                    with CudaDeviceFunction(blockDim=32):
                                        with CudaDeviceFunction(blockDim=32):
                                            with CudaDeviceFunction(blockDim=32):
                                                with CudaDeviceFunction(blockDim=32):
                                                    with CudaDeviceFunction(blockDim=32):
                                                        with CudaDeviceFunction(blockDim=32):
                                                            with CudaDeviceFunction(blockDim=32):
                                                                with CudaDeviceFunction(blockDim=32):
                                                                    with CudaDeviceFunction(blockDim=32):
                                                                        with CudaDeviceFunction(blockDim=32):
                                                                            with CudaDeviceFunction(blockDim=32):
                                                                                with CudaDeviceFunction(blockDim=32):
                                                                                    with CudaDeviceFunction(blockDim=32):
                                                                                        with CudaDeviceFunction(blockDim=32):
                                                                                            with CudaDeviceFunction(blockDim=32):
                                                                                                with CudaDeviceFunction(blockDim=32):
                                                                                                    with CudaDeviceFunction(blockDim=32):
                                                                                                        with CudaDeviceFunction(blockDim=32):
                                                                                                            with CudaDeviceFunction(blockDim=32):
                                                                                                                with CudaDeviceFunction(blockDim=32):
                                                                                                                    with CudaDeviceFunction(blockDim=32):
                                                                                                                        with CudaDeviceFunction(blockDim=32):
                                                                                                                            with CudaDeviceFunction(blockDim=32):
                                                                                                                                with CudaDeviceFunction(blockDim=32):
                                                                                                                                    with CudaDeviceFunction(blockDim=32):
                                                                                                                                        with CudaDeviceFunction(blockDim=32):
                                                                                                                                            with CudaDeviceFunction(blockDim=32):
                                                                                                                                                with CudaDeviceFunction(blockDim=32):
                                                                                                                                                    with CudaDeviceFunction(blockDim=32):
                                                                                                                                                        with CudaDeviceFunction(blockDim=32):
                                                                                                                                                            with CudaDeviceFunction(blockDim=32):
                                                                                                                                                                with CudaDeviceFunction(blockDim=32):
                                                                                                                                                                    with CudaDeviceFunction(blockDim=32):
                                                                                                                                                                        with CudaDeviceFunction(blockDim=32):
                                                                                                                                                                            with CudaDeviceFunction(blockDim=32):
                                                                                                                                                                                with CudaDeviceFunction(blockDim=32):
                                                                                                                                                                                    with CudaDeviceFunction(blockDim=32):
                                                                                                                                                                                        with CudaDeviceFunction(blockDim=32):
                                                                                                                                                                                            with CudaDeviceFunction(blockDim=32):
                                                                                                                                                                                                with CudaDeviceFunction(blockDim=32):
                                                                                                                                                                                                    with CudaDeviceFunction(blockDim=32):
                                                                                                                                                                                                        with CudaDeviceFunction(blockDim=32):
                                                                                                                                                                                                            pass
