// The OpenMP worker of bench/cpu_vs_openmp.py. It reads commands on stdin
// and answers each with one line on stdout:
//   load KERNEL DIR SYSTEM INPUTS OUTPUTS PARAMS
//       INPUTS and OUTPUTS: comma-separated array names, each read from
//       DIR/NAME.npy (NumPy's format 1.0, C order); PARAMS: comma-separated
//       numbers ("-" for none). Runs the kernel once and writes each output
//       to DIR/SYSTEM-NAME.npy for the harness to check.     -> "ok"
//   triad N      allocates STREAM's three arrays of N doubles, runs the
//                triad once and checks it                      -> "ok"
//   time R       runs the loaded kernel R times  -> "times T1 ... TR" (seconds)
// A failure answers "error MESSAGE". Built by the benchmark with
// g++ -O3 -march=native -fopenmp (bench/cpu_vs_openmp.py: build_openmp).
#include "kernels.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

struct FreeDeleter {
  void operator()(void *Pointer) const { std::free(Pointer); }
};

// One .npy file's data (64-byte aligned) and the header that came with it.
struct Array {
  std::string Header;
  std::unique_ptr<char, FreeDeleter> Data;
  std::size_t Bytes = 0;
  template <typename T> T *as() { return reinterpret_cast<T *>(Data.get()); }
  template <typename T> std::size_t count() const { return Bytes / sizeof(T); }
};

std::vector<std::string> split(const std::string &Text, char Separator) {
  std::vector<std::string> Parts;
  if (Text == "-")
    return Parts;
  std::stringstream Stream(Text);
  std::string Part;
  while (std::getline(Stream, Part, Separator))
    Parts.push_back(Part);
  return Parts;
}

Array readNpy(const std::string &Path) {
  std::ifstream File(Path, std::ios::binary);
  if (!File)
    throw std::runtime_error("cannot open " + Path);
  char Magic[8];
  File.read(Magic, 8);
  if (!File || std::memcmp(Magic, "\x93NUMPY\x01", 7) != 0)
    throw std::runtime_error(Path + " is not a version 1 .npy file");
  unsigned char Length[2];
  File.read(reinterpret_cast<char *>(Length), 2);
  std::string Header(Length[0] | (Length[1] << 8), '\0');
  File.read(Header.data(), static_cast<std::streamsize>(Header.size()));
  if (Header.find("'fortran_order': False") == std::string::npos)
    throw std::runtime_error(Path + " is not in C order");
  auto Start = File.tellg();
  File.seekg(0, std::ios::end);
  Array Result;
  Result.Header = Header;
  Result.Bytes = static_cast<std::size_t>(File.tellg() - Start);
  File.seekg(Start);
  Result.Data.reset(static_cast<char *>(std::aligned_alloc(64, (Result.Bytes + 63) / 64 * 64)));
  File.read(Result.Data.get(), static_cast<std::streamsize>(Result.Bytes));
  if (!File)
    throw std::runtime_error("short read from " + Path);
  return Result;
}

void writeNpy(const std::string &Path, const Array &Value) {
  std::ofstream File(Path, std::ios::binary);
  char Magic[8] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0};
  File.write(Magic, 8);
  unsigned char Length[2] = {static_cast<unsigned char>(Value.Header.size() & 0xff),
                             static_cast<unsigned char>(Value.Header.size() >> 8)};
  File.write(reinterpret_cast<char *>(Length), 2);
  File.write(Value.Header.data(), static_cast<std::streamsize>(Value.Header.size()));
  File.write(Value.Data.get(), static_cast<std::streamsize>(Value.Bytes));
  if (!File)
    throw std::runtime_error("cannot write " + Path);
}

// The loaded kernel as a call over its arrays and parameters.
std::function<void()> bindKernel(const std::string &Kernel, std::map<std::string, Array> &A,
                           const std::vector<double> &P) {
  auto F = [&](const char *Name) { return A.at(Name).as<float>(); };
  auto I = [&](const char *Name) { return A.at(Name).as<std::int32_t>(); };
  auto Need = [&](std::size_t Count) {
    if (P.size() != Count)
      throw std::runtime_error(Kernel + " takes " + std::to_string(Count) + " parameters");
  };
  if (Kernel == "saxpy") {
    Need(1);
    float Scale = static_cast<float>(P[0]);
    std::size_t N = A.at("x").count<float>();
    float *X = F("x"), *Y = F("y"), *Out = F("out");
    return [=] { omp_bench::saxpy(Scale, X, Y, Out, N); };
  }
  if (Kernel == "stencil" || Kernel == "copy2d" || Kernel == "transpose") {
    Need(2);
    std::size_t N = static_cast<std::size_t>(P[0]), M = static_cast<std::size_t>(P[1]);
    auto *Run = Kernel == "stencil" ? omp_bench::stencil
                : Kernel == "copy2d" ? omp_bench::copy2d
                                     : omp_bench::transpose;
    float *In = F("a"), *Out = F("out");
    return [=] { Run(In, Out, N, M); };
  }
  if (Kernel == "matmul") {
    Need(3);
    std::size_t N = static_cast<std::size_t>(P[0]), K = static_cast<std::size_t>(P[1]),
                M = static_cast<std::size_t>(P[2]);
    float *AData = F("A"), *BData = F("B"), *CData = F("C");
    return [=] { omp_bench::matmul(AData, BData, CData, N, K, M); };
  }
  if (Kernel == "reduction") {
    Need(0);
    std::size_t N = A.at("x").count<float>();
    float *X = F("x"), *Total = F("total");
    return [=] { Total[0] = omp_bench::reduction(X, N); };
  }
  if (Kernel == "histogram") {
    Need(0);
    if (A.at("bins").count<std::int32_t>() != 256)
      throw std::runtime_error("histogram: bins must have 256 elements");
    std::size_t N = A.at("x").count<std::int32_t>();
    std::int32_t *X = I("x"), *Bins = I("bins");
    return [=] { omp_bench::histogram(X, N, Bins); };
  }
  if (Kernel == "mandelbrot") {
    Need(6);
    std::size_t N = static_cast<std::size_t>(P[0]), M = static_cast<std::size_t>(P[1]);
    float X0 = static_cast<float>(P[2]), Y0 = static_cast<float>(P[3]),
          Step = static_cast<float>(P[4]);
    int Iterations = static_cast<int>(P[5]);
    std::int32_t *Counts = I("counts");
    return [=] { omp_bench::mandelbrot(Counts, N, M, X0, Y0, Step, Iterations); };
  }
  if (Kernel == "nbody") {
    Need(1);
    float Softening = static_cast<float>(P[0]);
    std::size_t N = A.at("pos").count<float>() / 4;
    float *Pos = F("pos"), *Acc = F("acc");
    return [=] { omp_bench::nbody(Pos, Acc, N, Softening); };
  }
  if (Kernel == "black_scholes") {
    Need(2);
    float Rate = static_cast<float>(P[0]), Volatility = static_cast<float>(P[1]);
    std::size_t N = A.at("price").count<float>();
    float *Price = F("price"), *Strike = F("strike"), *Years = F("years"), *Call = F("call"),
          *Put = F("put");
    return [=] {
      omp_bench::blackScholes(Price, Strike, Years, Rate, Volatility, Call, Put, N);
    };
  }
  if (Kernel == "convolution") {
    Need(0);
    std::size_t N = A.at("x").count<float>(), Taps = A.at("weights").count<float>();
    float *X = F("x"), *Weights = F("weights"), *Out = F("out");
    return [=] { omp_bench::convolution(X, Weights, Taps, Out, N); };
  }
  throw std::runtime_error("unknown kernel " + Kernel);
}

struct Triad {
  std::vector<double> A, B, C;
};

} // namespace

int main() {
  std::map<std::string, Array> Arrays;
  std::unique_ptr<Triad> TriadArrays;
  std::function<void()> Loaded;
  std::string Line;
  while (std::getline(std::cin, Line)) {
    std::stringstream Words(Line);
    std::string Command;
    Words >> Command;
    try {
      if (Command == "load") {
        std::string Kernel, Dir, System, Inputs, Outputs, Params;
        Words >> Kernel >> Dir >> System >> Inputs >> Outputs >> Params;
        Loaded = nullptr;
        TriadArrays.reset();
        Arrays.clear();
        for (const auto &Name : split(Inputs, ','))
          Arrays[Name] = readNpy(Dir + "/" + Name + ".npy");
        for (const auto &Name : split(Outputs, ','))
          Arrays[Name] = readNpy(Dir + "/" + Name + ".npy");
        std::vector<double> P;
        for (const auto &Value : split(Params, ','))
          P.push_back(std::stod(Value));
        Loaded = bindKernel(Kernel, Arrays, P);
        Loaded();
        for (const auto &Name : split(Outputs, ','))
          writeNpy(Dir + "/" + System + "-" + Name + ".npy", Arrays[Name]);
        std::cout << "ok" << std::endl;
      } else if (Command == "triad") {
        std::size_t N = 0;
        Words >> N;
        Loaded = nullptr;
        Arrays.clear();
        TriadArrays = std::make_unique<Triad>();
        Triad &T = *TriadArrays;
        T.A.resize(N);
        T.B.resize(N);
        T.C.resize(N);
#pragma omp parallel for
        for (std::size_t I = 0; I < N; ++I) {
          T.A[I] = 0.0;
          T.B[I] = 1.0;
          T.C[I] = 2.0;
        }
        Loaded = [&T, N] { omp_bench::triad(T.A.data(), T.B.data(), T.C.data(), 3.0, N); };
        Loaded();
        for (std::size_t I = 0; I < N; ++I)
          if (T.A[I] != 7.0)
            throw std::runtime_error("triad: wrong result at " + std::to_string(I));
        std::cout << "ok" << std::endl;
      } else if (Command == "time") {
        int Repeats = 0;
        Words >> Repeats;
        if (!Loaded)
          throw std::runtime_error("nothing is loaded");
        std::string Times = "times";
        for (int R = 0; R < Repeats; ++R) {
          auto Start = std::chrono::steady_clock::now();
          Loaded();
          std::chrono::duration<double> Took = std::chrono::steady_clock::now() - Start;
          char Text[32];
          std::snprintf(Text, sizeof Text, " %.9g", Took.count());
          Times += Text;
        }
        std::cout << Times << std::endl;
      } else {
        throw std::runtime_error("unknown command '" + Command + "'");
      }
    } catch (const std::exception &Error) {
      std::cout << "error " << Error.what() << std::endl;
    }
  }
  return 0;
}
