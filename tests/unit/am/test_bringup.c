/* tests/unit/am/test_bringup.c: the AM driver's bring-up (am/am_dev.h, am_psp.h, am_smu.h, am_boot.h) on the
 * emulated GPU of tests/mockgpu: open -> discovery -> firmware -> PSP boot -> SMU init on GC 12.0.0 / MP0 14.0.2
 * (tinygrad's reference mock) and GC 11.0.0 / MP0 13.0.0 (real TMR), with zero model failures; the PSP commands the
 * model recorded; SMU clocks and metrics; bad firmware refused with no register written; mode1 reset and reboot;
 * a wedged PSP bootloader timing out with the register named; the warm-start magic; RSMU indirection; GFX/SDMA
 * bring-up with the compute HQD and SDMA ring the CP model recorded, warm start after fini, AM_RESET=1; gfx942
 * (MI300X-like, 4 AIDs / 8 XCCs): cold and warm boots with every XCC's AQL HQD, SOC fences and SDMA routing per AID,
 * 13.0.6 metrics, mode1 reset, wrong-chip firmware, and the model refusing RDNA steps and out-of-order queues. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "am/am_boot.h"
#include "am/am_dev.h"
#include "am/am_psp.h"
#include "am/am_smu.h"
#include "am/am_gmc.h"
#include "am/am_ih.h"
#include "am/am_soc.h"
#include "am/mm_pt.h"
#include "amd_cp.h"
#include "amd_gfx9.h"
#include "amd_gmc.h"
#include "amd_gpu.h"
#include "amd_testbed.h"
#include "baregpu/error.h"
#include "fw_gen.h"

#define BDF "0000:03:00.0"
#define OK(call) ck_assert_msg((call) == 0, "%s: %s", #call, bg_last_error())

static amd_testbed TB;
static mock_amd *G; /* TB.gpu */
static const mock_amd_regmap *R;
static const char *fwdir; /* TB.fw_dir */
static char fwdir2[64];
static bg_am_dev *D;

/* register access observer; n_smu_resp: reads of the SMU mailbox's response register (C2PMSG_90) */
static unsigned long n_rd, n_wr, n_smu_resp;
static void count(void *ctx, bool write, uint32_t addr, uint32_t val) {
  (void)ctx, (void)val;
  if (write) n_wr++;
  else n_rd++;
  if (!write && D && addr == D->r[BG_AM_R_SMU90].addr) n_smu_resp++;
}

static void setup_chip(mock_amd_chip chip) {
  mock_amd_cfg cfg = {.chip = chip, .bdf = BDF};
  OK(amd_testbed_new(&TB, &cfg, "bg_bringup"));
  G = TB.gpu;
  R = mock_amd_regs(G);
  fwdir = TB.fw_dir;
  fwdir2[0] = 0;
  D = NULL;
  n_rd = n_wr = n_smu_resp = 0;
}

static void setup12(void) { setup_chip(MOCK_AMD_MOCK); }
static void setup11(void) { setup_chip(MOCK_AMD_GFX11); }
static void setup942(void) { setup_chip(MOCK_AMD_GFX942); }

static void teardown(void) {
  char msg[4096];
  unsigned nfail = amd_testbed_failures(&TB, msg, sizeof(msg));
  bg_am_dev_close(D);
  if (fwdir2[0]) amd_testbed_rm_dir(fwdir2);
  amd_testbed_free(&TB);
  ck_assert_msg(nfail == 0, "unexpected model failures:\n%s", msg);
}

static bg_am_open_opts opts(int timeout_ms) {
  bg_am_open_opts o = {.fw_dir = fwdir, .timeout_ms = timeout_ms, .settle_ms = -1, .reset_delay_ms = -1,
                       .trace = count, .trace_ctx = NULL};
  return o;
}

static void open_dev(void) {
  bg_am_open_opts o = opts(2000);
  OK(bg_am_dev_open(BDF, &o, &D));
}

/* The PSP commands the model recorded are exactly what tinygrad tinygrad/runtime/support/am/ip.py AM_PSP prescribes for this firmware set. */
static void check_psp_cmds(size_t first) {
  const bg_am_fw *fw = D->fw;
  bool v14 = D->mp0.maj >= 14;
  const uint32_t bl_types[] = {BG_PSP_FW_KDB, v14 ? BG_PSP_FW_SPL : BG_PSP_FW_KDB, BG_PSP_FW_SYS_DRV,
                               BG_PSP_FW_SOC_DRV, BG_PSP_FW_INTF_DRV, BG_PSP_FW_DBG_DRV, BG_PSP_FW_RAS_DRV,
                               BG_PSP_FW_SOS};
  const uint32_t bl_cmds[] = {0x80000, 0x10000000, 0x10000, 0xB0000, 0xD0000, 0xC0000, 0xE0000, 0x20000};
  size_t i = first, n = mock_amd_psp_ncmds(G);
  for (int k = 0; k < 8; k++) {
    if (!bg_am_fw_sos(fw, bl_types[k])) continue;
    ck_assert_uint_lt(i, n);
    const mock_amd_psp_cmd *c = mock_amd_psp_cmd_at(G, i++);
    ck_assert_msg(!c->ring && c->cmd == bl_cmds[k] && c->fw_type == bl_types[k] && c->status == 0,
                  "bootloader command %zu: cmd 0x%x type %u status 0x%x, expected 0x%x type %u", i - 1, c->cmd,
                  c->fw_type, c->status, bl_cmds[k], bl_types[k]);
  }
  uint32_t fence = 1;
#define RING(id, type)                                                                                          \
  do {                                                                                                          \
    ck_assert_uint_lt(i, n);                                                                                    \
    const mock_amd_psp_cmd *c_ = mock_amd_psp_cmd_at(G, i++);                                                   \
    ck_assert_msg(c_->ring && c_->cmd == (id) && c_->status == 0 && c_->fence == fence,                         \
                  "ring command %zu: id 0x%x type %u status 0x%x fence 0x%x, expected id 0x%x fence 0x%x", i - 1, \
                  c_->cmd, c_->fw_type, c_->status, c_->fence, (unsigned)(id), fence);                          \
    if ((id) == 6) ck_assert_uint_eq(c_->fw_type, (type));                                                      \
    fence += 16;                                                                                                \
  } while (0)
  bool gfx9 = mock_amd_chip_id(G) == MOCK_AMD_GFX942;
  RING(0x20, 0);
  if (fw->smu) RING(6, BG_GFX_FW_SMU); /* gfx9: no SMU image, its P2S tables are in the descriptor list */
  if (mock_amd_chip_id(G) == MOCK_AMD_GFX11) {
    RING(5, 0);
    ck_assert_uint_eq(mock_amd_psp_cmd_at(G, i - 1)->addr, D->bm.psp_tmr);
    ck_assert_uint_eq(mock_amd_psp_cmd_at(G, i - 1)->size, MOCK_PSP_TOC_TMR_SIZE);
  } else if (gfx9) { /* MP0 13.0.6: SETUP_TMR with no buffer (boot-time TMR, no autoload TMR) */
    RING(5, 0);
    ck_assert_uint_eq(mock_amd_psp_cmd_at(G, i - 1)->addr, 0);
    ck_assert_uint_eq(mock_amd_psp_cmd_at(G, i - 1)->size, 0);
  }
  for (int k = 0; k < fw->ndescs; k++) RING(6, fw->descs[k].fw_type);
  if (gfx9) {
    RING(6, BG_GFX_FW_REG_LIST); /* the RLC register list from sOS's PSP_RL component, no AUTOLOAD_RLC */
    RING(0x27, 0);               /* SRIOV_SPATIAL_PART mode 1 from GFX init: 8 XCCs */
  } else {
    RING(0x21, 0);
  }
#undef RING
  ck_assert_uint_eq(i, n);
}

static void full_boot_checks(void) {
  ck_assert(mock_amd_sos_alive(G));
  ck_assert(mock_amd_psp_ring(G));
  if (mock_amd_chip_id(G) == MOCK_AMD_GFX942) /* gfx9: RLC list through LOAD_IP_FW REG_LIST, no autoload */
    ck_assert(mock_amd_fw_loaded(G, BG_GFX_FW_REG_LIST) && !mock_amd_rlc_autoloaded(G));
  else
    ck_assert(mock_amd_rlc_autoloaded(G));
  ck_assert(mock_amd_smu_features(G));
  ck_assert_uint_eq(mock_amd_smu_driver_table(G), D->bm.smu_table);
  ck_assert(bg_am_psp_sos_alive(D));
}

static void boot_and_check(bool expect_tmr) {
  open_dev();
  ck_assert_uint_eq(n_wr, 0); /* open writes nothing */
  unsigned long r0 = n_rd, w0 = n_wr, s0 = n_smu_resp;
  size_t m0 = mock_amd_smu_nmsgs(G);
  bg_am_boot_report rep;
  OK(bg_am_boot(D, NULL, &rep));
  ck_assert(!rep.warm && !rep.mode1_reset);
  /* One read of the response register per SMU message: the emulated SMU answers before the first poll, and the poll's
   * read is the response (tinygrad's AM_SMU reads it once; reading it again after the poll cost 23 reads on gfx11). */
  size_t nmsg = mock_amd_smu_nmsgs(G) - m0;
  ck_assert_uint_gt(nmsg, 0);
  ck_assert_msg(n_smu_resp - s0 == nmsg, "%s: %lu reads of %s for %zu SMU messages, expected one per message",
                D->disc.arch, n_smu_resp - s0, D->r[BG_AM_R_SMU90].name, nmsg);
  printf("%s: full boot (SOC..SMU, GFX, SDMA, queues): %lu register reads, %lu writes (open: %lu reads); %d bootloader components, "
         "%d ring commands; msg1 0x%lx cmd 0x%lx fence 0x%lx ring 0x%lx tmr 0x%lx smu 0x%lx\n",
         D->disc.arch, n_rd - r0, n_wr - w0, r0, rep.bl_components, rep.ring_cmds, (unsigned long)D->bm.psp_msg1,
         (unsigned long)D->bm.psp_cmd, (unsigned long)D->bm.psp_fence, (unsigned long)D->bm.psp_ring,
         (unsigned long)D->bm.psp_tmr, (unsigned long)D->bm.smu_table);
  full_boot_checks();
  ck_assert(mock_amd_tmr_set(G) == expect_tmr);
  check_psp_cmds(0);
  ck_assert_int_eq(rep.ring_cmds, (expect_tmr ? 4 : 3) + D->fw->ndescs);
}

static void smu_checks(void) {
  uint32_t n;
  const uint32_t *f;
  for (unsigned clk = 0; clk < 4; clk++) {
    OK(bg_am_smu_read_clocks(D, clk, &n, &f));
    ck_assert_uint_eq(n, MOCK_SMU_DPM_LEVELS);
    for (unsigned l = 0; l < n; l++) ck_assert_uint_eq(f[l], mock_amd_smu_dpm_freq(G, clk, l));
  }
  OK(bg_am_smu_set_clocks(D, -1));
  uint32_t mn, mx;
  mock_amd_smu_soft_limits(G, BG_SMU_PPCLK_GFXCLK, &mn, &mx);
  ck_assert_uint_eq(mn, mock_amd_smu_dpm_freq(G, 0, 1));
  ck_assert_uint_eq(mx, mock_amd_smu_dpm_freq(G, 0, 1));
  OK(bg_am_smu_set_power_limit(D, 220));
  ck_assert_uint_eq(mock_amd_smu_ppt_limit(G), 220);
  bg_am_smu_metrics m, m2;
  OK(bg_am_smu_read_metrics(D, &m));
  ck_assert_uint_eq(m.counter, 1);
  ck_assert(m.temp_edge >= 20 && m.temp_edge < 110);
  ck_assert(m.temp_hotspot >= m.temp_edge && m.temp_hotspot < 110);
  ck_assert(m.temp_mem >= 20 && m.temp_mem < 110);
  ck_assert(m.socket_power > 0 && m.socket_power < 450);
  ck_assert_uint_le(m.gfx_activity, 100);
  ck_assert_uint_le(m.uclk_activity, 100);
  ck_assert_uint_eq(m.gfxclk, mock_amd_smu_dpm_freq(G, 0, 1));
  ck_assert_uint_eq(m.curr_clock[BG_SMU_PPCLK_UCLK], mock_amd_smu_dpm_freq(G, 2, 1));
  ck_assert_uint_eq(m.power_limit, 220);
  ck_assert(m.fan_rpm >= 800 && m.fan_pwm >= 20);
  OK(bg_am_smu_read_metrics(D, &m2));
  ck_assert_uint_eq(m2.counter, 2);
  printf("%s: metrics: edge %u C hotspot %u C mem %u C, %u W (limit %u W), gfx %u MHz, uclk %u MHz, "
         "activity gfx %u%% mem %u%%, fan %u rpm\n",
         D->disc.arch, m.temp_edge, m.temp_hotspot, m.temp_mem, m.socket_power, m.power_limit, m.gfxclk,
         m.curr_clock[BG_SMU_PPCLK_UCLK], m.gfx_activity, m.uclk_activity, m.fan_rpm);
}

/* ---------------- tests ---------------- */

START_TEST(gfx12_boot) {
  boot_and_check(false);
  smu_checks();
}
END_TEST

START_TEST(gfx11_boot) {
  boot_and_check(true);
  ck_assert_uint_ne(D->bm.psp_tmr, 0);
  ck_assert_uint_eq(D->bm.psp_tmr % 0x100000, 0);
  smu_checks();
}
END_TEST

/* Mode1 reset through the SMU drops sOS; a second boot works (explicitly, and by bg_am_boot's alive check). */
START_TEST(mode1_and_reboot) {
  open_dev();
  OK(bg_am_boot(D, NULL, NULL));
  OK(bg_am_smu_mode1_reset(D));
  ck_assert_uint_eq(mock_amd_mode1_resets(G), 1);
  ck_assert(!mock_amd_sos_alive(G) && !mock_amd_psp_ring(G) && !mock_amd_smu_features(G));
  ck_assert(!bg_am_psp_sos_alive(D));
  size_t n0 = mock_amd_psp_ncmds(G);
  bg_am_boot_report rep;
  OK(bg_am_boot(D, NULL, &rep));
  ck_assert(!rep.mode1_reset);
  full_boot_checks();
  check_psp_cmds(n0);
  /* sOS and SMU alive: the next boot resets first */
  n0 = mock_amd_psp_ncmds(G);
  OK(bg_am_boot(D, NULL, &rep));
  ck_assert(rep.mode1_reset);
  ck_assert_uint_eq(mock_amd_mode1_resets(G), 2);
  full_boot_checks();
  check_psp_cmds(n0);
  bg_am_smu_metrics m;
  OK(bg_am_smu_read_metrics(D, &m));
  ck_assert(m.socket_power > 0);
}
END_TEST

/* Bad firmware: open fails naming the file; the device saw no register write, no PSP command, no SMU message. */
static void expect_fw_refused(const char *needle) {
  bg_am_open_opts o = opts(100);
  int e = bg_am_dev_open(BDF, &o, &D);
  ck_assert_int_lt(e, 0);
  ck_assert_ptr_null(D);
  const char *msg = bg_last_error();
  ck_assert_msg(strstr(msg, needle) != NULL, "error lacks '%s': %s", needle, msg);
  ck_assert_msg(strstr(msg, "nothing was written") != NULL, "%s", msg);
  ck_assert_uint_eq(n_wr, 0);
  ck_assert_uint_gt(n_rd, 0); /* MEMSIZE was read */
  ck_assert_uint_eq(mock_amd_psp_ncmds(G), 0);
  ck_assert_uint_eq(mock_amd_smu_nmsgs(G), 0);
  printf("refused: %s\n", msg);
}

static void fw_path(bg_am_fw_file_id which, const char *dir, char *path, size_t n) {
  bg_am_fw_ips ip;
  mock_amd_chip_ips(mock_amd_chip_id(G), &ip);
  char name[64];
  ck_assert(bg_am_fw_name(&ip, which, name, sizeof(name)));
  snprintf(path, n, "%s/%s", dir, name);
}

START_TEST(fw_corrupt) {
  char p[160];
  fw_path(BG_AM_FW_RLC, fwdir, p, sizeof(p));
  FILE *f = fopen(p, "r+b");
  ck_assert_ptr_nonnull(f);
  uint8_t junk[16];
  memset(junk, 0xa5, sizeof(junk));
  fseek(f, 4, SEEK_SET); /* header_size_bytes, header versions, ip version */
  fwrite(junk, 1, sizeof(junk), f);
  fclose(f);
  expect_fw_refused(strrchr(p, '/') + 1);
}
END_TEST

START_TEST(fw_truncated) {
  char p[160];
  fw_path(BG_AM_FW_SOS, fwdir, p, sizeof(p));
  ck_assert_int_eq(truncate(p, 48), 0);
  expect_fw_refused(strrchr(p, '/') + 1);
}
END_TEST

START_TEST(fw_missing) {
  char p[160];
  fw_path(BG_AM_FW_IMU, fwdir, p, sizeof(p));
  ck_assert_int_eq(unlink(p), 0);
  expect_fw_refused(strrchr(p, '/') + 1);
}
END_TEST

START_TEST(fw_wrong_chip) {
  /* the other chip's SDMA image (6.0.0 <-> 7.0.0; 6.0.0 for 4.4.2) under this chip's name */
  bool is11 = mock_amd_chip_id(G) == MOCK_AMD_GFX11; /* gfx942 gets GFX11's 6.0.0 image as sdma_4_4_2.bin */
  snprintf(fwdir2, sizeof(fwdir2), "/tmp/bg_bringup2_XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(fwdir2));
  ck_assert_int_eq(fw_gen_chip(fwdir2, is11 ? FW_GEN_GFX12 : FW_GEN_GFX11), 0);
  char src[160], dst[160];
  snprintf(src, sizeof(src), "%s/%s", fwdir2, is11 ? "sdma_7_0_0.bin" : "sdma_6_0_0.bin");
  fw_path(BG_AM_FW_SDMA, fwdir, dst, sizeof(dst));
  ck_assert_int_eq(rename(src, dst), 0);
  expect_fw_refused(strrchr(dst, '/') + 1);
}
END_TEST

/* A PSP bootloader that never becomes ready: the wait times out naming the register and the bits. */
START_TEST(psp_timeout) {
  mock_amd_wreg(G, R->psp_35, 0x80000); /* a command without a staging address wedges the bootloader */
  ck_assert_uint_eq(mock_amd_nfail(G), 1);
  mock_amd_clear_failures(G);
  bg_am_open_opts o = opts(50);
  OK(bg_am_dev_open(BDF, &o, &D));
  int e = bg_am_boot(D, NULL, NULL);
  ck_assert_int_eq(e, -BG_ETIMEDOUT);
  const char *msg = bg_last_error();
  ck_assert_msg(strstr(msg, "regMPASP_SMN_C2PMSG_35 (0x16063) & 0x80000000") && strstr(msg, "LOAD_KEY_DATABASE"),
                "%s", msg);
  printf("timeout: %s\n", msg);
  /* a function reset clears it; then the boot works */
  OK(bg_pci_reset(D->pci));
  OK(bg_am_boot(D, NULL, NULL));
  full_boot_checks();
}
END_TEST

/* An SMU message nobody answers times out naming the response register. */
START_TEST(smu_timeout) {
  bg_am_open_opts o = opts(50);
  OK(bg_am_dev_open(BDF, &o, &D));
  /* GetDpmFreqByIndex before EnableAllSmuFeatures is answered 0xFD: an error naming the message */
  int e = bg_am_smu_send(D, BG_SMU_GetDpmFreqByIndex, 0xff, NULL, 0);
  ck_assert_int_eq(e, -BG_EIO);
  ck_assert_msg(strstr(bg_last_error(), "GetDpmFreqByIndex(0xff)") && strstr(bg_last_error(), "response 0xfd"),
                "%s", bg_last_error());
  ck_assert_uint_eq(mock_amd_nfail(G), 1);
  mock_amd_clear_failures(G);
  /* A mailbox whose response register was not cleared: the model answers busy (0xFC) */
  OK(bg_am_smu_send(D, BG_SMU_GetSmuVersion, 0, NULL, 0));
}
END_TEST

/* Our magic in SCRATCH_REG7 with a clean state: nothing is touched. tinygrad's magic is not ours. */
START_TEST(warm_start) {
  mock_amd_poke(G, R->scratch7, 0xA0000008u);
  open_dev();
  ck_assert(!bg_am_boot_check_warm(D));
  mock_amd_poke(G, R->scratch7, BG_AM_BOOT_MAGIC);
  ck_assert(bg_am_boot_check_warm(D));
  mock_amd_poke(G, R->scratch6, 1); /* previous run ended in an error state */
  ck_assert(!bg_am_boot_check_warm(D));
  mock_amd_poke(G, R->scratch6, 0);
  /* (a warm boot of this never-booted device would be refused by the CP model: no RLC autoload; see engines_*) */
  bg_am_boot_report rep;
  bg_am_boot_opts force = {.force_reset = true};
  OK(bg_am_boot(D, &force, &rep));
  ck_assert(!rep.warm);
  full_boot_checks();
}
END_TEST

/* The compute HQD and the SDMA ring the model recorded (values of the reference trace, am_mock_boot_trace.txt). */
static void check_queues(const bg_am_blocks *blk) {
  const mock_amd_hqd *q = mock_amd_cp_hqd(G);
  const mock_amd_sdma_rb *rb = mock_amd_sdma_ring(G);
  ck_assert_ptr_nonnull(q);
  ck_assert_ptr_nonnull(rb);
  ck_assert(q->active && rb->enabled);
  ck_assert_uint_eq(q->pq_control, 0x515);
  ck_assert_uint_eq(q->doorbell_control, 0x40000018);
  ck_assert_uint_eq(q->persistent_state, 0x5501);
  ck_assert_uint_eq(q->ib_control, 0x300000);
  ck_assert_uint_eq(q->mqd_control, 0x100);
  ck_assert_uint_eq(q->eop_control, 0x9);
  ck_assert_uint_eq(q->mqd, blk->gfx->mqd[0]);
  ck_assert_uint_eq(q->pq_base, blk->gfx->ring);
  ck_assert_uint_eq(q->eop_base, blk->gfx->eop);
  ck_assert_uint_eq(q->rptr_report, blk->gfx->ptrs + 0x80);
  ck_assert_uint_eq(q->wptr_poll, blk->gfx->ptrs + 0x38);
  ck_assert_uint_eq(rb->rb_cntl, 0x84182d);
  ck_assert_uint_eq(rb->doorbell, 0x10000000);
  ck_assert_uint_eq(rb->doorbell_offset, 0x800);
  ck_assert_uint_eq(rb->base, blk->sdma->ring);
  ck_assert_uint_eq(rb->rptr_addr, blk->sdma->ptrs + 0x80);
  ck_assert_uint_eq(rb->wptr_poll, blk->sdma->ptrs + 0x38);
  ck_assert_uint_eq(mock_amd_peek(G, R->scratch7), BG_AM_BOOT_MAGIC);
  ck_assert_uint_eq(mock_amd_peek(G, R->scratch6), 1);
}

/* Full boot with GFX/SDMA and both queues; fini + close; a second open + boot is warm (no PSP command, no SMU
 * message, no reset) and brings the queues up again; AM_RESET=1 forces a cold boot through a mode1 reset. */
static void engines_run(void) {
  bg_am_blocks blk = {0};
  bg_am_boot_report rep;
  open_dev();
  unsigned long r0 = n_rd, w0 = n_wr;
  OK(bg_am_boot_ex(D, NULL, &rep, &blk));
  ck_assert(!rep.warm && !rep.mode1_reset);
  printf("%s: full boot incl. GFX/SDMA/queues: %lu register reads, %lu writes (gfx %.2f ms, sdma %.2f ms); "
         "mqd 0x%lx ring 0x%lx, sdma ring 0x%lx\n",
         D->disc.arch, n_rd - r0, n_wr - w0, rep.ms_gfx, rep.ms_sdma, (unsigned long)blk.gfx->mqd[0],
         (unsigned long)blk.gfx->ring, (unsigned long)blk.sdma->ring);
  full_boot_checks();
  check_queues(&blk);
  ck_assert_uint_eq(blk.gfx->mqd[0], 0x9b000); /* tinygrad tinygrad/runtime/support/am/amdev.py AMDev.init_sw: the first MQD page */
  uint64_t mqd0 = blk.gfx->mqd[0];
  OK(bg_am_boot_fini(D, &blk));
  ck_assert(!mock_amd_cp_hqd(G)->active && !mock_amd_sdma_ring(G)->enabled);
  ck_assert_uint_eq(mock_amd_cp_hqd(G)->ndequeue, 1);
  ck_assert_uint_eq(mock_amd_peek(G, R->scratch6), 0);
  bg_am_blocks_free(&blk);
  bg_am_dev_close(D);
  D = NULL;
  /* warm */
  size_t ncmd = mock_amd_psp_ncmds(G), nmsg = mock_amd_smu_nmsgs(G);
  open_dev();
  r0 = n_rd, w0 = n_wr;
  OK(bg_am_boot_ex(D, NULL, &rep, &blk));
  ck_assert(rep.warm && !rep.mode1_reset);
  printf("%s: warm boot: %lu register reads, %lu writes\n", D->disc.arch, n_rd - r0, n_wr - w0);
  ck_assert_uint_eq(mock_amd_psp_ncmds(G), ncmd);
  /* the only SMU messages of a warm boot: set_clocks(-1), 4 clocks x (level count + 2 levels) GetDpmFreqByIndex
   * (the DPM cache is per open) + 4 x SetSoftMin/MaxByFreq */
  ck_assert_uint_eq(mock_amd_smu_nmsgs(G), nmsg + 20);
  ck_assert_uint_eq(mock_amd_mode1_resets(G), 0);
  ck_assert_uint_eq(blk.gfx->mqd[0], mqd0);
  check_queues(&blk);
  ck_assert_uint_eq(mock_amd_cp_hqd(G)->nactivate, 2);
  OK(bg_am_boot_fini(D, &blk));
  bg_am_blocks_free(&blk);
  bg_am_dev_close(D);
  D = NULL;
  /* AM_RESET=1: cold through mode1 reset */
  open_dev();
  setenv("AM_RESET", "1", 1);
  int e = bg_am_boot_ex(D, NULL, &rep, &blk);
  unsetenv("AM_RESET");
  ck_assert_msg(e == 0, "%s", bg_last_error());
  ck_assert(!rep.warm && rep.mode1_reset);
  ck_assert_uint_eq(mock_amd_mode1_resets(G), 1);
  full_boot_checks();
  check_queues(&blk);
  ck_assert_uint_eq(mock_amd_cp_hqd(G)->nactivate, 1); /* reset cleared the model's record */
  OK(bg_am_boot_fini(D, &blk));
  bg_am_blocks_free(&blk);
  bg_am_dev_close(D);
  D = NULL;
  /* fault state: a clean exit (magic, SCRATCH_REG6 == 0), then a GC UTCL2 fault left pending in
   * GCVM_L2_PROTECTION_FAULT_STATUS(_LO32): the next open is cold, through a mode1 reset, and boots cleanly */
  ck_assert_int_eq(mock_amd_vm_fault(G, 0x1b, 0, 0x7000000000ull, 0x40001), 0);
  open_dev();
  ck_assert(!bg_am_boot_check_warm(D));
  OK(bg_am_boot_ex(D, NULL, &rep, &blk));
  ck_assert(!rep.warm && rep.mode1_reset);
  ck_assert_uint_eq(mock_amd_mode1_resets(G), 2);
  full_boot_checks();
  check_queues(&blk);
  ck_assert_uint_eq(mock_amd_peek(G, R->scratch7), BG_AM_BOOT_MAGIC);
  ck_assert_uint_eq(mock_amd_peek(G, R->scratch6), 1);
  bg_am_blocks_free(&blk);
}

START_TEST(engines_gfx12) { engines_run(); }
END_TEST

START_TEST(engines_gfx11) { engines_run(); }
END_TEST

/* Registers beyond BAR5 go through RSMU_INDEX/DATA. */
START_TEST(rsmu_indirect) {
  open_dev();
  uint32_t strap2 = 0x4040000 + 0xd102;
  mock_amd_poke(G, strap2, 0x1234);
  ck_assert_uint_eq(bg_am_rreg(D, strap2), 0x1234);
  OK(bg_am_wreg(D, strap2, 0x80));
  ck_assert_uint_eq(mock_amd_peek(G, strap2), 0x80);
  ck_assert_uint_eq(mock_amd_peek(G, R->rsmu_index), strap2 * 4);
  ck_assert_str_eq(bg_am_reg_name(D, R->psp_35), "regMPASP_SMN_C2PMSG_35");
  ck_assert_str_eq(bg_am_reg_name(D, R->smu_66), "mmMP1_SMN_C2PMSG_66");
}
END_TEST

/* SOC -> GMC -> IH -> PSP -> SMU, then page tables through the mock's walker, TLB flushes, an IH fault. */
static uint32_t peekn(int hwip, enum bg_am_reg_id name) {
  uint32_t a = 0;
  OK(bg_am_nreg_addr(D, hwip, 0, name, &a));
  return mock_amd_peek(G, a);
}

static void gmc_ih_run(bool gfx12) {
  open_dev();
  unsigned long r0 = n_rd, w0 = n_wr;
  bg_am_boot_report rep;
  bg_am_blocks blk = {0};
  int e = bg_am_boot_ex(D, NULL, &rep, &blk);
  ck_assert_msg(e == 0, "boot: %s", bg_last_error());
  unsigned long brd = n_rd - r0, bwr = n_wr - w0;
  full_boot_checks();
  bg_am_gmc *gm = blk.gmc;
  bg_am_ih *ih = blk.ih;
  printf("%s: SOC+GMC+IH+PSP+SMU boot: %lu register reads, %lu writes (soc %.2f gmc %.2f ih %.2f ms)\n"
         "  boot region: root 0x%lx memscratch 0x%lx dummy 0x%lx ih0 0x%lx/0x%lx ih1 0x%lx/0x%lx msg1 0x%lx cmd 0x%lx "
         "fence 0x%lx ring 0x%lx tmr 0x%lx smu 0x%lx\n",
         D->disc.arch, brd, bwr, rep.ms_soc, rep.ms_gmc, rep.ms_ih, (unsigned long)bg_am_pt_root(gm->pt),
         (unsigned long)gm->memscratch, (unsigned long)gm->dummy, (unsigned long)ih->ring[0],
         (unsigned long)ih->wptr[0], (unsigned long)ih->ring[1], (unsigned long)ih->wptr[1],
         (unsigned long)D->bm.psp_msg1, (unsigned long)D->bm.psp_cmd, (unsigned long)D->bm.psp_fence,
         (unsigned long)D->bm.psp_ring, (unsigned long)D->bm.psp_tmr, (unsigned long)D->bm.smu_table);
  if (gfx12) { /* tinygrad tinygrad/runtime/support/am/amdev.py AMDev.init_sw allocations (mock config, MP0 14.0.2) */
    ck_assert_uint_eq(bg_am_pt_root(gm->pt), 0x0);
    ck_assert_uint_eq(gm->memscratch, 0x1000);
    ck_assert_uint_eq(gm->dummy, 0x2000);
    ck_assert_uint_eq(ih->ring[0], 0x3000);
    ck_assert_uint_eq(ih->wptr[0], 0x43000);
    ck_assert_uint_eq(ih->ring[1], 0x44000);
    ck_assert_uint_eq(ih->wptr[1], 0x84000);
    ck_assert_uint_eq(D->bm.psp_msg1, 0x100000);
    ck_assert_uint_eq(D->bm.psp_cmd, 0x85000);
    ck_assert_uint_eq(D->bm.psp_fence, 0x86000);
    ck_assert_uint_eq(D->bm.psp_ring, 0x87000);
    ck_assert_uint_eq(D->bm.smu_table, 0x97000);
    /* values of the reference trace (am_mock_boot_trace.txt) */
    ck_assert_uint_eq(peekn(MMHUB_HWIP, regMMMC_VM_SYSTEM_APERTURE_HIGH_ADDR), 0x7c0); /* FB_TOP 0x1f (hardware), trace 0x800 (0x20) */
    ck_assert_uint_eq(peekn(MMHUB_HWIP, regMMMC_VM_MX_L1_TLB_CNTL), 0x1859);
    ck_assert_uint_eq(peekn(MMHUB_HWIP, regMMVM_L2_CNTL), 0x80801);
    ck_assert_uint_eq(peekn(MMHUB_HWIP, regMMVM_L2_CNTL3), 0x80130009);
    ck_assert_uint_eq(peekn(MMHUB_HWIP, regMMVM_L2_CNTL5), 0x3fe0);
    ck_assert_uint_eq(peekn(MMHUB_HWIP, regMMVM_CONTEXT0_CNTL), 0x1fffc07);
    ck_assert_uint_eq(peekn(GC_HWIP, regGCVM_CONTEXT0_CNTL), 0x1fffc07);
    ck_assert_uint_eq(peekn(MMHUB_HWIP, regMMVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32), 0x1);
    ck_assert_uint_eq(peekn(MMHUB_HWIP, regMMVM_CONTEXT0_PAGE_TABLE_END_ADDR_HI32), 0x7);
    ck_assert_uint_eq(peekn(OSSSYS_HWIP, regIH_RB_BASE), 0x30);
    ck_assert_uint_eq(peekn(OSSSYS_HWIP, regIH_RB_CNTL), 0xc0330021);
    ck_assert_uint_eq(peekn(OSSSYS_HWIP, regIH_RB_CNTL_RING1), 0xc0100221);
    ck_assert_uint_eq(peekn(OSSSYS_HWIP, regIH_RB_WPTR_ADDR_LO), 0x43000);
    ck_assert_uint_eq(peekn(OSSSYS_HWIP, regIH_STORM_CLIENT_LIST_CNTL), 0x40000);
    ck_assert_uint_eq(peekn(NBIO_HWIP, regRCC_DEV0_EPF0_RCC_DOORBELL_APER_EN), 1);
  } else {
    ck_assert_uint_eq(peekn(OSSSYS_HWIP, regIH_RB_CNTL), 0xc0330021); /* osssys 6.0.0: same fields */
  }
  /* map a 2 MiB VRAM buffer and a host page; translate through the mock's walker on both hubs */
  unsigned inv_gc = mock_amd_tlb_invalidations(G, true), inv_mm = mock_amd_tlb_invalidations(G, false);
  uint64_t buf, va = 0x200000000000ull + 0x40000000ull, hva = va + 0x400000, host = 0x123456789000ull;
  OK(bg_am_vram_alloc(D->mm, BG_AM_VRAM_MAIN, 0x200000, 0x200000, false, &buf));
  OK(bg_am_pt_map_contig(gm->pt, va, buf, 0x200000, BG_AM_ASPACE_VRAM, BG_AM_PT_RWX));
  OK(bg_am_pt_map_pages(gm->pt, hva, &host, 1, BG_AM_ASPACE_SYS, BG_AM_PT_RWX | BG_AM_PT_SNOOPED | BG_AM_PT_UNCACHED));
  ck_assert_uint_eq(mock_amd_tlb_invalidations(G, true), inv_gc + 2);
  ck_assert_uint_eq(mock_amd_tlb_invalidations(G, false), inv_mm + 2);
  ck_assert_uint_eq(gm->nflush[BG_AM_HUB_MM], (unsigned long)inv_mm + 2);
  for (int hub = 0; hub < 2; hub++) {
    uint64_t a = 0;
    bool sys = true;
    char why[256] = "";
    ck_assert_msg(mock_amd_translate(G, hub, va + 0x1234, &a, &sys, why, sizeof(why)) == 0, "%s", why);
    ck_assert_uint_eq(a, buf + 0x1234);
    ck_assert(!sys);
    ck_assert_msg(mock_amd_translate(G, hub, hva + 0x10, &a, &sys, why, sizeof(why)) == 0, "%s", why);
    ck_assert_uint_eq(a, host + 0x10);
    ck_assert(sys);
    ck_assert_int_eq(mock_amd_translate(G, hub, hva + 0x1000, &a, &sys, why, sizeof(why)), -1);
  }
  /* IH: nothing pending; then an injected UTCL2 fault (client 0x1b, src 0) is reported with its address */
  size_t n = 99;
  ck_assert_int_eq(bg_am_ih_drain(ih, NULL, 0, &n), 0);
  ck_assert_uint_eq(n, 0);
  uint64_t fva = 0x200000dead000ull;
  ck_assert_int_eq(mock_amd_vm_fault(G, 0x1b, 0, fva, 0x40001), 0);
  bg_am_ih_entry ent[2];
  ck_assert_int_eq(bg_am_ih_drain(ih, ent, 2, &n), 1);
  ck_assert_uint_eq(n, 1);
  ck_assert_uint_eq(ent[0].client, 0x1b);
  ck_assert_uint_eq(ent[0].src, 0);
  ck_assert_uint_eq(ent[0].fault_addr, fva);
  ck_assert_uint_eq(ent[0].fault_status, 0x40001);
  ck_assert_ptr_nonnull(strstr(ih->last, "client 0x1b src 0x0"));
  ck_assert_ptr_nonnull(strstr(ih->last, "addr 0x200000dead000"));
  ck_assert_int_eq(bg_am_ih_drain(ih, NULL, 0, &n), 0); /* drained: RPTR caught up */
  ck_assert_uint_eq(n, 0);
  OK(bg_am_pt_unmap(gm->pt, va, 0x200000));
  OK(bg_am_pt_unmap(gm->pt, hva, 0x1000));
  OK(bg_am_vram_free(D->mm, buf));
  bg_am_blocks_free(&blk);
}

START_TEST(gfx12_gmc_ih) { gmc_ih_run(true); }
END_TEST

START_TEST(gfx11_gmc_ih) { gmc_ih_run(false); }
END_TEST

/* Hub bring-up order (Linux gmc_v11_0_gart_enable, gfx_v11_0_hw_init -> gfx_v11_0_gfxhub_enable): the model resets
 * the GC hub at the RLC autoload and refuses translations through a hub that was enabled but never flushed since.
 * Right after a cold boot, before any mapping, both hubs must translate and the GC hub must hold the driver's values. */
START_TEST(hub_order) {
  open_dev();
  bg_am_blocks blk = {0};
  bg_am_boot_report rep;
  ck_assert_msg(bg_am_boot_ex(D, NULL, &rep, &blk) == 0, "boot: %s", bg_last_error());
  ck_assert(!rep.warm);
  char why[512] = "";
  for (int gc = 1; gc >= 0; gc--) ck_assert_msg(mock_amd_hub_check(G, gc, why, sizeof(why)) == 0, "%s", why);
  uint32_t cntl = peekn(GC_HWIP, regGCVM_CONTEXT0_CNTL);
  ck_assert_uint_eq(cntl & 1, 1);
  ck_assert_uint_eq(cntl, peekn(MMHUB_HWIP, regMMVM_CONTEXT0_CNTL));
  ck_assert_uint_eq(peekn(GC_HWIP, regGCVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32),
                    peekn(MMHUB_HWIP, regMMVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32));
  ck_assert_uint_ge(blk.gmc->nflush[BG_AM_HUB_GC], 1);
  ck_assert_uint_ge(blk.gmc->nflush[BG_AM_HUB_MM], 1);
  bg_am_blocks_free(&blk);
}
END_TEST

/* The model's side of it: an MMHUB enabled without a TLB flush refuses to translate, naming the hub; the flush
 * clears it. */
START_TEST(hub_unflushed) {
  open_dev();
  bg_am_gmc *gm = NULL;
  OK(bg_am_soc_init(D));
  OK(bg_am_gmc_create(D, &gm));
  OK(bg_am_gmc_init_hub(gm, BG_AM_HUB_MM));
  char why[512] = "";
  ck_assert_int_eq(mock_amd_hub_check(G, false, why, sizeof(why)), -1);
  ck_assert_msg(strstr(why, "MM hub enabled") && strstr(why, "never invalidated"), "%s", why);
  uint64_t a;
  bool sys;
  ck_assert_int_eq(mock_amd_translate(G, false, 0x200000000000ull, &a, &sys, why, sizeof(why)), -1);
  ck_assert_msg(strstr(why, "MM hub enabled"), "%s", why);
  OK(bg_am_gmc_flush_tlb(gm, BG_AM_HUB_MM, 0));
  ck_assert_msg(mock_amd_hub_check(G, false, why, sizeof(why)) == 0, "%s", why);
  bg_am_gmc_destroy(gm);
}
END_TEST

/* ---------------- gfx942 (MI300X-like: 4 AIDs, 8 XCCs, 16 SDMA 4.4.2, MP0/MP1 13.0.6) ---------------- */

/* What a complete gfx942 boot leaves in the model: SOC fences on every AID, SDMA doorbell routing per AID, the PM4
 * HQD on XCC 0, the AQL HQD on every XCC (multi-XCC MQD fields), the SDMA 4.4.2 GFX ring, the spatial partition. */
static void check_queues942(const bg_am_blocks *blk) {
  const struct bg_am_discovery *di = mock_amd_discovery(G);
  bool w;
  ck_assert_uint_eq(mock_amd_xcc_fence(G, 0, &w), 0); /* no harvested XCC: nothing fenced */
  ck_assert(w);
  for (unsigned aid = 1; aid < 4; aid++) {
    ck_assert_uint_eq(mock_amd_xcc_fence(G, aid, &w), 0x10000); /* SHUB_SLV_MODE through PCIE_INDEX2 */
    ck_assert(w);
  }
  for (unsigned aid = 0; aid < 4; aid++) { /* ports 1, 2, 5, 6: {awid, offset, awaddr} per tinygrad tinygrad/runtime/support/am/ip.py AM_SDMA, size 4 */
    ck_assert_uint_eq(mock_amd_s2a(G, aid, 1), 1u | 0xeu << 1 | 0xeu << 7 | 4u << 17 | 1u << 28);
    ck_assert_uint_eq(mock_amd_s2a(G, aid, 6), 1u | 0xau << 1 | 0xau << 7 | 4u << 17 | 9u << 28);
    ck_assert_uint_eq(mock_amd_s2a(G, aid, 0), 0); /* the RDNA MEC routing is not used */
  }
  ck_assert_uint_eq(di->props.num_xcc, 8);
  const mock_amd_hqd9 *pm4 = mock_amd_gfx9_hqd(G, 0, 0);
  ck_assert_ptr_nonnull(pm4);
  ck_assert(pm4->q.active && !pm4->aql);
  ck_assert_uint_eq(pm4->q.pq_control, 0x515);
  ck_assert_uint_eq(pm4->q.doorbell_control, 0x40000018);
  ck_assert_uint_eq(pm4->q.mqd, blk->gfx->mqd[0]);
  ck_assert_uint_eq(pm4->q.pq_base, blk->gfx->ring);
  ck_assert_uint_eq(pm4->q.eop_control, 0x9);
  for (unsigned x = 1; x < 8; x++) ck_assert(!mock_amd_gfx9_hqd(G, x, 0)->q.active);
  for (unsigned x = 0; x < 8; x++) {
    const mock_amd_hqd9 *q = mock_amd_gfx9_hqd(G, x, 1);
    ck_assert_msg(q->q.active && q->aql, "XCC %u AQL queue not active", x);
    ck_assert_uint_eq(q->q.mqd, blk->gfx->mqd[1] + 0x1000ull * x);
    ck_assert_uint_eq(q->q.pq_base, blk->gfx->aql_ring);
    ck_assert_uint_eq(q->q.eop_base, blk->gfx->aql_eop);
    ck_assert_uint_eq(q->q.doorbell_control, 0x40000020); /* doorbell index 4 */
    /* 0x515 | QUEUE_FULL_EN[14] | SLOT_BASED_WPTR[25:26] = 2 | NO_UPDATE_RPTR[27] on XCCs 1..7 (gc_9_4_3_sh_mask.h) */
    ck_assert_uint_eq(q->q.pq_control, 0x4004515u | (x ? 1u << 27 : 0));
    ck_assert_uint_eq(q->xcc_id, x);
    ck_assert_uint_eq(q->tg_chunk, 1);
    ck_assert_uint_eq(q->stride, 0x1000);
  }
  const mock_amd_sdma_rb *rb = mock_amd_sdma9_ring(G);
  ck_assert(rb->enabled);
  ck_assert_uint_eq(rb->rb_cntl, 0x84102d); /* as gfx11/12's 0x84182d without F32_WPTR_POLL_ENABLE */
  ck_assert_uint_eq(rb->base, blk->sdma->ring);
  ck_assert_uint_eq(rb->doorbell_offset, 0x800); /* OFFSET[2:27] = 256 * 2 */
  ck_assert(mock_amd_fw_loaded(G, BG_GFX_FW_CP_MEC) && mock_amd_fw_loaded(G, BG_GFX_FW_SDMA0));
  ck_assert_uint_eq(mock_amd_peek(G, R->scratch7), BG_AM_BOOT_MAGIC);
  ck_assert_uint_eq(mock_amd_peek(G, R->scratch6), 1);
}

static void metrics942(void) {
  bg_am_smu_metrics m, m2;
  OK(bg_am_smu_read_metrics(D, &m));
  ck_assert(m.cdna);
  ck_assert(m.temp_hotspot >= 45 && m.temp_hotspot < 65 && m.temp_mem >= 42 && m.temp_vr >= 40);
  ck_assert(m.socket_power >= 150 && m.socket_power < 550);
  ck_assert_uint_le(m.gfx_activity, 100);
  ck_assert_uint_eq(m.gfxclk, mock_amd_smu_dpm_freq(G, 0, 1));   /* no GFXCLK limits on 13.0.6 */
  ck_assert_uint_eq(m.memclk, mock_amd_smu_dpm_freq(G, 3, 1));   /* UCLK (PPCLK 3) soft min = highest */
  ck_assert_uint_eq(m.curr_clock[BG_SMU_PPCLK_FCLK], mock_amd_smu_dpm_freq(G, 4, 1));
  OK(bg_am_smu_set_power_limit(D, 600));
  OK(bg_am_smu_read_metrics(D, &m2));
  ck_assert_uint_eq(m2.power_limit, 450); /* the model clamps PPT limits to 450 W */
  ck_assert_uint_eq(m2.counter, m.counter + 1);
  ck_assert_uint_eq(m2.throttle_acc[1] - m.throttle_acc[1], 2);
  printf("%s: metrics (MetricsTableX_t): socket %u C hbm %u C vr %u C, %u W (limit %u W), gfx %u MHz, uclk %u MHz, "
         "fclk %u MHz, busy gfx %u%% mem %u%%\n", D->disc.arch, m.temp_hotspot, m.temp_mem, m.temp_vr, m.socket_power,
         m.power_limit, m.gfxclk, m.memclk, m.curr_clock[BG_SMU_PPCLK_FCLK], m.gfx_activity, m.uclk_activity);
}

static uint32_t nreg942(int hwip, unsigned inst, enum bg_am_reg_id name) {
  uint32_t a = 0;
  OK(bg_am_nreg_addr(D, hwip, inst, name, &a));
  return a;
}

/* Cold boot, checks, fini; a second open is warm: no PSP command, only set_clocks' SMU messages, no reset, and
 * MMHUB/IH/SOC state left as it was (sentinels survive); the queues come up again. */
START_TEST(gfx942_cold_warm) {
  bg_am_blocks blk = {0};
  bg_am_boot_report rep;
  open_dev();
  ck_assert_uint_eq(n_wr, 0);
  unsigned long r0 = n_rd, w0 = n_wr;
  OK(bg_am_boot_ex(D, NULL, &rep, &blk));
  ck_assert(!rep.warm && !rep.mode1_reset);
  printf("%s: cold boot (SOC..SMU, 8 XCCs, 16 SDMA, PM4 + 8 AQL HQDs, SDMA ring): %lu register reads, %lu writes "
         "(open: %lu reads); %d bootloader components, %d ring commands, %u indirect PCIe writes\n",
         D->disc.arch, n_rd - r0, n_wr - w0, r0, rep.bl_components, rep.ring_cmds, mock_amd_pcie_writes(G));
  full_boot_checks();
  ck_assert(mock_amd_tmr_set(G));
  check_psp_cmds(0);
  ck_assert_int_eq(rep.ring_cmds, 3 + D->fw->ndescs); /* TOC, SETUP_TMR, descriptors, REG_LIST */
  check_queues942(&blk);
  ck_assert_uint_eq(blk.gfx->xccs, 8);
  metrics942();
  uint64_t mqd0 = blk.gfx->mqd[0], mqd1 = blk.gfx->mqd[1];
  OK(bg_am_boot_fini(D, &blk));
  for (unsigned x = 0; x < 8; x++) ck_assert(!mock_amd_gfx9_hqd(G, x, 1)->q.active);
  ck_assert(!mock_amd_gfx9_hqd(G, 0, 0)->q.active && !mock_amd_sdma9_ring(G)->enabled);
  ck_assert_uint_eq(mock_amd_gfx9_hqd(G, 5, 1)->q.ndequeue, 1);
  bg_am_blocks_free(&blk);
  bg_am_dev_close(D);
  D = NULL;
  /* warm */
  size_t ncmd = mock_amd_psp_ncmds(G), nmsg = mock_amd_smu_nmsgs(G);
  unsigned pcie0 = mock_amd_pcie_writes(G);
  open_dev();
  uint32_t mm3 = nreg942(MMHUB_HWIP, 3, regMMMC_VM_AGP_BOT), ih = nreg942(OSSSYS_HWIP, 0, regIH_RB_BASE);
  uint32_t fence = nreg942(NBIO_HWIP, 0, regXCC_DOORBELL_FENCE);
  mock_amd_poke(G, mm3, 0xabcde), mock_amd_poke(G, ih, 0x1234), mock_amd_poke(G, fence, 0x5a);
  r0 = n_rd, w0 = n_wr;
  OK(bg_am_boot_ex(D, NULL, &rep, &blk));
  ck_assert(rep.warm && !rep.mode1_reset);
  printf("%s: warm boot: %lu register reads, %lu writes, %u indirect PCIe writes (SDMA doorbell routing)\n",
         D->disc.arch, n_rd - r0, n_wr - w0, mock_amd_pcie_writes(G) - pcie0);
  ck_assert_uint_eq(mock_amd_psp_ncmds(G), ncmd); /* no bootloader, ring, firmware or spatial partition command */
  /* set_clocks(-1) on 13.0.6: UCLK, FCLK, SOCCLK x (level count + 2 levels) GetDpmFreqByIndex + SetSoftMinByFreq */
  ck_assert_uint_eq(mock_amd_smu_nmsgs(G), nmsg + 12);
  ck_assert_uint_eq(mock_amd_mode1_resets(G), 0);
  ck_assert_uint_eq(mock_amd_peek(G, mm3), 0xabcde); /* MMHUB hub init not redone */
  ck_assert_uint_eq(mock_amd_peek(G, ih), 0x1234);   /* IH not redone */
  ck_assert_uint_eq(mock_amd_peek(G, fence), 0x5a);  /* SOC not redone */
  ck_assert_uint_eq(blk.gfx->mqd[0], mqd0);
  ck_assert_uint_eq(blk.gfx->mqd[1], mqd1);
  check_queues942(&blk);
  ck_assert_uint_eq(mock_amd_gfx9_hqd(G, 7, 1)->q.nactivate, 2);
  OK(bg_am_boot_fini(D, &blk));
  bg_am_blocks_free(&blk);
}
END_TEST

/* Mode1 reset (GfxDriverReset(1) on MP0 13.0.6) drops everything; the next boot is cold and complete. */
START_TEST(gfx942_mode1) {
  bg_am_blocks blk = {0};
  bg_am_boot_report rep;
  open_dev();
  OK(bg_am_boot_ex(D, NULL, &rep, &blk));
  OK(bg_am_smu_mode1_reset(D));
  ck_assert_uint_eq(mock_amd_mode1_resets(G), 1);
  ck_assert_uint_eq(mock_amd_smu_msg_at(G, mock_amd_smu_nmsgs(G) - 1)->msg, 0x3); /* GfxDriverReset */
  ck_assert(!mock_amd_sos_alive(G) && !mock_amd_gfx9_hqd(G, 0, 1)->q.active && !mock_amd_sdma9_ring(G)->enabled);
  size_t n0 = mock_amd_psp_ncmds(G);
  OK(bg_am_boot_ex(D, NULL, &rep, &blk));
  ck_assert(!rep.warm && !rep.mode1_reset);
  full_boot_checks();
  check_psp_cmds(n0);
  check_queues942(&blk);
  /* alive now: the next boot resets first */
  n0 = mock_amd_psp_ncmds(G);
  OK(bg_am_boot_ex(D, NULL, &rep, &blk));
  ck_assert(rep.mode1_reset);
  ck_assert_uint_eq(mock_amd_mode1_resets(G), 2);
  check_psp_cmds(n0);
  check_queues942(&blk);
  bg_am_blocks_free(&blk);
}
END_TEST

/* The model is strict about the gfx942 sequence: RDNA-only steps and queues started out of order are refused. */
START_TEST(gfx942_strict) {
  bg_am_blocks blk = {0};
  open_dev();
  OK(bg_am_boot_ex(D, NULL, NULL, &blk));
  /* the RDNA doorbell_enable (direct S2A write) */
  OK(bg_am_nwreg(D, NBIO_HWIP, 0, regS2A_DOORBELL_ENTRY_0_CTRL, 0x30000007));
  ck_assert_uint_eq(mock_amd_nfail(G), 1);
  ck_assert_msg(strstr(mock_amd_failures(G), "written directly"), "%s", mock_amd_failures(G));
  ck_assert_uint_eq(mock_amd_s2a(G, 0, 0), 0);
  mock_amd_clear_failures(G);
  /* AUTOLOAD_RLC (gfx11/12's step 7) */
  ck_assert_int_eq(bg_am_psp_submit(D, BG_PSP_CMD_AUTOLOAD_RLC, NULL, 0, 0, NULL), -BG_EIO);
  ck_assert_msg(strstr(mock_amd_failures(G), "AUTOLOAD_RLC on GC 9.4.3"), "%s", mock_amd_failures(G));
  mock_amd_clear_failures(G);
  /* queues without SOC/PSP/GFX init: after a mode1 reset the AQL queues are refused on every XCC */
  OK(bg_am_smu_mode1_reset(D));
  OK(bg_am_gfx_setup_aql(blk.gfx));
  const char *f = mock_amd_failures(G);
  ck_assert_msg(strstr(f, "SHUB_SLV_MODE") && strstr(f, "SRIOV_SPATIAL_PART") && strstr(f, "CP_MEC_CNTL 0x50000000") &&
                strstr(f, "REG_LIST"), "%s", f);
  for (unsigned x = 0; x < 8; x++) ck_assert(!mock_amd_gfx9_hqd(G, x, 1)->q.active);
  printf("gfx942 strict: %u refusals, e.g. %.*s\n", mock_amd_nfail(G), (int)(strchr(f, '\n') - f), f);
  mock_amd_clear_failures(G);
  /* SDMA ring without SDMA init: refused */
  OK(bg_am_sdma_setup_queue(blk.sdma));
  ck_assert_msg(strstr(mock_amd_failures(G), "SDMA firmware") && strstr(mock_amd_failures(G), "doorbell routing"), "%s",
                mock_amd_failures(G));
  ck_assert(!mock_amd_sdma9_ring(G)->enabled);
  mock_amd_clear_failures(G);
  bg_am_blocks_free(&blk);
}
END_TEST

static TCase *tc(const char *name, void (*su)(void)) {
  TCase *t = tcase_create(name);
  tcase_add_checked_fixture(t, su, teardown);
  tcase_set_timeout(t, 60);
  return t;
}

int main(void) {
  Suite *s = suite_create("am-bringup");
  TCase *t = tc("gfx12", setup12);
  tcase_add_test(t, gfx12_boot);
  tcase_add_test(t, mode1_and_reboot);
  tcase_add_test(t, fw_corrupt);
  tcase_add_test(t, fw_truncated);
  tcase_add_test(t, fw_missing);
  tcase_add_test(t, fw_wrong_chip);
  tcase_add_test(t, psp_timeout);
  tcase_add_test(t, smu_timeout);
  tcase_add_test(t, warm_start);
  tcase_add_test(t, rsmu_indirect);
  tcase_add_test(t, gfx12_gmc_ih);
  tcase_add_test(t, engines_gfx12);
  tcase_add_test(t, hub_order);
  tcase_add_test(t, hub_unflushed);
  suite_add_tcase(s, t);
  TCase *t11 = tc("gfx11", setup11);
  tcase_add_test(t11, gfx11_boot);
  tcase_add_test(t11, mode1_and_reboot);
  tcase_add_test(t11, fw_wrong_chip);
  tcase_add_test(t11, gfx11_gmc_ih);
  tcase_add_test(t11, engines_gfx11);
  tcase_add_test(t11, hub_order);
  tcase_add_test(t11, hub_unflushed);
  suite_add_tcase(s, t11);
  TCase *t942 = tc("gfx942", setup942);
  tcase_add_test(t942, gfx942_cold_warm);
  tcase_add_test(t942, gfx942_mode1);
  tcase_add_test(t942, mode1_and_reboot);
  tcase_add_test(t942, fw_wrong_chip);
  tcase_add_test(t942, fw_corrupt);
  tcase_add_test(t942, gfx942_strict);
  tcase_add_test(t942, hub_order);
  suite_add_tcase(s, t942);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
