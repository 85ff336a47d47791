// FunctionCompiler: reading the function, the kernel and device-function
// entry points (typing, then emission), the emission's dispatch over AST
// nodes, the emitted function's frame and its local variables. Typing is
// in TypeFunction.cpp and the Type*.cpp files; the emitters of the node
// kinds are in the Emit*.cpp files.
#include "FunctionCompiler.h"
#include "AstAccess.h"
#include "IntrinsicTable.h"
#include "BindingAnalysis.h"
#include "tidal/Contract.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/IR/CFG.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/PromoteMemToReg.h"

#include <algorithm>
#include <unordered_map>
#include <cctype>

using namespace llvm;

namespace tidal::frontend {

// --- construction ------------------------------------------------------------

// How many times each name is bound (an ast.Name in a Store context:
// assignment and loop targets, augmented assignments) anywhere in Body, a
// list of statements.
std::map<std::string, int> nameStoreCounts(PyObject *Body) {
  std::map<std::string, int> Stores;
  PyRef Ast = importModule("ast");
  PyRef StoreType = Ast.attr("Store");
  for (PyObject *Statement : listItems(Body)) {
    PyRef Walk = PyRef::check(PyObject_CallMethod(Ast.get(), "walk", "O", Statement));
    PyRef Iterator = PyRef::check(PyObject_GetIter(Walk.get()));
    while (PyObject *Raw = PyIter_Next(Iterator.get())) {
      PyRef Node = PyRef::steal(Raw);
      if (nodeKind(Node.get()) != "Name")
        continue;
      PyRef Context = field(Node.get(), "ctx");
      if (PyObject_IsInstance(Context.get(), StoreType.get()) == 1)
        ++Stores[identifierField(Node.get(), "id")];
    }
    if (PyErr_Occurred())
      throw PythonErrorSet();
  }
  return Stores;
}

// The names a function body binds.
static std::set<std::string> assignedNames(PyObject *Body) {
  std::set<std::string> Names;
  for (const auto &[Name, Count] : nameStoreCounts(Body))
    Names.insert(Name);
  return Names;
}

// A short name of a compile-time object for symbol names: an intrinsic's
// path (cuda.atomic.add), a function's __name__, else its str() (int32),
// letters, digits, '.' and '_' only.
static std::string compileTimeObjectName(PyObject *Object) {
  std::string Name = intrinsicName(Object);
  if (Name.empty()) {
    PyRef Named = PyRef::borrow(Object).attrOrNull("__name__");
    if (Named && PyUnicode_Check(Named.get()))
      Name = Named.str();
  }
  if (Name.empty()) {
    PyRef Text = PyRef::steal(PyObject_Str(Object));
    if (Text)
      Name = Text.str();
    else
      PyErr_Clear();
  }
  std::string Out;
  for (char Character : Name)
    if (std::isalnum(static_cast<unsigned char>(Character)) || Character == '.' || Character == '_')
      Out += Character;
  return Out.substr(0, 40);
}

// True when control can reach Target from the function's entry: along the
// branches emitted, except those a constant condition never takes (the exit
// of `while True:`). Emission checks typing's reachability verdict with it.
static bool reachableFromEntry(BasicBlock *Target) {
  BasicBlock *Entry = &Target->getParent()->getEntryBlock();
  std::vector<BasicBlock *> Work{Entry};
  SmallPtrSet<BasicBlock *, 32> Seen{Entry};
  while (!Work.empty()) {
    BasicBlock *Block = Work.back();
    Work.pop_back();
    if (Block == Target)
      return true;
    Instruction *Terminator = Block->getTerminator();
    if (!Terminator)
      continue;
    auto Visit = [&](BasicBlock *Next) {
      if (Seen.insert(Next).second)
        Work.push_back(Next);
    };
    auto *Branch = dyn_cast<BranchInst>(Terminator);
    auto *Constant = Branch && Branch->isConditional()
                         ? dyn_cast<ConstantInt>(Branch->getCondition())
                         : nullptr;
    if (Constant) {
      Visit(Branch->getSuccessor(Constant->isOne() ? 0 : 1));
      continue;
    }
    for (BasicBlock *Next : successors(Block))
      Visit(Next);
  }
  return false;
}

// The function's source lines and first line, from tidal._sources (inspect,
// then the sources tidal keeps of exec'd strings and python -c), or from
// inspect where the tidal package is not importable (tidalc).
static PyRef sourceLines(PyObject *Function) {
  PyRef Sources = PyRef::steal(PyImport_ImportModule("tidal._sources"));
  if (!Sources)
    PyErr_Clear();
  PyRef Reader = Sources ? Sources : importModule("inspect");
  return PyRef::steal(PyObject_CallMethod(Reader.get(), "getsourcelines", "O", Function));
}

static void parseSource(PyObject *Function, SourceInfo &Source, PyRef &Tree);

// A function's source and tree, read and parsed once per code object: every
// specialisation of a kernel, and every kernel calling a device function,
// compiles the same tree (the frontend never changes it: what it decides is
// kept in type maps keyed by its nodes). The entry holds a weak reference
// to the code object, so that an entry whose code object died (its address
// may come back as another's) is never used and is dropped.
struct ParsedSource {
  PyRef CodeRef; // weakref to the code object
  SourceInfo Source;
  PyRef Tree;
};

static std::unordered_map<PyObject *, ParsedSource> &parsedSources() {
  // Never destroyed: its references must not be released after Python's
  // finalisation.
  static auto &Parsed = *new std::unordered_map<PyObject *, ParsedSource>();
  return Parsed;
}

// A function defined inside another (InnerFunctions.cpp) has no source of
// its own to read: its tree is a node of the outer function's, with the
// outer function's lines.
void registerParsedSource(PyObject *Code, const SourceInfo &Source, PyObject *Tree) {
  auto &Parsed = parsedSources();
  auto Found = Parsed.find(Code);
  if (Found != Parsed.end() && PyWeakref_GetObject(Found->second.CodeRef.get()) == Code)
    return;
  PyRef CodeRef = PyRef::check(PyWeakref_NewRef(Code, nullptr));
  Parsed[Code] = ParsedSource{std::move(CodeRef), Source, PyRef::borrow(Tree)};
}

static void readSource(PyObject *Function, SourceInfo &Source, PyRef &Tree) {
  auto &Parsed = parsedSources();
  PyRef Code = PyRef::borrow(Function).attr("__code__");
  auto Found = Parsed.find(Code.get());
  if (Found != Parsed.end()) {
    if (PyWeakref_GetObject(Found->second.CodeRef.get()) == Code.get()) {
      Source = Found->second.Source;
      Tree = Found->second.Tree;
      return;
    }
    Parsed.erase(Found);
  }
  parseSource(Function, Source, Tree);
  PyRef CodeRef = PyRef::steal(PyWeakref_NewRef(Code.get(), nullptr));
  if (!CodeRef) { // not weakly referenceable: no cache
    PyErr_Clear();
    return;
  }
  // Drop the entries of dead code objects (kernels dropped since), so that
  // their trees do not outlive them.
  for (auto It = Parsed.begin(); It != Parsed.end();)
    It = PyWeakref_GetObject(It->second.CodeRef.get()) == Py_None ? Parsed.erase(It)
                                                                     : std::next(It);
  Parsed[Code.get()] = ParsedSource{std::move(CodeRef), Source, Tree};
}

static void parseSource(PyObject *Function, SourceInfo &Source, PyRef &Tree) {
  PyRef Code = PyRef::borrow(Function).attr("__code__");
  Source.File = Code.attr("co_filename").str();
  PyRef LinesAndStart = sourceLines(Function);
  if (!LinesAndStart) {
    // No source (a kernel from an interactive session, ...): say so, and why.
    if (!PyErr_ExceptionMatches(PyExc_OSError) && !PyErr_ExceptionMatches(PyExc_TypeError))
      throw PythonErrorSet();
    std::string Why = takePendingErrorText("");
    PyRef Name = PyRef::borrow(Function).attr("__qualname__");
    int Line = static_cast<int>(Code.attr("co_firstlineno").asLong());
    throw CompileError("CompileError",
                       "cannot read the source of '" + Name.str() +
                           "': tidal compiles kernels from their source (" + Why + ")",
                       {Source.File, Line, 0, 0, ""});
  }
  PyObject *Lines = PyTuple_GetItem(LinesAndStart.get(), 0);
  Source.FirstLine = static_cast<int>(
      PyLong_AsLong(PyTuple_GetItem(LinesAndStart.get(), 1)));
  Source.FirstLine = std::max(Source.FirstLine, 1);
  for (PyObject *L : listItems(Lines))
    Source.Lines.push_back(PyRef::borrow(L).str());

  // 1. Find the common indentation, 2. strip it, 3. parse.
  int Indent = -1;
  for (const std::string &L : Source.Lines) {
    size_t First = L.find_first_not_of(" \t");
    if (First == std::string::npos || L[First] == '\n' || L[First] == '#')
      continue;
    Indent = Indent < 0 ? static_cast<int>(First) : std::min(Indent, static_cast<int>(First));
  }
  Source.Indent = std::max(Indent, 0);
  std::string Text;
  for (const std::string &L : Source.Lines)
    Text += L.size() > static_cast<size_t>(Source.Indent) ? L.substr(Source.Indent)
                                                          : std::string("\n");
  PyRef Ast = importModule("ast");
  PyRef Module = PyRef::check(
      PyObject_CallMethod(Ast.get(), "parse", "s", Text.c_str()));
  PyRef Body = Module.attr("body");
  if (PyList_GET_SIZE(Body.get()) < 1)
    throw CompileError("CompileError", "no function definition found in the source",
                       {Source.File, Source.FirstLine, 1, 0, ""});
  Tree = PyRef::borrow(PyList_GET_ITEM(Body.get(), 0));
  // A lambda: its source lines are the statement that holds it; the
  // frontend compiles it as a def returning its body (tidal._sources).
  if (PyRef::borrow(Function).attr("__name__").str() == "<lambda>") {
    PyRef Sources = importModule("tidal._sources");
    PyRef Definition = PyRef::steal(PyObject_CallMethod(
        Sources.get(), "lambda_definition", "OOii", Function, Module.get(), Source.FirstLine,
        Source.Indent));
    if (!Definition) {
      if (!PyErr_ExceptionMatches(PyExc_OSError))
        throw PythonErrorSet();
      std::string Why = takePendingErrorText("");
      throw CompileError("CompileError", Why, {Source.File, Source.FirstLine, 0, 0, ""});
    }
    Tree = Definition;
  }
}

std::vector<std::string> parameterNames(PyObject *Function) {
  PyRef Code = PyRef::borrow(Function).attr("__code__");
  long Count = Code.attr("co_argcount").asLong();
  PyRef Names = Code.attr("co_varnames");
  std::vector<std::string> Out;
  for (long I = 0; I < Count; ++I)
    Out.push_back(PyRef::borrow(PyTuple_GetItem(Names.get(), I)).str());
  return Out;
}

FunctionCompiler::FunctionCompiler(PyObject *Fn, Module &M, const FrontendOptions &Options,
                                   DeviceFunctionCache &Devices)
    : Function(PyRef::borrow(Fn)), M(M), Ctx(M.getContext()), B(M.getContext()),
      Options(Options), Devices(Devices) {
  Globals = Function.attr("__globals__");
  Builtins = importModule("builtins");
  // Closure variables: co_freevars paired with __closure__ cells.
  PyRef FreeVars = Function.attr("__code__").attr("co_freevars");
  PyRef Cells = Function.attr("__closure__");
  if (!Cells.isNone())
    for (Py_ssize_t I = 0; I < PyTuple_GET_SIZE(FreeVars.get()); ++I) {
      PyObject *Contents = PyCell_Get(PyTuple_GET_ITEM(Cells.get(), I));
      if (!Contents) { // an empty cell: the name is not bound yet
        PyErr_Clear();
        continue;
      }
      Closure[PyRef::borrow(PyTuple_GET_ITEM(FreeVars.get(), I)).str()] =
          PyRef::steal(Contents);
    }
  readSource(Fn, Source, Tree);
  ParamNames = parameterNames(Fn);
  // A function defined inside another: the compile-time values it captured
  // (InnerFunctions.cpp), as closure variables.
  if (PyRef Bound = Function.attrOrNull("__tidal_bound__"); Bound && PyDict_Check(Bound.get())) {
    PyObject *Key, *Value;
    Py_ssize_t Position = 0;
    while (PyDict_Next(Bound.get(), &Position, &Key, &Value))
      Closure[PyRef::borrow(Key).str()] = PyRef::borrow(Value);
  }
}

// --- errors --------------------------------------------------------------------

SourceLocation FunctionCompiler::locate(PyObject *Node) const {
  SourceLocation L;
  L.File = Source.File;
  PyRef Line = Node ? PyRef::steal(PyObject_GetAttrString(Node, "lineno")) : PyRef();
  if (!Line) {
    PyErr_Clear();
    L.Line = Source.FirstLine;
    return L;
  }
  long Relative = PyLong_AsLong(Line.get());
  L.Line = static_cast<int>(Relative) + Source.FirstLine - 1;
  auto Column = [&](const char *Name) -> int {
    PyObject *C = PyObject_GetAttrString(Node, Name);
    if (!C || C == Py_None) {
      PyErr_Clear();
      Py_XDECREF(C);
      return 0;
    }
    long V = PyLong_AsLong(C);
    Py_DECREF(C);
    return static_cast<int>(V) + Source.Indent + 1;
  };
  L.Column = Column("col_offset");
  PyRef EndLine = PyRef::steal(PyObject_GetAttrString(Node, "end_lineno"));
  PyErr_Clear();
  if (EndLine && !EndLine.isNone() && PyLong_AsLong(EndLine.get()) == Relative)
    L.EndColumn = Column("end_col_offset");
  if (Relative >= 1 && static_cast<size_t>(Relative) <= Source.Lines.size())
    L.SourceLine = Source.Lines[Relative - 1];
  return L;
}

void FunctionCompiler::fail(const std::string &Kind, PyObject *Node,
                            const std::string &Message) {
  throw CompileError(Kind, Message, locate(Node));
}

// --- dispatch ---------------------------------------------------------------------

const FunctionCompiler::ExpressionRule *FunctionCompiler::expressionRule(const std::string &Kind) {
  static const std::unordered_map<std::string, ExpressionRule> Rules = {
#define TIDAL_EXPRESSION(Kind, TypeHandler, EmitHandler)                                      \
  {#Kind, {&FunctionCompiler::TypeHandler, &FunctionCompiler::EmitHandler}},
#include "AstNodes.def"
  };
  auto It = Rules.find(Kind);
  return It == Rules.end() ? nullptr : &It->second;
}

const FunctionCompiler::StatementRule *FunctionCompiler::statementRule(const std::string &Kind) {
  static const std::unordered_map<std::string, StatementRule> Rules = {
#define TIDAL_STATEMENT(Kind, TypeHandler, EmitHandler)                                       \
  {#Kind, {&FunctionCompiler::TypeHandler, &FunctionCompiler::EmitHandler}},
#include "AstNodes.def"
  };
  auto It = Rules.find(Kind);
  return It == Rules.end() ? nullptr : &It->second;
}

void FunctionCompiler::warnAt(PyObject *Node, const char *Module, const char *Category,
                              const std::string &Message) {
  PyRef Class = importModule(Module).attr(Category);
  SourceLocation Where = locate(Node);
  if (PyErr_WarnExplicit(Class.get(), Message.c_str(), Where.File.c_str(), Where.Line, nullptr,
                         nullptr) < 0)
    throw PythonErrorSet();
}

void FunctionCompiler::internalError(PyObject *Node, const std::string &Message) {
  throw CompileError("CompileError", "internal error: " + Message, locate(Node));
}

TypedValue FunctionCompiler::emitExpression(PyObject *Node) {
  // Instructions get the position of the node that makes them: children
  // set their own and the parent's comes back after each.
  DebugLoc Parent = B.getCurrentDebugLocation();
  PyObject *ParentNode = LocationNode;
  setDebugLocation(Node);
  const ExpressionRule *Rule = expressionRule(nodeKind(Node));
  if (!Rule)
    internalError(Node, "no emitter for the expression '" + sourceText(Node) + "'");
  TypedValue Result = (this->*Rule->Emit)(Node);
  // The compile-time values are typing's.
  const ExpressionType &Typed = typeOf(Node);
  if (Typed.UnwrapsOptional && Result.T.isOptional()) // used as its value
    Result = unwrapOptional(Result, Node);
  Result.ConstInt = Typed.ConstInt;
  Result.TupleConstInts = Typed.TupleConstInts;
  B.SetCurrentDebugLocation(Parent);
  LocationNode = ParentNode;
  return Result;
}

void FunctionCompiler::emitStatement(PyObject *Node) {
  setDebugLocation(Node);
  const StatementRule *Rule = statementRule(nodeKind(Node));
  if (!Rule)
    internalError(Node, "no emitter for the statement '" + sourceText(Node) + "'");
  (this->*Rule->Emit)(Node);
  // A statement's trailing code (loop latches, joins) is the statement's.
  setDebugLocation(Node);
}

void FunctionCompiler::emitBody(PyObject *List) {
  for (PyObject *S : listItems(List)) {
    emitStatement(S);
    if (endsPrunedPath(S)) // typing typed none of what follows
      return;
  }
}

// --- the kernel ---------------------------------------------------------------------

llvm::Function *FunctionCompiler::compileKernel(const std::vector<frontend::Type> &ArgTypes) {
  std::string Name = identifierField(Tree.get(), "name");
  if (nodeKind(Tree.get()) != "FunctionDef")
    unsupported(Tree.get(), "only plain functions can be kernels");
  PyRef Args = field(Tree.get(), "args");
  for (const char *Unsupported : {"vararg", "kwarg"})
    if (!field(Args.get(), Unsupported).isNone())
      unsupported(Tree.get(), "kernels cannot take *args or **kwargs");
  if (ParamNames.size() != ArgTypes.size())
    throw CompileError("TypingError",
                       "kernel '" + Name + "' takes " + std::to_string(ParamNames.size()) +
                           " arguments but the signature has " +
                           std::to_string(ArgTypes.size()),
                       locate(Tree.get()));
  PyRef Body = field(Tree.get(), "body");
  for (size_t I = 0; I < ParamNames.size(); ++I)
    Variables[ParamNames[I]].T = ArgTypes[I];
  typeToFixedPoint(Body.get());
  Body = field(Tree.get(), "body"); // unrolled by literal_unroll loops, if any
  // The whole call tree is typed: emit the device functions, then the kernel.
  emitDevices();
  llvm::Function *K = emitFunction(Body.get(), ArgTypes, symbolName(Name),
                                   llvm::Type::getVoidTy(Ctx), GlobalValue::ExternalLinkage);
  // Mark it a kernel for the plugin (docs/markers.md).
  NamedMDNode *Kernels = M.getOrInsertNamedMetadata(KernelsMetadataName);
  Kernels->addOperand(MDNode::get(Ctx, {ValueAsMetadata::get(K)}));
  applyKernelOptions(K);
  return K;
}

// The jit options that are facts about the kernel or the module
// (docs/markers.md, "kernel-level options").
void FunctionCompiler::applyKernelOptions(llvm::Function *Kernel) {
  if (Options.MaxThreadsPerBlock)
    Kernel->addFnAttr(MaxThreadsAttribute, std::to_string(Options.MaxThreadsPerBlock));
  if (Options.MinBlocksPerSM)
    Kernel->addFnAttr(MinBlocksAttribute, std::to_string(Options.MinBlocksPerSM));
  if (Options.MaxRegisters)
    Kernel->addFnAttr(MaxRegistersAttribute, std::to_string(Options.MaxRegisters));
  if (Options.FastMath) {
    M.addModuleFlag(Module::Override, FlushDenormalsFlag, uint32_t(1));
    M.addModuleFlag(Module::Override, PreciseDivisionFlag, uint32_t(0));
    M.addModuleFlag(Module::Override, PreciseSqrtFlag, uint32_t(0));
    M.addModuleFlag(Module::Override, FastFunctionsFlag, uint32_t(1));
  }
  if (Options.Debug)
    M.addModuleFlag(Module::Override, DebugFlag, uint32_t(1));
}

llvm::Type *FunctionCompiler::returnLLVMType(const frontend::Type &T) const {
  std::vector<llvm::Type *> Parts = partTypes(T);
  if (Parts.empty())
    return llvm::Type::getVoidTy(Ctx);
  if (Parts.size() == 1)
    return Parts[0];
  return StructType::get(Ctx, Parts);
}

void FunctionCompiler::emitDevices() {
  for (size_t Index = 0; Index < Devices.Compiled.size(); ++Index)
    emitDeviceFunction(Index);
}

llvm::Function *FunctionCompiler::emitDeviceFunction(size_t Index) {
  if (Index >= Devices.Compiled.size())
    return nullptr;
  if (!Devices.Compiled[Index].F && Devices.Compiled[Index].Compiler) {
    // Held here while it emits: emitting it may emit others.
    std::shared_ptr<FunctionCompiler> Compiler = std::move(Devices.Compiled[Index].Compiler);
    Devices.Compiled[Index].InProgress = Compiler.get();
    llvm::Function *Emitted = Compiler->emitDevice();
    // @cuda.jit(device=True, forceinline=True), which marks its py_func
    // (tidal/cuda/dispatcher.py): inlined at the LLVM IR level, as numba-cuda's.
    if (PyObject_HasAttrString(Devices.Compiled[Index].Function, "__tidal_forceinline__"))
      Emitted->addFnAttr(Attribute::AlwaysInline);
    Devices.Compiled[Index].F = Emitted;
    Devices.Compiled[Index].InProgress = nullptr;
  }
  // Being emitted (mutual recursion: f emits g, which calls f): its
  // function exists from the start of its emission.
  if (!Devices.Compiled[Index].F && Devices.Compiled[Index].InProgress)
    return Devices.Compiled[Index].InProgress->F;
  return Devices.Compiled[Index].F;
}

DeviceFunctionCache::Entry
FunctionCompiler::typeDevice(const std::vector<frontend::Type> &ArgTypes,
                                const frontend::Type *Declared,
                                const std::vector<ParameterConstant> &Constants) {
  std::string Name = identifierField(Tree.get(), "name");
  IsDevice = true;
  if (Declared)
    DeclaredReturn = *Declared;
  PyRef Body = field(Tree.get(), "body");
  for (size_t I = 0; I < ParamNames.size(); ++I)
    Variables[ParamNames[I]].T = ArgTypes[I];
  // Literal arguments are constants inside, unless the body rebinds them
  // (a version of the name of another type, x.1, is not the parameter).
  splitVariableVersions();
  std::set<std::string> Assigned = assignedNames(Body.get());
  for (size_t I = 0; I < Constants.size() && I < ParamNames.size(); ++I)
    if (Constants[I].known() && !Assigned.count(ParamNames[I]))
      ConstantParameters[ParamNames[I]] = Constants[I];
  typeToFixedPoint(Body.get());
  Body = field(Tree.get(), "body"); // unrolled by literal_unroll loops, if any
  if (Declared)
    ReturnType = *Declared;
  if (FirstBareReturn && !ReturnType.isNone() && !ReturnType.isOptional())
    typingError(FirstBareReturn, "device function returns " + ReturnType.str() +
                                     " on other paths: a bare 'return' here returns nothing");
  // A local array lives in the function's frame, which ends with the call:
  // an array it returns must not be one (nor a view of one).
  if (holdsArray(ReturnType))
    for (const auto &[CallNode, Target] : Typing.Calls)
      if (Target.Record && std::string(Target.Record->PythonPath) == "cuda.local.array")
        typingError(CallNode, "device function '" + Name + "' returns " + ReturnType.str() +
                                  " and makes a local array, whose memory ends with the call: "
                                  "return views of its array arguments or of shared arrays, "
                                  "or take the local array as an argument");
  bool Breaks = false;
  bool ReachesEnd = !partTypes(ReturnType).empty() && fallsThrough(Body.get(), Breaks);
  // Its end returns None, as in Python: Optional, as Numba types it (not
  // under its calls of itself, typed with the returns' type).
  bool CallsItself = std::any_of(Typing.Calls.begin(), Typing.Calls.end(),
                                 [](const auto &Call) { return Call.second.SelfCall; });
  if (ReachesEnd && !Declared && !CallsItself &&
      unify(ReturnType, frontend::Type::none(), ReturnType))
    ReachesEnd = false;
  if (ReachesEnd && !ReturnType.isOptional())
    throw CompileError("TypingError",
                       "device function '" + Name + "' returns " + ReturnType.str() +
                           " on some paths but can reach its end without a return",
                       locate(Tree.get()));
  // The symbol spells the specialisation: argument types, the names of
  // compile-time objects, literal values (LLVM numbers any repeat).
  std::string Symbol = symbolName(Name);
  for (size_t I = 0; I < ArgTypes.size(); ++I) {
    Symbol += "." + ArgTypes[I].mangle();
    if (ArgTypes[I].isPyObject())
      Symbol += compileTimeObjectName(static_cast<PyObject *>(ArgTypes[I].Object));
    if (I < Constants.size() && Constants[I].Int)
      Symbol += "c" + std::to_string(*Constants[I].Int);
    for (int64_t V : I < Constants.size() ? Constants[I].Tuple : std::vector<int64_t>())
      Symbol += "c" + std::to_string(V);
  }
  DeviceArgTypes = ArgTypes;
  DeviceSymbol = Symbol;
  return {Function.get(), ArgTypes, Constants, nullptr, ReturnType, nullptr};
}

llvm::Function *FunctionCompiler::emitDevice() {
  PyRef Body = field(Tree.get(), "body");
  return emitFunction(Body.get(), DeviceArgTypes, DeviceSymbol, returnLLVMType(ReturnType),
                      GlobalValue::InternalLinkage);
}

const ExpressionType &FunctionCompiler::typeOf(PyObject *Node) const {
  if (const ExpressionType *Found = Typing.find(Node))
    return *Found;
  throw CompileError("CompileError",
                     "internal error: typing left the expression '" + sourceText(Node) +
                         "' without a type",
                     locate(Node));
}

llvm::Function *FunctionCompiler::emitFunction(PyObject *Body, const std::vector<frontend::Type> &ArgTypes,
                                         const std::string &Symbol, llvm::Type *ResultType,
                                         GlobalValue::LinkageTypes Linkage) {
  // The flattened parameters, one alloca per variable part.
  std::vector<llvm::Type *> Params;
  for (const frontend::Type &T : ArgTypes)
    for (llvm::Type *P : partTypes(T))
      Params.push_back(P->isIntegerTy(1) ? llvm::Type::getInt8Ty(Ctx) : P);
  F = llvm::Function::Create(FunctionType::get(ResultType, Params, false), Linkage, Symbol, M);
  B.SetInsertPoint(BasicBlock::Create(Ctx, "entry", F));
  if (Options.FastMath)
    B.setFastMathFlags(FastMathFlags::getFast());
  Subprogram = debugSubprogram(F, identifierField(Tree.get(), "name"));
  std::set<std::string> MaybeUnbound;
  for (PyObject *Read : NameBindings.MaybeUnboundReads)
    MaybeUnbound.insert(identifierField(Read, "id"));
  for (auto &[VarName, Var] : Variables) {
    if (Var.T.isUndefined() || Var.T.isPyObject())
      continue;
    std::vector<llvm::Type *> Parts = partTypes(Var.T);
    // Zero until assigned: a local assigned on some paths only (which
    // Numba accepts, and BindingAnalysis lets through) reads a defined value.
    for (size_t I = 0; I < Parts.size(); ++I) {
      Var.Slots.push_back(entryAlloca(
          Parts[I], VarName + (Parts.size() > 1 ? "." + std::to_string(I) : "") + ".addr"));
      B.CreateStore(Constant::getNullValue(Parts[I]), Var.Slots.back());
    }
    // ... but an array's or record's zero is a null pointer, whose use
    // LLVM may take as unreachable (the whole kernel with it): such reads
    // check that the variable was assigned (emitLoad).
    bool HasPointer = std::any_of(Parts.begin(), Parts.end(),
                                  [](llvm::Type *P) { return P->isPointerTy(); });
    if (HasPointer && MaybeUnbound.count(VarName)) {
      Var.Bound = entryAlloca(B.getInt1Ty(), VarName + ".bound");
      B.CreateStore(B.getFalse(), Var.Bound);
    }
  }
  unsigned ArgIndex = 0;
  for (size_t I = 0; I < ParamNames.size(); ++I) {
    TypedValue V(ArgTypes[I]);
    std::vector<llvm::Type *> Parts = partTypes(ArgTypes[I]);
    for (size_t P = 0; P < Parts.size(); ++P) {
      Argument *A = F->getArg(ArgIndex++);
      std::string PartName = ParamNames[I];
      if (ArgTypes[I].isArray() && P > 0) {
        unsigned Dim = (P - 1) % ArgTypes[I].NDim;
        PartName += (P <= ArgTypes[I].NDim ? ".shape." : ".stride.") + std::to_string(Dim);
      } else if (Parts.size() > 1 && !ArgTypes[I].isArray()) {
        PartName += "." + std::to_string(P);
      }
      A->setName(PartName);
      V.Parts.push_back(Parts[P]->isIntegerTy(1) ? B.CreateTrunc(A, Parts[P]) : A);
    }
    emitStore(ParamNames[I], V, Tree.get());
  }
  emitBody(Body);
  BasicBlock *Last = B.GetInsertBlock();
  if (!Last->getTerminator()) {
    // Typing rejected a device function with a result whose end is reachable.
    if (ResultType->isVoidTy())
      B.CreateRetVoid();
    else if (IsDevice && ReturnType.isOptional()) // its end returns None
      emitReturnValue(convert(TypedValue(frontend::Type::none()), ReturnType, Tree.get()));
    else if (!reachableFromEntry(Last))
      B.CreateUnreachable();
    else
      internalError(Tree.get(), "typing found no path to the end of '" + Symbol +
                                    "' but its IR has one");
  }

  // Variables live in allocas while emitting; promote them to SSA values so
  // that the marker IR reads like hand-written IR.
  std::vector<AllocaInst *> Allocas;
  for (Instruction &I : F->getEntryBlock())
    if (auto *A = dyn_cast<AllocaInst>(&I); A && isAllocaPromotable(A))
      Allocas.push_back(A);
  DominatorTree DT(*F);
  PromoteMemToReg(Allocas, DT);
  if (DebugBuilder)
    DebugBuilder->finalizeSubprogram(Subprogram), DebugBuilder->finalize();

  std::string Problems;
  raw_string_ostream OS(Problems);
  if (verifyFunction(*F, &OS))
    throw CompileError("CompileError",
                       "internal error: tidal emitted invalid IR for '" + Symbol + "': " + OS.str(),
                       locate(Tree.get()));
  return F;
}

// --- variables ---------------------------------------------------------------------

void FunctionCompiler::emitStore(const std::string &Name, const TypedValue &V, PyObject *Node) {
  Variable &Var = Variables[Name];
  if (Var.T.isPyObject())
    return;
  TypedValue Converted = convert(V, Var.T, Node);
  for (size_t I = 0; I < Var.Slots.size(); ++I)
    B.CreateStore(Converted.Parts[I], Var.Slots[I]);
  if (Var.Bound)
    B.CreateStore(B.getTrue(), Var.Bound);
}

TypedValue FunctionCompiler::emitLoad(const std::string &Name, PyObject *Node) {
  Variable &Var = Variables[Name];
  if (Var.T.isUndefined())
    internalError(Node, "variable '" + Name + "' has no type while emitting");
  TypedValue V(Var.T);
  if (Var.T.isPyObject())
    return V;
  if (auto Constant = ConstantParameters.find(Name); Constant != ConstantParameters.end()) {
    V.ConstInt = Constant->second.Int;
    V.TupleConstInts = Constant->second.Tuple;
  }
  if (Var.Bound && NameBindings.MaybeUnboundReads.count(Node)) {
    // As Python: UnboundLocalError (with debug=True; else the thread ends,
    // as for any raise in Numba).
    BasicBlock *Unbound = BasicBlock::Create(Ctx, Name + ".unbound", F);
    BasicBlock *Bound = BasicBlock::Create(Ctx, Name + ".bound", F);
    B.CreateCondBr(B.CreateLoad(B.getInt1Ty(), Var.Bound), Bound, Unbound);
    B.SetInsertPoint(Unbound);
    PyRef Arguments = PyRef::check(Py_BuildValue(
        "(s)", ("local variable '" + sourceName(Name) + "' referenced before assignment").c_str()));
    emitRaise(PyExc_UnboundLocalError, Arguments.get(), Node);
    if (!B.GetInsertBlock()->getTerminator()) // emitRaise's dead block
      B.CreateUnreachable();
    B.SetInsertPoint(Bound);
  }
  std::vector<llvm::Type *> Parts = partTypes(Var.T);
  for (size_t I = 0; I < Parts.size(); ++I)
    V.Parts.push_back(B.CreateLoad(Parts[I], Var.Slots[I], Name));
  return V;
}

// --- entry point ---------------------------------------------------------------

KernelModule emitKernel(PyObject *Function, const std::vector<frontend::Type> &ArgTypes,
                        const FrontendOptions &Options) {
  KernelModule Out;
  Out.Context = std::make_unique<LLVMContext>();
  PyRef Name = PyRef::borrow(Function).attr("__name__");
  PyRef ModuleName = PyRef::borrow(Function).attrOrNull("__module__");
  Out.Module = std::make_unique<llvm::Module>(
      ModuleName && !ModuleName.isNone() ? ModuleName.str() : Name.str(), *Out.Context);
  DeviceFunctionCache Devices;
  Devices.Kernel = Function;
  FunctionCompiler Compiler(Function, *Out.Module, Options, Devices);
  llvm::Function *F = Compiler.compileKernel(ArgTypes);
  Out.KernelName = F->getName().str();
  Out.ParamTypes = ArgTypes;
  Out.SourceFile = PyRef::borrow(Function).attr("__code__").attr("co_filename").str();
  Out.FirstLine = Compiler.source().FirstLine;
  Out.SourceLines = Compiler.source().Lines;
  Out.VariableTypes = Compiler.variableTypes();
  Out.Module->setSourceFileName(Out.SourceFile);
  return Out;
}

} // namespace tidal::frontend
