; The lane registers of contract v2: laneid and warpsize (with CUDA's limits
; as !range) and lanemask.lt, as sreg reads (IR) and %laneid / %lanemask_lt
; (PTX; the warp size folds to 32 through its range).
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-special-registers -S %s | FileCheck %s
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-nvptx %s | llc -march=nvptx64 -mcpu=sm_75 -o %t.ptx
; RUN: FileCheck %s --check-prefix=PTX < %t.ptx
; RUN: %if ptxas %{ %ptxas -arch=sm_75 %t.ptx -o %t.cubin %}

declare i32 @tidal.laneid()
declare i32 @tidal.warpsize()
declare i32 @tidal.lanemask.lt()

; Each register stored to out[i].
; CHECK-NOT:   @tidal.
; CHECK-LABEL: define void @lanes(
; CHECK-NEXT:    %lane = call i32 @llvm.nvvm.read.ptx.sreg.laneid(), !range ![[LANE:[0-9]+]]
; CHECK:         %size = call i32 @llvm.nvvm.read.ptx.sreg.warpsize(), !range ![[SIZE:[0-9]+]]
; CHECK:         %below = call i32 @llvm.nvvm.read.ptx.sreg.lanemask.lt()
; CHECK-NOT:     !range
; CHECK:         ret void
; CHECK-DAG: ![[LANE]] = !{i32 0, i32 32}
; CHECK-DAG: ![[SIZE]] = !{i32 32, i32 33}
; PTX-LABEL: .entry lanes(
; PTX-DAG:     mov.u32 %r{{[0-9]+}}, %laneid;
; PTX-DAG:     mov.u32 %r{{[0-9]+}}, %lanemask_lt;
; PTX-DAG:     mov.{{[bu]}}32 %r{{[0-9]+}}, 32;
define void @lanes(ptr %out) {
  %lane = call i32 @tidal.laneid()
  store i32 %lane, ptr %out
  %size = call i32 @tidal.warpsize()
  %p1 = getelementptr i32, ptr %out, i64 1
  store i32 %size, ptr %p1
  %below = call i32 @tidal.lanemask.lt()
  %p2 = getelementptr i32, ptr %out, i64 2
  store i32 %below, ptr %p2
  ret void
}

!tidal.kernels = !{!0}
!0 = !{ptr @lanes}
