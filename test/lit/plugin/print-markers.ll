; docs/markers.md's list of markers ("The marker table") is the marker table
; of the plugin (llvm-plugin/include/tidal/Markers.def) as
; tidal-print-markers prints it, the contract's version first.
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-print-markers -disable-output %s > %t.table
; RUN: sed -n -e '/^<!-- begin marker table -->$/,/^<!-- end marker table -->$/p' %S/../../../docs/markers.md > %t.section
; RUN: grep -v -e '^<!--' -e '^```' %t.section > %t.doc
; RUN: diff %t.table %t.doc
; The table's names and types are the ones getMarkerType checks.
; RUN: FileCheck %s --input-file=%t.table
; CHECK: ; marker contract version {{[0-9]+}}
; CHECK: i32 @tidal.tid.x()
; CHECK: T @tidal.atomic.inc.{u32,u64}(ptr, T)
; CHECK: {i32, i1} @tidal.match.all.{i32,i64}(i32, T)
; CHECK: void @tidal.print(ptr, ...)
