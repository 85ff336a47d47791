// FunctionCompiler: one Python function → one LLVM function of marker IR.
//
// Two passes over the AST. Typing (the Type*.cpp files: TypeFunction.cpp
// the rounds and the dispatch, TypeNames, TypeOperators, TypeStatements,
// TypeArrays, TypeCalls) walks it in rounds until every local variable's
// type is stable (types unify across branches and loop iterations), raises
// every typing error (also "a device function can reach its end without
// a return", from an AST reachability check), and records in a TypeMap
// (TypeMap.h) the type of each expression, the decisions emission needs
// (the type an operator computes in, what a subscript reads, the Python
// object a global names), the target of each call and each variable's
// type. Typing a call of a device function types the callee (its own
// FunctionCompiler and type map, kept in the module's DeviceFunctionCache),
// so a whole call tree is typed before any IR exists; the kernel's
// emission first emits the device functions. Emission
// (FunctionCompiler.cpp: the dispatch and the function's frame; the
// Emit*.cpp files: one emitter per node kind) then walks it once and only
// reads the map: it writes IR and raises nothing but
// internal errors. An intrinsic call runs its record's typing rule while
// typing and its emitter while emitting (IntrinsicTable.h).
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
#include <memory>
#include <optional>
#include <set>
#include <unordered_map>

namespace tidal::frontend {

// A value during compilation: its type, and once emitted its LLVM parts
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

class FunctionCompiler;

// Device functions compiled into one module, shared by every
// FunctionCompiler working on it: one specialisation per (Python function,
// argument types, literal argument values), and the ones being typed (to
// tell recursion). Typing a call types its callee (the whole call tree is
// typed before any IR exists); the kernel's emission then emits them all,
// in the order their typing finished (emitDevices).
struct DeviceFunctionCache {
  struct Entry {
    PyObject *Function;
    std::vector<Type> ArgTypes;
    std::vector<ParameterConstant> Constants;
    llvm::Function *F = nullptr; // null until emitted
    Type Return;
    // The callee's compiler, typed, until it is emitted.
    std::shared_ptr<FunctionCompiler> Compiler;
    // Set while its body is being typed: a call that reaches it is
    // recursion (TypeCalls.cpp).
    bool Typing = false;
    // Mutual recursion (f calls g calls f): while f is typed, its compiler,
    // whose return type so far types g's call of f, and each type handed
    // out so (f's final return type must be it); while f is emitted, its
    // compiler, whose LLVM function g's call of f calls.
    FunctionCompiler *InProgress = nullptr;
    std::vector<Type> ProvisionalReturns;
  };
  std::vector<Entry> Compiled;
  std::vector<PyObject *> InProgress;
  // The Python function of the module's kernel: a call that reaches it
  // again is a kernel calling itself (TypeCalls.cpp).
  PyObject *Kernel = nullptr;
};

class FunctionCompiler {
public:
  // What a for loop iterates over, as typed (TypeIteration.cpp) and, while
  // emitting, evaluated once before the loop (EmitIteration.cpp).
  struct IterationSource {
    enum Kinds { Range, Array, Tuple, Enumerate, Zip } Kind = Tuple;
    PyObject *Node = nullptr;
    TypedValue Value;             // Array, Tuple
    TypedValue Start, Stop, Step; // Range (int64); Enumerate: Start
    std::vector<IterationSource> Children; // Enumerate: one; Zip: each argument
    bool Undefined = false;       // typing has not reached a type yet
  };
  // The rows an N-D array (N > 1) gives when iterated over.
  static Type rowViewType(const Type &Array);
  // Its length when a tuple in it fixes one (the loop is then unrolled).
  static std::optional<int64_t> staticIterationLength(const IterationSource &Source);
  FunctionCompiler(PyObject *Function, llvm::Module &M, const FrontendOptions &Options,
                   DeviceFunctionCache &Devices);

  // Types and emits the kernel; returns the LLVM function.
  llvm::Function *compileKernel(const std::vector<Type> &ArgTypes);
  // Types a device function for these argument types (and the device
  // functions it calls); its return type is what its return statements
  // unify to (none without). A parameter with a known Constants[I] (empty:
  // none) reads as that constant wherever the body does not assign it.
  // The entry's F stays null until emitDevice().
  DeviceFunctionCache::Entry typeDevice(const std::vector<Type> &ArgTypes,
                                        const Type *DeclaredReturn,
                                        const std::vector<ParameterConstant> &Constants = {});
  // Emits the device function typeDevice() typed.
  llvm::Function *emitDevice();

  // --- the API that intrinsic rules and emitters use (Intrinsics*.cpp) ---
  llvm::IRBuilder<> &builder() { return B; }
  llvm::LLVMContext &context() { return Ctx; }
  llvm::Module &module() { return M; }
  // The elements of a tuple value (their parts).
  std::vector<TypedValue> tupleElements(const TypedValue &V) const;
  // i32 @tidal.<Name>() marker call (declared on first use).
  llvm::Value *markerI32(const std::string &Name);
  // The declaration of the marker tidal.<Name> from the plugin's marker
  // table; a CompileError (internal error) when the table lacks it or
  // gives it another type than Expected.
  llvm::FunctionCallee declareMarker(const std::string &Name, llvm::FunctionType *Expected);
  // Emission: V converted to To (typing checked that it converts).
  TypedValue convert(const TypedValue &V, const Type &To, PyObject *Node);
  // Typing: the value V converts to (its type, the constants it keeps); a
  // TypingError at Node when V cannot convert to To.
  TypedValue convertedType(const TypedValue &V, const Type &To, PyObject *Node);
  Signature declaredSignatureFor(PyObject *Signatures, const std::vector<Type> &Types,
                                 const std::string &Name, PyObject *Node);
  TypedValue makeScalar(Scalar S, llvm::Value *V) const;
  // An element of an array of type Array (a datetime's unit kept).
  TypedValue makeElement(const Type &Array, llvm::Value *V) const {
    TypedValue R = makeScalar(Array.Dtype, V);
    R.T.Unit = Array.Unit;
    return R;
  }
  // A complex value from its parts; + - * / of two complex values of type S.
  llvm::Value *makeComplex(Scalar S, llvm::Value *Re, llvm::Value *Im);
  llvm::Value *complexArithmetic(BinaryOperator Op, Scalar S, llvm::Value *X, llvm::Value *Y);
  // The alignment of an array element (a complex number: its component's).
  static unsigned elementAlign(Scalar S) {
    return isComplex(S) ? byteSize(S) / 2 : byteSize(S);
  }
  TypedValue makeTuple(std::vector<TypedValue> Elements) const;
  // Emission: V as an i1 condition. Typing: checkCondition says whether V
  // can be one (a TypingError at Node otherwise).
  llvm::Value *truth(const TypedValue &V, PyObject *Node);
  void checkCondition(const Type &T, PyObject *Node);
  // An operator as written in the source (a + b, a < b), for the operator
  // module's functions (IntrinsicsOperator.cpp): its type while typing,
  // its value while emitting.
  TypedValue typeBinaryOperator(BinaryOperator Op, const TypedValue &L, const TypedValue &R,
                                PyObject *Node) {
    return typeBinary(Op, L, R, Node);
  }
  TypedValue emitBinaryOperator(BinaryOperator Op, const TypedValue &L, const TypedValue &R,
                                PyObject *Node) {
    return emitBinary(Op, L, R, Node);
  }
  frontend::Type typeComparisonOperator(ComparisonOperator Op, const TypedValue &L,
                                        const TypedValue &R, PyObject *Node) {
    return typeComparison(Op, L, R, Node);
  }
  TypedValue emitComparisonOperator(ComparisonOperator Op, const TypedValue &L,
                                    const TypedValue &R, const frontend::Type &Operand,
                                    PyObject *Node) {
    return emitComparison(Op, L, R, Operand, Node);
  }
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
  // A struct of numbers as clang's LLVM IR has it (ForeignFunctions.cpp).
  llvm::StructType *recordStructType(const RecordLayout &Layout);

  // A call of the marker tidal.<Name> with this signature (declared on
  // first use; docs/markers.md has the contract).
  llvm::Value *callMarker(const std::string &Name, llvm::Type *Result,
                          llvm::ArrayRef<llvm::Value *> Args, bool VarArg = false);
  // Typing: a TypingError at IndexNode unless Index (an integer or a tuple
  // of them) indexes one element of an array of type Array.
  void checkIndex(const Type &Array, const Type &Index, PyObject *IndexNode);
  // A 0-d array of integers (np.asarray(1)) as an array index.
  TypedValue loadZeroDimensionalIndex(const TypedValue &Index);
  // The address of Array[Index] (Index: an integer or a tuple of them).
  // In debug mode, an index out of range calls tidal.bounds.error, naming
  // ArrayNode's source text; without, an address to write through calls
  // tidal.bounds.fault (the cpu target's guard against stores into the
  // process's memory; nothing on a GPU), and one only read is unchecked.
  enum class ElementAccess { Read, Write };
  llvm::Value *elementPointer(const TypedValue &Array, PyObject *IndexNode, const TypedValue &Index,
                              PyObject *ArrayNode = nullptr,
                              ElementAccess Access = ElementAccess::Write);
  // The source text of an expression (ast.unparse).
  std::string sourceText(PyObject *Node) const;
  // The scalar type a dtype object names: tidal.float32, numpy.float32,
  // numpy.dtype('float32'); throws a TypingError at Node otherwise.
  Scalar dtypeOf(const TypedValue &DType, PyObject *Node);
  // A C-contiguous array value over Data with a constant shape.
  TypedValue makeArray(Scalar ElementType, const std::vector<int64_t> &Shape, llvm::Value *Data);
  // The same for an array of records (EmitRecords.cpp); Data null: the
  // type alone (typing).
  TypedValue makeRecordArray(std::shared_ptr<const RecordLayout> Layout,
                             const std::vector<int64_t> &Shape, llvm::Value *Data);
  // The fields of a structured dtype object (numpy.dtype, Numba's Record
  // type); null when Object names no structured dtype, an UnsupportedError
  // at Node when kernels can't take one of its fields.
  std::shared_ptr<const RecordLayout> recordLayoutOfObject(PyObject *Object, PyObject *Node);
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
  // The arithmetic operator Op on two values, for the rules and emitters
  // of builtins such as pow(): its type (typing) and its value (emission).
  TypedValue arithmeticType(BinaryOperator Op, const TypedValue &L, const TypedValue &R,
                            PyObject *Node) {
    return typeBinary(Op, L, R, Node);
  }
  TypedValue arithmetic(BinaryOperator Op, const TypedValue &L, const TypedValue &R,
                        PyObject *Node) {
    return emitBinary(Op, L, R, Node);
  }
  // Device functions written in Python that intrinsics call
  // (LibraryFunctions.cpp): the function Name of the module Module
  // (tidal.cuda._cmath), compiled once per module and parameter types;
  // an internal error at Node if it does not compile.
  DeviceFunctionCache::Entry libraryFunction(const std::string &Module, const std::string &Name,
                                             const std::vector<Type> &Params, PyObject *Node);
  // Emits a call of a compiled device function on arguments already of its
  // parameter types.
  TypedValue callCompiled(const DeviceFunctionCache::Entry &Callee,
                          llvm::ArrayRef<TypedValue> Args);
  std::string functionName() const;
  const FrontendOptions &options() const { return Options; }
  // Issues the Python warning Module.Category(Message) at Node's file and
  // line (warnings filters apply; an error raised by one propagates).
  void warnAt(PyObject *Node, const char *Module, const char *Category,
              const std::string &Message);
  // While typing `name = <value>`: name (for messages that name the
  // variable, as Numba's do); "" otherwise.
  const std::string &assignedVariable() const { return AssignedVariable; }

private:
  // One typing handler and one emitter per AST node kind: the rows of
  // AstNodes.def; null for a kind that kernels do not support.
  using ExprHandler = TypedValue (FunctionCompiler::*)(PyObject *);
  using StmtHandler = void (FunctionCompiler::*)(PyObject *);
  struct ExpressionRule {
    ExprHandler Type, Emit;
  };
  struct StatementRule {
    StmtHandler Type, Emit;
  };
  static const ExpressionRule *expressionRule(const std::string &Kind);
  static const StatementRule *statementRule(const std::string &Kind);

  // --- typing (Type*.cpp): decide types, raise typing errors, record them ---
  TypedValue typeExpression(PyObject *Node);
  void typeStatement(PyObject *Node);
  void typeBody(PyObject *List);
  // expressions
  TypedValue typeConstant(PyObject *Node);
  TypedValue typeNameNode(PyObject *Node);
  TypedValue typeBinOp(PyObject *Node);
  TypedValue typeUnaryOp(PyObject *Node);
  TypedValue typeCompare(PyObject *Node);
  TypedValue typeBoolOp(PyObject *Node);
  TypedValue typeIfExp(PyObject *Node);
  TypedValue typeAttribute(PyObject *Node);
  TypedValue typeSubscript(PyObject *Node);
  TypedValue typeCall(PyObject *Node);
  bool typeCallArguments(PyObject *Node, std::vector<TypedValue> &Args,
                         std::vector<PyObject *> &ArgNodes, std::vector<std::string> &Keywords);
  // Overloads of tidal.extending (overload, overload_method,
  // overload_attribute): TypeCalls.cpp.
  PyRef askExtending(const char *Function, PyObject *Subject, const std::vector<TypedValue> &Args,
                     const std::vector<std::string> &Keywords, PyObject *Node);
  std::optional<TypedValue> typeOverloadedMethodCall(PyObject *Node);
  std::optional<TypedValue> typeOverloadedAttribute(const TypedValue &Base,
                                                    const std::string &Attr, PyObject *Node);
  TypedValue typeTuple(PyObject *Node);
  // Functions defined inside this one, def and lambda (InnerFunctions.cpp):
  // a compile-time function object whose last parameters are the variables
  // it captures at run time; capturedVariables() gives their names (empty
  // for other functions); rejectEscapingClosure() refuses, as Numba, one
  // that captures run-time values where it would leave this function.
  TypedValue typeLambda(PyObject *Node);
  void typeFunctionDef(PyObject *Node);
  TypedValue typeInnerFunction(PyObject *Node);
  static std::vector<std::string> capturedVariables(PyObject *PyFunc);
  void rejectEscapingClosure(const TypedValue &V, PyObject *Node);
  // statements
  void typeAssign(PyObject *Node);
  void typeAugAssign(PyObject *Node);
  void typeExpressionStatement(PyObject *Node);
  void typeIf(PyObject *Node);
  void typeWhile(PyObject *Node);
  void typeFor(PyObject *Node);     // the loop, then its else
  void typeForLoop(PyObject *Node);
  void typeNothing(PyObject *Node); // break, continue, pass
  void typeReturn(PyObject *Node);
  void typeAssert(PyObject *Node);
  void typeRaise(PyObject *Node); // KernelExceptions.cpp
  // pieces
  TypedValue typeBinary(BinaryOperator Op, const TypedValue &L, const TypedValue &R, PyObject *Node);
  frontend::Type typeComparison(ComparisonOperator Op, const TypedValue &L, const TypedValue &R,
                                PyObject *Node);
  void typeAssignTo(PyObject *Target, const TypedValue &V, PyObject *ValueNode);
  void typeStore(const std::string &Name, const TypedValue &V, PyObject *Node);
  TypedValue typeLoad(const std::string &Name, PyObject *Node);
  // x for a version x.1 of it (tidal/_variable_versions.py).
  static std::string sourceName(const std::string &Name);
  // A read of Name that may see two of its assignments, or Otherwise.
  PyObject *sharedRead(const std::string &Name, PyObject *Otherwise) const;
  std::optional<TypedValue> typeNumber(PyObject *O, PyObject *Node, const std::string &What);
  TypedValue typeFrozen(PyObject *Object, PyObject *Node, const std::string &What);
  TypedValue typeConstantArray(PyObject *Array, PyObject *Node, const std::string &What);
  TypedValue typeSlice(const TypedValue &Base, PyObject *SliceNode);
  // True if `Base[SliceNode]` is a view: a slice among the indices, or
  // fewer indices than an array's dimensions.
  // IndexType: the type of a SliceNode that is neither a tuple nor a slice
  // (typeIndexOfNoSlice types it first), or null.
  static bool selectsView(const Type &Base, PyObject *SliceNode, const Type *IndexType);
  std::optional<TypedValue> typeIndexOfNoSlice(PyObject *SliceNode);
  // a[1:n] = v, a[i] = v of a 2-D array: a number into every element of
  // the view, or an array broadcast to its shape (TypeStatements.cpp,
  // EmitStatements.cpp).
  void typeViewStore(PyObject *Target, const TypedValue &Base, const TypedValue &V,
                     PyObject *ValueNode);
  void emitViewStore(PyObject *Target, const TypedValue &V, PyObject *ValueNode);
  // Loops over every index of `Extents` (C order, the last fastest), calling
  // Body with the indices (i64) inside the innermost.
  void emitIndexLoops(llvm::ArrayRef<llvm::Value *> Extents,
                      llvm::function_ref<void(llvm::ArrayRef<llvm::Value *>)> Body);
  TypedValue typeGlobal(const std::string &Name, PyObject *Node);
  TypedValue typeAttributeOfObject(const TypedValue &Base, const std::string &Attr, PyObject *Node);
  // Tuples, namedtuples and enums (TypeTuples.cpp): each answers for the
  // values it knows and leaves the rest (nullopt) to the caller.
  std::optional<TypedValue> typeEnumOrNamedTuple(PyObject *O, PyObject *Node,
                                                 const std::string &What);
  // t[i]: a constant index on any tuple, a run-time one on a homogeneous tuple.
  TypedValue typeTupleIndex(const TypedValue &Tuple, const TypedValue &Index, PyObject *IndexNode,
                            PyObject *SubscriptNode);
  // p.x of a namedtuple, m.value of an Enum member.
  std::optional<TypedValue> typeAttributeOfTupleOrEnum(const TypedValue &Base,
                                                       const std::string &Attr, PyObject *Node);
  // Color['red'] on an Enum class.
  std::optional<TypedValue> typeSubscriptOfObject(const TypedValue &Object, const TypedValue &Index,
                                                  PyObject *Node);
  // x in t, t == u, and ==, !=, is, is not where an operand is an Enum
  // member: the comparison's operand type (none: decided by the types alone).
  std::optional<frontend::Type> typeTupleOrEnumComparison(ComparisonOperator Op, const TypedValue &L,
                                                          const TypedValue &R, PyObject *Node);
  // An IntEnum operand of arithmetic is its int; an Enum one is an error.
  TypedValue typeEnumOperand(const TypedValue &V, PyObject *Node);
  // for over enumerate, zip, arrays and tuples (TypeIteration.cpp);
  // typeFor keeps range().
  IterationSource typeIterationSource(PyObject *IterNode);
  TypedValue typeIterationElement(const IterationSource &Source, std::optional<int64_t> StaticIndex);
  void typeForOverIterable(PyObject *Node);
  TypedValue callObject(PyObject *Callee, PyObject *Node, std::vector<TypedValue> &Args,
                        std::vector<PyObject *> &ArgNodes, std::vector<std::string> &Keywords);
  void rejectListShape(PyObject *Callee, PyObject *Node);
  TypedValue callDeviceFunction(PyObject *Device, PyObject *Node, std::vector<TypedValue> &Args,
                                std::vector<PyObject *> &ArgNodes,
                                std::vector<std::string> &Keywords);
  // After the rounds: true when control can reach the end of the statement
  // list Body (TypeStatements.cpp); Breaks is set when a reachable 'break'
  // leaves the innermost loop around it.
  bool fallsThrough(PyObject *Body, bool &Breaks);
  bool endsPrunedPath(PyObject *Statement);
  bool constantCondition(PyObject *Test, bool &Value);

  // --- emission (Emit*.cpp): read the type map, write IR ---
  TypedValue emitExpression(PyObject *Node);
  void emitStatement(PyObject *Node);
  void emitBody(PyObject *List);
  // expressions
  TypedValue emitConstant(PyObject *Node);
  TypedValue emitName(PyObject *Node);
  TypedValue emitBinOp(PyObject *Node);
  TypedValue emitUnaryOp(PyObject *Node);
  TypedValue emitCompare(PyObject *Node);
  TypedValue emitBoolOp(PyObject *Node);
  TypedValue emitIfExp(PyObject *Node);
  TypedValue emitAttribute(PyObject *Node);
  TypedValue emitSubscript(PyObject *Node);
  TypedValue emitCallExpression(PyObject *Node);
  TypedValue emitTuple(PyObject *Node);
  TypedValue emitLambda(PyObject *Node);
  void emitFunctionDef(PyObject *Node);
  // statements
  void emitAssign(PyObject *Node);
  void emitAugAssign(PyObject *Node);
  void emitExpressionStatement(PyObject *Node);
  void emitIf(PyObject *Node);
  void emitWhile(PyObject *Node);
  void emitFor(PyObject *Node);
  void emitWhileLoop(PyObject *Node);
  void emitForLoop(PyObject *Node);
  // A loop with its else (for/while ... else): Loop emits the loop, whose
  // normal exit then runs the else; its breaks go past the else.
  void emitLoopWithElse(PyObject *Node, void (FunctionCompiler::*Loop)(PyObject *));
  // The block a loop's 'break' goes to: its normal exit Done, unless an
  // else follows the loop (emitLoopWithElse set one, taken by the loop).
  llvm::BasicBlock *loopBreakTarget(llvm::BasicBlock *Done);
  llvm::BasicBlock *PendingLoopBreak = nullptr;
  void emitBreak(PyObject *Node);
  void emitContinue(PyObject *Node);
  void emitPass(PyObject *Node);
  void emitReturn(PyObject *Node);
  void emitReturnValue(const TypedValue &R); // returns R's parts
  void emitAssert(PyObject *Node);
  void emitRaiseStatement(PyObject *Node); // KernelExceptions.cpp
  // pieces
  TypedValue emitBinary(BinaryOperator Op, const TypedValue &L, const TypedValue &R, PyObject *Node);
  TypedValue emitComparison(ComparisonOperator Op, const TypedValue &L, const TypedValue &R,
                            const frontend::Type &Operand, PyObject *Node);
  TypedValue integerDivide(bool Floor, const TypedValue &L, const TypedValue &R);
  std::pair<llvm::Value *, llvm::Value *> floatDivMod(llvm::Value *X, llvm::Value *Y);
  TypedValue integerPower(const TypedValue &Base, const TypedValue &Exponent);
  // Complex numbers (ComplexSupport.cpp), typing then emitting: a ** b and
  // pow() where either is complex (tidal.cuda._cmath.power); a.real and
  // a.imag of an array (views of the components); a starred call argument
  // (f(*t)), whose tuple's elements become arguments.
  void typeComplexPower(PyObject *Node);
  // datetime64/timedelta64 operators (Datetimes.cpp): typing (nullopt when
  // neither operand is one), and emission of what typing decided.
  std::optional<TypedValue> typeDatetimeBinary(BinaryOperator Op, const TypedValue &L,
                                               const TypedValue &R, PyObject *Node);
  std::optional<frontend::Type> typeDatetimeComparison(ComparisonOperator Op, const TypedValue &L,
                                                       const TypedValue &R, PyObject *Node);
  TypedValue emitDatetimeBinary(BinaryOperator Op, const TypedValue &L, const TypedValue &R,
                                PyObject *Node);
  TypedValue emitDatetimeComparison(ComparisonOperator Op, const TypedValue &L,
                                    const TypedValue &R, const frontend::Type &Common);
  // The type of a frozen numpy.datetime64/timedelta64 scalar; nullopt for
  // other objects.
  static std::optional<Type> frozenDatetimeType(PyObject *O);
  // A datetime operand's count in Unit (NaT kept), or an integer's as int64.
  llvm::Value *datetimeIn(const TypedValue &V, TimeUnit Unit);
  TypedValue emitComplexPower(const TypedValue &L, const TypedValue &R, Scalar Common,
                              PyObject *Node);
  TypedValue typeArrayComponent(const TypedValue &Array, const std::string &Attr, PyObject *Node);
  TypedValue emitArrayComponent(const TypedValue &Array, const std::string &Attr, PyObject *Node);
  bool typeStarredArgument(PyObject *Starred, std::vector<TypedValue> &Args,
                           std::vector<PyObject *> &ArgNodes);
  void emitStarredArgument(PyObject *Starred, std::vector<TypedValue> &Args,
                           std::vector<PyObject *> &ArgNodes);
  void emitAssignTo(PyObject *Target, const TypedValue &V, PyObject *ValueNode);
  void emitStore(const std::string &Name, const TypedValue &V, PyObject *Node);
  TypedValue emitLoad(const std::string &Name, PyObject *Node);
  TypedValue emitNumber(PyObject *O);
  TypedValue emitFrozen(PyObject *Object, PyObject *Node);
  TypedValue emitConstantArray(PyObject *Array, PyObject *Node);
  TypedValue emitSlice(const TypedValue &Base, PyObject *SliceNode, PyObject *ArrayNode,
                       const frontend::Type &View);
  [[noreturn]] void internalError(PyObject *Node, const std::string &Message);
  // Records. Typing (TypeRecords.cpp): r.x, r['x'] and r[0] name the same
  // field (recordFieldName gives the name a subscript means, or throws a
  // TypingError); what loading it gives and what may be stored into it;
  // records frozen from globals; a.view(dtype).
  const RecordField &recordField(const TypedValue &Record, const std::string &Name, PyObject *Node);
  TypedValue typeRecordFieldLoad(const TypedValue &Record, const std::string &Name, PyObject *Node);
  void typeRecordFieldStore(const TypedValue &Record, const std::string &Name, const TypedValue &V,
                            PyObject *Node, PyObject *ValueNode);
  std::string recordFieldName(const TypedValue &Record, const TypedValue &Index, PyObject *IndexNode);
  std::optional<TypedValue> typeFrozenRecords(PyObject *O, PyObject *Node);
  TypedValue typeArrayView(const TypedValue &Base, PyObject *Node);
  // a.reshape(...), a.item() (ArrayMethods.cpp); nullopt for other calls.
  std::optional<TypedValue> typeArrayMethod(PyObject *Node);
  std::optional<TypedValue> emitArrayMethod(PyObject *Node);
  // a.copy() and np.copy(a) into a local array (ArrayCopy.cpp): the shape
  // of the array Node computes where it is known when compiling (a local
  // or shared array's, a frozen global's, a view of one with constant
  // bounds), the copy's type (a located error where no shape is known),
  // and its emission.
  std::optional<std::vector<int64_t>> constantShape(PyObject *Node, int Depth = 0);
  TypedValue typeArrayCopy(PyObject *Node, PyObject *Source, const TypedValue &Array);
  TypedValue emitArrayCopy(PyObject *Node, PyObject *Source);
  // Pointers (PointerTypes.cpp): p[i] of a CPointer, its address, and
  // cffi's ffi.from_buffer(a) in kernels (nullopt for other callees).
  void checkPointerIndex(const TypedValue &Pointer, const TypedValue &Index, PyObject *IndexNode);
  TypedValue typePointerElement(const TypedValue &Pointer, const TypedValue &Index,
                                PyObject *IndexNode, PyObject *Node);
  llvm::Value *pointerElementAddress(const TypedValue &Pointer, const TypedValue &Index,
                                     PyObject *IndexNode);
  std::optional<TypedValue> typeFfiCall(PyObject *Callee, PyObject *Node,
                                        std::vector<TypedValue> &Args,
                                        std::vector<PyObject *> &ArgNodes,
                                        std::vector<std::string> &Keywords);
  // Emission (EmitRecords.cpp) of what typing decided.
  TypedValue emitRecordFieldLoad(const TypedValue &Record, const std::string &Name, PyObject *Node);
  void emitRecordFieldStore(const TypedValue &Record, const std::string &Name, const TypedValue &V,
                            PyObject *Node, PyObject *ValueNode);
  // Tuples, namedtuples and enums (EmitTuples.cpp), as typing decided.
  std::optional<TypedValue> emitEnumOrNamedTuple(PyObject *O, PyObject *Node);
  // With debug=True an index out of range at run time is an IndexError
  // ("tuple index out of range").
  TypedValue emitTupleIndex(const TypedValue &Tuple, const TypedValue &Index, PyObject *IndexNode,
                            PyObject *TupleNode);
  std::optional<TypedValue> emitTupleOrEnumComparison(ComparisonOperator Op, const TypedValue &L,
                                                      const TypedValue &R, PyObject *Node);
  // for over enumerate, zip, arrays and tuples (EmitIteration.cpp).
  IterationSource emitIterationSource(PyObject *IterNode);
  void emitUnpackArray(const std::vector<PyObject *> &Targets, const TypedValue &V,
                       PyObject *ValueNode);
  TypedValue emitIterationElement(const IterationSource &Source, llvm::Value *Index,
                                  std::optional<int64_t> StaticIndex);
  llvm::Value *iterationLength(const IterationSource &Source);
  void emitForOverIterable(PyObject *Node);
  TypedValue emitRecordFieldView(const TypedValue &Record, const RecordField &Field);
  void emitSubArrayStore(const TypedValue &View, const RecordField &Field, const TypedValue &V,
                         PyObject *ValueNode);
  std::optional<TypedValue> emitFrozenRecords(PyObject *O, PyObject *Node);
  TypedValue emitArrayView(const TypedValue &Base, const frontend::Type &Result);
  llvm::GlobalVariable *constantBytes(PyObject *O, unsigned Alignment);
  // Debug mode: branch to tidal.bounds.error when Index (already wrapped
  // once if negative) is outside [0, Extent) of dimension Dimension of the
  // array; Original is the index as written, for the message.
  void checkIndexInBounds(PyObject *IndexNode, PyObject *ArrayNode, llvm::Value *Original,
                          llvm::Value *Index, llvm::Value *Extent, unsigned Dimension);
  std::map<PyObject *, llvm::GlobalVariable *> ConstantArrays;
  std::unique_ptr<llvm::DIBuilder> DebugBuilder; // with lineinfo or debug
  llvm::DISubprogram *Subprogram = nullptr;
  // The statement or expression being emitted (setDebugLocation).
  PyObject *LocationNode = nullptr;
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
  bool TypesChanged = false;
  TypeMap Typing;
  std::string AssignedVariable; // assignedVariable()
  // Errors that only the settled types decide, found in each typing round
  // and raised when the round is the last: the first read of a variable
  // that has no type, the first bare 'return' of a device function.
  PyObject *FirstUntypedRead = nullptr;
  std::string FirstUntypedReadName;
  PyObject *FirstBareReturn = nullptr;
  // A call of this device function from itself that typing could not type
  // (no return gives its type yet): raised as runaway recursion when it is
  // the last round's (TypeCalls.cpp).
  PyObject *FirstUntypedSelfCall = nullptr;
  // The return that last changed the return type (where one that keeps
  // growing under calls of itself is reported, TypeFunction.cpp).
  PyObject *LastReturnChange = nullptr;
  DeviceFunctionCache &Devices;
  bool IsDevice = false;
  Type ReturnType = Type::none(); // device functions: unified while typing
  bool HasReturnType = false;
  std::optional<Type> DeclaredReturn;
  // A device function: its argument types and symbol, for emitDevice().
  std::vector<Type> DeviceArgTypes;
  std::string DeviceSymbol;
  // Emits every typed device function of the module not emitted yet.
  void emitDevices();
  // The LLVM function of entry Index of the cache, emitted now if it was not
  // yet (a callee whose typing finished after its caller's began: recursion
  // reserves the caller's entry first).
  llvm::Function *emitDeviceFunction(size_t Index);

  // The rounds on Body; typeToFixedPoint (LiteralUnroll.cpp) runs them again
  // on an unrolled tree when a literal_unroll loop asks for one.
  void typeToFixedPoint(PyObject *Body);
  void typeRounds(PyObject *Body);
  void typeLiteralUnrollLoop(PyObject *Node);
  PyRef UnrollBase;    // the parsed tree, once a literal_unroll loop is unrolled
  PyRef UnrollLengths; // {loop key: tuple length} (tidal/_literal_unroll.py)
  void applyKernelOptions(llvm::Function *Kernel);
  void setDebugLocation(PyObject *Node);
  // !tidal.where on a marker call when there are no debug locations.
  void markWhere(llvm::CallInst *Call);
  llvm::DISubprogram *debugSubprogram(llvm::Function *F, const std::string &Name);
  llvm::Function *emitFunction(PyObject *Body, const std::vector<Type> &ArgTypes,
                               const std::string &Symbol, llvm::Type *ResultType,
                               llvm::GlobalValue::LinkageTypes Linkage);
  // The call Node as typing recorded it: its intrinsic's emitter, or its
  // device function; Args and ArgNodes as written.
  TypedValue emitCall(PyObject *Node, std::vector<TypedValue> &Args,
                      std::vector<PyObject *> &ArgNodes);
  llvm::Type *returnLLVMType(const Type &T) const;
  // Foreign functions (ForeignFunctions.cpp): typing picks the overload,
  // emission calls it with its ABI.
  TypedValue callForeignFunction(PyObject *Callee, PyObject *Node, std::vector<TypedValue> &Args,
                                 std::vector<PyObject *> &ArgNodes,
                                 std::vector<std::string> &Keywords);
  // The type map's record of a call of Function (the overload chosen) with
  // the code of Links to link.
  TypedValue recordForeignCall(PyObject *Node, const ForeignFunction &Function, PyObject *Links,
                               const std::vector<TypedValue> &Args);
  TypedValue emitForeignCall(PyObject *Node, const CallTarget &Target,
                             std::vector<TypedValue> &Args, std::vector<PyObject *> &ArgNodes);

  struct Variable {
    Type T;
    std::vector<llvm::AllocaInst *> Slots; // one per part, made by emission
    // An array or record read where it may be unassigned: true once
    // assigned (emitLoad raises UnboundLocalError there otherwise).
    llvm::AllocaInst *Bound = nullptr;
  };
  std::map<std::string, Variable> Variables;
  // Device functions: the parameters specialised on a literal value that
  // the body never assigns; reading one gives its constant.
  std::map<std::string, ParameterConstant> ConstantParameters;
  // Locals bound exactly once (ConstantLocals.cpp): one bound to a
  // compile-time integer joins ConstantParameters while typing.
  std::set<std::string> LocalsBoundOnce;
  void noteConstantLocal(const std::string &Name, const TypedValue &V);
  // Exceptions (KernelExceptions.cpp): the exception a raise statement
  // names, its class and constant arguments (Typing: checked; emission:
  // read back from the type map).
  struct RaisedException {
    PyRef Class;
    PyRef Arguments; // a tuple
  };
  RaisedException raisedException(PyObject *Node, bool Typing);
  // Emits the raise of Class(*Arguments) at Node: with debug=True it ends
  // the thread and reaches the host after the launch; without, a raise in
  // a kernel ends the thread quietly (as in Numba).
  void emitRaise(PyObject *Class, PyObject *Arguments, PyObject *Node);
  // Debug mode: a division (/, //, %) by a zero Divisor raises
  // ZeroDivisionError (not for floats with fastmath).
  void checkDivisor(llvm::Value *Divisor, PyObject *Node);
  // Optional values (OptionalValues.cpp). Typing: typeKeepingOptional types
  // a node whose parent takes an Optional as it is (typeExpression unwraps
  // one otherwise: typedUse records it); conversions to, from and between
  // Optionals; `x is None` of an Optional. Emission: its contents, and the
  // unwrapping that raises TypeError on None.
  bool KeepOptional = false;
  bool ArgumentsKeepOptional = false; // the arguments of a device function call
  TypedValue typeKeepingOptional(PyObject *Node);
  TypedValue typedUse(TypedValue Result, ExpressionType &Recorded, bool Keep);
  TypedValue convertedOptionalType(const TypedValue &V, const Type &To, PyObject *Node);
  TypedValue convertOptional(const TypedValue &V, const Type &To, PyObject *Node);
  TypedValue optionalContents(const TypedValue &V) const;
  TypedValue unwrapOptional(const TypedValue &V, PyObject *Node);
  std::optional<frontend::Type> typeOptionalIdentity(ComparisonOperator Op, const TypedValue &L,
                                                     const TypedValue &R);
  TypedValue emitOptionalIdentity(ComparisonOperator Op, const TypedValue &L, const TypedValue &R);
  Bindings NameBindings; // from the binding analysis, before typing
  // Versions of variables (tidal/_variable_versions.py): for each, a read
  // that may see two of its assignments, where a type error is located.
  PyRef SharedReads; // a dict {name: ast.Name}; null until split
  void splitVariableVersions();
  static bool holdsArray(const Type &T);
  static int64_t foldedIdentity(ComparisonOperator Op, const Type &L, const Type &R);
  bool prunedTest(PyObject *Test, const std::optional<int64_t> &Constant) const;
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

// The names a function body binds exactly once, parameters excluded
// (ConstantLocals.cpp).
std::set<std::string> namesBoundOnce(PyObject *Body, const std::vector<std::string> &ParamNames);
// How many times each name is bound anywhere in Body (FunctionCompiler.cpp).
std::map<std::string, int> nameStoreCounts(PyObject *Body);

// tidal.literal_unroll, Numba's or numba-cuda's (LiteralUnroll.cpp).
bool isLiteralUnroll(PyObject *Callee);

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
