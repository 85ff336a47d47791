; The 12 special-register markers become llvm.nvvm.read.ptx.sreg.* reads
; carrying CUDA's limits as !range (LLVM 19 adds none of its own before
; NVVMIntrRange, which only runs inside an NVPTX O-pipeline).
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-special-registers -S %s | FileCheck %s

declare i32 @tidal.tid.x()
declare i32 @tidal.tid.y()
declare i32 @tidal.tid.z()
declare i32 @tidal.ntid.x()
declare i32 @tidal.ntid.y()
declare i32 @tidal.ntid.z()
declare i32 @tidal.ctaid.x()
declare i32 @tidal.ctaid.y()
declare i32 @tidal.ctaid.z()
declare i32 @tidal.nctaid.x()
declare i32 @tidal.nctaid.y()
declare i32 @tidal.nctaid.z()

; Every marker, each stored to out[i]: the reads replace the calls one for one.
; CHECK-NOT:   @tidal.
; CHECK-LABEL: define void @all_registers(
; CHECK-NEXT:    %tid.x = call i32 @llvm.nvvm.read.ptx.sreg.tid.x(), !range ![[TID_XY:[0-9]+]]
; CHECK-NEXT:    store i32 %tid.x, ptr %out
; CHECK:         %tid.y = call i32 @llvm.nvvm.read.ptx.sreg.tid.y(), !range ![[TID_XY]]
; CHECK:         %tid.z = call i32 @llvm.nvvm.read.ptx.sreg.tid.z(), !range ![[TID_Z:[0-9]+]]
; CHECK:         %ntid.x = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x(), !range ![[NTID_XY:[0-9]+]]
; CHECK:         %ntid.y = call i32 @llvm.nvvm.read.ptx.sreg.ntid.y(), !range ![[NTID_XY]]
; CHECK:         %ntid.z = call i32 @llvm.nvvm.read.ptx.sreg.ntid.z(), !range ![[NTID_Z:[0-9]+]]
; CHECK:         %ctaid.x = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x(), !range ![[CTAID_X:[0-9]+]]
; CHECK:         %ctaid.y = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.y(), !range ![[CTAID_YZ:[0-9]+]]
; CHECK:         %ctaid.z = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.z(), !range ![[CTAID_YZ]]
; CHECK:         %nctaid.x = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.x(), !range ![[NCTAID_X:[0-9]+]]
; CHECK:         %nctaid.y = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.y(), !range ![[NCTAID_YZ:[0-9]+]]
; CHECK:         %nctaid.z = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.z(), !range ![[NCTAID_YZ]]
; CHECK-NOT:     @tidal.
; CHECK:         ret void
define void @all_registers(ptr %out) {
  %tid.x = call i32 @tidal.tid.x()
  store i32 %tid.x, ptr %out
  %tid.y = call i32 @tidal.tid.y()
  %p1 = getelementptr i32, ptr %out, i64 1
  store i32 %tid.y, ptr %p1
  %tid.z = call i32 @tidal.tid.z()
  %p2 = getelementptr i32, ptr %out, i64 2
  store i32 %tid.z, ptr %p2
  %ntid.x = call i32 @tidal.ntid.x()
  %p3 = getelementptr i32, ptr %out, i64 3
  store i32 %ntid.x, ptr %p3
  %ntid.y = call i32 @tidal.ntid.y()
  %p4 = getelementptr i32, ptr %out, i64 4
  store i32 %ntid.y, ptr %p4
  %ntid.z = call i32 @tidal.ntid.z()
  %p5 = getelementptr i32, ptr %out, i64 5
  store i32 %ntid.z, ptr %p5
  %ctaid.x = call i32 @tidal.ctaid.x()
  %p6 = getelementptr i32, ptr %out, i64 6
  store i32 %ctaid.x, ptr %p6
  %ctaid.y = call i32 @tidal.ctaid.y()
  %p7 = getelementptr i32, ptr %out, i64 7
  store i32 %ctaid.y, ptr %p7
  %ctaid.z = call i32 @tidal.ctaid.z()
  %p8 = getelementptr i32, ptr %out, i64 8
  store i32 %ctaid.z, ptr %p8
  %nctaid.x = call i32 @tidal.nctaid.x()
  %p9 = getelementptr i32, ptr %out, i64 9
  store i32 %nctaid.x, ptr %p9
  %nctaid.y = call i32 @tidal.nctaid.y()
  %p10 = getelementptr i32, ptr %out, i64 10
  store i32 %nctaid.y, ptr %p10
  %nctaid.z = call i32 @tidal.nctaid.z()
  %p11 = getelementptr i32, ptr %out, i64 11
  store i32 %nctaid.z, ptr %p11
  ret void
}

; A device function (not in !tidal.kernels) is lowered the same way: on
; NVPTX the registers can be read anywhere.
; CHECK-LABEL: define i32 @global_index(
; CHECK-NEXT:    %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x(), !range ![[TID_XY]]
; CHECK-NEXT:    %b = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x(), !range ![[CTAID_X]]
; CHECK-NEXT:    %d = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x(), !range ![[NTID_XY]]
define i32 @global_index() {
  %t = call i32 @tidal.tid.x()
  %b = call i32 @tidal.ctaid.x()
  %d = call i32 @tidal.ntid.x()
  %m = mul i32 %b, %d
  %i = add i32 %m, %t
  ret i32 %i
}

; The marker declarations are gone; the ranges are CUDA's limits, [low, high).
; CHECK-NOT: declare i32 @tidal.
; CHECK-DAG: ![[TID_XY]] = !{i32 0, i32 1024}
; CHECK-DAG: ![[TID_Z]] = !{i32 0, i32 64}
; CHECK-DAG: ![[NTID_XY]] = !{i32 1, i32 1025}
; CHECK-DAG: ![[NTID_Z]] = !{i32 1, i32 65}
; CHECK-DAG: ![[CTAID_X]] = !{i32 0, i32 2147483647}
; CHECK-DAG: ![[CTAID_YZ]] = !{i32 0, i32 65535}
; CHECK-DAG: ![[NCTAID_X]] = !{i32 1, i32 -2147483648}
; CHECK-DAG: ![[NCTAID_YZ]] = !{i32 1, i32 65536}

!tidal.kernels = !{!0}
!0 = !{ptr @all_registers}
