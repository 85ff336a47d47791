// The table of the in-process pipelines' points (tidal/Pipeline.def), the
// extra passes given for them (TIDAL_PASSES), the pass plugins loaded into
// them (TIDAL_PASS_PLUGINS, tidal.compiler.load_pass_plugin) and LLVM's own
// switches (TIDAL_LLVM_ARGS). Pipelines.cpp builds and runs the pipelines.

#include "tidal/Pipeline.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Support/Allocator.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/StringSaver.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <mutex>

using namespace llvm;

namespace tidal {

namespace {

constexpr PipelinePointInfo Points[] = {
#define TIDAL_POINT(Id, Name, Stage, Description) {Name, Stage, Description},
#include "tidal/Pipeline.def"
};
static_assert(std::size(Points) == PipelinePointCount);

Error pipelineError(const Twine &Message) {
  return createStringError(inconvertibleErrorCode(), Message.str().c_str());
}

// The plugins loaded into this process's pipelines, and their paths.
struct LoadedPlugins {
  std::mutex Mutex;
  std::vector<std::string> Paths;
  std::vector<PassPlugin> Plugins;
};
LoadedPlugins &loaded() {
  static LoadedPlugins Loaded;
  return Loaded;
}

} // namespace

const PipelinePointInfo &pipelinePointInfo(PipelinePoint Point) {
  return Points[static_cast<unsigned>(Point)];
}

std::optional<PipelinePoint> parsePipelinePoint(StringRef Name) {
  for (unsigned I = 0; I < PipelinePointCount; ++I)
    if (Name == Points[I].Name)
      return static_cast<PipelinePoint>(I);
  return std::nullopt;
}

std::optional<PipelinePoint> parsePipelineStage(StringRef Stage) {
  for (unsigned I = 0; I < PipelinePointCount; ++I)
    if (Stage == Points[I].Stage)
      return static_cast<PipelinePoint>(I);
  return std::nullopt;
}

std::string pipelinePointNames() {
  std::string Names;
  for (const PipelinePointInfo &Point : Points)
    Names += (Names.empty() ? "" : ", ") + std::string(Point.Name);
  return Names;
}

bool ExtraPasses::empty() const {
  for (const std::string &T : Text)
    if (!T.empty())
      return false;
  return true;
}

void ExtraPasses::append(PipelinePoint Point, StringRef Pipeline) {
  std::string &At = Text[static_cast<unsigned>(Point)];
  if (Pipeline.trim().empty())
    return;
  At += (At.empty() ? "" : ",") + Pipeline.trim().str();
}

std::string ExtraPasses::str() const {
  std::string Out;
  for (unsigned I = 0; I < PipelinePointCount; ++I)
    if (!Text[I].empty())
      Out += (Out.empty() ? "" : ";") + std::string(Points[I].Name) + "=" + Text[I];
  return Out;
}

Expected<ExtraPasses> parseExtraPasses(StringRef Spec) {
  // 1. Cut Spec into entries at the separators of depth 0.
  SmallVector<StringRef, 4> Entries;
  int Depth = 0;
  size_t Start = 0;
  for (size_t I = 0; I < Spec.size(); ++I) {
    char C = Spec[I];
    if (C == '<' || C == '(')
      ++Depth;
    else if ((C == '>' || C == ')') && Depth > 0)
      --Depth;
    if (Depth != 0 || (C != ';' && C != ','))
      continue;
    StringRef Rest = Spec.substr(I + 1).ltrim();
    size_t Equals = Rest.find('=');
    bool NextIsPoint =
        Equals != StringRef::npos && parsePipelinePoint(Rest.substr(0, Equals).trim());
    if (C == ';' || NextIsPoint) {
      Entries.push_back(Spec.slice(Start, I));
      Start = I + 1;
    }
  }
  Entries.push_back(Spec.substr(Start));
  // 2. Each entry is point=text.
  ExtraPasses Passes;
  for (StringRef Entry : Entries) {
    if (Entry.trim().empty())
      continue;
    auto [Name, Text] = Entry.split('=');
    std::optional<PipelinePoint> Point = parsePipelinePoint(Name.trim());
    if (!Point || !Entry.contains('='))
      return pipelineError("'" + Entry.trim() +
                           "' is not point=passes: the points are " + pipelinePointNames());
    if (Text.trim().empty())
      return pipelineError("no passes given for " + Name.trim());
    Passes.append(*Point, Text);
  }
  return Passes;
}

const ExtraPasses &processExtraPasses() {
  static const ExtraPasses Passes = [] {
    const char *Spec = std::getenv("TIDAL_PASSES");
    if (!Spec)
      return ExtraPasses();
    Expected<ExtraPasses> Parsed = parseExtraPasses(Spec);
    if (!Parsed) {
      consumeError(Parsed.takeError()); // prepareProcessPipelines reports it
      return ExtraPasses();
    }
    return *Parsed;
  }();
  return Passes;
}

Error loadPassPlugin(StringRef Path) {
  LoadedPlugins &L = loaded();
  std::lock_guard<std::mutex> Lock(L.Mutex);
  for (const std::string &Loaded : L.Paths)
    if (Loaded == Path)
      return Error::success();
  Expected<PassPlugin> Plugin = PassPlugin::Load(Path.str());
  if (!Plugin)
    return pipelineError("cannot load pass plugin '" + Path + "': " +
                         toString(Plugin.takeError()));
  L.Paths.push_back(Path.str());
  L.Plugins.push_back(*Plugin);
  return Error::success();
}

std::vector<std::string> loadedPassPlugins() {
  LoadedPlugins &L = loaded();
  std::lock_guard<std::mutex> Lock(L.Mutex);
  return L.Paths;
}

void registerLoadedPassPlugins(PassBuilder &PB) {
  LoadedPlugins &L = loaded();
  std::lock_guard<std::mutex> Lock(L.Mutex);
  for (PassPlugin &Plugin : L.Plugins)
    Plugin.registerPassBuilderCallbacks(PB);
}

Error prepareProcessPipelines() {
  static std::once_flag Once;
  static std::string Failure;
  std::call_once(Once, [] {
    auto Fail = [](const Twine &Message) {
      Failure += (Failure.empty() ? "" : "\n") + Message.str();
    };
    if (const char *Spec = std::getenv("TIDAL_PASSES")) {
      Expected<ExtraPasses> Parsed = parseExtraPasses(Spec);
      if (!Parsed)
        Fail("TIDAL_PASSES: " + toString(Parsed.takeError()));
    }
    // 1. Plugins first: their options exist only once they are loaded.
    if (const char *List = std::getenv("TIDAL_PASS_PLUGINS")) {
      SmallVector<StringRef, 4> Paths;
      StringRef(List).split(Paths, ':', -1, /*KeepEmpty=*/false);
      for (StringRef Path : Paths)
        if (Error E = loadPassPlugin(Path))
          Fail("TIDAL_PASS_PLUGINS: " + toString(std::move(E)));
    }
    // 2. The outer-loop vectoriser (VPlan-native path) on, before
    // TIDAL_LLVM_ARGS, which may turn it off: it takes only the loops that
    // ask for it explicitly, which tidal-vectorise-thread-nests marks in
    // block functions (LowerHostThreadNests.cpp). Its option has no
    // occurrence counted, so -enable-vplan-native-path=false still parses.
    if (auto *NativePath = static_cast<cl::opt<bool> *>(
            cl::getRegisteredOptions().lookup("enable-vplan-native-path")))
      NativePath->setValue(true);
    // 3. LLVM's switches, once per process: libLLVM is shared by every copy
    // of this library (the extension's, tidalc's, a plugin's), so the mark
    // is an option in libLLVM's own registry.
    const char *Args = std::getenv("TIDAL_LLVM_ARGS");
    if (!Args || !*Args)
      return;
    constexpr const char *Mark = "tidal-llvm-args-parsed";
    if (cl::getRegisteredOptions().count(Mark))
      return;
    new cl::opt<bool>(StringRef(Mark), cl::Hidden,
                      cl::desc("Set once tidal has parsed TIDAL_LLVM_ARGS in this process"));
    BumpPtrAllocator Allocator;
    StringSaver Saver(Allocator);
    SmallVector<const char *, 8> Argv = {"TIDAL_LLVM_ARGS"};
    cl::TokenizeGNUCommandLine(Args, Saver, Argv);
    std::string Message;
    raw_string_ostream Stream(Message);
    if (!cl::ParseCommandLineOptions(static_cast<int>(Argv.size()), Argv.data(),
                                     "tidal's in-process pipelines", &Stream))
      Fail(StringRef(Stream.str()).trim());
  });
  if (!Failure.empty())
    return pipelineError(Failure);
  return Error::success();
}

} // namespace tidal
