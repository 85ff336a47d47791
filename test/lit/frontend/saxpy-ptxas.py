# The PTX that tidalc emits assembles with ptxas for each architecture.
# REQUIRES: ptxas
# RUN: %tidalc %s --kernel saxpy --sig 'void(float32, float32[::1], float32[::1], float32[::1])' --emit=ptx --arch sm_75 -o %t.75.ptx
# RUN: %ptxas -arch=sm_75 %t.75.ptx -o %t.75.cubin
# RUN: %tidalc %s --kernel saxpy --sig 'void(float32, float32[::1], float32[::1], float32[::1])' --emit=ptx --arch sm_80 -o %t.80.ptx
# RUN: %ptxas -arch=sm_80 %t.80.ptx -o %t.80.cubin
# RUN: %tidalc %s --kernel saxpy --sig 'void(float32, float32[::1], float32[::1], float32[::1])' --emit=ptx --arch sm_90 -o %t.90.ptx
# RUN: %ptxas -arch=sm_90 %t.90.ptx -o %t.90.cubin
# RUN: %tidalc %s --kernel fill2d --sig 'void(int64[:, ::1])' --emit=ptx --arch sm_90 -o %t.2d.ptx
# RUN: %ptxas -arch=sm_90 %t.2d.ptx -o %t.2d.cubin

from tidal import cuda


@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]


@cuda.jit
def fill2d(out):
    x, y = cuda.grid(2)
    if x < out.shape[0] and y < out.shape[1]:
        out[x, y] = x * out.shape[1] + y
