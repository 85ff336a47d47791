# cuda.fp16.* through NVPTX: LLVM half arithmetic becomes PTX's f16
# instructions (add.f16, mul.f16, setp.*.f16: without .rn, as nvcc and Numba
# leave ptxas free to contract them), hfma llvm.fma.f16, which is PTX's
# fma.rn.f16 as in Numba (the cpu target's lowering makes it a float64 fma
# rounded once: test/lit/plugin/lower-host-half-fma.ll), and ptxas accepts
# the result.
# REQUIRES: ptxas
# RUN: %tidalc %s --kernel k --sig 'void(float16[::1], float16[::1], boolean[::1])' --emit=markers | FileCheck %s --check-prefix=IR
# RUN: %tidalc %s --kernel k --sig 'void(float16[::1], float16[::1], boolean[::1])' --emit=ptx --arch sm_75 -o %t.ptx
# RUN: FileCheck %s --check-prefix=PTX < %t.ptx
# RUN: %ptxas -arch=sm_75 %t.ptx -o %t.cubin

from tidal import cuda


@cuda.jit
def k(a, out, flags):
    i = cuda.grid(1)
    if i < a.size:
        x = cuda.fp16.hadd(a[i], out[i])
        y = cuda.fp16.hmul(x, a[i])
        z = cuda.fp16.hsub(y, x)
        w = cuda.fp16.hfma(z, x, y)
        out[i] = cuda.fp16.hmax(cuda.fp16.habs(cuda.fp16.hneg(w)), cuda.fp16.hmin(x, y))
        flags[i] = cuda.fp16.hlt(x, y)

# IR: fadd half
# IR: fmul half
# IR: fsub half
# IR: call half @llvm.fma.f16(half
# IR: fneg half
# IR: call half @llvm.fabs.f16(half
# IR: fcmp olt half
# IR: fcmp ogt half
# IR: store half

# PTX: add.f16
# PTX: mul.f16
# hsub(hmul(x, a), x) contracts into one fma, as nvcc and Numba would;
# then hfma's own
# PTX-COUNT-2: fma.rn.f16
# PTX-NOT: fma.rn.f64
# PTX: setp.lt.f16
# PTX: setp.gt.f16
