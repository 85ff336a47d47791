; tidal-verify-markers reports every tidal.* function still used, naming the
; marker and the function using it (and the source line when the call has
; one). opt stops at the first error, so each scenario is its own module.
; RUN: rm -rf %t && split-file %s %t
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-verify-markers -disable-output %t/unknown.ll 2>&1 | FileCheck %t/unknown.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-lower-nvptx -disable-output %t/unknown.ll 2>&1 | FileCheck %t/unknown.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-lower-host -disable-output %t/unknown.ll 2>&1 | FileCheck %t/unknown.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-lower-nvptx -disable-output %t/declared-type.ll 2>&1 | FileCheck %t/declared-type.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-lower-host -disable-output %t/called-type.ll 2>&1 | FileCheck %t/called-type.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-lower-nvptx -disable-output %t/not-called.ll 2>&1 | FileCheck %t/not-called.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-lower-nvptx -disable-output %t/defined.ll 2>&1 | FileCheck %t/defined.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-lower-host -disable-output %t/unreachable.ll 2>&1 | FileCheck %t/unreachable.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-lower-nvptx -disable-output %t/unreachable.ll 2>&1 | FileCheck %t/unreachable.ll --check-prefix=NVPTX
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-lower-host -disable-output %t/recursive.ll 2>&1 | FileCheck %t/recursive.ll --check-prefix=ERR
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-verify-markers -S %t/clean.ll | FileCheck %t/clean.ll

;--- unknown.ll
; A tidal.* name the contract does not have, in a kernel, with a location;
; under tidal-lower-host the kernel is left alone so the message still names it.
; ERR: error: tidal: unknown marker 'tidal.warp.vote' in function 'kernel' at kernel.py:7:5
declare i32 @tidal.warp.vote()
declare i32 @tidal.tid.x()

define void @kernel(ptr %out) !dbg !4 {
  %t = call i32 @tidal.tid.x(), !dbg !7
  %v = call i32 @tidal.warp.vote(), !dbg !8
  %s = add i32 %t, %v
  store i32 %s, ptr %out
  ret void
}

!tidal.kernels = !{!0}
!0 = !{ptr @kernel}
!llvm.dbg.cu = !{!1}
!llvm.module.flags = !{!3}
!1 = distinct !DICompileUnit(language: DW_LANG_Python, file: !2, producer: "tidal", isOptimized: false, runtimeVersion: 0, emissionKind: LineTablesOnly)
!2 = !DIFile(filename: "kernel.py", directory: "/src")
!3 = !{i32 2, !"Debug Info Version", i32 3}
!4 = distinct !DISubprogram(name: "kernel", scope: !2, file: !2, line: 5, type: !5, scopeLine: 5, spFlags: DISPFlagDefinition, unit: !1)
!5 = !DISubroutineType(types: !6)
!6 = !{}
!7 = !DILocation(line: 6, column: 9, scope: !4)
!8 = !DILocation(line: 7, column: 5, scope: !4)

;--- declared-type.ll
; A known marker declared with another type.
; ERR: error: tidal: marker 'tidal.tid.x' in function 'kernel': declared as 'i64 (i32)', expected 'i32 ()'
declare i64 @tidal.tid.x(i32)

define void @kernel(ptr %out) {
  %t = call i64 @tidal.tid.x(i32 0)
  store i64 %t, ptr %out
  ret void
}

!tidal.kernels = !{!0}
!0 = !{ptr @kernel}

;--- called-type.ll
; A known marker, declared right, called with another type.
; ERR: error: tidal: marker 'tidal.ntid.x' in function 'kernel': called as 'i64 ()', expected 'i32 ()'
declare i32 @tidal.ntid.x()

define void @kernel(ptr %out) {
  %t = call i64 @tidal.ntid.x()
  store i64 %t, ptr %out
  ret void
}

!tidal.kernels = !{!0}
!0 = !{ptr @kernel}

;--- not-called.ll
; A marker's address taken instead of called.
; ERR: error: tidal: marker 'tidal.ctaid.x' in function 'kernel': used other than as the callee of a call
declare i32 @tidal.ctaid.x()

define void @kernel(ptr %out) {
  store ptr @tidal.ctaid.x, ptr %out
  ret void
}

!tidal.kernels = !{!0}
!0 = !{ptr @kernel}

;--- defined.ll
; A marker with a body: markers are declared only.
; ERR: error: tidal: marker 'tidal.tid.x' is defined in the module; markers are only declared
define i32 @tidal.tid.x() {
  ret i32 0
}

define void @kernel(ptr %out) {
  %t = call i32 @tidal.tid.x()
  store i32 %t, ptr %out
  ret void
}

!tidal.kernels = !{!0}
!0 = !{ptr @kernel}

;--- unreachable.ll
; A marker in a function that is neither a kernel nor called from one is an
; error on both targets (it means "this thread", and no thread runs it).
; ERR: error: tidal: marker 'tidal.ctaid.x' in function 'helper' was not lowered: markers can only be used in kernels (!tidal.kernels) and in the non-recursive functions they call
; NVPTX: error: tidal: marker 'tidal.ctaid.x' in function 'helper', which is neither a kernel (!tidal.kernels) nor called from one
declare i32 @tidal.ctaid.x()

define void @kernel(ptr %out) {
  store i32 0, ptr %out
  ret void
}

define void @helper(ptr %out) {
  %b = call i32 @tidal.ctaid.x()
  store i32 %b, ptr %out
  ret void
}

!tidal.kernels = !{!0}
!0 = !{ptr @kernel}

;--- recursive.ll
; On the host, a recursive function cannot be inlined into the kernel, so
; its markers stay.
; ERR: error: tidal: marker 'tidal.tid.x' in function 'countdown' was not lowered
declare i32 @tidal.tid.x()

define i32 @countdown(i32 %n) {
  %t = call i32 @tidal.tid.x()
  %done = icmp eq i32 %n, 0
  br i1 %done, label %exit, label %again
again:
  %m = sub i32 %n, 1
  %r = call i32 @countdown(i32 %m)
  ret i32 %r
exit:
  ret i32 %t
}

define void @kernel(ptr %out) {
  %r = call i32 @countdown(i32 3)
  store i32 %r, ptr %out
  ret void
}

!tidal.kernels = !{!0}
!0 = !{ptr @kernel}

;--- clean.ll
; Nothing left to report: the module passes unchanged.
; CHECK-LABEL: define void @kernel(
; CHECK-NEXT:    store i32 0, ptr %out
define void @kernel(ptr %out) {
  store i32 0, ptr %out
  ret void
}
