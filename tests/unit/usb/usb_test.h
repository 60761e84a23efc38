/* tests/unit/usb/usb_test.h: the `usb` suite's fixture: a fake sysfs tree with the emulated gfx11 GPU
 * (tests/mockgpu/amd_gpu.h) behind the emulated ASM24 bridge (tests/mockgpu/asm24.h), opened through
 * usb/usb_pci.h. Teardown asserts that neither model recorded an unexpected failure. */
#ifndef BG_TESTS_USB_TEST_H
#define BG_TESTS_USB_TEST_H

#include <check.h>
#include <stdint.h>
#include <string.h>

#include "amd_gpu.h"
#include "asm24.h"
#include "baregpu/error.h"
#include "platform/pci.h"
#include "mock_sysfs.h"
#include "usb/asm24.h"
#include "usb/usb_pci.h"

#define OK(call) ck_assert_msg((call) == 0, "%s: %s", #call, bg_last_error())

extern mock_sysfs *UT;   /* tree */
extern mock_amd *UG;     /* GPU */
extern mock_asm24 *UB;   /* bridge */
extern bg_pci_dev *UP;   /* the GPU over USB (NULL in raw fixtures) */

void ux_setup_raw(void);   /* tree + GPU + bridge, nothing opened */
void ux_setup(void);       /* the same, then bg_usb_pci_open */
void ux_teardown(void);
/* Exactly n bridge failures were recorded, one containing needle; then cleared. */
void ux_expect_failures(unsigned n, const char *needle);
TCase *ux_tcase(const char *name, bool open);
bg_asm24 *ux_bridge(void);
/* xorshift for reproducible random tests */
uint64_t ux_rand(void);
void ux_srand(uint64_t seed);

Suite *usb_proto_suite(void);
Suite *usb_bridge_suite(void);
Suite *usb_copy_suite(void);
Suite *usb_order_suite(void);
Suite *usb_am_suite(void);
Suite *usb_tool_suite(void);
Suite *usb_hcq_suite(void);
Suite *usb_stall_suite(void);

#endif
