// Calls: intrinsics (Intrinsics*.cpp), methods and device functions. Typing
// resolves the callee and records it in the type map (callObject);
// emission calls what was recorded (emitCall).
#include "FunctionCompiler.h"
#include "AstAccess.h"
#include "IntrinsicTable.h"

#include "llvm/IR/CFG.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace llvm;

namespace tidal::frontend {

// --- calls -------------------------------------------------------------------------

TypedValue FunctionCompiler::visitCall(PyObject *Node) {
  PyRef FuncNode = field(Node, "func");
  // z.conjugate(): the one method of numbers kernels call.
  if (nodeKind(FuncNode.get()) == "Attribute" &&
      identifierField(FuncNode.get(), "attr") == "conjugate") {
    TypedValue Z = expr(field(FuncNode.get(), "value").get());
    if (Z.T.isUndefined())
      return TypedValue();
    if (Z.T.isScalar()) {
      if (PyList_GET_SIZE(field(Node, "args").get()) > 0)
        typingError(Node, "conjugate() takes no arguments");
      if (!isComplex(Z.T.Dtype) || !Emitting)
        return isComplex(Z.T.Dtype) ? TypedValue(Z.T) : Z;
      Value *V = Z.scalar();
      return makeScalar(Z.T.Dtype, makeComplex(Z.T.Dtype, B.CreateExtractValue(V, 0),
                                              B.CreateFNeg(B.CreateExtractValue(V, 1))));
    }
  }
  // Emission calls what typing resolved; the callee is a compile-time object.
  TypedValue Callee = Emitting ? TypedValue(typeOf(FuncNode.get()).T) : expr(FuncNode.get());
  std::vector<PyObject *> ArgNodes = listItems(field(Node, "args").get());
  std::vector<TypedValue> Args;
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
  if (Emitting)
    return emitCall(Node, Args, ArgNodes);
  if (Undefined)
    return TypedValue();
  if (!Callee.T.isPyObject())
    typingError(FuncNode.get(), "a value of type " + Callee.T.str() + " is not callable");
  return callObject(static_cast<PyObject *>(Callee.T.Object), Node, Args, ArgNodes, Keywords);
}

TypedValue FunctionCompiler::emitCall(PyObject *Node, std::vector<TypedValue> &Args,
                                      std::vector<PyObject *> &ArgNodes) {
  const CallTarget *Target = Typing.findCall(Node);
  if (!Target)
    throw CompileError("CompileError",
                       "internal error: the call '" + sourceText(Node) + "' was not typed",
                       locate(Node));
  // The arguments in the order typing bound them to the callee's parameters.
  std::vector<TypedValue> BoundArgs;
  std::vector<PyObject *> BoundNodes;
  for (size_t Index : Target->ArgumentOrder) {
    BoundArgs.push_back(Args[Index]);
    BoundNodes.push_back(ArgNodes[Index]);
  }
  if (Target->Record) {
    std::vector<std::string> NoKeywords;
    IntrinsicCall Call{*this, Node, BoundArgs, BoundNodes, NoKeywords, Target->Record, {}};
    return Target->Record->Emitter(Call, Target->Result);
  }
  // A device function: arguments converted to its parameters' types.
  std::vector<Value *> CallArgs;
  for (size_t I = 0; I < BoundArgs.size(); ++I) {
    TypedValue Argument = convert(BoundArgs[I], Target->DeviceParameters[I], BoundNodes[I]);
    for (Value *P : Argument.Parts)
      CallArgs.push_back(P->getType()->isIntegerTy(1) ? B.CreateZExt(P, B.getInt8Ty()) : P);
  }
  CallInst *Call = B.CreateCall(Target->Device, CallArgs);
  TypedValue Result(Target->Result);
  std::vector<llvm::Type *> Parts = partTypes(Target->Result);
  if (Parts.size() == 1)
    Result.Parts.push_back(Call);
  else
    for (unsigned I = 0; I < Parts.size(); ++I)
      Result.Parts.push_back(B.CreateExtractValue(Call, I));
  return Result;
}

TypedValue FunctionCompiler::callObject(PyObject *Callee, PyObject *Node, std::vector<TypedValue> &Args,
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
  if (const IntrinsicRecord *Record = findIntrinsic(Name);
      Record && Record->Kind == IntrinsicKind::Function) {
    IntrinsicCall Call{*this, Node, Args, ArgNodes, Keywords, Record, {}};
    for (size_t I = 0; I < Args.size(); ++I)
      Call.ArgumentOrder.push_back(I);
    TypedValue Typed = Record->TypeRule(Call);
    CallTarget &Target = Typing.Calls[Node];
    Target.Record = Record;
    Target.ArgumentOrder = std::move(Call.ArgumentOrder);
    Target.Result = Typed.T;
    return Typed;
  }
  std::string Shown = Name;
  if (Shown.empty()) {
    PyRef QualName = PyRef::borrow(Callee).attrOrNull("__qualname__");
    Shown = QualName ? QualName.str() : typeName(Callee);
  }
  unsupported(Node, "call to unsupported function '" + Shown + "' in a kernel");
}

TypedValue FunctionCompiler::callDeviceFunction(PyObject *Device, PyObject *Node,
                                            std::vector<TypedValue> &Args,
                                            std::vector<PyObject *> &ArgNodes,
                                            std::vector<std::string> &Keywords) {
  PyRef PyFunc = PyRef::borrow(Device).attr("py_func");
  std::vector<std::string> Params = parameterNames(PyFunc.get());
  std::string Name = PyRef::borrow(PyFunc.get()).attr("__name__").str();
  // Bind keywords by the Python function's parameter names.
  std::vector<std::optional<TypedValue>> Bound(Params.size());
  std::vector<PyObject *> BoundNodes(Params.size(), Node);
  std::vector<size_t> Order(Params.size());
  size_t Positional = Args.size() - Keywords.size();
  if (Positional > Params.size())
    typingError(Node, "device function '" + Name + "' takes " + std::to_string(Params.size()) +
                          " arguments but " + std::to_string(Positional) + " were given");
  for (size_t I = 0; I < Positional; ++I) {
    Bound[I] = Args[I];
    BoundNodes[I] = ArgNodes[I];
    Order[I] = I;
  }
  for (size_t K = 0; K < Keywords.size(); ++K) {
    auto It = std::find(Params.begin(), Params.end(), Keywords[K]);
    if (It == Params.end() || Bound[It - Params.begin()])
      typingError(ArgNodes[Positional + K], "device function '" + Name +
                                                "' got an unexpected or repeated argument '" +
                                                Keywords[K] + "'");
    Bound[It - Params.begin()] = Args[Positional + K];
    BoundNodes[It - Params.begin()] = ArgNodes[Positional + K];
    Order[It - Params.begin()] = Positional + K;
  }
  std::vector<TypedValue> Actual;
  std::vector<frontend::Type> Types;
  std::vector<ParameterConstant> Constants;
  for (size_t I = 0; I < Params.size(); ++I) {
    if (!Bound[I])
      typingError(Node, "device function '" + Name + "' takes " + std::to_string(Params.size()) +
                            " arguments but " + std::to_string(Args.size()) +
                            " were given (missing '" + Params[I] + "')");
    // Compile-time objects (intrinsics, device functions, dtypes, modules)
    // pass as themselves: the specialisation is keyed on their identity.
    // Strings only print() reads, from its own argument's node.
    if (Bound[I]->T.isPyObject() && PyUnicode_Check(static_cast<PyObject *>(Bound[I]->T.Object)))
      typingError(BoundNodes[I], "cannot pass a string to device function '" + Name +
                                     "' (parameter '" + Params[I] +
                                     "'): strings are only usable as print() arguments");
    Actual.push_back(*Bound[I]);
    Types.push_back(Bound[I]->T);
    // Integer and bool literals (and tuples of integers) specialise the
    // callee on their value, so that it can use them where a constant is
    // needed and prune `if flag:` on them.
    ParameterConstant Constant;
    if (Bound[I]->T.isScalar() && (isInteger(Bound[I]->T.Dtype) || Bound[I]->T.isBool()))
      Constant.Int = Bound[I]->ConstInt;
    else if (Bound[I]->T.isTuple())
      Constant.Tuple = Bound[I]->TupleConstInts;
    Constants.push_back(std::move(Constant));
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
    // A declared signature fixes the types: no literal specialisation.
    for (size_t I = 0; I < Types.size(); ++I) {
      Actual[I] = convert(Actual[I], Sig.Params[I], BoundNodes[I]);
      Types[I] = Sig.Params[I];
      Constants[I] = ParameterConstant();
    }
    if (Sig.HasReturn)
      Declared = Sig.Return;
  }
  // Compile (or reuse) the specialisation; recursion is rejected.
  DeviceFunctionCache::Entry *Found = nullptr;
  for (auto &E : Devices.Compiled)
    if (E.Function == PyFunc.get() && E.ArgTypes == Types && E.Constants == Constants)
      Found = &E;
  if (!Found) {
    if (std::find(Devices.InProgress.begin(), Devices.InProgress.end(), PyFunc.get()) !=
        Devices.InProgress.end())
      unsupported(Node, "recursive device functions are not supported ('" + Name + "')");
    Devices.InProgress.push_back(PyFunc.get());
    DeviceFunctionCache::Entry Entry;
    try {
      FunctionCompiler Callee(PyFunc.get(), M, Options, Devices);
      Entry = Callee.compileDevice(Types, Declared ? &*Declared : nullptr, Constants);
    } catch (const CompileError &E) {
      // The error is located inside the callee; say which call led there.
      Devices.InProgress.pop_back();
      SourceLocation Call = locate(Node);
      throw CompileError(E.Kind,
                         E.Message + " (in device function '" + Name + "' called at " +
                             Call.File + ":" + std::to_string(Call.Line) + ":" +
                             std::to_string(Call.Column) + ")",
                         E.Where);
    }
    Devices.InProgress.pop_back();
    Devices.Compiled.push_back(Entry);
    Found = &Devices.Compiled.back();
  }
  CallTarget &Target = Typing.Calls[Node];
  Target.Result = Found->Return;
  Target.ArgumentOrder = std::move(Order);
  Target.Device = Found->F;
  Target.DeviceParameters = std::move(Types);
  return TypedValue(Found->Return);
}

} // namespace tidal::frontend
