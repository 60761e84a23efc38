/* tests/mockgpu/amd_testbed.h: the emulated-AMD test bed the suites share: a fake sysfs tree (mock_sysfs.h) with one
 * emulated GPU (amd_gpu.h), and that chip's generated firmware (tests/unit/am/fw_gen.h) in a fresh temp dir fused
 * into the GPU. Plain return codes (no Check), so any suite or tool test can build its fixture on it.
 *
 * Lifetime: amd_testbed_new; the test; amd_testbed_failures (before or after closing the driver, as the test
 * wants); amd_testbed_free. Built as amd_testbed_dep (tests/mockgpu/meson.build), which brings fw_gen.c along. */
#ifndef BAREGPU_TESTS_MOCKGPU_AMD_TESTBED_H
#define BAREGPU_TESTS_MOCKGPU_AMD_TESTBED_H

#include <stdbool.h>
#include <stddef.h>

#include "amd_gpu.h"
#include "fw_gen.h"
#include "mock_sysfs.h"

typedef struct amd_testbed {
  mock_sysfs *tree;
  mock_amd *gpu;
  char fw_dir[256];     /* the generated firmware ("" before it exists) */
  bool fw_dir_exported; /* BG_FIRMWARE_DIR names fw_dir until amd_testbed_free */
} amd_testbed;

/* The fw_gen firmware set of an emulated chip. */
fw_gen_chip_id amd_testbed_fw_chip(mock_amd_chip chip);

/* Tree + GPU of cfg + firmware in <TMPDIR>/bg-mock-<pid>-<tag>-XXXXXX (mock_tmpdir_new), fused into the GPU. 0, or a
 * negative BG_E* code with the message in bg_last_error() and nothing left behind. */
int amd_testbed_new(amd_testbed *tb, const mock_amd_cfg *cfg, const char *tag);

/* The firmware part alone, for a GPU set up otherwise (e.g. behind an emulated USB bridge): the chip's files in a new
 * <TMPDIR>/bg-mock-<pid>-<tag>-XXXXXX (its path into dir; n must hold it), fused into gpu. 0, or a negative BG_E*
 * code with nothing left behind (dir ""). Remove it with amd_testbed_rm_dir. */
int amd_testbed_fw_new(mock_amd *gpu, const char *tag, char *dir, size_t n);

/* Point BG_FIRMWARE_DIR at the firmware, for drivers opened without an explicit fw_dir. */
void amd_testbed_export_fw_dir(amd_testbed *tb);

/* The GPU model's and then the tree's failure lists into msg (truncated to n); returns how many there are. */
unsigned amd_testbed_failures(const amd_testbed *tb, char *msg, size_t n);

/* Removes the firmware dir, frees the GPU before the tree, unsets BG_FIRMWARE_DIR if exported. Safe on a
 * zeroed or already freed test bed. */
void amd_testbed_free(amd_testbed *tb);

/* Removes dir and the plain files in it (what fw_gen writes). */
void amd_testbed_rm_dir(const char *dir);

#endif
