// Binding CUDA C++ __device__ functions to tidal's types, from Clang's AST:
// the one piece of code that both `tidal-bind` and `cuda.include` use.
// compileCuda (CudaCompiler.cpp) runs it over every translation unit it
// compiles and records what it finds in the module's named metadata
// DeviceFunctionsMetadata; tidal-bind prints that, cuda.include reads it.
#ifndef TIDAL_CXX_DEVICEBINDING_H
#define TIDAL_CXX_DEVICEBINDING_H

#include <optional>
#include <string>
#include <vector>

namespace clang {
class ASTContext;
class ASTNameGenerator;
class FunctionDecl;
class QualType;
} // namespace clang

namespace llvm {
class Module;
} // namespace llvm

namespace tidal::cxx {

// One node per __device__ function declared in the main file (not the
// prelude, not included headers), in source order:
//   !{!"symbol", !"qualified name", !"C++ declaration", !"reason",
//     !"defined", !"return type", !"parameter type", !"parameter name", ...}
// The reason is empty when the function binds; "defined" is "1" when the
// file defines it, "0" when it only declares it. Types are tidal's texts.
inline constexpr const char *DeviceFunctionsMetadata = "tidal.cxx.device_functions";

struct DeviceFunctionBinding {
  std::string Symbol;        // the LLVM symbol (C++-mangled unless extern "C")
  std::string QualifiedName; // ns::f as written
  std::string Declaration;   // "float mul(float x, float y)", for messages
  std::string Reason;        // why it cannot be bound; empty when it can
  bool Defined = false;      // the file defines it (not only declares it)
  bool ExternC = false;
  // Types as tidal's texts: a scalar ("float32", "int64", "bool"), a
  // pointer to one ("float32*", "const float64*") or to a struct of
  // numbers ("struct Pair{first:int32@0,second:int32@4;8}*": fields with
  // their byte offsets, then the size), or "void" (return only).
  std::string ReturnType;
  std::vector<std::string> ParameterTypes, ParameterNames;
};

// The tidal text of a C++ type ("float32", "const float32*", "void" where
// AllowVoid); empty, with the reason in Why, for a type tidal does not bind.
std::string bindingType(clang::ASTContext &AST, const clang::QualType &Type, bool AllowVoid,
                        std::string &Why);

// The binding of F, or nothing when F is not a __device__ function of the
// main file that a caller could name (kernels, methods, the prelude's
// functions, redeclarations, template instantiations).
std::optional<DeviceFunctionBinding> bindDeviceFunction(clang::ASTContext &AST,
                                                        clang::ASTNameGenerator &Names,
                                                        const clang::FunctionDecl &F);

// The bindings of every __device__ function (and function template, which
// is refused) of the translation unit's main file, in source order.
std::vector<DeviceFunctionBinding> bindTranslationUnit(clang::ASTContext &AST);

// Writes Bindings to M's DeviceFunctionsMetadata, and reads them back.
void attachBindings(llvm::Module &M, const std::vector<DeviceFunctionBinding> &Bindings);
std::vector<DeviceFunctionBinding> readBindings(const llvm::Module &M);

} // namespace tidal::cxx

#endif
