/* tests/unit/nv/test_nv_pci_boot.c: the bare-metal bring-up of nv/nv_pci.h.
 *
 * Part 1, falcon primitives (nv/nv_falcon.h) against a small falcon written here from Linux nouveau
 * nvkm/falcon/{gm200,ga102}.c and tinygrad tinygrad/runtime/support/nv/ip.py NV_FLCN: ENGINE reset starts an IMEM/DMEM scrub that lasts a few
 * HWCFG2 reads (any other falcon register written meanwhile is a recorded fault), DMATRFCMD reads "full" once after
 * each queued block (a command written while full is a fault), CPUCTL/CPUCTL_ALIAS start the CPU and it halts,
 * leaving a result in MAILBOX0. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check_helpers.h"
#include "baregpu/error.h"
#include "nv/nv_falcon.h"
#include "nv/nv_regs.h"

/* ---------------- a small falcon ---------------- */

#define NREGS 512
typedef struct fake_flcn {
  uint32_t base;
  struct { uint32_t addr, val; } regs[NREGS];
  unsigned nregs;
  bool riscv;                 /* HWCFG2.riscv */
  bool alias_en;              /* CPUCTL.alias_en */
  int scrub_left;             /* HWCFG2 reads that still report scrubbing */
  bool scrub_stuck, never_halts;
  bool full;                  /* DMATRFCMD reads full once after a queued block */
  bool started, halted;
  uint32_t mbox0_result;      /* MAILBOX0 after the halt */
  struct { uint32_t cmd, moffs, fboffs; uint64_t base; } xfer[64];
  unsigned nxfer;
  struct { uint32_t addr, val; } wlog[256];
  unsigned nw;
  char fault[256];
  /* FSP (NV_PFSP_*): the command EMEM written with auto-increment, the answer read back the same way */
  uint32_t emem_in[256], resp[8];
  unsigned nin, nresp, rpos;
  bool answers;               /* a command (QUEUE_HEAD written) gets resp[] in the message queue */
  uint32_t ememc, q_head, q_tail, mq_head, mq_tail;
} fake_flcn;

static uint32_t *slot(fake_flcn *f, uint32_t a) {
  for (unsigned i = 0; i < f->nregs; i++)
    if (f->regs[i].addr == a) return &f->regs[i].val;
  ck_assert_uint_lt(f->nregs, NREGS);
  f->regs[f->nregs].addr = a;
  f->regs[f->nregs].val = 0;
  return &f->regs[f->nregs++].val;
}

static void fault(fake_flcn *f, const char *msg, uint32_t a) {
  if (!f->fault[0]) snprintf(f->fault, sizeof(f->fault), "%s (register 0x%06x)", msg, a);
}

static int fk_read(void *ctx, uint64_t off, void *dst, size_t n) {
  fake_flcn *f = ctx;
  ck_assert_uint_eq(n, 4);
  uint32_t a = (uint32_t)off, r = f->base, v = *slot(f, a);
  if (a == NV_PFSP_QUEUE_HEAD(0)) {
    v = f->q_head;
  } else if (a == NV_PFSP_QUEUE_TAIL(0)) {
    v = f->q_tail;
  } else if (a == NV_PFSP_MSGQ_HEAD(0)) {
    v = f->mq_head;
  } else if (a == NV_PFSP_MSGQ_TAIL(0)) {
    v = f->mq_tail;
  } else if (a == NV_PFSP_EMEMD(0)) {
    if (!(f->ememc & NV_PFSP_EMEMC_AINCR)) fault(f, "EMEMD read without EMEMC.aincr", a);
    v = f->rpos < f->nresp ? f->resp[f->rpos] : 0xdeadbeef;
    f->rpos++;
  } else if (a == r + NV_PFALCON_FALCON_HWCFG2) {
    v = f->riscv ? NV_PFALCON_FALCON_HWCFG2_RISCV : 0;
    if (f->scrub_stuck || f->scrub_left > 0) v |= NV_PFALCON_FALCON_HWCFG2_MEM_SCRUBBING;
    if (f->scrub_left > 0) f->scrub_left--;
  } else if (a == r + NV_PFALCON_FALCON_DMATRFCMD) {
    v = NV_PFALCON_FALCON_DMATRFCMD_IDLE | (f->full ? NV_PFALCON_FALCON_DMATRFCMD_FULL : 0);
    f->full = false;
  } else if (a == r + NV_PFALCON_FALCON_CPUCTL) {
    v = (f->halted ? NV_PFALCON_FALCON_CPUCTL_HALTED : 0) | (f->alias_en ? NV_PFALCON_FALCON_CPUCTL_ALIAS_EN : 0);
  } else if (a == r + NV_PRISCV_RISCV_BCR_CTRL) {
    v |= NV_PRISCV_RISCV_BCR_CTRL_VALID;
  }
  memcpy(dst, &v, 4);
  return 0;
}

static void start(fake_flcn *f) {
  f->started = true;
  if (f->never_halts) return;
  f->halted = true;
  *slot(f, f->base + NV_PFALCON_FALCON_MAILBOX0) = f->mbox0_result;
}

static int fk_write(void *ctx, uint64_t off, const void *src, size_t n) {
  fake_flcn *f = ctx;
  ck_assert_uint_eq(n, 4);
  uint32_t a = (uint32_t)off, r = f->base, v;
  memcpy(&v, src, 4);
  if (f->nw < 256) {
    f->wlog[f->nw].addr = a;
    f->wlog[f->nw++].val = v;
  }
  if (a != r + NV_PFALCON_FALCON_ENGINE && (f->scrub_left > 0 || f->scrub_stuck))
    fault(f, "falcon register written while IMEM/DMEM scrubbing is in progress", a);
  if (a == NV_PFSP_EMEMC(0)) {
    f->ememc = v;
    f->rpos = 0;
  } else if (a == NV_PFSP_EMEMD(0)) {
    if (!(f->ememc & NV_PFSP_EMEMC_AINCW)) fault(f, "EMEMD written without EMEMC.aincw", a);
    if (f->nin < 256) f->emem_in[f->nin++] = v;
  } else if (a == NV_PFSP_QUEUE_TAIL(0)) {
    f->q_tail = v;
  } else if (a == NV_PFSP_QUEUE_HEAD(0)) {
    f->q_head = v;
    if (f->q_tail + 4 != f->nin * 4) fault(f, "QUEUE_TAIL is not the offset of the last dword written", a);
    f->q_head = f->q_tail = 0; /* consumed */
    if (f->answers) f->mq_head = 0, f->mq_tail = f->nresp * 4 - 4;
  } else if (a == NV_PFSP_MSGQ_TAIL(0)) {
    f->mq_tail = v;
  } else if (a == NV_PFSP_MSGQ_HEAD(0)) {
    f->mq_head = v;
  } else if (a == r + NV_PFALCON_FALCON_ENGINE) {
    if (!(v & NV_PFALCON_FALCON_ENGINE_RESET)) f->scrub_left = 3;
    f->halted = f->started = false;
  } else if (a == r + NV_PFALCON_FALCON_DMATRFCMD) {
    if (f->full) fault(f, "DMATRFCMD written while the DMA queue is full", a);
    if (f->nxfer < 64) {
      uint64_t base = *slot(f, r + NV_PFALCON_FALCON_DMATRFBASE) |
                      ((uint64_t)*slot(f, r + NV_PFALCON_FALCON_DMATRFBASE1) << 32);
      f->xfer[f->nxfer].cmd = v;
      f->xfer[f->nxfer].moffs = *slot(f, r + NV_PFALCON_FALCON_DMATRFMOFFS);
      f->xfer[f->nxfer].fboffs = *slot(f, r + NV_PFALCON_FALCON_DMATRFFBOFFS);
      f->xfer[f->nxfer++].base = base << 8;
    }
    f->full = true;
  } else if (a == r + NV_PFALCON_FALCON_CPUCTL && (v & NV_PFALCON_FALCON_CPUCTL_STARTCPU)) {
    if (f->alias_en) fault(f, "CPUCTL.startcpu with alias_en set (CPUCTL_ALIAS expected)", a);
    start(f);
  } else if (a == r + NV_PFALCON_FALCON_CPUCTL_ALIAS && (v & NV_PFALCON_FALCON_CPUCTL_ALIAS_STARTCPU)) {
    if (!f->alias_en) fault(f, "CPUCTL_ALIAS without alias_en", a);
    start(f);
  }
  *slot(f, a) = v;
  return 0;
}

static const bg_mmio_ops FK_OPS = {fk_read, fk_write};
static const bg_pci_ops NO_PCI_OPS = {0};

typedef struct rig {
  fake_flcn f;
  bg_nv_pci_priv p;
} rig;

static rig *rig_new(uint32_t base) {
  rig *g = calloc(1, sizeof(*g));
  ck_assert_ptr_nonnull(g);
  g->f.base = base;
  g->p.pub.pci = bg_pci_dev_new(&NO_PCI_OPS, "fake:01:00.0", 0);
  ck_assert_ptr_nonnull(g->p.pub.pci);
  g->p.pub.bar0 = (bg_mmio){NULL, 16u << 20, &FK_OPS, &g->f};
  g->p.pub.boot0 = 0x172000a1;
  return g;
}

static void rig_free(rig *g) {
  ck_assert_msg(g->f.fault[0] == 0, "falcon model fault: %s", g->f.fault);
  bg_pci_close(g->p.pub.pci);
  free(g);
}

static int wlog_find(const fake_flcn *f, uint32_t a, uint32_t v, unsigned from) {
  for (unsigned i = from; i < f->nw; i++)
    if (f->wlog[i].addr == a && f->wlog[i].val == v) return (int)i;
  return -1;
}

/* ---------------- reset ---------------- */

START_TEST(reset_falcon_core) {
  rig *g = rig_new(NV_FALCON_BASE_GSP);
  g->f.riscv = true;
  OK(bg_nv_falcon_reset(&g->p.pub, &bg_nv_falcon_gsp, false));
  int on = wlog_find(&g->f, NV_FALCON_BASE_GSP + NV_PFALCON_FALCON_ENGINE, 1, 0);
  int off = wlog_find(&g->f, NV_FALCON_BASE_GSP + NV_PFALCON_FALCON_ENGINE, 0, 0);
  ck_assert_int_ge(on, 0);
  ck_assert_int_gt(off, on);
  int bcr = wlog_find(&g->f, NV_FALCON_BASE_GSP + NV_PRISCV_RISCV_BCR_CTRL, 0, (unsigned)off);
  ck_assert_int_gt(bcr, off);
  ck_assert_int_gt(wlog_find(&g->f, NV_FALCON_BASE_GSP + NV_PFALCON_FALCON_RM, 0x172000a1, (unsigned)bcr), bcr);
  ck_assert_int_eq(g->f.scrub_left, 0);
  ck_assert_uint_gt(g->p.pub.reg_writes, 3);
  rig_free(g);
}
END_TEST

START_TEST(reset_riscv_core) {
  rig *g = rig_new(NV_FALCON_BASE_GSP);
  g->f.riscv = true;
  OK(bg_nv_falcon_reset(&g->p.pub, &bg_nv_falcon_gsp, true));
  ck_assert_int_ge(wlog_find(&g->f, NV_FALCON_BASE_GSP + NV_PRISCV_RISCV_BCR_CTRL, 0x110, 0), 0);
  ck_assert_int_lt(wlog_find(&g->f, NV_FALCON_BASE_GSP + NV_PFALCON_FALCON_RM, 0x172000a1, 0), 0);
  rig_free(g);
}
END_TEST

START_TEST(reset_scrub_timeout_named) {
  setenv("BG_WAIT_TIMEOUT_MS", "50", 1);
  rig *g = rig_new(NV_FALCON_BASE_SEC2);
  g->f.scrub_stuck = true;
  FAILS(bg_nv_falcon_reset(&g->p.pub, &bg_nv_falcon_sec2, false), BG_EHANG, "falcon SEC2");
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "SEC2 NV_PFALCON_FALCON_HWCFG2 (0x8400f4)"));
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "scrubbing"));
  g->f.scrub_stuck = false;
  rig_free(g);
  unsetenv("BG_WAIT_TIMEOUT_MS");
}
END_TEST

/* ---------------- DMA ---------------- */

START_TEST(dma_blocks) {
  rig *g = rig_new(NV_FALCON_BASE_GSP);
  uint64_t src = 0x12345600ull << 8; /* above 4 GiB: DMATRFBASE1 carries the high bits */
  OK(bg_nv_falcon_dma(&g->p.pub, &bg_nv_falcon_gsp, 0x614, 0x100, 0x2000, src, 0x280)); /* 2.5 blocks: 3 */
  ck_assert_uint_eq(g->f.nxfer, 3);
  for (unsigned i = 0; i < 3; i++) {
    ck_assert_uint_eq(g->f.xfer[i].cmd, 0x614);
    ck_assert_uint_eq(g->f.xfer[i].moffs, 0x100 + 256 * i);
    ck_assert_uint_eq(g->f.xfer[i].fboffs, 0x2000 + 256 * i);
    ck_assert_uint_eq(g->f.xfer[i].base, src);
  }
  FAILS(bg_nv_falcon_dma(&g->p.pub, &bg_nv_falcon_gsp, 0x614, 0, 0, 0x1080, 0x100), BG_EINVAL, "256-byte aligned");
  rig_free(g);
}
END_TEST

/* ---------------- heavy-secure execution ---------------- */

static bg_nv_hs_ucode booter_like(void) {
  return (bg_nv_hs_ucode){.what = "Booter", .image_pa = 0x4000000, .code_off = 0x1000, .data_off = 0x3000,
                          .imem_pa = 0, .imem_va = 0x1000, .imem_size = 0x200, .dmem_pa = 0, .dmem_va = 0,
                          .dmem_size = 0x100, .pkc_off = 0x10, .engine_id_mask = 1, .ucode_id = 3, .mailbox = true,
                          .mailbox_in = 0x123456789000ull};
}

START_TEST(execute_hs_loads_and_runs) {
  rig *g = rig_new(NV_FALCON_BASE_SEC2);
  g->f.alias_en = true;
  g->f.mbox0_result = 0xabc;
  bg_nv_hs_ucode u = booter_like();
  uint32_t m[2] = {1, 1};
  OK(bg_nv_falcon_execute_hs(&g->p.pub, &bg_nv_falcon_sec2, &u, m));
  ck_assert_uint_eq(m[0], 0xabc);
  ck_assert_uint_eq(m[1], 0x1234);
  const uint32_t B = NV_FALCON_BASE_SEC2;
  /* IMEM: 2 secure blocks from image + code_off - imem_va; DMEM: 1 block from image + data_off */
  ck_assert_uint_eq(g->f.nxfer, 3);
  ck_assert_uint_eq(g->f.xfer[0].cmd, 0x614);
  ck_assert_uint_eq(g->f.xfer[0].base, 0x4000000);
  ck_assert_uint_eq(g->f.xfer[0].fboffs, 0x1000);
  ck_assert_uint_eq(g->f.xfer[1].fboffs, 0x1100);
  ck_assert_uint_eq(g->f.xfer[2].cmd, 0x600);
  ck_assert_uint_eq(g->f.xfer[2].base, 0x4003000);
  ck_assert_uint_eq(*slot(&g->f, B + NV_PFALCON2_FALCON_BROM_PARAADDR(0)), 0x10);
  ck_assert_uint_eq(*slot(&g->f, B + NV_PFALCON2_FALCON_BROM_ENGIDMASK), 1);
  ck_assert_uint_eq(*slot(&g->f, B + NV_PFALCON2_FALCON_BROM_CURR_UCODE_ID), 3);
  ck_assert_uint_eq(*slot(&g->f, B + NV_PFALCON2_FALCON_MOD_SEL), 1);
  ck_assert_uint_eq(*slot(&g->f, B + NV_PFALCON_FALCON_BOOTVEC), 0x1000);
  ck_assert_uint_eq(*slot(&g->f, B + NV_PFALCON_FBIF_TRANSCFG(0)) & 7, 4);
  ck_assert(*slot(&g->f, B + NV_PFALCON_FBIF_CTL) & NV_PFALCON_FBIF_CTL_ALLOW_PHYS_NO_CTX);
  /* mailboxes written before the start: MAILBOX1 holds the high half the falcon never overwrote */
  int mb = wlog_find(&g->f, B + NV_PFALCON_FALCON_MAILBOX0, 0x56789000, 0);
  int st = wlog_find(&g->f, B + NV_PFALCON_FALCON_CPUCTL_ALIAS, 2, 0);
  ck_assert_int_ge(mb, 0);
  ck_assert_int_gt(st, mb);
  rig_free(g);
}
END_TEST

START_TEST(execute_hs_startcpu_without_alias) {
  rig *g = rig_new(NV_FALCON_BASE_GSP);
  bg_nv_hs_ucode u = booter_like();
  u.mailbox = false;
  uint32_t m[2];
  OK(bg_nv_falcon_execute_hs(&g->p.pub, &bg_nv_falcon_gsp, &u, m));
  ck_assert(g->f.started);
  ck_assert_int_ge(wlog_find(&g->f, NV_FALCON_BASE_GSP + NV_PFALCON_FALCON_CPUCTL, 2, 0), 0);
  ck_assert_int_lt(wlog_find(&g->f, NV_FALCON_BASE_GSP + NV_PFALCON_FALCON_MAILBOX0, 0x56789000, 0), 0);
  rig_free(g);
}
END_TEST

START_TEST(execute_hs_halt_timeout_named) {
  setenv("BG_WAIT_TIMEOUT_MS", "50", 1);
  rig *g = rig_new(NV_FALCON_BASE_SEC2);
  g->f.never_halts = true;
  bg_nv_hs_ucode u = booter_like();
  uint32_t m[2];
  FAILS(bg_nv_falcon_execute_hs(&g->p.pub, &bg_nv_falcon_sec2, &u, m), BG_EHANG, "Booter");
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "SEC2 NV_PFALCON_FALCON_CPUCTL"));
  rig_free(g);
  unsetenv("BG_WAIT_TIMEOUT_MS");
}
END_TEST

START_TEST(execute_hs_source_below_zero) {
  rig *g = rig_new(NV_FALCON_BASE_GSP);
  bg_nv_hs_ucode u = booter_like();
  u.image_pa = 0;
  u.code_off = 0;
  uint32_t m[2];
  FAILS(bg_nv_falcon_execute_hs(&g->p.pub, &bg_nv_falcon_gsp, &u, m), BG_EINVAL, "below its virtual base");
  ck_assert_uint_eq(g->f.nw, 0);
  rig_free(g);
}
END_TEST

/* ---------------- FSP: the COT message and FSP's answer (nv_boot_fsp.c) ---------------- */

/* A good answer: MCTP SOM|EOM, NVDM vendor PCI / 0x10de / FSP_RESPONSE, taskId, commandNvdmType COT, errorCode 0. */
static rig *fsp_rig(void) {
  rig *g = rig_new(NV_FALCON_BASE_GSP); /* HWCFG2 of GSP: riscv_br_priv_lockdown clear */
  uint32_t good[5] = {0xc0000000u, 0x7eu | 0x10deu << 8 | 0x15u << 24, 0, 0x14, 0};
  memcpy(g->f.resp, good, sizeof(good));
  g->f.nresp = 5;
  g->f.answers = true;
  return g;
}

static bg_nv_fsp_boot fsp_msg(void) {
  bg_nv_fsp_boot b;
  memset(&b, 0, sizeof(b));
  for (unsigned i = 0; i < 12; i++) b.msg[i * 4] = (uint8_t)(i + 1);
  b.msg_len = 48;
  return b;
}

START_TEST(fsp_cot_answer_checked) {
  rig *g = fsp_rig();
  bg_nv_fsp_boot b = fsp_msg();
  OK(bg_nv_boot_fsp_run(&g->p.pub, &b));
  ck_assert_uint_eq(g->f.nin, 12);
  for (unsigned i = 0; i < 12; i++) ck_assert_uint_eq(g->f.emem_in[i], i + 1);
  ck_assert_uint_eq(g->f.rpos, 5);                       /* the whole answer read */
  ck_assert_uint_eq(g->f.mq_head, g->f.mq_tail);         /* and consumed */
  ck_assert_str_eq(g->p.pub.steps[0].name, "FSP chain of trust");
  rig_free(g);
}
END_TEST

START_TEST(fsp_cot_refusals_named) {
  static const struct { unsigned word; uint32_t v; const char *needle; } bad[] = {
      {4, 0x5, "errorCode 0x00000005"},
      {3, 0x13, "answers NVDM type 0x13"},
      {1, 0x7eu | 0x10deu << 8 | 0x14u << 24, "NVDM header"},
      {0, 0x40000000u, "MCTP header"},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    rig *g = fsp_rig();
    g->f.resp[bad[i].word] = bad[i].v;
    bg_nv_fsp_boot b = fsp_msg();
    FAILS(bg_nv_boot_fsp_run(&g->p.pub, &b), BG_EIO, bad[i].needle);
    rig_free(g);
  }
  setenv("BG_WAIT_TIMEOUT_MS", "50", 1);
  rig *g = fsp_rig();
  g->f.answers = false;
  bg_nv_fsp_boot b = fsp_msg();
  FAILS(bg_nv_boot_fsp_run(&g->p.pub, &b), BG_EHANG, "no response to the COT command");
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "NV_PFSP_MSGQ_HEAD(0)"));
  rig_free(g);
  unsetenv("BG_WAIT_TIMEOUT_MS");
}
END_TEST

START_TEST(register_names) {
  char b[96];
  ck_assert_str_eq(bg_nv_reg_name(NV_PMC_BOOT_42, b, sizeof(b)), "NV_PMC_BOOT_42");
  ck_assert_str_eq(bg_nv_reg_name(0x1100f4, b, sizeof(b)), "GSP NV_PFALCON_FALCON_HWCFG2");
  ck_assert_str_eq(bg_nv_reg_name(0x8241c8, b, sizeof(b)), "NV_FUSE_OPT_FPF_GSP_UCODE3_VERSION");
  ck_assert_ptr_null(bg_nv_reg_name(0x123458, b, sizeof(b)));
}
END_TEST


#ifdef BG_TEST_NVPCI
void nv_pci_boot_emu_tests(Suite *s); /* test_nv_pci_boot_emu.c */
#endif

static Suite *suite(void) {
  Suite *s = suite_create("nv-pci-boot");
  TCase *t = tcase_create("falcon");
  tcase_set_timeout(t, 30);
  tcase_add_test(t, reset_falcon_core);
  tcase_add_test(t, reset_riscv_core);
  tcase_add_test(t, reset_scrub_timeout_named);
  tcase_add_test(t, dma_blocks);
  tcase_add_test(t, execute_hs_loads_and_runs);
  tcase_add_test(t, execute_hs_startcpu_without_alias);
  tcase_add_test(t, execute_hs_halt_timeout_named);
  tcase_add_test(t, execute_hs_source_below_zero);
  tcase_add_test(t, register_names);
  tcase_add_test(t, fsp_cot_answer_checked);
  tcase_add_test(t, fsp_cot_refusals_named);
  suite_add_tcase(s, t);
#ifdef BG_TEST_NVPCI
  nv_pci_boot_emu_tests(s);
#endif
  return s;
}

int main(void) {
  SRunner *r = srunner_create(suite());
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
