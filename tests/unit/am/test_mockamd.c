/* tests/unit/am/test_mockamd.c: the emulated AMD GPU of tests/mockgpu (amd_gpu.h), driven the way the
 * driver reaches it: platform/pci's sysfs path on the fake tree and bg_mmio views of BAR0 (VRAM) and
 * BAR5 (registers). Covers MEMSIZE/discovery, MM_INDEX and RSMU indirection, the strict PSP
 * bootloader and ring (generated firmware from fw_gen, parsed with am/fw_load.h), the SMU mailbox and
 * metrics table, and mode1 reset. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "am/discovery.h"
#include "am/fw_load.h"
#include "amd_gpu.h"
#include "amd_testbed.h"
#include "baregpu/error.h"
#include "platform/pci.h"

#define BDF "0000:03:00.0"
#define OK(call) ck_assert_msg((call) == 0, "%s: %s", #call, bg_last_error())

/* boot-region addresses as tinygrad places them (tinygrad tinygrad/runtime/support/am/amdev.py AMDev.init_sw) */
#define MSG1 0x100000u
#define CMDBUF 0x85000u
#define FENCE 0x86000u
#define RING 0x87000u
#define DRVTAB 0x97000u
#define TMR 0x2000000u

static amd_testbed TB;
static mock_amd *G; /* TB.gpu */
static bg_pci_dev *D;
static bg_mmio VRAM, MMIO;
static bg_am_fw *FW;
static const mock_amd_regmap *R;
static uint32_t ring_w;

static uint32_t rreg(uint32_t a) { return bg_mmio_rd32(&MMIO, (uint64_t)a * 4); }
static void wreg(uint32_t a, uint32_t v) { ck_assert_int_eq(bg_mmio_wr32(&MMIO, (uint64_t)a * 4, v), 0); }
static uint32_t vrd32(uint64_t pa) { return bg_mmio_rd32(&VRAM, pa); }
static uint16_t vrd16(uint64_t pa) { return bg_mmio_rd16(&VRAM, pa); }

static void setup_chip(mock_amd_chip chip) {
  mock_amd_cfg cfg = {.chip = chip, .bdf = BDF};
  OK(amd_testbed_new(&TB, &cfg, "bg_mockamd"));
  G = TB.gpu;
  R = mock_amd_regs(G);
  OK(bg_pci_open_sysfs(BDF, 0, &D));
  OK(bg_pci_map_bar(D, 0, 0, 0, BG_PCI_MAP_WC, &VRAM));
  OK(bg_pci_map_bar(D, 5, 0, 0, 0, &MMIO));
  bg_am_fw_ips ip;
  mock_amd_chip_ips(chip, &ip);
  OK(bg_am_fw_load(&ip, TB.fw_dir, &FW));
  ring_w = 0;
}

static void setup(void) { setup_chip(MOCK_AMD_MOCK); }

static void teardown(void) {
  char msg[4096];
  unsigned nfail = amd_testbed_failures(&TB, msg, sizeof(msg));
  bg_am_fw_free(FW);
  bg_pci_unmap_bar(D, &VRAM);
  bg_pci_unmap_bar(D, &MMIO);
  bg_pci_close(D);
  amd_testbed_free(&TB);
  ck_assert_msg(nfail == 0, "unexpected model failures:\n%s", msg);
}

/* Exactly n GPU-model failures so far, mentioning needle; then clear them. */
static void expect_fail(unsigned n, const char *needle) {
  const char *all = mock_amd_failures(G);
  ck_assert_msg(mock_amd_nfail(G) == n, "expected %u failures, got %u:\n%s", n, mock_amd_nfail(G), all);
  ck_assert_msg(strstr(all, needle) != NULL, "failures lack '%s':\n%s", needle, all);
  mock_amd_clear_failures(G);
}

/* ---- PSP helpers (the driver's protocol, tinygrad tinygrad/runtime/support/am/ip.py AM_PSP) ---- */

/* Host writes through BAR0 reach the model's engines (here the PSP) at an HDP flush (tests/mockgpu/amd_hdp.h): the
 * flush request register, which needs no remap. */
static void hdp_flush(void) { wreg(R->hdp_flush_req, 1); }

static void stage(const bg_fw_desc *d) {
  uint8_t pad[16] = {0};
  OK(bg_mmio_write(&VRAM, MSG1, d->data, d->size));
  OK(bg_mmio_write(&VRAM, MSG1 + d->size, pad, sizeof(pad)));
  hdp_flush();
}

static void bl_load(uint32_t type, uint32_t cmd) {
  ck_assert(rreg(R->psp_35) & 0x80000000u);
  const bg_fw_desc *d = bg_am_fw_sos(FW, type);
  ck_assert_ptr_nonnull(d);
  stage(d);
  wreg(R->psp_36, MSG1 >> 20);
  wreg(R->psp_35, cmd);
}

static void bootloader(void) {
  bool v14 = mock_amd_chip_id(G) == MOCK_AMD_MOCK;
  const uint32_t cmds[] = {0x80000, 0x10000000, 0x10000, 0xB0000, 0xD0000, 0xC0000, 0xE0000, 0x20000};
  const uint32_t types[] = {BG_PSP_FW_KDB, v14 ? BG_PSP_FW_SPL : BG_PSP_FW_KDB, BG_PSP_FW_SYS_DRV, BG_PSP_FW_SOC_DRV,
                            BG_PSP_FW_INTF_DRV, BG_PSP_FW_DBG_DRV, BG_PSP_FW_RAS_DRV, BG_PSP_FW_SOS};
  ck_assert_uint_eq(rreg(R->psp_81), 0);
  for (int i = 0; i < 8; i++)
    if (bg_am_fw_sos(FW, types[i])) bl_load(types[i], cmds[i]);
  ck_assert_uint_ne(rreg(R->psp_81), 0);
}

static void ring_create(void) {
  ck_assert_uint_eq(rreg(R->psp_71), 0);
  ck_assert_uint_eq(rreg(R->psp_64), 0x80000000u);
  wreg(R->psp_69, RING);
  wreg(R->psp_70, 0);
  wreg(R->psp_71, 0x10000);
  wreg(R->psp_64, 0x20000);
  ck_assert_uint_eq(rreg(R->psp_64) & 0x8000FFFFu, 0x80000000u);
  ring_w = 0;
}

/* Submit one command; returns resp.status (the fence must be written). */
static uint32_t ring_submit(uint32_t id, const uint32_t *u, int n, uint32_t *tmr_size) {
  uint8_t cmd[1024] = {0}, frame[64] = {0};
  memcpy(cmd + 8, &id, 4);
  if (u && n > 0) memcpy(cmd + 28, u, (size_t)n * 4);
  OK(bg_mmio_write(&VRAM, CMDBUF, cmd, sizeof(cmd)));
  uint32_t w = rreg(R->psp_67), f[6] = {CMDBUF, 0, 0, FENCE, 0, w + 1};
  ck_assert_uint_eq(w, ring_w);
  memcpy(frame, f, sizeof(f));
  OK(bg_mmio_write(&VRAM, RING + (uint64_t)w * 4, frame, sizeof(frame)));
  hdp_flush();
  wreg(R->psp_67, w + 16);
  ring_w = w + 16;
  ck_assert_uint_eq(vrd32(FENCE), w + 1);
  if (tmr_size) *tmr_size = vrd32(CMDBUF + 880);
  return vrd32(CMDBUF + 864);
}

static uint32_t load_ip_fw(const bg_fw_desc *d) {
  stage(d);
  uint32_t u[4] = {MSG1, 0, (uint32_t)d->size, d->fw_type};
  return ring_submit(6, u, 4, NULL);
}

static void load_toc(void) {
  ck_assert_ptr_nonnull(FW->toc);
  stage(FW->toc);
  uint32_t u[3] = {MSG1, 0, (uint32_t)FW->toc->size}, tmr = 0;
  ck_assert_uint_eq(ring_submit(0x20, u, 3, &tmr), 0);
  ck_assert_uint_eq(tmr, MOCK_PSP_TOC_TMR_SIZE);
}

/* The whole PSP init_hw of tinygrad tinygrad/runtime/support/am/ip.py AM_PSP for GC >= 11. */
static void psp_boot(void) {
  bootloader();
  ring_create();
  load_toc();
  ck_assert_ptr_nonnull(FW->smu);
  ck_assert_uint_eq(load_ip_fw(FW->smu), 0);
  if (mock_amd_chip_id(G) == MOCK_AMD_GFX11) {
    uint32_t u[6] = {TMR, 0, MOCK_PSP_TOC_TMR_SIZE, 2, 0, 0};
    ck_assert_uint_eq(ring_submit(5, u, 6, NULL), 0);
  }
  for (int i = 0; i < FW->ndescs; i++)
    ck_assert_msg(load_ip_fw(&FW->descs[i]) == 0, "LOAD_IP_FW %s: %s", FW->descs[i].name, mock_amd_failures(G));
  ck_assert_uint_eq(ring_submit(0x21, NULL, 0, NULL), 0);
  ck_assert(mock_amd_rlc_autoloaded(G));
}

/* ---- SMU helper (tinygrad tinygrad/runtime/support/am/ip.py AM_SMU) ---- */
static uint32_t smu(uint32_t msg, uint32_t param, uint32_t *result) {
  wreg(R->smu_90, 0);
  wreg(R->smu_82, param);
  wreg(R->smu_66, msg);
  uint32_t resp = rreg(R->smu_90);
  if (result) *result = rreg(R->smu_82);
  return resp;
}

/* ---------------- tests ---------------- */

START_TEST(memsize_and_discovery) {
  ck_assert_uint_eq(rreg(0xde3), 512);
  uint64_t vram, off;
  OK(bg_am_discovery_location(rreg(0xde3), &vram, &off));
  uint8_t *tab = malloc(BG_AM_DISC_TABLE_SIZE);
  OK(bg_mmio_read(&VRAM, off, tab, BG_AM_DISC_TABLE_SIZE));
  struct bg_am_discovery d;
  OK(bg_am_discovery_parse(tab, BG_AM_DISC_TABLE_SIZE, 0, &d));
  free(tab);
  ck_assert_uint_eq(d.gc_ver[0], 12);
  ck_assert_str_eq(d.arch, "gfx1200");
  ck_assert_uint_eq(d.ip[MP0_HWIP].bases[0][0], 0x16000);
  /* absolute addresses in the mock configuration (bases of tinygrad test/mockgpu/am/amgpu.py) */
  ck_assert_uint_eq(R->psp_35, 0x16063);
  ck_assert_uint_eq(R->psp_81, 0x16091);
  ck_assert_uint_eq(R->smu_66, 0x16282);
  ck_assert_uint_eq(R->smu_90, 0x1629a);
  ck_assert_uint_eq(R->cp_stat, 0x21a0);
  ck_assert_uint_eq(R->rlc_bootload_status, 0xee7c);
  ck_assert_uint_eq(R->rlc_safe_mode, 0xa980);
  ck_assert_uint_eq(R->scratch7, 0xc047);
  ck_assert_uint_eq(R->gc_inv_req17, 0x28b8);
  ck_assert_uint_eq(R->gc_inv_ack17, 0x28ca);
  ck_assert_uint_eq(R->mm_fb_top, 0x1a555);
  ck_assert_uint_eq(R->mm_inv_sem17, 0x1a586);
  ck_assert_uint_eq(R->rsmu_index, 0x14);
  ck_assert_uint_eq(rreg(R->mm_fb_base), 0);
  ck_assert_uint_eq(rreg(R->mm_fb_top), 0x1f);
  /* MM_INDEX/MM_DATA read of the discovery signature (small-BAR path) */
  wreg(0x6, (uint32_t)(off >> 31));
  wreg(0x0, (uint32_t)(off & 0x7fffffff) | 0x80000000u);
  ck_assert_uint_eq(rreg(0x1), BG_AM_DISC_BINARY_SIGNATURE);
  /* RSMU indirection into the same register file (RCC_DEV0_EPF2_STRAP2, nbif seg5 0x4040000 + 0xd102) */
  uint32_t strap2 = 0x4040000 + 0xd102;
  wreg(R->rsmu_index, strap2 * 4);
  wreg(R->rsmu_data, 0x80);
  ck_assert_uint_eq(mock_amd_peek(G, strap2), 0x80);
  ck_assert_uint_eq(rreg(R->rsmu_data), 0x80);
  /* RSMU to a hooked register: MEMSIZE */
  wreg(R->rsmu_index, 0xde3 * 4);
  ck_assert_uint_eq(rreg(R->rsmu_data), 512);
  /* GC/MMHUB hooks */
  ck_assert_uint_eq(rreg(R->cp_stat), 0);
  ck_assert_uint_eq(rreg(R->rlc_bootload_status), 0);
  wreg(R->rlc_safe_mode, 0x3);
  ck_assert_uint_eq(rreg(R->rlc_safe_mode), 0x2);
  wreg(R->gc_inv_req17, 0xf80001);
  ck_assert_uint_eq(rreg(R->gc_inv_ack17), 0x1);
  ck_assert_uint_eq(rreg(R->mm_inv_sem17), 1);
  wreg(R->mm_inv_req17, 0xf80005);
  ck_assert_uint_eq(rreg(R->mm_inv_ack17), 0x5);
  wreg(R->mm_inv_sem17, 0);
  ck_assert_uint_eq(mock_amd_nfail(G), 0);
  /* strict: read-only registers, unaligned RSMU */
  wreg(0xde3, 1);
  expect_fail(1, "read-only RCC_CONFIG_MEMSIZE");
  wreg(R->mm_inv_sem17, 0);
  expect_fail(1, "not acquired");
  wreg(R->rsmu_index, 0x2);
  rreg(R->rsmu_data);
  expect_fail(1, "unaligned");
}
END_TEST

START_TEST(bootloader_ok) {
  bootloader();
  ck_assert(mock_amd_sos_alive(G));
  ck_assert_uint_eq(mock_amd_psp_ncmds(G), 8);
  const mock_amd_psp_cmd *c = mock_amd_psp_cmd_at(G, 7);
  ck_assert(!c->ring && c->cmd == 0x20000 && c->fw_type == BG_PSP_FW_SOS && c->status == 0);
  ck_assert_uint_eq(rreg(R->psp_64), 0x80000000u);
}
END_TEST

START_TEST(bootloader_out_of_order) {
  bl_load(BG_PSP_FW_SYS_DRV, 0x10000);
  expect_fail(1, "out of order: expected LOAD_KEY_DATABASE");
  ck_assert_uint_eq(rreg(R->psp_35), 0); /* not acknowledged */
  ck_assert_uint_eq(rreg(R->psp_81), 0);
  ck_assert_uint_ne(mock_amd_psp_cmd_at(G, 0)->status, 0);
}
END_TEST

START_TEST(bootloader_sos_first) {
  bl_load(BG_PSP_FW_SOS, 0x20000);
  expect_fail(1, "LOAD_SOSDRV out of order");
  ck_assert(!mock_amd_sos_alive(G));
}
END_TEST

START_TEST(bootloader_corrupt) {
  const bg_fw_desc *d = bg_am_fw_sos(FW, BG_PSP_FW_KDB);
  stage(d);
  uint8_t b = (uint8_t)(d->data[10] ^ 0x5a);
  OK(bg_mmio_write(&VRAM, MSG1 + 10, &b, 1));
  hdp_flush();
  wreg(R->psp_36, MSG1 >> 20);
  wreg(R->psp_35, 0x80000);
  expect_fail(1, "first difference at byte 10");
  ck_assert_uint_eq(rreg(R->psp_35), 0);
}
END_TEST

START_TEST(bootloader_no_staging) {
  stage(bg_am_fw_sos(FW, BG_PSP_FW_KDB));
  wreg(R->psp_35, 0x80000);
  expect_fail(1, "without a staging address");
  ck_assert_uint_eq(rreg(R->psp_35), 0);
}
END_TEST

START_TEST(ring_before_sos) {
  wreg(R->psp_69, RING);
  wreg(R->psp_70, 0);
  wreg(R->psp_71, 0x10000);
  wreg(R->psp_64, 0x20000);
  expect_fail(1, "before sOS is alive");
  ck_assert_uint_eq(rreg(R->psp_64), 0);
  ck_assert(!mock_amd_psp_ring(G));
}
END_TEST

START_TEST(ring_bad_and_destroy) {
  bootloader();
  wreg(R->psp_69, RING + 0x10);
  wreg(R->psp_70, 0);
  wreg(R->psp_71, 0x10000);
  wreg(R->psp_64, 0x20000);
  expect_fail(1, "4 KiB-aligned");
  ck_assert_uint_eq(rreg(R->psp_64) & 0x80000000u, 0);
  wreg(R->psp_69, RING);
  wreg(R->psp_64, 0x20000);
  ck_assert(mock_amd_psp_ring(G));
  ck_assert_uint_eq(rreg(R->psp_64), 0x80000000u);
  wreg(R->psp_64, 0x20000);
  expect_fail(1, "while a ring exists");
  wreg(R->psp_64, 0x30000);
  ck_assert(!mock_amd_psp_ring(G));
  ck_assert_uint_eq(rreg(R->psp_64), 0x80000000u);
  wreg(R->psp_64, 0x30000);
  expect_fail(1, "destroy without a ring");
}
END_TEST

START_TEST(ring_full_boot) {
  psp_boot();
  ck_assert(mock_amd_fw_loaded(G, BG_GFX_FW_SMU));
  ck_assert(mock_amd_fw_loaded(G, BG_GFX_FW_RLC_G));
  ck_assert(mock_amd_fw_loaded(G, BG_GFX_FW_RS64_MEC_P0_STACK));
  ck_assert(!mock_amd_tmr_set(G)); /* MP0 14.0.2: boot-time TMR */
  ck_assert_uint_eq(rreg(R->rlc_bootload_status), 0x80000000u);
  /* every ring command recorded with its fence */
  size_t n = mock_amd_psp_ncmds(G), ring = 0;
  for (size_t i = 0; i < n; i++) {
    const mock_amd_psp_cmd *c = mock_amd_psp_cmd_at(G, i);
    if (!c->ring) continue;
    ck_assert_uint_eq(c->status, 0);
    ck_assert_uint_eq(c->fence, 16 * ring + 1);
    ring++;
  }
  ck_assert_uint_eq(ring, 1 + 1 + (size_t)FW->ndescs + 1);
  ck_assert_uint_eq(mock_amd_psp_cmd_at(G, n - 1)->cmd, 0x21);
}
END_TEST

START_TEST(autoload_too_early) {
  bootloader();
  ring_create();
  load_toc();
  ck_assert_uint_eq(load_ip_fw(FW->smu), 0);
  ck_assert_uint_eq(ring_submit(0x21, NULL, 0, NULL), MOCK_PSP_STATUS_ORDER);
  expect_fail(1, "AUTOLOAD_RLC before all firmware was loaded: missing");
  ck_assert(!mock_amd_rlc_autoloaded(G));
  ck_assert_uint_eq(rreg(R->rlc_bootload_status), 0);
}
END_TEST

START_TEST(ring_bad_commands) {
  bootloader();
  ring_create();
  /* firmware before the TOC */
  ck_assert_uint_eq(load_ip_fw(FW->smu), MOCK_PSP_STATUS_ORDER);
  expect_fail(1, "before LOAD_TOC");
  load_toc();
  /* corrupted firmware */
  const bg_fw_desc *d = &FW->descs[0];
  stage(d);
  uint8_t b = (uint8_t)(d->data[0] ^ 1);
  OK(bg_mmio_write(&VRAM, MSG1, &b, 1));
  hdp_flush();
  uint32_t u[4] = {MSG1, 0, (uint32_t)d->size, d->fw_type};
  ck_assert_uint_eq(ring_submit(6, u, 4, NULL), MOCK_PSP_STATUS_FW);
  expect_fail(1, "not a component of the installed firmware");
  /* a type no installed file has */
  u[3] = BG_GFX_FW_CP_MEC;
  ck_assert_uint_eq(ring_submit(6, u, 4, NULL), MOCK_PSP_STATUS_FW);
  expect_fail(1, "no installed firmware has a component of that type");
  /* SETUP_TMR on a boot-time-TMR chip, unknown command */
  uint32_t t[6] = {TMR, 0, MOCK_PSP_TOC_TMR_SIZE, 2, 0, 0};
  ck_assert_uint_eq(ring_submit(5, t, 6, NULL), MOCK_PSP_STATUS_ORDER);
  expect_fail(1, "set up by the bootloader");
  ck_assert_uint_eq(ring_submit(0x77, NULL, 0, NULL), MOCK_PSP_STATUS_UNKNOWN);
  expect_fail(1, "unknown command id 0x77");
  /* a wptr that does not advance by whole frames */
  wreg(R->psp_67, ring_w + 3);
  expect_fail(1, "whole 16-dword frames");
  ck_assert_uint_eq(rreg(R->psp_67), ring_w);
  /* bootloader command after sOS */
  bl_load(BG_PSP_FW_KDB, 0x80000);
  expect_fail(1, "while sOS is running");
}
END_TEST

START_TEST(smu_messages) {
  /* before the PSP loaded the SMU firmware, and before features */
  uint32_t res;
  ck_assert_uint_eq(smu(0x2, 0, &res), MOCK_SMU_RESULT_OK);
  ck_assert_uint_eq(res, mock_amd_smu_version(G));
  ck_assert_uint_eq(smu(0x6, 0, NULL), MOCK_SMU_RESULT_PREREQ);
  expect_fail(1, "before the PSP loaded the SMU firmware");
  ck_assert_uint_eq(smu(0x1F, 0x000ff, NULL), MOCK_SMU_RESULT_PREREQ);
  expect_fail(1, "GetDpmFreqByIndex before EnableAllSmuFeatures");
  psp_boot();
  ck_assert_uint_eq(smu(0xE, 0, NULL), MOCK_SMU_RESULT_OK);
  ck_assert_uint_eq(smu(0xF, DRVTAB, NULL), MOCK_SMU_RESULT_OK);
  ck_assert_uint_eq(mock_amd_smu_driver_table(G), DRVTAB);
  ck_assert_uint_eq(smu(0x6, 0, NULL), MOCK_SMU_RESULT_OK);
  ck_assert(mock_amd_smu_features(G));
  /* DPM: level count 2, then the frequencies */
  for (uint32_t clk = 0; clk < 4; clk++) {
    ck_assert_uint_eq(smu(0x1F, clk << 16 | 0xff, &res), MOCK_SMU_RESULT_OK);
    ck_assert_uint_eq(res & 0x7fffffff, 2);
    uint32_t f0, f1;
    smu(0x1F, clk << 16, &f0);
    smu(0x1F, clk << 16 | 1, &f1);
    ck_assert(f0 > 0 && f1 > f0);
    ck_assert_uint_eq(smu(0x19, clk << 16 | f1, NULL), MOCK_SMU_RESULT_OK);
    ck_assert_uint_eq(smu(0x1A, clk << 16 | f1, NULL), MOCK_SMU_RESULT_OK);
  }
  uint32_t mn, mx;
  mock_amd_smu_soft_limits(G, 0, &mn, &mx);
  ck_assert_uint_eq(mn, mock_amd_smu_dpm_freq(G, 0, 1));
  ck_assert_uint_eq(smu(0x1F, 5 /* GFXCLK level 5 */, NULL), MOCK_SMU_RESULT_FAILED);
  expect_fail(1, "level 5 of clock 0 does not exist");
  ck_assert_uint_eq(smu(0x32, 250, NULL), MOCK_SMU_RESULT_OK);
  ck_assert_uint_eq(mock_amd_smu_ppt_limit(G), 250);
  /* metrics table (SmuMetrics_t of SMU 14.0.2) */
  mock_amd_metrics_layout L;
  ck_assert(mock_amd_metrics_layout_of(MOCK_AMD_MOCK, &L));
  ck_assert_uint_eq(L.gfx_activity, 124);
  ck_assert_uint_eq(smu(0x12, 8, NULL), MOCK_SMU_RESULT_OK);
  uint32_t cnt1 = vrd32(DRVTAB + L.metrics_counter);
  uint16_t temp = vrd16(DRVTAB + L.avg_temperature + 2 /* TEMP_HOTSPOT */);
  uint16_t power = vrd16(DRVTAB + L.socket_power);
  uint16_t gfx = vrd16(DRVTAB + L.gfxclk_pre_ds);
  ck_assert(temp >= 20 && temp < 110);
  ck_assert(power > 0);
  ck_assert_uint_eq(gfx, mock_amd_smu_dpm_freq(G, 0, 1));
  ck_assert_uint_eq(vrd32(DRVTAB + L.curr_clock + 8), mock_amd_smu_dpm_freq(G, 2, 1));
  ck_assert_uint_eq(smu(0x12, 8, NULL), MOCK_SMU_RESULT_OK);
  ck_assert_uint_eq(vrd32(DRVTAB + L.metrics_counter), cnt1 + 1);
  ck_assert_uint_ne(vrd16(DRVTAB + L.socket_power), power); /* values change over time */
  ck_assert_uint_eq(smu(0x12, 3, NULL), MOCK_SMU_RESULT_FAILED);
  expect_fail(1, "table 3 is not modelled");
  /* unknown message: 0xFE like the real SMU; 14.0.2 has no normal Mode1Reset */
  ck_assert_uint_eq(smu(0x2F, 0, NULL), MOCK_SMU_RESULT_UNKNOWN);
  expect_fail(1, "unknown message 0x2f");
  /* a message while one is pending, and without clearing the response */
  wreg(R->smu_90, 0);
  wreg(R->smu_66, 0x2);
  wreg(R->smu_66, 0x2);
  expect_fail(1, "while the previous one is pending");
  ck_assert_uint_eq(rreg(R->smu_90), MOCK_SMU_RESULT_BUSY);
  wreg(R->smu_66, 0x2);
  expect_fail(1, "without clearing the response register");
  ck_assert_uint_eq(rreg(R->smu_90), MOCK_SMU_RESULT_OK);
  ck_assert(mock_amd_smu_nmsgs(G) > 20);
}
END_TEST

START_TEST(mode1_reset) {
  psp_boot();
  ck_assert_uint_eq(smu(0x6, 0, NULL), MOCK_SMU_RESULT_OK);
  wreg(R->scratch7, 0xA0000008u);
  wreg(R->scratch6, 1);
  /* debug mailbox, message 2 (DEBUGSMC_MSG_Mode1Reset) */
  wreg(R->smu_54, 0);
  wreg(R->smu_53, 0);
  wreg(R->smu_75, 2);
  ck_assert_uint_eq(rreg(R->smu_54), 1);
  ck_assert_uint_eq(mock_amd_mode1_resets(G), 1);
  ck_assert_uint_eq(rreg(R->psp_81), 0);
  ck_assert(!mock_amd_sos_alive(G) && !mock_amd_psp_ring(G) && !mock_amd_smu_features(G));
  ck_assert_uint_eq(rreg(R->scratch7), 0);
  ck_assert_uint_eq(rreg(R->scratch6), 0);
  ck_assert_uint_eq(rreg(R->rlc_bootload_status), 0);
  ck_assert(!mock_amd_fw_loaded(G, BG_GFX_FW_SMU));
  /* and the device boots again */
  psp_boot();
  ck_assert_uint_eq(smu(0x6, 0, NULL), MOCK_SMU_RESULT_OK);
}
END_TEST

START_TEST(gfx11_boot) {
  ck_assert_uint_eq(rreg(0xde3), 512);
  ck_assert_uint_eq(mock_amd_discovery(G)->gc_ver[0], 11);
  ck_assert_uint_eq(R->psp_35, 0x16063);
  ck_assert_uint_eq(R->rlc_bootload_status, 0xA000 + 0x4e82);
  ck_assert_uint_eq(R->mm_fb_top, 0x1A000 + 0x8ed);
  /* MP0 13.0.0: SETUP_TMR after the SMU firmware; firmware after the TMR */
  bootloader();
  ring_create();
  load_toc();
  uint32_t t[6] = {TMR, 0, MOCK_PSP_TOC_TMR_SIZE, 2, 0, 0};
  ck_assert_uint_eq(ring_submit(5, t, 6, NULL), MOCK_PSP_STATUS_ORDER);
  expect_fail(1, "before the SMU firmware was loaded");
  ck_assert_uint_eq(load_ip_fw(&FW->descs[0]), MOCK_PSP_STATUS_ORDER);
  expect_fail(1, "before SETUP_TMR");
  ck_assert_uint_eq(load_ip_fw(FW->smu), 0);
  ck_assert_uint_eq(ring_submit(5, t, 6, NULL), 0);
  ck_assert(mock_amd_tmr_set(G));
  for (int i = 0; i < FW->ndescs; i++) ck_assert_uint_eq(load_ip_fw(&FW->descs[i]), 0);
  ck_assert_uint_eq(ring_submit(0x21, NULL, 0, NULL), 0);
  ck_assert_uint_eq(rreg(R->rlc_bootload_status), 0x80000000u);
  ck_assert_uint_eq(smu(0xE, 0, NULL), 1);
  ck_assert_uint_eq(smu(0xF, DRVTAB, NULL), 1);
  ck_assert_uint_eq(smu(0x6, 0, NULL), 1);
  mock_amd_metrics_layout L;
  ck_assert(mock_amd_metrics_layout_of(MOCK_AMD_GFX11, &L));
  ck_assert_uint_eq(smu(0x12, 8, NULL), 1);
  ck_assert_uint_eq(vrd32(DRVTAB + L.metrics_counter), 1);
  ck_assert_uint_eq(vrd16(DRVTAB + L.gfxclk_pre_ds), 2500);
  /* SMU 13.0.0: normal Mode1Reset (0x2F) */
  ck_assert_uint_eq(smu(0x2F, 0, NULL), 1);
  ck_assert_uint_eq(mock_amd_mode1_resets(G), 1);
  ck_assert_uint_eq(rreg(R->psp_81), 0);
}
END_TEST

START_TEST(gfx942_bootloader) {
  const struct bg_am_discovery *d = mock_amd_discovery(G);
  ck_assert_uint_eq(d->gc_ver[0], 9);
  ck_assert_uint_eq(__builtin_popcount(d->ip[GC_HWIP].inst_mask), 8);
  ck_assert_uint_eq(R->smu_66, d->ip[MP1_HWIP].bases[0][0] + 0x282);
  ck_assert_uint_eq(R->rlc_bootload_status, 0);
  /* GC XCC 7's CP_STAT is beyond BAR5: reach it through RSMU */
  uint32_t cp7 = mock_amd_reg(G, GC_HWIP, 7, 0, 0x1a0);
  ck_assert_uint_gt(cp7, 0x80000);
  wreg(R->rsmu_index, cp7 * 4);
  ck_assert_uint_eq(rreg(R->rsmu_data), 0);
  /* MP0 13.0.6: KDB, KDB again (TOS_SPL_TABLE), SYS_DRV, SOS */
  bootloader();
  ck_assert_uint_eq(mock_amd_psp_ncmds(G), 4);
  ck_assert_uint_eq(mock_amd_psp_cmd_at(G, 1)->fw_type, BG_PSP_FW_KDB);
  ring_create();
  load_toc();
  uint32_t t[6] = {0, 0, 0, 2, 0, 0};
  ck_assert_uint_eq(ring_submit(5, t, 6, NULL), 0);
  for (int i = 0; i < FW->ndescs; i++) ck_assert_uint_eq(load_ip_fw(&FW->descs[i]), 0);
  ck_assert_uint_eq(ring_submit(0x21, NULL, 0, NULL), MOCK_PSP_STATUS_ORDER);
  expect_fail(1, "gfx9 loads the RLC with REG_LIST");
  uint32_t m[1] = {1};
  ck_assert_uint_eq(ring_submit(0x27, m, 1, NULL), 0);
  /* SMU 13.0.6 ids: GfxDriverReset(1) is the mode1 reset */
  ck_assert_uint_eq(smu(0x5, 0, NULL), 1);
  ck_assert_uint_eq(smu(0x17, 2u << 16 | 0xff, NULL), 1);
  ck_assert_uint_eq(smu(0x3, 1, NULL), 1);
  ck_assert_uint_eq(mock_amd_mode1_resets(G), 1);
  ck_assert(!mock_amd_sos_alive(G));
}
END_TEST

START_TEST(pci_reset_and_free) {
  bootloader();
  ck_assert(mock_amd_sos_alive(G));
  OK(bg_pci_reset(D));
  ck_assert(!mock_amd_sos_alive(G));
  /* the discovery table is back */
  ck_assert_uint_eq(vrd32(mock_amd_vram_size(G) - (64u << 10)), BG_AM_DISC_BINARY_SIGNATURE);
  ck_assert_uint_eq(rreg(R->psp_81), 0);
}
END_TEST

static void setup11(void) { setup_chip(MOCK_AMD_GFX11); }
static void setup942(void) { setup_chip(MOCK_AMD_GFX942); }

static TCase *tc(const char *name, void (*su)(void)) {
  TCase *t = tcase_create(name);
  tcase_add_checked_fixture(t, su, teardown);
  tcase_set_timeout(t, 60);
  return t;
}

int main(void) {
  Suite *s = suite_create("am-mock");
  TCase *t = tc("mock", setup);
  tcase_add_test(t, memsize_and_discovery);
  tcase_add_test(t, bootloader_ok);
  tcase_add_test(t, bootloader_out_of_order);
  tcase_add_test(t, bootloader_sos_first);
  tcase_add_test(t, bootloader_corrupt);
  tcase_add_test(t, bootloader_no_staging);
  tcase_add_test(t, ring_before_sos);
  tcase_add_test(t, ring_bad_and_destroy);
  tcase_add_test(t, ring_full_boot);
  tcase_add_test(t, autoload_too_early);
  tcase_add_test(t, ring_bad_commands);
  tcase_add_test(t, smu_messages);
  tcase_add_test(t, mode1_reset);
  tcase_add_test(t, pci_reset_and_free);
  suite_add_tcase(s, t);
  TCase *t11 = tc("gfx11", setup11);
  tcase_add_test(t11, gfx11_boot);
  suite_add_tcase(s, t11);
  TCase *t942 = tc("gfx942", setup942);
  tcase_add_test(t942, gfx942_bootloader);
  suite_add_tcase(s, t942);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
