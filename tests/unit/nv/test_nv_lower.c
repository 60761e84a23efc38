/* tests/unit/nv/test_nv_lower.c: lowering recorded HCQ commands to NV pushbuffers (nv/nv_lower.c) on a fake nv_gpu
 * and bg_dev set up here (no GPU, no kernel module): the command bytes and the kernel-argument block (constant bank
 * 0 + QMD) the template holds, which fields became patches, that re-applying after one variable changed rewrites only
 * that variable's bytes, chunked copies, launch limits and the channel setup pushbuffer. Then program loading
 * (nv/nv_prog.c) on the emulated Hopper (MOCKNVK+NV through the mock plugin) with cubins ptxas makes here: the QMD
 * template, local memory, and the checks against bg_program_info (skipped, saying why, without ptxas or the plugin),
 * and staged host <-> device copies (nv/nv_copy.c).
 *
 * Expected values are written from NVIDIA's headers independently of nv_qmd.c's tables: QMD dword indices are
 * bit / 32 of the MW(hi:lo) in open-gpu-doc clc6c0qmd.h / clcbc0qmd.h / clcec0qmd.h; methods from clc56f.h, clc6c0.h,
 * clc6b5.h. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check_helpers.h"
#include "compile/ptx_compile.h"
#include "hcq/tmpl.h"
#include "nv/nv_hcq.h"
#include "nv/nv_push.h"
#include "nv/nv_qmd.h"

#define KARGS_BASE 0x1000000000ull
#define LOCAL_VA 0x7f00000000ull

typedef struct fx {
  bg_dev d;
  nv_gpu g;
  bg_queue_hw hq;
  nv_prog p;
  uint32_t offs[2], sizes[2];
  uint8_t arg_sizes[2];
  bg_program prg;
  bg_buf kargs_buf;
  bg_tmpl t;
  const ir_node *buf, *gx, *dst;
} fx;

static fx *fx_new(int ver, unsigned sm, enum bg_queue_kind kind) {
  fx *f = calloc(1, sizeof(*f));
  ck_assert_ptr_nonnull(f);
  pthread_mutex_init(&f->g.lock, NULL);
  f->g.sm = sm;
  f->g.cls.qmd_version = ver;
  f->g.cls.compute = 0xcbc0;
  f->g.cls.copy = 0xc8b5;
  f->g.local_mem.va = LOCAL_VA;
  f->g.local_bytes_per_tpc = 0x240000;
  f->d.priv = &f->g;
  snprintf(f->d.name, sizeof(f->d.name), "fake");
  f->kargs_buf.mem.va = KARGS_BASE;
  f->kargs_buf.mem.size = 1 << 20;
  f->d.kargs_buf = &f->kargs_buf;
  f->hq.g = &f->g;
  f->hq.kind = kind;
  snprintf(f->hq.name, sizeof(f->hq.name), "%s channel", kind == BG_QUEUE_COPY ? "copy" : "compute");
  /* a kernel (const u64 *buf, u32 n): parameters at 0x210 (+0, +8) of a 0x220-byte constant bank 0 */
  snprintf(f->p.name, sizeof(f->p.name), "k");
  f->p.qmd_version = ver;
  f->p.param_base = 0x210;
  f->p.cb0_size = 0x220;
  f->p.nparams = 2;
  f->offs[0] = 0, f->offs[1] = 8, f->sizes[0] = 8, f->sizes[1] = 4;
  f->p.param_offsets = f->offs;
  f->p.param_sizes = f->sizes;
  f->p.max_threads = 1024;
  f->p.regs = 16;
  OK(bg_nv_qmd_set(f->p.qmd, ver, BG_QMD_QMD_MAJOR_VERSION, 0, (uint64_t)ver));
  f->arg_sizes[0] = 8, f->arg_sizes[1] = 4;
  f->prg.dev = &f->d;
  f->prg.handle = &f->p;
  f->prg.name = f->p.name;
  f->prg.nargs = 2;
  f->prg.arg_sizes = f->arg_sizes;
  f->t.ir = ir_new();
  ck_assert_ptr_nonnull(f->t.ir);
  f->buf = f->t.slot_var[0] = ir_var(f->t.ir, IR_DT_UINT64, "buf", 0, INT64_MAX);
  f->gx = f->t.slot_var[1] = ir_var(f->t.ir, IR_DT_UINT64, "gx", 1, 1024);
  f->dst = f->t.slot_var[2] = ir_var(f->t.ir, IR_DT_UINT64, "dst", 0, INT64_MAX);
  return f;
}

static void fx_free(fx *f) {
  ir_free(f->t.ir);
  bg_tmpl_free(&f->t);
  pthread_mutex_destroy(&f->g.lock);
  free(f);
}

static const ir_node *C(fx *f, uint64_t v) { return ir_const_int(f->t.ir, IR_DT_UINT64, (int64_t)v); }

static uint32_t cmd_dw(const fx *f, size_t i) {
  uint32_t v;
  ck_assert_uint_le((i + 1) * 4, f->t.cmd_len);
  memcpy(&v, f->t.cmd + i * 4, 4);
  return v;
}

static uint32_t kargs_dw(const fx *f, size_t byte) {
  uint32_t v;
  ck_assert_uint_le(byte + 4, f->t.kargs_len);
  memcpy(&v, f->t.kargs + byte, 4);
  return v;
}

/* wait(const) ; exec k(buf, 5) grid (gx, 2, 1) block (64, 1, 1) ; signal(const, 7) */
static void record_exec(fx *f, bg_cmd cmds[3], const ir_node *args[2]) {
  memset(cmds, 0, 3 * sizeof(bg_cmd));
  cmds[0] = (bg_cmd){.op = BG_CMD_WAIT, .addr = C(f, 0x1000000100ull), .value = C(f, 0xaabbccdd00000007ull)};
  args[0] = f->buf;
  args[1] = C(f, 5);
  cmds[1].op = BG_CMD_EXEC;
  cmds[1].prg = &f->prg;
  cmds[1].args = args;
  cmds[1].gsz[0] = f->gx, cmds[1].gsz[1] = C(f, 2), cmds[1].gsz[2] = C(f, 1);
  cmds[1].lsz[0] = C(f, 64), cmds[1].lsz[1] = C(f, 1), cmds[1].lsz[2] = C(f, 1);
  cmds[2] = (bg_cmd){.op = BG_CMD_SIGNAL, .addr = C(f, 0x1000000200ull), .value = C(f, 7)};
}

static void apply(fx *f, uint64_t buf, uint64_t gx, uint64_t kargs, bool all) {
  uint64_t slots[BG_NSLOTS] = {0};
  slots[0] = buf, slots[1] = gx, slots[BG_SLOT_KARGS_BASE] = kargs;
  uint64_t changed[2] = {~0ull, ~0ull};
  bg_tmpl_apply(&f->t, slots, changed, all);
}

/* Byte offsets where a and b differ, as [first, last] (first > last: none). */
static void diff_range(const uint8_t *a, const uint8_t *b, size_t n, size_t *first, size_t *last, size_t *count) {
  *first = n, *last = 0, *count = 0;
  for (size_t i = 0; i < n; i++)
    if (a[i] != b[i]) {
      if (*first == n) *first = i;
      *last = i;
      (*count)++;
    }
}

/* Per QMD version: dword of GRID_WIDTH, of CONSTANT_BUFFER_ADDR_LOWER(0) and its shift, of CTA_THREAD_DIMENSION0 (and the bit shift within it),
 * of QMD_MAJOR_VERSION (and the bit shift within it), and the QMD size. */
typedef struct { int ver; unsigned grid_dw, cb_dw, cb_shift, block_dw, block_sh, major_dw, major_sh, bytes; } qmd_pos;
static const qmd_pos positions[] = {
  {3, 12, 32, 0, 18, 16, 18, 4, 256}, /* CTA_RASTER_WIDTH 415:384, CB_ADDR_LOWER 1055:1024, DIM0 607:592, MAJOR 583:580 */
  {4, 32, 48, 6, 36, 0, 18, 4, 384}, /* GRID_WIDTH 1055:1024, CB_ADDR_LOWER_SHIFTED6 1567:1536, DIM0 1167:1152 */
  {5, 39, 42, 6, 34, 0, 14, 20, 384}, /* GRID_WIDTH 1279:1248, CB_ADDR_LOWER_SHIFTED6 1375:1344, DIM0 1103:1088, 471:468 */
};

START_TEST(lower_exec) {
  const qmd_pos *pp = &positions[_i];
  fx *f = fx_new(pp->ver, pp->ver == 5 ? 100 : 90, BG_QUEUE_COMPUTE);
  if (pp->ver == 5) f->p.param_base = 0x380, f->p.cb0_size = 0x390;
  bg_cmd cmds[3];
  const ir_node *args[2];
  record_exec(f, cmds, args);
  OK(bg_nv_lower(&f->d, &f->hq, cmds, 3, &f->t));
  /* commands: wait (6), local memory (7), SEND_PCAS (4), signal (6) */
  ck_assert_uint_eq(f->t.cmd_len, (6 + 7 + 4 + 6) * 4);
  const uint32_t wait[6] = {0x20050017u, 0x00000100u, 0x10u, 7u, 0xaabbccddu, 0x01000003u};
  for (unsigned i = 0; i < 6; i++) ck_assert_uint_eq(cmd_dw(f, i), wait[i]);
  ck_assert_uint_eq(cmd_dw(f, 6), 0x200221e4u); /* SET_SHADER_LOCAL_MEMORY_A, 2 */
  ck_assert_uint_eq(cmd_dw(f, 7), 0x7fu);
  ck_assert_uint_eq(cmd_dw(f, 11), 0x240000u); /* NON_THROTTLED_B: bytes per TPC */
  ck_assert_uint_eq(cmd_dw(f, 13), 0x200120adu); /* SEND_PCAS_A */
  ck_assert_uint_eq(cmd_dw(f, 15), 0x200120b0u); /* SEND_SIGNALING_PCAS2_B */
  ck_assert_uint_eq(cmd_dw(f, 16), 9);
  ck_assert_uint_eq(cmd_dw(f, 17), 0x20050017u);
  ck_assert_uint_eq(cmd_dw(f, 22), 0x03100001u);
  /* kargs: cb0 (0x220 or 0x390 bytes -> 0x300 / 0x400), then the QMD; padded to 256 */
  size_t qo = pp->ver == 5 ? 0x400 : 0x300;
  ck_assert_uint_eq(f->t.kargs_len, (qo + pp->bytes + 255) / 256 * 256);
  size_t win = pp->ver == 5 ? 188 * 4 : 6 * 4, sp = pp->ver == 5 ? 223 * 4 : 10 * 4;
  ck_assert_uint_eq(kargs_dw(f, win), 0);
  ck_assert_uint_eq(kargs_dw(f, win + 4), 0x7294u); /* shared window 0x729400000000 */
  ck_assert_uint_eq(kargs_dw(f, win + 12), 0x7293u); /* local window 0x729300000000 */
  ck_assert_uint_eq(kargs_dw(f, sp), 0xfffdc0u);
  ck_assert_uint_eq(kargs_dw(f, f->p.param_base + 8), 5); /* the constant parameter, written now */
  ck_assert_uint_eq(kargs_dw(f, qo + 4 * pp->block_dw) >> pp->block_sh & 0xffff, 64);
  ck_assert_uint_eq(kargs_dw(f, qo + 4 * pp->major_dw) >> pp->major_sh & 0xf, (unsigned)pp->ver); /* from the template */
  ck_assert_uint_eq(kargs_dw(f, qo + 4 * pp->grid_dw), 0); /* symbolic: filled by a patch */
  /* patches: param 0, grid x, cbuf0 lower + upper, SEND_PCAS_A */
  ck_assert_uint_eq(f->t.npatches, 5);

  apply(f, 0x2000, 3, KARGS_BASE, true);
  ck_assert_uint_eq(kargs_dw(f, f->p.param_base), 0x2000);
  ck_assert_uint_eq(kargs_dw(f, qo + 4 * pp->grid_dw), 3);
  ck_assert_uint_eq(kargs_dw(f, qo + 4 * pp->cb_dw), (uint32_t)(KARGS_BASE >> pp->cb_shift));
  ck_assert_uint_eq(kargs_dw(f, qo + 4 * pp->cb_dw + 4) & 0xffff, (uint32_t)(KARGS_BASE >> pp->cb_shift >> 32));
  ck_assert_uint_eq(cmd_dw(f, 14), (uint32_t)((KARGS_BASE + qo) >> 8));

  /* one variable changes: only its bytes change */
  uint8_t *k0 = malloc(f->t.kargs_len), *c0 = malloc(f->t.cmd_len);
  memcpy(k0, f->t.kargs, f->t.kargs_len);
  memcpy(c0, f->t.cmd, f->t.cmd_len);
  apply(f, 0x2000, 0x1ff, KARGS_BASE, false);
  size_t first, last, count;
  diff_range(k0, f->t.kargs, f->t.kargs_len, &first, &last, &count);
  ck_assert_uint_eq(first, qo + 4 * pp->grid_dw);
  ck_assert_uint_eq(last, qo + 4 * pp->grid_dw + 1);
  ck_assert_int_eq(memcmp(c0, f->t.cmd, f->t.cmd_len), 0);
  /* the kargs block moves: the QMD pointer and constant bank 0 address change, nothing else */
  memcpy(k0, f->t.kargs, f->t.kargs_len);
  apply(f, 0x2000, 0x1ff, KARGS_BASE + 0x10000, false);
  diff_range(c0, f->t.cmd, f->t.cmd_len, &first, &last, &count);
  ck_assert_uint_ge(first, 14 * 4);
  ck_assert_uint_le(last, 14 * 4 + 3);
  diff_range(k0, f->t.kargs, f->t.kargs_len, &first, &last, &count);
  ck_assert_uint_ge(first, qo + 4 * pp->cb_dw);
  ck_assert_uint_le(last, qo + 4 * pp->cb_dw + 5);
  ck_assert_uint_eq(kargs_dw(f, qo + 4 * pp->cb_dw), (uint32_t)((KARGS_BASE + 0x10000) >> pp->cb_shift));
  free(k0);
  free(c0);
  fx_free(f);
}
END_TEST

START_TEST(lower_copy_chunks) {
  fx *f = fx_new(4, 90, BG_QUEUE_COPY);
  bg_cmd c[3];
  memset(c, 0, sizeof(c));
  c[0] = (bg_cmd){.op = BG_CMD_COPY, .addr = f->dst, .value = C(f, 0x2000000000ull), .size = (5ull << 30) + 16};
  c[1] = (bg_cmd){.op = BG_CMD_TIMESTAMP, .addr = C(f, 0x1000000300ull)};
  c[2] = (bg_cmd){.op = BG_CMD_WAIT, .addr = C(f, 0x1000000100ull), .value = C(f, 1)};
  OK(bg_nv_lower(&f->d, &f->hq, c, 3, &f->t));
  ck_assert_uint_eq(f->t.cmd_len, (3 * 9 + 6 + 6) * 4);
  ck_assert_uint_eq(f->t.kargs_len, 0);
  uint64_t slots[BG_NSLOTS] = {0};
  slots[2] = 0x100000000ull;
  uint64_t changed[2] = {~0ull, ~0ull};
  bg_tmpl_apply(&f->t, slots, changed, true);
  static const uint64_t len[3] = {2ull << 30, 2ull << 30, (1ull << 30) + 16};
  for (unsigned k = 0; k < 3; k++) {
    uint64_t off = (uint64_t)k << 31, src = 0x2000000000ull + off, dst = 0x100000000ull + off;
    ck_assert_uint_eq(cmd_dw(f, 9 * k), 0x20048100u);
    ck_assert_uint_eq(cmd_dw(f, 9 * k + 1), (uint32_t)(src >> 32));
    ck_assert_uint_eq(cmd_dw(f, 9 * k + 2), (uint32_t)src);
    ck_assert_uint_eq(cmd_dw(f, 9 * k + 3), (uint32_t)(dst >> 32));
    ck_assert_uint_eq(cmd_dw(f, 9 * k + 4), (uint32_t)dst);
    ck_assert_uint_eq(cmd_dw(f, 9 * k + 6), (uint32_t)len[k]);
    ck_assert_uint_eq(cmd_dw(f, 9 * k + 8), 0x182);
  }
  /* timestamp: a release of payload 0 with the timestamp; then the wait on the copy channel */
  ck_assert_uint_eq(cmd_dw(f, 27 + 3), 0);
  ck_assert_uint_eq(cmd_dw(f, 27 + 5), 0x03100001u);
  ck_assert_uint_eq(cmd_dw(f, 33 + 5), 0x01000003u);
  fx_free(f);
}
END_TEST

START_TEST(lower_errors) {
  bg_cmd cmds[3];
  const ir_node *args[2];
  fx *f = fx_new(4, 90, BG_QUEUE_COMPUTE);
  record_exec(f, cmds, args);
  cmds[1].lsz[0] = C(f, 2048);
  FAILS(bg_nv_lower(&f->d, &f->hq, cmds, 3, &f->t), BG_EINVAL, "block dimension x is 2048");
  record_exec(f, cmds, args);
  cmds[1].gsz[1] = C(f, 70000);
  FAILS(bg_nv_lower(&f->d, &f->hq, cmds, 3, &f->t), BG_EINVAL, "grid dimension y is 70000");
  record_exec(f, cmds, args);
  cmds[1].lsz[2] = C(f, 65);
  FAILS(bg_nv_lower(&f->d, &f->hq, cmds, 3, &f->t), BG_EINVAL, "block dimension z is 65");
  /* a symbolic grid is the core's to check: a variable declared up to 2^32-1 lowers */
  record_exec(f, cmds, args);
  cmds[1].gsz[1] = ir_var(f->t.ir, IR_DT_UINT64, "gy", 1, UINT32_MAX);
  f->t.slot_var[3] = cmds[1].gsz[1];
  OK(bg_nv_lower(&f->d, &f->hq, cmds, 3, &f->t));
  record_exec(f, cmds, args);
  cmds[1].lsz[0] = C(f, 32), cmds[1].lsz[1] = C(f, 32), cmds[1].lsz[2] = C(f, 2);
  FAILS(bg_nv_lower(&f->d, &f->hq, cmds, 3, &f->t), BG_EINVAL, "block of 2048 threads");
  record_exec(f, cmds, args);
  f->kargs_buf.mem.va = (1ull << 40) - 4096;
  FAILS(bg_nv_lower(&f->d, &f->hq, cmds, 3, &f->t), BG_EINVAL, "2^40");
  f->kargs_buf.mem.va = KARGS_BASE;
  bg_cmd bar = {.op = BG_CMD_BARRIER};
  f->hq.kind = BG_QUEUE_COPY;
  FAILS(bg_nv_lower(&f->d, &f->hq, &bar, 1, &f->t), BG_EINVAL, "memory_barrier");
  FAILS(bg_nv_lower(&f->d, &f->hq, cmds, 3, &f->t), BG_EINVAL, "cannot run kernels");
  fx_free(f);
}
END_TEST

START_TEST(channel_setup) {
  fx *f = fx_new(4, 90, BG_QUEUE_COMPUTE);
  uint32_t *buf = NULL;
  size_t len = 0, cap = 0;
  OK(bg_nv_channel_setup_cmds(&f->g, BG_QUEUE_COMPUTE, &buf, &len, &cap));
  OK(bg_nv_channel_setup_cmds(&f->g, BG_QUEUE_COPY, &buf, &len, &cap));
  const uint32_t want[] = {0x20012000u, 0xcbc0u,                 /* SET_OBJECT on subchannel 1 */
                           0x200220a8u, 0x7294u, 0,            /* SET_SHADER_SHARED_MEMORY_WINDOW_A/B */
                           0x200221ecu, 0x7293u, 0,            /* SET_SHADER_LOCAL_MEMORY_WINDOW_A/B */
                           0x20018000u, 0xc8b5u};              /* SET_OBJECT on subchannel 4 */
  ck_assert_uint_eq(len, sizeof(want));
  ck_assert_mem_eq(buf, want, sizeof(want));
  free(buf);
  fx_free(f);
}
END_TEST


/* ---------------- programs on the emulated Hopper ---------------- */

static const char kernel_ptx[] =
    ".version 7.8\n.target sm_%u\n.address_size 64\n"
    ".visible .entry k(.param .u64 p0, .param .u32 p1) {\n"
    "  .reg .b64 %%rd<3>;\n  .reg .b32 %%r<2>;\n"
    "  ld.param.u64 %%rd1, [p0];\n  ld.param.u32 %%r1, [p1];\n"
    "  cvta.to.global.u64 %%rd2, %%rd1;\n  st.global.u32 [%%rd2], %%r1;\n  ret;\n}\n";

static bool ptxas_cubin(unsigned sm, uint8_t **bin, size_t *n) {
  char ptx[1024];
  snprintf(ptx, sizeof(ptx), kernel_ptx, sm);
  int r = bg_ptx_compile(ptx, sm, BG_PTX_PTXAS, bin, n);
  if (r == -BG_ENOTSUP) {
    printf("nv-lower: program tests skipped: %s\n", bg_last_error());
    return false;
  }
  ck_assert_msg(r == 0, "ptxas sm_%u: %s", sm, bg_last_error());
  return true;
}

static bg_dev *open_mock_hopper(void) {
  if (!getenv("BG_MOCK_PLUGIN")) {
    printf("nv-lower: program tests skipped: BG_MOCK_PLUGIN is not set (no emulated GPU)\n");
    return NULL;
  }
  setenv("MOCKGPU_NV", "hopper", 1);
  bg_dev *d = NULL;
  OK(bg_dev_open("MOCKNVK+NV", &d));
  return d;
}

START_TEST(program_load_mock) {
  uint8_t *bin = NULL, *bin80 = NULL;
  size_t n = 0, n80 = 0;
  if (!ptxas_cubin(90, &bin, &n) || !ptxas_cubin(80, &bin80, &n80)) {
    free(bin);
    return;
  }
  bg_dev *d = open_mock_hopper();
  if (!d) {
    free(bin), free(bin80);
    return;
  }
  nv_gpu *g = bg_nv_gpu(d);
  const uint8_t sizes[2] = {8, 4};
  bg_program_info info = {"k", 2, sizes};
  bg_program *prg = NULL;
  OK(bg_program_load(d, bin, n, &info, &prg));
  const nv_prog *p = prg->handle;
  ck_assert_int_eq(p->qmd_version, 4);
  ck_assert_uint_eq(p->nparams, 2);
  ck_assert_uint_eq(p->param_offsets[1], 8);
  ck_assert_uint_ge(p->param_base, 0x30);
  ck_assert_uint_eq(p->cb0_size % 16, 0);
  ck_assert_uint_ge(p->cb0_size, p->param_base + 12);
  ck_assert_uint_ge(p->code_va, p->image.va);
  ck_assert_uint_ge(p->image.size, 8192); /* the image rounded to 4 KiB plus one page */
  /* QMD V04 template, read at NVIDIA's positions (clcbc0qmd.h) */
  ck_assert_uint_eq(p->qmd[18] >> 4 & 0xf, 4);                              /* QMD_MAJOR_VERSION 583:580 */
  ck_assert_uint_eq(p->qmd[0] >> 23 & 7, 2);                                /* QMD_TYPE 25:23 = GRID_CTA */
  ck_assert_uint_eq(p->qmd[37] >> 16 & 0x1ff, p->regs);                     /* REGISTER_COUNT 1208:1200 */
  ck_assert_uint_eq(p->qmd[38], (uint32_t)p->code_va);                      /* PROGRAM_ADDRESS_LOWER 1247:1216 */
  ck_assert_uint_eq(p->qmd[39] & 0x1ffffff, (uint32_t)(p->code_va >> 32));  /* PROGRAM_ADDRESS_UPPER 1272:1248 */
  ck_assert_uint_eq(p->qmd[49] >> 19, (p->cb0_size + 15) / 16);             /* CONSTANT_BUFFER_SIZE_SHIFTED4(0) */
  ck_assert_uint_eq(p->qmd[13] & 0x9, 0x9);                                 /* CONSTANT_BUFFER_VALID/INVALIDATE(0) */
  ck_assert_uint_eq(p->qmd[16] >> 24, 0x90);                                /* SASS_VERSION 543:536 */
  ck_assert_uint_eq(p->qmd[17] & 0xffffff, p->local_need);                  /* SHADER_LOCAL_MEMORY_HIGH_SIZE 567:544 */
  ck_assert_uint_eq(p->qmd[18] >> 8 & 0x3ffff, 0x400);                      /* SHARED_MEMORY_SIZE 601:584: 1 KiB */
  /* local memory grown for it: stack + 0x240 per thread */
  ck_assert_uint_ge(p->local_need, 0x240);
  ck_assert_uint_ge(g->slm_per_thread, p->local_need);
  ck_assert_uint_ne(g->local_mem.va, 0);
  ck_assert_uint_ne(g->local_bytes_per_tpc, 0);
  uint32_t max = bg_nv_program_max_workgroup(d, prg->handle);
  ck_assert_uint_ge(max, 32);
  ck_assert_uint_le(max, 1024);
  bg_program_free(prg);

  /* what the program info must agree with */
  bg_program *bad = NULL;
  bg_program_info one = {"k", 1, sizes};
  FAILS(bg_program_load(d, bin, n, &one, &bad), BG_EINVAL, "has 2 parameters in its cubin");
  const uint8_t wrong[2] = {8, 8};
  bg_program_info ws = {"k", 2, wrong};
  FAILS(bg_program_load(d, bin, n, &ws, &bad), BG_EINVAL, "parameter 1 is 4 bytes in the cubin");
  FAILS(bg_program_load(d, bin80, n80, &info, &bad), BG_EINVAL, "the cubin is for sm_80, the device is sm_90");
  const char junk[] = "not a program";
  FAILS(bg_program_load(d, junk, sizeof(junk) - 1, &info, &bad), BG_EINVAL, "neither a cubin");
  ck_assert_ptr_null(bad);
  bg_dev_close(d);
  free(bin);
  free(bin80);
}
END_TEST

/* Host <-> device copies (nv/nv_copy.c) of a buffer without a CPU view: through the staging buffer and the copy
 * channel, in 16 MiB chunks, at an offset. */
START_TEST(copy_roundtrip_mock) {
  bg_dev *d = open_mock_hopper();
  if (!d) return;
  const uint64_t size = (17u << 20) + 12, off = 5;
  bg_buf *b = NULL;
  OK(bg_buf_alloc(d, size, 0, &b));
  ck_assert_ptr_null(bg_buf_cpu(b)); /* video memory: the staged path */
  uint8_t *src = malloc(size), *dst = malloc(size);
  ck_assert(src && dst);
  for (uint64_t i = 0; i < size; i++) src[i] = (uint8_t)(i * 2654435761u >> 13);
  OK(bg_buf_write(b, off, src, size - off));
  memset(dst, 0, size);
  OK(bg_buf_read(b, off, dst, size - off));
  ck_assert_int_eq(memcmp(src, dst, size - off), 0);
  uint8_t tail[7] = {0};
  OK(bg_buf_read(b, size - 7, tail, 7)); /* the last bytes of the second chunk */
  ck_assert_int_eq(memcmp(tail, src + size - off - 7, 7), 0);
  free(src);
  free(dst);
  bg_buf_free(b);
  bg_dev_close(d);
}
END_TEST

int main(void) {
  Suite *s = suite_create("nv-lower");
  TCase *tc = tcase_create("lower");
  tcase_add_loop_test(tc, lower_exec, 0, 3);
  tcase_add_test(tc, lower_copy_chunks);
  tcase_add_test(tc, lower_errors);
  tcase_add_test(tc, channel_setup);
  tcase_add_test(tc, program_load_mock);
  tcase_add_test(tc, copy_roundtrip_mock);
  tcase_set_timeout(tc, 120);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
