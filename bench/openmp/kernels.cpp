// The kernels of the OpenMP comparison (see kernels.h): plain loops over
// the data, the outer loop split across threads by OpenMP.
#include "kernels.h"

#include <cmath>

namespace omp_bench {

void saxpy(float A, const float *X, const float *Y, float *Out, std::size_t N) {
#pragma omp parallel for
  for (std::size_t I = 0; I < N; ++I)
    Out[I] = A * X[I] + Y[I];
}

void stencil(const float *A, float *Out, std::size_t N, std::size_t M) {
#pragma omp parallel for
  for (std::size_t I = 0; I < N; ++I) {
    const float *Row = A + I * M;
    float *OutRow = Out + I * M;
    if (I == 0 || I == N - 1) {
      for (std::size_t J = 0; J < M; ++J)
        OutRow[J] = Row[J];
      continue;
    }
    OutRow[0] = Row[0];
    for (std::size_t J = 1; J + 1 < M; ++J)
      OutRow[J] = 0.25f * (Row[J - M] + Row[J + M] + Row[J - 1] + Row[J + 1]);
    OutRow[M - 1] = Row[M - 1];
  }
}

void matmul(const float *A, const float *B, float *C, std::size_t N, std::size_t K,
            std::size_t M) {
  // i-k-j: the inner loop runs along rows of B and C
#pragma omp parallel for
  for (std::size_t I = 0; I < N; ++I) {
    float *CRow = C + I * M;
    for (std::size_t J = 0; J < M; ++J)
      CRow[J] = 0.0f;
    for (std::size_t P = 0; P < K; ++P) {
      float AValue = A[I * K + P];
      const float *BRow = B + P * M;
      for (std::size_t J = 0; J < M; ++J)
        CRow[J] += AValue * BRow[J];
    }
  }
}

float reduction(const float *X, std::size_t N) {
  float Sum = 0.0f;
#pragma omp parallel for simd reduction(+ : Sum)
  for (std::size_t I = 0; I < N; ++I)
    Sum += X[I];
  return Sum;
}

void histogram(const std::int32_t *X, std::size_t N, std::int32_t *Bins) {
  // an array reduction: each thread counts into its own copy of Bins[0:256]
  for (int B = 0; B < 256; ++B)
    Bins[B] = 0;
#pragma omp parallel for reduction(+ : Bins[:256])
  for (std::size_t I = 0; I < N; ++I)
    Bins[X[I]] += 1;
}

void mandelbrot(std::int32_t *Counts, std::size_t N, std::size_t M, float X0, float Y0,
                float Step, int Iterations) {
  // rows differ in cost: dynamic scheduling, as usual for this kernel
#pragma omp parallel for schedule(dynamic)
  for (std::size_t Row = 0; Row < N; ++Row) {
    float Ci = Y0 + Step * static_cast<float>(Row);
    for (std::size_t Col = 0; Col < M; ++Col) {
      float Cr = X0 + Step * static_cast<float>(Col);
      float Zr = 0.0f, Zi = 0.0f;
      int K = 0;
      while (K < Iterations && Zr * Zr + Zi * Zi <= 4.0f) {
        float T = Zr * Zr - Zi * Zi + Cr;
        Zi = 2.0f * Zr * Zi + Ci;
        Zr = T;
        ++K;
      }
      Counts[Row * M + Col] = K;
    }
  }
}

void nbody(const float *Pos, float *Acc, std::size_t N, float Softening) {
  // Pos[i] = (x, y, z, mass), Acc[i] = (ax, ay, az): all pairs
#pragma omp parallel for
  for (std::size_t I = 0; I < N; ++I) {
    float Px = Pos[4 * I], Py = Pos[4 * I + 1], Pz = Pos[4 * I + 2];
    float Ax = 0.0f, Ay = 0.0f, Az = 0.0f;
    for (std::size_t J = 0; J < N; ++J) {
      float Dx = Pos[4 * J] - Px, Dy = Pos[4 * J + 1] - Py, Dz = Pos[4 * J + 2] - Pz;
      float R2 = Dx * Dx + Dy * Dy + Dz * Dz + Softening;
      float Inv = 1.0f / std::sqrt(R2);
      float S = Pos[4 * J + 3] * Inv * Inv * Inv;
      Ax += Dx * S;
      Ay += Dy * S;
      Az += Dz * S;
    }
    Acc[3 * I] = Ax;
    Acc[3 * I + 1] = Ay;
    Acc[3 * I + 2] = Az;
  }
}

void blackScholes(const float *Price, const float *Strike, const float *Years, float Rate,
                  float Volatility, float *Call, float *Put, std::size_t N) {
#pragma omp parallel for
  for (std::size_t I = 0; I < N; ++I) {
    float S = Price[I], K = Strike[I], T = Years[I];
    float RootT = std::sqrt(T);
    float D1 = (std::log(S / K) + (Rate + 0.5f * Volatility * Volatility) * T) /
               (Volatility * RootT);
    float D2 = D1 - Volatility * RootT;
    float Cdf1 = 0.5f * (1.0f + std::erf(D1 * 0.70710678f));
    float Cdf2 = 0.5f * (1.0f + std::erf(D2 * 0.70710678f));
    float Discount = K * std::exp(-Rate * T);
    Call[I] = S * Cdf1 - Discount * Cdf2;
    Put[I] = Discount * (1.0f - Cdf2) - S * (1.0f - Cdf1);
  }
}

void copy2d(const float *A, float *Out, std::size_t N, std::size_t M) {
#pragma omp parallel for
  for (std::size_t I = 0; I < N; ++I)
    for (std::size_t J = 0; J < M; ++J)
      Out[I * M + J] = A[I * M + J];
}

void transpose(const float *A, float *Out, std::size_t N, std::size_t M) {
#pragma omp parallel for
  for (std::size_t I = 0; I < N; ++I)
    for (std::size_t J = 0; J < M; ++J)
      Out[J * N + I] = A[I * M + J];
}

void convolution(const float *X, const float *Weights, std::size_t Taps, float *Out,
                 std::size_t N) {
  const std::ptrdiff_t Radius = static_cast<std::ptrdiff_t>(Taps / 2);
  const std::ptrdiff_t Size = static_cast<std::ptrdiff_t>(N);
#pragma omp parallel for
  for (std::ptrdiff_t I = 0; I < Size; ++I) {
    float Sum = 0.0f;
    for (std::ptrdiff_t K = 0; K < static_cast<std::ptrdiff_t>(Taps); ++K) {
      std::ptrdiff_t J = I + K - Radius;
      if (J >= 0 && J < Size)
        Sum += Weights[K] * X[J];
    }
    Out[I] = Sum;
  }
}

void triad(double *A, const double *B, const double *C, double Scalar, std::size_t N) {
#pragma omp parallel for
  for (std::size_t I = 0; I < N; ++I)
    A[I] = B[I] + Scalar * C[I];
}

} // namespace omp_bench
