# Compile-time values passed to device functions specialise the callee: one
# LLVM function per distinct function, intrinsic, dtype or literal passed,
# named after it; the compile-time arguments take no LLVM parameters.
# RUN: %tidalc %s --kernel k --sig 'void(float64[::1], int32[::1])' --emit=markers | FileCheck %s

from tidal import cuda, float32, int32


@cuda.jit(device=True)
def double(x):
    return 2 * x


@cuda.jit(device=True)
def negate(x):
    return -x


@cuda.jit(device=True)
def apply(function, x):
    return function(x)


@cuda.jit(device=True)
def bump(op, array, count, dtype):
    scratch = cuda.local.array(count, dtype)
    scratch[0] = 1
    op(array, 0, scratch[0])


@cuda.jit
def k(x, counts):
    x[0] = apply(double, x[0])
    x[1] = apply(negate, x[1])
    x[2] = apply(double, x[2])
    bump(cuda.atomic.add, counts, 4, int32)
    bump(cuda.atomic.add, counts, 4, int32)
    bump(cuda.atomic.max, counts, 8, float32)

# CHECK-DAG: define internal double @apply.xdouble.f64(double %x)
# CHECK-DAG: define internal double @apply.xnegate.f64(double %x)
# CHECK-LABEL: define internal void @bump.xcuda.atomic.add.a1Ci32.i64c4.xcast.int32(ptr %array
# CHECK: call ptr @tidal.local.array(i64 16, i64 4)
# CHECK-LABEL: define internal void @bump.xcuda.atomic.max.a1Ci32.i64c8.xcast.float32(ptr %array
# CHECK: call ptr @tidal.local.array(i64 32, i64 4)
# CHECK-LABEL: define void @k(
# CHECK: call double @apply.xdouble.f64(double
# CHECK: call double @apply.xnegate.f64(double
# CHECK: call double @apply.xdouble.f64(double
# CHECK: call void @bump.xcuda.atomic.add.a1Ci32.i64c4.xcast.int32(ptr
# CHECK: call void @bump.xcuda.atomic.add.a1Ci32.i64c4.xcast.int32(ptr
# CHECK: call void @bump.xcuda.atomic.max.a1Ci32.i64c8.xcast.float32(ptr
