// tidal-libdevice-table: reads clang's declarations of libdevice
// (__clang_cuda_libdevice_declares.h) with libTooling and writes the table
// of every __nv_* function as X-macro rows, one a line:
//
//   TIDAL_LIBDEVICE_FUNCTION(sinf, "f", "f")
//   TIDAL_LIBDEVICE_FUNCTION(frexp, "d", "dPi")
//
// the name without __nv_, the return type and the parameter types, each
// type in the Itanium C++ ABI's letters (v void, a signed char, s short,
// t unsigned short, i int, j unsigned int, x long long, y unsigned long long,
// f float, d double); "P" before a type marks a pointer the function writes
// (an output), "PK" a pointer it only reads (an input array or string).
// The build runs it (CMakeLists.txt beside it); the frontend
// (pyfrontend/IntrinsicsLibdevice.cpp) and the cpu target's implementations
// (llvm-plugin/host-libdevice/) include its output.
//
//   tidal-libdevice-table HEADER OUTPUT [-resource-dir DIR]
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Type.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/ASTMatchers/ASTMatchers.h"
#include "clang/Tooling/Tooling.h"

#include "llvm/Support/raw_ostream.h"

#include <map>
#include <string>
#include <vector>

using namespace clang;
using namespace clang::ast_matchers;

namespace {

struct Declaration {
  std::string Return;
  std::string Parameters;
};

// The letters of one type; "" for a type the table cannot describe.
std::string letters(QualType Type) {
  Type = Type.getCanonicalType();
  if (const auto *Pointer = Type->getAs<PointerType>()) {
    QualType Pointee = Pointer->getPointeeType();
    std::string Inner = letters(Pointee.getUnqualifiedType());
    if (Inner.empty())
      return "";
    return (Pointee.isConstQualified() ? "PK" : "P") + Inner;
  }
  const auto *Builtin = Type->getAs<BuiltinType>();
  if (!Builtin)
    return "";
  switch (Builtin->getKind()) {
  case BuiltinType::Void: return "v";
  case BuiltinType::SChar: return "a";
  case BuiltinType::Short: return "s";
  case BuiltinType::UShort: return "t";
  case BuiltinType::Int: return "i";
  case BuiltinType::UInt: return "j";
  case BuiltinType::LongLong: return "x";
  case BuiltinType::ULongLong: return "y";
  case BuiltinType::Float: return "f";
  case BuiltinType::Double: return "d";
  default: return "";
  }
}

// Collects every extern "C" function named __nv_*, by name.
class Collector : public MatchFinder::MatchCallback {
public:
  std::map<std::string, Declaration> Functions;
  std::vector<std::string> Problems;

  void run(const MatchFinder::MatchResult &Result) override {
    const auto *Function = Result.Nodes.getNodeAs<FunctionDecl>("function");
    std::string Name = Function->getNameAsString();
    Declaration Entry{letters(Function->getReturnType()), ""};
    bool Describable = !Entry.Return.empty();
    for (const ParmVarDecl *Parameter : Function->parameters()) {
      std::string Letters = letters(Parameter->getType());
      Describable &= !Letters.empty();
      Entry.Parameters += Letters;
    }
    if (!Describable) {
      Problems.push_back(Name + ": a type the table has no letter for");
      return;
    }
    Functions[Name.substr(5)] = Entry;
  }
};

} // namespace

int main(int Argc, char **Argv) {
  if (Argc != 3 && Argc != 5) {
    llvm::errs() << "usage: tidal-libdevice-table HEADER OUTPUT [-resource-dir DIR]\n";
    return 2;
  }
  std::string Header = Argv[1];
  std::string Output = Argv[2];
  // Plain C++: __DEVICE__ is given empty, and neither __CUDA__ nor
  // __OPENMP_NVPTX__ is defined, so the header keeps it so. CUDA_VERSION
  // stays undefined: the SIMD-in-a-word functions (__nv_vadd2 ...) that the
  // header declares only for CUDA 9.0 and 9.1 are left out, as today's
  // libdevice no longer has them.
  std::vector<std::string> Arguments = {"-x", "c++", "-std=c++17", "-fsyntax-only",
                                        "-D__DEVICE__="};
  if (Argc == 5)
    Arguments.insert(Arguments.end(), {Argv[3], Argv[4]});

  Collector Found;
  MatchFinder Finder;
  Finder.addMatcher(
      functionDecl(isExternC(), matchesName("^::__nv_")).bind("function"), &Found);
  std::unique_ptr<tooling::FrontendActionFactory> Factory =
      tooling::newFrontendActionFactory(&Finder);
  std::string Source = "#include \"" + Header + "\"\n";
  if (!tooling::runToolOnCodeWithArgs(Factory->create(), Source, Arguments,
                                      "libdevice_table_input.cpp", "tidal-libdevice-table")) {
    llvm::errs() << "tidal-libdevice-table: cannot parse " << Header << "\n";
    return 1;
  }
  for (const std::string &Problem : Found.Problems)
    llvm::errs() << "tidal-libdevice-table: " << Problem << "\n";
  if (!Found.Problems.empty() || Found.Functions.size() < 100) {
    llvm::errs() << "tidal-libdevice-table: " << Header << " gave "
                 << Found.Functions.size() << " functions\n";
    return 1;
  }

  std::error_code Error;
  llvm::raw_fd_ostream Out(Output, Error);
  if (Error) {
    llvm::errs() << "tidal-libdevice-table: cannot write " << Output << ": "
                 << Error.message() << "\n";
    return 1;
  }
  Out << "// Generated by tidal-libdevice-table (utils/libdevice_table/) from\n// "
      << Header << ": do not edit.\n"
      << "// TIDAL_LIBDEVICE_FUNCTION(name without __nv_, return type, parameter types)\n";
  for (const auto &[Name, Entry] : Found.Functions)
    Out << "TIDAL_LIBDEVICE_FUNCTION(" << Name << ", \"" << Entry.Return << "\", \""
        << Entry.Parameters << "\")\n";
  return 0;
}
