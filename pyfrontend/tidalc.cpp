// tidalc: compiles one kernel of a Python file ahead of time, by embedding
// CPython and running the same frontend and pipelines as the package.
//
//   tidalc FILE.py --kernel NAME --sig 'void(float32, float32[::1])'
//          --emit=markers|llvm|ptx [--arch sm_XX] [--target cuda|cpu] [-o FILE]
//   tidalc --print-pipeline [--target cuda|cpu] [--arch sm_XX] [FILE.py --kernel NAME]
//          the exact pipeline text the target runs in process (opt -passes=)
//   tidalc --list-intrinsics   (the generated python/tidal/_intrinsic_table.py)
#include "CompileError.h"
#include "Compiler.h"
#include "Frontend.h"
#include "IntrinsicTable.h"
#include "PyRef.h"
#include "Types.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <unistd.h>

using namespace tidal::frontend;

namespace {

const char *Usage =
    "usage: tidalc FILE.py --kernel NAME --sig SIGNATURE --emit=markers|llvm|ptx\n"
    "              [--arch sm_XX] [--target cuda|cpu] [-o OUTPUT]\n"
    "  markers  the frontend's IR, with tidal.* markers (target-neutral)\n"
    "  llvm     after the target's lowering and optimisation (tidal-nvptx or tidal-host)\n"
    "  ptx      PTX for --arch (default sm_75) from the NVPTX backend\n"
    "       tidalc --print-pipeline [--target cuda|cpu] [--arch sm_XX] [FILE.py --kernel NAME]\n"
    "  the exact pipeline text the target runs in process, with TIDAL_PASSES and the\n"
    "  kernel's passes=, for opt-19 -load-pass-plugin=TidalPasses.so -passes='<text>'\n";

struct Options {
  std::string File, Kernel, Signature, Emit = "ptx", Target = "cuda", Output;
  unsigned SM = DefaultSM;
  bool PrintPipeline = false;
};

[[noreturn]] void usageError(const std::string &Message) {
  std::cerr << "tidalc: error: " << Message << "\n" << Usage;
  std::exit(2);
}

Options parseOptions(int Argc, char **Argv) {
  Options O;
  auto Value = [&](int &I, const std::string &Arg, const std::string &Flag) -> std::string {
    if (Arg.rfind(Flag + "=", 0) == 0)
      return Arg.substr(Flag.size() + 1);
    if (I + 1 >= Argc)
      usageError(Flag + " needs a value");
    return Argv[++I];
  };
  auto Is = [](const std::string &Arg, const std::string &Flag) {
    return Arg == Flag || Arg.rfind(Flag + "=", 0) == 0;
  };
  for (int I = 1; I < Argc; ++I) {
    std::string Arg = Argv[I];
    if (Arg == "-h" || Arg == "--help") {
      std::cout << Usage;
      std::exit(0);
    } else if (Arg == "--print-pipeline") {
      O.PrintPipeline = true;
    } else if (Is(Arg, "--kernel")) {
      O.Kernel = Value(I, Arg, "--kernel");
    } else if (Is(Arg, "--sig")) {
      O.Signature = Value(I, Arg, "--sig");
    } else if (Is(Arg, "--emit")) {
      O.Emit = Value(I, Arg, "--emit");
    } else if (Is(Arg, "--target")) {
      O.Target = Value(I, Arg, "--target");
    } else if (Is(Arg, "--arch")) {
      std::string Arch = Value(I, Arg, "--arch");
      if (Arch.rfind("sm_", 0) != 0 || Arch.size() < 5 ||
          Arch.find_first_not_of("0123456789", 3) != std::string::npos)
        usageError("--arch must look like sm_75, got '" + Arch + "'");
      O.SM = static_cast<unsigned>(std::stoul(Arch.substr(3)));
      if (O.SM < 75 || O.SM > 90)
        usageError("--arch must be between sm_75 and sm_90 (LLVM 19 and CUDA 13's ptxas), got '" +
                   Arch + "'");
    } else if (Arg == "-o") {
      O.Output = Value(I, Arg, "-o");
    } else if (!Arg.empty() && Arg[0] == '-') {
      usageError("unknown option '" + Arg + "'");
    } else if (O.File.empty()) {
      O.File = Arg;
    } else {
      usageError("more than one input file");
    }
  }
  if (O.Target != "cuda" && O.Target != "cpu")
    usageError("--target must be cuda or cpu, not '" + O.Target + "'");
  if (O.PrintPipeline) {
    if (!O.File.empty() && O.Kernel.empty())
      usageError("--print-pipeline with a file needs --kernel NAME");
    return O;
  }
  if (O.File.empty())
    usageError("no input file");
  if (O.Kernel.empty())
    usageError("--kernel NAME is required");
  if (O.Signature.empty())
    usageError("--sig SIGNATURE is required");
  if (O.Emit != "markers" && O.Emit != "llvm" && O.Emit != "ptx")
    usageError("--emit must be markers, llvm or ptx, not '" + O.Emit + "'");
  if (O.Target == "cpu" && O.Emit == "ptx")
    usageError("--emit=ptx needs --target cuda");
  return O;
}

// build/bin/tidalc -> build/python, where the tidal package is.
std::string packageDirectory() {
  char Path[4096];
  ssize_t N = readlink("/proc/self/exe", Path, sizeof(Path) - 1);
  if (N <= 0)
    return "";
  std::string Exe(Path, static_cast<size_t>(N));
  std::string Bin = Exe.substr(0, Exe.rfind('/'));
  return Bin.substr(0, Bin.rfind('/')) + "/python";
}

// The extra passes of a tidal dispatcher (@cuda.jit(passes={...})), in
// TIDAL_PASSES' syntax, as its _tidal_options(target) gives them.
tidal::ExtraPasses passesOf(PyObject *Dispatcher, const std::string &Target) {
  PyRef Options = PyRef::check(
      PyObject_CallMethod(Dispatcher, "_tidal_options", "s", Target.c_str()));
  PyObject *Spec = PyDict_GetItemString(Options.get(), "passes");
  if (!Spec)
    return {};
  llvm::Expected<tidal::ExtraPasses> Passes = tidal::parseExtraPasses(PyRef::borrow(Spec).str());
  if (!Passes)
    throw std::invalid_argument("passes: " + llvm::toString(Passes.takeError()));
  return *Passes;
}

// The jit options of a tidal dispatcher (@cuda.jit(lineinfo=True, ...)).
FrontendOptions optionsOf(PyObject *Dispatcher) {
  FrontendOptions Out;
  PyRef Options = PyRef::borrow(Dispatcher).attrOrNull("options");
  if (!Options || !PyDict_Check(Options.get()))
    return Out;
  auto Flag = [&](const char *Name) {
    PyObject *V = PyDict_GetItemString(Options.get(), Name);
    return V && PyObject_IsTrue(V) == 1;
  };
  auto Number = [&](PyObject *V) -> unsigned {
    return V && PyLong_Check(V) ? static_cast<unsigned>(PyLong_AsUnsignedLong(V)) : 0;
  };
  Out.Debug = Flag("debug");
  Out.LineInfo = Flag("lineinfo");
  Out.FastMath = Flag("fastmath");
  Out.MaxRegisters = Number(PyDict_GetItemString(Options.get(), "max_registers"));
  if (PyObject *Bounds = PyDict_GetItemString(Options.get(), "launch_bounds")) {
    if (PyTuple_Check(Bounds)) {
      Out.MaxThreadsPerBlock = Number(PyTuple_Size(Bounds) > 0 ? PyTuple_GetItem(Bounds, 0) : nullptr);
      Out.MinBlocksPerSM = Number(PyTuple_Size(Bounds) > 1 ? PyTuple_GetItem(Bounds, 1) : nullptr);
    } else {
      Out.MaxThreadsPerBlock = Number(Bounds);
    }
  }
  PyErr_Clear();
  return Out;
}

// Runs FILE (not as __main__) and returns the Python function named Kernel:
// a tidal dispatcher's py_func, or a plain function; and its jit options.
PyRef loadKernel(const Options &O, FrontendOptions &JitOptions, tidal::ExtraPasses &Passes) {
  PyRef Sys = importModule("sys");
  PyRef Path = Sys.attr("path");
  std::string Dir = O.File.find('/') == std::string::npos ? "." : O.File.substr(0, O.File.rfind('/'));
  for (const std::string &Entry : {packageDirectory(), Dir}) {
    PyRef S = PyRef::check(PyUnicode_FromString(Entry.c_str()));
    if (PyList_Insert(Path.get(), 0, S.get()) < 0)
      throw PythonErrorSet();
  }
  PyRef Runpy = importModule("runpy");
  PyRef RunPath = Runpy.attr("run_path");
  PyRef Args = PyRef::check(Py_BuildValue("(s)", O.File.c_str()));
  PyRef Kwargs = PyRef::check(Py_BuildValue("{ss}", "run_name", "__tidal_aot__"));
  PyRef Globals = PyRef::check(PyObject_Call(RunPath.get(), Args.get(), Kwargs.get()));
  PyObject *Found = PyDict_GetItemString(Globals.get(), O.Kernel.c_str());
  if (!Found)
    throw std::runtime_error(O.File + " defines no '" + O.Kernel + "'");
  PyRef Function = PyRef::borrow(Found);
  JitOptions = optionsOf(Found);
  if (PyObject_HasAttrString(Found, "_tidal_options"))
    Passes = passesOf(Found, O.Target);
  if (PyRef Inner = Function.attrOrNull("py_func"))
    Function = Inner;
  if (!PyFunction_Check(Function.get()))
    throw std::runtime_error("'" + O.Kernel + "' in " + O.File + " is a '" +
                             typeName(Function.get()) + "', not a kernel function");
  return Function;
}

// --print-pipeline: the text of O.Target's pipeline, with the passes of
// O.Kernel when a file is given.
std::string printPipeline(const Options &O) {
  tidal::ExtraPasses Passes;
  if (!O.File.empty()) {
    FrontendOptions JitOptions;
    loadKernel(O, JitOptions, Passes);
  }
  return pipelineTextFor(O.Target == "cuda", O.SM, &Passes) + "\n";
}

std::string compile(const Options &O) {
  Signature Sig = parseSignature(O.Signature);
  if (Sig.HasReturn && !Sig.Return.isNone())
    throw std::invalid_argument("a kernel's signature must return void, not " + Sig.Return.str());
  FrontendOptions JitOptions;
  tidal::ExtraPasses Passes;
  PyRef Function = loadKernel(O, JitOptions, Passes);
  KernelModule KM = emitKernel(Function.get(), Sig.Params, JitOptions);
  if (O.Emit == "markers")
    return moduleText(*KM.Module);
  if (O.Target == "cpu") {
    lowerForHost(*KM.Module, &Passes);
    return moduleText(*KM.Module);
  }
  lowerForNVPTX(*KM.Module, O.SM, nullptr, &Passes);
  if (O.Emit == "llvm")
    return moduleText(*KM.Module);
  return emitPTX(*KM.Module, O.SM);
}

} // namespace

int main(int Argc, char **Argv) {
  // tidalc --list-intrinsics: the Python module of tidal.cuda's intrinsic
  // names (python/tidal/_intrinsic_table.py), from the frontend's table.
  // tidalc --list-intrinsics OUTPUT writes it to OUTPUT.
  if ((Argc == 2 || Argc == 3) && std::string(Argv[1]) == "--list-intrinsics") {
    if (Argc == 2) {
      writePythonIntrinsicTable(std::cout);
      return std::cout ? 0 : 1;
    }
    std::ofstream Out(Argv[2]);
    writePythonIntrinsicTable(Out);
    if (!Out) {
      std::cerr << "tidalc: error: cannot write '" << Argv[2] << "'\n";
      return 1;
    }
    return 0;
  }
  Options O = parseOptions(Argc, Argv);
  if (!O.File.empty() && access(O.File.c_str(), R_OK) != 0) {
    std::cerr << "tidalc: error: cannot read '" << O.File << "': " << std::strerror(errno) << "\n";
    return 1;
  }
  PyConfig Config;
  PyConfig_InitPythonConfig(&Config);
  Config.parse_argv = 0;
  Config.install_signal_handlers = 0;
  PyStatus Status = Py_InitializeFromConfig(&Config);
  PyConfig_Clear(&Config);
  if (PyStatus_Exception(Status)) {
    std::cerr << "tidalc: error: cannot start Python: "
              << (Status.err_msg ? Status.err_msg : "unknown error") << "\n";
    return 1;
  }
  int Exit = 0;
  std::string Result;
  try {
    Result = O.PrintPipeline ? printPipeline(O) : compile(O);
  } catch (const CompileError &E) {
    std::cerr << E.Kind << ": " << E.what() << "\n";
    Exit = 1;
  } catch (const PythonErrorSet &) {
    PyErr_Print();
    Exit = 1;
  } catch (const std::exception &E) {
    std::cerr << "tidalc: error: " << E.what() << "\n";
    Exit = 1;
  }
  if (Exit == 0) {
    if (O.Output.empty() || O.Output == "-") {
      std::cout << Result;
    } else {
      std::ofstream Out(O.Output, std::ios::binary);
      Out << Result;
      if (!Out) {
        std::cerr << "tidalc: error: cannot write '" << O.Output << "'\n";
        Exit = 1;
      }
    }
  }
  if (Py_FinalizeEx() < 0 && Exit == 0)
    Exit = 1;
  return Exit;
}
