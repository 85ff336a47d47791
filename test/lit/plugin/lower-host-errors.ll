; The diagnostics of tidal-lower-host itself, one module per scenario (opt
; stops at the first error).
; RUN: rm -rf %t && split-file %s %t
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-lower-host -disable-output %t/called-kernel.ll 2>&1 | FileCheck %t/called-kernel.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-lower-host -disable-output %t/variadic.ll 2>&1 | FileCheck %t/variadic.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-lower-host -disable-output %t/taken-name.ll 2>&1 | FileCheck %t/taken-name.ll --check-prefix=ERR

;--- called-kernel.ll
; A kernel called from another function cannot be replaced by its block entry.
; ERR: error: tidal: cannot lower kernel 'kernel': it is used other than from !tidal.kernels (kernels cannot be called)
declare i32 @tidal.tid.x()

define void @kernel(ptr %out) {
  %t = call i32 @tidal.tid.x()
  store i32 %t, ptr %out
  ret void
}

define void @caller(ptr %out) {
  call void @kernel(ptr %out)
  ret void
}

!tidal.kernels = !{!0}
!0 = !{ptr @kernel}

;--- variadic.ll
; A variadic kernel has no fixed parameter list to load from params.
; ERR: error: tidal: cannot lower kernel 'kernel': kernels cannot be variadic
define void @kernel(ptr %out, ...) {
  store i32 0, ptr %out
  ret void
}

!tidal.kernels = !{!0}
!0 = !{ptr @kernel}

;--- taken-name.ll
; The module already has a function named like the block entry.
; ERR: error: tidal: cannot lower kernel 'kernel': the module already has a global named '__tidal_block_kernel'
define void @__tidal_block_kernel(ptr %params, ptr %ctx) {
  ret void
}

define void @kernel(ptr %out) {
  store i32 0, ptr %out
  ret void
}

!tidal.kernels = !{!0}
!0 = !{ptr @kernel}
