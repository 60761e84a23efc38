/* tests/bench/fake_libcuda.c: a stand-in libcuda.so.1 for test_launch_cuda.c: the CUDA driver API entry points
 * bench-launch's CUDA column calls (NVIDIA cuda.h signatures; handles the caller only passes back are const here,
 * the same ABI), one sm_90 device at PCI bus id 0000:41:00.0, checking what it is given (a cubin or PTX naming the
 * entry, the kernel's one u64 argument in the allocation, a 1x1x1 launch) and counting launches. Not a model of
 * CUDA: just enough to test the column's calls and arithmetic. */
#include <stdint.h>
#include <string.h>

typedef int CUresult;
enum { OK = 0, INVALID_VALUE = 1, NOT_INITIALIZED = 3, INVALID_DEVICE = 101, INVALID_IMAGE = 200, NOT_FOUND = 500 };

static int g_init;
static int g_launches, g_bad_launches, g_syncs, g_ctx_live, g_module_live, g_mem_live;
static uint64_t g_mem = 0x7f0000001000ull;

/* For the test: launches seen, launches with wrong arguments, synchronizations, objects not released. */
int fake_cuda_stats(int *launches, int *bad, int *syncs, int *leaks);
int fake_cuda_stats(int *launches, int *bad, int *syncs, int *leaks) {
  *launches = g_launches;
  *bad = g_bad_launches;
  *syncs = g_syncs;
  *leaks = g_ctx_live + g_module_live + g_mem_live;
  return 0;
}

CUresult cuInit(unsigned flags);
CUresult cuInit(unsigned flags) {
  g_init = flags == 0;
  return g_init ? OK : INVALID_VALUE;
}
CUresult cuDriverGetVersion(int *v);
CUresult cuDriverGetVersion(int *v) {
  *v = 13000;
  return OK;
}
CUresult cuDeviceGet(int *dev, int ordinal);
CUresult cuDeviceGet(int *dev, int ordinal) {
  if (!g_init) return NOT_INITIALIZED;
  if (ordinal != 0) return INVALID_DEVICE;
  *dev = 0;
  return OK;
}
CUresult cuDeviceGetByPCIBusId(int *dev, const char *bus);
CUresult cuDeviceGetByPCIBusId(int *dev, const char *bus) {
  if (!g_init) return NOT_INITIALIZED;
  if (strcmp(bus, "0000:41:00.0") != 0) return INVALID_DEVICE;
  *dev = 0;
  return OK;
}
CUresult cuDeviceGetAttribute(int *v, int attr, int dev);
CUresult cuDeviceGetAttribute(int *v, int attr, int dev) {
  if (dev != 0) return INVALID_DEVICE;
  if (attr == 75) *v = 9;        /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR */
  else if (attr == 76) *v = 0;   /* _MINOR */
  else return INVALID_VALUE;
  return OK;
}
CUresult cuCtxCreate_v2(void **ctx, unsigned flags, int dev);
CUresult cuCtxCreate_v2(void **ctx, unsigned flags, int dev) {
  if (!g_init) return NOT_INITIALIZED;
  if (dev != 0 || flags != 0) return INVALID_VALUE;
  *ctx = &g_ctx_live;
  g_ctx_live++;
  return OK;
}
CUresult cuCtxDestroy_v2(const void *ctx);
CUresult cuCtxDestroy_v2(const void *ctx) {
  if (ctx != &g_ctx_live || !g_ctx_live) return INVALID_VALUE;
  g_ctx_live--;
  return OK;
}
CUresult cuCtxSynchronize(void);
CUresult cuCtxSynchronize(void) {
  g_syncs++;
  return g_ctx_live ? OK : INVALID_VALUE;
}
CUresult cuModuleLoadData(void **mod, const void *image);
CUresult cuModuleLoadData(void **mod, const void *image) {
  if (!g_ctx_live) return INVALID_VALUE;
  /* A cubin (ELF: its size from the section headers, which ptxas writes last) with .text.empty, or PTX text with
   * the empty kernel as an entry. */
  const unsigned char *p = image;
  if (!memcmp(p, "\177ELF", 4)) {
    uint64_t shoff, shnum = (uint64_t)(p[60] | p[61] << 8);
    memcpy(&shoff, p + 40, sizeof shoff);
    if (!memmem(p, shoff + shnum * 64, ".text.empty", 12)) return INVALID_IMAGE;
  } else if (!strstr(image, ".entry empty(")) {
    return INVALID_IMAGE;
  }
  *mod = &g_module_live;
  g_module_live++;
  return OK;
}
CUresult cuModuleUnload(const void *mod);
CUresult cuModuleUnload(const void *mod) {
  if (mod != &g_module_live || !g_module_live) return INVALID_VALUE;
  g_module_live--;
  return OK;
}
CUresult cuModuleGetFunction(void **fn, const void *mod, const char *name);
CUresult cuModuleGetFunction(void **fn, const void *mod, const char *name) {
  if (mod != &g_module_live || strcmp(name, "empty") != 0) return NOT_FOUND;
  *fn = &g_launches;
  return OK;
}
CUresult cuMemAlloc_v2(unsigned long long *p, size_t size);
CUresult cuMemAlloc_v2(unsigned long long *p, size_t size) {
  if (!g_ctx_live || size == 0) return INVALID_VALUE;
  *p = g_mem;
  g_mem_live++;
  return OK;
}
CUresult cuMemFree_v2(unsigned long long p);
CUresult cuMemFree_v2(unsigned long long p) {
  if (p != g_mem || !g_mem_live) return INVALID_VALUE;
  g_mem_live--;
  return OK;
}
CUresult cuLaunchKernel(const void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shmem, const void *stream, void **params, void **extra);
CUresult cuLaunchKernel(const void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shmem, const void *stream, void **params, void **extra) {
  if (fn != &g_launches || !params || extra) return INVALID_VALUE;
  unsigned long long a;
  memcpy(&a, params[0], sizeof a);
  int ok = gx * gy * gz * bx * by * bz == 1 && shmem == 0 && stream == NULL && a >= g_mem && a < g_mem + 4096;
  g_launches++;
  g_bad_launches += !ok;
  return OK;
}
CUresult cuGetErrorString(CUresult r, const char **s);
CUresult cuGetErrorString(CUresult r, const char **s) {
  switch (r) {
  case INVALID_VALUE: *s = "invalid argument"; return OK;
  case NOT_INITIALIZED: *s = "initialization error"; return OK;
  case INVALID_DEVICE: *s = "invalid device ordinal"; return OK;
  case INVALID_IMAGE: *s = "device kernel image is invalid"; return OK;
  case NOT_FOUND: *s = "named symbol not found"; return OK;
  default: *s = NULL; return INVALID_VALUE;
  }
}
