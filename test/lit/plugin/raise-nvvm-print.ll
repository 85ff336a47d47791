; tidal-raise-nvvm: printf (clang's vprintf with a local struct of the
; promoted arguments) becomes tidal.print with the arguments as C varargs;
; libdevice's __nv_* functions that have a math marker become it (f suffix:
; f32); __ldg (llvm.nvvm.ldg.global.*) becomes a plain load. The kernel is
; then lowered for the host, where tidal.print calls the runtime.
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
; | extern "C" __device__ int vprintf(const char *, void *);
; | extern "C" __device__ int printf(const char *, ...);
; | extern "C" __device__ float __nv_sinf(float);
; | extern "C" __device__ double __nv_pow(double, double);
; | extern "C" __device__ float __nv_fminf(float, float);
; | extern "C" __global__ void print(const float *in, float *out, double d) {
; |   printf("thread %d of %u: %f\n", (int)__nvvm_read_ptx_sreg_tid_x(), __nvvm_read_ptx_sreg_ntid_x(), d);
; |   printf("no arguments\n");
; |   out[0] = __nv_sinf(in[0]);
; |   out[1] = __nv_pow(d, 2.0);
; |   out[2] = __nv_fminf(in[1], in[2]);
; |   out[3] = __nvvm_ldg_f(in + 3);
; | }

; CHECK-NOT: vprintf
; CHECK-NOT: __nv_
; CHECK-NOT: llvm.nvvm
; CHECK-LABEL: define {{.*}}void @print(
; CHECK: [[ARGS:%.*]] = alloca %printf_args, align 8
; CHECK: [[F0:%.*]] = getelementptr inbounds %printf_args, ptr [[ARGS]], i32 0, i32 0
; CHECK-NEXT: [[A0:%.*]] = load i32, ptr [[F0]]
; CHECK-NEXT: [[F1:%.*]] = getelementptr inbounds %printf_args, ptr [[ARGS]], i32 0, i32 1
; CHECK-NEXT: [[A1:%.*]] = load i32, ptr [[F1]]
; CHECK-NEXT: [[F2:%.*]] = getelementptr inbounds %printf_args, ptr [[ARGS]], i32 0, i32 2
; CHECK-NEXT: [[A2:%.*]] = load double, ptr [[F2]]
; CHECK-NEXT: call void (ptr, ...) @tidal.print(ptr @.str, i32 [[A0]], i32 [[A1]], double [[A2]])
; CHECK-NEXT: call void (ptr, ...) @tidal.print(ptr @.str1)
; CHECK: call float @tidal.math.sin.f32(float
; CHECK: call double @tidal.math.pow.f64(double %2, double 2.0
; CHECK: call float @tidal.math.fmin.f32(float
; CHECK: [[LDG:%.*]] = getelementptr inbounds i8, ptr %0, i64 12
; CHECK-NEXT: load float, ptr [[LDG]], align 4

; HOST-NOT: @tidal.
; HOST-DAG: define {{.*}}void @__tidal_block_print(ptr
; HOST-DAG: declare void @__tidal_cpu_print(ptr, ...)

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

%printf_args = type { i32, i32, double }

@.str = private unnamed_addr constant [21 x i8] c"thread %d of %u: %f\0A\00", align 1
@.str1 = private unnamed_addr constant [14 x i8] c"no arguments\0A\00", align 1

; Function Attrs: convergent mustprogress norecurse nounwind
define dso_local void @print(ptr nocapture noundef readonly %0, ptr nocapture noundef writeonly %1, double noundef %2) local_unnamed_addr #0 {
  %4 = alloca %printf_args, align 8
  %5 = tail call range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %6 = tail call range(i32 1, 1025) i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  store i32 %5, ptr %4, align 8
  %7 = getelementptr inbounds i8, ptr %4, i64 4
  store i32 %6, ptr %7, align 4
  %8 = getelementptr inbounds i8, ptr %4, i64 8
  store double %2, ptr %8, align 8
  %9 = call i32 @vprintf(ptr nonnull @.str, ptr nonnull %4) #4
  %10 = call i32 @vprintf(ptr nonnull @.str1, ptr null) #4
  %11 = load float, ptr %0, align 4, !tbaa !5
  %12 = call contract float @__nv_sinf(float noundef %11) #5
  store float %12, ptr %1, align 4, !tbaa !5
  %13 = call contract double @__nv_pow(double noundef %2, double noundef 2.000000e+00) #5
  %14 = fptrunc double %13 to float
  %15 = getelementptr inbounds i8, ptr %1, i64 4
  store float %14, ptr %15, align 4, !tbaa !5
  %16 = getelementptr inbounds i8, ptr %0, i64 4
  %17 = load float, ptr %16, align 4, !tbaa !5
  %18 = getelementptr inbounds i8, ptr %0, i64 8
  %19 = load float, ptr %18, align 4, !tbaa !5
  %20 = call contract float @__nv_fminf(float noundef %17, float noundef %19) #5
  %21 = getelementptr inbounds i8, ptr %1, i64 8
  store float %20, ptr %21, align 4, !tbaa !5
  %22 = getelementptr inbounds i8, ptr %0, i64 12
  %23 = call contract float @llvm.nvvm.ldg.global.f.f32.p0(ptr nonnull %22, i32 4)
  %24 = getelementptr inbounds i8, ptr %1, i64 12
  store float %23, ptr %24, align 4, !tbaa !5
  ret void
}

declare i32 @vprintf(ptr, ptr) local_unnamed_addr

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.tid.x() #1

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.ntid.x() #1

; Function Attrs: convergent nounwind
declare dso_local float @__nv_sinf(float noundef) local_unnamed_addr #2

; Function Attrs: convergent nounwind
declare dso_local double @__nv_pow(double noundef, double noundef) local_unnamed_addr #2

; Function Attrs: convergent nounwind
declare dso_local float @__nv_fminf(float noundef, float noundef) local_unnamed_addr #2

; Function Attrs: nocallback nofree nounwind memory(argmem: read)
declare float @llvm.nvvm.ldg.global.f.f32.p0(ptr nocapture, i32) #3

attributes #0 = { convergent mustprogress norecurse nounwind "frame-pointer"="all" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="sm_70" "target-features"="+ptx85,+sm_70" "uniform-work-group-size"="true" }
attributes #1 = { mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none) }
attributes #2 = { convergent nounwind "frame-pointer"="all" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="sm_70" "target-features"="+ptx85,+sm_70" }
attributes #3 = { nocallback nofree nounwind memory(argmem: read) }
attributes #4 = { nounwind }
attributes #5 = { convergent nounwind }

!nvvm.annotations = !{!0}
!llvm.module.flags = !{!1, !2, !3}

!0 = !{ptr @print, !"kernel", i32 1}
!1 = !{i32 1, !"wchar_size", i32 4}
!2 = !{i32 4, !"nvvm-reflect-ftz", i32 0}
!3 = !{i32 7, !"frame-pointer", i32 2}
!5 = !{!6, !6, i64 0}
!6 = !{!"float", !7, i64 0}
!7 = !{!"omnipotent char", !8, i64 0}
!8 = !{!"Simple C++ TBAA"}
