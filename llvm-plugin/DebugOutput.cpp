// -debug, -debug-only and -stats for a libLLVM built with NDEBUG
// (DebugOutput.h).
// libLLVM keeps DebugFlag and the current debug types in every build; only
// the options that set them exist just with assertions. They are registered
// here when libLLVM has none, so that `opt -load-pass-plugin=TidalPasses.so
// -debug-only=tidal-lower-host` works on Debian's opt-19 as on a Debug LLVM.

#include "DebugOutput.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ManagedStatic.h"
#include "llvm/Support/raw_ostream.h"
#include <memory>
#include <string>
#include <vector>

using namespace llvm;

#ifdef NDEBUG
// Debug.h declares these only without NDEBUG (and defines them as macros
// with it); libLLVM defines them in every build.
#undef isCurrentDebugType
#undef setCurrentDebugTypes
namespace llvm {
bool isCurrentDebugType(const char *Type);
void setCurrentDebugTypes(const char **Types, unsigned Count);
} // namespace llvm
#endif

namespace tidal {
namespace {

void setDebugTypes(const std::string &List) {
  SmallVector<StringRef, 4> Names;
  StringRef(List).split(Names, ',', -1, false);
  std::vector<std::string> Owned(Names.begin(), Names.end());
  std::vector<const char *> Types;
  for (const std::string &Name : Owned)
    Types.push_back(Name.c_str());
  DebugFlag = true;
  setCurrentDebugTypes(Types.data(), Types.size()); // copies the names
}

// Registered once per process (the plugin and the frontend's static copy
// may both be loaded), and never where libLLVM registered them itself.
struct DebugOptions {
  DebugOptions() {
    StringMap<cl::Option *> &Registered = cl::getRegisteredOptions();
    if (!Registered.count("debug"))
      new cl::opt<bool>("debug", cl::Hidden,
                        cl::desc("Print the debug output of the tidal passes"),
                        cl::callback([](const bool &On) { DebugFlag = On; }));
    if (!Registered.count("debug-only"))
      new cl::opt<std::string>(
          "debug-only", cl::Hidden, cl::value_desc("debug types"),
          cl::desc("Print the debug output of these passes only "
                   "(comma-separated DEBUG_TYPEs, e.g. tidal-lower-host)"),
          cl::callback([](const std::string &List) { setDebugTypes(List); }));
  }
};
DebugOptions Registration;

// Prints the statistics when llvm_shutdown destroys it: before libLLVM's
// own table of statistics (created earlier, by the first counter that
// counted), whose destruction under NDEBUG only says "Statistics are
// disabled".
struct StatisticsPrinter {
  ~StatisticsPrinter() {
#if !LLVM_ENABLE_STATS
    std::unique_ptr<raw_ostream> Out = CreateInfoOutputFile();
    PrintStatistics(*Out);
#endif
  }
};
ManagedStatic<StatisticsPrinter> Printer;

} // namespace

void printStatisticsAtShutdown() {
  if (AreStatisticsEnabled())
    (void)*Printer;
}

bool isDebugOutputEnabled(const char *Type) {
  return DebugFlag && isCurrentDebugType(Type);
}

} // namespace tidal
