// FunctionCompiler: one Python function → one LLVM function of marker IR.
//
// Two phases over the AST. Typing walks it in rounds, until every local
// variable's type is stable (types unify across branches and loop
// iterations), raising every typing error, and records the type of each
// expression, the target of each call and each variable's type in a
// TypeMap (TypeMap.h). Emission then walks it once more and reads the map:
// an intrinsic call runs its record's emitter on the arguments as the
// record's typing rule bound them (IntrinsicTable.h). Both phases go
// through one handler per AST node kind (the dispatch tables in
// FunctionCompiler.cpp, the handlers in Emit*.cpp), which asks `Emitting`
// which phase it is in.
#ifndef TIDAL_FRONTEND_FUNCTIONCOMPILER_H
#define TIDAL_FRONTEND_FUNCTIONCOMPILER_H

#include "BindingAnalysis.h"
#include "CompileError.h"
#include "Frontend.h"
#include "Operators.h"
#include "PyRef.h"
#include "TypeMap.h"
#include "Types.h"

#include "llvm/IR/DIBuilder.h"
#include "llvm/IR/IRBuilder.h"

#include <map>
#include <optional>
#include <set>
#include <unordered_map>

namespace tidal::frontend {

// A value during compilation: its type, and in emitting mode its LLVM parts
// (a scalar is one part; an array is data, shape..., strides...; a tuple is
// the parts of its elements in order). Compile-time Python objects have no
// parts.
struct TypedValue {
  Type T;
  std::vector<llvm::Value *> Parts;
  std::optional<int64_t> ConstInt; // known integer value (literals, folded)
  std::vector<int64_t> TupleConstInts; // a tuple's elements, when all are known

  TypedValue() = default;
  explicit TypedValue(Type T) : T(std::move(T)) {}
  llvm::Value *scalar() const { return Parts.empty() ? nullptr : Parts[0]; }
};

// Where a Python function came from: file, and its lines for error carets.
struct SourceInfo {
  std::string File;
  int FirstLine = 1;  // line in File of the first line of the parsed source
  int Indent = 0;     // columns removed from every line before parsing
  std::vector<std::string> Lines; // the function's lines as in File
};

// The compile-time value a device function's parameter is specialised on:
// an integer literal's value, or a tuple of integer literals' values (both
// empty for a parameter that is a run-time value). Compile-time objects
// (intrinsics, functions, dtypes, modules) need none: their type is their
// identity.
struct ParameterConstant {
  std::optional<int64_t> Int;
  std::vector<int64_t> Tuple;
  bool known() const { return Int || !Tuple.empty(); }
  bool operator==(const ParameterConstant &O) const { return Int == O.Int && Tuple == O.Tuple; }
};

// Device functions compiled into one module, shared by every
// FunctionCompiler working on it: one LLVM function per (Python function,
// argument types, literal argument values), and the ones being compiled
// (to reject recursion).
struct DeviceFunctionCache {
  struct Entry {
    PyObject *Function;
    std::vector<Type> ArgTypes;
    std::vector<ParameterConstant> Constants;
    llvm::Function *F;
    Type Return;
  };
  std::vector<Entry> Compiled;
  std::vector<PyObject *> InProgress;
};

class FunctionCompiler {
public:
  FunctionCompiler(PyObject *Function, llvm::Module &M, const FrontendOptions &Options,
                   DeviceFunctionCache &Devices);

  // Types and emits the kernel; returns the LLVM function.
  llvm::Function *compileKernel(const std::vector<Type> &ArgTypes);
  // Types and emits a device function for these argument types; its
  // return type is what its return statements unify to (none without).
  // A parameter with a known Constants[I] (empty: none) reads as that
  // constant wherever the body does not assign it.
  DeviceFunctionCache::Entry compileDevice(const std::vector<Type> &ArgTypes,
                                           const Type *DeclaredReturn,
                                           const std::vector<ParameterConstant> &Constants = {});

  // --- the API that intrinsic rules and emitters use (Intrinsics*.cpp) ---
  llvm::IRBuilder<> &builder() { return B; }
  llvm::LLVMContext &context() { return Ctx; }
  llvm::Module &module() { return M; }
  // i32 @tidal.<Name>() marker call (declared on first use).
  llvm::Value *markerI32(const std::string &Name);
  // The declaration of the marker tidal.<Name> from the plugin's marker
  // table; a CompileError (internal error) when the table lacks it or
  // gives it another type than Expected.
  llvm::FunctionCallee declareMarker(const std::string &Name, llvm::FunctionType *Expected);
  TypedValue convert(const TypedValue &V, const Type &To, PyObject *Node);
  TypedValue makeScalar(Scalar S, llvm::Value *V) const;
  // A complex value from its parts; + - * / of two complex values of type S.
  llvm::Value *makeComplex(Scalar S, llvm::Value *Re, llvm::Value *Im);
  llvm::Value *complexArithmetic(BinaryOperator Op, Scalar S, llvm::Value *X, llvm::Value *Y);
  // The alignment of an array element (a complex number: its component's).
  static unsigned elementAlign(Scalar S) {
    return isComplex(S) ? byteSize(S) / 2 : byteSize(S);
  }
  TypedValue makeTuple(std::vector<TypedValue> Elements) const;
  llvm::Value *truth(const TypedValue &V, PyObject *Node);
  // A compile-time integer argument (cuda.grid(ndim)); throws a TypingError
  // at Node saying what was expected.
  int64_t constantInt(const TypedValue &V, PyObject *Node, const std::string &What);

  [[noreturn]] void fail(const std::string &Kind, PyObject *Node, const std::string &Message);
  [[noreturn]] void typingError(PyObject *Node, const std::string &Message) {
    fail("TypingError", Node, Message);
  }
  [[noreturn]] void unsupported(PyObject *Node, const std::string &Message) {
    fail("UnsupportedError", Node, Message);
  }

  llvm::Type *llvmType(Scalar S) const;       // in registers (bool: i1)
  llvm::Type *llvmMemoryType(Scalar S) const; // in memory and params (bool: i8)

  // A call of the marker tidal.<Name> with this signature (declared on
  // first use; docs/markers.md has the contract).
  llvm::Value *callMarker(const std::string &Name, llvm::Type *Result,
                          llvm::ArrayRef<llvm::Value *> Args, bool VarArg = false);
  // The address of Array[Index] (Index: an integer or a tuple of them).
  // In debug mode, an index out of range calls tidal.bounds.error, naming
  // ArrayNode's source text.
  llvm::Value *elementPointer(const TypedValue &Array, PyObject *IndexNode, const TypedValue &Index,
                              PyObject *ArrayNode = nullptr);
  // The source text of an expression (ast.unparse).
  std::string sourceText(PyObject *Node) const;
  // The scalar type a dtype object names: tidal.float32, numpy.float32,
  // numpy.dtype('float32'); throws a TypingError at Node otherwise.
  Scalar dtypeOf(const TypedValue &DType, PyObject *Node);
  // A C-contiguous array value over Data with a constant shape.
  TypedValue makeArray(Scalar ElementType, const std::vector<int64_t> &Shape, llvm::Value *Data);
  // A private constant global string (for print formats and debug messages).
  llvm::Value *constantString(const std::string &Text, const std::string &Name);
  const SourceInfo &source() const { return Source; }
  // What typing recorded: every expression's type, every call's target,
  // every variable's type (complete once typing has settled).
  const TypeMap &typeMap() const { return Typing; }
  // The settled type of an expression node; an internal CompileError when
  // typing never reached it.
  const ExpressionType &typeOf(PyObject *Node) const;
  // Local variables and their settled types, in name order.
  std::vector<std::pair<std::string, std::string>> variableTypes() const;
  SourceLocation location(PyObject *Node) const { return locate(Node); }
  std::string functionName() const;
  const FrontendOptions &options() const { return Options; }

private:
  // One handler per AST node kind.
  using ExprHandler = TypedValue (FunctionCompiler::*)(PyObject *);
  using StmtHandler = void (FunctionCompiler::*)(PyObject *);
  static const std::unordered_map<std::string, ExprHandler> &exprTable();
  static const std::unordered_map<std::string, StmtHandler> &stmtTable();

  TypedValue expr(PyObject *Node);
  void stmt(PyObject *Node);
  void body(PyObject *List);

  // expressions
  TypedValue visitConstant(PyObject *Node);
  TypedValue visitName(PyObject *Node);
  TypedValue visitBinOp(PyObject *Node);
  TypedValue visitUnaryOp(PyObject *Node);
  TypedValue visitCompare(PyObject *Node);
  TypedValue visitBoolOp(PyObject *Node);
  TypedValue visitIfExp(PyObject *Node);
  TypedValue visitAttribute(PyObject *Node);
  TypedValue visitSubscript(PyObject *Node);
  TypedValue visitCall(PyObject *Node);
  TypedValue visitTuple(PyObject *Node);
  // statements
  void visitAssign(PyObject *Node);
  void visitAugAssign(PyObject *Node);
  void visitExpr(PyObject *Node);
  void visitIf(PyObject *Node);
  void visitWhile(PyObject *Node);
  void visitFor(PyObject *Node);
  void visitBreak(PyObject *Node);
  void visitContinue(PyObject *Node);
  void visitPass(PyObject *Node);
  void visitReturn(PyObject *Node);
  void visitAssert(PyObject *Node);

  // pieces
  TypedValue binaryOp(BinaryOperator Op, const TypedValue &L, const TypedValue &R, PyObject *Node);
  TypedValue compareOp(ComparisonOperator Op, const TypedValue &L, const TypedValue &R, PyObject *Node);
  TypedValue integerDivide(bool Floor, const TypedValue &L, const TypedValue &R);
  std::pair<llvm::Value *, llvm::Value *> floatDivMod(llvm::Value *X, llvm::Value *Y);
  TypedValue integerPower(const TypedValue &Base, const TypedValue &Exponent);
  void assignTo(PyObject *Target, const TypedValue &V, PyObject *ValueNode);
  void storeVariable(const std::string &Name, const TypedValue &V, PyObject *Node);
  TypedValue loadVariable(const std::string &Name, PyObject *Node);
  std::optional<TypedValue> pythonNumberConstant(PyObject *O, PyObject *Node,
                                                  const std::string &What);
  TypedValue freezePyObject(PyObject *Object, PyObject *Node, const std::string &What);
  TypedValue constantArray(PyObject *Array, PyObject *Node, const std::string &What);
  TypedValue sliceArray(const TypedValue &Base, PyObject *SliceNode, PyObject *ArrayNode);
  // Records: r.x and r['x'] read and write the same field. recordFieldName
  // gives the field a subscript names when it is a string constant.
  const RecordField &recordField(const TypedValue &Record, const std::string &Name, PyObject *Node);
  TypedValue loadRecordField(const TypedValue &Record, const std::string &Name, PyObject *Node);
  void storeRecordField(const TypedValue &Record, const std::string &Name, const TypedValue &V,
                        PyObject *Node, PyObject *ValueNode);
  std::optional<std::string> recordFieldName(const TypedValue &Index);
  // Debug mode: branch to tidal.bounds.error when Index (already wrapped
  // once if negative) is outside [0, Extent) of dimension Dimension of the
  // array; Original is the index as written, for the message.
  void checkIndexInBounds(PyObject *IndexNode, PyObject *ArrayNode, llvm::Value *Original,
                          llvm::Value *Index, llvm::Value *Extent, unsigned Dimension);
  std::map<PyObject *, llvm::GlobalVariable *> ConstantArrays;
  std::unique_ptr<llvm::DIBuilder> DebugBuilder; // with lineinfo or debug
  llvm::DISubprogram *Subprogram = nullptr;
  TypedValue resolveGlobal(const std::string &Name, PyObject *Node);
  TypedValue attributeOfObject(const TypedValue &Base, const std::string &Attr, PyObject *Node);
  TypedValue callObject(PyObject *Callee, PyObject *Node, std::vector<TypedValue> &Args,
                    std::vector<PyObject *> &ArgNodes, std::vector<std::string> &Keywords);
  std::vector<TypedValue> tupleElements(const TypedValue &V) const;
  std::vector<llvm::Type *> partTypes(const Type &T) const;
  llvm::AllocaInst *entryAlloca(llvm::Type *T, const std::string &Name);
  void startDeadBlock();
  SourceLocation locate(PyObject *Node) const;

  PyRef Function;
  PyRef Globals, Builtins;
  std::map<std::string, PyRef> Closure;
  // Python objects created while compiling (attributes made on access) that
  // compile-time types point to.
  std::vector<PyRef> KeptAlive;
  SourceInfo Source;
  PyRef Tree; // the FunctionDef node
  std::vector<std::string> ParamNames;

  llvm::Module &M;
  llvm::LLVMContext &Ctx;
  llvm::IRBuilder<> B;
  FrontendOptions Options;
  llvm::Function *F = nullptr;
  bool Emitting = false;
  bool TypesChanged = false;
  TypeMap Typing;
  // Errors that only the settled types decide, found in each typing round
  // and raised when the round is the last: the first read of a variable
  // that has no type, the first bare 'return' of a device function.
  PyObject *FirstUntypedRead = nullptr;
  std::string FirstUntypedReadName;
  PyObject *FirstBareReturn = nullptr;
  DeviceFunctionCache &Devices;
  bool IsDevice = false;
  Type ReturnType = Type::none(); // device functions: unified while typing
  bool HasReturnType = false;
  const Type *DeclaredReturn = nullptr;

  void typeToFixedPoint(PyObject *Body);
  void applyKernelOptions(llvm::Function *Kernel);
  void setDebugLocation(PyObject *Node);
  llvm::DISubprogram *debugSubprogram(llvm::Function *F, const std::string &Name);
  llvm::Function *emitFunction(PyObject *Body, const std::vector<Type> &ArgTypes,
                               const std::string &Symbol, llvm::Type *ResultType,
                               llvm::GlobalValue::LinkageTypes Linkage);
  // The call Node as typing recorded it: its intrinsic's emitter, or its
  // device function; Args and ArgNodes as written.
  TypedValue emitCall(PyObject *Node, std::vector<TypedValue> &Args,
                      std::vector<PyObject *> &ArgNodes);
  TypedValue callDeviceFunction(PyObject *Device, PyObject *Node, std::vector<TypedValue> &Args,
                            std::vector<PyObject *> &ArgNodes,
                            std::vector<std::string> &Keywords);
  llvm::Type *returnLLVMType(const Type &T) const;

  struct Variable {
    Type T;
    std::vector<llvm::AllocaInst *> Slots; // one per part, emitting mode
  };
  std::map<std::string, Variable> Variables;
  // Device functions: the parameters specialised on a literal value that
  // the body never assigns; reading one gives its constant.
  std::map<std::string, ParameterConstant> ConstantParameters;
  Bindings NameBindings; // from the binding analysis, before typing
  struct Loop {
    llvm::BasicBlock *Continue, *Break;
  };
  std::vector<Loop> Loops;
  friend struct IntrinsicCall;
};

// What an intrinsic's typing rule and emitter get: the compiler, the call
// node, its arguments and their nodes. The typing rule sees them as
// written (keyword arguments last, named by Keywords) and binds them with
// bindArguments(); the emitter sees them bound, with their LLVM parts.
struct IntrinsicCall {
  FunctionCompiler &C;
  PyObject *Node;
  std::vector<TypedValue> &Args;
  std::vector<PyObject *> &ArgNodes;
  // The names of the keyword arguments, which are the last Keywords.size()
  // of Args; bindArguments() puts them in place.
  std::vector<std::string> &Keywords;
  // The table row being called (IntrinsicTable.h): its Python path and
  // marker, for the rules and emitters that serve many rows.
  const struct IntrinsicRecord *Record = nullptr;
  // For each of Args after binding, its index among the arguments as
  // written (the type map keeps it for the emitter).
  std::vector<size_t> ArgumentOrder;
};

// Puts keyword arguments in their positions for a callee with parameters
// Params (Required of them without a default) and checks the count; throws a
// TypingError naming Name otherwise. Missing optional arguments stay absent.
void bindArguments(IntrinsicCall &Call, const std::string &Name,
                   std::initializer_list<const char *> Params, size_t Required);
// An intrinsic's typing rule: checks the arguments' types (a TypingError
// or UnsupportedError at the offending node otherwise) and gives the
// call's type, with its compile-time value where known; emits nothing.
using IntrinsicTypeRule = TypedValue (*)(IntrinsicCall &);
// An intrinsic's emitter: the call's value from its bound, typed
// arguments; Result is what the typing rule gave. It checks nothing.
using IntrinsicEmitter = TypedValue (*)(IntrinsicCall &, const Type &Result);

// The i32 marker a value intrinsic (cuda.laneid, cuda.warpsize: int32, as
// in Numba) reads; null when Name is none. IntrinsicTable.cpp, like the
// next one.
const char *valueIntrinsicMarker(const std::string &Name);
// The i32 marker of an attribute intrinsic (cuda.threadIdx.x, ...: int32);
// "" when Object names none; a TypingError at Node for an attribute other
// than x, y, z.
std::string attributeIntrinsicMarker(FunctionCompiler &C, const std::string &Object,
                                     const std::string &Attr, PyObject *Node);

} // namespace tidal::frontend

#endif
