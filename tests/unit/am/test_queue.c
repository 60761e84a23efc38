/* tests/unit/am/test_queue.c: the AMD queue encoders and lowering at byte level: PM4 and SDMA packets against the
 * layouts of tinygrad tinygrad/runtime/ops_amd.py AMDComputeQueue, AMDCopyQueue, and bg_cmd lowering into templates whose patches fill exactly the operand fields
 * (a re-submit that changes one variable rewrites only that variable's fields). No device needed. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "am/am_hcq.h"
#include "am/am_pm4.h"
#include "am/am_sdma_pkt.h"
#include "baregpu/error.h"
#include "hcq/tmpl.h"

#define OK(x)                                                        \
  do {                                                               \
    int r_ = (x);                                                    \
    ck_assert_msg(r_ == 0, "%s -> %d: %s", #x, r_, bg_last_error()); \
  } while (0)

static const uint64_t SIG = 0x200000003010ull; /* a signal address with both halves non-zero */

/* ---------------- encoders ---------------- */

START_TEST(test_pm4_wait_signal) {
  uint32_t dw[16];
  ck_assert_uint_eq(bg_pm4_wait_mem(dw, WAIT_REG_MEM_FUNC_GEQ, SIG, 7, 0xffffffffu), 7);
  const uint32_t want_wait[7] = {0xC0053C00u, 0x15, 0x3010, 0x2000, 7, 0xffffffffu, 4};
  ck_assert_mem_eq(dw, want_wait, sizeof(want_wait));
  ck_assert_uint_eq(bg_pm4_release_mem(dw, 11, SIG, 5, RELEASE_MEM_DATA_32, 0, true), 8);
  /* CACHE_FLUSH_AND_INV_TS_EVENT | EVENT_INDEX(5) | GLM_WB GLM_INV GLV_INV GL1_INV GL2_INV GL2_WB SEQ */
  const uint32_t want_rel[8] = {0xC0064900u, 0x0070F514u, 0x20000000u, 0x3010, 0x2000, 5, 0, 0};
  ck_assert_mem_eq(dw, want_rel, sizeof(want_rel));
  bg_pm4_release_mem(dw, 9, SIG, 5, RELEASE_MEM_DATA_32, 0, true);
  ck_assert_uint_eq(dw[1], 0x14u | 5u << 8 | 1u << 15 | 1u << 19); /* gfx9: EOP_TC_WB | EOP_TC_NC */
  bg_pm4_release_mem(dw, 12, SIG + 8, 0, RELEASE_MEM_DATA_CLOCK, 0, false);
  ck_assert_uint_eq(dw[1], 0x514u);
  ck_assert_uint_eq(dw[2], 3u << 29);
}
END_TEST

START_TEST(test_pm4_caches_dispatch) {
  uint32_t dw[16];
  ck_assert_uint_eq(bg_pm4_acquire_mem(dw, 11, BG_PM4_ALL_CACHES), 8);
  const uint32_t want_acq[8] = {0xC0065800u, 0, 0xffffffffu, 0xffffffffu, 0, 0, 0, 0xC3F1u};
  ck_assert_mem_eq(dw, want_acq, sizeof(want_acq));
  bg_pm4_acquire_mem(dw, 12, BG_PM4_DISPATCH_CACHES);
  ck_assert_uint_eq(dw[7], 0x3F0u);
  ck_assert_uint_eq(bg_pm4_acquire_mem(dw, 9, BG_PM4_ALL_CACHES), 7);
  ck_assert_uint_eq(dw[0], 0xC0055800u);
  ck_assert_uint_eq(dw[1], 1u << 29 | 1u << 27 | 1u << 23 | 1u << 22 | 1u << 18);
  ck_assert_uint_eq(dw[6], 0xA);
  ck_assert_uint_eq(bg_pm4_dispatch_direct(dw, 11, 4, 2, 1, true), 5);
  const uint32_t want_disp[5] = {0xC0031500u, 4, 2, 1, 0x8005u};
  ck_assert_mem_eq(dw, want_disp, sizeof(want_disp));
  bg_pm4_dispatch_direct(dw, 9, 1, 1, 1, true);
  ck_assert_uint_eq(dw[4], 5u); /* no wave32 on gfx9 */
  const uint32_t v[2] = {0x12, 0x34};
  ck_assert_uint_eq(bg_pm4_set_sh_reg(dw, COMPUTE_PGM_LO, v, 2), 4);
  const uint32_t want_sh[4] = {0xC0027600u, 0x20c, 0x12, 0x34};
  ck_assert_mem_eq(dw, want_sh, sizeof(want_sh));
  ck_assert_uint_eq(bg_pm4_hdp_flush(dw, 0xe26, 0xe27), 7);
  const uint32_t want_hdp[7] = {0xC0053C00u, 0x45, 0xe26, 0xe27, 0xffffffffu, 0xffffffffu, 4};
  ck_assert_mem_eq(dw, want_hdp, sizeof(want_hdp));
  ck_assert_uint_eq(bg_pm4_event_write(dw, CS_PARTIAL_FLUSH, 4), 2);
  ck_assert_uint_eq(dw[0], 0xC0004600u);
  ck_assert_uint_eq(dw[1], 0x407u);
  ck_assert_uint_eq(bg_pm4_indirect_buffer(dw, SIG, 12), 4);
  ck_assert_uint_eq(dw[3], 12u | 1u << 23);
  ck_assert_uint_eq(bg_pm4_rsrc3_reg(11), 0x228);
  ck_assert_uint_eq(bg_pm4_rsrc3_reg(9), 0x22d);
  ck_assert_str_eq(bg_pm4_opcode_name(0x49), "PACKET3_RELEASE_MEM");
  ck_assert_ptr_null(bg_pm4_opcode_name(0x99));
}
END_TEST

START_TEST(test_sdma_packets) {
  uint32_t dw[16];
  ck_assert_uint_eq(bg_sdma_copy_linear(dw, 0x1122334455ull, 0x66778899aaull, 0x40000000u), 7);
  const uint32_t want_copy[7] = {1, 0x3fffffffu, 0, 0x778899aau, 0x66, 0x22334455u, 0x11};
  ck_assert_mem_eq(dw, want_copy, sizeof(want_copy));
  ck_assert_uint_eq(bg_sdma_copy_packets(0x40000001ull, BG_SDMA_MAX_COPY_V5), 2);
  ck_assert_uint_eq(bg_sdma_copy_packets(0, BG_SDMA_MAX_COPY_V5), 0);
  ck_assert_uint_eq(bg_sdma_fence(dw, 6, SIG, 9), 4);
  const uint32_t want_fence[4] = {0x00030005u, 0x3010, 0x2000, 9};
  ck_assert_mem_eq(dw, want_fence, sizeof(want_fence));
  bg_sdma_fence(dw, 4, SIG, 9);
  ck_assert_uint_eq(dw[0], 5u);
  ck_assert_uint_eq(bg_sdma_poll_geq(dw, SIG, 3), 6);
  const uint32_t want_poll[6] = {0xD0000008u, 0x3010, 0x2000, 3, 0xffffffffu, 0x0FFF0004u};
  ck_assert_mem_eq(dw, want_poll, sizeof(want_poll));
  ck_assert_uint_eq(bg_sdma_timestamp(dw, SIG + 8), 3);
  ck_assert_uint_eq(dw[0], 0x20Du);
  ck_assert_uint_eq(dw[1], 0x3018u);
  ck_assert_uint_eq(bg_sdma_trap(dw, 0x5), 2);
  ck_assert_uint_eq(dw[0], 6u);
  ck_assert_uint_eq(bg_sdma_nop(dw, 5), 5);
  ck_assert_uint_eq(dw[0], 4u << 16);
  ck_assert_uint_eq(dw[4], 0);
  ck_assert_str_eq(bg_sdma_op_name(SDMA_OP_POLL_REGMEM), "SDMA_OP_POLL_REGMEM");
}
END_TEST

/* ---------------- lowering ---------------- */

typedef struct fixture {
  ir_ctx *ir;
  am_hcq h;
  bg_dev dev;
  bg_queue_hw q;
  bg_tmpl t;
  uint64_t slots[BG_NSLOTS];
} fixture;

static void fx_init(fixture *f, bool sdma, unsigned gfx) {
  memset(f, 0, sizeof(*f));
  f->ir = ir_new();
  ck_assert_ptr_nonnull(f->ir);
  f->h.gfx = gfx;
  f->h.sdma_major = gfx == 9 ? 4 : 6;
  f->h.max_copy = gfx == 9 ? BG_SDMA_MAX_COPY_V4 : BG_SDMA_MAX_COPY_V5;
  f->h.hdp_req = 0xe26;
  f->h.hdp_done = 0xe27;
  f->dev.priv = &f->h;
  f->q.h = &f->h;
  f->q.sdma = sdma;
  f->q.ring_bytes = 16u << 20;
  snprintf(f->q.name, sizeof(f->q.name), "%s", sdma ? "copy queue" : "compute queue");
  f->t.ir = f->ir;
}

static void fx_free(fixture *f) {
  bg_tmpl_free(&f->t);
  ir_free(f->ir);
}

static const ir_node *cst(fixture *f, uint64_t v) { return ir_const_int(f->ir, IR_DT_UINT64, (int64_t)v); }
static const ir_node *var(fixture *f, unsigned slot, const char *name) {
  const ir_node *u = ir_var(f->ir, IR_DT_UINT64, name, 0, INT64_MAX);
  f->t.slot_var[slot] = u;
  return u;
}

static uint32_t cmd_dw(const fixture *f, size_t i) {
  uint32_t v;
  memcpy(&v, f->t.cmd + 4 * i, 4);
  return v;
}

/* Bind slot values and apply; returns the number of patches written. */
static size_t apply(fixture *f, unsigned slot, uint64_t v, bool all) {
  uint64_t changed[2] = {0, 0};
  f->slots[slot] = v;
  changed[slot / 64] |= 1ull << (slot % 64);
  return bg_tmpl_apply(&f->t, f->slots, changed, all);
}

START_TEST(test_lower_sync_pm4) {
  fixture f;
  fx_init(&f, false, 11);
  bg_cmd c[4];
  memset(c, 0, sizeof(c));
  const ir_node *tl = var(&f, BG_SLOT_TIMELINE_VALUE, "timeline_value");
  c[0] = (bg_cmd){.op = BG_CMD_WAIT, .addr = var(&f, 0, "sig"), .value = cst(&f, 3)};
  c[1] = (bg_cmd){.op = BG_CMD_BARRIER};
  c[2] = (bg_cmd){.op = BG_CMD_TIMESTAMP, .addr = cst(&f, SIG)};
  c[3] = (bg_cmd){.op = BG_CMD_SIGNAL, .addr = cst(&f, SIG), .value = tl};
  OK(bg_am_hcq_lower(&f.dev, &f.q, c, 4, &f.t));
  /* wait 7 + hdp 7 + acquire 8 + release 8 + acquire 8 + release 8 */
  ck_assert_uint_eq(f.t.cmd_len, 4 * (7 + 7 + 8 + 8 + 8 + 8));
  ck_assert_uint_eq(f.t.npatches, 2); /* the wait address and the signalled value */
  apply(&f, BG_SLOT_TIMELINE_VALUE, 41, false);
  ck_assert_uint_eq(apply(&f, 0, 0x200000004000ull, true), 2);
  ck_assert_uint_eq(cmd_dw(&f, 0), 0xC0053C00u);
  ck_assert_uint_eq(cmd_dw(&f, 2), 0x4000);
  ck_assert_uint_eq(cmd_dw(&f, 3), 0x2000);
  ck_assert_uint_eq(cmd_dw(&f, 4), 3);
  ck_assert_uint_eq(cmd_dw(&f, 7), 0xC0053C00u);  /* memory barrier: HDP flush */
  ck_assert_uint_eq(cmd_dw(&f, 9), 0xe26);
  ck_assert_uint_eq(cmd_dw(&f, 14 + 7), 0xC3F1u); /* then all caches */
  size_t ts = 22;                                 /* timestamp: RELEASE_MEM of the clock to signal + 8 */
  ck_assert_uint_eq(cmd_dw(&f, ts), 0xC0064900u);
  ck_assert_uint_eq(cmd_dw(&f, ts + 2), 3u << 29);
  ck_assert_uint_eq(cmd_dw(&f, ts + 3), 0x3018);
  size_t sg = ts + 16;
  ck_assert_uint_eq(cmd_dw(&f, sg + 1), 0x0070F514u);
  ck_assert_uint_eq(cmd_dw(&f, sg + 3), 0x3010);
  ck_assert_uint_eq(cmd_dw(&f, sg + 5), 41);
  /* Re-submit with the next timeline value: one patch, one dword changes. */
  uint8_t before[256];
  memcpy(before, f.t.cmd, f.t.cmd_len);
  ck_assert_uint_eq(apply(&f, BG_SLOT_TIMELINE_VALUE, 42, false), 1);
  for (size_t i = 0; i < f.t.cmd_len / 4; i++)
    if (i != sg + 5) ck_assert_mem_eq(f.t.cmd + 4 * i, before + 4 * i, 4);
  ck_assert_uint_eq(cmd_dw(&f, sg + 5), 42);
  ck_assert_uint_eq(apply(&f, BG_SLOT_TIMELINE_VALUE, 42, false), 0); /* unchanged value: nothing written */
  fx_free(&f);
}
END_TEST

START_TEST(test_lower_copy_split) {
  fixture f;
  fx_init(&f, true, 11);
  const uint64_t n = 2 * BG_SDMA_MAX_COPY_V5 + 100;
  bg_cmd c[4];
  memset(c, 0, sizeof(c));
  c[0] = (bg_cmd){.op = BG_CMD_WAIT, .addr = cst(&f, SIG), .value = var(&f, 1, "v")};
  c[1] = (bg_cmd){.op = BG_CMD_COPY, .addr = var(&f, 0, "dst"), .value = cst(&f, 0x300000000000ull), .size = n};
  c[2] = (bg_cmd){.op = BG_CMD_TIMESTAMP, .addr = cst(&f, SIG)};
  c[3] = (bg_cmd){.op = BG_CMD_SIGNAL, .addr = cst(&f, SIG), .value = cst(&f, 7)};
  OK(bg_am_hcq_lower(&f.dev, &f.q, c, 4, &f.t));
  ck_assert_uint_eq(f.t.cmd_len, 4 * (6 + 3 * 7 + 3 + 4));
  ck_assert_uint_eq(f.t.npatches, 1 + 3);
  apply(&f, 1, 5, true);
  apply(&f, 0, 0x200000000000ull, true);
  ck_assert_uint_eq(cmd_dw(&f, 0), 0xD0000008u);
  ck_assert_uint_eq(cmd_dw(&f, 3), 5);
  for (unsigned k = 0; k < 3; k++) {
    size_t p = 6 + 7 * k;
    uint64_t off = k * BG_SDMA_MAX_COPY_V5;
    ck_assert_uint_eq(cmd_dw(&f, p), 1);
    ck_assert_uint_eq(cmd_dw(&f, p + 1), (k < 2 ? BG_SDMA_MAX_COPY_V5 : 100) - 1);
    ck_assert_uint_eq((uint64_t)cmd_dw(&f, p + 4) << 32 | cmd_dw(&f, p + 3), 0x300000000000ull + off);
    ck_assert_uint_eq((uint64_t)cmd_dw(&f, p + 6) << 32 | cmd_dw(&f, p + 5), 0x200000000000ull + off);
  }
  ck_assert_uint_eq(cmd_dw(&f, 27), 0x20Du);
  ck_assert_uint_eq(cmd_dw(&f, 28), 0x3018);
  ck_assert_uint_eq(cmd_dw(&f, 30), 0x00030005u);
  ck_assert_uint_eq(cmd_dw(&f, 33), 7);
  /* A new destination rewrites the three destination fields only. */
  ck_assert_uint_eq(apply(&f, 0, 0x200000100000ull, false), 3);
  ck_assert_uint_eq(cmd_dw(&f, 6 + 7 + 5), 0x40100000u);
  fx_free(&f);
}
END_TEST

/* A find over the PM4 stream: dword index of the first SET_SH_REG of `reg`, or 0. */
static size_t find_sh(const fixture *f, uint32_t reg) {
  for (size_t i = 0; i < f->t.cmd_len / 4;) {
    uint32_t h = cmd_dw(f, i);
    if (PACKET3_OPCODE(h) == PACKET3_SET_SH_REG && cmd_dw(f, i + 1) == reg) return i;
    i += 2 + PACKET3_COUNT(h);
  }
  return 0;
}

START_TEST(test_lower_exec) {
  fixture f;
  fx_init(&f, false, 11);
  am_prog p = {.code_va = 0x200000001100ull, .rsrc1 = 0x11, .rsrc2 = 0x22, .rsrc3 = 0x33, .wave32 = true,
               .code_props = 1u << 1 | 1u << 3 | 1u << 10, .kernarg_size = 24, .group_size = 64};
  uint8_t sizes[2] = {8, 4};
  uint32_t offs[2] = {0, 8};
  bg_program prg = {.handle = &p, .name = "k", .nargs = 2, .arg_sizes = sizes, .arg_offsets = offs, .kargs_size = 16};
  const ir_node *args[2] = {var(&f, 0, "buf"), cst(&f, 0xabcd)};
  bg_cmd c = {.op = BG_CMD_EXEC, .prg = &prg, .args = args};
  for (int k = 0; k < 3; k++) {
    c.gsz[k] = cst(&f, k == 0 ? 8 : 1);
    c.lsz[k] = k == 0 ? var(&f, 1, "lx") : cst(&f, 1);
  }
  OK(bg_am_hcq_lower(&f.dev, &f.q, &c, 1, &f.t));
  ck_assert_uint_eq(f.t.kargs_len, 32 + 64); /* kernarg_size 24 rounded to 16, then the dispatch packet */
  apply(&f, BG_SLOT_KARGS_BASE, 0x200000800000ull, true);
  apply(&f, 1, 32, true);
  apply(&f, 0, 0x200000010000ull, true);
  size_t i = find_sh(&f, COMPUTE_PGM_LO);
  ck_assert_uint_ne(i, 0);
  ck_assert_uint_eq(cmd_dw(&f, i + 2), 0x11u); /* (code >> 8) lo32, hi32 */
  ck_assert_uint_eq(cmd_dw(&f, i + 3), 0x20u);
  ck_assert_uint_eq(cmd_dw(&f, find_sh(&f, COMPUTE_PGM_RSRC1) + 2), 0x11);
  ck_assert_uint_eq(cmd_dw(&f, find_sh(&f, COMPUTE_PGM_RSRC3_GFX10) + 2), 0x33);
  i = find_sh(&f, COMPUTE_USER_DATA_0);
  ck_assert_uint_eq(PACKET3_COUNT(cmd_dw(&f, i)), 4); /* dispatch ptr + kernarg ptr */
  ck_assert_uint_eq(cmd_dw(&f, i + 2), 0x00800020u);    /* dispatch packet after 32 bytes of arguments */
  ck_assert_uint_eq(cmd_dw(&f, i + 4), 0x00800000u);
  ck_assert_uint_eq(cmd_dw(&f, i + 5), 0x2000u);
  i = find_sh(&f, COMPUTE_START_X);
  ck_assert_uint_eq(cmd_dw(&f, i + 5), 32);
  ck_assert_uint_eq(cmd_dw(&f, i + 6), 1);
  ck_assert_uint_eq(cmd_dw(&f, i + 10), 0xC0031500u); /* DISPATCH_DIRECT follows */
  ck_assert_uint_eq(cmd_dw(&f, i + 11), 8);
  ck_assert_uint_eq(cmd_dw(&f, i + 14), 0x8005u);
  uint64_t a0;
  uint32_t a1, grid_x;
  uint16_t wg_x;
  memcpy(&a0, f.t.kargs, 8);
  memcpy(&a1, f.t.kargs + 8, 4);
  ck_assert_uint_eq(a0, 0x200000010000ull);
  ck_assert_uint_eq(a1, 0xabcd);
  memcpy(&wg_x, f.t.kargs + 32 + 4, 2);
  memcpy(&grid_x, f.t.kargs + 32 + 12, 4);
  ck_assert_uint_eq(wg_x, 32);
  ck_assert_uint_eq(grid_x, 256);
  /* A new local size rewrites NUM_THREAD_X, the packet's workgroup size and grid size only. */
  ck_assert_uint_eq(apply(&f, 1, 64, false), 3);
  memcpy(&grid_x, f.t.kargs + 32 + 12, 4);
  ck_assert_uint_eq(grid_x, 512);
  fx_free(&f);
}
END_TEST

/* gfx942's AQL queue: a wait and a barrier before the exec become one vendor-specific packet whose PM4 IB (soc15
 * ACQUIRE_MEM) sits in the kernel-argument block; the exec is a KERNEL_DISPATCH packet; the signal after it another
 * vendor packet. Re-submits patch the grid, workgroup size, kernarg and IB addresses. */
START_TEST(test_lower_aql) {
  fixture f;
  fx_init(&f, false, 9);
  f.q.aql = true;
  am_prog p = {.code_va = 0x200000001100ull, .kd_va = 0x200000001000ull, .code_props = 1u << 3, .kernarg_size = 8,
               .private_size = 0, .group_size = 256};
  uint8_t sizes[1] = {8};
  uint32_t offs[1] = {0};
  bg_program prg = {.handle = &p, .name = "k", .nargs = 1, .arg_sizes = sizes, .arg_offsets = offs, .kargs_size = 8};
  const ir_node *args[1] = {var(&f, 0, "buf")};
  bg_cmd c[4];
  memset(c, 0, sizeof(c));
  c[0] = (bg_cmd){.op = BG_CMD_WAIT, .addr = cst(&f, SIG), .value = cst(&f, 3)};
  c[1] = (bg_cmd){.op = BG_CMD_BARRIER};
  c[2] = (bg_cmd){.op = BG_CMD_EXEC, .prg = &prg, .args = args};
  for (int k = 0; k < 3; k++) {
    c[2].gsz[k] = cst(&f, k == 0 ? 8 : 1);
    c[2].lsz[k] = k == 0 ? var(&f, 1, "lx") : cst(&f, 1);
  }
  c[3] = (bg_cmd){.op = BG_CMD_SIGNAL, .addr = cst(&f, SIG), .value = var(&f, BG_SLOT_TIMELINE_VALUE, "tv")};
  OK(bg_am_hcq_lower(&f.dev, &f.q, c, 4, &f.t));
  ck_assert_uint_eq(f.t.cmd_len, 3 * 64); /* vendor, dispatch, vendor */
  /* kernel arguments: IB of wait 7 + hdp 7 + gfx9 acquire 7 dwords, the 16-byte kernarg, the signal's 8-dword IB */
  ck_assert_uint_eq(f.t.kargs_len, 4 * 21 + 12 + 16 + 4 * 8);
  apply(&f, BG_SLOT_KARGS_BASE, 0x200000800000ull, true);
  apply(&f, 1, 32, true);
  apply(&f, 0, 0x200000010000ull, true);
  apply(&f, BG_SLOT_TIMELINE_VALUE, 7, true);
  ck_assert_uint_eq(cmd_dw(&f, 0), 0x00011500u);  /* BARRIER|ACQUIRE/RELEASE SYSTEM|VENDOR, amd_format PM4_IB */
  ck_assert_uint_eq(cmd_dw(&f, 1), 0xC0023F00u);  /* ib_jump_cmd: INDIRECT_BUFFER */
  ck_assert_uint_eq(cmd_dw(&f, 2), 0x00800000u);  /* the IB at the start of the kernel arguments */
  ck_assert_uint_eq(cmd_dw(&f, 3), 0x2000u);
  ck_assert_uint_eq(cmd_dw(&f, 4), 21u | 1u << 23);
  ck_assert_uint_eq(cmd_dw(&f, 5), 10);           /* dw_cnt_remain */
  uint32_t ib[21];
  memcpy(ib, f.t.kargs, sizeof(ib));
  ck_assert_uint_eq(ib[0], 0xC0053C00u);          /* WAIT_REG_MEM */
  ck_assert_uint_eq(ib[14], 0xC0055800u);         /* gfx9 ACQUIRE_MEM: 6 payload dwords */
  size_t d = 16;                                  /* the dispatch packet */
  ck_assert_uint_eq(cmd_dw(&f, d), 0x00031502u);  /* KERNEL_DISPATCH, setup 3 dimensions */
  ck_assert_uint_eq(cmd_dw(&f, d + 1), 0x00010020u); /* workgroup x 32, y 1 */
  ck_assert_uint_eq(cmd_dw(&f, d + 3), 256);      /* grid_size_x = 8 * 32 work-items */
  ck_assert_uint_eq(cmd_dw(&f, d + 7), 256);      /* group_segment_size */
  ck_assert_uint_eq(cmd_dw(&f, d + 8), 0x00001000u); /* kernel_object: the kernel descriptor */
  ck_assert_uint_eq(cmd_dw(&f, d + 10) % 16, 0);  /* kernarg_address 16-byte aligned */
  ck_assert_uint_eq(cmd_dw(&f, d + 10), 0x00800060u);
  ck_assert_uint_eq(cmd_dw(&f, d + 14), 0);       /* no completion signal */
  uint64_t a0;
  memcpy(&a0, f.t.kargs + 0x60, 8);
  ck_assert_uint_eq(a0, 0x200000010000ull);
  ck_assert_uint_eq(cmd_dw(&f, 32 + 2), 0x00800070u); /* the signal's IB after the kernarg */
  ck_assert_uint_eq(cmd_dw(&f, 32 + 4), 8u | 1u << 23);
  uint32_t rel[8];
  memcpy(rel, f.t.kargs + 0x70, sizeof(rel));
  ck_assert_uint_eq(rel[0], 0xC0064900u);
  ck_assert_uint_eq(rel[5], 7);
  /* a new local size patches only the packet's workgroup size and grid */
  ck_assert_uint_eq(apply(&f, 1, 64, false), 2);
  ck_assert_uint_eq(cmd_dw(&f, d + 3), 512);
  ck_assert_uint_eq(apply(&f, BG_SLOT_TIMELINE_VALUE, 8, false), 1);
  memcpy(rel, f.t.kargs + 0x70, sizeof(rel));
  ck_assert_uint_eq(rel[5], 8);
  /* wave32 and flat scratch init are refused on gfx9 */
  ((am_prog *)prg.handle)->wave32 = true;
  ck_assert_int_eq(bg_am_hcq_lower(&f.dev, &f.q, &c[2], 1, &f.t), -BG_EINVAL);
  fx_free(&f);
}
END_TEST

/* A kernel with private memory: scratch buffer resource in the first user SGPRs, TMPRING_SIZE and the scratch base. */
START_TEST(test_lower_exec_scratch) {
  fixture f;
  fx_init(&f, false, 12);
  f.h.scratch.va = 0x200000400000ull;
  f.h.tmpring = 0x1234;
  am_prog p = {.code_va = 0x200000002000ull, .code_props = 1u << 0 | 1u << 3, .kernarg_size = 8, .private_size = 16};
  uint8_t sizes[1] = {8};
  uint32_t offs[1] = {0};
  bg_program prg = {.handle = &p, .name = "s", .nargs = 1, .arg_sizes = sizes, .arg_offsets = offs, .kargs_size = 16};
  const ir_node *args[1] = {cst(&f, 0x1000)};
  bg_cmd c = {.op = BG_CMD_EXEC, .prg = &prg, .args = args};
  for (int k = 0; k < 3; k++) c.gsz[k] = c.lsz[k] = cst(&f, 1);
  OK(bg_am_hcq_lower(&f.dev, &f.q, &c, 1, &f.t));
  apply(&f, BG_SLOT_KARGS_BASE, 0x200000900000ull, true);
  size_t i = find_sh(&f, COMPUTE_USER_DATA_0);
  ck_assert_uint_eq(PACKET3_COUNT(cmd_dw(&f, i)), 6);
  const uint32_t want[6] = {0x00400000u, 0x2000u | 1u << 31, 0xffffffffu, 0x20c14000u, 0x00900000u, 0x2000u};
  ck_assert_mem_eq(f.t.cmd + 4 * (i + 2), want, sizeof(want));
  ck_assert_uint_eq(cmd_dw(&f, find_sh(&f, COMPUTE_TMPRING_SIZE) + 2), 0x1234);
  i = find_sh(&f, COMPUTE_DISPATCH_SCRATCH_BASE_LO);
  ck_assert_uint_eq(cmd_dw(&f, i + 2), 0x4000u); /* (va >> 8) lo32, hi32 */
  ck_assert_uint_eq(cmd_dw(&f, i + 3), 0x20u);
  fx_free(&f);
  /* User SGPRs the driver does not provide are refused by name. */
  fx_init(&f, false, 12);
  ((am_prog *)prg.handle)->code_props = 1u << 3 | 1u << 2;
  f.h.scratch.va = 0;
  ck_assert_int_eq(bg_am_hcq_lower(&f.dev, &f.q, &c, 1, &f.t), -BG_ENOTSUP);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "queue ptr"));
  fx_free(&f);
}
END_TEST

START_TEST(test_lower_errors) {
  fixture f;
  fx_init(&f, false, 11);
  bg_cmd c = {.op = BG_CMD_COPY, .addr = cst(&f, SIG), .value = cst(&f, SIG), .size = 8};
  ck_assert_int_eq(bg_am_hcq_lower(&f.dev, &f.q, &c, 1, &f.t), -BG_ENOTSUP);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "copy queue"));
  c = (bg_cmd){.op = BG_CMD_SIGNAL, .addr = cst(&f, SIG), .value = cst(&f, 1ull << 40)};
  ck_assert_int_eq(bg_am_hcq_lower(&f.dev, &f.q, &c, 1, &f.t), -BG_EINVAL);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "command 0 (signal)"));
  fx_free(&f);
  fx_init(&f, true, 11);
  c = (bg_cmd){.op = BG_CMD_BARRIER};
  ck_assert_int_eq(bg_am_hcq_lower(&f.dev, &f.q, &c, 1, &f.t), -BG_ENOTSUP);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "memory barrier"));
  fx_free(&f);
}
END_TEST

/* Without the emulated-hardware module, DEV=MOCKPCI+AMD fails naming the path tried and dlerror(). */
START_TEST(test_mock_plugin_missing) {
  setenv("BG_MOCK_PLUGIN", "/nonexistent/libbaregpu-mock.so", 1);
  bg_dev *d = NULL;
  ck_assert_int_eq(bg_dev_open("MOCKPCI+AMD", &d), -BG_ENODEV);
  ck_assert_ptr_null(d);
  ck_assert_msg(strstr(bg_last_error(), "/nonexistent/libbaregpu-mock.so (") && strstr(bg_last_error(), "BG_MOCK_PLUGIN"),
                "%s", bg_last_error());
  unsetenv("BG_MOCK_PLUGIN");
}
END_TEST

static Suite *queue_suite(void) {
  Suite *s = suite_create("am-queue");
  TCase *tc = tcase_create("encoders");
  tcase_add_test(tc, test_pm4_wait_signal);
  tcase_add_test(tc, test_pm4_caches_dispatch);
  tcase_add_test(tc, test_sdma_packets);
  tcase_add_test(tc, test_lower_aql);
  suite_add_tcase(s, tc);
  tc = tcase_create("lower");
  tcase_add_test(tc, test_lower_sync_pm4);
  tcase_add_test(tc, test_lower_copy_split);
  tcase_add_test(tc, test_lower_exec);
  tcase_add_test(tc, test_lower_exec_scratch);
  tcase_add_test(tc, test_lower_errors);
  suite_add_tcase(s, tc);
  tc = tcase_create("iface");
  tcase_add_test(tc, test_mock_plugin_missing);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(queue_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
