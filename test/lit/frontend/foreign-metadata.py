# The marker contract's metadata for CUDA C++ (docs/markers.md, "Beside the
# markers"): a kernel calling C++ leaves !tidal.foreign.links (what to
# link) and !tidal.foreign.calls (each foreign symbol, as declared and where
# first called), its structs by value as tidal.foreign.struct/packed types,
# and !tidal.where on its marker calls (no debug locations). The binding's
# linking step (python/src/ForeignLinking.cpp) links the C++ before either
# lowering and removes both metadata: the kernel then holds the C++
# definitions, whose structs are the same named types, on both targets.
# RUN: %tidalc %s --kernel calls_pair --sig 'void(int32[::1])' --emit=markers | FileCheck %s --check-prefix=MARKERS
# RUN: env PYTHONPATH=%pythonpath TIDAL_TARGET=cpu %python %s 2>&1 | FileCheck %s --check-prefix=LINKED

import os

import numpy as np

from tidal import cuda

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs", "foreign_structs.cu")
lib = cuda.include(SOURCE)
scale = cuda.declare_device("scale", "int32(int32)", link=[SOURCE])


@cuda.jit
def calls_pair(out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = lib.first_of(lib.make_pair(i, 7)) + scale(i)


@cuda.jit
def calls_tagged(tagged, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = lib.value_of(tagged[i])


# MARKERS: %tidal.foreign.struct.i32.i32 = type { i32, i32 }
# MARKERS-LABEL: define void @calls_pair(
# MARKERS: call %tidal.foreign.struct.i32.i32 @_Z9make_pairii(i32 %{{.*}}, i32 7)
# MARKERS: call i32 @_Z8first_of4Pair(ptr byval(%tidal.foreign.struct.i32.i32) align 4 %
# MARKERS: call i32 @scale(ptr %{{.*}}, i32 %
# MARKERS: call void @tidal.bounds.fault({{.*}}), !tidal.where ![[WHERE:[0-9]+]]
# MARKERS: declare %tidal.foreign.struct.i32.i32 @_Z9make_pairii(i32, i32)
# MARKERS: declare i32 @_Z8first_of4Pair(ptr byval(%tidal.foreign.struct.i32.i32) align 4)
# MARKERS: declare i32 @scale(ptr, i32)
# One node per foreign symbol: symbol, name as called, declared signature,
# abi, file, line, column, source line, result type, parameter types.
# MARKERS: !tidal.foreign.calls = !{![[MAKE:[0-9]+]], ![[FIRST:[0-9]+]], ![[SCALE:[0-9]+]]}
# One node per file to link: kind, name, payload.
# MARKERS: !tidal.foreign.links = !{![[LINK:[0-9]+]]}
# MARKERS: !tidal.kernels = !{!{{[0-9]+}}}
# MARKERS: ![[MAKE]] = !{!"_Z9make_pairii", !"foreign_structs.cu.make_pair", !"Pair make_pair(int first, int second)", !"c", !"{{.*}}foreign-metadata.py", !"27", !"31", !"        out[i] = lib.first_of(lib.make_pair(i, 7)) + scale(i)\0A", !"struct Pair{first:int32@0,second:int32@4;8}", !"int32", !"int32"}
# MARKERS: ![[FIRST]] = !{!"_Z8first_of4Pair", !"foreign_structs.cu.first_of", !"int first_of(Pair pair)", !"c", !"{{.*}}foreign-metadata.py", !"27", !"18", !"{{.*}}", !"int32", !"struct Pair{first:int32@0,second:int32@4;8}"}
# MARKERS: ![[SCALE]] = !{!"scale", !"scale", !"declare_device('scale', 'int32(int32)')", !"numba", !"{{.*}}foreign-metadata.py", !"27", !"54", !"{{.*}}", !"int32", !"int32"}
# MARKERS: ![[LINK]] = !{!"cu", !"{{.*}}Inputs/foreign_structs.cu", !"// CUDA C++ for foreign-metadata.py{{.*}}"}
# MARKERS: ![[WHERE]] = !{!"{{.*}}foreign-metadata.py:27:9"}

# Linked (the binding's step, before the lowering; here the cpu target's):
# the definitions in place
# of the declarations, the packed struct (a field at offset 1) as
# tidal.foreign.packed, no foreign metadata left.
# LINKED: %tidal.foreign.packed.i8.i32 = type <{ i8, i32 }>
# LINKED-LABEL: define void @calls_tagged(
# LINKED: call i32 @_Z8value_of6Tagged(ptr byval(%tidal.foreign.packed.i8.i32) align {{[0-9]+}} %
# LINKED: define internal {{.*}}i32 @_Z8value_of6Tagged(ptr {{.*}}byval(%tidal.foreign.packed.i8.i32) align 1 %tagged)
# LINKED-NOT: !tidal.foreign
# LINKED: values [12, 23, 34, 45]
if __name__ == "__main__":
    import warnings
    warnings.simplefilter("ignore")
    tagged = np.zeros(4, np.dtype([("tag", np.int8), ("value", np.int32)]))  # packed
    tagged["tag"] = [2, 3, 4, 5]
    tagged["value"] = [10, 20, 30, 40]
    out = np.zeros(4, np.int32)
    calls_tagged[1, 4](tagged, out)
    (markers,) = calls_tagged.inspect_markers().values()
    print(markers)
    print("values", out.tolist())
