// Local variables that hold one compile-time integer: a name the function
// binds exactly once (one assignment, no augmented assignment, not a loop
// target, not a parameter) to a constant integer, bool or tuple of
// integers reads as that constant everywhere, as Numba's constant
// inference gives it: `N = 100; cuda.shared.array(N, int32)`.
#include "FunctionCompiler.h"
#include "AstAccess.h"

#include <map>

namespace tidal::frontend {

std::set<std::string> namesBoundOnce(PyObject *Body, const std::vector<std::string> &ParamNames) {
  std::map<std::string, int> Stores = nameStoreCounts(Body);
  std::set<std::string> Once;
  for (const auto &[Name, Count] : Stores)
    if (Count == 1 &&
        std::find(ParamNames.begin(), ParamNames.end(), Name) == ParamNames.end())
      Once.insert(Name);
  return Once;
}

void FunctionCompiler::noteConstantLocal(const std::string &Name, const TypedValue &V) {
  if (!LocalsBoundOnce.count(Name))
    return;
  ParameterConstant Constant;
  bool Integral = V.T.isScalar() && (isInteger(V.T.Dtype) || V.T.isBool());
  if (Integral)
    Constant.Int = V.ConstInt;
  else if (V.T.isTuple() && V.TupleConstInts.size() == V.T.Elements.size())
    Constant.Tuple = V.TupleConstInts;
  if (Constant.known())
    ConstantParameters[Name] = Constant;
  else
    ConstantParameters.erase(Name);
}

} // namespace tidal::frontend
