// Linking foreign code into a Python kernel's module, before any lowering
// or optimisation, so that calls across the languages inline: the CUDA C++
// sources (compiled in process by tidal._cxx), LLVM IR (.ll) and bitcode
// (.bc) that cuda.declare_device(link=...), cuda.include and
// @cuda.jit(link=[...]) name (and, after codegen, on the cuda target, the
// .ptx files they name: loadLinkedModule). Each is raised to marker IR by
// tidal-raise-nvvm, checked against how the kernel calls it (a declared
// signature that disagrees with the definition is an error showing both),
// and linked; the foreign functions become internal. docs/cpp.md.
#ifndef TIDAL_BINDING_FOREIGNLINKING_H
#define TIDAL_BINDING_FOREIGNLINKING_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "ForeignFunctions.h"
#include "Targets.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm {
class Module;
} // namespace llvm

namespace tidal::runtime {
class CudaContext;
class CudaModule;
} // namespace tidal::runtime

namespace tidal::binding {

// Named metadata of tidal's LTO-IR (cuda.compile(output='ltoir')): one
// MDString, the bitcode of the function's marker IR, which linking takes
// in place of the NVPTX-lowered code around it (so that it runs on both
// targets).
inline constexpr const char *EmbeddedMarkerIRMetadata = "tidal.marker_ir";

// Links into M what its foreign calls need (ForeignFunctions.h's metadata)
// and KernelLinks (@cuda.jit(link=[...])), for Target (a .ptx file runs on
// the cuda target only). Throws CompileError at the Python call for a
// function no linked file defines or a declaration that disagrees with
// the definition, at the C++ file:line:col for clang's errors. Removes
// the foreign metadata. Nothing to do for a kernel without foreign calls;
// returns whether anything was linked.
// .ptx files and binaries (cubin, fatbin, object, archive) are linked on
// the cuda target only, by the driver after tidal's compile: their symbols
// stay declarations in M, and the files go to PtxLinks (when given) for
// loadLinkedModule; a symbol no other file defines is left to the binaries
// (tidal cannot read their symbols). On the cpu target a call that only a
// .ptx file or a binary can define is an error at that call.
bool linkForeignCode(llvm::Module &M, const std::vector<frontend::ForeignLink> &KernelLinks,
                     TargetKind Target, std::vector<frontend::ForeignLink> *PtxLinks = nullptr);

// The kernel's PTX loaded into Context, linked with the .ptx files and
// binaries of PtxLinks through the driver's JIT linker when there are any
// (cuLinkAddData with each one's CUjitInputType). The
// linker's errors (an undefined symbol, PTX ptxas rejects) become a
// CompileError located in the .ptx file they name.
std::unique_ptr<runtime::CudaModule>
loadLinkedModule(runtime::CudaContext &Context, const std::string &PTX,
                 const std::string &KernelName, const std::vector<frontend::ForeignLink> &PtxLinks);

// Links into a raw CUDA C++ kernel's module M (raised already) what M
// declares and Links define (RawModule(link=[...])): CUDA C++, LLVM IR and
// tidal's LTO-IR (a C-ABI Python device function: cuda.compile(...,
// output='ltoir')). PTX and binaries are refused with a ValueError.
void linkIntoRawModule(llvm::Module &M, const std::vector<frontend::ForeignLink> &Links);

// The links of @cuda.jit(link=[...]) as python/tidal/cuda/foreign.py
// normalises them: a list of (kind, name, payload, options) tuples.
std::vector<frontend::ForeignLink> foreignLinksFromPython(PyObject *Links);

// _cxx_device_functions(code, file_name, options): the __device__
// functions of CUDA C++ source as cuda.include binds them (DeviceBinding.h):
// [(symbol, qualified name, declaration, reason, defined, return type,
// [parameter types])]. 0, or -1 with a Python error set.
int addForeignFunctions(PyObject *Module);

} // namespace tidal::binding

#endif
