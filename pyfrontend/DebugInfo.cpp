// Debug information: a DISubprogram per function and a DILocation per
// statement and expression (lineinfo=True or debug=True).
#include "FunctionCompiler.h"
#include "AstAccess.h"
#include "tidal/Contract.h"
#include "llvm/IR/DIBuilder.h"

#include "llvm/IR/CFG.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace llvm;

namespace tidal::frontend {

// Debug locations: one DISubprogram per function, a DILocation per
// statement and expression (lineinfo=True or debug=True).
DISubprogram *FunctionCompiler::debugSubprogram(llvm::Function *Fn, const std::string &Name) {
  if (!Options.LineInfo && !Options.Debug)
    return nullptr;
  std::string Path = Source.File, Directory = ".";
  size_t Slash = Path.rfind('/');
  if (Slash != std::string::npos) {
    Directory = Path.substr(0, Slash);
    Path = Path.substr(Slash + 1);
  }
  // One compile unit per module: a device function compiled after the
  // kernel (or another device function) reuses the module's unit, and its
  // builder must know it, or its subprogram has none and the IR is invalid.
  DICompileUnit *Unit = nullptr;
  if (NamedMDNode *Units = M.getNamedMetadata("llvm.dbg.cu"); Units && Units->getNumOperands())
    Unit = cast<DICompileUnit>(Units->getOperand(0));
  DebugBuilder = std::make_unique<DIBuilder>(M, /*AllowUnresolved=*/true, Unit);
  DIFile *File = DebugBuilder->createFile(Path, Directory);
  if (!Unit) {
    Unit = DebugBuilder->createCompileUnit(
        dwarf::DW_LANG_Python, File, "tidal", /*isOptimized=*/true, "", 0, "",
        Options.Debug ? DICompileUnit::FullDebug : DICompileUnit::LineTablesOnly);
    if (!M.getModuleFlag("Debug Info Version"))
      M.addModuleFlag(Module::Warning, "Debug Info Version", DEBUG_METADATA_VERSION);
    if (!M.getModuleFlag("Dwarf Version"))
      M.addModuleFlag(Module::Warning, "Dwarf Version", uint32_t(4));
  }
  DISubroutineType *Signature = DebugBuilder->createSubroutineType(DebugBuilder->getOrCreateTypeArray({}));
  DISubprogram *SP = DebugBuilder->createFunction(
      File, Name, Fn->getName(), File, static_cast<unsigned>(locate(Tree.get()).Line), Signature,
      static_cast<unsigned>(locate(Tree.get()).Line), DINode::FlagZero,
      DISubprogram::SPFlagDefinition | DISubprogram::SPFlagOptimized);
  Fn->setSubprogram(SP);
  return SP;
}

void FunctionCompiler::setDebugLocation(PyObject *Node) {
  PyObject *Line = PyObject_GetAttrString(Node, "lineno");
  if (!Line) {
    PyErr_Clear();
    return;
  }
  Py_DECREF(Line);
  LocationNode = Node;
  if (!Subprogram) // neither lineinfo nor debug
    return;
  SourceLocation Where = locate(Node);
  B.SetCurrentDebugLocation(DILocation::get(Ctx, static_cast<unsigned>(Where.Line),
                                            static_cast<unsigned>(Where.Column), Subprogram));
}

// Without debug locations, a marker call still says where it is, in
// !tidal.where (docs/markers.md): the cpu target's reports name the
// syncthreads or collective that threads of a block disagreed on.
void FunctionCompiler::markWhere(llvm::CallInst *Call) {
  if (Subprogram || !LocationNode)
    return;
  SourceLocation Where = locate(LocationNode);
  std::string Text = Where.File + ":" + std::to_string(Where.Line) + ":" +
                     std::to_string(Where.Column);
  Call->setMetadata(WhereMetadataName, MDNode::get(Ctx, MDString::get(Ctx, Text)));
}

} // namespace tidal::frontend
