// tidal-fuzz-lower: the marker fuzzer's runner (utils/fuzz/fuzz_markers.py).
// It runs IR files through a tidal pipeline as
//   opt-19 -load-pass-plugin=build/lib/TidalPasses.so -passes=PIPELINE -disable-output FILE
// would, without starting a process per input: it reads one request a line
// from stdin, "ID<TAB>PIPELINE<TAB>PATH", forks a child per request (up to
// --jobs at once) and prints one result line per request, in the order they
// end: "ID<TAB>OUTCOME<TAB>DETAIL", OUTCOME one of
//   ok        the pipeline ran (opt's exit status 0)
//   rejected  a diagnostic: the IR did not parse or verify, or a pass reported
//             an error (opt's exit status 1); DETAIL is its first lines
//   crash     a signal, or report_fatal_error ("LLVM ERROR: ...")
//   llvm-parser-fatal  report_fatal_error inside LLVM's own IR parser, before
//             any tidal code runs (LLParser's debug-info upgrade verifies the
//             module and stops the process on, e.g., duplicated module flags):
//             LLVM's behaviour, not tidal's; counted, not failing the run
//   hang      no end within --timeout seconds (the child is killed)
// --self-test adds the pipelines tidal-fuzz-self-test-{abort,fatal-error,hang}
// (a pass that aborts, calls report_fatal_error, or never returns), with which
// utils/fuzz/test_fuzz_lower.py checks that each failure is caught.

#include "tidal/Passes.h"

#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Triple.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <map>
#include <poll.h>
#include <signal.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace llvm;

namespace {

// The child's exit status after report_fatal_error (opt would print
// "LLVM ERROR: ..." and exit with 1, which a diagnostic also gives).
constexpr int FatalErrorStatus = 70;
// The same while LLVM's parser reads the input (no tidal code has run yet).
constexpr int ParserFatalErrorStatus = 71;
// Bytes of a child's stderr kept for the result line.
constexpr size_t DetailLimit = 4096;

bool SelfTest = false;
// Set in the child while parseIRFile runs.
bool Parsing = false;

void fatalErrorHandler(void *, const char *Reason, bool) {
  std::string Text = std::string("LLVM ERROR: ") + Reason + "\n";
  ssize_t Ignored = write(2, Text.data(), Text.size());
  (void)Ignored;
  _exit(Parsing ? ParserFatalErrorStatus : FatalErrorStatus);
}

// The passes of --self-test: each fails in one of the ways the runner must catch.
struct SelfTestPass : PassInfoMixin<SelfTestPass> {
  std::string Kind;
  explicit SelfTestPass(std::string Kind) : Kind(std::move(Kind)) {}
  PreservedAnalyses run(Module &, ModuleAnalysisManager &) {
    if (Kind == "abort")
      abort();
    if (Kind == "fatal-error")
      report_fatal_error("tidal-fuzz-lower self-test");
    if (Kind == "hang")
      for (;;)
        pause();
    return PreservedAnalyses::all();
  }
};

void registerSelfTestPasses(PassBuilder &PB) {
  PB.registerPipelineParsingCallback(
      [](StringRef Name, ModulePassManager &MPM,
         ArrayRef<PassBuilder::PipelineElement>) {
        if (!Name.consume_front("tidal-fuzz-self-test-"))
          return false;
        if (Name != "abort" && Name != "fatal-error" && Name != "hang")
          return false;
        MPM.addPass(SelfTestPass(Name.str()));
        return true;
      });
}

// What opt-19 does for `-passes=Pipeline -disable-output Path` (its optMain
// and runPassPipeline, without the options fuzzing does not use). Runs in
// the child; returns its exit status.
int runOneInput(const std::string &Pipeline, const std::string &Path) {
  LLVMContext Context;
  SMDiagnostic Diagnostic;
  Parsing = true;
  std::unique_ptr<Module> M = parseIRFile(Path, Diagnostic, Context);
  Parsing = false;
  if (!M) {
    Diagnostic.print("tidal-fuzz-lower", errs());
    return 1;
  }
  if (verifyModule(*M, &errs())) {
    errs() << "tidal-fuzz-lower: " << Path << ": input module is broken!\n";
    return 1;
  }
  // A target machine where the module names a known target, as opt.
  Triple ModuleTriple(M->getTargetTriple());
  std::unique_ptr<TargetMachine> TM;
  if (ModuleTriple.getArch()) {
    std::string Error;
    if (const Target *T = TargetRegistry::lookupTarget(ModuleTriple.str(), Error))
      TM.reset(T->createTargetMachine(ModuleTriple.str(), "", "",
                                      TargetOptions(), std::nullopt));
  } else if (ModuleTriple.getArchName() != "unknown" &&
             ModuleTriple.getArchName() != "") {
    errs() << "tidal-fuzz-lower: unrecognized architecture '"
           << ModuleTriple.getArchName() << "' provided.\n";
    return 1;
  }

  LoopAnalysisManager LAM;
  FunctionAnalysisManager FAM;
  CGSCCAnalysisManager CGAM;
  ModuleAnalysisManager MAM;
  PassBuilder PB(TM.get());
  tidal::registerTidalPasses(PB);
  if (SelfTest)
    registerSelfTestPasses(PB);
  TargetLibraryInfoImpl TLII(ModuleTriple);
  FAM.registerPass([&] { return TargetLibraryAnalysis(TLII); });
  PB.registerModuleAnalyses(MAM);
  PB.registerCGSCCAnalyses(CGAM);
  PB.registerFunctionAnalyses(FAM);
  PB.registerLoopAnalyses(LAM);
  PB.crossRegisterProxies(LAM, FAM, CGAM, MAM);

  ModulePassManager MPM;
  if (Error E = PB.parsePassPipeline(MPM, Pipeline)) {
    errs() << "tidal-fuzz-lower: " << toString(std::move(E)) << "\n";
    return 1;
  }
  // opt verifies the result (a broken module is report_fatal_error there too).
  MPM.addPass(VerifierPass());
  MPM.run(*M, MAM);
  return 0;
}

struct Request {
  std::string Id, Pipeline, Path;
};

struct Child {
  Request Input;
  int Output = -1; // the read end of the child's stderr
  std::string Detail;
  std::chrono::steady_clock::time_point Deadline;
};

// One line of text: newlines and tabs made spaces, at most 600 characters.
std::string oneLine(const std::string &Text) {
  std::string Line;
  for (char C : Text) {
    if (Line.size() >= 600)
      break;
    Line += (C == '\n' || C == '\t' || C == '\r') ? ' ' : C;
  }
  while (!Line.empty() && Line.back() == ' ')
    Line.pop_back();
  return Line;
}

std::string formatSeconds(double Seconds) {
  char Text[32];
  snprintf(Text, sizeof Text, "%g", Seconds);
  return Text;
}

void report(const Request &Input, const char *Outcome, const std::string &Detail) {
  std::string Line = Input.Id + "\t" + Outcome + "\t" + oneLine(Detail) + "\n";
  fwrite(Line.data(), 1, Line.size(), stdout);
  fflush(stdout);
}

bool start(const Request &Input, double Timeout, std::map<pid_t, Child> &Running) {
  int Pipe[2];
  if (pipe(Pipe) != 0) {
    perror("tidal-fuzz-lower: pipe");
    return false;
  }
  fflush(stdout);
  fflush(stderr);
  pid_t Pid = fork();
  if (Pid < 0) {
    perror("tidal-fuzz-lower: fork");
    close(Pipe[0]);
    close(Pipe[1]);
    return false;
  }
  if (Pid == 0) {
    close(Pipe[0]);
    dup2(Pipe[1], 2);
    close(Pipe[1]);
    int Null = open("/dev/null", O_RDWR);
    dup2(Null, 0);
    dup2(Null, 1);
    signal(SIGPIPE, SIG_DFL);
    int Status = runOneInput(Input.Pipeline, Input.Path);
    errs().flush();
    _exit(Status);
  }
  close(Pipe[1]);
  Child &C = Running[Pid];
  C.Input = Input;
  C.Output = Pipe[0];
  C.Deadline = std::chrono::steady_clock::now() +
               std::chrono::microseconds(static_cast<long long>(Timeout * 1e6));
  return true;
}

// The result of a child that has ended with Status.
void finish(const Child &C, int Status) {
  if (WIFSIGNALED(Status)) {
    report(C.Input, "crash",
           "signal " + std::to_string(WTERMSIG(Status)) + " (" +
               strsignal(WTERMSIG(Status)) + "): " + C.Detail);
  } else if (WEXITSTATUS(Status) == FatalErrorStatus) {
    report(C.Input, "crash", C.Detail);
  } else if (WEXITSTATUS(Status) == ParserFatalErrorStatus) {
    report(C.Input, "llvm-parser-fatal", C.Detail);
  } else if (WEXITSTATUS(Status) == 0) {
    report(C.Input, "ok", C.Detail);
  } else if (WEXITSTATUS(Status) == 1) {
    report(C.Input, "rejected", C.Detail);
  } else {
    report(C.Input, "crash",
           "exit status " + std::to_string(WEXITSTATUS(Status)) + ": " + C.Detail);
  }
}

bool parseRequest(const std::string &Line, Request &Input) {
  size_t First = Line.find('\t');
  size_t Second = First == std::string::npos ? First : Line.find('\t', First + 1);
  if (Second == std::string::npos)
    return false;
  Input.Id = Line.substr(0, First);
  Input.Pipeline = Line.substr(First + 1, Second - First - 1);
  Input.Path = Line.substr(Second + 1);
  return true;
}

int usage() {
  fprintf(stderr, "usage: tidal-fuzz-lower [--jobs N] [--timeout SECONDS] "
                  "[--self-test] < requests\n"
                  "  each request a line ID<TAB>PIPELINE<TAB>PATH; each result "
                  "a line ID<TAB>ok|rejected|crash|hang<TAB>DETAIL\n");
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  unsigned Jobs = 1;
  double Timeout = 20;
  for (int I = 1; I < argc; ++I) {
    std::string Argument = argv[I];
    if (Argument == "--jobs" && I + 1 < argc)
      Jobs = std::max(1, atoi(argv[++I]));
    else if (Argument == "--timeout" && I + 1 < argc)
      Timeout = atof(argv[++I]);
    else if (Argument == "--self-test")
      SelfTest = true;
    else
      return usage();
  }
  if (Timeout <= 0)
    return usage();
  InitializeAllTargets();
  InitializeAllTargetMCs();
  install_fatal_error_handler(fatalErrorHandler);
  signal(SIGPIPE, SIG_IGN);

  std::deque<Request> Waiting;
  std::map<pid_t, Child> Running;
  std::string Buffer;
  bool InputOpen = true;
  while (InputOpen || !Waiting.empty() || !Running.empty()) {
    while (!Waiting.empty() && Running.size() < Jobs) {
      if (!start(Waiting.front(), Timeout, Running))
        return 1;
      Waiting.pop_front();
    }
    std::vector<pollfd> Descriptors;
    std::vector<pid_t> Owners;
    if (InputOpen) {
      Descriptors.push_back({0, POLLIN, 0});
      Owners.push_back(0);
    }
    auto Now = std::chrono::steady_clock::now();
    int Wait = -1;
    for (auto &[Pid, C] : Running) {
      Descriptors.push_back({C.Output, POLLIN, 0});
      Owners.push_back(Pid);
      auto Left = std::chrono::duration_cast<std::chrono::milliseconds>(C.Deadline - Now)
                      .count() + 1;
      Wait = Wait < 0 ? static_cast<int>(std::max<long long>(Left, 0))
                      : std::min(Wait, static_cast<int>(std::max<long long>(Left, 0)));
    }
    int Ready = poll(Descriptors.data(), Descriptors.size(), Wait);
    if (Ready < 0 && errno != EINTR) {
      perror("tidal-fuzz-lower: poll");
      return 1;
    }
    for (size_t I = 0; Ready > 0 && I < Descriptors.size(); ++I) {
      if (!(Descriptors[I].revents & (POLLIN | POLLHUP | POLLERR)))
        continue;
      char Chunk[65536];
      ssize_t Read = read(Descriptors[I].fd, Chunk, sizeof Chunk);
      if (Read < 0 && errno == EINTR)
        continue;
      if (Owners[I] == 0) { // stdin: requests
        if (Read <= 0) {
          InputOpen = false;
          continue;
        }
        Buffer.append(Chunk, Read);
        size_t End;
        while ((End = Buffer.find('\n')) != std::string::npos) {
          std::string Line = Buffer.substr(0, End);
          Buffer.erase(0, End + 1);
          if (Line.empty())
            continue;
          Request Input;
          if (!parseRequest(Line, Input)) {
            fprintf(stderr, "tidal-fuzz-lower: not ID<TAB>PIPELINE<TAB>PATH: %s\n",
                    Line.c_str());
            return 2;
          }
          Waiting.push_back(Input);
        }
        continue;
      }
      pid_t Pid = Owners[I];
      Child &C = Running[Pid];
      if (Read > 0) {
        if (C.Detail.size() < DetailLimit)
          C.Detail.append(Chunk, std::min<size_t>(Read, DetailLimit - C.Detail.size()));
        continue;
      }
      // End of its stderr: the child is ending.
      int Status = 0;
      while (waitpid(Pid, &Status, 0) < 0 && errno == EINTR) {
      }
      close(C.Output);
      finish(C, Status);
      Running.erase(Pid);
    }
    // The children past their deadline are hangs.
    Now = std::chrono::steady_clock::now();
    for (auto It = Running.begin(); It != Running.end();) {
      if (It->second.Deadline > Now) {
        ++It;
        continue;
      }
      kill(It->first, SIGKILL);
      int Status;
      while (waitpid(It->first, &Status, 0) < 0 && errno == EINTR) {
      }
      close(It->second.Output);
      report(It->second.Input, "hang",
             "no end in " + formatSeconds(Timeout) + " s: " + It->second.Detail);
      It = Running.erase(It);
    }
  }
  return 0;
}
