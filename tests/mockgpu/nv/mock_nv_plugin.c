/* tests/mockgpu/nv/mock_nv_plugin.c: placeholder until the emulated NVIDIA GPU lands (issue 14): MOCKNVK refuses
 * to start, naming what is missing. */
#include <stdio.h>

#include "baregpu/error.h"
#include "mock_nv.h"

static int refuse(char *err, size_t errlen) {
  snprintf(err, errlen, "this module has no emulated NVIDIA GPU yet");
  return -BG_ENOTSUP;
}
int mock_nv_start(bg_mock_devices *out, char *err, size_t errlen) {
  (void)out;
  return refuse(err, errlen);
}
void mock_nv_stop(void) {}
int mock_nv_plugin_sys(const bg_nv_sys **out, char *err, size_t errlen) {
  *out = NULL;
  return refuse(err, errlen);
}
int mock_nv_plugin_assemble(const char *ptx, unsigned sm, uint8_t **cubin, size_t *n, char *err, size_t errlen) {
  (void)ptx;
  (void)sm;
  *cubin = NULL;
  *n = 0;
  return refuse(err, errlen);
}
uint64_t mock_nv_exec_ns(void) { return 0; }
