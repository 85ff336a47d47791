; NVPTX: a thread that returns before a barrier exits (ret in the kernel),
; and bar.sync / bar.red wait for the threads that have not exited (PTX ISA:
; "wait for non-exited threads"; exiting threads release a barrier they hold
; up), so the lowering needs nothing for threads that returned: the early
; return stays a branch around the barrier to the kernel's ret, and the
; barriers are the plain bar.sync 0 / bar.red. Accepted by ptxas.
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-nvptx %s | llc -march=nvptx64 -mcpu=sm_75 | FileCheck %s
; RUN: opt -load-pass-plugin=%plugin -passes='tidal-nvptx<sm=90>' %s | llc -march=nvptx64 -mcpu=sm_90 -o %t.sm_90.ptx
; RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.sm_90.ptx -o %t.cubin %}

declare i32 @tidal.tid.x()
declare void @tidal.syncthreads()
declare i32 @tidal.syncthreads.count(i32)

; if i >= 8: return; syncthreads(); a[i] = syncthreads_count(a[i] > 0)
; CHECK-LABEL: .entry early_return(
; CHECK:         mov.u32 %r[[TID:[0-9]+]], %tid.x;
; CHECK:         setp.{{[a-z]+}}.u32 %p[[IDLE:[0-9]+]], %r[[TID]], {{7|8}};
; CHECK-NEXT:    @%p[[IDLE]] bra $L__BB0_[[EXIT:[0-9]+]];
; CHECK:         bar.sync 0;
; CHECK:         bar.red.popc.u32
; CHECK:       $L__BB0_[[EXIT]]:
; CHECK-NEXT:    ret;
; CHECK-NOT:     bar.
define void @early_return(ptr %a) {
  %t = call i32 @tidal.tid.x()
  %idle = icmp uge i32 %t, 8
  br i1 %idle, label %exit, label %work
work:
  call void @tidal.syncthreads()
  %i = zext i32 %t to i64
  %p = getelementptr i32, ptr %a, i64 %i
  %v = load i32, ptr %p
  %positive = icmp sgt i32 %v, 0
  %pred = zext i1 %positive to i32
  %count = call i32 @tidal.syncthreads.count(i32 %pred)
  store i32 %count, ptr %p
  br label %exit
exit:
  ret void
}

!tidal.kernels = !{!0}
!0 = !{ptr @early_return}
