// tidal.compiler's half in C++: the table of the pipelines' points and
// stages (tidal/Pipeline.def), pass plugins, and the pipeline text each
// target runs (docs/research.md).
#include "Compiler.h"
#include "Errors.h"
#include "ModuleParts.h"
#include "PyRef.h"

#include "tidal/Pipeline.h"

#include <Python.h>

namespace tidal::binding {

using namespace tidal::frontend;

// The kernel's passes as the Python dispatcher gives them: a str in
// TIDAL_PASSES' syntax ("" for none). Throws std::invalid_argument.
ExtraPasses extraPassesFromText(const std::string &Spec) {
  llvm::Expected<ExtraPasses> Passes = parseExtraPasses(Spec);
  if (!Passes)
    throw std::invalid_argument("passes: " + llvm::toString(Passes.takeError()));
  return *Passes;
}

namespace {

// pipeline_points(): ((point, stage, description), ...) in pipeline order.
PyObject *module_pipeline_points(PyObject *, PyObject *) {
  PyRef Points = PyRef::check(PyTuple_New(PipelinePointCount));
  for (unsigned I = 0; I < PipelinePointCount; ++I) {
    const PipelinePointInfo &Info = pipelinePointInfo(static_cast<PipelinePoint>(I));
    PyTuple_SET_ITEM(Points.get(), I,
                     PyRef::check(Py_BuildValue("(sss)", Info.Name, Info.Stage, Info.Description))
                         .release());
  }
  return Points.release();
}

// load_pass_plugin(path): OSError naming the plugin when it cannot be loaded.
PyObject *module_load_pass_plugin(PyObject *, PyObject *Path) {
  PyObject *Bytes = nullptr;
  if (!PyUnicode_FSConverter(Path, &Bytes))
    return nullptr;
  PyRef Owned = PyRef::steal(Bytes);
  if (llvm::Error E = loadPassPlugin(PyBytes_AS_STRING(Bytes))) {
    PyErr_SetString(PyExc_OSError, llvm::toString(std::move(E)).c_str());
    return nullptr;
  }
  Py_RETURN_NONE;
}

// loaded_pass_plugins(): the paths, TIDAL_PASS_PLUGINS' first (loaded now
// if they were not yet: errors in the environment's settings are raised).
PyObject *module_loaded_pass_plugins(PyObject *, PyObject *) {
  if (llvm::Error E = prepareProcessPipelines()) {
    PyErr_SetString(PyExc_RuntimeError, llvm::toString(std::move(E)).c_str());
    return nullptr;
  }
  std::vector<std::string> Paths = loadedPassPlugins();
  PyRef List = PyRef::check(PyTuple_New(static_cast<Py_ssize_t>(Paths.size())));
  for (size_t I = 0; I < Paths.size(); ++I)
    PyTuple_SET_ITEM(List.get(), I, PyRef::check(PyUnicode_DecodeFSDefault(Paths[I].c_str())).release());
  return List.release();
}

// process_passes(): TIDAL_PASSES as tidal read it, in canonical form.
PyObject *module_process_passes(PyObject *, PyObject *) {
  return PyUnicode_FromString(processExtraPasses().str().c_str());
}

// check_passes(passes): None if `passes` is in TIDAL_PASSES' syntax
// ('point=text;...'), else ValueError saying what is wrong, for cuda.jit to
// raise at the decorator (the pass names are checked when the kernel's
// pipeline is built: the plugins that give them may load later).
PyObject *module_check_passes(PyObject *, PyObject *Args) {
  const char *Spec;
  if (!PyArg_ParseTuple(Args, "s", &Spec))
    return nullptr;
  llvm::Expected<ExtraPasses> Passes = parseExtraPasses(Spec);
  if (!Passes) {
    PyErr_SetString(PyExc_ValueError, llvm::toString(Passes.takeError()).c_str());
    return nullptr;
  }
  Py_RETURN_NONE;
}

// pipeline_text(target, sm, passes): the exact text of target "cuda" (for
// sm_<sm>) or "cpu", with TIDAL_PASSES' passes and `passes` (TIDAL_PASSES'
// syntax) at their points.
PyObject *module_pipeline_text(PyObject *, PyObject *Args) {
  const char *Target, *Spec = "";
  unsigned SM = DefaultSM;
  if (!PyArg_ParseTuple(Args, "s|Is", &Target, &SM, &Spec))
    return nullptr;
  return translateErrors([&]() -> PyObject * {
    std::string Name = Target;
    if (Name != "cuda" && Name != "cpu")
      throw std::invalid_argument("target must be 'cuda' or 'cpu', not '" + Name + "'");
    ExtraPasses Kernel = extraPassesFromText(Spec);
    return PyUnicode_FromString(pipelineTextFor(Name == "cuda", SM, &Kernel).c_str());
  });
}

PyMethodDef PipelineMethods[] = {
    {"pipeline_points", module_pipeline_points, METH_NOARGS,
     "pipeline_points(): ((point, stage, description), ...) in pipeline order."},
    {"load_pass_plugin", module_load_pass_plugin, METH_O,
     "load_pass_plugin(path): loads an LLVM pass plugin into every later pipeline."},
    {"loaded_pass_plugins", module_loaded_pass_plugins, METH_NOARGS,
     "loaded_pass_plugins(): the paths of the loaded pass plugins."},
    {"process_passes", module_process_passes, METH_NOARGS,
     "process_passes(): TIDAL_PASSES as read, 'point=text;...'."},
    {"check_passes", module_check_passes, METH_VARARGS,
     "check_passes(passes): ValueError unless passes is 'point=text;...'."},
    {"pipeline_text", module_pipeline_text, METH_VARARGS,
     "pipeline_text(target, sm=75, passes=''): the pipeline text target runs."},
    {nullptr, nullptr, 0, nullptr}};

} // namespace

int addPipelineFunctions(PyObject *Module) {
  return PyModule_AddFunctions(Module, PipelineMethods);
}

} // namespace tidal::binding
