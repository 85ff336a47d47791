; tidal-raise-nvvm: clang's atomics (atomicrmw and cmpxchg from the
; __nvvm_atom_* builtins that atomicAdd & co. use, and the nvvm atomic
; intrinsics: atomic.load.inc/dec.32 and the scoped _cta/_sys forms, whose
; scope the host does not need) become tidal.atomic.* markers: the suffix
; from the value type, u32/u64 for umax/umin/inc/dec; cmpxchg's {old,
; success} pair is rebuilt from tidal.atomic.cas's old value.
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
; | extern "C" __global__ void atomics(int *i, unsigned *u, long long *l, unsigned long long *ul, float *f, double *d) {
; |   __nvvm_atom_add_gen_i(i, 1);
; |   __nvvm_atom_add_gen_ll(l, 2);
; |   __nvvm_atom_add_gen_f(f, 3.0f);
; |   __nvvm_atom_add_gen_d(d, 4.0);
; |   __nvvm_atom_sub_gen_i(i + 1, 5);
; |   __nvvm_atom_xchg_gen_i(i + 2, 6);
; |   __nvvm_atom_xchg_gen_ll(l + 1, 7);
; |   __nvvm_atom_max_gen_i(i + 3, 8);
; |   __nvvm_atom_max_gen_ui(u, 9u);
; |   __nvvm_atom_min_gen_i(i + 4, 10);
; |   __nvvm_atom_min_gen_ull(ul, 11ull);
; |   __nvvm_atom_and_gen_i(i + 5, 12);
; |   __nvvm_atom_or_gen_ll(l + 2, 13);
; |   __nvvm_atom_xor_gen_i(i + 6, 14);
; |   __nvvm_atom_inc_gen_ui(u + 1, 15u);
; |   __nvvm_atom_dec_gen_ui(u + 2, 16u);
; |   i[7] = __nvvm_atom_cas_gen_i(i + 8, 17, 18);
; |   l[3] = __nvvm_atom_cas_gen_ll(l + 4, 19, 20);
; |   __nvvm_atom_cta_add_gen_i(i + 9, 21);
; |   __nvvm_atom_sys_xchg_gen_i(i + 10, 22);
; |   __nvvm_atom_cta_cas_gen_i(i + 11, 23, 24);
; | }

; CHECK-NOT: llvm.nvvm
; CHECK-LABEL: define {{.*}}void @atomics(
; CHECK-NOT: atomicrmw
; CHECK-NOT: cmpxchg
; CHECK: call i32 @tidal.atomic.add.i32(ptr %0, i32 1)
; CHECK: call i64 @tidal.atomic.add.i64(ptr %2, i64 2)
; CHECK: call float @tidal.atomic.add.f32(ptr %4, float 3.0
; CHECK: call double @tidal.atomic.add.f64(ptr %5, double 4.0
; CHECK: call i32 @tidal.atomic.sub.i32(ptr %{{.*}}, i32 5)
; CHECK: call i32 @tidal.atomic.exch.i32(ptr %{{.*}}, i32 6)
; CHECK: call i64 @tidal.atomic.exch.i64(ptr %{{.*}}, i64 7)
; CHECK: call i32 @tidal.atomic.max.i32(ptr %{{.*}}, i32 8)
; CHECK: call i32 @tidal.atomic.max.u32(ptr %1, i32 9)
; CHECK: call i32 @tidal.atomic.min.i32(ptr %{{.*}}, i32 10)
; CHECK: call i64 @tidal.atomic.min.u64(ptr %3, i64 11)
; CHECK: call i32 @tidal.atomic.and.i32(ptr %{{.*}}, i32 12)
; CHECK: call i64 @tidal.atomic.or.i64(ptr %{{.*}}, i64 13)
; CHECK: call i32 @tidal.atomic.xor.i32(ptr %{{.*}}, i32 14)
; CHECK: call i32 @tidal.atomic.inc.u32(ptr %{{.*}}, i32 15)
; CHECK: call i32 @tidal.atomic.dec.u32(ptr %{{.*}}, i32 16)
; CHECK: [[OLD:%.*]] = call i32 @tidal.atomic.cas.i32(ptr %{{.*}}, i32 17, i32 18)
; CHECK-NEXT: [[SWAPPED:%.*]] = icmp eq i32 [[OLD]], 17
; CHECK-NEXT: [[PAIR:%.*]] = insertvalue { i32, i1 } poison, i32 [[OLD]], 0
; CHECK-NEXT: insertvalue { i32, i1 } [[PAIR]], i1 [[SWAPPED]], 1
; CHECK: call i64 @tidal.atomic.cas.i64(ptr %{{.*}}, i64 19, i64 20)
; the scoped intrinsics
; CHECK: call i32 @tidal.atomic.add.i32(ptr %{{.*}}, i32 21)
; CHECK: call i32 @tidal.atomic.exch.i32(ptr %{{.*}}, i32 22)
; CHECK: call i32 @tidal.atomic.cas.i32(ptr %{{.*}}, i32 23, i32 24)

; Global atomics: the launch runs alone (docs/cpu-target.md).
; HOST: define {{.*}}void @__tidal_block_atomics(ptr
; HOST-NOT: @tidal.
; HOST: !tidal.run.alone

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; Function Attrs: mustprogress norecurse nounwind memory(argmem: readwrite)
define dso_local void @atomics(ptr nocapture noundef %0, ptr nocapture noundef %1, ptr nocapture noundef %2, ptr nocapture noundef %3, ptr nocapture noundef %4, ptr nocapture noundef %5) local_unnamed_addr #0 {
  %7 = atomicrmw add ptr %0, i32 1 seq_cst, align 4
  %8 = atomicrmw add ptr %2, i64 2 seq_cst, align 8
  %9 = atomicrmw fadd ptr %4, float 3.000000e+00 seq_cst, align 4
  %10 = atomicrmw fadd ptr %5, double 4.000000e+00 seq_cst, align 8
  %11 = getelementptr inbounds i8, ptr %0, i64 4
  %12 = atomicrmw sub ptr %11, i32 5 seq_cst, align 4
  %13 = getelementptr inbounds i8, ptr %0, i64 8
  %14 = atomicrmw xchg ptr %13, i32 6 seq_cst, align 4
  %15 = getelementptr inbounds i8, ptr %2, i64 8
  %16 = atomicrmw xchg ptr %15, i64 7 seq_cst, align 8
  %17 = getelementptr inbounds i8, ptr %0, i64 12
  %18 = atomicrmw max ptr %17, i32 8 seq_cst, align 4
  %19 = atomicrmw umax ptr %1, i32 9 seq_cst, align 4
  %20 = getelementptr inbounds i8, ptr %0, i64 16
  %21 = atomicrmw min ptr %20, i32 10 seq_cst, align 4
  %22 = atomicrmw umin ptr %3, i64 11 seq_cst, align 8
  %23 = getelementptr inbounds i8, ptr %0, i64 20
  %24 = atomicrmw and ptr %23, i32 12 seq_cst, align 4
  %25 = getelementptr inbounds i8, ptr %2, i64 16
  %26 = atomicrmw or ptr %25, i64 13 seq_cst, align 8
  %27 = getelementptr inbounds i8, ptr %0, i64 24
  %28 = atomicrmw xor ptr %27, i32 14 seq_cst, align 4
  %29 = getelementptr inbounds i8, ptr %1, i64 4
  %30 = tail call i32 @llvm.nvvm.atomic.load.inc.32.p0(ptr nonnull %29, i32 15)
  %31 = getelementptr inbounds i8, ptr %1, i64 8
  %32 = tail call i32 @llvm.nvvm.atomic.load.dec.32.p0(ptr nonnull %31, i32 16)
  %33 = getelementptr inbounds i8, ptr %0, i64 32
  %34 = cmpxchg ptr %33, i32 17, i32 18 seq_cst seq_cst, align 4
  %35 = extractvalue { i32, i1 } %34, 0
  %36 = getelementptr inbounds i8, ptr %0, i64 28
  store i32 %35, ptr %36, align 4, !tbaa !5
  %37 = getelementptr inbounds i8, ptr %2, i64 32
  %38 = cmpxchg ptr %37, i64 19, i64 20 seq_cst seq_cst, align 8
  %39 = extractvalue { i64, i1 } %38, 0
  %40 = getelementptr inbounds i8, ptr %2, i64 24
  store i64 %39, ptr %40, align 8, !tbaa !9
  %41 = getelementptr inbounds i8, ptr %0, i64 36
  %42 = tail call i32 @llvm.nvvm.atomic.add.gen.i.cta.i32.p0(ptr nonnull %41, i32 21)
  %43 = getelementptr inbounds i8, ptr %0, i64 40
  %44 = tail call i32 @llvm.nvvm.atomic.exch.gen.i.sys.i32.p0(ptr nonnull %43, i32 22)
  %45 = getelementptr inbounds i8, ptr %0, i64 44
  %46 = tail call i32 @llvm.nvvm.atomic.cas.gen.i.cta.i32.p0(ptr nonnull %45, i32 23, i32 24)
  ret void
}

; Function Attrs: nocallback nounwind memory(argmem: readwrite)
declare i32 @llvm.nvvm.atomic.load.inc.32.p0(ptr nocapture, i32) #1

; Function Attrs: nocallback nounwind memory(argmem: readwrite)
declare i32 @llvm.nvvm.atomic.load.dec.32.p0(ptr nocapture, i32) #1

; Function Attrs: nocallback nounwind memory(argmem: readwrite)
declare i32 @llvm.nvvm.atomic.add.gen.i.cta.i32.p0(ptr nocapture, i32) #1

; Function Attrs: nocallback nounwind memory(argmem: readwrite)
declare i32 @llvm.nvvm.atomic.exch.gen.i.sys.i32.p0(ptr nocapture, i32) #1

; Function Attrs: nocallback nounwind memory(argmem: readwrite)
declare i32 @llvm.nvvm.atomic.cas.gen.i.cta.i32.p0(ptr nocapture, i32, i32) #1

attributes #0 = { mustprogress norecurse nounwind memory(argmem: readwrite) "frame-pointer"="all" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="sm_70" "target-features"="+ptx85,+sm_70" "uniform-work-group-size"="true" }
attributes #1 = { nocallback nounwind memory(argmem: readwrite) }

!nvvm.annotations = !{!0}
!llvm.module.flags = !{!1, !2, !3}

!0 = !{ptr @atomics, !"kernel", i32 1}
!1 = !{i32 1, !"wchar_size", i32 4}
!2 = !{i32 4, !"nvvm-reflect-ftz", i32 0}
!3 = !{i32 7, !"frame-pointer", i32 2}
!5 = !{!6, !6, i64 0}
!6 = !{!"int", !7, i64 0}
!7 = !{!"omnipotent char", !8, i64 0}
!8 = !{!"Simple C++ TBAA"}
!9 = !{!10, !10, i64 0}
!10 = !{!"long long", !7, i64 0}
