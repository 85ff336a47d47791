// TIDAL_PERF_MAP=1 (docs/cpu-speed.md, "Profiling"): an ObjectLinkingLayer
// plugin that appends "<address> <size> <name>" per function of each linked
// object to /tmp/perf-<pid>.map, the format perf's report reads for JIT code.
#include "CpuPerfMap.h"

#include "llvm/ExecutionEngine/JITLink/JITLink.h"
#include "llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h"
#include "llvm/Support/Error.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unistd.h>

namespace tidal::runtime {

namespace orc = llvm::orc;
namespace jitlink = llvm::jitlink;

bool perfMapRequested() {
  static const bool Requested = [] {
    const char *Value = std::getenv("TIDAL_PERF_MAP");
    return Value && *Value && std::strcmp(Value, "0") != 0;
  }();
  return Requested;
}

namespace {

class PerfMapPlugin : public orc::ObjectLinkingLayer::Plugin {
public:
  void modifyPassConfig(orc::MaterializationResponsibility &,
                        jitlink::LinkGraph &,
                        jitlink::PassConfiguration &Config) override {
    // After fixups every symbol has its final address in this process.
    Config.PostFixupPasses.push_back(
        [this](jitlink::LinkGraph &Graph) { return record(Graph); });
  }

  llvm::Error notifyFailed(orc::MaterializationResponsibility &) override {
    return llvm::Error::success();
  }
  llvm::Error notifyRemovingResources(orc::JITDylib &, orc::ResourceKey) override {
    return llvm::Error::success();
  }
  void notifyTransferringResources(orc::JITDylib &, orc::ResourceKey,
                                   orc::ResourceKey) override {}

private:
  llvm::Error record(jitlink::LinkGraph &Graph) {
    std::lock_guard<std::mutex> Lock(Mutex);
    if (!File) {
      const std::string Path = "/tmp/perf-" + std::to_string(::getpid()) + ".map";
      File = std::fopen(Path.c_str(), "a");
      if (!File)
        return llvm::Error::success(); // profiling aid only: never fail a link
    }
    for (jitlink::Symbol *Symbol : Graph.defined_symbols()) {
      if (!Symbol->hasName() || Symbol->getSize() == 0 || !Symbol->isCallable())
        continue;
      std::fprintf(File, "%llx %llx %s\n",
                   static_cast<unsigned long long>(Symbol->getAddress().getValue()),
                   static_cast<unsigned long long>(Symbol->getSize()),
                   Symbol->getName().str().c_str());
    }
    std::fflush(File);
    return llvm::Error::success();
  }

  std::mutex Mutex;
  std::FILE *File = nullptr; // kept open for the process's life
};

} // namespace

void addPerfMapPlugin(orc::LLJIT &Jit) {
  if (auto *Layer = llvm::dyn_cast<orc::ObjectLinkingLayer>(&Jit.getObjLinkingLayer()))
    Layer->addPlugin(std::make_unique<PerfMapPlugin>());
}

} // namespace tidal::runtime
