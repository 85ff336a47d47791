// Typing of a function: the rounds that run until the variables' types
// settle, the dispatch over AST node kinds to the typing handlers
// (Type*.cpp), and the typing of local variables. Typing decides every
// type, raises every typing error and records what it decided in the type
// map (TypeMap.h); it writes no IR.
#include "FunctionCompiler.h"
#include "AstAccess.h"
#include "BindingAnalysis.h"

#include <algorithm>
#include <utility>

using namespace llvm;

namespace tidal::frontend {

// Friendly names of the constructs kernels reject, by AST node kind.
static const std::map<std::string, std::string> &unsupportedConstructs() {
  static const std::map<std::string, std::string> Names = {
      {"With", "'with' statements"},
      {"AsyncWith", "'async with' statements"},
      {"Try", "'try' statements"},
      {"TryStar", "'try' statements"},
      {"AsyncFunctionDef", "nested function definitions"},
      {"ClassDef", "class definitions"},
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

TypedValue FunctionCompiler::typeExpression(PyObject *Node) {
  std::string Kind = nodeKind(Node);
  bool Keep = std::exchange(KeepOptional, false); // the parent's word, not the children's
  if (const ExpressionRule *Rule = expressionRule(Kind)) {
    TypedValue Result = (this->*Rule->Type)(Node);
    // The handler may have recorded more about the node (operand types, a
    // frozen object, a subscript's kind): keep it.
    ExpressionType &Recorded = Typing.Expressions[Node];
    Recorded.T = Result.T;
    Recorded.ConstInt = Result.ConstInt;
    Recorded.TupleConstInts = Result.TupleConstInts;
    return typedUse(std::move(Result), Recorded, Keep);
  }
  auto Named = unsupportedConstructs().find(Kind);
  unsupported(Node, (Named != unsupportedConstructs().end() ? Named->second
                                                            : "'" + Kind + "' expressions") +
                        " are not supported in kernels");
}

void FunctionCompiler::typeStatement(PyObject *Node) {
  std::string Kind = nodeKind(Node);
  if (const StatementRule *Rule = statementRule(Kind))
    return (this->*Rule->Type)(Node);
  auto Named = unsupportedConstructs().find(Kind);
  unsupported(Node, (Named != unsupportedConstructs().end() ? Named->second
                                                            : "'" + Kind + "' statements") +
                        " are not supported in kernels");
}

void FunctionCompiler::typeBody(PyObject *List) {
  for (PyObject *S : listItems(List)) {
    typeStatement(S);
    if (endsPrunedPath(S)) // `if y is None: return x`: what follows is dead
      return;
  }
}

void FunctionCompiler::typeNothing(PyObject *) {}

// --- the rounds ---------------------------------------------------------------------

void FunctionCompiler::typeRounds(PyObject *Body) {
  // Before any typing: each group of a variable's assignments that some
  // read sees together is a variable of its own; then local names,
  // assignment before use, loop-only statements.
  splitVariableVersions();
  NameBindings = analyseBindings(Body, ParamNames,
                                 [this](PyObject *Node) { return locate(Node); });
  LocalsBoundOnce = namesBoundOnce(Body, ParamNames);
  // Variables' types only widen, so this ends.
  constexpr int MaxTypingRounds = 32;
  for (int Round = 0;; ++Round) {
    TypesChanged = false;
    FirstUntypedRead = FirstBareReturn = FirstUntypedSelfCall = nullptr;
    typeBody(Body);
    if (!TypesChanged)
      break;
    if (Round == MaxTypingRounds) {
      // A return type that grows with each call of itself (a tuple holding
      // its own result, Optional since its base case returns None).
      bool CallsItself = std::any_of(Typing.Calls.begin(), Typing.Calls.end(),
                                     [](const auto &Call) { return Call.second.SelfCall; });
      throw CompileError("TypingError",
                         CallsItself ? "Return type of recursive function does not converge: "
                                       "the type the device function returns grows with "
                                       "each call of itself"
                                     : "the types of the variables do not settle",
                         locate(CallsItself && LastReturnChange ? LastReturnChange : Tree.get()));
    }
  }
  // In the settled round, a call of itself without a type is one that no
  // return of a value ever types.
  if (FirstUntypedSelfCall)
    typingError(FirstUntypedSelfCall,
                "cannot type infer runaway recursion: device function '" +
                    identifierField(Tree.get(), "name") +
                    "' calls itself on every path that returns a value, so no return gives "
                    "its type (give it a base case that returns without calling itself)");
  // In the settled round, a read without a type is one no assignment reaches.
  // One read by a function defined here when it is defined (InnerFunctions.cpp).
  if (FirstUntypedRead && (nodeKind(FirstUntypedRead) == "FunctionDef" ||
                           nodeKind(FirstUntypedRead) == "Lambda"))
    typingError(FirstUntypedRead,
                "the function defined here reads '" + sourceName(FirstUntypedReadName) +
                    "', which is not assigned where the function is defined: kernels freeze "
                    "the functions and constants a closure reads at its definition (assign '" +
                    sourceName(FirstUntypedReadName) +
                    "' first; recursion through closures is not supported)");
  if (FirstUntypedRead)
    typingError(FirstUntypedRead,
                "local variable '" + sourceName(FirstUntypedReadName) + "' is used before it is assigned");
  for (const auto &[Name, Var] : Variables)
    Typing.Variables[Name] = Var.T;
}

// --- variables ---------------------------------------------------------------------

// As Numba's SSA versions (tidal/_variable_versions.py): renames the tree's
// names once per compiler (the renaming is idempotent across compilers of
// one parsed tree).
void FunctionCompiler::splitVariableVersions() {
  if (SharedReads)
    return;
  PyRef Params = PyRef::steal(PyList_New(0));
  for (const std::string &P : ParamNames)
    PyList_Append(Params.get(), PyRef::steal(PyUnicode_FromString(P.c_str())).get());
  PyRef Versions = importModule("tidal._variable_versions");
  SharedReads = PyRef::check(
      PyObject_CallMethod(Versions.get(), "split_variables", "OO", Tree.get(), Params.get()));
}

bool FunctionCompiler::holdsArray(const frontend::Type &T) {
  if (T.isArray())
    return true;
  if (T.isTuple())
    for (const frontend::Type &E : T.Elements)
      if (holdsArray(E))
        return true;
  return false;
}

void FunctionCompiler::typeStore(const std::string &Name, const TypedValue &V, PyObject *Node) {
  Variable &Var = Variables[Name];
  if (V.T.isUndefined())
    return;
  noteConstantLocal(Name, V);
  // A version of a variable (x.1) is x in the source.
  std::string Shown = sourceName(Name);
  if (V.T.isPyObject() && !Var.T.isUndefined() && Var.T != V.T)
    typingError(sharedRead(Name, Node),
                "variable '" + Shown + "' is bound to different compile-time objects");
  frontend::Type Unified;
  if (!unify(Var.T, V.T, Unified)) {
    PyObject *Read = sharedRead(Name, Node);
    std::string Where =
        Read == Node ? "" : " (assigned at line " + std::to_string(locate(Node).Line) + ")";
    typingError(Read, "variable '" + Shown + "' has type " + Var.T.str() +
                          " and cannot also hold a value of type " + V.T.str() + Where +
                          (Read == Node ? ": one variable holds both here"
                                        : ": this read may see either, and the two do not unify"));
  }
  if (Unified != Var.T) {
    Var.T = Unified;
    TypesChanged = true;
  }
}

std::string FunctionCompiler::sourceName(const std::string &Name) {
  return Name.substr(0, Name.find('.'));
}

PyObject *FunctionCompiler::sharedRead(const std::string &Name, PyObject *Otherwise) const {
  if (SharedReads)
    if (PyObject *Read = PyDict_GetItemString(SharedReads.get(), Name.c_str()))
      return Read;
  return Otherwise;
}

TypedValue FunctionCompiler::typeLoad(const std::string &Name, PyObject *Node) {
  Variable &Var = Variables[Name];
  if (Var.T.isUndefined()) {
    // Typed in a later round, or never (typeToFixedPoint says so).
    if (!FirstUntypedRead) {
      FirstUntypedRead = Node;
      FirstUntypedReadName = Name;
    }
    return TypedValue();
  }
  TypedValue V(Var.T);
  if (Var.T.isPyObject())
    return V;
  if (auto Constant = ConstantParameters.find(Name); Constant != ConstantParameters.end()) {
    V.ConstInt = Constant->second.Int;
    V.TupleConstInts = Constant->second.Tuple;
  }
  return V;
}

} // namespace tidal::frontend
