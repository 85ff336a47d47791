// Exceptions in kernels and device functions: `raise SomeError`,
// `raise SomeError("message", 3)` (constant arguments, as Numba allows) and,
// with debug=True, ZeroDivisionError for a division by zero.
//
// With debug=True a raise ends the thread through the marker
// tidal.assert.fail, whose message carries the exception: a readable line,
// then, each after a \x1f, the class's key, the repr of its arguments, and
// the function, file and line that raised it. The cpu
// target records the first failure of the launch and the extension raises
// that class with those arguments after the launch
// (python/tidal/cuda/_kernel_exceptions.py); on a GPU the raising thread
// writes its module's exception slot (llvm-plugin/LowerExceptions.cpp) and
// the host raises the same after the launch. Without debug, a raise in a kernel ends its
// thread quietly, as in Numba; in a device function (which cannot end its
// caller's thread) it fails the launch as in debug mode.
#include "FunctionCompiler.h"
#include "AstAccess.h"

#include "llvm/IR/Constants.h"

using namespace llvm;

namespace tidal::frontend {

namespace {

constexpr char Separator = '\x1f';

// The key the host finds the class by: tidal.cuda._kernel_exceptions
// remembers the class under it (classes local to a function too); "module:
// qualname" where that module cannot be imported (tidalc).
std::string classKey(PyObject *Class) {
  PyRef Module = PyRef::steal(PyImport_ImportModule("tidal.cuda._kernel_exceptions"));
  if (Module) {
    PyRef Key = PyRef::steal(PyObject_CallMethod(Module.get(), "key_of", "O", Class));
    if (Key && PyUnicode_Check(Key.get()))
      return Key.str();
  }
  PyErr_Clear();
  PyRef Owner = PyRef::borrow(Class).attrOrNull("__module__");
  PyRef Name = PyRef::borrow(Class).attrOrNull("__qualname__");
  return (Owner ? Owner.str() : "builtins") + ":" + (Name ? Name.str() : "Exception");
}

std::string reprOf(PyObject *Object) {
  PyRef Text = PyRef::check(PyObject_Repr(Object));
  return Text.str();
}

// A constant argument of a raised exception: a literal, or a negated one.
PyObject *constantArgument(FunctionCompiler &C, PyObject *Node) {
  PyObject *Literal = Node;
  bool Negate = false;
  if (nodeKind(Node) == "UnaryOp" && nodeKind(field(Node, "op").get()) == "USub") {
    Literal = field(Node, "operand").get();
    Negate = true;
  }
  if (nodeKind(Literal) != "Constant")
    C.unsupported(Node, "the arguments of an exception raised in a kernel must be constants "
                        "(literals), as in Numba: '" + C.sourceText(Node) + "' is not");
  PyRef Value = field(Literal, "value");
  if (!Negate)
    return Py_NewRef(Value.get());
  return PyRef::check(PyNumber_Negative(Value.get())).release();
}

} // namespace

FunctionCompiler::RaisedException FunctionCompiler::raisedException(PyObject *Node,
                                                                    bool Typing) {
  PyObject *ClassNode = Node;
  std::vector<PyObject *> ArgumentNodes;
  if (nodeKind(Node) == "Call") {
    ClassNode = field(Node, "func").get();
    ArgumentNodes = listItems(field(Node, "args").get());
    if (PyList_GET_SIZE(field(Node, "keywords").get()) > 0)
      unsupported(Node, "an exception raised in a kernel takes no keyword arguments");
  }
  // Emission reads the class typing found.
  TypedValue Callee = Typing ? typeExpression(ClassNode) : TypedValue(typeOf(ClassNode).T);
  PyObject *Object = Callee.T.isPyObject() ? static_cast<PyObject *>(Callee.T.Object) : nullptr;
  if (!Object || !PyExceptionClass_Check(Object))
    typingError(ClassNode, "a kernel can only raise an exception class, not '" +
                               sourceText(ClassNode) + "' (" + Callee.T.str() + ")");
  RaisedException Raised;
  Raised.Class = PyRef::borrow(Object);
  Raised.Arguments = PyRef::check(PyTuple_New(static_cast<Py_ssize_t>(ArgumentNodes.size())));
  for (size_t I = 0; I < ArgumentNodes.size(); ++I)
    PyTuple_SET_ITEM(Raised.Arguments.get(), static_cast<Py_ssize_t>(I),
                     constantArgument(*this, ArgumentNodes[I]));
  return Raised;
}

// The statement's exception; a bare raise and raise ... from ... are
// unsupported.
static PyRef raisedNode(FunctionCompiler &C, PyObject *Node) {
  PyRef Exception = field(Node, "exc");
  if (Exception.isNone())
    C.unsupported(Node, "a bare 'raise' (re-raising) is not supported in kernels: raise an "
                        "exception class");
  if (!field(Node, "cause").isNone())
    C.unsupported(Node, "'raise ... from ...' is not supported in kernels: raise the exception "
                        "alone");
  return Exception;
}

void FunctionCompiler::typeRaise(PyObject *Node) {
  raisedException(raisedNode(*this, Node).get(), /*Typing=*/true);
}

void FunctionCompiler::emitRaiseStatement(PyObject *Node) {
  RaisedException Raised = raisedException(raisedNode(*this, Node).get(), /*Typing=*/false);
  emitRaise(Raised.Class.get(), Raised.Arguments.get(), Node);
}

void FunctionCompiler::emitRaise(PyObject *Class, PyObject *Arguments, PyObject *Node) {
  if (!Options.Debug && !IsDevice) {
    B.CreateRetVoid(); // Numba ignores the exception: the thread ends
    startDeadBlock();
    return;
  }
  SourceLocation Where = locate(Node);
  std::string ClassName = PyRef::borrow(Class).attr("__name__").str();
  std::string Shown = PyTuple_GET_SIZE(Arguments) == 1
                          ? ClassName + "(" + reprOf(PyTuple_GET_ITEM(Arguments, 0)) + ")"
                          : ClassName + reprOf(Arguments);
  if (PyTuple_GET_SIZE(Arguments) == 0)
    Shown = ClassName;
  std::string Message = Shown + " raised in " + (IsDevice ? "device function '" : "kernel '") +
                        functionName() + "' at " + Where.File + ":" + std::to_string(Where.Line) +
                        Separator + classKey(Class) + Separator + reprOf(Arguments) + Separator +
                        functionName() + Separator + Where.File + Separator +
                        std::to_string(Where.Line);
  callMarker("assert.fail", B.getVoidTy(), {constantString(Message, "raise.message")});
  B.CreateUnreachable();
  startDeadBlock();
}

void FunctionCompiler::checkDivisor(Value *Divisor, PyObject *Node) {
  // As in Numba: debug mode only, and not with fastmath (whose division
  // gives inf or nan).
  if (!Options.Debug || (Options.FastMath && Divisor->getType()->isFloatingPointTy()))
    return;
  Value *IsZero = Divisor->getType()->isFloatingPointTy()
                      ? B.CreateFCmpOEQ(Divisor, ConstantFP::get(Divisor->getType(), 0.0))
                      : B.CreateICmpEQ(Divisor, ConstantInt::get(Divisor->getType(), 0));
  BasicBlock *Fail = BasicBlock::Create(Ctx, "division.by.zero", F);
  BasicBlock *Ok = BasicBlock::Create(Ctx, "division.ok", F);
  B.CreateCondBr(IsZero, Fail, Ok);
  B.SetInsertPoint(Fail);
  PyRef Arguments = PyRef::check(Py_BuildValue("(s)", "division by zero"));
  emitRaise(PyExc_ZeroDivisionError, Arguments.get(), Node);
  // emitRaise left a dead block: leave it, continue after the check.
  if (!B.GetInsertBlock()->getTerminator())
    B.CreateUnreachable();
  B.SetInsertPoint(Ok);
}

} // namespace tidal::frontend
