// The binding analysis (BindingAnalysis.h): local names, reads that no path
// assigns before, and loop-only statements.
#include "BindingAnalysis.h"

#include "PyRef.h"

#include <map>
#include <optional>

namespace tidal::frontend {

namespace {

// The children of an AST node that are AST nodes themselves, in field order
// (lists are flattened), as ast.iter_child_nodes gives them.
std::vector<PyRef> childNodes(PyObject *Node, PyObject *AstNodeType) {
  std::vector<PyRef> Children;
  PyRef Fields = PyRef::borrow(Node).attrOrNull("_fields");
  if (!Fields || !PyTuple_Check(Fields.get()))
    return Children;
  for (Py_ssize_t I = 0; I < PyTuple_GET_SIZE(Fields.get()); ++I) {
    PyRef Value = PyRef::steal(PyObject_GetAttr(Node, PyTuple_GET_ITEM(Fields.get(), I)));
    if (!Value) {
      PyErr_Clear();
      continue;
    }
    if (PyList_Check(Value.get())) {
      for (Py_ssize_t J = 0; J < PyList_GET_SIZE(Value.get()); ++J) {
        PyObject *Item = PyList_GET_ITEM(Value.get(), J);
        if (PyObject_TypeCheck(Item, reinterpret_cast<PyTypeObject *>(AstNodeType)))
          Children.push_back(PyRef::borrow(Item));
      }
    } else if (PyObject_TypeCheck(Value.get(), reinterpret_cast<PyTypeObject *>(AstNodeType))) {
      Children.push_back(Value);
    }
  }
  return Children;
}

std::vector<PyObject *> statementsOf(PyObject *List) {
  std::vector<PyObject *> Items;
  if (List && PyList_Check(List))
    for (Py_ssize_t I = 0; I < PyList_GET_SIZE(List); ++I)
      Items.push_back(PyList_GET_ITEM(List, I));
  return Items;
}

// The locals assigned on at least one path to a point of the function
// (Assigned), and on every path (Definite), one flag per local. An
// unreachable point (after return, break, continue) has every local
// assigned, so that reads in dead code are not reported, and joins ignore
// it.
struct AssignedSet {
  std::vector<bool> Assigned, Definite;
  bool Unreachable = false;

  static AssignedSet unreachable(size_t Count) {
    AssignedSet S;
    S.Assigned.assign(Count, true);
    S.Definite.assign(Count, true);
    S.Unreachable = true;
    return S;
  }
  void assign(size_t Local) { Assigned[Local] = Definite[Local] = true; }
  // The locals assigned on either path, and on both.
  void join(const AssignedSet &Other) {
    if (Other.Unreachable)
      return;
    if (Unreachable) {
      *this = Other;
      return;
    }
    for (size_t I = 0; I < Assigned.size(); ++I) {
      Assigned[I] = Assigned[I] || Other.Assigned[I];
      Definite[I] = Definite[I] && Other.Definite[I];
    }
  }
};

class BindingChecker {
public:
  BindingChecker(const std::vector<std::string> &ParamNames,
                 const std::function<SourceLocation(PyObject *)> &Locate)
      : ParamNames(ParamNames), Locate(Locate) {
    PyRef Ast = importModule("ast");
    AstNodeType = Ast.attr("AST");
    StoreContext = Ast.attr("Store");
  }

  Bindings run(PyObject *Body) {
    // 1. The local names: the parameters and every assigned name.
    Result.LocalNames.insert(ParamNames.begin(), ParamNames.end());
    for (PyObject *Statement : statementsOf(Body))
      collectAssignedNames(Statement);
    for (const std::string &Name : Result.LocalNames)
      LocalIndex.emplace(Name, LocalIndex.size());
    // 2. Each local read is assigned on some path before the read.
    AssignedSet Entry;
    Entry.Assigned.assign(LocalIndex.size(), false);
    Entry.Definite.assign(LocalIndex.size(), false);
    for (const std::string &Name : ParamNames)
      Entry.assign(LocalIndex.at(Name));
    statements(Body, Entry);
    return std::move(Result);
  }

private:
  // The break and continue states of the loop being analysed.
  struct Loop {
    AssignedSet AtBreak, AtContinue;
  };

  void collectAssignedNames(PyObject *Node) {
    // A def binds its name; its body and a lambda's are scopes of their own.
    if (typeName(Node) == "FunctionDef") {
      Result.LocalNames.insert(PyRef::borrow(Node).attr("name").str());
      return;
    }
    if (typeName(Node) == "Lambda")
      return;
    if (typeName(Node) == "Name") {
      PyRef Context = PyRef::borrow(Node).attr("ctx");
      if (PyObject_IsInstance(Context.get(), StoreContext.get()) == 1)
        Result.LocalNames.insert(PyRef::borrow(Node).attr("id").str());
      return;
    }
    for (const PyRef &Child : childNodes(Node, AstNodeType.get()))
      collectAssignedNames(Child.get());
  }

  [[noreturn]] void typingError(PyObject *Node, const std::string &Message) {
    throw CompileError("TypingError", Message, Locate(Node));
  }

  // Checks the reads of locals in an expression against State. Returns
  // false on an expression kind that binds names of its own or that
  // kernels do not support: the analysis stops there.
  bool reads(PyObject *Node, const AssignedSet &State) {
    std::string Kind = typeName(Node);
    if (Kind == "Name") {
      std::string Name = PyRef::borrow(Node).attr("id").str();
      auto It = LocalIndex.find(Name);
      if (It == LocalIndex.end() || Quiet)
        return true;
      if (!State.Assigned[It->second])
        typingError(Node, "local variable '" + Name +
                              "' is read before it is assigned (no path to here assigns it)");
      if (!State.Definite[It->second])
        Result.MaybeUnboundReads.insert(Node);
      return true;
    }
    if (Kind == "Lambda") // its body reads when it is called
      return true;
    if (Kind == "ListComp" || Kind == "SetComp" || Kind == "DictComp" ||
        Kind == "GeneratorExp" || Kind == "NamedExpr" || Kind == "Yield" ||
        Kind == "YieldFrom" || Kind == "Await")
      return false;
    for (const PyRef &Child : childNodes(Node, AstNodeType.get()))
      if (!reads(Child.get(), State))
        return false;
    return true;
  }

  // The reads in an assignment target (a[i] = v reads a and i), then the
  // names it binds.
  bool assigns(PyObject *Target, AssignedSet &State) {
    std::string Kind = typeName(Target);
    if (Kind == "Name") {
      State.assign(LocalIndex.at(PyRef::borrow(Target).attr("id").str()));
      return true;
    }
    if (Kind == "Tuple" || Kind == "List") {
      for (PyObject *Element : statementsOf(PyRef::borrow(Target).attr("elts").get()))
        if (!assigns(Element, State))
          return false;
      return true;
    }
    if (Kind == "Subscript" || Kind == "Attribute")
      return reads(Target, State);
    return false;
  }

  // Returns false when the analysis stopped.
  bool statements(PyObject *List, AssignedSet &State) {
    for (PyObject *Statement : statementsOf(List))
      if (!statement(Statement, State))
        return false;
    return true;
  }

  bool statement(PyObject *Node, AssignedSet &State) {
    PyRef Statement = PyRef::borrow(Node);
    std::string Kind = typeName(Node);
    if (Kind == "Assign") {
      if (!reads(Statement.attr("value").get(), State))
        return false;
      for (PyObject *Target : statementsOf(Statement.attr("targets").get()))
        if (!assigns(Target, State))
          return false;
      return true;
    }
    if (Kind == "AugAssign") {
      // x += v reads x first.
      PyRef Target = Statement.attr("target");
      return reads(Statement.attr("value").get(), State) && reads(Target.get(), State) &&
             assigns(Target.get(), State);
    }
    if (Kind == "Expr")
      return reads(Statement.attr("value").get(), State);
    if (Kind == "Pass")
      return true;
    if (Kind == "FunctionDef") { // its body reads when it is called
      State.assign(LocalIndex.at(Statement.attr("name").str()));
      return true;
    }
    if (Kind == "Assert") {
      PyRef Message = Statement.attr("msg");
      return reads(Statement.attr("test").get(), State) &&
             (Message.isNone() || reads(Message.get(), State));
    }
    if (Kind == "Return") {
      PyRef Value = Statement.attr("value");
      if (!Value.isNone() && !reads(Value.get(), State))
        return false;
      State = AssignedSet::unreachable(LocalIndex.size());
      return true;
    }
    if (Kind == "Raise") { // ends the path, as a return does
      PyRef Exception = Statement.attr("exc");
      if (!Exception.isNone() && !reads(Exception.get(), State))
        return false;
      State = AssignedSet::unreachable(LocalIndex.size());
      return true;
    }
    if (Kind == "Break" || Kind == "Continue") {
      if (Loops.empty())
        typingError(Node, "'" + std::string(Kind == "Break" ? "break" : "continue") +
                              "' outside a loop");
      (Kind == "Break" ? Loops.back().AtBreak : Loops.back().AtContinue).join(State);
      State = AssignedSet::unreachable(LocalIndex.size());
      return true;
    }
    if (Kind == "If") {
      if (!reads(Statement.attr("test").get(), State))
        return false;
      AssignedSet Otherwise = State;
      if (!statements(Statement.attr("body").get(), State) ||
          !statements(Statement.attr("orelse").get(), Otherwise))
        return false;
      State.join(Otherwise);
      return true;
    }
    if (Kind == "While" || Kind == "For")
      return loop(Statement, Kind == "For", State);
    // Any other statement is one kernels do not support: the typing pass
    // says so.
    return false;
  }

  // A loop's body runs zero or more times, and each run starts with what the
  // one before assigned (the back edge): the body is analysed once quietly
  // to find that, then again from the entry and back-edge states together.
  // After the loop: the entry or the end of a run (then its else), or a
  // break; after 'while True', which ends only by 'break', the breaks alone.
  bool loop(const PyRef &Statement, bool IsFor, AssignedSet &State) {
    bool EndsOnlyByBreak = false;
    if (IsFor) {
      if (!reads(Statement.attr("iter").get(), State))
        return false;
    } else {
      PyRef Test = Statement.attr("test");
      if (!reads(Test.get(), State))
        return false;
      if (typeName(Test.get()) == "Constant")
        EndsOnlyByBreak = PyObject_IsTrue(Test.attr("value").get()) == 1;
    }
    AssignedSet Start = State;
    std::optional<Loop> Exits;
    for (bool Final : {false, true}) {
      bool WasQuiet = Quiet;
      Quiet = WasQuiet || !Final;
      AssignedSet Body = Start;
      Loops.push_back({AssignedSet::unreachable(LocalIndex.size()),
                       AssignedSet::unreachable(LocalIndex.size())});
      bool Analysed = (!IsFor || assigns(Statement.attr("target").get(), Body)) &&
                      statements(Statement.attr("body").get(), Body);
      Exits = Loops.back();
      Loops.pop_back();
      Quiet = WasQuiet;
      if (!Analysed)
        return false;
      Body.join(Exits->AtContinue);
      Start.join(Body); // the next run starts with the back edge's state
    }
    if (EndsOnlyByBreak) { // its 'else' never runs
      State = Exits->AtBreak;
      return true;
    }
    // 'for ... else', 'while ... else': the else runs when the loop ends
    // without a break, from the state the loop ends in.
    State.join(Start);
    if (!statements(Statement.attr("orelse").get(), State))
      return false;
    State.join(Exits->AtBreak);
    return true;
  }

  const std::vector<std::string> &ParamNames;
  const std::function<SourceLocation(PyObject *)> &Locate;
  PyRef AstNodeType, StoreContext;
  Bindings Result;
  std::map<std::string, size_t> LocalIndex;
  std::vector<Loop> Loops;
  // While true, reads are checked without errors (a loop's first pass).
  bool Quiet = false;
};

} // namespace

Bindings analyseBindings(PyObject *Body, const std::vector<std::string> &ParamNames,
                         const std::function<SourceLocation(PyObject *)> &Locate) {
  return BindingChecker(ParamNames, Locate).run(Body);
}

} // namespace tidal::frontend
