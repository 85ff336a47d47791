; tidal-raise-nvvm's refusals: each NVVM construct it cannot raise is an
; error naming it and the function, one module per construct (opt stops at
; the first error). Each module is clang's output for the CUDA C++ in its
; first comment, made with
;   clang-19 -x cuda --cuda-device-only --cuda-gpu-arch=sm_70 -nocudainc -nocudalib -emit-llvm -S -O1
; and the attribute macros of raise-nvvm-registers.ll.
; RUN: rm -rf %t && split-file %s %t
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-raise-nvvm -disable-output %t/clock.ll 2>&1 | FileCheck %t/clock.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-raise-nvvm -disable-output %t/named-barrier.ll 2>&1 | FileCheck %t/named-barrier.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-raise-nvvm -disable-output %t/shuffle-width.ll 2>&1 | FileCheck %t/shuffle-width.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-raise-nvvm -disable-output %t/scoped-max.ll 2>&1 | FileCheck %t/scoped-max.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-raise-nvvm -disable-output %t/inline-asm.ll 2>&1 | FileCheck %t/inline-asm.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-raise-nvvm -disable-output %t/libdevice.ll 2>&1 | FileCheck %t/libdevice.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-raise-nvvm -disable-output %t/libdevice-type.ll 2>&1 | FileCheck %t/libdevice-type.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-raise-nvvm -disable-output %t/intrinsic.ll 2>&1 | FileCheck %t/intrinsic.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-raise-nvvm -disable-output %t/recursive-shared.ll 2>&1 | FileCheck %t/recursive-shared.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-raise-nvvm -disable-output %t/printf-arguments.ll 2>&1 | FileCheck %t/printf-arguments.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-raise-nvvm -disable-output %t/shared-phi.ll 2>&1 | FileCheck %t/shared-phi.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-raise-nvvm -disable-output %t/annotation.ll 2>&1 | FileCheck %t/annotation.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-raise-nvvm -disable-output %t/local-global.ll 2>&1 | FileCheck %t/local-global.ll --check-prefix=ERR

;--- clock.ll
; A special register tidal has no marker for.
; | extern "C" __global__ void k(unsigned *out) { out[0] =
; | __nvvm_read_ptx_sreg_clock(); }
; ERR: error: tidal: tidal-raise-nvvm: special register 'llvm.nvvm.read.ptx.sreg.clock' in function 'k' cannot run on the cpu target: tidal has no marker for it (the cpu target has no clock)
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
; Function Attrs: mustprogress norecurse nounwind memory(argmem: write, inaccessiblemem: readwrite)
define dso_local void @k(ptr nocapture noundef writeonly %0) local_unnamed_addr #0 {
  %2 = tail call i32 @llvm.nvvm.read.ptx.sreg.clock()
  store i32 %2, ptr %0, align 4, !tbaa !5
  ret void
}
; Function Attrs: nocallback nounwind memory(inaccessiblemem: readwrite)
declare noundef i32 @llvm.nvvm.read.ptx.sreg.clock() #1
attributes #0 = { mustprogress norecurse nounwind memory(argmem: write, inaccessiblemem: readwrite) "frame-pointer"="all" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="sm_70" "target-features"="+ptx85,+sm_70" "uniform-work-group-size"="true" }
attributes #1 = { nocallback nounwind memory(inaccessiblemem: readwrite) }
!nvvm.annotations = !{!0}
!llvm.module.flags = !{!1, !2, !3}
!0 = !{ptr @k, !"kernel", i32 1}
!1 = !{i32 1, !"wchar_size", i32 4}
!2 = !{i32 4, !"nvvm-reflect-ftz", i32 0}
!3 = !{i32 7, !"frame-pointer", i32 2}
!5 = !{!6, !6, i64 0}
!6 = !{!"int", !7, i64 0}
!7 = !{!"omnipotent char", !8, i64 0}
!8 = !{!"Simple C++ TBAA"}

;--- named-barrier.ll
; A barrier other than 0 (bar.sync 1: a named barrier).
; | extern "C" __global__ void k() { __nvvm_barrier_sync(1); }
; ERR: error: tidal: tidal-raise-nvvm: named barrier 'llvm.nvvm.barrier.sync' in function 'k' cannot run on the cpu target: only barrier 0 (__syncthreads) has a marker
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
; Function Attrs: convergent mustprogress norecurse nounwind
define dso_local void @k() local_unnamed_addr #0 {
  tail call void @llvm.nvvm.barrier.sync(i32 1)
  ret void
}
; Function Attrs: convergent nocallback nounwind
declare void @llvm.nvvm.barrier.sync(i32) #1
attributes #0 = { convergent mustprogress norecurse nounwind "frame-pointer"="all" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="sm_70" "target-features"="+ptx85,+sm_70" "uniform-work-group-size"="true" }
attributes #1 = { convergent nocallback nounwind }
!nvvm.annotations = !{!0}
!llvm.module.flags = !{!1, !2, !3}
!0 = !{ptr @k, !"kernel", i32 1}
!1 = !{i32 1, !"wchar_size", i32 4}
!2 = !{i32 4, !"nvvm-reflect-ftz", i32 0}
!3 = !{i32 7, !"frame-pointer", i32 2}

;--- shuffle-width.ll
; A shuffle of width 16 (__shfl_down_sync(mask, v, 1, 16): clamp 0x101f).
; | extern "C" __global__ void k(float *f) { f[0] =
; | __nvvm_shfl_sync_down_f32(0xffffffffu, f[0], 1, 0x101f); }
; ERR: error: tidal: tidal-raise-nvvm: warp shuffle 'llvm.nvvm.shfl.sync.down.f32' in function 'k' cannot run on the cpu target: only whole-warp shuffles (width 32) have markers
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
; Function Attrs: convergent mustprogress norecurse nounwind memory(argmem: readwrite, inaccessiblemem: readwrite)
define dso_local void @k(ptr nocapture noundef %0) local_unnamed_addr #0 {
  %2 = load float, ptr %0, align 4, !tbaa !5
  %3 = tail call contract float @llvm.nvvm.shfl.sync.down.f32(i32 -1, float %2, i32 1, i32 4127)
  store float %3, ptr %0, align 4, !tbaa !5
  ret void
}
; Function Attrs: convergent nocallback nounwind memory(inaccessiblemem: readwrite)
declare float @llvm.nvvm.shfl.sync.down.f32(i32, float, i32, i32) #1
attributes #0 = { convergent mustprogress norecurse nounwind memory(argmem: readwrite, inaccessiblemem: readwrite) "frame-pointer"="all" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="sm_70" "target-features"="+ptx85,+sm_70" "uniform-work-group-size"="true" }
attributes #1 = { convergent nocallback nounwind memory(inaccessiblemem: readwrite) }
!nvvm.annotations = !{!0}
!llvm.module.flags = !{!1, !2, !3}
!0 = !{ptr @k, !"kernel", i32 1}
!1 = !{i32 1, !"wchar_size", i32 4}
!2 = !{i32 4, !"nvvm-reflect-ftz", i32 0}
!3 = !{i32 7, !"frame-pointer", i32 2}
!5 = !{!6, !6, i64 0}
!6 = !{!"float", !7, i64 0}
!7 = !{!"omnipotent char", !8, i64 0}
!8 = !{!"Simple C++ TBAA"}

;--- scoped-max.ll
; A scoped atomic max: the intrinsic does not say whether it is signed.
; | extern "C" __global__ void k(int *p) { __nvvm_atom_cta_max_gen_i(p, 1); }
; ERR: error: tidal: tidal-raise-nvvm: scoped atomic 'llvm.nvvm.atomic.max.gen.i.cta.i32.p0' in function 'k' cannot run on the cpu target: its signedness is not in the intrinsic
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
; Function Attrs: mustprogress norecurse nounwind memory(argmem: readwrite)
define dso_local void @k(ptr nocapture noundef %0) local_unnamed_addr #0 {
  %2 = tail call i32 @llvm.nvvm.atomic.max.gen.i.cta.i32.p0(ptr %0, i32 1)
  ret void
}
; Function Attrs: nocallback nounwind memory(argmem: readwrite)
declare i32 @llvm.nvvm.atomic.max.gen.i.cta.i32.p0(ptr nocapture, i32) #1
attributes #0 = { mustprogress norecurse nounwind memory(argmem: readwrite) "frame-pointer"="all" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="sm_70" "target-features"="+ptx85,+sm_70" "uniform-work-group-size"="true" }
attributes #1 = { nocallback nounwind memory(argmem: readwrite) }
!nvvm.annotations = !{!0}
!llvm.module.flags = !{!1, !2, !3}
!0 = !{ptr @k, !"kernel", i32 1}
!1 = !{i32 1, !"wchar_size", i32 4}
!2 = !{i32 4, !"nvvm-reflect-ftz", i32 0}
!3 = !{i32 7, !"frame-pointer", i32 2}

;--- inline-asm.ll
; Inline PTX assembly.
; | extern "C" __global__ void k(int *p) { asm volatile("membar.gl;" :::
; | "memory"); p[0] = 1; }
; ERR: error: tidal: tidal-raise-nvvm: inline PTX assembly 'membar.gl;' in function 'k' cannot run on the cpu target: it has no host equivalent
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
; Function Attrs: convergent mustprogress norecurse nounwind
define dso_local void @k(ptr nocapture noundef writeonly %0) local_unnamed_addr #0 {
  tail call void asm sideeffect "membar.gl;", "~{memory}"() #1, !srcloc !5
  store i32 1, ptr %0, align 4, !tbaa !6
  ret void
}
attributes #0 = { convergent mustprogress norecurse nounwind "frame-pointer"="all" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="sm_70" "target-features"="+ptx85,+sm_70" "uniform-work-group-size"="true" }
attributes #1 = { convergent nounwind }
!nvvm.annotations = !{!0}
!llvm.module.flags = !{!1, !2, !3}
!0 = !{ptr @k, !"kernel", i32 1}
!1 = !{i32 1, !"wchar_size", i32 4}
!2 = !{i32 4, !"nvvm-reflect-ftz", i32 0}
!3 = !{i32 7, !"frame-pointer", i32 2}
!5 = !{i64 54}
!6 = !{!7, !7, i64 0}
!7 = !{!"int", !8, i64 0}
!8 = !{!"omnipotent char", !9, i64 0}
!9 = !{!"Simple C++ TBAA"}

;--- libdevice.ll
; A __nv_ function libdevice does not have (linked libdevice is not raised: compile with -nocudalib).
; | extern "C" __device__ float __nv_notlibdevicef(float); extern "C" __global__
; | void k(float *f) { f[0] = __nv_notlibdevicef(f[0]); }
; ERR: error: tidal: tidal-raise-nvvm: libdevice function '__nv_notlibdevicef' in function 'k' cannot run on the cpu target: libdevice has no function of that name
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
; Function Attrs: convergent mustprogress norecurse nounwind
define dso_local void @k(ptr nocapture noundef %0) local_unnamed_addr #0 {
  %2 = load float, ptr %0, align 4, !tbaa !5
  %3 = tail call contract float @__nv_notlibdevicef(float noundef %2) #2
  store float %3, ptr %0, align 4, !tbaa !5
  ret void
}
; Function Attrs: convergent nounwind
declare dso_local float @__nv_notlibdevicef(float noundef) local_unnamed_addr #1
attributes #0 = { convergent mustprogress norecurse nounwind "frame-pointer"="all" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="sm_70" "target-features"="+ptx85,+sm_70" "uniform-work-group-size"="true" }
attributes #1 = { convergent nounwind "frame-pointer"="all" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="sm_70" "target-features"="+ptx85,+sm_70" }
attributes #2 = { convergent nounwind }
!nvvm.annotations = !{!0}
!llvm.module.flags = !{!1, !2, !3}
!0 = !{ptr @k, !"kernel", i32 1}
!1 = !{i32 1, !"wchar_size", i32 4}
!2 = !{i32 4, !"nvvm-reflect-ftz", i32 0}
!3 = !{i32 7, !"frame-pointer", i32 2}
!5 = !{!6, !6, i64 0}
!6 = !{!"float", !7, i64 0}
!7 = !{!"omnipotent char", !8, i64 0}
!8 = !{!"Simple C++ TBAA"}

;--- libdevice-type.ll
; A libdevice function declared with other types than libdevice's (__nv_saturatef takes a float).
; | extern "C" __device__ double __nv_saturatef(double); extern "C" __global__
; | void k(double *f) { f[0] = __nv_saturatef(f[0]); }
; ERR: error: tidal: tidal-raise-nvvm: libdevice function '__nv_saturatef' in function 'k' cannot run on the cpu target: its declaration's types differ from libdevice's
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
; Function Attrs: convergent mustprogress norecurse nounwind
define dso_local void @k(ptr nocapture noundef %0) local_unnamed_addr #0 {
  %2 = load double, ptr %0, align 4, !tbaa !5
  %3 = tail call contract double @__nv_saturatef(double noundef %2) #2
  store double %3, ptr %0, align 4, !tbaa !5
  ret void
}
; Function Attrs: convergent nounwind
declare dso_local double @__nv_saturatef(double noundef) local_unnamed_addr #1
attributes #0 = { convergent mustprogress norecurse nounwind "frame-pointer"="all" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="sm_70" "target-features"="+ptx85,+sm_70" "uniform-work-group-size"="true" }
attributes #1 = { convergent nounwind "frame-pointer"="all" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="sm_70" "target-features"="+ptx85,+sm_70" }
attributes #2 = { convergent nounwind }
!nvvm.annotations = !{!0}
!llvm.module.flags = !{!1, !2, !3}
!0 = !{ptr @k, !"kernel", i32 1}
!1 = !{i32 1, !"wchar_size", i32 4}
!2 = !{i32 4, !"nvvm-reflect-ftz", i32 0}
!3 = !{i32 7, !"frame-pointer", i32 2}
!5 = !{!6, !6, i64 0}
!6 = !{!"double", !7, i64 0}
!7 = !{!"omnipotent char", !8, i64 0}
!8 = !{!"Simple C++ TBAA"}

;--- intrinsic.ll
; An NVVM intrinsic with no marker (rsqrt.approx.f: the approximate reciprocal square root).
; | extern "C" __global__ void k(float *f) { f[0] = __nvvm_rsqrt_approx_f(f[0]);
; | }
; ERR: error: tidal: tidal-raise-nvvm: NVVM intrinsic 'llvm.nvvm.rsqrt.approx.f' in function 'k' cannot run on the cpu target: tidal has no marker for it
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
; Function Attrs: mustprogress nofree norecurse nosync nounwind willreturn memory(argmem: readwrite)
define dso_local void @k(ptr nocapture noundef %0) local_unnamed_addr #0 {
  %2 = load float, ptr %0, align 4, !tbaa !5
  %3 = tail call contract float @llvm.nvvm.rsqrt.approx.f(float %2)
  store float %3, ptr %0, align 4, !tbaa !5
  ret void
}
; Function Attrs: mustprogress nocallback nofree nosync nounwind willreturn memory(none)
declare float @llvm.nvvm.rsqrt.approx.f(float) #1
attributes #0 = { mustprogress nofree norecurse nosync nounwind willreturn memory(argmem: readwrite) "frame-pointer"="all" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="sm_70" "target-features"="+ptx85,+sm_70" "uniform-work-group-size"="true" }
attributes #1 = { mustprogress nocallback nofree nosync nounwind willreturn memory(none) }
!nvvm.annotations = !{!0}
!llvm.module.flags = !{!1, !2, !3}
!0 = !{ptr @k, !"kernel", i32 1}
!1 = !{i32 1, !"wchar_size", i32 4}
!2 = !{i32 4, !"nvvm-reflect-ftz", i32 0}
!3 = !{i32 7, !"frame-pointer", i32 2}
!5 = !{!6, !6, i64 0}
!6 = !{!"float", !7, i64 0}
!7 = !{!"omnipotent char", !8, i64 0}
!8 = !{!"Simple C++ TBAA"}

;--- recursive-shared.ll
; A recursive device function using __shared__ memory cannot be inlined into its kernel.
; | __device__ int walk(int n) { __shared__ int depth[32]; depth[n & 31] = n;
; | return n > 0 ? walk(n - 1) + depth[n & 31] : 0; } extern "C" __global__ void
; | k(int *p) { p[0] = walk(p[1]); }
; ERR: error: tidal: tidal-raise-nvvm: device function '_Z4walki' uses __shared__ memory and is recursive: it cannot be inlined into its kernels
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
@_ZZ4walkiE5depth = internal unnamed_addr addrspace(3) global [32 x i32] undef, align 4
; Function Attrs: mustprogress nofree nosync nounwind memory(readwrite, argmem: none, inaccessiblemem: none)
define dso_local noundef i32 @_Z4walki(i32 noundef %0) local_unnamed_addr #0 {
  %2 = and i32 %0, 31
  %3 = zext nneg i32 %2 to i64
  %4 = getelementptr inbounds [32 x i32], ptr addrspacecast (ptr addrspace(3) @_ZZ4walkiE5depth to ptr), i64 0, i64 %3
  store i32 %0, ptr %4, align 4, !tbaa !5
  %5 = icmp sgt i32 %0, 0
  br i1 %5, label %8, label %6
6:                                                ; preds = %1, %8
  %7 = phi i32 [ %12, %8 ], [ 0, %1 ]
  ret i32 %7
8:                                                ; preds = %1
  %9 = add nsw i32 %0, -1
  %10 = tail call noundef i32 @_Z4walki(i32 noundef %9) #2
  %11 = load i32, ptr %4, align 4, !tbaa !5
  %12 = add nsw i32 %11, %10
  br label %6
}
; Function Attrs: mustprogress nofree norecurse nosync nounwind memory(readwrite, inaccessiblemem: none)
define dso_local void @k(ptr nocapture noundef %0) local_unnamed_addr #1 {
  %2 = getelementptr inbounds i8, ptr %0, i64 4
  %3 = load i32, ptr %2, align 4, !tbaa !5
  %4 = tail call noundef i32 @_Z4walki(i32 noundef %3) #2
  store i32 %4, ptr %0, align 4, !tbaa !5
  ret void
}
attributes #0 = { mustprogress nofree nosync nounwind memory(readwrite, argmem: none, inaccessiblemem: none) "frame-pointer"="all" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="sm_70" "target-features"="+ptx85,+sm_70" }
attributes #1 = { mustprogress nofree norecurse nosync nounwind memory(readwrite, inaccessiblemem: none) "frame-pointer"="all" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="sm_70" "target-features"="+ptx85,+sm_70" "uniform-work-group-size"="true" }
attributes #2 = { nounwind }
!nvvm.annotations = !{!0}
!llvm.module.flags = !{!1, !2, !3}
!0 = !{ptr @k, !"kernel", i32 1}
!1 = !{i32 1, !"wchar_size", i32 4}
!2 = !{i32 4, !"nvvm-reflect-ftz", i32 0}
!3 = !{i32 7, !"frame-pointer", i32 2}
!5 = !{!6, !6, i64 0}
!6 = !{!"int", !7, i64 0}
!7 = !{!"omnipotent char", !8, i64 0}
!8 = !{!"Simple C++ TBAA"}

;--- printf-arguments.ll
; vprintf whose arguments are not a local struct (written by hand: clang
; always builds one).
; ERR: error: tidal: tidal-raise-nvvm: 'vprintf' call in function 'k' cannot run on the cpu target: its arguments are not a local struct (as clang's printf writes them)
@format = private constant [4 x i8] c"%d\0A\00"
define void @k(ptr %arguments) {
  %1 = call i32 @vprintf(ptr @format, ptr %arguments)
  ret void
}
declare i32 @vprintf(ptr, ptr)
!nvvm.annotations = !{!0}
!0 = !{ptr @k, !"kernel", i32 1}

;--- shared-phi.ll
; A shared address chosen by a phi of addrspace(3) pointers (written by hand,
; as InferAddressSpaces would leave it): only loads, stores, atomics, GEPs
; and casts are raised.
; ERR: error: tidal: tidal-raise-nvvm: '%p = phi ptr addrspace(3) {{.*}}' in function 'k' cannot run on the cpu target: tidal-raise-nvvm only raises loads, stores, atomics, GEPs and casts of addrspace(3) pointers
@tile = internal addrspace(3) global [8 x float] undef, align 4
define void @k(ptr %out, i1 %c) {
entry:
  %a = getelementptr [8 x float], ptr addrspace(3) @tile, i64 0, i64 1
  br i1 %c, label %other, label %join
other:
  %b = getelementptr [8 x float], ptr addrspace(3) @tile, i64 0, i64 2
  br label %join
join:
  %p = phi ptr addrspace(3) [ %a, %entry ], [ %b, %other ]
  %v = load float, ptr addrspace(3) %p, align 4
  store float %v, ptr %out, align 4
  ret void
}
!nvvm.annotations = !{!0}
!0 = !{ptr @k, !"kernel", i32 1}

;--- annotation.ll
; An !nvvm.annotations entry with no tidal equivalent (maxclusterrank, from
; __cluster_dims__-style launch bounds).
; ERR: error: tidal: tidal-raise-nvvm: annotation 'maxclusterrank' of function 'k' in !nvvm.annotations cannot be raised: tidal has no equivalent
define void @k() {
  ret void
}
!nvvm.annotations = !{!0, !1}
!0 = !{ptr @k, !"kernel", i32 1}
!1 = !{ptr @k, !"maxclusterrank", i32 2}

;--- local-global.ll
; A global in the local address space (5), which CUDA C++ cannot declare.
; ERR: error: tidal: tidal-raise-nvvm: global 'scratch' in addrspace(5) cannot be raised: only global (1), shared (3) and constant (4) variables can
@scratch = internal addrspace(5) global i32 0, align 4
define void @k() {
  ret void
}
!nvvm.annotations = !{!0}
!0 = !{ptr @k, !"kernel", i32 1}
