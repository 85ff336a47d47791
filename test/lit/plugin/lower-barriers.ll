; The barrier and fence markers become NVVM intrinsics (IR) and bar.sync /
; bar.red / bar.warp.sync / membar (PTX), accepted by ptxas for sm_75/80/90.
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-barriers -S %s | FileCheck %s
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-nvptx %s | llc -march=nvptx64 -mcpu=sm_75 | FileCheck %s --check-prefix=PTX
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-nvptx %s | llc -march=nvptx64 -mcpu=sm_75 -o %t.sm_75.ptx
; RUN: opt -load-pass-plugin=%plugin -passes='tidal-nvptx<sm=80>' %s | llc -march=nvptx64 -mcpu=sm_80 -o %t.sm_80.ptx
; RUN: opt -load-pass-plugin=%plugin -passes='tidal-nvptx<sm=90>' %s | llc -march=nvptx64 -mcpu=sm_90 -o %t.sm_90.ptx
; RUN: %if ptxas %{ %ptxas -arch=sm_75 %t.sm_75.ptx -o %t.cubin %}
; RUN: %if ptxas %{ %ptxas -arch=sm_80 %t.sm_80.ptx -o %t.cubin %}
; RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.sm_90.ptx -o %t.cubin %}

declare void @tidal.syncthreads()
declare i32 @tidal.syncthreads.count(i32)
declare i32 @tidal.syncthreads.and(i32)
declare i32 @tidal.syncthreads.or(i32)
declare void @tidal.syncwarp(i32)
declare void @tidal.threadfence.block()
declare void @tidal.threadfence()
declare void @tidal.threadfence.system()
declare void @tidal.nanosleep(i32)

; cuda.syncthreads(): bar.sync 0.
; CHECK-NOT:   @tidal.
; CHECK-LABEL: define void @syncthreads(
; CHECK-NEXT:    call void @llvm.nvvm.barrier0()
; PTX-LABEL:   .entry syncthreads(
; PTX:           bar.sync 0;
define void @syncthreads(ptr %out) {
  call void @tidal.syncthreads()
  store i32 1, ptr %out
  ret void
}

; syncthreads_count/and/or: the reducing barriers, with the predicate.
; CHECK-LABEL: define void @syncthreads_reductions(
; CHECK-NEXT:    %count = call i32 @llvm.nvvm.barrier0.popc(i32 %pred)
; CHECK-NEXT:    %all = call i32 @llvm.nvvm.barrier0.and(i32 %pred)
; CHECK-NEXT:    %any = call i32 @llvm.nvvm.barrier0.or(i32 %pred)
; PTX-LABEL:   .entry syncthreads_reductions(
; PTX:           bar.red.popc.u32 {{.*}}, 0, %p{{[0-9]+}};
; PTX:           bar.red.and.pred {{.*}}, 0, %p{{[0-9]+}};
; PTX:           bar.red.or.pred {{.*}}, 0, %p{{[0-9]+}};
define void @syncthreads_reductions(ptr %out, i32 %pred) {
  %count = call i32 @tidal.syncthreads.count(i32 %pred)
  %all = call i32 @tidal.syncthreads.and(i32 %pred)
  %any = call i32 @tidal.syncthreads.or(i32 %pred)
  store i32 %count, ptr %out
  %p1 = getelementptr i32, ptr %out, i64 1
  store i32 %all, ptr %p1
  %p2 = getelementptr i32, ptr %out, i64 2
  store i32 %any, ptr %p2
  ret void
}

; cuda.syncwarp(mask): bar.warp.sync with the mask.
; CHECK-LABEL: define void @syncwarp(
; CHECK-NEXT:    call void @llvm.nvvm.bar.warp.sync(i32 %mask)
; PTX-LABEL:   .entry syncwarp(
; PTX:           bar.warp.sync %r{{[0-9]+}};
define void @syncwarp(ptr %out, i32 %mask) {
  call void @tidal.syncwarp(i32 %mask)
  store i32 1, ptr %out
  ret void
}

; threadfence_block / threadfence / threadfence_system: membar.cta/gl/sys.
; CHECK-LABEL: define void @fences(
; CHECK-NEXT:    call void @llvm.nvvm.membar.cta()
; CHECK-NEXT:    call void @llvm.nvvm.membar.gl()
; CHECK-NEXT:    call void @llvm.nvvm.membar.sys()
; PTX-LABEL:   .entry fences(
; PTX:           membar.cta;
; PTX-NEXT:      membar.gl;
; PTX-NEXT:      membar.sys;
define void @fences(ptr %out) {
  call void @tidal.threadfence.block()
  call void @tidal.threadfence()
  call void @tidal.threadfence.system()
  store i32 1, ptr %out
  ret void
}

; nanosleep(ns): llvm.nvvm.nanosleep, nanosleep.u32 (sm_70 and up).
; CHECK-LABEL: define void @nanosleep(
; CHECK-NEXT:    call void @llvm.nvvm.nanosleep(i32 %ns)
; PTX-LABEL:   .entry nanosleep(
; PTX:           nanosleep.u32 %r{{[0-9]+}};
define void @nanosleep(ptr %out, i32 %ns) {
  call void @tidal.nanosleep(i32 %ns)
  store i32 1, ptr %out
  ret void
}

!tidal.kernels = !{!0, !1, !2, !3, !4}
!0 = !{ptr @syncthreads}
!1 = !{ptr @syncthreads_reductions}
!2 = !{ptr @syncwarp}
!3 = !{ptr @fences}
!4 = !{ptr @nanosleep}
