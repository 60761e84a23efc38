/* tests/bench/launch_cuda.c: see launch_cuda.h. The entry points and their _v2 names are those of NVIDIA's cuda.h
 * (the CUDA driver API; cuCtxCreate_v2 is the three-argument form every driver since CUDA 4.0 exports). */
#include "launch_cuda.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/error.h"
#include "compile/ptx_compile.h"
#include "util/clock.h"

typedef int CUresult;   /* CUDA_SUCCESS = 0 */
typedef unsigned long long CUdeviceptr;
enum { CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76 };

typedef struct cu_api {
  CUresult (*init)(unsigned);
  CUresult (*driver_version)(int *);
  CUresult (*device_get)(int *, int);
  CUresult (*device_by_bus)(int *, const char *);
  CUresult (*attribute)(int *, int, int);
  CUresult (*ctx_create)(void **, unsigned, int);
  CUresult (*ctx_destroy)(void *);
  CUresult (*ctx_sync)(void);
  CUresult (*module_load)(void **, const void *);
  CUresult (*module_unload)(void *);
  CUresult (*get_function)(void **, void *, const char *);
  CUresult (*mem_alloc)(CUdeviceptr *, size_t);
  CUresult (*mem_free)(CUdeviceptr);
  CUresult (*launch)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **,
                     void **);
  CUresult (*error_string)(CUresult, const char **);
} cu_api;

/* Resolve every entry point; false with why naming the missing one. */
static bool load_api(void *lib, cu_api *a, char *why, size_t n) {
  static const char *const names[] = {"cuInit", "cuDriverGetVersion", "cuDeviceGet", "cuDeviceGetByPCIBusId",
                                      "cuDeviceGetAttribute", "cuCtxCreate_v2", "cuCtxDestroy_v2", "cuCtxSynchronize",
                                      "cuModuleLoadData", "cuModuleUnload", "cuModuleGetFunction", "cuMemAlloc_v2",
                                      "cuMemFree_v2", "cuLaunchKernel", "cuGetErrorString"};
  void *sym[sizeof names / sizeof *names];
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (!(sym[i] = dlsym(lib, names[i]))) {
      snprintf(why, n, "libcuda.so.1 has no %s", names[i]);
      return false;
    }
  size_t k = 0;
  a->init = (CUresult(*)(unsigned))sym[k++];
  a->driver_version = (CUresult(*)(int *))sym[k++];
  a->device_get = (CUresult(*)(int *, int))sym[k++];
  a->device_by_bus = (CUresult(*)(int *, const char *))sym[k++];
  a->attribute = (CUresult(*)(int *, int, int))sym[k++];
  a->ctx_create = (CUresult(*)(void **, unsigned, int))sym[k++];
  a->ctx_destroy = (CUresult(*)(void *))sym[k++];
  a->ctx_sync = (CUresult(*)(void))sym[k++];
  a->module_load = (CUresult(*)(void **, const void *))sym[k++];
  a->module_unload = (CUresult(*)(void *))sym[k++];
  a->get_function = (CUresult(*)(void **, void *, const char *))sym[k++];
  a->mem_alloc = (CUresult(*)(CUdeviceptr *, size_t))sym[k++];
  a->mem_free = (CUresult(*)(CUdeviceptr))sym[k++];
  a->launch = (CUresult(*)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,
                           void **, void **))sym[k++];
  a->error_string = (CUresult(*)(CUresult, const char **))sym[k++];
  return true;
}

/* Did call succeed? Else why = "what: CUDA error N (text)". */
static bool ok(const cu_api *a, CUresult r, const char *what, char *why, size_t n) {
  if (r == 0) return true;
  const char *s = NULL;
  if (a->error_string(r, &s) != 0 || !s) s = "no description";
  snprintf(why, n, "%s: CUDA error %d (%s)", what, r, s);
  return false;
}

void cuda_launch_ref(const char *ptx, const char *entry, unsigned sm, const char *bdf, int n, int batch, cuda_ref *out) {
  memset(out, 0, sizeof *out);
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    snprintf(out->why, sizeof out->why, "dlopen libcuda.so.1: %s", e ? e : "not found");
    return;
  }
  cu_api a = {0};
  void *ctx = NULL, *mod = NULL, *fn = NULL;
  CUdeviceptr buf = 0;
  uint8_t *cubin = NULL;
  size_t ncubin = 0;
  char *why = out->why;
  size_t wn = sizeof out->why;
  int dev = 0, major = 0, minor = 0, launched = 0;
  const void *image = ptx;
  uint64_t wall = 0;
  if (!load_api(lib, &a, why, wn) || !ok(&a, a.init(0), "cuInit", why, wn) ||
      !ok(&a, a.driver_version(&out->driver), "cuDriverGetVersion", why, wn))
    goto done;
  if (bdf && *bdf) {
    if (!ok(&a, a.device_by_bus(&dev, bdf), "cuDeviceGetByPCIBusId", why, wn)) goto done;
  } else if (!ok(&a, a.device_get(&dev, 0), "cuDeviceGet(0)", why, wn)) {
    goto done;
  }
  if (!ok(&a, a.attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev), "cuDeviceGetAttribute", why, wn) ||
      !ok(&a, a.attribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev), "cuDeviceGetAttribute", why, wn))
    goto done;
  if ((unsigned)(major * 10 + minor) != sm) {
    snprintf(why, wn, "CUDA device %d is sm_%d%d, the bench's device sm_%u", dev, major, minor, sm);
    goto done;
  }
  if (!ok(&a, a.ctx_create(&ctx, 0, dev), "cuCtxCreate", why, wn)) goto done;
  /* A cubin for the GPU's sm, as the NV backend would load; without a PTX compiler the driver JIT-compiles the PTX. */
  if (bg_ptx_compile(ptx, sm, BG_PTX_AUTO, &cubin, &ncubin) == 0) {
    image = cubin;
    snprintf(out->image, sizeof out->image, "cubin for sm_%u from compile/ptx_compile.h (%zu bytes)", sm, ncubin);
  } else {
    snprintf(out->image, sizeof out->image, "PTX, JIT-compiled by the driver (no cubin: %.100s)", bg_last_error());
  }
  if (!ok(&a, a.module_load(&mod, image), "cuModuleLoadData", why, wn) ||
      !ok(&a, a.get_function(&fn, mod, entry), "cuModuleGetFunction", why, wn) ||
      !ok(&a, a.mem_alloc(&buf, 4096), "cuMemAlloc", why, wn))
    goto done;
  for (int i = 0; i < n; i += batch) {
    uint64_t t0 = bg_now_ns();
    for (int k = 0; k < batch; k++, launched++) {
      CUdeviceptr arg = buf + (CUdeviceptr)(k % 64) * 8;
      void *params[] = {&arg};
      if (!ok(&a, a.launch(fn, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL), "cuLaunchKernel", why, wn)) goto done;
    }
    wall += bg_now_ns() - t0;
    if (!ok(&a, a.ctx_sync(), "cuCtxSynchronize", why, wn)) goto done;
  }
  out->ns = (double)wall / launched;
  out->ran = true;
done:
  if (buf) a.mem_free(buf);
  if (mod) a.module_unload(mod);
  if (ctx) a.ctx_destroy(ctx);
  free(cubin);
  dlclose(lib);
}
