/* tests/bench/test_launch_cuda.c: bench-launch's CUDA column (launch_cuda.c) against the stand-in libcuda.so.1
 * (fake_libcuda.c, found through LD_LIBRARY_PATH): it measures n launches of the empty kernel with its argument in
 * the allocation, synchronizes per batch and releases everything; a device of another sm, an unknown PCI bus id
 * and a module without the entry are skipped with CUDA's error named. Exit 0 when all hold. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "launch_cuda.h"

static const char *ptx_for(unsigned sm, const char *entry, char *buf, size_t n) {
  snprintf(buf, n, ".version 7.8\n.target sm_%u\n.address_size 64\n\n.visible .entry %s(\n\t.param .u64 %s_param_0\n)\n"
                   "{\n\tret;\n}\n", sm, entry, entry);
  return buf;
}

static int failures;
#define CHECK(cond, ...)                                        \
  do {                                                          \
    if (!(cond)) {                                              \
      printf("FAIL line %d: ", __LINE__);                       \
      printf(__VA_ARGS__);                                      \
      printf("\n");                                             \
      failures++;                                               \
    }                                                           \
  } while (0)

int main(void) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW);   /* the stand-in; held open so its counters survive the column's dlclose */
  int (*stats)(int *, int *, int *, int *) = lib ? (int (*)(int *, int *, int *, int *))dlsym(lib, "fake_cuda_stats") : NULL;
  if (!stats) {
    printf("FAIL: libcuda.so.1 on LD_LIBRARY_PATH is not the stand-in (fake_cuda_stats missing): %s\n", dlerror());
    return 1;
  }
  char ptx[512];
  cuda_ref r;
  int launches, bad, syncs, leaks;

  cuda_launch_ref(ptx_for(90, "empty", ptx, sizeof ptx), "empty", 90, "0000:41:00.0", 1200, 500, &r);
  stats(&launches, &bad, &syncs, &leaks);
  CHECK(r.ran, "not measured: %s", r.why);
  CHECK(launches == 1500, "%d launches, expected 1500 (1200 rounded up to batches of 500)", launches);
  CHECK(bad == 0, "%d launches with a wrong grid, stream or argument", bad);
  CHECK(syncs == 3, "%d synchronizations, expected one per batch (3)", syncs);
  CHECK(leaks == 0, "%d CUDA objects not released", leaks);
  CHECK(r.ns > 0, "%.1f ns per launch", r.ns);
  CHECK(r.driver == 13000, "driver version %d", r.driver);
  CHECK(strstr(r.image, "cubin") || strstr(r.image, "PTX"), "image '%s'", r.image);
  printf("measured: %.0f ns per launch, driver %d, image: %s\n", r.ns, r.driver, r.image);

  cuda_launch_ref(ptx_for(80, "empty", ptx, sizeof ptx), "empty", 80, "", 10, 5, &r);
  CHECK(!r.ran && strstr(r.why, "sm_90") && strstr(r.why, "sm_80"), "another sm: ran %d, why '%s'", r.ran, r.why);
  cuda_launch_ref(ptx_for(90, "empty", ptx, sizeof ptx), "empty", 90, "0000:01:00.0", 10, 5, &r);
  CHECK(!r.ran && strstr(r.why, "cuDeviceGetByPCIBusId") && strstr(r.why, "invalid device ordinal"), "unknown bus id: '%s'",
        r.why);
  cuda_launch_ref(ptx_for(90, "other", ptx, sizeof ptx), "empty", 90, NULL, 10, 5, &r);
  CHECK(!r.ran && strstr(r.why, "CUDA error"), "no entry 'empty': ran %d, why '%s'", r.ran, r.why);
  stats(&launches, &bad, &syncs, &leaks);
  CHECK(leaks == 0, "%d CUDA objects not released after the failures", leaks);
  printf("cuda column: %s\n", failures ? "FAILED" : "all checks passed");
  dlclose(lib);
  return failures ? 1 : 0;
}
