; tidal-check-marker-reachability accepts markers in kernels and in the
; functions they call, directly or not, and reports any other function that
; uses one (naming it, with the Python file:line when the call has a debug
; location); tidal-lower-nvptx runs it first.
; RUN: rm -rf %t && split-file %s %t
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-check-marker-reachability -S %t/reached.ll | FileCheck %t/reached.ll
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-check-marker-reachability -disable-output %t/orphan.ll 2>&1 | FileCheck %t/orphan.ll --check-prefix=ERR
; RUN: not opt -load-pass-plugin=%plugin -passes=tidal-lower-nvptx -disable-output %t/orphan.ll 2>&1 | FileCheck %t/orphan.ll --check-prefix=ERR

;--- reached.ll
; A kernel, a helper it calls, and the helper's helper: nothing to report,
; nothing changed.
; CHECK-LABEL: define i32 @index()
; CHECK-NEXT:    call i32 @tidal.tid.x()
declare i32 @tidal.tid.x()

define i32 @index() {
  %t = call i32 @tidal.tid.x()
  ret i32 %t
}

define i32 @middle() {
  %i = call i32 @index()
  ret i32 %i
}

define void @kernel(ptr %out) {
  %i = call i32 @middle()
  store i32 %i, ptr %out
  ret void
}

!tidal.kernels = !{!0}
!0 = !{ptr @kernel}

;--- orphan.ll
; @orphan uses a marker but no kernel calls it.
; ERR: error: tidal: marker 'tidal.tid.x' in function 'orphan' at kernel.py:7:9, which is neither a kernel (!tidal.kernels) nor called from one
declare i32 @tidal.tid.x()

define void @kernel(ptr %out) {
  store i32 0, ptr %out
  ret void
}

define void @orphan(ptr %out) !dbg !5 {
  %t = call i32 @tidal.tid.x(), !dbg !8
  store i32 %t, ptr %out
  ret void
}

!tidal.kernels = !{!0}
!0 = !{ptr @kernel}
!llvm.dbg.cu = !{!1}
!llvm.module.flags = !{!3}
!1 = distinct !DICompileUnit(language: DW_LANG_Python, file: !2, producer: "tidal", isOptimized: true, runtimeVersion: 0, emissionKind: LineTablesOnly)
!2 = !DIFile(filename: "kernel.py", directory: ".")
!3 = !{i32 2, !"Debug Info Version", i32 3}
!5 = distinct !DISubprogram(name: "orphan", scope: !2, file: !2, line: 5, type: !6, scopeLine: 5, spFlags: DISPFlagDefinition, unit: !1)
!6 = !DISubroutineType(types: !7)
!7 = !{}
!8 = !DILocation(line: 7, column: 9, scope: !5)
