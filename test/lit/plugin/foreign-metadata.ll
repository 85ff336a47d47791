; The CUDA C++ part of the marker contract (docs/markers.md, "Beside the
; markers"): !tidal.foreign.links, !tidal.foreign.calls and the
; tidal.foreign.struct/packed types are the binding's (ForeignLinking.cpp
; links the C++ and removes the metadata before either lowering). A module
; that still holds them, as opt is given one here, is lowered as any other:
; both lowerings leave the foreign declarations, their struct types (by
; value, byval, packed) and both metadata as they are, and lower the markers
; around them.
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-host -S %s | FileCheck %s --check-prefixes=CHECK,HOST
; RUN: opt -load-pass-plugin=%plugin -passes=tidal-lower-nvptx -S %s | FileCheck %s --check-prefixes=CHECK,NVPTX

; CHECK-DAG: %tidal.foreign.struct.i32.i32 = type { i32, i32 }
; CHECK-DAG: %tidal.foreign.packed.i8.i32 = type <{ i8, i32 }>
%tidal.foreign.struct.i32.i32 = type { i32, i32 }
%tidal.foreign.packed.i8.i32 = type <{ i8, i32 }>

; The declarations stay, with their types.
; CHECK: declare %tidal.foreign.struct.i32.i32 @_Z9make_pairii(i32, i32)
; CHECK-DAG: declare i32 @_Z8first_of4Pair(ptr byval(%tidal.foreign.struct.i32.i32) align 4)
; CHECK-DAG: declare i32 @_Z8value_of6Tagged(ptr byval(%tidal.foreign.packed.i8.i32) align 1)
; CHECK-DAG: declare i32 @scale(ptr, i32)

declare i32 @tidal.tid.x()
declare void @tidal.syncthreads()
declare %tidal.foreign.struct.i32.i32 @_Z9make_pairii(i32, i32)
declare i32 @_Z8first_of4Pair(ptr byval(%tidal.foreign.struct.i32.i32) align 4)
declare i32 @_Z8value_of6Tagged(ptr byval(%tidal.foreign.packed.i8.i32) align 1)
declare i32 @scale(ptr, i32)

; HOST-LABEL: define internal i32 @kernel.thread(
; NVPTX-LABEL: define void @kernel(
; NVPTX: call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
; HOST: call %tidal.foreign.struct.i32.i32 @_Z9make_pairii(i32 %tid.x, i32 7)
; NVPTX: call %tidal.foreign.struct.i32.i32 @_Z9make_pairii(i32 %t, i32 7)
; CHECK: call i32 @_Z8first_of4Pair(ptr byval(%tidal.foreign.struct.i32.i32) align 4 %pair.addr)
; CHECK: call i32 @_Z8value_of6Tagged(ptr byval(%tidal.foreign.packed.i8.i32) align 1 %{{tagged(.generic)?}})
; CHECK: call i32 @scale(ptr %result, i32 %first)
; NVPTX: call void @llvm.nvvm.barrier0()
; CHECK-NOT: @tidal.tid
; CHECK-NOT: @tidal.syncthreads
define void @kernel(ptr %out, ptr %tagged) {
entry:
  %pair.addr = alloca %tidal.foreign.struct.i32.i32, align 4
  %result = alloca i32, align 4
  %t = call i32 @tidal.tid.x()
  %pair = call %tidal.foreign.struct.i32.i32 @_Z9make_pairii(i32 %t, i32 7)
  store %tidal.foreign.struct.i32.i32 %pair, ptr %pair.addr, align 4
  %first = call i32 @_Z8first_of4Pair(ptr byval(%tidal.foreign.struct.i32.i32) align 4 %pair.addr)
  %value = call i32 @_Z8value_of6Tagged(ptr byval(%tidal.foreign.packed.i8.i32) align 1 %tagged)
  %status = call i32 @scale(ptr %result, i32 %first)
  call void @tidal.syncthreads()
  %scaled = load i32, ptr %result, align 4
  %sum = add i32 %scaled, %value
  store i32 %sum, ptr %out, align 4
  ret void
}

; Both metadata, as given.
; CHECK-DAG: !tidal.foreign.links = !{![[LINK:[0-9]+]]}
; CHECK-DAG: !tidal.foreign.calls = !{![[MAKE:[0-9]+]], ![[SCALE:[0-9]+]]}
; CHECK-DAG: ![[LINK]] = !{!"cu", !"structs.cu", !"struct Pair { int first, second; };", !"-DN=1"}
; CHECK-DAG: ![[MAKE]] = !{!"_Z9make_pairii", !"structs.cu.make_pair", !"Pair make_pair(int first, int second)", !"c", !"kernel.py", !"6", !"12", !"    pair = lib.make_pair(i, 7)\0A", !"struct Pair{first:int32@0,second:int32@4;8}", !"int32", !"int32"}
; CHECK-DAG: ![[SCALE]] = !{!"scale", !"scale", !"declare_device('scale', 'int32(int32)')", !"numba", !"kernel.py", !"8", !"9", !"    s = scale(f)\0A", !"int32", !"int32"}

!tidal.kernels = !{!0}
!tidal.foreign.links = !{!1}
!tidal.foreign.calls = !{!2, !3}
!0 = !{ptr @kernel}
!1 = !{!"cu", !"structs.cu", !"struct Pair { int first, second; };", !"-DN=1"}
!2 = !{!"_Z9make_pairii", !"structs.cu.make_pair", !"Pair make_pair(int first, int second)", !"c", !"kernel.py", !"6", !"12", !"    pair = lib.make_pair(i, 7)\0A", !"struct Pair{first:int32@0,second:int32@4;8}", !"int32", !"int32"}
!3 = !{!"scale", !"scale", !"declare_device('scale', 'int32(int32)')", !"numba", !"kernel.py", !"8", !"9", !"    s = scale(f)\0A", !"int32", !"int32"}
