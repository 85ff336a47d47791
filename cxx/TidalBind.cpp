// tidal-bind FILE.cu [clang options]: for each __device__ function FILE.cu
// defines or declares, the line that binds it from Python with Numba's
// declare_device ABI (`extern "C" __device__ int f(T *ret, args...)`: an
// int status, the result through the first parameter):
//   cuda.declare_device('f', 'float32(float32, CPointer(int32))')
// or, for a function that cannot be bound, a comment with the reason (a
// struct by value, a template, a reference, a C++-mangled name, ...).
// Clang libTooling parses the file as CUDA device code with tidal's prelude
// (cxx/include/tidal_cuda.h). docs/cpp.md, "tidal-bind".

#include "clang/AST/ASTConsumer.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

using namespace clang;

namespace {

// Numba's name of a scalar type, or nothing.
std::optional<std::string> scalarName(ASTContext &AST, QualType Type) {
  const auto *Builtin = Type.getCanonicalType()->getAs<BuiltinType>();
  if (!Builtin)
    return std::nullopt;
  if (Builtin->getKind() == BuiltinType::Bool)
    return std::string("boolean");
  unsigned Bits = static_cast<unsigned>(AST.getTypeSize(Type));
  if (Builtin->isInteger())
    return (Builtin->isSignedInteger() ? "int" : "uint") + std::to_string(Bits);
  if (Builtin->isFloatingPoint() && (Bits == 16 || Bits == 32 || Bits == 64))
    return "float" + std::to_string(Bits);
  return std::nullopt;
}

// Why a parameter of this type cannot be bound ("" when it can), and its
// Numba text in Text.
std::string describe(ASTContext &AST, QualType Type, std::string &Text) {
  QualType Canonical = Type.getCanonicalType();
  std::string Spelled = Type.getAsString(AST.getPrintingPolicy());
  if (Canonical->isReferenceType())
    return "'" + Spelled + "' is a reference";
  if (Canonical->isRecordType())
    return "'" + Spelled + "' is a struct or class passed by value";
  if (const auto *Pointer = Canonical->getAs<PointerType>()) {
    if (std::optional<std::string> Element = scalarName(AST, Pointer->getPointeeType())) {
      Text = "CPointer(" + *Element + ")";
      return "";
    }
    return "'" + Spelled + "' points to something other than a scalar";
  }
  if (std::optional<std::string> Scalar = scalarName(AST, Type)) {
    Text = *Scalar;
    return "";
  }
  return "'" + Spelled + "' has no Numba type";
}

class Binder : public ASTConsumer, public RecursiveASTVisitor<Binder> {
public:
  explicit Binder(llvm::raw_ostream &Out) : Out(Out) {}

  void HandleTranslationUnit(ASTContext &Context) override {
    if (Context.getDiagnostics().hasErrorOccurred())
      return; // clang has printed the errors; bind nothing of a broken file
    AST = &Context;
    TraverseDecl(Context.getTranslationUnitDecl());
  }

  bool VisitFunctionTemplateDecl(FunctionTemplateDecl *Template) {
    FunctionDecl *F = Template->getTemplatedDecl();
    if (isOurs(F) && F->hasAttr<CUDADeviceAttr>() && !F->hasAttr<CUDAGlobalAttr>())
      refuse(F->getNameAsString(), "a template (declare_device binds one function)");
    return true;
  }

  bool VisitFunctionDecl(FunctionDecl *F) {
    if (!isOurs(F) || !F->hasAttr<CUDADeviceAttr>() || F->hasAttr<CUDAGlobalAttr>() ||
        F->isTemplated() || F->isTemplateInstantiation() || isa<CXXMethodDecl>(F) ||
        F->getPreviousDecl())
      return true;
    std::string Name = F->getNameAsString();
    if (!F->isExternC())
      return refuse(Name, "not extern \"C\" (its symbol is C++-mangled; Numba links by name)");
    if (F->isVariadic())
      return refuse(Name, "variadic");
    if (F->getStorageClass() == SC_Static)
      return refuse(Name, "static (not visible to a linker)");
    QualType Return = F->getReturnType().getCanonicalType();
    const auto *Status = Return->getAs<BuiltinType>();
    if (!Status || Status->getKind() != BuiltinType::Int)
      return refuse(Name, "returns '" + F->getReturnType().getAsString() +
                              "': Numba's ABI returns an int status and the result through "
                              "the first parameter");
    if (F->getNumParams() == 0)
      return refuse(Name, "no parameters: Numba's ABI passes the result's address first");
    const ParmVarDecl *Result = F->getParamDecl(0);
    const auto *ResultPointer = Result->getType().getCanonicalType()->getAs<PointerType>();
    std::optional<std::string> ResultType =
        ResultPointer ? scalarName(*AST, ResultPointer->getPointeeType()) : std::nullopt;
    if (!ResultType)
      return refuse(Name, "its first parameter '" + Result->getType().getAsString() +
                              "' is not a pointer to a scalar (Numba's ABI: the result's "
                              "address)");
    std::vector<std::string> Arguments;
    for (unsigned I = 1; I < F->getNumParams(); ++I) {
      const ParmVarDecl *P = F->getParamDecl(I);
      std::string Text;
      std::string Why = describe(*AST, P->getType(), Text);
      if (!Why.empty())
        return refuse(Name, "parameter '" + P->getNameAsString() + "': " + Why);
      Arguments.push_back(Text);
    }
    Out << "cuda.declare_device('" << Name << "', '" << *ResultType << "(";
    for (size_t I = 0; I < Arguments.size(); ++I)
      Out << (I ? ", " : "") << Arguments[I];
    Out << ")')\n";
    return true;
  }

private:
  bool isOurs(const Decl *D) const {
    return AST->getSourceManager().isInMainFile(D->getLocation());
  }
  bool refuse(const std::string &Name, const std::string &Why) {
    Out << "# " << Name << ": cannot bind: " << Why << "\n";
    return true;
  }

  llvm::raw_ostream &Out;
  ASTContext *AST = nullptr;
};

class BindAction : public ASTFrontendAction {
protected:
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &, StringRef) override {
    return std::make_unique<Binder>(llvm::outs());
  }
};

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
  std::vector<std::string> Arguments = {
      "-x", "cuda", "--cuda-device-only", "--cuda-gpu-arch=sm_70", "-nocudainc", "-nocudalib",
      "-Wno-unknown-cuda-version", "-std=c++17", "-resource-dir", TIDAL_CLANG_RESOURCE_DIR,
      "-I", TIDAL_CXX_PRELUDE_DIR, "-include", "tidal_cuda.h"};
  for (int I = 2; I < Argc; ++I)
    Arguments.push_back(Argv[I]);
  if (!tooling::runToolOnCodeWithArgs(std::make_unique<BindAction>(), (*Source)->getBuffer(),
                                      Arguments, File, "tidal-bind"))
    return 1;
  return 0;
}
