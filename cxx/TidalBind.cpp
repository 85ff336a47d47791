// tidal-bind FILE.cu [clang options]: how Python kernels call the
// __device__ functions of FILE.cu, both ways (docs/cpp.md, "tidal-bind"):
//   - tidal's, with no signatures: `lib = cuda.include('FILE.cu')`, then
//     `lib.name(...)` in a kernel; one comment line per function with the
//     types tidal passes and gets back;
//   - Numba's: a `cuda.declare_device(...)` line per function, with Numba's
//     ABI (`extern "C" __device__ int f(T *ret, args...)`: an int status,
//     the result through the first parameter) where the function has it,
//     else abi='c';
// and, for each function that cannot be bound, the reason. It compiles the
// file with tidal's in-process compiler (CudaCompiler.h), whose binding
// (DeviceBinding.h) is the very one cuda.include reads. Exit status 1 when
// clang rejects the file (its diagnostics on stderr), 2 for bad usage.

#include "CudaCompiler.h"
#include "DeviceBinding.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

using tidal::cxx::DeviceFunctionBinding;

namespace {

// A type text of DeviceBinding.h ("const float32*") in Numba's signature
// spelling ("CPointer(float32)"); Numba says "boolean" for bool.
std::string numbaType(std::string Text) {
  if (Text.rfind("const ", 0) == 0)
    Text = Text.substr(6);
  bool Pointer = !Text.empty() && Text.back() == '*';
  if (Pointer)
    Text.pop_back();
  if (Text == "bool")
    Text = "boolean";
  return Pointer ? "CPointer(" + Text + ")" : Text;
}

// A type text as shown: a struct (or a pointer to one) by its struct's
// name ("struct Pair", "struct Pair*"), without the layout.
std::string shown(const std::string &Text) {
  size_t Brace = Text.find('{');
  if (Brace == std::string::npos)
    return Text;
  return Text.substr(0, Brace) + (Text.back() == '*' ? "*" : "");
}

// Structs, by value or through pointers, which Numba's signatures cannot
// spell.
bool hasStruct(const DeviceFunctionBinding &B) {
  for (const std::string &P : B.ParameterTypes)
    if (P.find("struct ") != std::string::npos)
      return true;
  return B.ReturnType.find("struct ") != std::string::npos;
}

// The Python name cuda.include gives a function: its qualified name with
// dots ("geometry.dot").
std::string pythonPath(const std::string &Qualified) {
  std::string Out;
  for (size_t I = 0; I < Qualified.size(); ++I) {
    if (Qualified.compare(I, 2, "::") == 0) {
      Out += '.';
      ++I;
    } else {
      Out += Qualified[I];
    }
  }
  return Out;
}

// Numba's ABI: extern "C", returns int, the first parameter points to the
// result (a number).
bool hasNumbaABI(const DeviceFunctionBinding &B) {
  return B.ExternC && B.ReturnType == "int32" && !B.ParameterTypes.empty() &&
         B.ParameterTypes[0].back() == '*' && B.ParameterTypes[0].rfind("const ", 0) != 0;
}

void printBindings(const std::vector<DeviceFunctionBinding> &Bindings, const std::string &File,
                   llvm::raw_ostream &Out) {
  std::string Base = llvm::sys::path::filename(File).str();
  std::vector<const DeviceFunctionBinding *> Bound, Refused;
  for (const DeviceFunctionBinding &B : Bindings)
    (B.Reason.empty() ? Bound : Refused).push_back(&B);
  Out << "# tidal, no signatures: lib = cuda.include('" << Base << "'), then in a kernel\n";
  for (const DeviceFunctionBinding *B : Bound) {
    Out << "#   lib." << pythonPath(B->QualifiedName) << "(";
    for (size_t I = 0; I < B->ParameterTypes.size(); ++I)
      Out << (I ? ", " : "") << shown(B->ParameterTypes[I]);
    Out << ") -> " << (B->ReturnType == "void" ? "None" : shown(B->ReturnType));
    if (!B->Defined)
      Out << "  (declared only: defined in another file)";
    Out << "\n";
  }
  Out << "# Numba: cuda.declare_device, and @cuda.jit(link=['" << Base << "'])\n";
  for (const DeviceFunctionBinding *B : Bound) {
    if (hasStruct(*B)) {
      Out << "# " << B->QualifiedName << ": Numba's signatures have no structs: call it "
          << "as lib." << pythonPath(B->QualifiedName) << " (cuda.include)\n";
      continue;
    }
    bool Numba = hasNumbaABI(*B);
    std::string Result = Numba ? B->ParameterTypes[0] : B->ReturnType;
    if (Numba)
      Result.pop_back();
    Out << "cuda.declare_device('" << B->Symbol << "', '"
        << (Result == "void" ? "void" : numbaType(Result)) << "(";
    for (size_t I = Numba ? 1 : 0; I < B->ParameterTypes.size(); ++I)
      Out << (I > (Numba ? 1u : 0u) ? ", " : "") << numbaType(B->ParameterTypes[I]);
    Out << ")'" << (Numba ? "" : ", abi='c'") << ")";
    if (B->Symbol != B->QualifiedName)
      Out << "  # " << B->QualifiedName;
    Out << "\n";
  }
  for (const DeviceFunctionBinding *B : Refused)
    Out << "# " << B->QualifiedName << ": cannot bind: " << B->Reason << "\n";
}

} // namespace

int main(int Argc, char **Argv) {
  if (Argc < 2) {
    llvm::errs() << "usage: tidal-bind FILE.cu [clang options]\n";
    return 2;
  }
  std::string File = Argv[1];
  auto Source = llvm::MemoryBuffer::getFile(File);
  if (!Source) {
    llvm::errs() << "tidal-bind: cannot read " << File << ": " << Source.getError().message()
                 << "\n";
    return 1;
  }
  std::vector<std::string> Options(Argv + 2, Argv + Argc);
  llvm::LLVMContext Context;
  std::string Error;
  std::unique_ptr<llvm::Module> M =
      tidal::cxx::compileCuda(Context, (*Source)->getBuffer(), File, Options, Error);
  if (!M) {
    llvm::errs() << Error;
    return 1;
  }
  printBindings(tidal::cxx::readBindings(*M), File, llvm::outs());
  return 0;
}
