# bfloat16 through NVPTX: the frontend writes LLVM's `bfloat` (no marker of
# its own; math goes through the float32 math markers), and the NVPTX
# backend gives native bf16 instructions where the target has them: sm_80
# has fma.rn.bf16, neg/abs.bf16 and cvt.rn.bf16.f32, and computes
# add/mul in float32 with one cvt.rn; sm_90 has add/mul.bf16 and the
# comparisons setp.*.bf16. Integers convert with integer operations on
# the integer's bits (through a float type LLVM would fold the conversion
# into one sitofp, which goes through float32). ptxas accepts both.
# REQUIRES: ptxas
# RUN: %tidalc %s --kernel k --sig 'void(uint16[::1], int32[::1], boolean[::1])' --emit=markers | FileCheck %s --check-prefix=IR
# RUN: %tidalc %s --kernel k --sig 'void(uint16[::1], int32[::1], boolean[::1])' --emit=ptx --arch sm_80 -o %t80.ptx
# RUN: FileCheck %s --check-prefix=SM80 < %t80.ptx
# RUN: %ptxas -arch=sm_80 %t80.ptx -o %t80.cubin
# RUN: %tidalc %s --kernel k --sig 'void(uint16[::1], int32[::1], boolean[::1])' --emit=ptx --arch sm_90 -o %t90.ptx
# RUN: FileCheck %s --check-prefix=SM90 < %t90.ptx
# RUN: %ptxas -arch=sm_90 %t90.ptx -o %t90.cubin

from tidal import cuda
from tidal.cuda import bf16
from tidal.cuda.bf16 import bfloat16


@cuda.jit
def k(bits, n, flags):
    i = cuda.grid(1)
    if i < bits.size:
        x = bits.view(bfloat16)[i]
        y = x + bfloat16(n[i])
        z = bf16.hfma(y, x, y) * x
        bits.view(bfloat16)[i] = bf16.habs(bf16.hmax(-z, x))
        flags[i] = x < y

# IR: load bfloat
# IR: call i64 @llvm.ctlz.i64
# IR: bitcast i16 {{.*}} to bfloat
# IR: fadd bfloat
# IR: call bfloat @llvm.fma.bf16(bfloat
# IR: fmul bfloat
# IR: fneg bfloat
# IR: call bfloat @llvm.fabs.bf16(bfloat
# IR: store bfloat
# IR: fcmp olt bfloat

# SM80: add.f32
# SM80: cvt.rn.bf16.f32
# SM80: fma.rn.bf16
# SM80: mul.f32
# SM80: cvt.rn.bf16.f32
# SM80: abs.bf16
# SM80: setp.lt.f32

# Without .rn, as float16's (ptxas may contract them, as nvcc's).
# SM90: add.bf16
# SM90: fma.rn.bf16
# SM90: mul.bf16
# SM90: abs.bf16
# SM90: setp.lt.bf16
