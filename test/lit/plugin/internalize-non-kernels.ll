; tidal-internalize-non-kernels makes every defined function but the kernels
; of !tidal.kernels internal, so that O3 may inline and delete them (and
; libdevice's); variables keep their linkage (the exception slot is read by
; name). tidal-nvptx runs it just before default<O3>.
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-internalize-non-kernels -S %s | FileCheck %s

; A variable keeps its linkage.
; CHECK: @table = global float 1.0
@table = global float 1.0

; The kernel keeps its linkage.
; CHECK-LABEL: define void @kernel(
define void @kernel(ptr %out) {
  %v = call float @helper()
  store float %v, ptr %out
  ret void
}

; A device function becomes internal.
; CHECK-LABEL: define internal float @helper(
define float @helper() {
  %v = load float, ptr @table
  ret float %v
}

; A declaration stays as it is.
; CHECK: declare float @external()
declare float @external()

!tidal.kernels = !{!0}
!0 = !{ptr @kernel}
