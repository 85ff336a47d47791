; tidal-raise-nvvm: __syncthreads (llvm.nvvm.barrier0), its reductions
; (barrier0.popc/and/or: __syncthreads_count/and/or), barrier 0 by number
; (barrier.sync 0), __syncwarp (bar.warp.sync), the fences (membar.cta/gl/sys:
; __threadfence_block, __threadfence, __threadfence_system) and __nanosleep
; become tidal's barrier and fence markers; the host lowering then splits the
; kernel at each barrier.
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-raise-nvvm -S %s | FileCheck %s
; RUN: opt -load-pass-plugin=%plugin -passes='tidal-raise-nvvm,tidal-lower-host' -S %s | FileCheck %s --check-prefix=HOST
;
; Input: clang's NVVM IR for this CUDA C++ (no CUDA headers: the attribute
; macros stand in for them), made with
;   clang-19 -x cuda --cuda-device-only --cuda-gpu-arch=sm_70 -nocudainc -nocudalib -emit-llvm -S -O1
;
; | #define __global__ __attribute__((global))
; | #define __device__ __attribute__((device))
; | #define __shared__ __attribute__((shared))
; | #define __constant__ __attribute__((constant))
; | #define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
; | extern "C" __global__ void barriers(int *out) {
; |   int t = __nvvm_read_ptx_sreg_tid_x();
; |   __syncthreads();
; |   out[0] = __nvvm_bar0_popc(t & 1);
; |   out[1] = __nvvm_bar0_and(t > 0);
; |   out[2] = __nvvm_bar0_or(t > 5);
; |   __nvvm_barrier_sync(0);
; |   __nvvm_bar_warp_sync(0xffffffffu);
; |   __nvvm_membar_cta();
; |   __nvvm_membar_gl();
; |   __nvvm_membar_sys();
; |   __nvvm_nanosleep(100);
; | }

; CHECK-NOT: llvm.nvvm
; CHECK-LABEL: define {{.*}}void @barriers(
; CHECK: [[T:%.*]] = call i32 @tidal.tid.x()
; CHECK-NEXT: call void @tidal.syncthreads()
; CHECK-NEXT: [[ODD:%.*]] = and i32 [[T]], 1
; CHECK-NEXT: call i32 @tidal.syncthreads.count(i32 [[ODD]])
; CHECK: call i32 @tidal.syncthreads.and(i32
; CHECK: call i32 @tidal.syncthreads.or(i32
; CHECK: call void @tidal.syncthreads()
; CHECK-NEXT: call void @tidal.syncwarp(i32 -1)
; CHECK-NEXT: call void @tidal.threadfence.block()
; CHECK-NEXT: call void @tidal.threadfence()
; CHECK-NEXT: call void @tidal.threadfence.system()
; CHECK-NEXT: call void @tidal.nanosleep(i32 100)
; CHECK-NEXT: ret void

; HOST: define {{.*}}void @__tidal_block_barriers(ptr
; HOST-NOT: @tidal.

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; Function Attrs: convergent mustprogress norecurse nounwind
define dso_local void @barriers(ptr nocapture noundef writeonly %0) local_unnamed_addr #0 {
  %2 = tail call range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  tail call void @llvm.nvvm.barrier0()
  %3 = and i32 %2, 1
  %4 = tail call i32 @llvm.nvvm.barrier0.popc(i32 %3)
  store i32 %4, ptr %0, align 4, !tbaa !5
  %5 = icmp ne i32 %2, 0
  %6 = zext i1 %5 to i32
  %7 = tail call i32 @llvm.nvvm.barrier0.and(i32 %6)
  %8 = getelementptr inbounds i8, ptr %0, i64 4
  store i32 %7, ptr %8, align 4, !tbaa !5
  %9 = icmp ugt i32 %2, 5
  %10 = zext i1 %9 to i32
  %11 = tail call i32 @llvm.nvvm.barrier0.or(i32 %10)
  %12 = getelementptr inbounds i8, ptr %0, i64 8
  store i32 %11, ptr %12, align 4, !tbaa !5
  tail call void @llvm.nvvm.barrier.sync(i32 0)
  tail call void @llvm.nvvm.bar.warp.sync(i32 -1)
  tail call void @llvm.nvvm.membar.cta()
  tail call void @llvm.nvvm.membar.gl()
  tail call void @llvm.nvvm.membar.sys()
  tail call void @llvm.nvvm.nanosleep(i32 100)
  ret void
}

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.tid.x() #1

; Function Attrs: convergent nocallback nounwind
declare void @llvm.nvvm.barrier0() #2

; Function Attrs: convergent nocallback nounwind
declare i32 @llvm.nvvm.barrier0.popc(i32) #2

; Function Attrs: convergent nocallback nounwind
declare i32 @llvm.nvvm.barrier0.and(i32) #2

; Function Attrs: convergent nocallback nounwind
declare i32 @llvm.nvvm.barrier0.or(i32) #2

; Function Attrs: convergent nocallback nounwind
declare void @llvm.nvvm.barrier.sync(i32) #2

; Function Attrs: convergent nocallback nounwind
declare void @llvm.nvvm.bar.warp.sync(i32) #2

; Function Attrs: nocallback nounwind
declare void @llvm.nvvm.membar.cta() #3

; Function Attrs: nocallback nounwind
declare void @llvm.nvvm.membar.gl() #3

; Function Attrs: nocallback nounwind
declare void @llvm.nvvm.membar.sys() #3

; Function Attrs: convergent mustprogress nocallback nofree nosync nounwind willreturn
declare void @llvm.nvvm.nanosleep(i32) #4

attributes #0 = { convergent mustprogress norecurse nounwind "frame-pointer"="all" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="sm_70" "target-features"="+ptx85,+sm_70" "uniform-work-group-size"="true" }
attributes #1 = { mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none) }
attributes #2 = { convergent nocallback nounwind }
attributes #3 = { nocallback nounwind }
attributes #4 = { convergent mustprogress nocallback nofree nosync nounwind willreturn }

!nvvm.annotations = !{!0}
!llvm.module.flags = !{!1, !2, !3}

!0 = !{ptr @barriers, !"kernel", i32 1}
!1 = !{i32 1, !"wchar_size", i32 4}
!2 = !{i32 4, !"nvvm-reflect-ftz", i32 0}
!3 = !{i32 7, !"frame-pointer", i32 2}
!5 = !{!6, !6, i64 0}
!6 = !{!"int", !7, i64 0}
!7 = !{!"omnipotent char", !8, i64 0}
!8 = !{!"Simple C++ TBAA"}
