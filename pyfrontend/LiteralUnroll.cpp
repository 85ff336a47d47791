// `for v in literal_unroll(t)` (tidal.literal_unroll, Numba's and
// numba-cuda's): the body typed and emitted once per element of the tuple,
// so that v takes each element's own type. Typing a function that holds
// such a loop finds its tuple's length, then types from the start a tree in
// which the loop is unrolled (python/tidal/_literal_unroll.py says how, and
// why a copy of the tree); the unrolled tree is what is emitted. Outside a
// for loop, literal_unroll(t) is t, as in Python.
#include "FunctionCompiler.h"
#include "AstAccess.h"
#include "IntrinsicTable.h"

#include <algorithm>

namespace tidal::frontend {

bool isLiteralUnroll(PyObject *Callee) {
  if (intrinsicName(Callee) == "tidal.literal_unroll")
    return true;
  // Numba's (numba.literal_unroll) and numba-cuda's, told by where they live.
  PyRef Module = PyRef::borrow(Callee).attrOrNull("__module__");
  PyRef Name = PyRef::borrow(Callee).attrOrNull("__name__");
  if (!Module || !Name || !PyUnicode_Check(Module.get()) || !PyUnicode_Check(Name.get()))
    return false;
  std::string Where = Module.str();
  return Name.str() == "literal_unroll" &&
         (Where == "numba.misc.special" || Where == "numba.cuda.misc.special");
}

// The unrolling a typing round asks for: the loop's key and its tuple's length.
struct LiteralUnrollRequest {
  std::string Key;
  int64_t Length;
};

void FunctionCompiler::typeLiteralUnrollLoop(PyObject *Node) {
  PyRef Target = field(Node, "target"), Iter = field(Node, "iter"), Body = field(Node, "body");
  std::vector<PyObject *> Args = listItems(field(Iter.get(), "args").get());
  size_t Keywords = static_cast<size_t>(PyList_GET_SIZE(field(Iter.get(), "keywords").get()));
  if (Args.size() != 1 || Keywords != 0)
    unsupported(Iter.get(), "literal_unroll takes one argument, found " +
                                std::to_string(Args.size() + Keywords));
  std::optional<int64_t> Length;
  if (nodeKind(Args[0]) == "List") { // Numba's literal_unroll([1, 2.5]): a tuple
    Length = static_cast<int64_t>(PyList_GET_SIZE(field(Args[0], "elts").get()));
  } else {
    TypedValue Tuple = typeExpression(Args[0]);
    if (Tuple.T.isUndefined()) { // the body is typed once the tuple is
      typeAssignTo(Target.get(), TypedValue(), Iter.get());
      typeBody(Body.get());
      return;
    }
    if (!Tuple.T.isTuple()) {
      bool Parameter = nodeKind(Args[0]) == "Name" &&
                       std::find(ParamNames.begin(), ParamNames.end(),
                                 identifierField(Args[0], "id")) != ParamNames.end();
      unsupported(Args[0], Parameter ? "Invalid use of literal_unroll with a function argument, "
                                       "only tuples are supported as function arguments, found " +
                                           Tuple.T.str()
                                     : "Invalid use of literal_unroll: its argument must be a "
                                       "tuple (or a list of constants), found " +
                                           Tuple.T.str());
    }
    Length = static_cast<int64_t>(Tuple.T.Elements.size());
  }
  PyRef Unroll = importModule("tidal._literal_unroll");
  PyRef Key = PyRef::check(PyObject_CallMethod(Unroll.get(), "loop_key", "OO",
                                               (UnrollBase ? UnrollBase : Tree).get(), Node));
  throw LiteralUnrollRequest{Key.str(), *Length};
}

void FunctionCompiler::typeToFixedPoint(PyObject *Body) {
  // What the typing of a tree starts from: the parameters' types and constants.
  std::map<std::string, Variable> Parameters = Variables;
  std::map<std::string, ParameterConstant> Constants = ConstantParameters;
  for (;;) {
    try {
      typeRounds(Body);
      return;
    } catch (const LiteralUnrollRequest &Request) {
      // 1. Note the length, 2. unroll every loop known so far in a copy of
      // the parsed tree, 3. type that copy from the start.
      if (!UnrollBase) {
        UnrollBase = Tree;
        UnrollLengths = PyRef::check(PyDict_New());
      }
      PyRef Length = PyRef::check(PyLong_FromLongLong(Request.Length));
      PyDict_SetItemString(UnrollLengths.get(), Request.Key.c_str(), Length.get());
      PyRef Unroll = importModule("tidal._literal_unroll");
      Tree = PyRef::check(PyObject_CallMethod(Unroll.get(), "rebuild", "OO", UnrollBase.get(),
                                              UnrollLengths.get()));
      PyRef NewBody = field(Tree.get(), "body");
      Body = NewBody.get(); // the tree holds it
      Typing = TypeMap();
      Variables = Parameters;
      ConstantParameters = Constants;
      SharedReads = PyRef();
      ReturnType = frontend::Type::none();
      HasReturnType = false;
    }
  }
}

// Outside a for loop: the tuple itself.
TypedValue typeLiteralUnrollCall(IntrinsicCall &Call) {
  expectArgCount(Call, "literal_unroll", 1, 1);
  return Call.Args[0];
}

TypedValue emitLiteralUnrollCall(IntrinsicCall &Call, const Type &) { return Call.Args[0]; }

} // namespace tidal::frontend
