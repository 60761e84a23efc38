/* tests/bench/launch_cuda.h: bench-launch's reference column, the CUDA driver API (libcuda.so.1, loaded with dlopen at
 * run time, so the bench builds and runs without CUDA installed). */
#ifndef BG_BENCH_LAUNCH_CUDA_H
#define BG_BENCH_LAUNCH_CUDA_H

#include <stdbool.h>

typedef struct cuda_ref {
  bool ran;             /* false: skipped, why says why */
  double ns;            /* host wall ns per cuLaunchKernel (batches of `batch`, synchronized outside the timing) */
  int driver;           /* cuDriverGetVersion: 13000 = CUDA 13.0 */
  char image[160];      /* what was loaded: "cubin from nvJitLink/ptxas (n bytes)" or "PTX (driver JIT: why)" */
  char why[640];
} cuda_ref;

/* Launch the empty kernel `entry` of ptx (one u64 parameter, one thread) n times on the CUDA device whose PCI bus id
 * is bdf ("" or NULL: device 0), compiled for sm_<sm>. Never fails: out->ran says whether it was measured. */
void cuda_launch_ref(const char *ptx, const char *entry, unsigned sm, const char *bdf, int n, int batch, cuda_ref *out);

#endif
