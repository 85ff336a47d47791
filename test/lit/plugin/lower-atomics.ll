; Every atomic marker becomes a monotonic atomicrmw / cmpxchg (CUDA's atomics
; are relaxed) returning the old value: signedness from the suffix for
; max/min, sub on floats as fadd of the negation; 32-bit inc/dec as PTX's
; atom.inc/dec.u32 (LLVM 19's NVPTX would expand uinc/udec_wrap into a CAS
; loop), 64-bit ones as uinc/udec_wrap (PTX has no atom.inc.u64).
; The PTX has atom.global/atom.shared; float max/min and 64-bit inc/dec are
; CAS loops (PTX has no such instructions): correct, not single instructions.
; Float max/min follow Numba's NaN rule (a NaN element stays, a NaN operand
; changes nothing): a helper per type and address space, at the end of the
; module, whose loop exchanges only while the operand compares ordered
; greater (less) than the element.
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-atomics -S %s | FileCheck %s
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-nvptx %s | llc -march=nvptx64 -mcpu=sm_75 -o %t.sm_75.ptx
; RUN: FileCheck %s --check-prefix=PTX < %t.sm_75.ptx
; RUN: opt -load-pass-plugin=%plugin -passes='tidal-nvptx<sm=80>' %s | llc -march=nvptx64 -mcpu=sm_80 -o %t.sm_80.ptx
; RUN: opt -load-pass-plugin=%plugin -passes='tidal-nvptx<sm=90>' %s | llc -march=nvptx64 -mcpu=sm_90 -o %t.sm_90.ptx
; RUN: FileCheck %s --check-prefix=PTX < %t.sm_90.ptx
; RUN: %if ptxas %{ %ptxas -arch=sm_75 %t.sm_75.ptx -o %t.cubin %}
; RUN: %if ptxas %{ %ptxas -arch=sm_80 %t.sm_80.ptx -o %t.cubin %}
; RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.sm_90.ptx -o %t.cubin %}
;
; What it decided, under Debian's NDEBUG opt-19 too (DebugOutput.cpp):
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-atomics -disable-output -debug-only=tidal-lower-atomics -stats %s 2>&1 | FileCheck %s --check-prefix=DEBUG
; DEBUG: tidal-lower-atomics: tidal.atomic.add.i32 in 'add_i32' becomes   %1 = atomicrmw add ptr %p, i32 %v monotonic, align 4
; DEBUG: tidal-lower-atomics: tidal.atomic.sub.f32 in 'sub_f32' becomes   %2 = atomicrmw fadd ptr %p, float %1 monotonic, align 4
; DEBUG: becomes a compare-exchange loop on NVPTX
; DEBUG: 34 tidal-lower-atomics - Atomic markers lowered
; DEBUG:  8 tidal-lower-atomics - Atomics that NVPTX will expand into a compare-exchange loop

; CHECK-NOT: @tidal.
declare i32 @tidal.atomic.add.i32(ptr, i32)
declare i64 @tidal.atomic.add.u64(ptr, i64)
declare float @tidal.atomic.add.f32(ptr, float)
declare double @tidal.atomic.add.f64(ptr, double)
declare half @tidal.atomic.add.f16(ptr, half)
declare i32 @tidal.atomic.sub.i32(ptr, i32)
declare float @tidal.atomic.sub.f32(ptr, float)
declare double @tidal.atomic.sub.f64(ptr, double)
declare i32 @tidal.atomic.exch.u32(ptr, i32)
declare float @tidal.atomic.exch.f32(ptr, float)
declare double @tidal.atomic.exch.f64(ptr, double)
declare i32 @tidal.atomic.max.i32(ptr, i32)
declare i32 @tidal.atomic.max.u32(ptr, i32)
declare i64 @tidal.atomic.max.i64(ptr, i64)
declare i64 @tidal.atomic.max.u64(ptr, i64)
declare float @tidal.atomic.max.f32(ptr, float)
declare double @tidal.atomic.max.f64(ptr, double)
declare i32 @tidal.atomic.min.i32(ptr, i32)
declare i64 @tidal.atomic.min.u64(ptr, i64)
declare float @tidal.atomic.min.f32(ptr, float)
declare double @tidal.atomic.min.f64(ptr, double)
declare float @tidal.atomic.nanmax.f32(ptr, float)
declare double @tidal.atomic.nanmin.f64(ptr, double)
declare i32 @tidal.atomic.nanmax.u32(ptr, i32)
declare i64 @tidal.atomic.nanmin.i64(ptr, i64)
declare i32 @tidal.atomic.and.i32(ptr, i32)
declare i64 @tidal.atomic.or.u64(ptr, i64)
declare i64 @tidal.atomic.xor.i64(ptr, i64)
declare i32 @tidal.atomic.inc.u32(ptr, i32)
declare i64 @tidal.atomic.inc.u64(ptr, i64)
declare i32 @tidal.atomic.dec.u32(ptr, i32)
declare i64 @tidal.atomic.dec.u64(ptr, i64)
declare i32 @tidal.atomic.cas.i32(ptr, i32, i32)
declare i64 @tidal.atomic.cas.u64(ptr, i64, i64)

; atomic.add.i32
; CHECK-LABEL: define void @add_i32(
; CHECK-NEXT:    %old = atomicrmw add ptr %p, i32 %v monotonic, align 4
; PTX-LABEL: .entry add_i32(
; PTX:         atom.global.add.u32
define void @add_i32(ptr %p, i32 %v) {
  %old = call i32 @tidal.atomic.add.i32(ptr %p, i32 %v)
  store i32 %old, ptr %p
  ret void
}

; atomic.add.u64
; CHECK-LABEL: define void @add_u64(
; CHECK-NEXT:    %old = atomicrmw add ptr %p, i64 %v monotonic, align 8
; PTX-LABEL: .entry add_u64(
; PTX:         atom.global.add.u64
define void @add_u64(ptr %p, i64 %v) {
  %old = call i64 @tidal.atomic.add.u64(ptr %p, i64 %v)
  store i64 %old, ptr %p
  ret void
}

; atomic.add.f32
; CHECK-LABEL: define void @add_f32(
; CHECK-NEXT:    %old = atomicrmw fadd ptr %p, float %v monotonic, align 4
; PTX-LABEL: .entry add_f32(
; PTX:         atom.global.add.f32
define void @add_f32(ptr %p, float %v) {
  %old = call float @tidal.atomic.add.f32(ptr %p, float %v)
  store float %old, ptr %p
  ret void
}

; atomic.add.f64
; CHECK-LABEL: define void @add_f64(
; CHECK-NEXT:    %old = atomicrmw fadd ptr %p, double %v monotonic, align 8
; PTX-LABEL: .entry add_f64(
; PTX:         atom.global.add.f64
define void @add_f64(ptr %p, double %v) {
  %old = call double @tidal.atomic.add.f64(ptr %p, double %v)
  store double %old, ptr %p
  ret void
}

; atomic.add.f16 (cuda.fp16.atomicAdd): PTX's half add, sm_70 and up
; CHECK-LABEL: define void @add_f16(
; CHECK-NEXT:    %old = atomicrmw fadd ptr %p, half %v monotonic, align 2
; PTX-LABEL: .entry add_f16(
; PTX:         atom.global.add.noftz.f16
define void @add_f16(ptr %p, half %v) {
  %old = call half @tidal.atomic.add.f16(ptr %p, half %v)
  store half %old, ptr %p
  ret void
}

; atomic.sub.i32
; CHECK-LABEL: define void @sub_i32(
; CHECK-NEXT:    %old = atomicrmw sub ptr %p, i32 %v monotonic, align 4
; PTX-LABEL: .entry sub_i32(
; PTX:         atom.global.add.u32
define void @sub_i32(ptr %p, i32 %v) {
  %old = call i32 @tidal.atomic.sub.i32(ptr %p, i32 %v)
  store i32 %old, ptr %p
  ret void
}

; atomic.sub.f32
; CHECK-LABEL: define void @sub_f32(
; CHECK-NEXT:    %1 = fneg float %v
; CHECK-NEXT:    %old = atomicrmw fadd ptr %p, float %1 monotonic, align 4
; PTX-LABEL: .entry sub_f32(
; PTX:         atom.global.add.f32
define void @sub_f32(ptr %p, float %v) {
  %old = call float @tidal.atomic.sub.f32(ptr %p, float %v)
  store float %old, ptr %p
  ret void
}

; atomic.sub.f64
; CHECK-LABEL: define void @sub_f64(
; CHECK-NEXT:    %1 = fneg double %v
; CHECK-NEXT:    %old = atomicrmw fadd ptr %p, double %1 monotonic, align 8
; PTX-LABEL: .entry sub_f64(
; PTX:         atom.global.add.f64
define void @sub_f64(ptr %p, double %v) {
  %old = call double @tidal.atomic.sub.f64(ptr %p, double %v)
  store double %old, ptr %p
  ret void
}

; atomic.exch.u32
; CHECK-LABEL: define void @exch_u32(
; CHECK-NEXT:    %old = atomicrmw xchg ptr %p, i32 %v monotonic, align 4
; PTX-LABEL: .entry exch_u32(
; PTX:         atom.global.exch.b32
define void @exch_u32(ptr %p, i32 %v) {
  %old = call i32 @tidal.atomic.exch.u32(ptr %p, i32 %v)
  store i32 %old, ptr %p
  ret void
}

; atomic.exch.f32
; CHECK-LABEL: define void @exch_f32(
; CHECK-NEXT:    %old = atomicrmw xchg ptr %p, float %v monotonic, align 4
; PTX-LABEL: .entry exch_f32(
; PTX:         atom.global.exch.b32
define void @exch_f32(ptr %p, float %v) {
  %old = call float @tidal.atomic.exch.f32(ptr %p, float %v)
  store float %old, ptr %p
  ret void
}

; atomic.exch.f64
; CHECK-LABEL: define void @exch_f64(
; CHECK-NEXT:    %old = atomicrmw xchg ptr %p, double %v monotonic, align 8
; PTX-LABEL: .entry exch_f64(
; PTX:         atom.global.exch.b64
define void @exch_f64(ptr %p, double %v) {
  %old = call double @tidal.atomic.exch.f64(ptr %p, double %v)
  store double %old, ptr %p
  ret void
}

; atomic.max.i32
; CHECK-LABEL: define void @max_i32(
; CHECK-NEXT:    %old = atomicrmw max ptr %p, i32 %v monotonic, align 4
; PTX-LABEL: .entry max_i32(
; PTX:         atom.global.max.s32
define void @max_i32(ptr %p, i32 %v) {
  %old = call i32 @tidal.atomic.max.i32(ptr %p, i32 %v)
  store i32 %old, ptr %p
  ret void
}

; atomic.max.u32
; CHECK-LABEL: define void @max_u32(
; CHECK-NEXT:    %old = atomicrmw umax ptr %p, i32 %v monotonic, align 4
; PTX-LABEL: .entry max_u32(
; PTX:         atom.global.max.u32
define void @max_u32(ptr %p, i32 %v) {
  %old = call i32 @tidal.atomic.max.u32(ptr %p, i32 %v)
  store i32 %old, ptr %p
  ret void
}

; atomic.max.i64
; CHECK-LABEL: define void @max_i64(
; CHECK-NEXT:    %old = atomicrmw max ptr %p, i64 %v monotonic, align 8
; PTX-LABEL: .entry max_i64(
; PTX:         atom.global.max.s64
define void @max_i64(ptr %p, i64 %v) {
  %old = call i64 @tidal.atomic.max.i64(ptr %p, i64 %v)
  store i64 %old, ptr %p
  ret void
}

; atomic.max.u64
; CHECK-LABEL: define void @max_u64(
; CHECK-NEXT:    %old = atomicrmw umax ptr %p, i64 %v monotonic, align 8
; PTX-LABEL: .entry max_u64(
; PTX:         atom.global.max.u64
define void @max_u64(ptr %p, i64 %v) {
  %old = call i64 @tidal.atomic.max.u64(ptr %p, i64 %v)
  store i64 %old, ptr %p
  ret void
}

; atomic.max.f32
; CHECK-LABEL: define void @max_f32(
; CHECK-NEXT:    %old = call float @tidal_atomic_ordered_max_f32_p0(ptr %p, float %v)
; PTX-LABEL: .entry max_f32(
; PTX:         atom.global.cas.b32
define void @max_f32(ptr %p, float %v) {
  %old = call float @tidal.atomic.max.f32(ptr %p, float %v)
  store float %old, ptr %p
  ret void
}

; atomic.max.f64
; CHECK-LABEL: define void @max_f64(
; CHECK-NEXT:    %old = call double @tidal_atomic_ordered_max_f64_p0(ptr %p, double %v)
; PTX-LABEL: .entry max_f64(
; PTX:         atom.global.cas.b64
define void @max_f64(ptr %p, double %v) {
  %old = call double @tidal.atomic.max.f64(ptr %p, double %v)
  store double %old, ptr %p
  ret void
}

; atomic.min.i32
; CHECK-LABEL: define void @min_i32(
; CHECK-NEXT:    %old = atomicrmw min ptr %p, i32 %v monotonic, align 4
; PTX-LABEL: .entry min_i32(
; PTX:         atom.global.min.s32
define void @min_i32(ptr %p, i32 %v) {
  %old = call i32 @tidal.atomic.min.i32(ptr %p, i32 %v)
  store i32 %old, ptr %p
  ret void
}

; atomic.min.u64
; CHECK-LABEL: define void @min_u64(
; CHECK-NEXT:    %old = atomicrmw umin ptr %p, i64 %v monotonic, align 8
; PTX-LABEL: .entry min_u64(
; PTX:         atom.global.min.u64
define void @min_u64(ptr %p, i64 %v) {
  %old = call i64 @tidal.atomic.min.u64(ptr %p, i64 %v)
  store i64 %old, ptr %p
  ret void
}

; atomic.min.f32
; CHECK-LABEL: define void @min_f32(
; CHECK-NEXT:    %old = call float @tidal_atomic_ordered_min_f32_p0(ptr %p, float %v)
; PTX-LABEL: .entry min_f32(
; PTX:         atom.global.cas.b32
define void @min_f32(ptr %p, float %v) {
  %old = call float @tidal.atomic.min.f32(ptr %p, float %v)
  store float %old, ptr %p
  ret void
}

; atomic.min.f64
; CHECK-LABEL: define void @min_f64(
; CHECK-NEXT:    %old = call double @tidal_atomic_ordered_min_f64_p0(ptr %p, double %v)
; PTX-LABEL: .entry min_f64(
; PTX:         atom.global.cas.b64
define void @min_f64(ptr %p, double %v) {
  %old = call double @tidal.atomic.min.f64(ptr %p, double %v)
  store double %old, ptr %p
  ret void
}

; atomic.and.i32
; CHECK-LABEL: define void @and_i32(
; CHECK-NEXT:    %old = atomicrmw and ptr %p, i32 %v monotonic, align 4
; PTX-LABEL: .entry and_i32(
; PTX:         atom.global.and.b32
define void @and_i32(ptr %p, i32 %v) {
  %old = call i32 @tidal.atomic.and.i32(ptr %p, i32 %v)
  store i32 %old, ptr %p
  ret void
}

; atomic.or.u64
; CHECK-LABEL: define void @or_u64(
; CHECK-NEXT:    %old = atomicrmw or ptr %p, i64 %v monotonic, align 8
; PTX-LABEL: .entry or_u64(
; PTX:         atom.global.or.b64
define void @or_u64(ptr %p, i64 %v) {
  %old = call i64 @tidal.atomic.or.u64(ptr %p, i64 %v)
  store i64 %old, ptr %p
  ret void
}

; atomic.xor.i64
; CHECK-LABEL: define void @xor_i64(
; CHECK-NEXT:    %old = atomicrmw xor ptr %p, i64 %v monotonic, align 8
; PTX-LABEL: .entry xor_i64(
; PTX:         atom.global.xor.b64
define void @xor_i64(ptr %p, i64 %v) {
  %old = call i64 @tidal.atomic.xor.i64(ptr %p, i64 %v)
  store i64 %old, ptr %p
  ret void
}

; atomic.inc.u32
; CHECK-LABEL: define void @inc_u32(
; CHECK-NEXT:    %old = call i32 asm sideeffect "atom.inc.u32 $0, [$1], $2;", "=r,l,r,~{memory}"(ptr %p, i32 %v)
; PTX-LABEL: .entry inc_u32(
; PTX:         atom.inc.u32
define void @inc_u32(ptr %p, i32 %v) {
  %old = call i32 @tidal.atomic.inc.u32(ptr %p, i32 %v)
  store i32 %old, ptr %p
  ret void
}

; atomic.inc.u64
; CHECK-LABEL: define void @inc_u64(
; CHECK-NEXT:    %old = atomicrmw uinc_wrap ptr %p, i64 %v monotonic, align 8
; PTX-LABEL: .entry inc_u64(
; PTX:         atom.global.cas.b64
define void @inc_u64(ptr %p, i64 %v) {
  %old = call i64 @tidal.atomic.inc.u64(ptr %p, i64 %v)
  store i64 %old, ptr %p
  ret void
}

; atomic.dec.u32
; CHECK-LABEL: define void @dec_u32(
; CHECK-NEXT:    %old = call i32 asm sideeffect "atom.dec.u32 $0, [$1], $2;", "=r,l,r,~{memory}"(ptr %p, i32 %v)
; PTX-LABEL: .entry dec_u32(
; PTX:         atom.dec.u32
define void @dec_u32(ptr %p, i32 %v) {
  %old = call i32 @tidal.atomic.dec.u32(ptr %p, i32 %v)
  store i32 %old, ptr %p
  ret void
}

; atomic.dec.u64
; CHECK-LABEL: define void @dec_u64(
; CHECK-NEXT:    %old = atomicrmw udec_wrap ptr %p, i64 %v monotonic, align 8
; PTX-LABEL: .entry dec_u64(
; PTX:         atom.global.cas.b64
define void @dec_u64(ptr %p, i64 %v) {
  %old = call i64 @tidal.atomic.dec.u64(ptr %p, i64 %v)
  store i64 %old, ptr %p
  ret void
}

; atomic.cas: cmpxchg, the old value is its first field.
; CHECK-LABEL: define void @cas_i32(
; CHECK-NEXT:    %1 = cmpxchg ptr %p, i32 %cmp, i32 %v monotonic monotonic, align 4
; CHECK-NEXT:    %old = extractvalue { i32, i1 } %1, 0
; PTX-LABEL: .entry cas_i32(
; PTX:         atom.global.cas.b32
define void @cas_i32(ptr %p, i32 %cmp, i32 %v) {
  %old = call i32 @tidal.atomic.cas.i32(ptr %p, i32 %cmp, i32 %v)
  store i32 %old, ptr %p
  ret void
}

; An atomic on a shared array: atom.shared once the address space is known.
; CHECK-LABEL: define void @cas_shared_u64(
; CHECK:         cmpxchg ptr %s, i64 %cmp, i64 %v monotonic monotonic, align 8
; PTX-LABEL: .entry cas_shared_u64(
; PTX:         atom.shared.cas.b64
declare ptr @tidal.shared.array(i64, i64)
define void @cas_shared_u64(ptr %out, i64 %cmp, i64 %v) {
  %s = call ptr @tidal.shared.array(i64 8, i64 8)
  %old = call i64 @tidal.atomic.cas.u64(ptr %s, i64 %cmp, i64 %v)
  store i64 %old, ptr %out
  ret void
}

!tidal.kernels = !{!0, !1, !2, !3, !4, !5, !6, !7, !8, !9, !10, !11, !12, !13, !14, !15, !16, !17, !18, !19, !20, !21, !22, !23, !24, !25, !26, !27, !28, !29, !30, !31, !32, !33}
!0 = !{ptr @add_i32}
!1 = !{ptr @add_u64}
!2 = !{ptr @add_f32}
!3 = !{ptr @add_f64}
!4 = !{ptr @sub_i32}
!5 = !{ptr @sub_f32}
!6 = !{ptr @sub_f64}
!7 = !{ptr @exch_u32}
!8 = !{ptr @exch_f32}
!9 = !{ptr @exch_f64}
!10 = !{ptr @max_i32}
!11 = !{ptr @max_u32}
!12 = !{ptr @max_i64}
!13 = !{ptr @max_u64}
!14 = !{ptr @max_f32}
!15 = !{ptr @max_f64}
!16 = !{ptr @min_i32}
!17 = !{ptr @min_u64}
!18 = !{ptr @min_f32}
!19 = !{ptr @min_f64}
!20 = !{ptr @and_i32}
!21 = !{ptr @or_u64}
!22 = !{ptr @xor_i64}
!23 = !{ptr @inc_u32}
!24 = !{ptr @inc_u64}
!25 = !{ptr @dec_u32}
!26 = !{ptr @dec_u64}
!27 = !{ptr @cas_i32}
!28 = !{ptr @cas_shared_u64}

; atomic.nanmax/nanmin: NaN as missing, which is what maxnum/minnum do
; CHECK-LABEL: define void @nanmax_f32(
; CHECK-NEXT:    %old = atomicrmw fmax ptr %p, float %v monotonic, align 4
; PTX-LABEL: .entry nanmax_f32(
; PTX:         max.f32
; PTX:         atom.global.cas.b32
define void @nanmax_f32(ptr %p, float %v) {
  %old = call float @tidal.atomic.nanmax.f32(ptr %p, float %v)
  store float %old, ptr %p
  ret void
}

; CHECK-LABEL: define void @nanmin_f64(
; CHECK-NEXT:    %old = atomicrmw fmin ptr %p, double %v monotonic, align 8
; PTX-LABEL: .entry nanmin_f64(
; PTX:         min.f64
; PTX:         atom.global.cas.b64
define void @nanmin_f64(ptr %p, double %v) {
  %old = call double @tidal.atomic.nanmin.f64(ptr %p, double %v)
  store double %old, ptr %p
  ret void
}

; CHECK-LABEL: define void @nanmax_u32(
; CHECK-NEXT:    %old = atomicrmw umax ptr %p, i32 %v monotonic, align 4
; PTX-LABEL: .entry nanmax_u32(
; PTX:         atom.global.max.u32
define void @nanmax_u32(ptr %p, i32 %v) {
  %old = call i32 @tidal.atomic.nanmax.u32(ptr %p, i32 %v)
  store i32 %old, ptr %p
  ret void
}

; CHECK-LABEL: define void @nanmin_i64(
; CHECK-NEXT:    %old = atomicrmw min ptr %p, i64 %v monotonic, align 8
; PTX-LABEL: .entry nanmin_i64(
; PTX:         atom.global.min.s64
define void @nanmin_i64(ptr %p, i64 %v) {
  %old = call i64 @tidal.atomic.nanmin.i64(ptr %p, i64 %v)
  store i64 %old, ptr %p
  ret void
}
!29 = !{ptr @nanmax_f32}
!30 = !{ptr @nanmin_f64}
!31 = !{ptr @nanmax_u32}
!32 = !{ptr @nanmin_i64}
!33 = !{ptr @add_f16}

; The helpers of float max/min (OrderedFloatLoop), appended to the module.
; CHECK-LABEL: define internal float @tidal_atomic_ordered_max_f32_p0(ptr %p, float %v)
; CHECK:         %first = load atomic i32, ptr %p monotonic, align 4
; CHECK:       compare:
; CHECK-NEXT:    %seen.bits = phi i32 [ %first, %entry ], [ %found.bits, %exchange ]
; CHECK-NEXT:    %seen = bitcast i32 %seen.bits to float
; CHECK-NEXT:    [[REPLACE:%.*]] = fcmp ogt float %v, %seen
; CHECK-NEXT:    br i1 [[REPLACE]], label %exchange, label %done
; CHECK:       exchange:
; CHECK-NEXT:    [[PAIR:%.*]] = cmpxchg ptr %p, i32 %seen.bits, i32 %v.bits monotonic monotonic, align 4
; CHECK:       done:
; CHECK-NEXT:    ret float %seen
; CHECK-LABEL: define internal double @tidal_atomic_ordered_max_f64_p0(
; CHECK:         fcmp ogt double %v, %seen
; CHECK:         cmpxchg ptr %p, i64 %seen.bits, i64 %v.bits monotonic monotonic, align 8
; CHECK-LABEL: define internal float @tidal_atomic_ordered_min_f32_p0(
; CHECK:         fcmp olt float %v, %seen
; CHECK-LABEL: define internal double @tidal_atomic_ordered_min_f64_p0(
; CHECK:         fcmp olt double %v, %seen
