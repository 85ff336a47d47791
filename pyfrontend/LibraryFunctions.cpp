// Library functions: intrinsics whose work is written once in Python as
// tidal device functions (tidal.cuda._cmath: the cmath functions, complex
// **) and compiled by tidal like a user's device function, so that every
// target shares them. A rule asks for the function by module and name with
// the parameter types it converts the arguments to; its emitter calls it.
#include "FunctionCompiler.h"

#include "llvm/IR/Module.h"

#include <algorithm>

using namespace llvm;

namespace tidal::frontend {

DeviceFunctionCache::Entry FunctionCompiler::libraryFunction(const std::string &Module,
                                                             const std::string &Name,
                                                             const std::vector<Type> &Params,
                                                             PyObject *Node) {
  std::string Qualified = Module + "." + Name;
  PyRef Library = PyRef::steal(PyImport_ImportModule(Module.c_str()));
  PyRef Device = Library ? Library.attrOrNull(Name.c_str()) : PyRef();
  PyRef PyFunc = Device ? Device.attrOrNull("py_func") : PyRef();
  if (!PyFunc) {
    PyErr_Clear();
    throw CompileError("CompileError",
                       "internal error: this call needs the device function " + Qualified +
                           " of the tidal package, which could not be imported",
                       locate(Node));
  }
  // The module keeps the function alive; the cache keys on its identity.
  std::vector<ParameterConstant> Constants(Params.size());
  for (const DeviceFunctionCache::Entry &E : Devices.Compiled)
    if (E.Function == PyFunc.get() && E.ArgTypes == Params && E.Constants == Constants)
      return E;
  if (std::find(Devices.InProgress.begin(), Devices.InProgress.end(), PyFunc.get()) !=
      Devices.InProgress.end())
    throw CompileError("CompileError", "internal error: " + Qualified + " calls itself",
                       locate(Node));
  Devices.InProgress.push_back(PyFunc.get());
  // Typing types it (a rule asks while typing); emitDevices() emits it
  // before the function that calls it, whose emitter asks again and finds it
  // here with its LLVM function.
  DeviceFunctionCache::Entry Entry;
  try {
    auto Callee = std::make_shared<FunctionCompiler>(PyFunc.get(), M, Options, Devices);
    Entry = Callee->typeDevice(Params, nullptr, Constants);
    Entry.Compiler = std::move(Callee);
  } catch (const CompileError &E) {
    // A library function that does not compile is tidal's bug, not the
    // user's: say so, at the user's call.
    Devices.InProgress.pop_back();
    throw CompileError("CompileError",
                       "internal error compiling " + Qualified + ": " + E.Message + " (at " +
                           E.Where.File + ":" + std::to_string(E.Where.Line) + ")",
                       locate(Node));
  }
  Devices.InProgress.pop_back();
  Devices.Compiled.push_back(Entry);
  return Entry;
}

TypedValue FunctionCompiler::callCompiled(const DeviceFunctionCache::Entry &Callee,
                                          ArrayRef<TypedValue> Args) {
  // Its entry in the cache, emitted now if it is not yet (a device function
  // emitted before the library functions its typing asked for).
  llvm::Function *Function = Callee.F;
  for (size_t Index = 0; !Function && Index < Devices.Compiled.size(); ++Index) {
    const DeviceFunctionCache::Entry &E = Devices.Compiled[Index];
    if (E.Function == Callee.Function && E.ArgTypes == Callee.ArgTypes &&
        E.Constants == Callee.Constants)
      Function = emitDeviceFunction(Index);
  }
  if (!Function)
    throw CompileError("CompileError",
                       "internal error: a library function was called before it was emitted",
                       SourceLocation());
  std::vector<Value *> CallArgs;
  for (const TypedValue &Argument : Args)
    for (Value *P : Argument.Parts)
      CallArgs.push_back(P->getType()->isIntegerTy(1) ? B.CreateZExt(P, B.getInt8Ty()) : P);
  CallInst *Call = B.CreateCall(Function, CallArgs);
  TypedValue Result(Callee.Return);
  std::vector<llvm::Type *> Parts = partTypes(Callee.Return);
  if (Parts.size() == 1)
    Result.Parts.push_back(Call);
  else
    for (unsigned I = 0; I < Parts.size(); ++I)
      Result.Parts.push_back(B.CreateExtractValue(Call, I));
  return Result;
}

} // namespace tidal::frontend
