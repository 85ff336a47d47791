; tidal-raise-nvvm: the GPU address spaces. Each __shared__ variable
; (addrspace(3)) becomes one tidal.shared.array(bytes, align) per kernel
; using it, at the kernel's entry; a device function using one is inlined
; into its callers first (both calls of from_shared share one tile, as on a
; GPU) and erased. `extern __shared__` arrays are tidal.shared.dynamic().
; __constant__ and __device__ variables (addrspace(4), addrspace(1)) become
; ordinary globals of the same name (kept in llvm.compiler.used, which the
; runtime's symbol lookup needs); a constant one with its initializer is
; read through tidal.const.array.
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
; | __constant__ float scale[2];
; | __device__ const float table[3] = {1.0f, 2.0f, 3.0f};
; | __device__ int counter;
; | extern __shared__ float dynamic_part[];
; | __device__ float from_shared(int i) {
; |   __shared__ float tile[64];
; |   tile[i] = i;
; |   __syncthreads();
; |   return tile[63 - i];
; | }
; | extern "C" __global__ void memory(float *out, int i) {
; |   __shared__ double block_sum;
; |   if (i == 0) block_sum = 0;
; |   dynamic_part[i] = scale[0] * table[i];
; |   out[0] = from_shared(i) + from_shared(i + 1) + dynamic_part[i + 1] + block_sum;
; |   counter += 1;
; | }
; | extern "C" __global__ void other(float *out) {
; |   out[0] = from_shared(1) + dynamic_part[2];
; | }

; CHECK-NOT: addrspace
; CHECK: @scale = dso_local externally_initialized global [2 x float] zeroinitializer, align 4
; CHECK: @counter = dso_local externally_initialized global i32 0, align 4
; CHECK: @_ZL5table = internal unnamed_addr constant [3 x float] [float 1.0{{.*}}, float 2.0{{.*}}, float 3.0{{.*}}], align 4
; CHECK: @llvm.compiler.used = appending global [2 x ptr] [ptr @scale, ptr @counter]
; CHECK-NOT: from_shared
; CHECK-LABEL: define {{.*}}void @memory(
; CHECK-NEXT: [[DYNAMIC:%.*]] = call ptr @tidal.shared.dynamic()
; CHECK-NEXT: [[SUM:%.*]] = call ptr @tidal.shared.array(i64 8, i64 8)
; CHECK-NEXT: [[TILE:%.*]] = call ptr @tidal.shared.array(i64 256, i64 4)
; CHECK-NEXT: [[TABLE:%.*]] = call ptr @tidal.const.array(ptr @_ZL5table)
; CHECK: store double 0.0{{.*}}, ptr [[SUM]]
; CHECK: load float, ptr @scale
; CHECK: getelementptr inbounds [3 x float], ptr [[TABLE]], i64 0
; CHECK: getelementptr inbounds [0 x float], ptr [[DYNAMIC]], i64 0
; CHECK: getelementptr inbounds [64 x float], ptr [[TILE]], i64 0
; CHECK: call void @tidal.syncthreads()
; CHECK: getelementptr inbounds [64 x float], ptr [[TILE]], i64 0
; CHECK: call void @tidal.syncthreads()
; CHECK: load double, ptr [[SUM]]
; CHECK: load i32, ptr @counter
; CHECK-LABEL: define {{.*}}void @other(
; CHECK-NEXT: [[DYNAMIC2:%.*]] = call ptr @tidal.shared.dynamic()
; CHECK-NEXT: [[TILE2:%.*]] = call ptr @tidal.shared.array(i64 256, i64 4)
; CHECK: getelementptr inbounds i8, ptr [[TILE2]], i64 4
; CHECK: call void @tidal.syncthreads()
; CHECK: getelementptr inbounds i8, ptr [[DYNAMIC2]], i64 8
; CHECK: !tidal.kernels = !{[[K1:![0-9]+]], [[K2:![0-9]+]]}
; CHECK: [[K1]] = !{ptr @memory}
; CHECK: [[K2]] = !{ptr @other}

; HOST: define {{.*}}void @__tidal_block_memory(ptr
; HOST: define {{.*}}void @__tidal_block_other(ptr
; HOST-NOT: @tidal.

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@scale = dso_local addrspace(4) externally_initialized global [2 x float] zeroinitializer, align 4
@counter = dso_local addrspace(1) externally_initialized global i32 0, align 4
@_ZZ11from_sharediE4tile = internal unnamed_addr addrspace(3) global [64 x float] undef, align 4
@_ZZ6memoryE9block_sum = internal unnamed_addr addrspace(3) global double undef, align 8
@_ZL5table = internal unnamed_addr addrspace(4) constant [3 x float] [float 1.000000e+00, float 2.000000e+00, float 3.000000e+00], align 4
@dynamic_part = external dso_local local_unnamed_addr addrspace(3) global [0 x float], align 4
@llvm.compiler.used = appending global [2 x ptr] [ptr addrspacecast (ptr addrspace(1) @counter to ptr), ptr addrspacecast (ptr addrspace(4) @scale to ptr)], section "llvm.metadata"

; Function Attrs: convergent mustprogress norecurse nounwind
define dso_local noundef float @_Z11from_sharedi(i32 noundef %0) local_unnamed_addr #0 {
  %2 = sitofp i32 %0 to float
  %3 = sext i32 %0 to i64
  %4 = getelementptr inbounds [64 x float], ptr addrspacecast (ptr addrspace(3) @_ZZ11from_sharediE4tile to ptr), i64 0, i64 %3
  store float %2, ptr %4, align 4, !tbaa !6
  tail call void @llvm.nvvm.barrier0()
  %5 = sub nsw i32 63, %0
  %6 = sext i32 %5 to i64
  %7 = getelementptr inbounds [64 x float], ptr addrspacecast (ptr addrspace(3) @_ZZ11from_sharediE4tile to ptr), i64 0, i64 %6
  %8 = load float, ptr %7, align 4, !tbaa !6
  ret float %8
}

; Function Attrs: convergent nocallback nounwind
declare void @llvm.nvvm.barrier0() #1

; Function Attrs: convergent mustprogress norecurse nounwind
define dso_local void @memory(ptr nocapture noundef writeonly %0, i32 noundef %1) local_unnamed_addr #2 {
  %3 = icmp eq i32 %1, 0
  br i1 %3, label %4, label %5

4:                                                ; preds = %2
  store double 0.000000e+00, ptr addrspacecast (ptr addrspace(3) @_ZZ6memoryE9block_sum to ptr), align 8, !tbaa !10
  br label %5

5:                                                ; preds = %4, %2
  %6 = load float, ptr addrspacecast (ptr addrspace(4) @scale to ptr), align 4, !tbaa !6
  %7 = sext i32 %1 to i64
  %8 = getelementptr inbounds [3 x float], ptr addrspacecast (ptr addrspace(4) @_ZL5table to ptr), i64 0, i64 %7
  %9 = load float, ptr %8, align 4, !tbaa !6
  %10 = fmul contract float %6, %9
  %11 = getelementptr inbounds [0 x float], ptr addrspacecast (ptr addrspace(3) @dynamic_part to ptr), i64 0, i64 %7
  store float %10, ptr %11, align 4, !tbaa !6
  %12 = sitofp i32 %1 to float
  %13 = getelementptr inbounds [64 x float], ptr addrspacecast (ptr addrspace(3) @_ZZ11from_sharediE4tile to ptr), i64 0, i64 %7
  store float %12, ptr %13, align 4, !tbaa !6
  tail call void @llvm.nvvm.barrier0()
  %14 = sub nsw i32 63, %1
  %15 = sext i32 %14 to i64
  %16 = getelementptr inbounds [64 x float], ptr addrspacecast (ptr addrspace(3) @_ZZ11from_sharediE4tile to ptr), i64 0, i64 %15
  %17 = load float, ptr %16, align 4, !tbaa !6
  %18 = add nsw i32 %1, 1
  %19 = sitofp i32 %18 to float
  %20 = sext i32 %18 to i64
  %21 = getelementptr inbounds [64 x float], ptr addrspacecast (ptr addrspace(3) @_ZZ11from_sharediE4tile to ptr), i64 0, i64 %20
  store float %19, ptr %21, align 4, !tbaa !6
  tail call void @llvm.nvvm.barrier0()
  %22 = sub nsw i32 62, %1
  %23 = sext i32 %22 to i64
  %24 = getelementptr inbounds [64 x float], ptr addrspacecast (ptr addrspace(3) @_ZZ11from_sharediE4tile to ptr), i64 0, i64 %23
  %25 = load float, ptr %24, align 4, !tbaa !6
  %26 = fadd contract float %17, %25
  %27 = getelementptr inbounds [0 x float], ptr addrspacecast (ptr addrspace(3) @dynamic_part to ptr), i64 0, i64 %20
  %28 = load float, ptr %27, align 4, !tbaa !6
  %29 = fadd contract float %26, %28
  %30 = fpext float %29 to double
  %31 = load double, ptr addrspacecast (ptr addrspace(3) @_ZZ6memoryE9block_sum to ptr), align 8, !tbaa !10
  %32 = fadd contract double %31, %30
  %33 = fptrunc double %32 to float
  store float %33, ptr %0, align 4, !tbaa !6
  %34 = load i32, ptr addrspacecast (ptr addrspace(1) @counter to ptr), align 4, !tbaa !12
  %35 = add nsw i32 %34, 1
  store i32 %35, ptr addrspacecast (ptr addrspace(1) @counter to ptr), align 4, !tbaa !12
  ret void
}

; Function Attrs: convergent mustprogress norecurse nounwind
define dso_local void @other(ptr nocapture noundef writeonly %0) local_unnamed_addr #2 {
  store float 1.000000e+00, ptr getelementptr inbounds (i8, ptr addrspacecast (ptr addrspace(3) @_ZZ11from_sharediE4tile to ptr), i64 4), align 4, !tbaa !6
  tail call void @llvm.nvvm.barrier0()
  %2 = load float, ptr getelementptr inbounds (i8, ptr addrspacecast (ptr addrspace(3) @_ZZ11from_sharediE4tile to ptr), i64 248), align 4, !tbaa !6
  %3 = load float, ptr getelementptr inbounds (i8, ptr addrspacecast (ptr addrspace(3) @dynamic_part to ptr), i64 8), align 4, !tbaa !6
  %4 = fadd contract float %2, %3
  store float %4, ptr %0, align 4, !tbaa !6
  ret void
}

attributes #0 = { convergent mustprogress norecurse nounwind "frame-pointer"="all" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="sm_70" "target-features"="+ptx85,+sm_70" }
attributes #1 = { convergent nocallback nounwind }
attributes #2 = { convergent mustprogress norecurse nounwind "frame-pointer"="all" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="sm_70" "target-features"="+ptx85,+sm_70" "uniform-work-group-size"="true" }

!nvvm.annotations = !{!0, !1}
!llvm.module.flags = !{!2, !3, !4}

!0 = !{ptr @memory, !"kernel", i32 1}
!1 = !{ptr @other, !"kernel", i32 1}
!2 = !{i32 1, !"wchar_size", i32 4}
!3 = !{i32 4, !"nvvm-reflect-ftz", i32 0}
!4 = !{i32 7, !"frame-pointer", i32 2}
!6 = !{!7, !7, i64 0}
!7 = !{!"float", !8, i64 0}
!8 = !{!"omnipotent char", !9, i64 0}
!9 = !{!"Simple C++ TBAA"}
!10 = !{!11, !11, i64 0}
!11 = !{!"double", !8, i64 0}
!12 = !{!13, !13, i64 0}
!13 = !{!"int", !8, i64 0}
