; tidal-lower-host checks every access to a local array against its size,
; also without debug mode (LowerHostGuards.cpp): a store past one would
; overwrite the cpu worker's stack. An access LLVM can prove in range needs
; no check; one through a device function that has no markers is inlined
; first so that it is checked too. The failure is the bounds hook, then the
; thread's failed return (-2).
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-host -S %s | FileCheck %s

; CHECK: @local.where = private unnamed_addr constant {{.*}} c"a local array of 16 bytes of kernel 'k' (checked on the cpu target also without debug=True)\00"

; CHECK-LABEL: define internal i32 @k.thread(
; the store at a run-time index: checked, in elements of 4 bytes
; CHECK: %[[OFFSET:.*]] = add i64 0, %{{.*}}
; CHECK: %local.outside = or i1 false, %{{.*}}
; CHECK: br i1 %local.outside, label %[[FAIL:[0-9]+]], label %{{.*}}, !prof
; CHECK: [[FAIL]]:
; CHECK: %[[INDEX:.*]] = sdiv i64 %[[OFFSET]], 4
; CHECK: call void @__tidal_cpu_bounds_error(ptr %ctx, ptr @local.where, i64 %[[INDEX]], i64 4, i32 0, i32 %tid.x, i32 %tid.y, i32 %tid.z)
; CHECK-NEXT: ret i32 -2
; the load at constant index 3: in range, no check
; CHECK: load float
; the store in @store_at, inlined: checked
; CHECK: call void @__tidal_cpu_bounds_error(ptr %ctx, ptr @local.where
; CHECK-NOT: call void @__tidal_cpu_bounds_error
; CHECK-LABEL: define void @__tidal_block_k(
; @store_at was inlined everywhere, then erased
; CHECK-NOT: define {{.*}} @store_at(

define void @k(ptr %out, i64 %i) {
  %local = call ptr @tidal.local.array(i64 16, i64 4)
  %at = getelementptr inbounds float, ptr %local, i64 %i
  store float 1.0, ptr %at, align 4
  %three = getelementptr inbounds float, ptr %local, i64 3
  %v = load float, ptr %three, align 4
  store float %v, ptr %out, align 4
  call void @store_at(ptr %local, i64 %i)
  ret void
}

define internal void @store_at(ptr %array, i64 %j) {
  %at = getelementptr inbounds float, ptr %array, i64 %j
  store float 2.0, ptr %at, align 4
  ret void
}

declare ptr @tidal.local.array(i64, i64)

!tidal.kernels = !{!0}
!0 = !{ptr @k}
