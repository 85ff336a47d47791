// Complex numbers beyond + - * / (EmitValues.cpp has those): a ** b and
// pow(a, b) where either is complex, through the device function
// tidal.cuda._cmath.power (CPython's algorithm); a.real and a.imag of an
// array, views of its components (so that a.real[i] = x and
// cuda.atomic.add(a.imag, i, x) work); and starred call arguments, f(*t)
// of a tuple t, which Numba's cmath tests write as complex(*cmath.polar(z)).
// Each has its typing half (type*, which decides and raises every error)
// and its emitting half (emit*, which reads what typing decided).
#include "FunctionCompiler.h"
#include "AstAccess.h"

#include "llvm/IR/Constants.h"

using namespace llvm;

namespace tidal::frontend {

namespace {
const char *const CmathLibrary = "tidal.cuda._cmath";
frontend::Type complex128Type() { return frontend::Type::scalar(Scalar::Complex128); }
} // namespace

void FunctionCompiler::typeComplexPower(PyObject *Node) {
  libraryFunction(CmathLibrary, "power", {complex128Type(), complex128Type()}, Node);
}

TypedValue FunctionCompiler::emitComplexPower(const TypedValue &L, const TypedValue &R,
                                              Scalar Common, PyObject *Node) {
  frontend::Type Wide = complex128Type();
  DeviceFunctionCache::Entry Power = libraryFunction(CmathLibrary, "power", {Wide, Wide}, Node);
  TypedValue Args[] = {convert(L, Wide, Node), convert(R, Wide, Node)};
  return convert(callCompiled(Power, Args), frontend::Type::scalar(Common), Node);
}

TypedValue FunctionCompiler::typeArrayComponent(const TypedValue &Array, const std::string &Attr,
                                                PyObject *Node) {
  const frontend::Type &T = Array.T;
  if (T.hasRecordElements())
    typingError(Node, "unknown attribute '" + Attr + "' of " + T.str());
  if (!isComplex(T.Dtype)) {
    // A real array is its own real part; NumPy's a.imag of it is a new
    // array of zeros, which a kernel cannot allocate.
    if (Attr == "real")
      return Array;
    unsupported(Node, "'imag' of " + T.str() + " would be a new array of zeros, which kernels "
                      "cannot allocate: its elements' imaginary parts are 0");
  }
  // A view of one component: same shape and byte strides, component dtype,
  // any layout.
  return TypedValue(frontend::Type::array(componentOf(T.Dtype), T.NDim, Layout::A, T.ReadOnly));
}

TypedValue FunctionCompiler::emitArrayComponent(const TypedValue &Array, const std::string &Attr,
                                                PyObject *Node) {
  if (!isComplex(Array.T.Dtype))
    return Array; // a.real of a real array
  TypedValue View(typeOf(Node).T);
  View.Parts = Array.Parts;
  // The imaginary parts start one component further.
  if (Attr == "imag")
    View.Parts[0] = B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), Array.Parts[0],
                                                 byteSize(componentOf(Array.T.Dtype)), "imag.addr");
  return View;
}

bool FunctionCompiler::typeStarredArgument(PyObject *Starred, std::vector<TypedValue> &Args,
                                           std::vector<PyObject *> &ArgNodes) {
  TypedValue Value = typeExpression(field(Starred, "value").get());
  if (Value.T.isUndefined())
    return false;
  if (!Value.T.isTuple())
    unsupported(Starred, "a starred argument must be a tuple (whose length is known when "
                         "compiling), not " + Value.T.str());
  for (TypedValue &Element : tupleElements(Value)) {
    Args.push_back(std::move(Element));
    ArgNodes.push_back(Starred);
  }
  return true;
}

void FunctionCompiler::emitStarredArgument(PyObject *Starred, std::vector<TypedValue> &Args,
                                           std::vector<PyObject *> &ArgNodes) {
  TypedValue Value = emitExpression(field(Starred, "value").get());
  for (TypedValue &Element : tupleElements(Value)) {
    Args.push_back(std::move(Element));
    ArgNodes.push_back(Starred);
  }
}

} // namespace tidal::frontend
