// The OpenMP side of bench/cpu_vs_openmp.py: each kernel of the comparison
// as a C++ programmer writes it for the CPU (the natural loop nest, its outer
// loop `#pragma omp parallel for`), built by the benchmark with
// `g++ -O3 -march=native -fopenmp` into build/bench/; never part of tidal.
#pragma once

#include <cstddef>
#include <cstdint>

namespace omp_bench {

void saxpy(float A, const float *X, const float *Y, float *Out, std::size_t N);
void stencil(const float *A, float *Out, std::size_t N, std::size_t M);
void matmul(const float *A, const float *B, float *C, std::size_t N, std::size_t K,
            std::size_t M);
float reduction(const float *X, std::size_t N);
void histogram(const std::int32_t *X, std::size_t N, std::int32_t *Bins);
void mandelbrot(std::int32_t *Counts, std::size_t N, std::size_t M, float X0, float Y0,
                float Step, int Iterations);
void nbody(const float *Pos, float *Acc, std::size_t N, float Softening);
void blackScholes(const float *Price, const float *Strike, const float *Years, float Rate,
                  float Volatility, float *Call, float *Put, std::size_t N);
void copy2d(const float *A, float *Out, std::size_t N, std::size_t M);
void transpose(const float *A, float *Out, std::size_t N, std::size_t M);
void convolution(const float *X, const float *Weights, std::size_t Taps, float *Out,
                 std::size_t N);
// STREAM's triad, A = B + Scalar * C in double: the memory bandwidth beside the kernels.
void triad(double *A, const double *B, const double *C, double Scalar, std::size_t N);

} // namespace omp_bench
