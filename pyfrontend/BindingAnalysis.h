// The binding analysis: the first pass over a function's AST, before any
// typing or IR. It finds the function's local names (every name it assigns,
// and its parameters) and checks, over the structured control flow, that
// each local read is assigned on at least one path to the read, and that
// 'break' and 'continue' sit inside a loop. Its errors carry the offending
// node's file:line:col. A local assigned on some paths only compiles, as in
// Numba (a loop with a known trip count, an if/elif chain that covers every
// case); it reads zero on the other paths, and such reads are listed
// (MaybeUnboundReads) for the emitters to check those of arrays.
#ifndef TIDAL_FRONTEND_BINDINGANALYSIS_H
#define TIDAL_FRONTEND_BINDINGANALYSIS_H

#include "CompileError.h"

#include <functional>
#include <set>
#include <string>
#include <vector>

typedef struct _object PyObject;

namespace tidal::frontend {

// What the analysis found: a value the typing pass and the emitters read.
struct Bindings {
  // Every local name: the parameters and each name the body assigns.
  // A name read in the function that is not here is a global, a closure
  // variable or a builtin.
  std::set<std::string> LocalNames;
  // The reads (Name nodes) of a local that some path to them assigns and
  // another does not: the emitters check those of arrays and records
  // (whose zero would be a null pointer) at run time.
  std::set<PyObject *> MaybeUnboundReads;
};

// Analyses the body (a list of statements) of a function with parameters
// ParamNames. Locate gives the source position of a node for errors.
// Throws CompileError (TypingError) for a local read that no path assigns
// before it, and for 'break' or 'continue' outside a loop. Statements
// and expressions that kernels do not support are left to the typing pass,
// which rejects them: the path analysis stops at the first one.
Bindings analyseBindings(PyObject *Body, const std::vector<std::string> &ParamNames,
                         const std::function<SourceLocation(PyObject *)> &Locate);

} // namespace tidal::frontend

#endif
