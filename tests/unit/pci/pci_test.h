/* tests/unit/pci/pci_test.h: the fixture shared by the PCI suites: an emulated sysfs tree with
 *   0000:03:00.0  AMD Navi31 (amdgpu): BAR0 256 MiB VRAM (resizable to 512 MiB and 1 GiB, WC),
 *                 BAR2 2 MiB doorbells, BAR4 I/O, BAR5 1 MiB registers; x16 link; IOMMU group 7
 *   0000:03:00.1  its HDMI audio function (snd_hda_intel)
 *   0000:41:00.0  NVIDIA GH100 (no driver): BAR0 16 MiB, BAR1 64 MiB
 *   0000:00:1f.6  an Intel NIC (e1000e)
 * and a strictness check at teardown: a test that provokes model failures must consume them
 * with expect_failures. */
#ifndef BG_TESTS_PCI_TEST_H
#define BG_TESTS_PCI_TEST_H

#include <check.h>
#include <string.h>

#include "baregpu/error.h"
#include "mock_sysfs.h"

#define AMD_BDF "0000:03:00.0"
#define AUDIO_BDF "0000:03:00.1"
#define NV_BDF "0000:41:00.0"
#define NIC_BDF "0000:00:1f.6"

#define OK(call) ck_assert_msg((call) == 0, "%s: %s", #call, bg_last_error())
/* call fails with -code and a message containing needle. */
#define FAILS(call, code, needle)                                                                     \
  do {                                                                                                \
    int r_ = (call);                                                                                  \
    ck_assert_msg(r_ == -(code), "%s returned %d (%s), expected -%s: %s", #call, r_, bg_strerror(r_), \
                  #code, bg_last_error());                                                            \
    ck_assert_msg(strstr(bg_last_error(), needle) != NULL, "%s: message '%s' lacks '%s'", #call,      \
                  bg_last_error(), needle);                                                           \
  } while (0)

extern mock_sysfs *fx;
void fx_setup(void);
void fx_teardown(void);
/* Exactly n model failures so far, the last one mentioning needle; then clear them. */
void expect_failures(unsigned n, const char *needle);
/* A fresh TCase with the fixture. */
TCase *fx_tcase(const char *name);

TCase *tcase_discovery(void);
TCase *tcase_open(void);
TCase *tcase_bars(void);
TCase *tcase_resize(void);
TCase *tcase_admin(void);
TCase *tcase_faults(void);
TCase *tcase_sysmem(void);
TCase *tcase_dma(void);
TCase *tcase_lock(void);
TCase *tcase_vfio(void);

#endif
