# A CUDA vector type is one LLVM struct of its elements (Numba's model), on
# every target: a device function takes and returns it by value, a
# constructor inserts its elements (a smaller vector's one by one), v.z is
# an extractvalue.
# RUN: %tidalc %s --kernel vectors --sig 'void(float32[::1])' --emit=markers | FileCheck %s
# RUN: %tidalc %s --kernel vectors --sig 'void(float32[::1])' --emit=markers --target cpu | FileCheck %s

from tidal import cuda


@cuda.jit(device=True)
def swap(v):
    return cuda.float32x2(v.y, v.x)

# CHECK-LABEL: define internal { float, float } @swap.v2f32({ float, float } %v)
# CHECK: [[Y:%.*]] = extractvalue { float, float } %v, 1
# CHECK: [[X:%.*]] = extractvalue { float, float } %v, 0
# CHECK: [[FIRST:%.*]] = insertvalue { float, float } poison, float [[Y]], 0
# CHECK: insertvalue { float, float } [[FIRST]], float [[X]], 1


@cuda.jit
def vectors(out):
    v = swap(cuda.float32x2(1.0, 2.0))
    w = cuda.float32x4(v, v)
    out[0] = w.z

# CHECK-LABEL: define void @vectors(
# CHECK: [[V:%.*]] = call { float, float } @swap.v2f32({ float, float } { float 1.000000e+00, float 2.000000e+00 })
# CHECK-COUNT-4: insertvalue { float, float, float, float }
# CHECK: extractvalue { float, float, float, float } %{{.*}}, 2
