; tidal.bounds.fault: the frontend's check of a store's index without debug
; mode. On NVPTX the call goes and the `unreachable` after it stays, so the
; check goes too (an index out of range is undefined on a GPU, as in CUDA):
; the PTX stores with no compare. The host lowering makes it the IndexError
; of tidal.bounds.error (a store past an array would write into the
; process's memory).
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-print -S %s | FileCheck %s --check-prefix=NVPTX
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-nvptx %s | llc -march=nvptx64 -mcpu=sm_75 | FileCheck %s --check-prefix=PTX
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-host -S %s | FileCheck %s --check-prefix=HOST

@where = private unnamed_addr constant [37 x i8] c"kernel 'store' at k.py:4, array 'a'\00\00"

; NVPTX-LABEL: define void @store(
; NVPTX-NOT: @tidal.bounds.fault
; NVPTX: fault:
; NVPTX-NEXT: unreachable

; PTX-LABEL: .entry store(
; PTX-NOT: setp
; PTX: st.global.{{[fu]}}32
; PTX-NOT: trap

; HOST-LABEL: define internal i32 @store.thread(
; HOST: fault:
; HOST-NEXT: call void @__tidal_cpu_bounds_error(ptr %ctx, ptr @where, i64 %i, i64 %n, i32 0, i32 %tid.x, i32 %tid.y, i32 %tid.z)
; HOST-NEXT: ret i32 -2

define void @store(ptr %a, i64 %n, i64 %i) {
entry:
  %outside = icmp uge i64 %i, %n
  br i1 %outside, label %fault, label %ok
fault:
  call void @tidal.bounds.fault(ptr @where, i64 %i, i64 %n, i32 0)
  unreachable
ok:
  %at = getelementptr inbounds float, ptr %a, i64 %i
  store float 1.0, ptr %at, align 4
  ret void
}

declare void @tidal.bounds.fault(ptr, i64, i64, i32)

!tidal.kernels = !{!0}
!0 = !{ptr @store}
