# cuda.fp16.atomicAdd(address, val) on a CPointer(float16): the marker
# atomic.add.f16 on the pointer, a monotonic atomicrmw fadd half after
# lowering, PTX's atom.add.noftz.f16 (sm_70 and up, as cuda_fp16.h's
# atomicAdd), which ptxas accepts for sm_75, sm_80 and sm_90.
# REQUIRES: ptxas
# RUN: %tidalc %s --kernel k --sig 'void(CPointer(float16), float16[::1])' --emit=markers | FileCheck %s --check-prefix=IR
# RUN: %tidalc %s --kernel k --sig 'void(CPointer(float16), float16[::1])' --emit=ptx --arch sm_75 -o %t75.ptx
# RUN: FileCheck %s --check-prefix=PTX < %t75.ptx
# RUN: %ptxas -arch=sm_75 %t75.ptx -o %t75.cubin
# RUN: %tidalc %s --kernel k --sig 'void(CPointer(float16), float16[::1])' --emit=ptx --arch sm_80 -o %t80.ptx
# RUN: FileCheck %s --check-prefix=PTX < %t80.ptx
# RUN: %ptxas -arch=sm_80 %t80.ptx -o %t80.cubin
# RUN: %tidalc %s --kernel k --sig 'void(CPointer(float16), float16[::1])' --emit=ptx --arch sm_90 -o %t90.ptx
# RUN: FileCheck %s --check-prefix=PTX < %t90.ptx
# RUN: %ptxas -arch=sm_90 %t90.ptx -o %t90.cubin

from tidal import cuda


@cuda.jit
def k(total, olds):
    i = cuda.grid(1)
    olds[i] = cuda.fp16.atomicAdd(total, olds[i])

# IR: call half @tidal.atomic.add.f16(ptr %total, half
# PTX: atom.global.add.noftz.f16
