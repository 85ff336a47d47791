// The binding of CUDA C++ __device__ functions to tidal's types
// (DeviceBinding.h), read from Clang's AST; its module metadata is
// DeviceBindingMetadata.cpp.

#include "DeviceBinding.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/RecordLayout.h"
#include "clang/AST/Decl.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/Mangle.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"

namespace tidal::cxx {
namespace {

// tidal's name of a scalar type, or "".
std::string scalarText(clang::ASTContext &AST, clang::QualType Type) {
  const auto *Builtin = Type.getCanonicalType()->getAs<clang::BuiltinType>();
  if (!Builtin)
    return "";
  if (Builtin->getKind() == clang::BuiltinType::Bool)
    return "bool";
  unsigned Bits = static_cast<unsigned>(AST.getTypeSize(Type));
  if (Builtin->isInteger() && Bits <= 64)
    return (Builtin->isSignedInteger() ? "int" : "uint") + std::to_string(Bits);
  if (Builtin->isFloatingPoint() && (Bits == 16 || Bits == 32 || Bits == 64))
    return "float" + std::to_string(Bits);
  return "";
}

std::string spelled(clang::ASTContext &AST, clang::QualType Type) {
  return Type.getAsString(AST.getPrintingPolicy());
}

// A struct a pointer may point to, as tidal's text
// "struct NAME{field:type@offset,...;size}" (a record dtype of that
// layout), or "" with Why: plain structs of numbers only.
std::string recordText(clang::ASTContext &AST, clang::QualType Type, std::string &Why) {
  const auto *Record = Type.getCanonicalType()->getAsRecordDecl();
  std::string Name = spelled(AST, Type.getUnqualifiedType());
  if (!Record || Record->isUnion() || !Record->getDefinition()) {
    Why = "'" + Name + "' is not a complete struct";
    return "";
  }
  if (const auto *Class = llvm::dyn_cast<clang::CXXRecordDecl>(Record))
    if (Class->getNumBases() || Class->isPolymorphic()) {
      Why = "'" + Name + "' has base classes or virtual functions";
      return "";
    }
  const clang::ASTRecordLayout &Layout = AST.getASTRecordLayout(Record);
  std::string Text = "struct " + Record->getNameAsString() + "{";
  unsigned Index = 0;
  for (const clang::FieldDecl *Field : Record->fields()) {
    std::string Element = scalarText(AST, Field->getType());
    if (Element.empty() || Field->isBitField()) {
      Why = "field '" + Field->getNameAsString() + "' of '" + Name +
            "' is not a number (tidal passes structs of numbers, as record dtypes)";
      return "";
    }
    Text += (Index ? "," : "") + Field->getNameAsString() + ":" + Element + "@" +
            std::to_string(Layout.getFieldOffset(Index) / 8);
    ++Index;
  }
  if (!Index) {
    Why = "'" + Name + "' has no fields";
    return "";
  }
  return Text + ";" + std::to_string(AST.getTypeSizeInChars(Type).getQuantity()) + "}";
}

class Collector : public clang::RecursiveASTVisitor<Collector> {
public:
  Collector(clang::ASTContext &AST, clang::ASTNameGenerator &Names) : AST(AST), Names(Names) {}
  std::vector<DeviceFunctionBinding> Bindings;

  bool VisitFunctionTemplateDecl(clang::FunctionTemplateDecl *Template) {
    const clang::FunctionDecl *F = Template->getTemplatedDecl();
    if (!inMainFile(*F) || !F->hasAttr<clang::CUDADeviceAttr>() ||
        F->hasAttr<clang::CUDAGlobalAttr>() || llvm::isa<clang::CXXMethodDecl>(F) ||
        Template->getPreviousDecl())
      return true;
    DeviceFunctionBinding B;
    B.Symbol = B.QualifiedName = F->getQualifiedNameAsString();
    B.Declaration = "template " + F->getQualifiedNameAsString();
    B.Reason = "a template (cuda.include makes an instance for each call's argument "
               "types; declare_device needs a named instance: cuda.include(..., "
               "name_expressions=['" + F->getNameAsString() +
               "<float>']) or one instantiated in a non-template function)";
    Bindings.push_back(std::move(B));
    // Its explicit instances (cuda.include's name_expressions) bind as
    // overloads of the template's name.
    for (const clang::FunctionDecl *Instance : Template->specializations())
      if (Instance->getTemplateSpecializationKind() ==
          clang::TSK_ExplicitInstantiationDefinition)
        if (std::optional<DeviceFunctionBinding> Bound = bindDeviceFunction(AST, Names, *Instance))
          Bindings.push_back(std::move(*Bound));
    return true;
  }

  bool VisitFunctionDecl(clang::FunctionDecl *F) {
    if (std::optional<DeviceFunctionBinding> B = bindDeviceFunction(AST, Names, *F))
      Bindings.push_back(std::move(*B));
    return true;
  }

private:
  bool inMainFile(const clang::Decl &D) const {
    return AST.getSourceManager().isInMainFile(D.getLocation());
  }
  clang::ASTContext &AST;
  clang::ASTNameGenerator &Names;
};

} // namespace

std::string bindingType(clang::ASTContext &AST, const clang::QualType &Type, bool AllowVoid,
                        std::string &Why) {
  clang::QualType Canonical = Type.getCanonicalType();
  if (AllowVoid && Canonical->isVoidType())
    return "void";
  if (Canonical->isReferenceType()) {
    Why = "'" + spelled(AST, Type) + "' is a reference";
    return "";
  }
  if (Canonical->isRecordType()) {
    // By value: a record of the same layout (its copy), as for pointers.
    std::string RecordWhy;
    std::string Text = recordText(AST, Canonical.getUnqualifiedType(), RecordWhy);
    if (Text.empty())
      Why = "'" + spelled(AST, Type) + "' is a struct tidal cannot pass by value: " + RecordWhy;
    return Text;
  }
  if (const auto *Pointer = Canonical->getAs<clang::PointerType>()) {
    clang::QualType Pointee = Pointer->getPointeeType();
    std::string Element = scalarText(AST, Pointee.getUnqualifiedType());
    if (Element.empty() && Pointee->isRecordType()) {
      std::string RecordWhy;
      Element = recordText(AST, Pointee, RecordWhy);
      if (Element.empty()) {
        Why = "'" + spelled(AST, Type) + "' points to a struct tidal cannot pass: " + RecordWhy;
        return "";
      }
    }
    if (!Element.empty())
      return (Pointee.isConstQualified() ? "const " : "") + Element + "*";
    Why = "'" + spelled(AST, Type) + "' points to something other than a number or a struct";
    return "";
  }
  std::string Scalar = scalarText(AST, Canonical.getUnqualifiedType());
  if (Scalar.empty())
    Why = "'" + spelled(AST, Type) + "' has no tidal type";
  return Scalar;
}

std::optional<DeviceFunctionBinding> bindDeviceFunction(clang::ASTContext &AST,
                                                        clang::ASTNameGenerator &Names,
                                                        const clang::FunctionDecl &F) {
  // An instance of a function template binds when it is explicitly
  // instantiated (cuda.include's name_expressions), under its template's name.
  const bool ExplicitInstance =
      F.getTemplateSpecializationKind() == clang::TSK_ExplicitInstantiationDefinition;
  if (!AST.getSourceManager().isInMainFile(F.getLocation()) ||
      !F.hasAttr<clang::CUDADeviceAttr>() || F.hasAttr<clang::CUDAGlobalAttr>() ||
      F.isTemplated() || (F.isTemplateInstantiation() && !ExplicitInstance) ||
      llvm::isa<clang::CXXMethodDecl>(F) || (F.getPreviousDecl() && !ExplicitInstance) ||
      F.isDependentContext())
    return std::nullopt;
  DeviceFunctionBinding B;
  B.QualifiedName = F.getQualifiedNameAsString();
  std::string Shown = B.QualifiedName;
  if (ExplicitInstance) { // add<float>
    llvm::raw_string_ostream Stream(Shown);
    Shown.clear();
    F.getNameForDiagnostic(Stream, AST.getPrintingPolicy(), /*Qualified=*/true);
  }
  B.ExternC = F.isExternC();
  B.Defined = F.getDefinition() != nullptr;
  B.Symbol = Names.getName(&F);
  B.Declaration = spelled(AST, F.getReturnType()) + " " + Shown + "(";
  for (unsigned I = 0; I < F.getNumParams(); ++I) {
    const clang::ParmVarDecl *P = F.getParamDecl(I);
    std::string Type = spelled(AST, P->getType());
    B.Declaration += (I ? ", " : "") + Type;
    if (!P->getName().empty())
      B.Declaration += (Type.back() == '*' || Type.back() == '&' ? "" : " ") + P->getNameAsString();
  }
  B.Declaration += ")";
  auto Refuse = [&](const std::string &Why) {
    if (B.Reason.empty())
      B.Reason = Why;
  };
  if (F.isVariadic())
    Refuse("variadic");
  // static and inline functions bind too: tidal's compile emits them
  // (CudaCompiler.cpp, EmitStaticAndInline), and they are linked into the
  // kernel's module like the others.
  std::string Why;
  B.ReturnType = bindingType(AST, F.getReturnType(), /*AllowVoid=*/true, Why);
  if (B.ReturnType.empty())
    Refuse("returns " + Why);
  else if (B.ReturnType.back() == '*')
    Refuse("returns a pointer ('" + spelled(AST, F.getReturnType()) +
           "'): tidal's kernels have no pointer values");
  for (unsigned I = 0; I < F.getNumParams(); ++I) {
    const clang::ParmVarDecl *P = F.getParamDecl(I);
    Why.clear();
    std::string Text = bindingType(AST, P->getType(), /*AllowVoid=*/false, Why);
    std::string Name = P->getNameAsString();
    if (Text.empty())
      Refuse("parameter " + (Name.empty() ? "#" + std::to_string(I + 1) : "'" + Name + "'") +
             ": " + Why);
    B.ParameterTypes.push_back(Text);
    B.ParameterNames.push_back(Name);
  }
  return B;
}

std::vector<DeviceFunctionBinding> bindTranslationUnit(clang::ASTContext &AST) {
  clang::ASTNameGenerator Names(AST);
  Collector C(AST, Names);
  C.TraverseDecl(AST.getTranslationUnitDecl());
  return std::move(C.Bindings);
}

} // namespace tidal::cxx
