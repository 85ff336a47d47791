#include "FunctionCompiler.h"
#include "BindingAnalysis.h"
#include "Operators.h"

#include "llvm/IR/CFG.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/IR/Dominators.h"
#include "llvm/Transforms/Utils/PromoteMemToReg.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace llvm;

namespace tidal::frontend {

// --- AST access ------------------------------------------------------------

static PyRef field(PyObject *Node, const char *Name) {
  return PyRef::check(PyObject_GetAttrString(Node, Name));
}

static std::string nodeKind(PyObject *Node) { return typeName(Node); }

static std::vector<PyObject *> listItems(PyObject *List) {
  std::vector<PyObject *> Items;
  if (!List || !PyList_Check(List))
    return Items;
  for (Py_ssize_t I = 0; I < PyList_GET_SIZE(List); ++I)
    Items.push_back(PyList_GET_ITEM(List, I));
  return Items;
}

static std::string identifierField(PyObject *Node, const char *Name) {
  return field(Node, Name).str();
}

// Friendly names of the constructs kernels reject, by AST node kind.
static const std::map<std::string, std::string> &unsupportedConstructs() {
  static const std::map<std::string, std::string> Names = {
      {"With", "'with' statements"},
      {"AsyncWith", "'async with' statements"},
      {"Try", "'try' statements"},
      {"TryStar", "'try' statements"},
      {"Raise", "'raise' statements"},
      {"FunctionDef", "nested function definitions"},
      {"AsyncFunctionDef", "nested function definitions"},
      {"ClassDef", "class definitions"},
      {"Lambda", "lambda expressions"},
      {"Yield", "generators ('yield')"},
      {"YieldFrom", "generators ('yield from')"},
      {"Await", "'await' expressions"},
      {"GeneratorExp", "generator expressions"},
      {"ListComp", "list comprehensions"},
      {"SetComp", "set comprehensions"},
      {"DictComp", "dict comprehensions"},
      {"List", "lists"},
      {"Dict", "dicts"},
      {"Set", "sets"},
      {"JoinedStr", "f-strings"},
      {"Starred", "starred expressions"},
      {"Global", "'global' statements"},
      {"Nonlocal", "'nonlocal' statements"},
      {"Delete", "'del' statements"},
      {"Import", "imports"},
      {"ImportFrom", "imports"},
      {"Match", "'match' statements"},
      {"NamedExpr", "assignment expressions (':=')"},
      {"AnnAssign", "annotated assignments"},
      {"AsyncFor", "'async for' loops"},
      {"Slice", "slices"},
  };
  return Names;
}

// --- construction ------------------------------------------------------------

// Reads the function's source lines and parses them (dedented) with `ast`.
static void readSource(PyObject *Function, SourceInfo &Source, PyRef &Tree) {
  PyRef Inspect = importModule("inspect");
  PyRef Code = PyRef::borrow(Function).attr("__code__");
  Source.File = Code.attr("co_filename").str();
  PyRef LinesAndStart = PyRef::steal(
      PyObject_CallMethod(Inspect.get(), "getsourcelines", "O", Function));
  if (!LinesAndStart) {
    // No source (a kernel from exec() or an interactive session): say so.
    if (!PyErr_ExceptionMatches(PyExc_OSError) && !PyErr_ExceptionMatches(PyExc_TypeError))
      throw PythonErrorSet();
    PyErr_Clear();
    PyRef Name = PyRef::borrow(Function).attr("__qualname__");
    int Line = static_cast<int>(Code.attr("co_firstlineno").asLong());
    throw CompileError("CompileError",
                       "cannot read the source of '" + Name.str() +
                           "': tidal compiles kernels from their source, so they must be "
                           "defined in a file (not in exec() or an interactive session)",
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

// --- types ----------------------------------------------------------------------

llvm::Type *FunctionCompiler::llvmType(Scalar S) const {
  switch (S) {
  case Scalar::Bool:
    return llvm::Type::getInt1Ty(Ctx);
  case Scalar::Float16:
    return llvm::Type::getHalfTy(Ctx);
  case Scalar::Float32:
    return llvm::Type::getFloatTy(Ctx);
  case Scalar::Float64:
    return llvm::Type::getDoubleTy(Ctx);
  case Scalar::Complex64:
  case Scalar::Complex128: {
    llvm::Type *Component = llvmType(componentOf(S));
    return StructType::get(Ctx, {Component, Component});
  }
  default:
    return llvm::Type::getIntNTy(Ctx, bitWidth(S));
  }
}

llvm::Type *FunctionCompiler::llvmMemoryType(Scalar S) const {
  return S == Scalar::Bool ? llvm::Type::getInt8Ty(Ctx) : llvmType(S);
}

std::vector<llvm::Type *> FunctionCompiler::partTypes(const frontend::Type &T) const {
  std::vector<llvm::Type *> Parts;
  switch (T.K) {
  case frontend::Type::Kind::Scalar:
    Parts.push_back(llvmType(T.Elem));
    break;
  case frontend::Type::Kind::Array:
    Parts.push_back(PointerType::get(Ctx, 0));
    for (unsigned I = 0; I < 2u * T.NDim; ++I)
      Parts.push_back(llvm::Type::getInt64Ty(Ctx));
    break;
  case frontend::Type::Kind::Record: // a pointer to the record's bytes
    Parts.push_back(PointerType::get(Ctx, 0));
    break;
  case frontend::Type::Kind::Tuple:
    for (const frontend::Type &E : T.Elements) {
      std::vector<llvm::Type *> Sub = partTypes(E);
      Parts.insert(Parts.end(), Sub.begin(), Sub.end());
    }
    break;
  default:
    break;
  }
  return Parts;
}

std::vector<unsigned> flattenedParameterSizes(const frontend::Type &T) {
  std::vector<unsigned> Sizes;
  switch (T.K) {
  case frontend::Type::Kind::Scalar:
    Sizes.push_back(byteSize(T.Elem));
    break;
  case frontend::Type::Kind::Array:
    Sizes.assign(1 + 2u * T.NDim, 8);
    break;
  case frontend::Type::Kind::Record:
    Sizes.push_back(8);
    break;
  case frontend::Type::Kind::Tuple:
    for (const frontend::Type &E : T.Elements) {
      std::vector<unsigned> Sub = flattenedParameterSizes(E);
      Sizes.insert(Sizes.end(), Sub.begin(), Sub.end());
    }
    break;
  default:
    break;
  }
  return Sizes;
}

Value *FunctionCompiler::makeComplex(Scalar S, Value *Re, Value *Im) {
  Value *Z = UndefValue::get(llvmType(S));
  Z = B.CreateInsertValue(Z, Re, 0);
  return B.CreateInsertValue(Z, Im, 1);
}

// + - * / on complex numbers; division as CPython's _Py_c_quot (scaled by
// the larger part of the divisor, so that it neither overflows early nor
// loses the small part).
Value *FunctionCompiler::complexArithmetic(BinaryOperator Op, Scalar S, Value *X, Value *Y) {
  Value *A = B.CreateExtractValue(X, 0), *Bi = B.CreateExtractValue(X, 1);
  Value *C = B.CreateExtractValue(Y, 0), *D = B.CreateExtractValue(Y, 1);
  if (Op == BinaryOperator::Add)
    return makeComplex(S, B.CreateFAdd(A, C), B.CreateFAdd(Bi, D));
  if (Op == BinaryOperator::Subtract)
    return makeComplex(S, B.CreateFSub(A, C), B.CreateFSub(Bi, D));
  if (Op == BinaryOperator::Multiply)
    return makeComplex(S, B.CreateFSub(B.CreateFMul(A, C), B.CreateFMul(Bi, D)),
                       B.CreateFAdd(B.CreateFMul(A, D), B.CreateFMul(Bi, C)));
  // Div
  Value *AbsC = B.CreateUnaryIntrinsic(Intrinsic::fabs, C);
  Value *AbsD = B.CreateUnaryIntrinsic(Intrinsic::fabs, D);
  Value *RealLarger = B.CreateFCmpOGE(AbsC, AbsD);
  // |c| >= |d|: ratio = d / c, denominator = c + d * ratio
  Value *R1 = B.CreateFDiv(D, C);
  Value *Den1 = B.CreateFAdd(C, B.CreateFMul(D, R1));
  Value *Re1 = B.CreateFDiv(B.CreateFAdd(A, B.CreateFMul(Bi, R1)), Den1);
  Value *Im1 = B.CreateFDiv(B.CreateFSub(Bi, B.CreateFMul(A, R1)), Den1);
  // |d| > |c|: ratio = c / d, denominator = c * ratio + d
  Value *R2 = B.CreateFDiv(C, D);
  Value *Den2 = B.CreateFAdd(B.CreateFMul(C, R2), D);
  Value *Re2 = B.CreateFDiv(B.CreateFAdd(B.CreateFMul(A, R2), Bi), Den2);
  Value *Im2 = B.CreateFDiv(B.CreateFSub(B.CreateFMul(Bi, R2), A), Den2);
  return makeComplex(S, B.CreateSelect(RealLarger, Re1, Re2), B.CreateSelect(RealLarger, Im1, Im2));
}

CValue FunctionCompiler::makeScalar(Scalar S, Value *V) const {
  CValue R(frontend::Type::scalar(S));
  if (V)
    R.Parts.push_back(V);
  return R;
}

CValue FunctionCompiler::makeTuple(std::vector<CValue> Elements) const {
  std::vector<frontend::Type> Types;
  CValue R;
  bool AllConstant = true;
  for (CValue &E : Elements) {
    Types.push_back(E.T);
    R.Parts.insert(R.Parts.end(), E.Parts.begin(), E.Parts.end());
    AllConstant &= E.ConstInt.has_value();
    if (AllConstant)
      R.TupleConstInts.push_back(*E.ConstInt);
  }
  if (!AllConstant)
    R.TupleConstInts.clear();
  R.T = frontend::Type::tuple(std::move(Types));
  return R;
}

std::vector<CValue> FunctionCompiler::tupleElements(const CValue &V) const {
  std::vector<CValue> Out;
  size_t Offset = 0;
  for (const frontend::Type &E : V.T.Elements) {
    CValue Element(E);
    size_t Count = partTypes(E).size();
    if (Emitting)
      Element.Parts.assign(V.Parts.begin() + Offset, V.Parts.begin() + Offset + Count);
    Offset += Count;
    if (V.TupleConstInts.size() == V.T.Elements.size())
      Element.ConstInt = V.TupleConstInts[Out.size()];
    Out.push_back(std::move(Element));
  }
  return Out;
}

// --- IR helpers -------------------------------------------------------------------

Value *FunctionCompiler::markerI32(const std::string &Name) {
  FunctionCallee Marker = M.getOrInsertFunction(
      "tidal." + Name, FunctionType::get(llvm::Type::getInt32Ty(Ctx), false));
  return B.CreateCall(Marker, {}, Name);
}

AllocaInst *FunctionCompiler::entryAlloca(llvm::Type *T, const std::string &Name) {
  BasicBlock &Entry = F->getEntryBlock();
  IRBuilder<> EntryBuilder(&Entry, Entry.getFirstInsertionPt());
  return EntryBuilder.CreateAlloca(T, nullptr, Name);
}

void FunctionCompiler::startDeadBlock() {
  B.SetInsertPoint(BasicBlock::Create(Ctx, "dead", F));
}

CValue FunctionCompiler::convert(const CValue &V, const frontend::Type &To, PyObject *Node) {
  if (V.T == To)
    return V;
  if (V.T.isScalar() && To.isScalar() && (isComplex(V.T.Elem) || isComplex(To.Elem))) {
    if (!isComplex(To.Elem) && To.Elem != Scalar::Bool)
      typingError(Node, "cannot convert " + V.T.str() + " to " + To.str() +
                            ": take .real, .imag or abs() of a complex number");
    CValue R(To);
    if (!Emitting)
      return R;
    if (To.Elem == Scalar::Bool) {
      R.Parts.push_back(truth(V, Node));
      return R;
    }
    frontend::Type Component = frontend::Type::scalar(componentOf(To.Elem));
    Value *Re, *Im;
    if (isComplex(V.T.Elem)) {
      Re = convert(makeScalar(componentOf(V.T.Elem), B.CreateExtractValue(V.scalar(), 0)),
                   Component, Node).scalar();
      Im = convert(makeScalar(componentOf(V.T.Elem), B.CreateExtractValue(V.scalar(), 1)),
                   Component, Node).scalar();
    } else {
      Re = convert(V, Component, Node).scalar();
      Im = ConstantFP::get(Re->getType(), 0.0);
    }
    R.Parts.push_back(makeComplex(To.Elem, Re, Im));
    return R;
  }
  if (V.T.isScalar() && To.isScalar()) {
    CValue R(To);
    if (!Emitting)
      return R;
    Value *X = V.scalar();
    Scalar From = V.T.Elem, Target = To.Elem;
    llvm::Type *T = llvmType(Target);
    if (Target == Scalar::Bool) {
      R.Parts.push_back(truth(V, Node));
    } else if (From == Scalar::Bool) {
      R.Parts.push_back(isFloat(Target) ? B.CreateUIToFP(X, T) : B.CreateZExt(X, T));
    } else if (isInteger(From) && isInteger(Target)) {
      R.Parts.push_back(B.CreateIntCast(X, T, isSigned(From)));
    } else if (isInteger(From)) {
      R.Parts.push_back(isSigned(From) ? B.CreateSIToFP(X, T) : B.CreateUIToFP(X, T));
    } else if (isInteger(Target)) {
      R.Parts.push_back(isSigned(Target) ? B.CreateFPToSI(X, T) : B.CreateFPToUI(X, T));
    } else {
      R.Parts.push_back(B.CreateFPCast(X, T));
    }
    return R;
  }
  if (V.T.isTuple() && To.isTuple() && V.T.Elements.size() == To.Elements.size()) {
    std::vector<CValue> Elements = tupleElements(V);
    for (size_t I = 0; I < Elements.size(); ++I)
      Elements[I] = convert(Elements[I], To.Elements[I], Node);
    return makeTuple(std::move(Elements));
  }
  if (V.T.isArray() && To.isArray() && V.T.Elem == To.Elem && V.T.NDim == To.NDim &&
      (To.Lay == Layout::A || To.Lay == V.T.Lay) && (To.ReadOnly || !V.T.ReadOnly)) {
    CValue R = V;
    R.T = To;
    return R;
  }
  typingError(Node, "cannot convert " + V.T.str() + " to " + To.str());
}

Value *FunctionCompiler::truth(const CValue &V, PyObject *Node) {
  if (!V.T.isScalar())
    typingError(Node, "cannot use a value of type " + V.T.str() + " as a condition");
  if (!Emitting)
    return nullptr;
  Value *X = V.scalar();
  if (V.T.Elem == Scalar::Bool)
    return X;
  if (isFloat(V.T.Elem)) // NaN is true, as in Python
    return B.CreateFCmpUNE(X, ConstantFP::get(X->getType(), 0.0));
  if (isComplex(V.T.Elem)) {
    Value *Zero = ConstantFP::get(llvmType(componentOf(V.T.Elem)), 0.0);
    return B.CreateOr(B.CreateFCmpUNE(B.CreateExtractValue(X, 0), Zero),
                      B.CreateFCmpUNE(B.CreateExtractValue(X, 1), Zero));
  }
  return B.CreateICmpNE(X, ConstantInt::get(X->getType(), 0));
}

int64_t FunctionCompiler::constantInt(const CValue &V, PyObject *Node, const std::string &What) {
  if (!V.ConstInt)
    typingError(Node, What + " must be a constant integer");
  return *V.ConstInt;
}

Value *FunctionCompiler::callMarker(const std::string &Name, llvm::Type *Result,
                                    ArrayRef<Value *> Args, bool VarArg) {
  std::vector<llvm::Type *> Params;
  size_t Fixed = VarArg ? 1 : Args.size();
  for (size_t I = 0; I < Fixed; ++I)
    Params.push_back(Args[I]->getType());
  FunctionCallee Marker = M.getOrInsertFunction(
      "tidal." + Name, FunctionType::get(Result, Params, VarArg));
  return B.CreateCall(Marker, Args);
}

Scalar FunctionCompiler::dtypeOf(const CValue &DType, PyObject *Node) {
  if (DType.T.isPyObject()) {
    PyObject *O = static_cast<PyObject *>(DType.T.Object);
    std::string Name;
    PyRef Intrinsic = PyRef::borrow(O).attrOrNull("__tidal_intrinsic__");
    if (Intrinsic && PyUnicode_Check(Intrinsic.get()) &&
        Intrinsic.str().rfind("cast.", 0) == 0)
      Name = Intrinsic.str().substr(5);
    else if (PyType_Check(O) && PyObject_HasAttrString(O, "__module__") &&
             PyRef::borrow(O).attr("__module__").str() == "numpy") {
      Name = reinterpret_cast<PyTypeObject *>(O)->tp_name;
      Name = Name.substr(Name.rfind('.') + 1);
    } else if (typeName(O) == "dtype" || typeName(O).rfind("dtype[", 0) == 0 ||
               PyObject_HasAttrString(O, "kind")) {
      PyRef DTypeName = PyRef::borrow(O).attrOrNull("name");
      if (DTypeName)
        Name = DTypeName.str();
    } else if (O == reinterpret_cast<PyObject *>(&PyFloat_Type)) {
      Name = "float64";
    } else if (O == reinterpret_cast<PyObject *>(&PyLong_Type)) {
      Name = "int64";
    } else if (O == reinterpret_cast<PyObject *>(&PyBool_Type)) {
      Name = "bool";
    }
    Scalar S;
    if (!Name.empty() && scalarFromName(Name, S))
      return S;
  }
  typingError(Node, "expected a dtype (tidal.float32, numpy.float32, ...), got " +
                        (DType.T.isPyObject() ? "'" + typeName(static_cast<PyObject *>(DType.T.Object)) + "'"
                                              : DType.T.str()));
}

CValue FunctionCompiler::makeArray(Scalar Elem, const std::vector<int64_t> &Shape, Value *Data) {
  CValue A(frontend::Type::array(Elem, static_cast<unsigned>(Shape.size()), Layout::C));
  if (!Emitting)
    return A;
  A.Parts.push_back(Data);
  for (int64_t E : Shape)
    A.Parts.push_back(B.getInt64(E));
  int64_t Stride = byteSize(Elem);
  std::vector<Value *> Strides(Shape.size());
  for (size_t D = Shape.size(); D-- > 0;) {
    Strides[D] = B.getInt64(Stride);
    Stride *= Shape[D];
  }
  A.Parts.insert(A.Parts.end(), Strides.begin(), Strides.end());
  return A;
}

Value *FunctionCompiler::constantString(const std::string &Text, const std::string &Name) {
  Constant *Data = ConstantDataArray::getString(Ctx, Text, /*AddNull=*/true);
  auto *G = new GlobalVariable(M, Data->getType(), /*isConstant=*/true,
                               GlobalValue::PrivateLinkage, Data, Name);
  G->setUnnamedAddr(GlobalValue::UnnamedAddr::Global);
  G->setAlignment(Align(1));
  return G;
}

std::vector<std::pair<std::string, std::string>> FunctionCompiler::variableTypes() const {
  std::vector<std::pair<std::string, std::string>> Out;
  for (const auto &[Name, Var] : Variables)
    if (!Var.T.isUndefined() && !Var.T.isPyObject())
      Out.emplace_back(Name, Var.T.str());
  return Out;
}

std::string FunctionCompiler::functionName() const {
  return identifierField(Tree.get(), "name");
}

// --- dispatch ---------------------------------------------------------------------

const std::unordered_map<std::string, FunctionCompiler::ExprHandler> &
FunctionCompiler::exprTable() {
  static const std::unordered_map<std::string, ExprHandler> Table = {
      {"Constant", &FunctionCompiler::visitConstant},
      {"Name", &FunctionCompiler::visitName},
      {"BinOp", &FunctionCompiler::visitBinOp},
      {"UnaryOp", &FunctionCompiler::visitUnaryOp},
      {"Compare", &FunctionCompiler::visitCompare},
      {"BoolOp", &FunctionCompiler::visitBoolOp},
      {"IfExp", &FunctionCompiler::visitIfExp},
      {"Attribute", &FunctionCompiler::visitAttribute},
      {"Subscript", &FunctionCompiler::visitSubscript},
      {"Call", &FunctionCompiler::visitCall},
      {"Tuple", &FunctionCompiler::visitTuple},
  };
  return Table;
}

const std::unordered_map<std::string, FunctionCompiler::StmtHandler> &
FunctionCompiler::stmtTable() {
  static const std::unordered_map<std::string, StmtHandler> Table = {
      {"Assign", &FunctionCompiler::visitAssign},
      {"AugAssign", &FunctionCompiler::visitAugAssign},
      {"Expr", &FunctionCompiler::visitExpr},
      {"If", &FunctionCompiler::visitIf},
      {"While", &FunctionCompiler::visitWhile},
      {"For", &FunctionCompiler::visitFor},
      {"Break", &FunctionCompiler::visitBreak},
      {"Continue", &FunctionCompiler::visitContinue},
      {"Pass", &FunctionCompiler::visitPass},
      {"Return", &FunctionCompiler::visitReturn},
      {"Assert", &FunctionCompiler::visitAssert},
  };
  return Table;
}

CValue FunctionCompiler::expr(PyObject *Node) {
  // Instructions get the position of the node that makes them: children
  // set their own and the parent's comes back after each.
  DebugLoc Parent = B.getCurrentDebugLocation();
  setDebugLocation(Node);
  std::string Kind = nodeKind(Node);
  auto It = exprTable().find(Kind);
  if (It != exprTable().end()) {
    CValue Result = (this->*It->second)(Node);
    if (Emitting)
      B.SetCurrentDebugLocation(Parent);
    return Result;
  }
  auto Named = unsupportedConstructs().find(Kind);
  unsupported(Node, (Named != unsupportedConstructs().end() ? Named->second
                                                            : "'" + Kind + "' expressions") +
                        " are not supported in kernels");
}

void FunctionCompiler::stmt(PyObject *Node) {
  setDebugLocation(Node);
  std::string Kind = nodeKind(Node);
  auto It = stmtTable().find(Kind);
  if (It != stmtTable().end()) {
    (this->*It->second)(Node);
    // A statement's trailing code (loop latches, joins) is the statement's.
    setDebugLocation(Node);
    return;
  }
  auto Named = unsupportedConstructs().find(Kind);
  unsupported(Node, (Named != unsupportedConstructs().end() ? Named->second
                                                            : "'" + Kind + "' statements") +
                        " are not supported in kernels");
}

void FunctionCompiler::body(PyObject *List) {
  for (PyObject *S : listItems(List))
    stmt(S);
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
  llvm::Function *K = emitFunction(Body.get(), ArgTypes, Name, llvm::Type::getVoidTy(Ctx),
                             GlobalValue::ExternalLinkage);
  // Mark it a kernel for the plugin (docs/markers.md).
  NamedMDNode *Kernels = M.getOrInsertNamedMetadata("tidal.kernels");
  Kernels->addOperand(MDNode::get(Ctx, {ValueAsMetadata::get(K)}));
  applyKernelOptions(K);
  return K;
}

// The jit options that are facts about the kernel or the module
// (docs/markers.md, "kernel-level options").
void FunctionCompiler::applyKernelOptions(llvm::Function *Kernel) {
  if (Options.MaxThreadsPerBlock)
    Kernel->addFnAttr("tidal-maxntid", std::to_string(Options.MaxThreadsPerBlock));
  if (Options.MinBlocksPerSM)
    Kernel->addFnAttr("tidal-minctasm", std::to_string(Options.MinBlocksPerSM));
  if (Options.MaxRegisters)
    Kernel->addFnAttr("tidal-maxnreg", std::to_string(Options.MaxRegisters));
  if (Options.FastMath) {
    M.addModuleFlag(Module::Override, "tidal.ftz", uint32_t(1));
    M.addModuleFlag(Module::Override, "tidal.prec-div", uint32_t(0));
    M.addModuleFlag(Module::Override, "tidal.prec-sqrt", uint32_t(0));
  }
  if (Options.Debug)
    M.addModuleFlag(Module::Override, "tidal.debug", uint32_t(1));
}

// Debug locations: one DISubprogram per function, a DILocation per
// statement and expression (lineinfo=True or debug=True).
DISubprogram *FunctionCompiler::debugSubprogram(llvm::Function *Fn, const std::string &Name) {
  if (!Options.LineInfo && !Options.Debug)
    return nullptr;
  DIB = std::make_unique<DIBuilder>(M);
  std::string Path = Source.File, Directory = ".";
  size_t Slash = Path.rfind('/');
  if (Slash != std::string::npos) {
    Directory = Path.substr(0, Slash);
    Path = Path.substr(Slash + 1);
  }
  DIFile *File = DIB->createFile(Path, Directory);
  DICompileUnit *Unit = nullptr;
  if (NamedMDNode *Units = M.getNamedMetadata("llvm.dbg.cu"); Units && Units->getNumOperands())
    Unit = cast<DICompileUnit>(Units->getOperand(0));
  if (!Unit) {
    Unit = DIB->createCompileUnit(
        dwarf::DW_LANG_Python, File, "tidal", /*isOptimized=*/true, "", 0, "",
        Options.Debug ? DICompileUnit::FullDebug : DICompileUnit::LineTablesOnly);
    if (!M.getModuleFlag("Debug Info Version"))
      M.addModuleFlag(Module::Warning, "Debug Info Version", DEBUG_METADATA_VERSION);
    if (!M.getModuleFlag("Dwarf Version"))
      M.addModuleFlag(Module::Warning, "Dwarf Version", uint32_t(4));
  }
  DISubroutineType *Signature = DIB->createSubroutineType(DIB->getOrCreateTypeArray({}));
  DISubprogram *SP = DIB->createFunction(
      File, Name, Fn->getName(), File, static_cast<unsigned>(locate(Tree.get()).Line), Signature,
      static_cast<unsigned>(locate(Tree.get()).Line), DINode::FlagZero,
      DISubprogram::SPFlagDefinition | DISubprogram::SPFlagOptimized);
  Fn->setSubprogram(SP);
  return SP;
}

void FunctionCompiler::setDebugLocation(PyObject *Node) {
  if (!Subprogram || !Emitting)
    return;
  PyObject *Line = PyObject_GetAttrString(Node, "lineno");
  if (!Line) {
    PyErr_Clear();
    return;
  }
  Py_DECREF(Line);
  SourceLocation Where = locate(Node);
  B.SetCurrentDebugLocation(DILocation::get(Ctx, static_cast<unsigned>(Where.Line),
                                            static_cast<unsigned>(Where.Column), Subprogram));
}

llvm::Type *FunctionCompiler::returnLLVMType(const frontend::Type &T) const {
  std::vector<llvm::Type *> Parts = partTypes(T);
  if (Parts.empty())
    return llvm::Type::getVoidTy(Ctx);
  if (Parts.size() == 1)
    return Parts[0];
  return StructType::get(Ctx, Parts);
}

DeviceFunctionCache::Entry
FunctionCompiler::compileDevice(const std::vector<frontend::Type> &ArgTypes,
                                const frontend::Type *Declared) {
  std::string Name = identifierField(Tree.get(), "name");
  IsDevice = true;
  DeclaredReturn = Declared;
  PyRef Body = field(Tree.get(), "body");
  for (size_t I = 0; I < ParamNames.size(); ++I)
    Variables[ParamNames[I]].T = ArgTypes[I];
  typeToFixedPoint(Body.get());
  if (Declared)
    ReturnType = *Declared;
  std::string Symbol = Name;
  for (const frontend::Type &T : ArgTypes)
    Symbol += "." + T.mangle();
  llvm::Function *F = emitFunction(Body.get(), ArgTypes, Symbol, returnLLVMType(ReturnType),
                             GlobalValue::InternalLinkage);
  return {Function.get(), ArgTypes, F, ReturnType};
}

void FunctionCompiler::typeToFixedPoint(PyObject *Body) {
  // Before any typing: local names, assignment before use, loop-only
  // statements.
  NameBindings = analyseBindings(Body, ParamNames,
                                 [this](PyObject *Node) { return locate(Node); });
  // Variables' types only widen, so this ends.
  Emitting = false;
  constexpr int MaxTypingRounds = 32;
  for (int Round = 0;; ++Round) {
    TypesChanged = false;
    body(Body);
    if (!TypesChanged)
      break;
    if (Round == MaxTypingRounds)
      throw CompileError("TypingError", "the types of the variables do not settle",
                         locate(Tree.get()));
  }
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
  Emitting = true;
  for (auto &[VarName, Var] : Variables) {
    if (Var.T.isUndefined() || Var.T.isPyObject())
      continue;
    std::vector<llvm::Type *> Parts = partTypes(Var.T);
    for (size_t I = 0; I < Parts.size(); ++I)
      Var.Slots.push_back(entryAlloca(
          Parts[I], VarName + (Parts.size() > 1 ? "." + std::to_string(I) : "") + ".addr"));
  }
  unsigned ArgIndex = 0;
  for (size_t I = 0; I < ParamNames.size(); ++I) {
    CValue V(ArgTypes[I]);
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
    storeVariable(ParamNames[I], V, Tree.get());
  }
  body(Body);
  BasicBlock *Last = B.GetInsertBlock();
  if (!Last->getTerminator()) {
    bool Reachable = Last == &F->getEntryBlock() || !pred_empty(Last);
    if (ResultType->isVoidTy())
      B.CreateRetVoid();
    else if (!Reachable)
      B.CreateUnreachable();
    else
      throw CompileError("TypingError",
                         "device function '" + identifierField(Tree.get(), "name") +
                             "' returns " + ReturnType.str() +
                             " on some paths but can reach its end without a return",
                         locate(Tree.get()));
  }

  // Variables live in allocas while emitting; promote them to SSA values so
  // that the marker IR reads like hand-written IR.
  std::vector<AllocaInst *> Allocas;
  for (Instruction &I : F->getEntryBlock())
    if (auto *A = dyn_cast<AllocaInst>(&I); A && isAllocaPromotable(A))
      Allocas.push_back(A);
  DominatorTree DT(*F);
  PromoteMemToReg(Allocas, DT);
  if (DIB)
    DIB->finalizeSubprogram(Subprogram), DIB->finalize();

  std::string Problems;
  raw_string_ostream OS(Problems);
  if (verifyFunction(*F, &OS))
    throw CompileError("CompileError",
                       "internal error: tidal emitted invalid IR for '" + Symbol + "': " + OS.str(),
                       locate(Tree.get()));
  return F;
}

// --- variables ---------------------------------------------------------------------

void FunctionCompiler::storeVariable(const std::string &Name, const CValue &V, PyObject *Node) {
  Variable &Var = Variables[Name];
  if (!Emitting) {
    if (V.T.isUndefined())
      return;
    if (V.T.isPyObject() && !Var.T.isUndefined() && Var.T != V.T)
      typingError(Node, "variable '" + Name + "' is bound to different compile-time objects");
    frontend::Type Unified;
    if (!unify(Var.T, V.T, Unified))
      typingError(Node, "variable '" + Name + "' has type " + Var.T.str() +
                            " and cannot also hold a value of type " + V.T.str() +
                            ": a variable keeps one type in a kernel");
    if (Unified != Var.T) {
      Var.T = Unified;
      TypesChanged = true;
    }
    return;
  }
  if (Var.T.isPyObject())
    return;
  CValue Converted = convert(V, Var.T, Node);
  for (size_t I = 0; I < Var.Slots.size(); ++I)
    B.CreateStore(Converted.Parts[I], Var.Slots[I]);
}

CValue FunctionCompiler::loadVariable(const std::string &Name, PyObject *Node) {
  Variable &Var = Variables[Name];
  if (Var.T.isUndefined()) {
    if (!Emitting)
      return CValue(); // typed in a later round
    typingError(Node, "local variable '" + Name + "' is used before it is assigned");
  }
  CValue V(Var.T);
  if (Var.T.isPyObject())
    return V;
  if (Emitting) {
    std::vector<llvm::Type *> Parts = partTypes(Var.T);
    for (size_t I = 0; I < Parts.size(); ++I)
      V.Parts.push_back(B.CreateLoad(Parts[I], Var.Slots[I], Name));
  }
  return V;
}

// --- expressions -------------------------------------------------------------------

CValue FunctionCompiler::visitConstant(PyObject *Node) {
  PyRef Value = field(Node, "value");
  PyObject *O = Value.get();
  if (PyBool_Check(O)) {
    CValue R = makeScalar(Scalar::Bool, Emitting ? B.getInt1(O == Py_True) : nullptr);
    R.ConstInt = O == Py_True;
    return R;
  }
  if (PyLong_Check(O)) {
    int Overflow = 0;
    long long V = PyLong_AsLongLongAndOverflow(O, &Overflow);
    if (Overflow)
      typingError(Node, "integer literal does not fit in int64");
    CValue R = makeScalar(Scalar::Int64, Emitting ? B.getInt64(V) : nullptr);
    R.ConstInt = V;
    return R;
  }
  if (PyFloat_Check(O))
    return makeScalar(Scalar::Float64,
                      Emitting ? ConstantFP::get(llvm::Type::getDoubleTy(Ctx), PyFloat_AS_DOUBLE(O))
                               : nullptr);
  if (O == Py_None)
    return CValue(frontend::Type::none());
  if (PyUnicode_Check(O)) // only print() takes them; it reads the node itself
    return CValue(frontend::Type::pyObject(O));
  unsupported(Node, "constants of type '" + typeName(O) + "' are not supported in kernels");
}

CValue FunctionCompiler::visitName(PyObject *Node) {
  std::string Name = identifierField(Node, "id");
  if (NameBindings.LocalNames.count(Name))
    return loadVariable(Name, Node);
  return resolveGlobal(Name, Node);
}

CValue FunctionCompiler::resolveGlobal(const std::string &Name, PyObject *Node) {
  auto Cell = Closure.find(Name);
  if (Cell != Closure.end())
    return freezePyObject(Cell->second.get(), Node, "closure variable '" + Name + "'");
  PyObject *G = PyDict_GetItemString(Globals.get(), Name.c_str()); // borrowed
  if (G)
    return freezePyObject(G, Node, "global '" + Name + "'");
  PyRef Builtin = Builtins.attrOrNull(Name.c_str());
  if (Builtin)
    return freezePyObject(Builtin.get(), Node, "builtin '" + Name + "'");
  typingError(Node, "name '" + Name + "' is not defined");
}

// A global NumPy array: its bytes as a constant global, read through
// tidal.const.array (constant memory on the GPU), as a read-only C array.
CValue FunctionCompiler::constantArray(PyObject *O, PyObject *Node, const std::string &What) {
  PyRef Array = PyRef::borrow(O);
  Scalar Elem;
  if (!scalarFromName(Array.attr("dtype").attr("name").str(), Elem))
    unsupported(Node, What + " is an array of dtype " + Array.attr("dtype").attr("name").str() +
                          ", which kernels can't use");
  std::vector<int64_t> Shape;
  PyRef ShapeTuple = Array.attr("shape");
  for (Py_ssize_t I = 0; I < PyTuple_GET_SIZE(ShapeTuple.get()); ++I)
    Shape.push_back(PyLong_AsLongLong(PyTuple_GET_ITEM(ShapeTuple.get(), I)));
  CValue Out = makeArray(Elem, Shape, nullptr);
  Out.T.ReadOnly = true;
  if (!Emitting)
    return Out;
  GlobalVariable *&G = ConstantArrays[O];
  if (!G) {
    PyRef Numpy = importModule("numpy");
    PyRef Contiguous = PyRef::check(PyObject_CallMethod(Numpy.get(), "ascontiguousarray", "O", O));
    PyRef Bytes = PyRef::check(PyObject_CallMethod(Contiguous.get(), "tobytes", nullptr));
    StringRef Data(PyBytes_AS_STRING(Bytes.get()), static_cast<size_t>(PyBytes_GET_SIZE(Bytes.get())));
    Constant *Init = ConstantDataArray::getRaw(Data, Data.size(), llvm::Type::getInt8Ty(Ctx));
    G = new GlobalVariable(M, Init->getType(), /*isConstant=*/true, GlobalValue::PrivateLinkage,
                           Init, "const.array");
    G->setUnnamedAddr(GlobalValue::UnnamedAddr::Global);
    G->setAlignment(Align(std::max<unsigned>(16, byteSize(Elem))));
  }
  Out = makeArray(Elem, Shape, callMarker("const.array", B.getPtrTy(), {G}));
  Out.T.ReadOnly = true;
  return Out;
}

static std::string intrinsicName(PyObject *O) {
  PyObject *N = PyObject_GetAttrString(O, "__tidal_intrinsic__");
  if (!N) {
    PyErr_Clear();
    return "";
  }
  std::string Name = PyUnicode_Check(N) ? PyUnicode_AsUTF8(N) : "";
  Py_DECREF(N);
  return Name;
}

// Globals and closure values are frozen into the code at compile time, as
// Numba does: numbers become constants, everything else stays a
// compile-time object that attributes and calls are resolved against.
CValue FunctionCompiler::freezePyObject(PyObject *O, PyObject *Node, const std::string &What) {
  if (PyBool_Check(O)) {
    CValue R = makeScalar(Scalar::Bool, Emitting ? B.getInt1(O == Py_True) : nullptr);
    R.ConstInt = O == Py_True;
    return R;
  }
  if (PyLong_Check(O)) {
    int Overflow = 0;
    long long V = PyLong_AsLongLongAndOverflow(O, &Overflow);
    if (Overflow)
      typingError(Node, What + " does not fit in int64");
    CValue R = makeScalar(Scalar::Int64, Emitting ? B.getInt64(V) : nullptr);
    R.ConstInt = V;
    return R;
  }
  if (PyFloat_Check(O))
    return makeScalar(Scalar::Float64,
                      Emitting ? ConstantFP::get(llvm::Type::getDoubleTy(Ctx), PyFloat_AS_DOUBLE(O))
                               : nullptr);
  if (PyTuple_Check(O)) {
    std::vector<CValue> Elements;
    for (Py_ssize_t I = 0; I < PyTuple_GET_SIZE(O); ++I)
      Elements.push_back(freezePyObject(PyTuple_GET_ITEM(O, I), Node, What));
    return makeTuple(std::move(Elements));
  }
  // NumPy scalars (numpy.float32(2.5)): their dtype's value.
  PyRef DType = PyRef::borrow(O).attrOrNull("dtype");
  PyRef Item = PyRef::borrow(O).attrOrNull("item");
  if (DType && Item && !PyType_Check(O) && PyObject_HasAttrString(O, "shape")) {
    PyRef Shape = PyRef::borrow(O).attr("shape");
    if (PyTuple_Check(Shape.get()) && PyTuple_GET_SIZE(Shape.get()) == 0) {
      Scalar S;
      if (!scalarFromName(DType.attr("name").str(), S))
        unsupported(Node, What + " has an unsupported dtype " + DType.attr("name").str());
      PyRef Py = PyRef::check(PyObject_CallNoArgs(Item.get()));
      CValue V = freezePyObject(Py.get(), Node, What);
      return convert(V, frontend::Type::scalar(S), Node);
    }
  }
  if (typeName(O) == "ndarray")
    return constantArray(O, Node, What);
  if (PyObject_HasAttrString(O, "__tidal_intrinsic__")) {
    CValue Value;
    if (valueIntrinsic(*this, intrinsicName(O), Value))
      return Value;
  }
  if (PyModule_Check(O) || PyCallable_Check(O) || PyObject_HasAttrString(O, "__tidal_intrinsic__"))
    return CValue(frontend::Type::pyObject(O));
  unsupported(Node, "cannot use " + What + " of type '" + typeName(O) +
                        "' in a kernel: only numbers, tuples of numbers, modules and "
                        "functions known to tidal are");
}


CValue FunctionCompiler::visitAttribute(PyObject *Node) {
  std::string Attr = identifierField(Node, "attr");
  PyRef ValueNode = field(Node, "value");
  CValue Base = expr(ValueNode.get());
  if (Base.T.isUndefined())
    return CValue();
  if (Base.T.isPyObject())
    return attributeOfObject(Base, Attr, Node);
  if (Base.T.isRecord()) {
    const RecordField *Field = Base.T.Rec->field(Attr);
    if (!Field)
      typingError(Node, Base.T.str() + " has no field '" + Attr + "'");
    if (!Emitting)
      return CValue(frontend::Type::scalar(Field->Type));
    Value *Ptr = B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), Base.scalar(), Field->Offset, Attr + ".addr");
    Value *V = B.CreateAlignedLoad(llvmMemoryType(Field->Type), Ptr, Align(1), Attr);
    if (Field->Type == Scalar::Bool)
      V = B.CreateICmpNE(V, B.getInt8(0));
    return makeScalar(Field->Type, V);
  }
  if (Base.T.isScalar() && (Attr == "real" || Attr == "imag")) {
    if (!isComplex(Base.T.Elem)) {
      // A real number's .real is itself and its .imag is zero.
      if (Attr == "real")
        return Base;
      return convert(makeScalar(Scalar::Int64, Emitting ? B.getInt64(0) : nullptr), Base.T, Node);
    }
    Scalar Component = componentOf(Base.T.Elem);
    return makeScalar(Component,
                      Emitting ? B.CreateExtractValue(Base.scalar(), Attr == "real" ? 0 : 1) : nullptr);
  }
  if (Base.T.isArray()) {
    unsigned N = Base.T.NDim;
    auto Dims = [&](unsigned First) {
      std::vector<CValue> Out;
      for (unsigned I = 0; I < N; ++I)
        Out.push_back(makeScalar(Scalar::Int64, Emitting ? Base.Parts[First + I] : nullptr));
      return makeTuple(std::move(Out));
    };
    if (Attr == "shape")
      return Dims(1);
    if (Attr == "strides")
      return Dims(1 + N);
    if (Attr == "ndim") {
      CValue R = makeScalar(Scalar::Int64, Emitting ? B.getInt64(N) : nullptr);
      R.ConstInt = N;
      return R;
    }
    if (Attr == "size") {
      Value *Size = Emitting ? B.getInt64(1) : nullptr;
      if (Emitting)
        for (unsigned I = 0; I < N; ++I)
          Size = I == 0 ? Base.Parts[1] : B.CreateMul(Size, Base.Parts[1 + I], "size");
      return makeScalar(Scalar::Int64, Size);
    }
    typingError(Node, "unknown attribute '" + Attr + "' of " + Base.T.str());
  }
  typingError(Node, "unknown attribute '" + Attr + "' of " + Base.T.str());
}

CValue FunctionCompiler::attributeOfObject(const CValue &Base, const std::string &Attr,
                                           PyObject *Node) {
  PyObject *O = static_cast<PyObject *>(Base.T.Object);
  std::string Intrinsic = intrinsicName(O);
  CValue Out;
  if (!Intrinsic.empty() && attributeIntrinsic(*this, Intrinsic, Attr, Node, Out))
    return Out;
  PyRef Value = PyRef::borrow(O).attrOrNull(Attr.c_str());
  if (!Value) {
    std::string Owner = PyModule_Check(O) ? "module '" + std::string(PyModule_GetName(O)) + "'"
                                          : "'" + typeName(O) + "' object";
    typingError(Node, Owner + " has no attribute '" + Attr + "'");
  }
  return freezePyObject(Value.get(), Node, "attribute '" + Attr + "'");
}

CValue FunctionCompiler::visitTuple(PyObject *Node) {
  std::vector<CValue> Elements;
  bool Undefined = false;
  for (PyObject *E : listItems(field(Node, "elts").get())) {
    Elements.push_back(expr(E));
    Undefined |= Elements.back().T.isUndefined();
  }
  return Undefined ? CValue() : makeTuple(std::move(Elements));
}

// --- arithmetic --------------------------------------------------------------------

CValue FunctionCompiler::visitBinOp(PyObject *Node) {
  CValue L = expr(field(Node, "left").get());
  CValue R = expr(field(Node, "right").get());
  return binaryOp(binaryOperatorOf(field(Node, "op").get()), L, R, Node);
}

CValue FunctionCompiler::binaryOp(BinaryOperator Op, const CValue &L, const CValue &R,
                                  PyObject *Node) {
  if (L.T.isUndefined() || R.T.isUndefined())
    return CValue();
  if (!L.T.isScalar() || !R.T.isScalar())
    typingError(Node, std::string("unsupported operand types for ") + operatorSymbol(Op) +
                          ": " + L.T.str() + " and " + R.T.str());
  Scalar Common = promoteArithmetic(L.T.Elem, R.T.Elem);
  bool Bitwise = Op == BinaryOperator::BitwiseAnd || Op == BinaryOperator::BitwiseOr ||
                 Op == BinaryOperator::BitwiseXor;
  bool Shift = Op == BinaryOperator::ShiftLeft || Op == BinaryOperator::ShiftRight;
  if (isComplex(Common)) {
    if (Op != BinaryOperator::Add && Op != BinaryOperator::Subtract &&
        Op != BinaryOperator::Multiply && Op != BinaryOperator::Divide)
      typingError(Node, std::string("unsupported operand types for ") + operatorSymbol(Op) +
                            ": " + L.T.str() + " and " + R.T.str() +
                            ": complex numbers take + - * / in kernels");
    if (!Emitting)
      return CValue(frontend::Type::scalar(Common));
    frontend::Type CT = frontend::Type::scalar(Common);
    return makeScalar(Common, complexArithmetic(Op, Common, convert(L, CT, Node).scalar(),
                                                convert(R, CT, Node).scalar()));
  }
  if ((Bitwise || Shift) && isFloat(Common))
    typingError(Node, std::string("unsupported operand types for ") + operatorSymbol(Op) +
                          ": " + L.T.str() + " and " + R.T.str() +
                          ": bitwise operators need integers");
  if (Bitwise && L.T.isBool() && R.T.isBool())
    Common = Scalar::Bool;
  Scalar Result = Common;
  if (Op == BinaryOperator::Divide && !isFloat(Common))
    Result = Common = Scalar::Float64; // int / int is true division
  if (Op == BinaryOperator::MatrixMultiply)
    unsupported(Node, "the '@' operator is not supported on scalars");

  // Constant folding of integer + - * keeps indices like a[-1] constant.
  std::optional<int64_t> Folded;
  if (L.ConstInt && R.ConstInt && isInteger(Common)) {
    int64_t A = *L.ConstInt, C = *R.ConstInt;
    if (Op == BinaryOperator::Add)
      Folded = static_cast<int64_t>(static_cast<uint64_t>(A) + static_cast<uint64_t>(C));
    else if (Op == BinaryOperator::Subtract)
      Folded = static_cast<int64_t>(static_cast<uint64_t>(A) - static_cast<uint64_t>(C));
    else if (Op == BinaryOperator::Multiply)
      Folded = static_cast<int64_t>(static_cast<uint64_t>(A) * static_cast<uint64_t>(C));
  }
  if (!Emitting) {
    CValue Out(frontend::Type::scalar(Result));
    Out.ConstInt = Folded;
    return Out;
  }
  frontend::Type CT = frontend::Type::scalar(Common);
  CValue A = convert(L, CT, Node), C = convert(R, CT, Node);
  Value *X = A.scalar(), *Y = C.scalar();
  bool Float = isFloat(Common), Signed = isSigned(Common);
  Value *V = nullptr;
  switch (Op) {
  case BinaryOperator::Add:
    V = Float ? B.CreateFAdd(X, Y) : B.CreateAdd(X, Y);
    break;
  case BinaryOperator::Subtract:
    V = Float ? B.CreateFSub(X, Y) : B.CreateSub(X, Y);
    break;
  case BinaryOperator::Multiply:
    V = Float ? B.CreateFMul(X, Y) : B.CreateMul(X, Y);
    break;
  case BinaryOperator::Divide:
    V = B.CreateFDiv(X, Y);
    break;
  case BinaryOperator::FloorDivide:
  case BinaryOperator::Modulo: {
    bool IsFloorDivide = Op == BinaryOperator::FloorDivide;
    if (!Float)
      return integerDivide(IsFloorDivide, A, C);
    auto [Quotient, Remainder] = floatDivMod(X, Y);
    V = IsFloorDivide ? Quotient : Remainder;
    break;
  }
  case BinaryOperator::Power:
    if (!Float)
      return integerPower(A, C);
    // Through the math marker: each target has its own pow (libdevice, libm).
    if (Common == Scalar::Float16) {
      X = B.CreateFPExt(X, B.getFloatTy());
      Y = B.CreateFPExt(Y, B.getFloatTy());
    }
    V = callMarker(Common == Scalar::Float64 ? "math.pow.f64" : "math.pow.f32", X->getType(), {X, Y});
    if (Common == Scalar::Float16)
      V = B.CreateFPTrunc(V, llvmType(Scalar::Float16));
    break;
  case BinaryOperator::BitwiseAnd:
    V = B.CreateAnd(X, Y);
    break;
  case BinaryOperator::BitwiseOr:
    V = B.CreateOr(X, Y);
    break;
  case BinaryOperator::BitwiseXor:
    V = B.CreateXor(X, Y);
    break;
  case BinaryOperator::ShiftLeft:
  case BinaryOperator::ShiftRight: {
    // Shifting by the width or more gives 0 (or the sign) instead of poison.
    unsigned Bits = bitWidth(Common);
    Value *Limit = ConstantInt::get(Y->getType(), Bits - 1);
    Value *Amount = B.CreateSelect(B.CreateICmpUGT(Y, Limit), Limit, Y);
    if (Op == BinaryOperator::ShiftLeft) {
      V = B.CreateShl(X, Amount);
      V = B.CreateSelect(B.CreateICmpUGT(Y, Limit), ConstantInt::get(X->getType(), 0), V);
    } else {
      V = Signed ? B.CreateAShr(X, Amount) : B.CreateLShr(X, Amount);
      if (!Signed)
        V = B.CreateSelect(B.CreateICmpUGT(Y, Limit), ConstantInt::get(X->getType(), 0), V);
    }
    break;
  }
  case BinaryOperator::MatrixMultiply:
    unsupported(Node, std::string("operator ") + operatorSymbol(Op) + " is not supported");
  }
  CValue Out = makeScalar(Result, V);
  Out.ConstInt = Folded;
  return Out;
}

// Python's float // and % (CPython's float_divmod, which Numba follows):
// from fmod, so that x // y and x % y agree with each other even where
// x / y rounds across an integer.
std::pair<Value *, Value *> FunctionCompiler::floatDivMod(Value *X, Value *Y) {
  llvm::Type *T = X->getType();
  Value *Zero = ConstantFP::get(T, 0.0), *One = ConstantFP::get(T, 1.0);
  Value *Mod = B.CreateFRem(X, Y);
  Value *Div = B.CreateFDiv(B.CreateFSub(X, Mod), Y);
  // 1. A remainder of the other sign than y moves to y's side.
  Value *Fix = B.CreateAnd(B.CreateFCmpUNE(Mod, Zero),
                           B.CreateXor(B.CreateFCmpOLT(Y, Zero), B.CreateFCmpOLT(Mod, Zero)));
  Value *ZeroMod = B.CreateBinaryIntrinsic(Intrinsic::copysign, Zero, Y);
  Mod = B.CreateSelect(B.CreateFCmpOEQ(Mod, Zero), ZeroMod,
                       B.CreateSelect(Fix, B.CreateFAdd(Mod, Y), Mod));
  Div = B.CreateSelect(Fix, B.CreateFSub(Div, One), Div);
  // 2. The quotient snaps to the nearest integer below (div is nearly one).
  Value *Floor = B.CreateUnaryIntrinsic(Intrinsic::floor, Div);
  Value *Up = B.CreateFCmpOGT(B.CreateFSub(Div, Floor), ConstantFP::get(T, 0.5));
  Floor = B.CreateSelect(Up, B.CreateFAdd(Floor, One), Floor);
  Value *ZeroDiv = B.CreateBinaryIntrinsic(Intrinsic::copysign, Zero, B.CreateFDiv(X, Y));
  Value *Quotient = B.CreateSelect(B.CreateFCmpUNE(Div, Zero), Floor, ZeroDiv);
  return {Quotient, Mod};
}

// Python's floor division and modulo on integers, with NumPy's error model
// (division by zero gives 0) and no trap on INT_MIN // -1.
CValue FunctionCompiler::integerDivide(bool Floor, const CValue &L, const CValue &R) {
  Value *X = L.scalar(), *Y = R.scalar();
  llvm::Type *T = X->getType();
  Value *Zero = ConstantInt::get(T, 0), *One = ConstantInt::get(T, 1);
  Value *DivByZero = B.CreateICmpEQ(Y, Zero);
  Value *Result;
  if (!isSigned(L.T.Elem)) {
    Value *SafeY = B.CreateSelect(DivByZero, One, Y);
    Result = Floor ? B.CreateUDiv(X, SafeY) : B.CreateURem(X, SafeY);
  } else {
    Value *MinusOne = ConstantInt::getSigned(T, -1);
    Value *ByMinusOne = B.CreateICmpEQ(Y, MinusOne);
    Value *SafeY = B.CreateSelect(B.CreateOr(DivByZero, ByMinusOne), One, Y);
    Value *Quotient = B.CreateSDiv(X, SafeY);
    Value *Remainder = B.CreateSRem(X, SafeY);
    // Round toward negative infinity when the signs differ and it's inexact.
    Value *Inexact = B.CreateICmpNE(Remainder, Zero);
    Value *SignsDiffer = B.CreateICmpSLT(B.CreateXor(Remainder, SafeY), Zero);
    Value *Fix = B.CreateAnd(Inexact, SignsDiffer);
    if (Floor) {
      Result = B.CreateSelect(Fix, B.CreateSub(Quotient, One), Quotient);
      Result = B.CreateSelect(ByMinusOne, B.CreateSub(Zero, X), Result);
    } else {
      Result = B.CreateSelect(Fix, B.CreateAdd(Remainder, SafeY), Remainder);
      Result = B.CreateSelect(ByMinusOne, Zero, Result);
    }
  }
  return makeScalar(L.T.Elem, B.CreateSelect(DivByZero, Zero, Result));
}

// Integer power by repeated squaring, emitted inline as a loop; a negative
// exponent gives 0 unless the base is 1 or -1 (integer result of 1/b**n).
CValue FunctionCompiler::integerPower(const CValue &Base, const CValue &Exponent) {
  Value *X = Base.scalar(), *N = Exponent.scalar();
  llvm::Type *T = X->getType();
  BasicBlock *Before = B.GetInsertBlock();
  BasicBlock *Loop = BasicBlock::Create(Ctx, "ipow.loop", F);
  BasicBlock *Done = BasicBlock::Create(Ctx, "ipow.done", F);
  Value *Negative = isSigned(Exponent.T.Elem) ? B.CreateICmpSLT(N, ConstantInt::get(T, 0))
                                              : B.getFalse();
  Value *AbsN = B.CreateSelect(Negative, B.CreateSub(ConstantInt::get(T, 0), N), N);
  Before = B.GetInsertBlock();
  B.CreateCondBr(B.CreateICmpEQ(N, ConstantInt::get(T, 0)), Done, Loop);
  B.SetInsertPoint(Loop);
  PHINode *Acc = B.CreatePHI(T, 2), *Sq = B.CreatePHI(T, 2), *E = B.CreatePHI(T, 2);
  Acc->addIncoming(ConstantInt::get(T, 1), Before);
  Sq->addIncoming(X, Before);
  E->addIncoming(AbsN, Before);
  Value *Odd = B.CreateTrunc(E, B.getInt1Ty());
  Value *NextAcc = B.CreateSelect(Odd, B.CreateMul(Acc, Sq), Acc);
  Value *NextE = B.CreateLShr(E, 1);
  Value *NextSq = B.CreateMul(Sq, Sq);
  Acc->addIncoming(NextAcc, Loop);
  Sq->addIncoming(NextSq, Loop);
  E->addIncoming(NextE, Loop);
  B.CreateCondBr(B.CreateICmpEQ(NextE, ConstantInt::get(T, 0)), Done, Loop);
  B.SetInsertPoint(Done);
  PHINode *Result = B.CreatePHI(T, 2);
  Result->addIncoming(ConstantInt::get(T, 1), Before);
  Result->addIncoming(NextAcc, Loop);
  // 1/x**n in integers: 1 for x == 1, +-1 for x == -1, else 0.
  Value *IsOne = B.CreateICmpEQ(X, ConstantInt::get(T, 1));
  Value *IsMinusOne = B.CreateICmpEQ(X, ConstantInt::getSigned(T, -1));
  Value *NegativeResult =
      B.CreateSelect(IsOne, ConstantInt::get(T, 1),
                     B.CreateSelect(IsMinusOne, Result, ConstantInt::get(T, 0)));
  return makeScalar(Base.T.Elem, B.CreateSelect(Negative, NegativeResult, Result));
}

CValue FunctionCompiler::visitUnaryOp(PyObject *Node) {
  UnaryOperator Op = unaryOperatorOf(field(Node, "op").get());
  CValue V = expr(field(Node, "operand").get());
  if (V.T.isUndefined())
    return CValue();
  if (Op == UnaryOperator::Not) {
    Value *T = truth(V, Node);
    return makeScalar(Scalar::Bool, Emitting ? B.CreateNot(T) : nullptr);
  }
  if (!V.T.isScalar())
    typingError(Node, "bad operand type for unary operator: " + V.T.str());
  // Numba widens small integers (and bools) as for binary arithmetic.
  Scalar S = isFloat(V.T.Elem) || isComplex(V.T.Elem) ? V.T.Elem
                                                     : promoteArithmetic(V.T.Elem, V.T.Elem);
  if (isComplex(S)) {
    if (Op == UnaryOperator::Invert)
      typingError(Node, "bad operand type for unary ~: " + V.T.str());
    if (!Emitting || Op == UnaryOperator::Plus)
      return Emitting ? V : CValue(V.T);
    Value *Z = V.scalar();
    return makeScalar(S, makeComplex(S, B.CreateFNeg(B.CreateExtractValue(Z, 0)),
                                     B.CreateFNeg(B.CreateExtractValue(Z, 1))));
  }
  if (Op == UnaryOperator::Invert && isFloat(S))
    typingError(Node, "bad operand type for unary ~: " + V.T.str());
  if (Op == UnaryOperator::Invert && V.T.isBool())
    S = Scalar::Bool;
  std::optional<int64_t> Folded;
  if (V.ConstInt && Op == UnaryOperator::Negate)
    Folded = static_cast<int64_t>(0 - static_cast<uint64_t>(*V.ConstInt));
  else if (V.ConstInt && Op == UnaryOperator::Plus)
    Folded = V.ConstInt;
  if (!Emitting) {
    CValue Out(frontend::Type::scalar(S));
    Out.ConstInt = Folded;
    return Out;
  }
  CValue X = convert(V, frontend::Type::scalar(S), Node);
  Value *R = X.scalar();
  if (Op == UnaryOperator::Negate)
    R = isFloat(S) ? B.CreateFNeg(R) : B.CreateNeg(R);
  else if (Op == UnaryOperator::Invert)
    R = B.CreateNot(R);
  CValue Out = makeScalar(S, R);
  Out.ConstInt = Folded;
  return Out;
}

CValue FunctionCompiler::compareOp(ComparisonOperator Op, const CValue &L, const CValue &R,
                                   PyObject *Node) {
  if (L.T.isUndefined() || R.T.isUndefined())
    return CValue();
  if (!L.T.isScalar() || !R.T.isScalar())
    typingError(Node, std::string("unsupported operand types for ") + operatorSymbol(Op) +
                          ": " + L.T.str() + " and " + R.T.str());
  if (Op == ComparisonOperator::Is || Op == ComparisonOperator::IsNot ||
      Op == ComparisonOperator::In || Op == ComparisonOperator::NotIn)
    unsupported(Node, std::string("the '") + operatorSymbol(Op) +
                          "' operator is not supported on numbers");
  bool ComplexOperands = isComplex(L.T.Elem) || isComplex(R.T.Elem);
  if (ComplexOperands && Op != ComparisonOperator::Equal && Op != ComparisonOperator::NotEqual)
    typingError(Node, std::string("complex numbers have no order: ") + operatorSymbol(Op) +
                          " is not supported on " + L.T.str() + " and " + R.T.str());
  if (!Emitting)
    return makeScalar(Scalar::Bool, nullptr);
  if (ComplexOperands) {
    frontend::Type CT = frontend::Type::scalar(promoteArithmetic(L.T.Elem, R.T.Elem));
    Value *X = convert(L, CT, Node).scalar(), *Y = convert(R, CT, Node).scalar();
    Value *Same = B.CreateAnd(B.CreateFCmpOEQ(B.CreateExtractValue(X, 0), B.CreateExtractValue(Y, 0)),
                              B.CreateFCmpOEQ(B.CreateExtractValue(X, 1), B.CreateExtractValue(Y, 1)));
    return makeScalar(Scalar::Bool, Op == ComparisonOperator::Equal ? Same : B.CreateNot(Same));
  }
  // Compare in the common type: mixed signed/unsigned compares as Numba does.
  Scalar Common = (L.T.isBool() && R.T.isBool()) ? Scalar::Int64
                                                 : promoteArithmetic(L.T.Elem, R.T.Elem);
  frontend::Type CT = frontend::Type::scalar(Common);
  Value *X = convert(L, CT, Node).scalar(), *Y = convert(R, CT, Node).scalar();
  CmpInst::Predicate P = CmpInst::BAD_ICMP_PREDICATE;
  bool Float = isFloat(Common), Signed = isSigned(Common);
  switch (Op) {
  case ComparisonOperator::Equal:
    P = Float ? CmpInst::FCMP_OEQ : CmpInst::ICMP_EQ;
    break;
  case ComparisonOperator::NotEqual:
    P = Float ? CmpInst::FCMP_UNE : CmpInst::ICMP_NE;
    break;
  case ComparisonOperator::Less:
    P = Float ? CmpInst::FCMP_OLT : Signed ? CmpInst::ICMP_SLT : CmpInst::ICMP_ULT;
    break;
  case ComparisonOperator::LessEqual:
    P = Float ? CmpInst::FCMP_OLE : Signed ? CmpInst::ICMP_SLE : CmpInst::ICMP_ULE;
    break;
  case ComparisonOperator::Greater:
    P = Float ? CmpInst::FCMP_OGT : Signed ? CmpInst::ICMP_SGT : CmpInst::ICMP_UGT;
    break;
  // is, is not, in and not in were rejected above.
  case ComparisonOperator::Is:
  case ComparisonOperator::IsNot:
  case ComparisonOperator::In:
  case ComparisonOperator::NotIn:
  case ComparisonOperator::GreaterEqual:
    P = Float ? CmpInst::FCMP_OGE : Signed ? CmpInst::ICMP_SGE : CmpInst::ICMP_UGE;
    break;
  }
  return makeScalar(Scalar::Bool, Float ? B.CreateFCmp(P, X, Y) : B.CreateICmp(P, X, Y));
}

CValue FunctionCompiler::visitCompare(PyObject *Node) {
  // a < b < c is (a < b) and (b < c), with b evaluated once.
  CValue Left = expr(field(Node, "left").get());
  std::vector<PyObject *> Ops = listItems(field(Node, "ops").get());
  std::vector<PyObject *> Rights = listItems(field(Node, "comparators").get());
  if (Ops.size() == 1)
    return compareOp(comparisonOperatorOf(Ops[0]), Left, expr(Rights[0]), Node);
  if (!Emitting) {
    CValue Out = makeScalar(Scalar::Bool, nullptr);
    for (size_t I = 0; I < Ops.size(); ++I) {
      CValue Right = expr(Rights[I]);
      if (compareOp(comparisonOperatorOf(Ops[I]), Left, Right, Node).T.isUndefined())
        Out = CValue();
      Left = Right;
    }
    return Out;
  }
  BasicBlock *Done = BasicBlock::Create(Ctx, "cmp.done", F);
  std::vector<std::pair<Value *, BasicBlock *>> Incoming;
  for (size_t I = 0; I < Ops.size(); ++I) {
    CValue Right = expr(Rights[I]);
    Value *C = compareOp(comparisonOperatorOf(Ops[I]), Left, Right, Node).scalar();
    Incoming.push_back({C, B.GetInsertBlock()});
    if (I + 1 < Ops.size()) {
      BasicBlock *Next = BasicBlock::Create(Ctx, "cmp.next", F);
      B.CreateCondBr(C, Next, Done);
      B.SetInsertPoint(Next);
    } else {
      B.CreateBr(Done);
    }
    Left = Right;
  }
  B.SetInsertPoint(Done);
  PHINode *Phi = B.CreatePHI(B.getInt1Ty(), Incoming.size());
  for (auto &[V, BB] : Incoming)
    Phi->addIncoming(V, BB);
  return makeScalar(Scalar::Bool, Phi);
}

CValue FunctionCompiler::visitBoolOp(PyObject *Node) {
  bool IsAnd = booleanOperatorOf(field(Node, "op").get()) == BooleanOperator::And;
  std::vector<PyObject *> Operands = listItems(field(Node, "values").get());
  // The result is one of the operands (Python semantics): their unified type.
  if (!Emitting) {
    frontend::Type T;
    for (PyObject *O : Operands) {
      CValue V = expr(O);
      if (V.T.isUndefined())
        return CValue();
      truth(V, O);
      if (!unify(T, V.T, T))
        typingError(Node, "the operands of '" + std::string(IsAnd ? "and" : "or") +
                              "' have types that cannot unify");
    }
    return CValue(T);
  }
  frontend::Type ResultType;
  {
    // Types are settled: compute the unified type without emitting.
    Emitting = false;
    for (PyObject *O : Operands)
      unify(ResultType, expr(O).T, ResultType);
    Emitting = true;
  }
  BasicBlock *Done = BasicBlock::Create(Ctx, IsAnd ? "and.done" : "or.done", F);
  std::vector<std::pair<Value *, BasicBlock *>> Incoming;
  for (size_t I = 0; I < Operands.size(); ++I) {
    CValue V = expr(Operands[I]);
    Value *Converted = convert(V, ResultType, Operands[I]).scalar();
    if (I + 1 == Operands.size()) {
      Incoming.push_back({Converted, B.GetInsertBlock()});
      B.CreateBr(Done);
      break;
    }
    Value *T = truth(V, Operands[I]);
    Incoming.push_back({Converted, B.GetInsertBlock()});
    BasicBlock *Next = BasicBlock::Create(Ctx, IsAnd ? "and.next" : "or.next", F);
    if (IsAnd)
      B.CreateCondBr(T, Next, Done);
    else
      B.CreateCondBr(T, Done, Next);
    B.SetInsertPoint(Next);
  }
  B.SetInsertPoint(Done);
  PHINode *Phi = B.CreatePHI(llvmType(ResultType.Elem), Incoming.size());
  for (auto &[V, BB] : Incoming)
    Phi->addIncoming(V, BB);
  return makeScalar(ResultType.Elem, Phi);
}

CValue FunctionCompiler::visitIfExp(PyObject *Node) {
  PyRef Test = field(Node, "test"), Body = field(Node, "body"), Else = field(Node, "orelse");
  if (!Emitting) {
    CValue C = expr(Test.get());
    if (!C.T.isUndefined())
      truth(C, Test.get());
    CValue L = expr(Body.get()), R = expr(Else.get());
    if (L.T.isUndefined() || R.T.isUndefined())
      return CValue();
    frontend::Type T;
    if (!unify(L.T, R.T, T))
      typingError(Node, "the two branches of the conditional expression have types " +
                            L.T.str() + " and " + R.T.str() + ", which cannot unify");
    return CValue(T);
  }
  frontend::Type ResultType;
  Emitting = false;
  unify(expr(Body.get()).T, expr(Else.get()).T, ResultType);
  Emitting = true;
  Value *C = truth(expr(Test.get()), Test.get());
  BasicBlock *Then = BasicBlock::Create(Ctx, "ifexp.then", F);
  BasicBlock *Otherwise = BasicBlock::Create(Ctx, "ifexp.else", F);
  BasicBlock *Done = BasicBlock::Create(Ctx, "ifexp.done", F);
  B.CreateCondBr(C, Then, Otherwise);
  B.SetInsertPoint(Then);
  CValue L = convert(expr(Body.get()), ResultType, Body.get());
  BasicBlock *ThenEnd = B.GetInsertBlock();
  B.CreateBr(Done);
  B.SetInsertPoint(Otherwise);
  CValue R = convert(expr(Else.get()), ResultType, Else.get());
  BasicBlock *ElseEnd = B.GetInsertBlock();
  B.CreateBr(Done);
  B.SetInsertPoint(Done);
  CValue Out(ResultType);
  for (size_t I = 0; I < L.Parts.size(); ++I) {
    PHINode *Phi = B.CreatePHI(L.Parts[I]->getType(), 2);
    Phi->addIncoming(L.Parts[I], ThenEnd);
    Phi->addIncoming(R.Parts[I], ElseEnd);
    Out.Parts.push_back(Phi);
  }
  return Out;
}

// --- arrays ------------------------------------------------------------------------

// The address of an element: a[i, j] with C or F layout computes the linear
// index from the shape (so the innermost stride is known to LLVM); layout A
// uses the byte strides. Negative indices wrap once, as in Numba.
std::string FunctionCompiler::sourceText(PyObject *Node) const {
  PyRef Ast = importModule("ast");
  PyRef Text = PyRef::steal(PyObject_CallMethod(Ast.get(), "unparse", "O", Node));
  if (!Text) {
    PyErr_Clear();
    return "?";
  }
  return Text.str();
}

Value *FunctionCompiler::elementPointer(const CValue &Array, PyObject *IndexNode,
                                        const CValue &Index, PyObject *ArrayNode) {
  const frontend::Type &AT = Array.T;
  std::vector<CValue> Indices = Index.T.isTuple() ? tupleElements(Index)
                                                  : std::vector<CValue>{Index};
  if (Indices.size() != AT.NDim)
    typingError(IndexNode, "cannot index " + AT.str() + " with " +
                               std::to_string(Indices.size()) + " indices: it has " +
                               std::to_string(AT.NDim) + " dimensions");
  for (const CValue &I : Indices)
    if (!I.T.isScalar() || !isInteger(I.T.Elem))
      typingError(IndexNode, "cannot index " + AT.str() + " with " + I.T.str() +
                                 ": array indices must be integers");
  if (!Emitting)
    return nullptr;
  unsigned N = AT.NDim;
  std::vector<Value *> Idx;
  for (unsigned D = 0; D < N; ++D) {
    const CValue &I = Indices[D];
    Value *Extent = Array.Parts[1 + D];
    if (I.ConstInt) {
      int64_t C = *I.ConstInt;
      Idx.push_back(C < 0 ? B.CreateAdd(Extent, B.getInt64(C)) : B.getInt64(C));
      continue;
    }
    Value *V = B.CreateIntCast(I.scalar(), B.getInt64Ty(), isSigned(I.T.Elem));
    if (isSigned(I.T.Elem))
      V = B.CreateSelect(B.CreateICmpSLT(V, B.getInt64(0)), B.CreateAdd(V, Extent), V);
    Idx.push_back(V);
  }
  // Debug mode: every index checked against its extent (dynamic shared
  // arrays, whose extent is not known, excepted).
  if (Options.Debug) {
    SourceLocation Where = locate(IndexNode);
    std::string ArrayName = ArrayNode ? sourceText(ArrayNode) : "array";
    std::string Message = std::string(IsDevice ? "device function '" : "kernel '") +
                          functionName() + "' at " + Where.File + ":" +
                          std::to_string(Where.Line) + ", array '" + ArrayName + "'";
    for (unsigned D = 0; D < N; ++D) {
      if (auto *C = dyn_cast<ConstantInt>(Array.Parts[1 + D]); C && C->isZero())
        continue;
      Value *Original = Indices[D].ConstInt
                            ? static_cast<Value *>(B.getInt64(*Indices[D].ConstInt))
                            : B.CreateIntCast(Indices[D].scalar(), B.getInt64Ty(),
                                              isSigned(Indices[D].T.Elem));
      Value *Outside = B.CreateICmpUGE(Idx[D], Array.Parts[1 + D]);
      BasicBlock *Fail = BasicBlock::Create(Ctx, "bounds.error", F);
      BasicBlock *Ok = BasicBlock::Create(Ctx, "bounds.ok", F);
      B.CreateCondBr(Outside, Fail, Ok);
      B.SetInsertPoint(Fail);
      callMarker("bounds.error", B.getVoidTy(),
                 {constantString(Message, "bounds.where"), Original, Array.Parts[1 + D],
                  B.getInt32(D)});
      B.CreateUnreachable();
      B.SetInsertPoint(Ok);
    }
  }
  llvm::Type *ElemTy = AT.Rec ? static_cast<llvm::Type *>(ArrayType::get(B.getInt8Ty(), AT.Rec->Size))
                              : llvmMemoryType(AT.Elem);
  Value *Data = Array.Parts[0];
  if (AT.Lay == Layout::A || N == 0) {
    Value *Offset = B.getInt64(0);
    for (unsigned D = 0; D < N; ++D)
      Offset = B.CreateAdd(Offset, B.CreateMul(Idx[D], Array.Parts[1 + N + D]));
    return B.CreateGEP(B.getInt8Ty(), Data, Offset, "elem.addr");
  }
  Value *Linear = nullptr;
  for (unsigned K = 0; K < N; ++K) {
    unsigned D = AT.Lay == Layout::C ? K : N - 1 - K; // slowest to fastest
    Linear = Linear ? B.CreateAdd(B.CreateMul(Linear, Array.Parts[1 + D]), Idx[D]) : Idx[D];
  }
  return B.CreateInBoundsGEP(ElemTy, Data, Linear, "elem.addr");
}

CValue FunctionCompiler::visitSubscript(PyObject *Node) {
  PyRef ValueNode = field(Node, "value"), SliceNode = field(Node, "slice");
  CValue Base = expr(ValueNode.get());
  bool HasSlice = nodeKind(SliceNode.get()) == "Slice";
  if (nodeKind(SliceNode.get()) == "Tuple")
    for (PyObject *E : listItems(field(SliceNode.get(), "elts").get()))
      HasSlice |= nodeKind(E) == "Slice";
  // Fewer indices than dimensions (a[i] on a 2-D array) is a view too.
  size_t IndexCount = nodeKind(SliceNode.get()) == "Tuple"
                          ? static_cast<size_t>(PyList_GET_SIZE(field(SliceNode.get(), "elts").get()))
                          : 1;
  HasSlice |= Base.T.isArray() && IndexCount < Base.T.NDim;
  if (HasSlice) {
    if (Base.T.isUndefined())
      return CValue();
    if (!Base.T.isArray())
      unsupported(SliceNode.get(), "slicing is supported on arrays, not on " + Base.T.str());
    return sliceArray(Base, SliceNode.get());
  }
  CValue Index = expr(SliceNode.get());
  if (Base.T.isUndefined() || Index.T.isUndefined())
    return CValue();
  if (Base.T.isTuple()) {
    if (!Index.ConstInt)
      typingError(SliceNode.get(), "tuples can only be indexed by constant integers");
    int64_t I = *Index.ConstInt, Size = static_cast<int64_t>(Base.T.Elements.size());
    if (I < -Size || I >= Size)
      typingError(SliceNode.get(), "tuple index " + std::to_string(I) +
                                       " out of range for " + Base.T.str());
    return tupleElements(Base)[I < 0 ? I + Size : I];
  }
  if (!Base.T.isArray())
    typingError(Node, "cannot index a value of type " + Base.T.str());
  Value *Ptr = elementPointer(Base, SliceNode.get(), Index, ValueNode.get());
  if (Base.T.hasRecordElements()) { // a[i] of a record array: a view of it
    CValue Ref(frontend::Type::record(Base.T.Rec, Base.T.ReadOnly));
    if (Emitting)
      Ref.Parts.push_back(Ptr);
    return Ref;
  }
  if (!Emitting)
    return makeScalar(Base.T.Elem, nullptr);
  llvm::Type *MemTy = llvmMemoryType(Base.T.Elem);
  LoadInst *L = B.CreateAlignedLoad(MemTy, Ptr, Align(elementAlign(Base.T.Elem)));
  Value *V = Base.T.Elem == Scalar::Bool ? B.CreateICmpNE(L, B.getInt8(0)) : L;
  return makeScalar(Base.T.Elem, V);
}

// a[i, 2:n, ::-1]: a view of the same memory. Integer indices drop their
// dimension; slices keep it, normalised as Python does (negative bounds
// count from the end, bounds clamp, the step must be a constant).
CValue FunctionCompiler::sliceArray(const CValue &Base, PyObject *SliceNode) {
  std::vector<PyObject *> Items = nodeKind(SliceNode) == "Tuple"
                                      ? listItems(field(SliceNode, "elts").get())
                                      : std::vector<PyObject *>{SliceNode};
  unsigned N = Base.T.NDim;
  if (Items.size() > N)
    typingError(SliceNode, "too many indices for " + Base.T.str() + ": " +
                               std::to_string(Items.size()) + " given");
  // 1. Type the view: one dimension per slice.
  struct Dim {
    bool IsSlice;
    PyObject *Lower = nullptr, *Upper = nullptr;
    int64_t Step = 1;
    bool Full = false; // ':' alone
    CValue Index;
  };
  std::vector<Dim> Dims;
  for (unsigned D = 0; D < N; ++D) {
    Dim X{true};
    if (D < Items.size() && nodeKind(Items[D]) != "Slice") {
      X.IsSlice = false;
      X.Index = expr(Items[D]);
      if (X.Index.T.isUndefined())
        return CValue();
      if (!X.Index.T.isIntegerScalar())
        typingError(Items[D], "cannot index " + Base.T.str() + " with " + X.Index.T.str() +
                                  ": array indices must be integers");
    } else if (D < Items.size()) {
      PyRef Lower = field(Items[D], "lower"), Upper = field(Items[D], "upper"),
            Step = field(Items[D], "step");
      X.Lower = Lower.isNone() ? nullptr : Lower.get();
      X.Upper = Upper.isNone() ? nullptr : Upper.get();
      if (!Step.isNone()) {
        CValue S = expr(Step.get());
        if (!S.T.isIntegerScalar() || !S.ConstInt || *S.ConstInt == 0)
          unsupported(Step.get(), "the step of a slice in a kernel must be a constant non-zero integer");
        X.Step = *S.ConstInt;
      }
      X.Full = !X.Lower && !X.Upper && X.Step == 1;
    } else {
      X.Full = true;
    }
    Dims.push_back(X);
  }
  unsigned ViewDims = 0;
  for (const Dim &X : Dims)
    ViewDims += X.IsSlice;
  // C stays C when nothing after the first slice is cut or strided.
  Layout Lay = Layout::A;
  if (Base.T.Lay == Layout::C) {
    bool Contiguous = true, SeenSlice = false;
    for (const Dim &X : Dims) {
      if (SeenSlice && (!X.IsSlice || !X.Full))
        Contiguous = false;
      if (X.IsSlice && !SeenSlice) {
        SeenSlice = true;
        Contiguous &= X.Step == 1;
      }
    }
    Lay = Contiguous ? Layout::C : Layout::A;
  }
  CValue View(frontend::Type::array(Base.T.Elem, ViewDims, Lay, Base.T.ReadOnly));
  View.T.Rec = Base.T.Rec;
  for (const Dim &X : Dims) // type the bounds too
    for (PyObject *Bound : {X.Lower, X.Upper})
      if (Bound && !Emitting) {
        CValue V = expr(Bound);
        if (!V.T.isUndefined() && !V.T.isIntegerScalar())
          typingError(Bound, "slice bounds must be integers, not " + V.T.str());
      }
  if (!Emitting)
    return View;

  // 2. Emit: the data pointer moves by start * stride in every dimension.
  Value *Zero = B.getInt64(0);
  Value *Offset = Zero;
  std::vector<Value *> Shape, Strides;
  for (unsigned D = 0; D < N; ++D) {
    const Dim &X = Dims[D];
    Value *Extent = Base.Parts[1 + D], *Stride = Base.Parts[1 + N + D];
    if (!X.IsSlice) {
      Value *I = B.CreateIntCast(X.Index.scalar(), B.getInt64Ty(), isSigned(X.Index.T.Elem));
      if (isSigned(X.Index.T.Elem))
        I = B.CreateSelect(B.CreateICmpSLT(I, Zero), B.CreateAdd(I, Extent), I);
      Offset = B.CreateAdd(Offset, B.CreateMul(I, Stride));
      continue;
    }
    if (X.Full) {
      Shape.push_back(Extent);
      Strides.push_back(Stride);
      continue;
    }
    bool Forward = X.Step > 0;
    Value *MinusOne = B.getInt64(-1);
    Value *Last = B.CreateSub(Extent, B.getInt64(1));
    auto Bound = [&](PyObject *Node, Value *Default) -> Value * {
      if (!Node)
        return Default;
      CValue V = convert(expr(Node), frontend::Type::scalar(Scalar::Int64), Node);
      Value *I = V.scalar();
      Value *Wrapped = B.CreateAdd(I, Extent);
      Value *Low = Forward ? Zero : MinusOne, *High = Forward ? Extent : Last;
      Value *FromEnd = B.CreateSelect(B.CreateICmpSLT(Wrapped, Low), Low, Wrapped);
      Value *FromStart = B.CreateSelect(B.CreateICmpSGT(I, High), High, I);
      return B.CreateSelect(B.CreateICmpSLT(I, Zero), FromEnd, FromStart);
    };
    Value *Start = Bound(X.Lower, Forward ? Zero : Last);
    Value *Stop = Bound(X.Upper, Forward ? Extent : MinusOne);
    int64_t Magnitude = Forward ? X.Step : -X.Step;
    Value *Span = Forward ? B.CreateSub(Stop, Start) : B.CreateSub(Start, Stop);
    Value *Length = B.CreateSDiv(B.CreateAdd(Span, B.getInt64(Magnitude - 1)), B.getInt64(Magnitude));
    Length = B.CreateSelect(B.CreateICmpSGT(Span, Zero), Length, Zero);
    Offset = B.CreateAdd(Offset, B.CreateMul(Start, Stride));
    Shape.push_back(Length);
    Strides.push_back(B.CreateMul(Stride, B.getInt64(X.Step)));
  }
  View.Parts.push_back(B.CreateGEP(B.getInt8Ty(), Base.Parts[0], Offset, "view"));
  View.Parts.insert(View.Parts.end(), Shape.begin(), Shape.end());
  View.Parts.insert(View.Parts.end(), Strides.begin(), Strides.end());
  return View;
}

// --- calls -------------------------------------------------------------------------

CValue FunctionCompiler::visitCall(PyObject *Node) {
  PyRef FuncNode = field(Node, "func");
  // z.conjugate(): the one method of numbers kernels call.
  if (nodeKind(FuncNode.get()) == "Attribute" &&
      identifierField(FuncNode.get(), "attr") == "conjugate") {
    CValue Z = expr(field(FuncNode.get(), "value").get());
    if (Z.T.isUndefined())
      return CValue();
    if (Z.T.isScalar()) {
      if (PyList_GET_SIZE(field(Node, "args").get()) > 0)
        typingError(Node, "conjugate() takes no arguments");
      if (!isComplex(Z.T.Elem) || !Emitting)
        return isComplex(Z.T.Elem) ? CValue(Z.T) : Z;
      Value *V = Z.scalar();
      return makeScalar(Z.T.Elem, makeComplex(Z.T.Elem, B.CreateExtractValue(V, 0),
                                              B.CreateFNeg(B.CreateExtractValue(V, 1))));
    }
  }
  CValue Callee = expr(FuncNode.get());
  std::vector<PyObject *> ArgNodes = listItems(field(Node, "args").get());
  std::vector<CValue> Args;
  bool Undefined = Callee.T.isUndefined();
  for (PyObject *A : ArgNodes) {
    if (nodeKind(A) == "Starred")
      unsupported(A, "starred arguments are not supported in kernel calls");
    Args.push_back(expr(A));
    Undefined |= Args.back().T.isUndefined();
  }
  // Keyword arguments follow the positional ones; their names go alongside.
  std::vector<std::string> Keywords;
  for (PyObject *K : listItems(field(Node, "keywords").get())) {
    PyRef Name = field(K, "arg");
    PyRef Value = field(K, "value");
    if (Name.isNone())
      unsupported(K, "'**' arguments are not supported in kernel calls");
    Keywords.push_back(Name.str());
    ArgNodes.push_back(Value.get());
    Args.push_back(expr(Value.get()));
    Undefined |= Args.back().T.isUndefined();
  }
  if (Undefined)
    return CValue();
  if (!Callee.T.isPyObject())
    typingError(FuncNode.get(), "a value of type " + Callee.T.str() + " is not callable");
  return callObject(static_cast<PyObject *>(Callee.T.Object), Node, Args, ArgNodes, Keywords);
}

CValue FunctionCompiler::callObject(PyObject *Callee, PyObject *Node, std::vector<CValue> &Args,
                                    std::vector<PyObject *> &ArgNodes,
                                    std::vector<std::string> &Keywords) {
  std::string Name = intrinsicName(Callee);
  if (Name.empty() && PyCFunction_Check(Callee)) {
    // Functions of C modules (builtins.len, math.sin, ...) are intrinsics
    // under "<module>.<name>" when the module really holds that object.
    PyObject *Self = PyCFunction_GET_SELF(Callee);
    if (Self && PyModule_Check(Self)) {
      std::string Function = PyRef::borrow(Callee).attr("__name__").str();
      PyRef Same = PyRef::borrow(Self).attrOrNull(Function.c_str());
      if (Same.get() == Callee)
        Name = std::string(PyModule_GetName(Self)) + "." + Function;
    }
  }
  if (Name.empty() && Callee == reinterpret_cast<PyObject *>(&PyRange_Type))
    Name = "builtins.range";
  if (Name.empty() && PyType_Check(Callee)) {
    // int, float, bool as casts; NumPy scalar types (numpy.float32) too.
    PyTypeObject *T = reinterpret_cast<PyTypeObject *>(Callee);
    if (T == &PyLong_Type)
      Name = "builtins.int";
    else if (T == &PyFloat_Type)
      Name = "builtins.float";
    else if (T == &PyBool_Type)
      Name = "builtins.bool";
    else if (T == &PyComplex_Type)
      Name = "builtins.complex";
    else if (PyObject_HasAttrString(Callee, "__module__")) {
      PyRef Module = PyRef::borrow(Callee).attr("__module__");
      Scalar S;
      std::string TypeName = T->tp_name;
      TypeName = TypeName.substr(TypeName.rfind('.') + 1);
      if (Module.str() == "numpy" && scalarFromName(TypeName, S))
        Name = std::string("cast.") + scalarName(S);
    }
  }
  if (Name.empty() && PyObject_HasAttrString(Callee, "__tidal_device__"))
    return callDeviceFunction(Callee, Node, Args, ArgNodes, Keywords);
  if (Name.empty() && PyObject_HasAttrString(Callee, "__tidal_kernel__"))
    typingError(Node, "a kernel cannot be called from a kernel: make it a device function "
                      "with @cuda.jit(device=True)");
  if (IntrinsicHandler H = findCallIntrinsic(Name)) {
    IntrinsicCall Call{*this, Node, Args, ArgNodes, Keywords};
    return H(Call);
  }
  std::string Shown = Name;
  if (Shown.empty()) {
    PyRef QualName = PyRef::borrow(Callee).attrOrNull("__qualname__");
    Shown = QualName ? QualName.str() : typeName(Callee);
  }
  unsupported(Node, "call to unsupported function '" + Shown + "' in a kernel");
}

CValue FunctionCompiler::callDeviceFunction(PyObject *Device, PyObject *Node,
                                            std::vector<CValue> &Args,
                                            std::vector<PyObject *> &ArgNodes,
                                            std::vector<std::string> &Keywords) {
  PyRef PyFunc = PyRef::borrow(Device).attr("py_func");
  std::vector<std::string> Params = parameterNames(PyFunc.get());
  std::string Name = PyRef::borrow(PyFunc.get()).attr("__name__").str();
  // Bind keywords by the Python function's parameter names.
  std::vector<std::optional<CValue>> Bound(Params.size());
  std::vector<PyObject *> BoundNodes(Params.size(), Node);
  size_t Positional = Args.size() - Keywords.size();
  if (Positional > Params.size())
    typingError(Node, "device function '" + Name + "' takes " + std::to_string(Params.size()) +
                          " arguments but " + std::to_string(Positional) + " were given");
  for (size_t I = 0; I < Positional; ++I) {
    Bound[I] = Args[I];
    BoundNodes[I] = ArgNodes[I];
  }
  for (size_t K = 0; K < Keywords.size(); ++K) {
    auto It = std::find(Params.begin(), Params.end(), Keywords[K]);
    if (It == Params.end() || Bound[It - Params.begin()])
      typingError(ArgNodes[Positional + K], "device function '" + Name +
                                                "' got an unexpected or repeated argument '" +
                                                Keywords[K] + "'");
    Bound[It - Params.begin()] = Args[Positional + K];
    BoundNodes[It - Params.begin()] = ArgNodes[Positional + K];
  }
  std::vector<CValue> Actual;
  std::vector<frontend::Type> Types;
  for (size_t I = 0; I < Params.size(); ++I) {
    if (!Bound[I])
      typingError(Node, "device function '" + Name + "' takes " + std::to_string(Params.size()) +
                            " arguments but " + std::to_string(Args.size()) +
                            " were given (missing '" + Params[I] + "')");
    if (Bound[I]->T.isPyObject())
      typingError(BoundNodes[I], "cannot pass a Python object to device function '" + Name + "'");
    Actual.push_back(*Bound[I]);
    Types.push_back(Bound[I]->T);
  }
  // A declared signature (@cuda.jit("float32(float32)", device=True))
  // fixes the parameter and return types; arguments convert to them.
  std::optional<frontend::Type> Declared;
  PyRef Signatures = PyRef::borrow(Device).attrOrNull("signatures");
  if (Signatures && PyList_Check(Signatures.get()) && PyList_GET_SIZE(Signatures.get()) > 0) {
    frontend::Signature Sig;
    try {
      Sig = parseSignature(PyRef::borrow(PyList_GET_ITEM(Signatures.get(), 0)).str());
    } catch (const std::invalid_argument &E) {
      typingError(Node, E.what());
    }
    if (Sig.Params.size() != Types.size())
      typingError(Node, "device function '" + Name + "' is declared with " +
                            std::to_string(Sig.Params.size()) + " parameters but called with " +
                            std::to_string(Types.size()));
    for (size_t I = 0; I < Types.size(); ++I) {
      Actual[I] = convert(Actual[I], Sig.Params[I], BoundNodes[I]);
      Types[I] = Sig.Params[I];
    }
    if (Sig.HasReturn)
      Declared = Sig.Return;
  }
  // Compile (or reuse) the specialisation; recursion is rejected.
  DeviceFunctionCache::Entry *Found = nullptr;
  for (auto &E : Devices.Compiled)
    if (E.Function == PyFunc.get() && E.ArgTypes == Types)
      Found = &E;
  if (!Found) {
    if (std::find(Devices.InProgress.begin(), Devices.InProgress.end(), PyFunc.get()) !=
        Devices.InProgress.end())
      unsupported(Node, "recursive device functions are not supported ('" + Name + "')");
    Devices.InProgress.push_back(PyFunc.get());
    DeviceFunctionCache::Entry Entry;
    {
      FunctionCompiler Callee(PyFunc.get(), M, Options, Devices);
      Entry = Callee.compileDevice(Types, Declared ? &*Declared : nullptr);
    }
    Devices.InProgress.pop_back();
    Devices.Compiled.push_back(Entry);
    Found = &Devices.Compiled.back();
  }
  frontend::Type Return = Found->Return;
  if (!Emitting)
    return CValue(Return);
  std::vector<Value *> CallArgs;
  for (CValue &A : Actual)
    for (Value *P : A.Parts)
      CallArgs.push_back(P->getType()->isIntegerTy(1) ? B.CreateZExt(P, B.getInt8Ty()) : P);
  CallInst *Call = B.CreateCall(Found->F, CallArgs);
  CValue Result(Return);
  std::vector<llvm::Type *> Parts = partTypes(Return);
  if (Parts.size() == 1)
    Result.Parts.push_back(Call);
  else
    for (unsigned I = 0; I < Parts.size(); ++I)
      Result.Parts.push_back(B.CreateExtractValue(Call, I));
  return Result;
}

// --- statements --------------------------------------------------------------------

void FunctionCompiler::assignTo(PyObject *Target, const CValue &V, PyObject *ValueNode) {
  std::string Kind = nodeKind(Target);
  if (Kind == "Name")
    return storeVariable(identifierField(Target, "id"), V, Target);
  if (Kind == "Tuple" || Kind == "List") {
    std::vector<PyObject *> Targets = listItems(field(Target, "elts").get());
    if (V.T.isUndefined()) {
      for (PyObject *T : Targets)
        assignTo(T, CValue(), ValueNode);
      return;
    }
    if (!V.T.isTuple())
      typingError(ValueNode, "cannot unpack a value of type " + V.T.str());
    if (V.T.Elements.size() != Targets.size())
      typingError(ValueNode, "cannot unpack " + V.T.str() + " into " +
                                 std::to_string(Targets.size()) + " targets");
    std::vector<CValue> Elements = tupleElements(V);
    for (size_t I = 0; I < Targets.size(); ++I)
      assignTo(Targets[I], Elements[I], ValueNode);
    return;
  }
  if (Kind == "Subscript") {
    PyRef ArrayNode = field(Target, "value");
    CValue Base = expr(ArrayNode.get());
    PyRef SliceNode = field(Target, "slice");
    if (nodeKind(SliceNode.get()) == "Slice")
      unsupported(SliceNode.get(), "assigning to array slices is not supported yet");
    CValue Index = expr(SliceNode.get());
    if (Base.T.isUndefined() || Index.T.isUndefined() || V.T.isUndefined())
      return;
    if (Base.T.isTuple())
      typingError(Target, "tuples are immutable: cannot assign to an element");
    if (!Base.T.isArray())
      typingError(Target, "cannot assign to an element of a value of type " + Base.T.str());
    if (Base.T.ReadOnly)
      typingError(Target, "cannot write to a read-only array (" + Base.T.str() + ")");
    if (Base.T.hasRecordElements()) { // a[i] = record: copy its bytes
      if (!V.T.isRecord() || !(*V.T.Rec == *Base.T.Rec))
        typingError(ValueNode, "cannot store a value of type " + V.T.str() +
                                   " into an element of " + Base.T.str());
      Value *Ptr = elementPointer(Base, SliceNode.get(), Index, ArrayNode.get());
      if (Emitting)
        B.CreateMemMove(Ptr, Align(1), V.scalar(), Align(1), Base.T.Rec->Size);
      return;
    }
    if (!V.T.isScalar())
      typingError(ValueNode, "cannot store a value of type " + V.T.str() +
                                 " into an element of " + Base.T.str());
    Value *Ptr = elementPointer(Base, SliceNode.get(), Index, ArrayNode.get());
    if (!Emitting)
      return;
    Value *X = convert(V, frontend::Type::scalar(Base.T.Elem), ValueNode).scalar();
    if (Base.T.Elem == Scalar::Bool)
      X = B.CreateZExt(X, B.getInt8Ty());
    B.CreateAlignedStore(X, Ptr, Align(elementAlign(Base.T.Elem)));
    return;
  }
  if (Kind == "Attribute") {
    // r.field = v on a record (a[i].x = v writes into the array).
    CValue Base = expr(field(Target, "value").get());
    std::string Attr = identifierField(Target, "attr");
    if (Base.T.isUndefined() || V.T.isUndefined())
      return;
    if (!Base.T.isRecord())
      unsupported(Target, "assigning to attributes is only supported on record fields, not on " +
                              Base.T.str());
    const RecordField *Field = Base.T.Rec->field(Attr);
    if (!Field)
      typingError(Target, Base.T.str() + " has no field '" + Attr + "'");
    if (Base.T.ReadOnly)
      typingError(Target, "cannot write to field '" + Attr + "' of a read-only record");
    if (!Emitting)
      return;
    Value *X = convert(V, frontend::Type::scalar(Field->Type), ValueNode).scalar();
    if (Field->Type == Scalar::Bool)
      X = B.CreateZExt(X, B.getInt8Ty());
    B.CreateAlignedStore(X, B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), Base.scalar(), Field->Offset),
                         Align(1));
    return;
  }
  unsupported(Target, "cannot assign to this target in a kernel");
}

void FunctionCompiler::visitAssign(PyObject *Node) {
  CValue V = expr(field(Node, "value").get());
  PyRef ValueNode = field(Node, "value");
  for (PyObject *Target : listItems(field(Node, "targets").get()))
    assignTo(Target, V, ValueNode.get());
}

void FunctionCompiler::visitAugAssign(PyObject *Node) {
  PyRef Target = field(Node, "target");
  PyRef ValueNode = field(Node, "value");
  BinaryOperator Op = binaryOperatorOf(field(Node, "op").get());
  std::string Kind = nodeKind(Target.get());
  if (Kind == "Name") {
    std::string Name = identifierField(Target.get(), "id");
    CValue Current = loadVariable(Name, Target.get());
    CValue Result = binaryOp(Op, Current, expr(ValueNode.get()), Node);
    return storeVariable(Name, Result, Node);
  }
  if (Kind == "Subscript") {
    // a[i] op= v: the index is evaluated once.
    PyRef ArrayNode = field(Target.get(), "value");
    CValue Base = expr(ArrayNode.get());
    PyRef SliceNode = field(Target.get(), "slice");
    CValue Index = expr(SliceNode.get());
    CValue Operand = expr(ValueNode.get());
    if (Base.T.isUndefined() || Index.T.isUndefined() || Operand.T.isUndefined())
      return;
    if (!Base.T.isArray())
      typingError(Target.get(), "cannot assign to an element of a value of type " + Base.T.str());
    if (Base.T.ReadOnly)
      typingError(Target.get(), "cannot write to a read-only array (" + Base.T.str() + ")");
    Value *Ptr = elementPointer(Base, SliceNode.get(), Index, ArrayNode.get());
    CValue Old = makeScalar(Base.T.Elem, nullptr);
    if (Emitting) {
      Value *L = B.CreateAlignedLoad(llvmMemoryType(Base.T.Elem), Ptr, Align(elementAlign(Base.T.Elem)));
      Old.Parts.push_back(Base.T.Elem == Scalar::Bool ? B.CreateICmpNE(L, B.getInt8(0)) : L);
    }
    CValue Result = binaryOp(Op, Old, Operand, Node);
    if (!Emitting)
      return;
    Value *X = convert(Result, frontend::Type::scalar(Base.T.Elem), Node).scalar();
    if (Base.T.Elem == Scalar::Bool)
      X = B.CreateZExt(X, B.getInt8Ty());
    B.CreateAlignedStore(X, Ptr, Align(elementAlign(Base.T.Elem)));
    return;
  }
  if (Kind == "Attribute") { // r.field op= v: read, compute, write back
    CValue Current = expr(Target.get());
    CValue Result = binaryOp(Op, Current, expr(ValueNode.get()), Node);
    return assignTo(Target.get(), Result, ValueNode.get());
  }
  unsupported(Target.get(), "cannot use this target of an augmented assignment in a kernel");
}

void FunctionCompiler::visitExpr(PyObject *Node) {
  PyRef Value = field(Node, "value");
  // Docstrings and other bare constants do nothing.
  if (nodeKind(Value.get()) == "Constant")
    return;
  expr(Value.get());
}

void FunctionCompiler::visitPass(PyObject *) {}

void FunctionCompiler::visitIf(PyObject *Node) {
  PyRef Test = field(Node, "test"), Body = field(Node, "body"), Else = field(Node, "orelse");
  CValue C = expr(Test.get());
  if (!Emitting) {
    if (!C.T.isUndefined())
      truth(C, Test.get());
    body(Body.get());
    body(Else.get());
    return;
  }
  Value *Cond = truth(C, Test.get());
  BasicBlock *Then = BasicBlock::Create(Ctx, "if.then", F);
  BasicBlock *Done = BasicBlock::Create(Ctx, "if.end", F);
  bool HasElse = PyList_GET_SIZE(Else.get()) > 0;
  BasicBlock *Otherwise = HasElse ? BasicBlock::Create(Ctx, "if.else", F) : Done;
  B.CreateCondBr(Cond, Then, Otherwise);
  B.SetInsertPoint(Then);
  body(Body.get());
  if (!B.GetInsertBlock()->getTerminator())
    B.CreateBr(Done);
  if (HasElse) {
    B.SetInsertPoint(Otherwise);
    body(Else.get());
    if (!B.GetInsertBlock()->getTerminator())
      B.CreateBr(Done);
  }
  B.SetInsertPoint(Done);
}

void FunctionCompiler::visitWhile(PyObject *Node) {
  PyRef Test = field(Node, "test"), Body = field(Node, "body"), Else = field(Node, "orelse");
  if (PyList_GET_SIZE(Else.get()) > 0)
    unsupported(Node, "'while ... else' is not supported in kernels");
  if (!Emitting) {
    CValue C = expr(Test.get());
    if (!C.T.isUndefined())
      truth(C, Test.get());
    body(Body.get());
    return;
  }
  BasicBlock *Header = BasicBlock::Create(Ctx, "while.cond", F);
  BasicBlock *Loop = BasicBlock::Create(Ctx, "while.body", F);
  BasicBlock *Done = BasicBlock::Create(Ctx, "while.end", F);
  B.CreateBr(Header);
  B.SetInsertPoint(Header);
  B.CreateCondBr(truth(expr(Test.get()), Test.get()), Loop, Done);
  B.SetInsertPoint(Loop);
  Loops.push_back({Header, Done});
  body(Body.get());
  Loops.pop_back();
  if (!B.GetInsertBlock()->getTerminator())
    B.CreateBr(Header);
  B.SetInsertPoint(Done);
}

void FunctionCompiler::visitFor(PyObject *Node) {
  PyRef Target = field(Node, "target"), Iter = field(Node, "iter");
  PyRef Body = field(Node, "body"), Else = field(Node, "orelse");
  if (PyList_GET_SIZE(Else.get()) > 0)
    unsupported(Node, "'for ... else' is not supported in kernels");
  // Only range(...): its callee must resolve to the builtin range.
  bool IsRange = false;
  if (nodeKind(Iter.get()) == "Call") {
    bool Was = Emitting;
    Emitting = false;
    CValue Callee = expr(field(Iter.get(), "func").get());
    Emitting = Was;
    IsRange = Callee.T.isPyObject() &&
              static_cast<PyObject *>(Callee.T.Object) ==
                  reinterpret_cast<PyObject *>(&PyRange_Type);
  }
  if (!IsRange)
    unsupported(Iter.get(), "for loops in kernels can only iterate over range(...)");
  if (nodeKind(Target.get()) != "Name")
    unsupported(Target.get(), "the target of a for loop over range() must be a name");
  std::vector<PyObject *> ArgNodes = listItems(field(Iter.get(), "args").get());
  if (ArgNodes.empty() || ArgNodes.size() > 3)
    typingError(Iter.get(), "range expected 1 to 3 arguments, got " +
                                std::to_string(ArgNodes.size()));
  std::vector<CValue> Args;
  for (PyObject *A : ArgNodes) {
    Args.push_back(expr(A));
    if (!Args.back().T.isUndefined() && !Args.back().T.isIntegerScalar() &&
        !Args.back().T.isBool())
      typingError(A, "range() arguments must be integers, not " + Args.back().T.str());
  }
  std::string Name = identifierField(Target.get(), "id");
  // The counter's type, as Numba's range typing: int32 when every argument
  // fits, uint64 if one is uint64, int64 otherwise.
  Scalar Counter = Scalar::Int32;
  for (const CValue &A : Args) {
    if (A.T.isUndefined())
      continue;
    Scalar S = A.T.Elem;
    if (S == Scalar::UInt64)
      Counter = Counter == Scalar::Int64 ? Scalar::Int64 : Scalar::UInt64;
    else if (!(S == Scalar::Bool || S == Scalar::Int8 || S == Scalar::Int16 ||
               S == Scalar::Int32 || S == Scalar::UInt8 || S == Scalar::UInt16))
      Counter = Scalar::Int64;
  }
  frontend::Type CT = frontend::Type::scalar(Counter);
  if (!Emitting) {
    storeVariable(Name, CValue(CT), Target.get());
    body(Body.get());
    return;
  }
  std::optional<int64_t> ConstStep = Args.size() == 3 ? Args[2].ConstInt : std::optional<int64_t>(1);
  if (ConstStep && *ConstStep == 0)
    typingError(ArgNodes[2], "range() step must not be zero");
  Value *Start = Args.size() >= 2 ? convert(Args[0], CT, ArgNodes[0]).scalar()
                                  : ConstantInt::get(llvmType(Counter), 0);
  Value *Stop = convert(Args.size() >= 2 ? Args[1] : Args[0], CT,
                        ArgNodes[Args.size() >= 2 ? 1 : 0]).scalar();
  Value *Step = Args.size() == 3 ? convert(Args[2], CT, ArgNodes[2]).scalar()
                                 : ConstantInt::get(llvmType(Counter), 1);
  bool Signed = isSigned(Counter);
  AllocaInst *Index = entryAlloca(llvmType(Counter), Name + ".next");
  B.CreateStore(Start, Index);
  BasicBlock *Header = BasicBlock::Create(Ctx, "for.cond", F);
  BasicBlock *Loop = BasicBlock::Create(Ctx, "for.body", F);
  BasicBlock *Latch = BasicBlock::Create(Ctx, "for.inc", F);
  BasicBlock *Done = BasicBlock::Create(Ctx, "for.end", F);
  B.CreateBr(Header);
  B.SetInsertPoint(Header);
  Value *I = B.CreateLoad(llvmType(Counter), Index, Name);
  Value *Continue;
  auto Less = [&](Value *A, Value *C) { return Signed ? B.CreateICmpSLT(A, C) : B.CreateICmpULT(A, C); };
  if (ConstStep)
    Continue = *ConstStep > 0 ? Less(I, Stop) : B.CreateICmpSGT(I, Stop);
  else
    Continue = B.CreateSelect(B.CreateICmpSGT(Step, ConstantInt::get(Step->getType(), 0)),
                              Less(I, Stop), B.CreateICmpSGT(I, Stop));
  B.CreateCondBr(Continue, Loop, Done);
  B.SetInsertPoint(Loop);
  storeVariable(Name, makeScalar(Counter, I), Target.get());
  Loops.push_back({Latch, Done});
  body(Body.get());
  Loops.pop_back();
  if (!B.GetInsertBlock()->getTerminator())
    B.CreateBr(Latch);
  B.SetInsertPoint(Latch);
  B.CreateStore(B.CreateAdd(B.CreateLoad(llvmType(Counter), Index), Step), Index);
  B.CreateBr(Header);
  B.SetInsertPoint(Done);
}

void FunctionCompiler::visitBreak(PyObject *Node) {
  // The binding analysis rejected a 'break' outside a loop.
  if (!Emitting)
    return;
  B.CreateBr(Loops.back().Break);
  startDeadBlock();
}

void FunctionCompiler::visitContinue(PyObject *Node) {
  if (!Emitting)
    return;
  B.CreateBr(Loops.back().Continue);
  startDeadBlock();
}

void FunctionCompiler::visitReturn(PyObject *Node) {
  PyRef ValueNode = field(Node, "value");
  CValue V(frontend::Type::none());
  if (!ValueNode.isNone())
    V = expr(ValueNode.get());
  if (!IsDevice) {
    if (!V.T.isUndefined() && V.T.K != frontend::Type::Kind::None)
      typingError(Node, "a kernel cannot return a value (it returns " + V.T.str() +
                            "); write results into an array argument");
  } else if (!Emitting) {
    // The return type of a device function unifies over its returns.
    if (V.T.isUndefined())
      return;
    if (V.T.isPyObject() || V.T.isArray())
      typingError(Node, "device functions return numbers and tuples, not " + V.T.str());
    frontend::Type Unified;
    if (!HasReturnType) {
      Unified = V.T;
    } else if (!unify(ReturnType, V.T, Unified)) {
      typingError(Node, "device function returns " + ReturnType.str() + " and " + V.T.str() +
                            ", which cannot unify");
    }
    if (!HasReturnType || Unified != ReturnType)
      TypesChanged = true;
    ReturnType = Unified;
    HasReturnType = true;
    return;
  }
  if (!Emitting)
    return;
  if (!IsDevice || ReturnType.K == frontend::Type::Kind::None) {
    B.CreateRetVoid();
  } else {
    if (V.T.K == frontend::Type::Kind::None)
      typingError(Node, "device function returns " + ReturnType.str() +
                            " on other paths: a bare 'return' here returns nothing");
    CValue R = convert(V, ReturnType, Node);
    if (R.Parts.size() == 1) {
      B.CreateRet(R.Parts[0]);
    } else {
      Value *Aggregate = UndefValue::get(F->getReturnType());
      for (unsigned I = 0; I < R.Parts.size(); ++I)
        Aggregate = B.CreateInsertValue(Aggregate, R.Parts[I], I);
      B.CreateRet(Aggregate);
    }
  }
  startDeadBlock();
}

void FunctionCompiler::visitAssert(PyObject *Node) {
  // Compiled out unless debug=True, as in Numba.
  if (!Options.Debug)
    return;
  PyRef Test = field(Node, "test"), Msg = field(Node, "msg");
  CValue C = expr(Test.get());
  if (C.T.isUndefined())
    return;
  Value *Holds = truth(C, Test.get());
  if (!Emitting)
    return;
  std::string Text;
  if (!Msg.isNone() && nodeKind(Msg.get()) == "Constant")
    Text = PyRef::borrow(Msg.get()).attr("value").str();
  SourceLocation Where = locate(Node);
  std::string Message = (Text.empty() ? std::string("assertion failed") : Text) + " (assert " +
                        sourceText(Test.get()) + " in " + (IsDevice ? "device function '" : "kernel '") +
                        functionName() + "' at " + Where.File + ":" + std::to_string(Where.Line) + ")";
  BasicBlock *Fail = BasicBlock::Create(Ctx, "assert.fail", F);
  BasicBlock *Ok = BasicBlock::Create(Ctx, "assert.ok", F);
  B.CreateCondBr(Holds, Ok, Fail);
  B.SetInsertPoint(Fail);
  callMarker("assert.fail", B.getVoidTy(), {constantString(Message, "assert.message")});
  B.CreateUnreachable();
  B.SetInsertPoint(Ok);
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
