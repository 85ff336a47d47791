// The C++ half of the disk cache (docs/cache.md). An entry is a dict of
// str -> bytes fields; the Python half (tidal.cuda.caching.KernelCache) adds
// the key (source, options, target, host or sm, tidal's build), the checksum
// and the file. Kinds of entry: "cpu" (a specialisation and its object
// code), "cuda" (a specialisation's marker IR), "ptx<sm>" (its PTX).
#include "DispatcherCache.h"

#include "Errors.h"
#include "ModuleParts.h"

#include <cstdio>
#include <stdexcept>

namespace tidal::binding {

using namespace tidal::frontend;

namespace {

using Entry = std::vector<std::pair<std::string, std::string>>;

bool hasCache(const DispatcherState &D) { return D.Cache && !D.Cache.isNone(); }

std::string joinLines(const std::vector<std::string> &Items) {
  std::string Out;
  for (const std::string &Item : Items)
    Out += Item + "\n";
  return Out;
}

std::vector<std::string> splitLines(const std::string &Text) {
  std::vector<std::string> Out;
  size_t Start = 0;
  for (size_t End; (End = Text.find('\n', Start)) != std::string::npos; Start = End + 1)
    Out.push_back(Text.substr(Start, End - Start));
  return Out;
}

// Block conditions as "<block name> <dimension> <extent> <parameter>" lines.
std::string conditionsText(const std::vector<runtime::CpuBlockCondition> &Conditions) {
  std::string Out;
  for (const runtime::CpuBlockCondition &C : Conditions)
    Out += C.BlockName + " " + std::to_string(C.Dimension) + " " + std::to_string(C.Extent) +
           " " + std::to_string(C.Parameter) + "\n";
  return Out;
}

std::vector<runtime::CpuBlockCondition> conditionsFromText(const std::string &Text) {
  std::vector<runtime::CpuBlockCondition> Out;
  for (const std::string &Line : splitLines(Text)) {
    runtime::CpuBlockCondition C;
    char Name[256];
    unsigned long long Extent;
    if (std::sscanf(Line.c_str(), "%255s %u %llu %d", Name, &C.Dimension, &Extent,
                    &C.Parameter) != 4)
      throw std::invalid_argument("malformed block condition '" + Line + "'");
    C.BlockName = Name;
    C.Extent = Extent;
    Out.push_back(std::move(C));
  }
  return Out;
}

// The argument types as the key needs them: their mangled names, exact
// where the signature's text is not (two record layouts of the same field
// names and types print alike).
std::string exactTypes(const std::vector<Type> &Types) {
  std::string S;
  for (const Type &T : Types)
    S += T.mangle() + ";";
  return S;
}

// cache.load(kind, signature, exact): the entry's fields, or nullopt on a miss.
std::optional<Entry> loadEntry(const DispatcherState &D, const std::string &Kind,
                               const std::vector<Type> &Types) {
  PyRef Fields = PyRef::check(PyObject_CallMethod(D.Cache.get(), "load", "sss", Kind.c_str(),
                                                  signatureText(Types).c_str(),
                                                  exactTypes(Types).c_str()));
  if (Fields.isNone())
    return std::nullopt;
  if (!PyDict_Check(Fields.get()))
    throw std::runtime_error("internal error: the kernel cache's load() returned no dict");
  Entry Out;
  PyObject *Key, *Value;
  Py_ssize_t Position = 0;
  while (PyDict_Next(Fields.get(), &Position, &Key, &Value)) {
    char *Bytes;
    Py_ssize_t Size;
    if (!PyUnicode_Check(Key) || PyBytes_AsStringAndSize(Value, &Bytes, &Size) < 0)
      throw PythonErrorSet();
    Out.emplace_back(PyUnicode_AsUTF8(Key), std::string(Bytes, static_cast<size_t>(Size)));
  }
  return Out;
}

const std::string &field(const Entry &E, const std::string &Name) {
  for (const auto &[Key, Value] : E)
    if (Key == Name)
      return Value;
  throw std::invalid_argument("the entry has no field '" + Name + "'");
}

// A field entries written by earlier versions may lack: empty then.
std::string optionalField(const Entry &E, const std::string &Name) {
  for (const auto &[Key, Value] : E)
    if (Key == Name)
      return Value;
  return "";
}

// An entry that passed the checksum but does not load: counted as a miss
// and removed by the Python half, which then lets the compile write a new one.
void rejectEntry(const DispatcherState &D, const std::string &Kind,
                 const std::vector<Type> &Types, const std::string &Why) {
  PyRef Result = PyRef::check(PyObject_CallMethod(D.Cache.get(), "reject", "ssss", Kind.c_str(),
                                                  signatureText(Types).c_str(), Why.c_str(),
                                                  exactTypes(Types).c_str()));
}

void saveEntry(const DispatcherState &D, const std::string &Kind, const std::vector<Type> &Types,
               const Entry &E) {
  PyRef Fields = PyRef::check(PyDict_New());
  for (const auto &[Key, Value] : E) {
    PyRef Bytes = PyRef::check(
        PyBytes_FromStringAndSize(Value.data(), static_cast<Py_ssize_t>(Value.size())));
    if (PyDict_SetItemString(Fields.get(), Key.c_str(), Bytes.get()) < 0)
      throw PythonErrorSet();
  }
  PyRef Result = PyRef::check(PyObject_CallMethod(D.Cache.get(), "save", "ssOs", Kind.c_str(),
                                                  signatureText(Types).c_str(), Fields.get(),
                                                  exactTypes(Types).c_str()));
}

} // namespace

std::unique_ptr<Specialization> loadCachedSpecialization(const DispatcherState &D,
                                                         const std::vector<Type> &Types) {
  if (!hasCache(D))
    return nullptr;
  const std::string Kind = targetName(D.Target);
  std::optional<Entry> E = loadEntry(D, Kind, Types);
  if (!E)
    return nullptr;
  try {
    auto Spec = std::make_unique<Specialization>();
    Spec->ArgTypes = Types;
    Spec->KernelName = field(*E, "kernel_name");
    Spec->MarkerIR = field(*E, "marker_ir");
    Spec->Cooperative = usesGridGroup(Spec->MarkerIR);
    Spec->TypesText = field(*E, "types_text");
    for (const Type &T : Types)
      Spec->ParamCount += flattenedParameterSizes(T).size();
    if (D.Target == TargetKind::Cpu) {
      runtime::CpuObject Object;
      Object.Object = field(*E, "object");
      Object.BlockNames = splitLines(field(*E, "block_names"));
      Object.AloneNames = splitLines(field(*E, "alone_names"));
      Object.PrivateAtomics = splitLines(field(*E, "private_atomics"));
      Object.Watched = field(*E, "watched") == "1";
      Object.DataLayout = optionalField(*E, "data_layout");
      Object.Conditions = conditionsFromText(optionalField(*E, "block_conditions"));
      Spec->Cpu = runtime::CpuModule::load(Object, "cached." + Spec->KernelName);
      Spec->Block = Spec->Cpu->blockFunction(Spec->KernelName);
      Spec->CpuStaticSharedBytes = Spec->Cpu->staticSharedBytes(Spec->KernelName);
      Spec->FitConditions = Spec->Cpu->blockConditions(Spec->KernelName);
    }
    return Spec;
  } catch (const std::exception &Error) {
    rejectEntry(D, Kind, Types, Error.what());
    return nullptr;
  }
}

void saveSpecialization(const DispatcherState &D, const Specialization &S,
                        const runtime::CpuObject *Object) {
  if (!hasCache(D) || S.LinksForeignCode)
    return;
  Entry E = {{"kernel_name", S.KernelName},
             {"marker_ir", S.MarkerIR},
             {"types_text", S.TypesText}};
  if (Object) {
    E.emplace_back("object", Object->Object);
    E.emplace_back("block_names", joinLines(Object->BlockNames));
    E.emplace_back("alone_names", joinLines(Object->AloneNames));
    E.emplace_back("private_atomics", joinLines(Object->PrivateAtomics));
    E.emplace_back("watched", Object->Watched ? "1" : "0");
    E.emplace_back("data_layout", Object->DataLayout);
    // The fitted block functions are not cached: a launch that can use one
    // builds it from the marker IR, as after compile().
    E.emplace_back("block_conditions", conditionsText(Object->Conditions));
  }
  saveEntry(D, targetName(D.Target), S.ArgTypes, E);
}

std::optional<std::string> loadCachedPTX(const DispatcherState &D, const Specialization &S,
                                         unsigned SM) {
  if (!hasCache(D))
    return std::nullopt;
  const std::string Kind = "ptx" + std::to_string(SM);
  std::optional<Entry> E = loadEntry(D, Kind, S.ArgTypes);
  if (!E)
    return std::nullopt;
  try {
    return field(*E, "ptx");
  } catch (const std::exception &Error) {
    rejectEntry(D, Kind, S.ArgTypes, Error.what());
    return std::nullopt;
  }
}

void savePTX(const DispatcherState &D, const Specialization &S, unsigned SM,
             const std::string &PTX) {
  if (hasCache(D) && !S.LinksForeignCode)
    saveEntry(D, "ptx" + std::to_string(SM), S.ArgTypes, {{"ptx", PTX}});
}

namespace {

// host_description(): "<triple> <cpu> <features>", what the cpu target
// compiles for (a part of the key of the cpu target's entries).
PyObject *module_host_description(PyObject *, PyObject *) {
  return translateErrors([&]() -> PyObject * {
    return PyUnicode_FromString(runtime::hostDescription().c_str());
  });
}

PyMethodDef CacheMethods[] = {
    {"host_description", module_host_description, METH_NOARGS,
     "host_description(): the triple, CPU and features the cpu target compiles for."},
    {nullptr, nullptr, 0, nullptr}};

} // namespace

int addCacheFunctions(PyObject *Module) { return PyModule_AddFunctions(Module, CacheMethods); }

} // namespace tidal::binding
