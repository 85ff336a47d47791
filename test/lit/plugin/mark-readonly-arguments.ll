; Array parameters become `noalias readonly` (so loads are ld.global.nc)
; only in kernels that cannot write global memory at all: two array
; arguments may be the same array, so a kernel that writes any array gets
; nothing. Writes to shared or local memory do not count.
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-nvptx -S %s | FileCheck %s
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-nvptx %s | llc -march=nvptx64 -mcpu=sm_75 -o %t.ptx
; RUN: FileCheck %s --check-prefix=PTX < %t.ptx
; RUN: %if ptxas %{ %ptxas -arch=sm_75 %t.ptx -o %t.cubin %}

declare ptr @tidal.shared.array(i64, i64)
declare i32 @tidal.tid.x()
declare i32 @tidal.atomic.add.i32(ptr, i32)
declare void @tidal.syncthreads()
declare void @tidal.print(ptr, ...)

@format = private unnamed_addr constant [4 x i8] c"%f\0A\00"

; Reads x, writes only shared and local memory, prints: x is read-only.
; CHECK-LABEL: define void @reads_only(ptr noalias readonly %x)
; PTX-LABEL: .entry reads_only(
; PTX:         ld.global.nc.f32
define void @reads_only(ptr %x) {
  %s = call ptr @tidal.shared.array(i64 4096, i64 4)
  %t = call i32 @tidal.tid.x()
  %px = getelementptr float, ptr %x, i32 %t
  %v = load float, ptr %px
  %ps = getelementptr float, ptr %s, i32 %t
  store float %v, ptr %ps
  call void @tidal.syncthreads()
  %u = xor i32 %t, 1
  %pu = getelementptr float, ptr %s, i32 %u
  %w = load float, ptr %pu
  %d = fpext float %w to double
  call void (ptr, ...) @tidal.print(ptr @format, double %d)
  ret void
}

; out[i] = x[i]: out may be x, so nothing is marked and x is a plain load.
; CHECK-LABEL: define void @copy(ptr %out, ptr %x)
; PTX-LABEL: .entry copy(
; PTX-NOT:     ld.global.nc
; PTX:         ld.global.f32
define void @copy(ptr %out, ptr %x) {
  %t = call i32 @tidal.tid.x()
  %px = getelementptr float, ptr %x, i32 %t
  %v = load float, ptr %px
  %po = getelementptr float, ptr %out, i32 %t
  store float %v, ptr %po
  ret void
}

; An atomic on an array is a write too.
; CHECK-LABEL: define void @counts(ptr %counter, ptr %x)
define void @counts(ptr %counter, ptr %x) {
  %v = load i32, ptr %x
  %old = call i32 @tidal.atomic.add.i32(ptr %counter, i32 %v)
  ret void
}

; A write in a called device function through its own parameter counts.
; CHECK-LABEL: define void @writes_in_helper(ptr %x)
define void @writes_in_helper(ptr %x) {
  %v = load float, ptr %x
  call void @store_helper(ptr %x, float %v)
  ret void
}

define void @store_helper(ptr %p, float %v) {
  store float %v, ptr %p
  ret void
}

!tidal.kernels = !{!0, !1, !2, !3}
!0 = !{ptr @reads_only}
!1 = !{ptr @copy}
!2 = !{ptr @counts}
!3 = !{ptr @writes_in_helper}
