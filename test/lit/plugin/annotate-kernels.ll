; tidal-annotate-kernels makes the kernels of !tidal.kernels NVPTX entries and
; marks their pointer parameters global; tidal-lower-nvptx then gives
; addrspace(1) loads and stores.
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-annotate-kernels -S %s | FileCheck %s
; RUN: opt -load-pass-plugin=%plugin -passes='tidal-annotate-kernels<sm=90>' -S %s | FileCheck %s --check-prefix=SM90
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-nvptx -S %s | FileCheck %s --check-prefix=NVPTX
; RUN: not opt -load-pass-plugin=%plugin -passes='tidal-lower-nvptx<sm=abc>' -disable-output %s 2>&1 | FileCheck %s --check-prefix=PARAM

; The module had no triple or data layout: it gets NVPTX64's.
; CHECK: target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
; CHECK: target triple = "nvptx64-nvidia-cuda"

; A kernel: each used pointer parameter goes to addrspace(1) and back, and
; the round trip replaces it; the unused one and the integers are untouched.
; CHECK-LABEL: define void @kernel(
; CHECK-SAME:    ptr %out, i64 %out.shape0, i64 %out.stride0, ptr %in, ptr %unused) #[[ATTRS:[0-9]+]] {
; CHECK-NEXT:    %out.global = addrspacecast ptr %out to ptr addrspace(1)
; CHECK-NEXT:    %out.generic = addrspacecast ptr addrspace(1) %out.global to ptr
; CHECK-NEXT:    %in.global = addrspacecast ptr %in to ptr addrspace(1)
; CHECK-NEXT:    %in.generic = addrspacecast ptr addrspace(1) %in.global to ptr
; CHECK-NEXT:    %offset = mul i64 %out.shape0, %out.stride0
; CHECK-NEXT:    %v = load float, ptr %in.generic
; CHECK-NEXT:    %p = getelementptr i8, ptr %out.generic, i64 %offset
; CHECK-NEXT:    store float %v, ptr %p
; NVPTX-LABEL: define void @kernel(
; NVPTX:         %v = load float, ptr addrspace(1) %in.global
; NVPTX:         %p = getelementptr i8, ptr addrspace(1) %out.global, i64 %offset
; NVPTX-NEXT:    store float %v, ptr addrspace(1) %p
define void @kernel(ptr %out, i64 %out.shape0, i64 %out.stride0, ptr %in, ptr %unused) {
  %offset = mul i64 %out.shape0, %out.stride0
  %v = load float, ptr %in
  %p = getelementptr i8, ptr %out, i64 %offset
  store float %v, ptr %p
  ret void
}

; A device function: its pointers may point anywhere, so they stay generic,
; and it is not annotated; it gets the same target-cpu as the kernels.
; CHECK-LABEL: define void @copy(
; CHECK-SAME:    ptr %dst, ptr %src) #[[ATTRS]] {
; CHECK-NEXT:    %v = load float, ptr %src
; CHECK-NEXT:    store float %v, ptr %dst
; NVPTX-LABEL: define void @copy(
; NVPTX-NEXT:    %v = load float, ptr %src
; NVPTX-NEXT:    store float %v, ptr %dst
define void @copy(ptr %dst, ptr %src) {
  %v = load float, ptr %src
  store float %v, ptr %dst
  ret void
}

; The SM is recorded as target-cpu (sm_75 unless given).
; CHECK: attributes #[[ATTRS]] = { "target-cpu"="sm_75" }
; SM90: attributes #{{[0-9]+}} = { "target-cpu"="sm_90" }

; One "kernel" annotation, for @kernel only.
; CHECK: !nvvm.annotations = !{![[ANNOTATION:[0-9]+]]}
; CHECK: ![[ANNOTATION]] = !{ptr @kernel, !"kernel", i32 1}
; NVPTX: !nvvm.annotations = !{![[ANNOTATION:[0-9]+]]}
; NVPTX: ![[ANNOTATION]] = !{ptr @kernel, !"kernel", i32 1}

; A malformed parameter is refused with the reason.
; PARAM: tidal: tidal-lower-nvptx: invalid parameter 'sm=abc' (expected sm=N, e.g. sm=90)

!tidal.kernels = !{!0}
!0 = !{ptr @kernel}
