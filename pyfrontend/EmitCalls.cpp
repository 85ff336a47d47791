// Emission of calls, as typing resolved them (TypeCalls.cpp): conjugate(),
// an intrinsic's emitter on the arguments as its typing rule bound them,
// or a call of a device function's LLVM function (or a foreign one's,
// ForeignFunctions.cpp).
#include "FunctionCompiler.h"
#include "AstAccess.h"
#include "IntrinsicTable.h"

#include "llvm/IR/Instructions.h"

using namespace llvm;

namespace tidal::frontend {

TypedValue FunctionCompiler::emitCallExpression(PyObject *Node) {
  PyRef FuncNode = field(Node, "func");
  // z.conjugate() of a number.
  if (nodeKind(FuncNode.get()) == "Attribute" &&
      identifierField(FuncNode.get(), "attr") == "conjugate") {
    PyRef ValueNode = field(FuncNode.get(), "value");
    if (typeOf(ValueNode.get()).T.isScalar()) {
      TypedValue Z = emitExpression(ValueNode.get());
      if (!isComplex(Z.T.Dtype))
        return Z;
      Value *V = Z.scalar();
      return makeScalar(Z.T.Dtype, makeComplex(Z.T.Dtype, B.CreateExtractValue(V, 0),
                                              B.CreateFNeg(B.CreateExtractValue(V, 1))));
    }
  }
  // i.bit_count() of an integer: cuda.popc's emitter (TypeCalls.cpp).
  if (PyObject *Receiver = methodCallReceiver(Node, "bit_count");
      Receiver && typeOf(Receiver).T.isIntegerScalar()) {
    std::vector<TypedValue> Args{emitExpression(Receiver)};
    std::vector<PyObject *> ArgNodes{Receiver};
    return emitCall(Node, Args, ArgNodes);
  }
  // a.reshape(...), a.item() of an array (ArrayMethods.cpp).
  if (std::optional<TypedValue> Method = emitArrayMethod(Node))
    return *Method;
  // a.view(dtype) of an array (EmitRecords.cpp).
  if (nodeKind(FuncNode.get()) == "Attribute" && identifierField(FuncNode.get(), "attr") == "view") {
    PyRef ValueNode = field(FuncNode.get(), "value");
    if (typeOf(ValueNode.get()).T.isArray())
      return emitArrayView(emitExpression(ValueNode.get()), typeOf(Node).T);
  }
  // A call made while typing, whose value is a compile-time object
  // (numpy.dtype('f4')): no call target, nothing to emit.
  if (typeOf(Node).T.isPyObject() && !Typing.findCall(Node))
    return TypedValue(typeOf(Node).T);
  // The callee is a compile-time object: nothing to emit.
  std::vector<PyObject *> ArgNodes;
  std::vector<TypedValue> Args;
  // x.method(...) of an overload_method: x is the first argument.
  if (const CallTarget *Target = Typing.findCall(Node); Target && Target->Receiver) {
    PyRef ValueNode = field(FuncNode.get(), "value");
    ArgNodes.push_back(ValueNode.get());
    Args.push_back(emitExpression(ValueNode.get()));
  }
  for (PyObject *A : listItems(field(Node, "args").get())) {
    if (nodeKind(A) == "Starred") { // f(*t): t's elements (ComplexSupport.cpp)
      emitStarredArgument(A, Args, ArgNodes);
      continue;
    }
    ArgNodes.push_back(A);
    Args.push_back(emitExpression(A));
  }
  for (PyObject *K : listItems(field(Node, "keywords").get())) {
    PyRef Value = field(K, "value");
    ArgNodes.push_back(Value.get());
    Args.push_back(emitExpression(Value.get()));
  }
  return emitCall(Node, Args, ArgNodes);
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
  for (size_t P = 0; P < Target->ArgumentOrder.size(); ++P) {
    size_t Index = Target->ArgumentOrder[P];
    if (Index == CallTarget::Captured) { // a variable an inner function captures
      BoundArgs.push_back(emitLoad(Target->Captures[P], Node));
      BoundNodes.push_back(Node);
      continue;
    }
    if (Index == CallTarget::Omitted) { // the parameter's default
      BoundArgs.push_back(emitFrozen(Target->Defaults[P], Node));
      BoundNodes.push_back(Node);
      continue;
    }
    BoundArgs.push_back(Args[Index]);
    BoundNodes.push_back(ArgNodes[Index]);
  }
  if (Target->Foreign)
    return emitForeignCall(Node, *Target, BoundArgs, BoundNodes);
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
  // A call of this function from itself calls F; another device function is
  // emitted first if it is not yet (a callee typed after its caller).
  llvm::Function *Device = Target->SelfCall ? F : emitDeviceFunction(Target->Device);
  if (!Device)
    internalError(Node, "the device function of '" + sourceText(Node) + "' was not emitted");
  CallInst *Call = B.CreateCall(Device, CallArgs);
  TypedValue Result(Target->Result);
  std::vector<llvm::Type *> Parts = partTypes(Target->Result);
  if (Parts.size() == 1)
    Result.Parts.push_back(Call);
  else
    for (unsigned I = 0; I < Parts.size(); ++I)
      Result.Parts.push_back(B.CreateExtractValue(Call, I));
  return Result;
}

} // namespace tidal::frontend
