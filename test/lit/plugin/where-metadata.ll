; !tidal.where (docs/markers.md, "Diagnostics"): the frontend's
; !{!"file:line:col"} on marker calls of a module without debug locations.
; Both lowerings name it in their errors; a debug location, where there is
; one, wins; the host lowering names each barrier with it (the divergent
; barrier report); it changes no lowering.
; RUN: rm -rf %t && split-file %s %t
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-host -S %t/barrier.ll | FileCheck %t/barrier.ll --check-prefix=HOST
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-nvptx -S %t/barrier.ll | FileCheck %t/barrier.ll --check-prefix=NVPTX
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-lower-host -disable-output %t/unknown.ll 2>&1 | FileCheck %t/unknown.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-lower-nvptx -disable-output %t/unknown.ll 2>&1 | FileCheck %t/unknown.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-lower-host -disable-output %t/arguments.ll 2>&1 | FileCheck %t/arguments.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-lower-nvptx -disable-output %t/arguments.ll 2>&1 | FileCheck %t/arguments.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-lower-host -disable-output %t/debug-wins.ll 2>&1 | FileCheck %t/debug-wins.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-lower-nvptx -disable-output %t/debug-wins.ll 2>&1 | FileCheck %t/debug-wins.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-lower-nvptx -disable-output %t/malformed.ll 2>&1 | FileCheck %t/malformed.ll --check-prefix=ERR

;--- barrier.ll
; The barrier's name in the host's sync point table carries the place; the
; lowered code is the same as without it.
; HOST: @kernel.sync.{{[0-9]+}} = private unnamed_addr constant [29 x i8] c"syncthreads at kernel.py:4:5\00"
; HOST-LABEL: define {{.*}}@kernel.thread(
; HOST-NOT: @tidal.
; NVPTX-LABEL: define void @kernel(
; NVPTX: call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
; NVPTX: call void @llvm.nvvm.barrier0()
; NVPTX-NOT: @tidal.
declare i32 @tidal.tid.x()
declare void @tidal.syncthreads()

define void @kernel(ptr %out) {
  %t = call i32 @tidal.tid.x(), !tidal.where !1
  call void @tidal.syncthreads(), !tidal.where !2
  store i32 %t, ptr %out
  ret void
}

!tidal.kernels = !{!0}
!0 = !{ptr @kernel}
!1 = !{!"kernel.py:3:9"}
!2 = !{!"kernel.py:4:5"}

;--- unknown.ll
; ERR: error: tidal: unknown marker 'tidal.warp.vote' in function 'kernel' at kernel.py:7:5
declare i32 @tidal.warp.vote()

define void @kernel(ptr %out) {
  %v = call i32 @tidal.warp.vote(), !tidal.where !1
  store i32 %v, ptr %out
  ret void
}

!tidal.kernels = !{!0}
!0 = !{ptr @kernel}
!1 = !{!"kernel.py:7:5"}

;--- arguments.ll
; A refused argument (a shared array of non-constant size), located.
; ERR: error: tidal: marker 'tidal.shared.array' in function 'kernel' at kernel.py:5:11
declare ptr @tidal.shared.array(i64, i64)

define void @kernel(ptr %out, i64 %n) {
  %a = call ptr @tidal.shared.array(i64 %n, i64 4), !tidal.where !1
  store ptr %a, ptr %out
  ret void
}

!tidal.kernels = !{!0}
!0 = !{ptr @kernel}
!1 = !{!"kernel.py:5:11"}

;--- debug-wins.ll
; A debug location and !tidal.where both: the debug location is named.
; ERR: error: tidal: unknown marker 'tidal.warp.vote' in function 'kernel' at kernel.py:9:3
; ERR-NOT: elsewhere.py
declare i32 @tidal.warp.vote()

define void @kernel(ptr %out) !dbg !4 {
  %v = call i32 @tidal.warp.vote(), !dbg !7, !tidal.where !8
  store i32 %v, ptr %out
  ret void
}

!llvm.module.flags = !{!9}
!llvm.dbg.cu = !{!1}
!tidal.kernels = !{!0}
!0 = !{ptr @kernel}
!1 = distinct !DICompileUnit(language: DW_LANG_Python, file: !2, producer: "tidal", isOptimized: false, runtimeVersion: 0, emissionKind: LineTablesOnly)
!2 = !DIFile(filename: "kernel.py", directory: "/src")
!4 = distinct !DISubprogram(name: "kernel", scope: !2, file: !2, line: 8, type: !5, scopeLine: 8, spFlags: DISPFlagDefinition, unit: !1)
!5 = !DISubroutineType(types: !6)
!6 = !{}
!7 = !DILocation(line: 9, column: 3, scope: !4)
!8 = !{!"elsewhere.py:1:1"}
!9 = !{i32 2, !"Debug Info Version", i32 3}

;--- malformed.ll
; Optional and free-form: a node that is not one string is no place.
; ERR: error: tidal: unknown marker 'tidal.warp.vote' in function 'kernel'{{$}}
declare i32 @tidal.warp.vote()

define void @kernel(ptr %out) {
  %v = call i32 @tidal.warp.vote(), !tidal.where !1
  store i32 %v, ptr %out
  ret void
}

!tidal.kernels = !{!0}
!0 = !{ptr @kernel}
!1 = !{i32 7, !"kernel.py:7:5"}
