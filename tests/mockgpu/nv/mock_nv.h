/* tests/mockgpu/nv/mock_nv.h: the emulated nvidia kernel module and NVIDIA GPUs (MOCKNVK+NV), as the plugin module
 * (tests/mockgpu/mock_plugin.c) exposes them to the library (platform/mock_plugin.h ABI 3). */
#ifndef BG_MOCKGPU_NV_H
#define BG_MOCKGPU_NV_H

#include <stddef.h>
#include <stdint.h>

#include "platform/mock_plugin.h"

/* Create the emulated GPUs on the first call (MOCKGPU_NV=hopper|ada, default hopper; MOCKGPU_COUNT, default 1);
 * later calls describe the same ones. out->count is set (no sysfs tree: the other fields stay empty). */
int mock_nv_start(bg_mock_devices *out, char *err, size_t errlen);
/* Free everything (process exit, after the driver closed its devices). */
void mock_nv_stop(void);
/* bg_mock_plugin.nv_sys / nv_assemble (platform/mock_plugin.h). */
int mock_nv_plugin_sys(const bg_nv_sys **out, char *err, size_t errlen);
int mock_nv_plugin_assemble(const char *ptx, unsigned sm, uint8_t **cubin, size_t *n, char *err, size_t errlen);
/* Wall time the emulated engines spent executing (for bg_mock_plugin.exec_ns). */
uint64_t mock_nv_exec_ns(void);

/* For tests: the failures the model recorded (what the driver did wrong: a bad doorbell, an unknown method, a
 * fault...), one per line into buf; returns how many since the last clear. */
unsigned mock_nv_failures(char *buf, size_t cap);
void mock_nv_clear_failures(void);
/* The running configuration ("hopper", "ada"), NULL before start. */
const char *mock_nv_config_name(void);

#endif
