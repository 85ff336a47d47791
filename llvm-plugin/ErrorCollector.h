// ErrorCollector: while it lives, the DS_Error diagnostics of an
// LLVMContext are collected into a string instead of ending the process
// (the in-process pipelines of Pipelines.cpp and PipelineRunner.cpp).
#ifndef TIDAL_ERRORCOLLECTOR_H
#define TIDAL_ERRORCOLLECTOR_H

#include "llvm/IR/DiagnosticHandler.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>

namespace tidal {

// For the lifetime of the object, DS_Error diagnostics of `Context` are
// appended to `Errors` (one per line) instead of ending the process; the
// warnings that a loop transformation asked for in the loop's metadata was
// not done ("loop not unrolled", DK_OptimizationFailure) are dropped: every
// such request in a kernel is tidal's own (a thread loop's unroll count,
// vectorize.enable on a thread nest), a hint, nothing its user wrote or can
// act on; the others go to the handler that was there before, which is put
// back after.
class ErrorCollector {
  llvm::LLVMContext &Context;
  std::string &Errors;
  std::unique_ptr<llvm::DiagnosticHandler> Previous;
  bool Failed = false;

  // The handler installed in Context (owned by it); forwards to us.
  struct Forwarder : llvm::DiagnosticHandler {
    ErrorCollector &Collector;
    explicit Forwarder(ErrorCollector &Collector) : Collector(Collector) {}
    bool handleDiagnostics(const llvm::DiagnosticInfo &Info) override {
      return Collector.handle(Info);
    }
  };

  bool handle(const llvm::DiagnosticInfo &Info) {
    if (Info.getKind() == llvm::DK_OptimizationFailure && Info.getSeverity() != llvm::DS_Error)
      return true;
    if (Info.getSeverity() != llvm::DS_Error)
      return Previous && Previous->handleDiagnostics(Info);
    Failed = true;
    llvm::raw_string_ostream Stream(Errors);
    if (!Errors.empty())
      Stream << "\n";
    llvm::DiagnosticPrinterRawOStream Printer(Stream);
    Info.print(Printer);
    return true;
  }

public:
  ErrorCollector(llvm::LLVMContext &Context, std::string &Errors)
      : Context(Context), Errors(Errors),
        Previous(Context.getDiagnosticHandler()) {
    Context.setDiagnosticHandler(std::make_unique<Forwarder>(*this));
  }
  ~ErrorCollector() { Context.setDiagnosticHandler(std::move(Previous)); }
  bool failed() const { return Failed; }
};

} // namespace tidal

#endif
