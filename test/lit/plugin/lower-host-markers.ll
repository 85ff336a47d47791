; tidal-lower-host on the markers that need no sync point: atomics (real
; atomics on global memory, plain read-modify-write on the block's shared
; memory, whose threads run on one host thread), math (LLVM intrinsics or
; libm), print and failures (calls into the cpu runtime), lanes, fences, sleep.
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-host -S %s | FileCheck %s

declare i32 @tidal.tid.x()
declare i32 @tidal.laneid()
declare ptr @tidal.shared.array(i64, i64)
declare i32 @tidal.atomic.add.i32(ptr, i32)
declare i32 @tidal.atomic.inc.u32(ptr, i32)
declare float @tidal.atomic.max.f32(ptr, float)
declare double @tidal.atomic.nanmin.f64(ptr, double)
declare i64 @tidal.atomic.cas.i64(ptr, i64, i64)
declare float @tidal.math.sqrt.f32(float)
declare float @tidal.math.tan.f32(float)
declare double @tidal.math.atan2.f64(double, double)
declare double @tidal.math.fmod.f64(double, double)
declare double @tidal.math.cbrt.f64(double)
declare float @tidal.math.cbrt.f32(float)
declare void @tidal.print(ptr, ...)
declare void @tidal.bounds.error(ptr, i64, i64, i32)
declare void @tidal.threadfence.block()
declare void @tidal.threadfence()
declare void @tidal.nanosleep(i32)
declare i64 @tidal.shared.dynamic.bytes()

@fmt = private constant [4 x i8] c"%d\0A\00"
@where = private constant [2 x i8] c"k\00"

; CHECK-LABEL: define internal i32 @markers.thread(
; CHECK:         %old = atomicrmw add ptr %g, i32 1 monotonic, align 4
; CHECK:         %wrap = atomicrmw uinc_wrap ptr %g, i32 7 monotonic, align 4
; CHECK:         %fmax = call float @tidal_atomic_ordered_max_f32_p0(ptr %f, float 1.000000e+00)
; CHECK:         %nanmin = atomicrmw fmin ptr %l, double 2.000000e+00 monotonic, align 8
; CHECK:         %[[PAIR:.+]] = cmpxchg ptr %l, i64 0, i64 1 monotonic monotonic, align 8
; CHECK-NEXT:    %cas = extractvalue { i64, i1 } %[[PAIR]], 0
; CHECK:         %[[OLD:.+]] = load i32, ptr %sh, align 4
; CHECK-NEXT:    %[[NEW:.+]] = add i32 %[[OLD]], 1
; CHECK-NEXT:    store i32 %[[NEW]], ptr %sh, align 4
; CHECK:         %root = call float @llvm.sqrt.f32(float
; CHECK:         %tangent = call float @tanf(float
; CHECK:         %angle = call double @atan2(double
; CHECK:         %rem = frem double
; cbrt: tidal's host libdevice (exact on exact cubes), not libm's
; CHECK:         %cube = call double @__nv_cbrt(double
; CHECK:         %cubef = call float @__nv_cbrtf(float
; CHECK:         %laneid = and i32 %thread, 31
; CHECK:         fence syncscope("singlethread") seq_cst
; CHECK:         fence seq_cst
; nanosleep: no time at all, which CUDA allows (0 to twice the request)
; CHECK-NEXT:    call void (ptr, ...) @__tidal_cpu_print
; CHECK:         call void (ptr, ...) @__tidal_cpu_print(ptr @fmt, i32 %laneid)
; CHECK:         call void @__tidal_cpu_bounds_error(ptr %ctx, ptr @where, i64 5, i64 4, i32 0, i32 %tid.x, i32 %tid.y, i32 %tid.z)
; CHECK-NEXT:    ret i32 -2
; CHECK-NOT:   @tidal.
define void @markers(ptr %g, ptr %f, ptr %l, float %x, double %y) {
entry:
  %sh = call ptr @tidal.shared.array(i64 4, i64 4)
  %old = call i32 @tidal.atomic.add.i32(ptr %g, i32 1)
  %wrap = call i32 @tidal.atomic.inc.u32(ptr %g, i32 7)
  %fmax = call float @tidal.atomic.max.f32(ptr %f, float 1.0)
  %nanmin = call double @tidal.atomic.nanmin.f64(ptr %l, double 2.0)
  %cas = call i64 @tidal.atomic.cas.i64(ptr %l, i64 0, i64 1)
  %sold = call i32 @tidal.atomic.add.i32(ptr %sh, i32 1)
  %root = call float @tidal.math.sqrt.f32(float %x)
  %tangent = call float @tidal.math.tan.f32(float %x)
  %angle = call double @tidal.math.atan2.f64(double %y, double %y)
  %rem = call double @tidal.math.fmod.f64(double %y, double 3.0)
  %cube = call double @tidal.math.cbrt.f64(double %y)
  %cubef = call float @tidal.math.cbrt.f32(float %x)
  %lane = call i32 @tidal.laneid()
  call void @tidal.threadfence.block()
  call void @tidal.threadfence()
  call void @tidal.nanosleep(i32 100)
  call void (ptr, ...) @tidal.print(ptr @fmt, i32 %lane)
  %bad = icmp eq i32 %lane, 3
  br i1 %bad, label %fail, label %done
fail:
  call void @tidal.bounds.error(ptr @where, i64 5, i64 4, i32 0)
  unreachable
done:
  ret void
}

; The launch's dynamic shared bytes: the block context's field.
; CHECK-LABEL: define internal i32 @dynamic_bytes.thread(
; CHECK:         %dynamic_shared_bytes.addr = getelementptr inbounds %tidal.BlockContext, ptr %ctx, i32 0, i32 5
; CHECK-NEXT:    %dynamic_shared_bytes = load i64, ptr %dynamic_shared_bytes.addr, align 8, !invariant.load
; CHECK-NEXT:    store i64 %dynamic_shared_bytes, ptr %out
define void @dynamic_bytes(ptr %out) {
  %n = call i64 @tidal.shared.dynamic.bytes()
  store i64 %n, ptr %out
  ret void
}

!tidal.kernels = !{!0, !1}
!0 = !{ptr @markers}
!1 = !{ptr @dynamic_bytes}
