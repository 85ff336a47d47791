// build/lib/TidalTestPassPlugin.so: an LLVM 19 pass plugin that the tests
// load into tidal's in-process pipelines (test_research_pipeline.py), as a
// researcher's own plugin would be loaded:
//   test-break-module   removes the terminator of every defined function's
//                       entry block: the verifier must catch it, named
//   test-mark-module    adds !tidal.test.marks !{!"<text>"} (a visible effect)
//   test-mark-function  a function pass (a name only inside function(...)):
//                       gives each defined function the attribute "test-marked"
// and, at the optimizer-last extension point (inside default<O3>, as under
// clang -fpass-plugin), the same mark with "optimizer-last".
//   opt-19 -load-pass-plugin=build/lib/TidalTestPassPlugin.so -passes=test-mark-module in.ll
#include "llvm/IR/Constants.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"

using namespace llvm;

namespace {

void mark(Module &M, StringRef Text) {
  M.getOrInsertNamedMetadata("tidal.test.marks")
      ->addOperand(MDNode::get(M.getContext(), MDString::get(M.getContext(), Text)));
}

struct MarkModule : PassInfoMixin<MarkModule> {
  std::string Text;
  explicit MarkModule(std::string Text) : Text(std::move(Text)) {}
  PreservedAnalyses run(Module &M, ModuleAnalysisManager &) {
    mark(M, Text);
    return PreservedAnalyses::all();
  }
  static bool isRequired() { return true; }
};

struct MarkFunction : PassInfoMixin<MarkFunction> {
  PreservedAnalyses run(Function &F, FunctionAnalysisManager &) {
    F.addFnAttr("test-marked");
    return PreservedAnalyses::all();
  }
  static bool isRequired() { return true; }
};

struct BreakModule : PassInfoMixin<BreakModule> {
  PreservedAnalyses run(Module &M, ModuleAnalysisManager &) {
    for (Function &F : M)
      if (!F.isDeclaration())
        F.getEntryBlock().getTerminator()->eraseFromParent();
    return PreservedAnalyses::none();
  }
  static bool isRequired() { return true; }
};

} // namespace

extern "C" LLVM_ATTRIBUTE_VISIBILITY_DEFAULT PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "TidalTestPassPlugin", "1", [](PassBuilder &PB) {
            PB.registerPipelineParsingCallback(
                [](StringRef Name, ModulePassManager &MPM, ArrayRef<PassBuilder::PipelineElement>) {
                  if (Name == "test-mark-module") {
                    MPM.addPass(MarkModule("test-mark-module"));
                    return true;
                  }
                  if (Name == "test-break-module") {
                    MPM.addPass(BreakModule());
                    return true;
                  }
                  return false;
                });
            PB.registerPipelineParsingCallback(
                [](StringRef Name, FunctionPassManager &FPM, ArrayRef<PassBuilder::PipelineElement>) {
                  if (Name != "test-mark-function")
                    return false;
                  FPM.addPass(MarkFunction());
                  return true;
                });
            PB.registerOptimizerLastEPCallback([](ModulePassManager &MPM, OptimizationLevel) {
              MPM.addPass(MarkModule("optimizer-last"));
            });
          }};
}
