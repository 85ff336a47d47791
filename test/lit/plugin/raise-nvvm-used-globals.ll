; tidal-raise-nvvm with a __device__ and a __constant__ variable that are
; both in llvm.compiler.used (the case CUDA C++ with two such variables
; gives): raising each one erases and remakes llvm.compiler.used, which the
; pass's walk over the globals once stood on (opt-19 segfaulted on this
; module; RawModule kernels using both crashed the interpreter).
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-raise-nvvm -S %s | FileCheck %s
;
; Input: clang's NVVM IR for (with tidal's prelude, cxx/include/tidal_cuda.h)
;   clang-19 -x cuda --cuda-device-only -nocudainc --cuda-gpu-arch=sm_70 -emit-llvm -S -O1
; | __device__ int counter;
; | __constant__ float coeffs[3];
; | extern "C" __global__ void bump() { atomicAdd(&counter, 1); }
; | extern "C" __global__ void read(float *out) { out[threadIdx.x] = coeffs[threadIdx.x % 3] + counter; }

; CHECK: @counter = dso_local externally_initialized global i32 0, align 4
; CHECK: @coeffs = dso_local externally_initialized global [3 x float] zeroinitializer, align 4
; CHECK: @llvm.compiler.used = appending global [2 x ptr] [ptr @{{counter|coeffs}}, ptr @{{counter|coeffs}}]
; CHECK-LABEL: define dso_local void @bump()
; CHECK: call i32 @tidal.atomic.add.i32(ptr @counter, i32 1)
; CHECK-LABEL: define dso_local void @read(
; CHECK: load i32, ptr @counter

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@counter = dso_local addrspace(1) externally_initialized global i32 0, align 4
@coeffs = dso_local addrspace(4) externally_initialized global [3 x float] zeroinitializer, align 4
@llvm.compiler.used = appending global [2 x ptr] [ptr addrspacecast (ptr addrspace(4) @coeffs to ptr), ptr addrspacecast (ptr addrspace(1) @counter to ptr)], section "llvm.metadata"

; Function Attrs: mustprogress nofree norecurse nounwind willreturn memory(readwrite, argmem: none, inaccessiblemem: none)
define dso_local void @bump() local_unnamed_addr #0 {
  %1 = atomicrmw add ptr addrspacecast (ptr addrspace(1) @counter to ptr), i32 1 seq_cst, align 4
  ret void
}

; Function Attrs: mustprogress nofree norecurse nosync nounwind willreturn memory(read, argmem: write, inaccessiblemem: none)
define dso_local void @read(ptr nocapture noundef writeonly %0) local_unnamed_addr #1 {
  %2 = tail call noundef range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %3 = urem i32 %2, 3
  %4 = zext nneg i32 %3 to i64
  %5 = getelementptr inbounds [3 x float], ptr addrspacecast (ptr addrspace(4) @coeffs to ptr), i64 0, i64 %4
  %6 = load float, ptr %5, align 4, !tbaa !9
  %7 = load i32, ptr addrspacecast (ptr addrspace(1) @counter to ptr), align 4, !tbaa !13
  %8 = sitofp i32 %7 to float
  %9 = fadd contract float %6, %8
  %10 = zext nneg i32 %2 to i64
  %11 = getelementptr inbounds float, ptr %0, i64 %10
  store float %9, ptr %11, align 4, !tbaa !9
  ret void
}

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.tid.x() #2

attributes #0 = { mustprogress nofree norecurse nounwind willreturn memory(readwrite, argmem: none, inaccessiblemem: none) "frame-pointer"="all" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="sm_70" "target-features"="+ptx85,+sm_70" "uniform-work-group-size"="true" }
attributes #1 = { mustprogress nofree norecurse nosync nounwind willreturn memory(read, argmem: write, inaccessiblemem: none) "frame-pointer"="all" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="sm_70" "target-features"="+ptx85,+sm_70" "uniform-work-group-size"="true" }
attributes #2 = { mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none) }

!llvm.module.flags = !{!0, !1, !2, !3}
!nvvm.annotations = !{!4, !5}
!nvvmir.version = !{!8}

!0 = !{i32 2, !"SDK Version", [2 x i32] [i32 12, i32 5]}
!1 = !{i32 1, !"wchar_size", i32 4}
!2 = !{i32 4, !"nvvm-reflect-ftz", i32 0}
!3 = !{i32 7, !"frame-pointer", i32 2}
!4 = !{ptr @bump, !"kernel", i32 1}
!5 = !{ptr @read, !"kernel", i32 1}
!8 = !{i32 2, i32 0}
!9 = !{!10, !10, i64 0}
!10 = !{!"float", !11, i64 0}
!11 = !{!"omnipotent char", !12, i64 0}
!12 = !{!"Simple C++ TBAA"}
!13 = !{!14, !14, i64 0}
!14 = !{!"int", !11, i64 0}
