/* tests/unit/mocknv/test_mocknv_gpu.c: the emulated GPU executing hand-built pushbuffers: host semaphore release and
 * acquire, a copy-engine copy with its four-word semaphore, and a QMD launch of a PTX kernel assembled by the
 * emulated GPU's assembler (loaded with formats/cubin.c), on the Hopper (QMD V04) and Ada (QMD V03) configurations;
 * and the launch / method strictness rules. QMD bit positions from NVIDIA/open-gpu-doc classes/compute/clcbc0qmd.h
 * (QMDV03_00 and QMDV04_00). */
#include <stdlib.h>
#include <time.h>

#include "formats/cubin.h"
#include "mocknv_env.h"
#include "mocknv_tests.h"

static const char *PTX =
    "//\n"
    ".version 7.8\n"
    ".target sm_89\n"
    ".address_size 64\n"
    "\n"
    ".visible .entry add1(\n"
    "\t.param .u64 add1_param_0,\n"
    "\t.param .u64 add1_param_1,\n"
    "\t.param .u32 add1_param_2\n"
    ")\n"
    ".maxntid 64, 1, 1\n"
    "{\n"
    "\t.reg .pred %p<2>;\n"
    "\t.reg .b32 %r<8>;\n"
    "\t.reg .b64 %rd<8>;\n"
    "\tld.param.u64 %rd1, [add1_param_0];\n"
    "\tld.param.u64 %rd2, [add1_param_1];\n"
    "\tld.param.u32 %r2, [add1_param_2];\n"
    "\tmov.u32 %r3, %ctaid.x;\n"
    "\tmov.u32 %r4, %ntid.x;\n"
    "\tmov.u32 %r5, %tid.x;\n"
    "\tmad.lo.s32 %r1, %r3, %r4, %r5;\n"
    "\tsetp.ge.s32 %p1, %r1, %r2;\n"
    "\t@%p1 bra $L__BB0_2;\n"
    "\tcvta.to.global.u64 %rd3, %rd2;\n"
    "\tmul.wide.s32 %rd4, %r1, 4;\n"
    "\tadd.s64 %rd5, %rd3, %rd4;\n"
    "\tld.global.u32 %r6, [%rd5];\n"
    "\tadd.s32 %r7, %r6, 1;\n"
    "\tcvta.to.global.u64 %rd6, %rd1;\n"
    "\tadd.s64 %rd7, %rd6, %rd4;\n"
    "\tst.global.u32 [%rd7], %r7;\n"
    "$L__BB0_2:\n"
    "\tret;\n"
    "}\n";

/* Method header: SEC_OP 1 (INC) 31:29, COUNT 28:16, SUBCHANNEL 15:13, ADDRESS 11:0 in dwords (clc56f.h NVC56F_DMA_*). */
static uint32_t hdr(unsigned subc, uint32_t method, unsigned count) {
  return 1u << 29 | count << 16 | subc << 13 | method >> 2;
}

static void setf(uint8_t *q, unsigned hi, unsigned lo, uint64_t v) {
  for (unsigned b = lo; b <= hi; b++) {
    if (v >> (b - lo) & 1) q[b / 8] |= (uint8_t)(1u << (b % 8));
    else q[b / 8] &= (uint8_t)~(1u << (b % 8));
  }
}

/* A QMD for a (grid, 64) launch of the program at prog with constant buffer 0 at cb (cb_bytes), release0 to sig. */
static void make_qmd(uint8_t *q, unsigned ver, uint32_t grid, uint64_t prog, uint64_t cb, uint32_t cb_bytes,
                     uint32_t shared, uint64_t sig, uint64_t payload) {
  memset(q, 0, 384);
  setf(q, 583, 580, ver); /* QMD_MAJOR_VERSION, same place in V03 and V04 */
  if (ver == 3) {
    setf(q, 415, 384, grid);
    setf(q, 431, 416, 1);
    setf(q, 463, 448, 1);
    setf(q, 607, 592, 64);
    setf(q, 623, 608, 1);
    setf(q, 639, 624, 1);
    setf(q, 640, 640, 1);                       /* CONSTANT_BUFFER_VALID(0) */
    setf(q, 1055, 1024, cb & 0xffffffffu);      /* CONSTANT_BUFFER_ADDR_LOWER(0) */
    setf(q, 1072, 1056, cb >> 32);
    setf(q, 1087, 1075, (cb_bytes + 15) / 16);  /* CONSTANT_BUFFER_SIZE_SHIFTED4(0) */
    setf(q, 1567, 1536, prog & 0xffffffffu);    /* PROGRAM_ADDRESS_LOWER */
    setf(q, 1584, 1568, prog >> 32);
    setf(q, 561, 544, shared);                  /* SHARED_MEMORY_SIZE */
    setf(q, 823, 823, 1);                       /* RELEASE0_ENABLE, STRUCTURE_SIZE 0 = four words */
    setf(q, 799, 768, sig & 0xffffffffu);
    setf(q, 807, 800, sig >> 32);
    setf(q, 863, 832, payload & 0xffffffffu);
    setf(q, 895, 864, payload >> 32);
  } else {
    setf(q, 1055, 1024, grid);
    setf(q, 1071, 1056, 1);
    setf(q, 1103, 1088, 1);
    setf(q, 1167, 1152, 64);
    setf(q, 1183, 1168, 1);
    setf(q, 1199, 1184, 1);
    setf(q, 416, 416, 1);                       /* CONSTANT_BUFFER_VALID(0) */
    setf(q, 1567, 1536, (cb >> 6) & 0xffffffffu); /* CONSTANT_BUFFER_ADDR_LOWER_SHIFTED6(0) */
    setf(q, 1586, 1568, cb >> 38);
    setf(q, 1599, 1587, (cb_bytes + 15) / 16);
    setf(q, 1247, 1216, prog & 0xffffffffu);
    setf(q, 1272, 1248, prog >> 32);
    setf(q, 601, 584, shared);
    setf(q, 320, 320, 1);                       /* RELEASE_ENABLE(0) */
    setf(q, 671, 640, sig & 0xffffffffu);       /* RELEASE_SEMAPHORE0_ADDR_LOWER */
    setf(q, 696, 672, sig >> 32);
    setf(q, 735, 704, payload & 0xffffffffu);
    setf(q, 767, 736, payload >> 32);
  }
}

/* A run's buffers: in @0, out @0x1000, copy dst @0x2000, program image @0x10000, cb0 @0x20000, QMD @0x21000. */
typedef struct run {
  mnv e;
  uint8_t *cpu;
  uint64_t va;
  bg_cubin cub;
  const bg_cubin_kernel *k;
  unsigned ver, sm;
} run;

static void run_setup(run *r, const char *cfg) {
  memset(r, 0, sizeof *r);
  mnv_start(&r->e, cfg);
  mnv_graph_full(&r->e);
  mnv_vidmem(&r->e, 0x200000, &r->va, &r->cpu);
  bool hopper = strcmp(cfg, "hopper") == 0;
  r->ver = hopper ? 4 : 3;
  r->sm = hopper ? 90 : 89;
  uint8_t *cub;
  size_t n;
  char err[512];
  ck_assert_msg(mock_nv_plugin_assemble(PTX, r->sm, &cub, &n, err, sizeof err) == 0, "assemble: %s", err);
  ck_assert_int_eq(bg_cubin_load(cub, n, &r->cub), 0);
  free(cub);
  r->k = bg_cubin_kernel_find(&r->cub, "add1");
  ck_assert_ptr_nonnull(r->k);
  ck_assert_uint_le(r->cub.image_size, 0x10000);
  ck_assert_int_eq(bg_cubin_relocate(&r->cub, r->va + 0x10000, r->cpu + 0x10000), 0);
  for (uint32_t i = 0; i < 256; i++) p32(r->cpu, 4 * i, 1000 + 3 * i);
  /* cb0: the driver area, then the parameters at the offsets .nv.info gives. */
  uint8_t *cb = r->cpu + 0x20000;
  p64(cb, r->k->param_base + r->k->params[0].offset, r->va + 0x1000);
  p64(cb, r->k->param_base + r->k->params[1].offset, r->va);
  p32(cb, r->k->param_base + r->k->params[2].offset, 200);
}

static void launch(run *r, unsigned ver, uint64_t payload) {
  make_qmd(r->cpu + 0x21000, ver, 4, r->va + 0x10000 + r->k->code_offset, r->va + 0x20000,
           r->k->param_base + r->k->param_size, r->k->shared, r->e.sig_va + 0x100, payload);
  uint32_t pb[] = {hdr(1, 0, 1), r->e.compute_cls, hdr(1, 0x2b4, 1), (uint32_t)((r->va + 0x21000) >> 8),
                   hdr(1, 0x2c0, 1), 9};
  mnv_submit(&r->e, 0, pb, sizeof pb / 4);
}

START_TEST(assembler_cubin_loads) {
  uint8_t *cub;
  size_t n;
  char err[512];
  ck_assert_msg(mock_nv_plugin_assemble(PTX, 90, &cub, &n, err, sizeof err) == 0, "%s", err);
  bg_cubin c;
  ck_assert_int_eq(bg_cubin_load(cub, n, &c), 0);
  ck_assert_uint_eq(c.sm, 90);
  const bg_cubin_kernel *k = bg_cubin_kernel_find(&c, "add1");
  ck_assert_ptr_nonnull(k);
  ck_assert_uint_eq(k->param_base, 0x210);
  ck_assert_uint_eq(k->nparams, 3);
  ck_assert_uint_eq(k->params[0].offset, 0);
  ck_assert_uint_eq(k->params[0].size, 8);
  ck_assert_uint_eq(k->params[1].offset, 8);
  ck_assert_uint_eq(k->params[2].offset, 16);
  ck_assert_uint_eq(k->params[2].size, 4);
  ck_assert_uint_eq(k->param_size, 20);
  ck_assert_uint_eq(k->regs, 32);
  ck_assert_uint_eq(k->max_threads[0], 64);
  ck_assert_uint_eq(k->max_threads[1], 1);
  ck_assert_uint_ge(k->cbank0_size, 0x210 + 20);
  /* The code section holds the PTX, NUL-terminated. */
  const char *text = (const char *)c.image + k->code_offset;
  ck_assert_ptr_nonnull(strstr(text, ".entry add1("));
  ck_assert_uint_eq(strlen(text) + 1 <= k->code_size, 1);
  bg_cubin_free(&c);
  free(cub);
  /* PTX the interpreter cannot parse: refused naming the line; a .target newer than the SM: refused. */
  ck_assert_int_ne(mock_nv_plugin_assemble(".version 7.8\n.target sm_89\n.address_size 64\n.visible .entry k()\n{\n"
                                           "\tfrobnicate.u32 %r1;\n}\n", 89, &cub, &n, err, sizeof err), 0);
  ck_assert_ptr_nonnull(strstr(err, "line 6"));
  ck_assert_int_ne(mock_nv_plugin_assemble(PTX, 86, &cub, &n, err, sizeof err), 0);
  ck_assert_ptr_nonnull(strstr(err, "sm_89"));
}
END_TEST

/* Host release, copy + CE semaphore, QMD launch with release0: the right numbers on both configurations. */
START_TEST(pushbuffer_runs) {
  run r;
  run_setup(&r, _i ? "ada" : "hopper");
  mnv *e = &r.e;
  /* compute channel: host semaphore release (64-bit payload, timestamp) at sig+0 */
  uint64_t s0 = e->sig_va;
  uint32_t rel[] = {hdr(0, 0x5c, 5), (uint32_t)s0, (uint32_t)(s0 >> 32), 0x89abcdefu, 0x1234567u, 0x03100001u};
  mnv_submit(e, 0, rel, sizeof rel / 4);
  ck_assert_int_eq(mnv_wait64(e->sig_cpu, 0x0123456789abcdefull), 0);
  ck_assert_uint_ne(g64(e->sig_cpu, 8), 0); /* timestamp */
  /* copy channel: 1 KiB copy in -> copy dst, then a four-word semaphore release */
  uint64_t src = r.va, dst = r.va + 0x2000, s1 = e->sig_va + 0x40;
  uint32_t cp[] = {hdr(4, 0, 1), e->copy_cls,
                   hdr(4, 0x400, 4), (uint32_t)(src >> 32), (uint32_t)src, (uint32_t)(dst >> 32), (uint32_t)dst,
                   hdr(4, 0x418, 1), 1024, hdr(4, 0x300, 1), 0x182,
                   hdr(4, 0x240, 3), (uint32_t)(s1 >> 32), (uint32_t)s1, 77, hdr(4, 0x300, 1), 0x14};
  mnv_submit(e, 1, cp, sizeof cp / 4);
  ck_assert_int_eq(mnv_wait64(e->sig_cpu + 0x40, 77), 0);
  ck_assert_uint_ne(g64(e->sig_cpu, 0x48), 0);
  ck_assert_int_eq(memcmp(r.cpu + 0x2000, r.cpu, 1024), 0);
  /* a 64-bit CE payload (SEMAPHORE_PAYLOAD_SIZE 27 with SET_SEMAPHORE_PAYLOAD_UPPER) */
  uint64_t s2 = e->sig_va + 0x80;
  uint32_t cp2[] = {hdr(4, 0x240, 4), (uint32_t)(s2 >> 32), (uint32_t)s2, 0x55, 0x66, hdr(4, 0x300, 1), 0x14u | 1u << 27};
  mnv_submit(e, 1, cp2, sizeof cp2 / 4);
  ck_assert_int_eq(mnv_wait64(e->sig_cpu + 0x80, 0x6600000055ull), 0);
  ck_assert_uint_eq(g64(e->sig_cpu, 0x80), 0x6600000055ull);
  /* compute: the assembled kernel, out[i] = in[i] + 1 for i < 200 (grid 4 x 64 threads) */
  launch(&r, r.ver, 5);
  ck_assert_int_eq(mnv_wait64(e->sig_cpu + 0x100, 5), 0);
  ck_assert_uint_ne(g64(e->sig_cpu, 0x108), 0);
  for (uint32_t i = 0; i < 256; i++)
    ck_assert_uint_eq(g32(r.cpu + 0x1000, 4 * i), i < 200 ? 1000 + 3 * i + 1 : 0);
  ck_assert_uint_eq(mnv_drain(e, 0), 0);
  ck_assert_uint_eq(mnv_drain(e, 1), 0);
  ck_assert_uint_gt(mock_nv_exec_ns(), 0);
  bg_cubin_free(&r.cub);
  mock_nv_stop();
}
END_TEST

/* An acquire holds the channel until the CPU writes the semaphore (circ_geq, 64-bit). */
START_TEST(acquire_waits) {
  mnv e;
  mnv_start(&e, "hopper");
  mnv_graph_full(&e);
  uint64_t a = e.sig_va + 0x200, s = e.sig_va + 0x300;
  uint32_t pb[] = {hdr(0, 0x5c, 5), (uint32_t)a, (uint32_t)(a >> 32), 3, 0, 0x01000003u,
                   hdr(0, 0x5c, 5), (uint32_t)s, (uint32_t)(s >> 32), 9, 0, 0x01100001u};
  mnv_submit(&e, 0, pb, sizeof pb / 4);
  p64(e.sig_cpu, 0x200, 2); /* not yet */
  struct timespec ts = {0, 20000000};
  nanosleep(&ts, NULL);
  ck_assert_uint_eq(g64(e.sig_cpu, 0x300), 0);
  __atomic_store_n((uint64_t *)(e.sig_cpu + 0x200), 3, __ATOMIC_SEQ_CST);
  ck_assert_int_eq(mnv_wait64(e.sig_cpu + 0x300, 9), 0);
  ck_assert_uint_eq(mock_nv_failures(NULL, 0), 0);
  mock_nv_stop();
}
END_TEST

static void expect_failure(mnv *e, int ch, const uint32_t *pb, uint32_t n, const char *what) {
  mnv_submit(e, ch, pb, n);
  char f[4096];
  ck_assert_uint_gt(mnv_drain(e, ch), 0);
  mock_nv_failures(f, sizeof f);
  ck_assert_msg(strstr(f, what) != NULL, "failure '%s' lacks '%s'", f, what);
  mock_nv_clear_failures();
}

/* A V03 QMD on the Hopper class: rejected naming the version. */
START_TEST(v03_on_hopper_rejected) {
  run r;
  run_setup(&r, "hopper");
  launch(&r, 3, 5);
  char f[4096];
  ck_assert_uint_gt(mnv_drain(&r.e, 0), 0);
  mock_nv_failures(f, sizeof f);
  ck_assert_ptr_nonnull(strstr(f, "QMD_MAJOR_VERSION 3"));
  ck_assert_uint_eq(g64(r.e.sig_cpu, 0x100), 0);
  bg_cubin_free(&r.cub);
  mock_nv_stop();
}
END_TEST

/* Method strictness: unknown method, a subchannel without SET_OBJECT, SET_OBJECT of another engine. Each stops its
 * channel, so each case uses a fresh model. */
START_TEST(method_strictness) {
  mnv e;
  mnv_start(&e, "ada");
  mnv_graph_full(&e);
  switch (_i) {
  case 0: {
    uint32_t pb[] = {hdr(1, 0, 1), e.compute_cls, hdr(1, 0x1234, 1), 0};
    expect_failure(&e, 0, pb, 4, "unknown compute method");
    break;
  }
  case 1: {
    uint32_t pb[] = {hdr(2, 0x2b4, 1), 0};
    expect_failure(&e, 0, pb, 2, "without SET_OBJECT");
    break;
  }
  case 2: {
    uint32_t pb[] = {hdr(4, 0, 1), e.copy_cls};
    expect_failure(&e, 0, pb, 2, "is not this channel's engine");
    break;
  }
  case 3: {
    uint32_t pb[] = {hdr(0, 0x44, 1), 0};
    expect_failure(&e, 0, pb, 2, "unknown host method");
    break;
  }
  }
  mock_nv_stop();
}
END_TEST

/* Launch checks: cb0 too small for the parameters, a block over 1024 threads; a kernel reading an unmapped address
 * faults and the debugger reads the fault address back. */
START_TEST(launch_checks_and_fault) {
  run r;
  run_setup(&r, _i == 2 ? "ada" : "hopper");
  uint8_t *q = r.cpu + 0x21000;
  if (_i == 0) {
    launch(&r, r.ver, 5);
    ck_assert_int_eq(mnv_wait64(r.e.sig_cpu + 0x100, 5), 0);
    make_qmd(q, r.ver, 4, r.va + 0x10000 + r.k->code_offset, r.va + 0x20000, 0x210 + 8, 0, r.e.sig_va + 0x100, 6);
    uint32_t pb[] = {hdr(1, 0x2b4, 1), (uint32_t)((r.va + 0x21000) >> 8), hdr(1, 0x2c0, 1), 9};
    expect_failure(&r.e, 0, pb, 4, "does not cover the parameters");
  } else if (_i == 1) {
    make_qmd(q, r.ver, 4, r.va + 0x10000 + r.k->code_offset, r.va + 0x20000, 0x230, 0, r.e.sig_va + 0x100, 6);
    setf(q, 1183, 1168, 32); /* block 64 x 32 */
    uint32_t pb[] = {hdr(1, 0, 1), r.e.compute_cls, hdr(1, 0x2b4, 1), (uint32_t)((r.va + 0x21000) >> 8),
                     hdr(1, 0x2c0, 1), 9};
    expect_failure(&r.e, 0, pb, 6, "more than 1024 threads");
  } else {
    p64(r.cpu + 0x20000, r.k->param_base + r.k->params[1].offset, 0x7000000000ull); /* in: unmapped */
    launch(&r, r.ver, 5);
    char f[4096];
    ck_assert_uint_gt(mnv_drain(&r.e, 0), 0);
    mock_nv_failures(f, sizeof f);
    ck_assert_ptr_nonnull(strstr(f, "MMU fault"));
    /* RM's robust-channel path: the channel's error notifier says why it stopped (info32 31 = MMU fault). */
    ck_assert_uint_eq(g32(r.e.notif_cpu, 8), 31);
    ck_assert_uint_eq(g32(r.e.notif_cpu, 12) >> 16, 0xffff);
    static uint8_t sm[4824];
    memset(sm, 0, sizeof sm);
    p32(sm, 0, r.e.ch[0]);
    p32(sm, 4, 1);
    ck_assert_uint_eq(mnv_control(&r.e, r.e.debugger, 0x83de030c, sm, sizeof sm), 0);
    ck_assert_uint_eq(sm[4812], 1);
    uint8_t mf[72] = {0};
    ck_assert_uint_eq(mnv_control(&r.e, r.e.debugger, 0x83de0328, mf, sizeof mf), 0);
    ck_assert_uint_eq(g32(mf, 64), 1);
    ck_assert_uint_eq(g64(mf, 0), 0x7000000000ull);
  }
  bg_cubin_free(&r.cub);
  mock_nv_stop();
}
END_TEST

/* Dependent QMD0 chaining (action SCHEDULE): the first launch chains a second with its own cb0 whose release1
 * signals; both kernels run (the second adds 1 to the first's output). */
START_TEST(chained_qmd) {
  run r;
  run_setup(&r, _i ? "ada" : "hopper");
  uint8_t *q0 = r.cpu + 0x21000, *q1 = r.cpu + 0x21400, *cb1 = r.cpu + 0x22000;
  uint32_t cbsz = r.k->param_base + r.k->param_size;
  make_qmd(q0, r.ver, 4, r.va + 0x10000 + r.k->code_offset, r.va + 0x20000, cbsz, r.k->shared, r.e.sig_va + 0x100, 1);
  /* second: in = out of the first, out = +0x3000 */
  memcpy(cb1, r.cpu + 0x20000, cbsz);
  p64(cb1, r.k->param_base + r.k->params[0].offset, r.va + 0x3000);
  p64(cb1, r.k->param_base + r.k->params[1].offset, r.va + 0x1000);
  make_qmd(q1, r.ver, 4, r.va + 0x10000 + r.k->code_offset, r.va + 0x22000, cbsz, r.k->shared, 0, 0);
  if (r.ver == 3) {
    setf(q1, 823, 823, 0);                       /* no release0 */
    setf(q1, 951, 951, 1);                       /* RELEASE1_ENABLE */
    setf(q1, 927, 896, (r.e.sig_va + 0x180) & 0xffffffffu);
    setf(q1, 935, 928, (r.e.sig_va + 0x180) >> 32);
    setf(q1, 991, 960, 2);
    setf(q0, 512, 512, 1);                       /* DEPENDENT_QMD0_ENABLE */
    setf(q0, 515, 513, 1);                       /* ACTION QMD_SCHEDULE */
    setf(q0, 511, 480, (r.va + 0x21400) >> 8);   /* DEPENDENT_QMD0_POINTER */
  } else {
    setf(q1, 320, 320, 0);
    setf(q1, 336, 336, 1);                       /* RELEASE_ENABLE(1) */
    setf(q1, 799, 768, (r.e.sig_va + 0x180) & 0xffffffffu);
    setf(q1, 824, 800, (r.e.sig_va + 0x180) >> 32);
    setf(q1, 863, 832, 2);
    setf(q0, 368, 368, 1);                       /* DEPENDENT_QMD_ENABLE(0) */
    setf(q0, 371, 369, 1);                       /* DEPENDENT_QMD_ACTION(0) SCHEDULE */
    setf(q0, 479, 448, (r.va + 0x21400) >> 8);   /* DEPENDENT_QMD0_POINTER */
  }
  uint32_t pb[] = {hdr(1, 0, 1), r.e.compute_cls, hdr(1, 0x2b4, 1), (uint32_t)((r.va + 0x21000) >> 8),
                   hdr(1, 0x2c0, 1), 9};
  mnv_submit(&r.e, 0, pb, sizeof pb / 4);
  ck_assert_int_eq(mnv_wait64(r.e.sig_cpu + 0x180, 2), 0);
  ck_assert_uint_eq(g64(r.e.sig_cpu, 0x100), 1);
  ck_assert_uint_ne(g64(r.e.sig_cpu, 0x188), 0); /* four-word release1: timestamp */
  for (uint32_t i = 0; i < 200; i++) ck_assert_uint_eq(g32(r.cpu + 0x3000, 4 * i), 1000 + 3 * i + 2);
  ck_assert_uint_eq(mock_nv_failures(NULL, 0), 0);
  bg_cubin_free(&r.cub);
  mock_nv_stop();
}
END_TEST

/* UVM_FREE takes the GPU mapping away: a copy from the freed range faults. */
START_TEST(uvm_free_unmaps) {
  mnv e;
  mnv_start(&e, "hopper");
  mnv_graph_full(&e);
  uint64_t va;
  uint8_t *cpu;
  mnv_vidmem(&e, 0x10000, &va, &cpu);
  uint8_t fr[24] = {0};
  p64(fr, 0, va);
  p64(fr, 8, 0x10000);
  ck_assert_uint_eq(mnv_uvm(&e, e.uvm, 34, fr, 16), 0);
  uint64_t dst = e.sig_va + 0x400;
  uint32_t cp[] = {hdr(4, 0, 1), e.copy_cls, hdr(4, 0x400, 4), (uint32_t)(va >> 32), (uint32_t)va, (uint32_t)(dst >> 32),
                   (uint32_t)dst, hdr(4, 0x418, 1), 64, hdr(4, 0x300, 1), 0x182};
  char f[4096];
  mnv_submit(&e, 1, cp, sizeof cp / 4);
  ck_assert_uint_gt(mnv_drain(&e, 1), 0);
  mock_nv_failures(f, sizeof f);
  ck_assert_ptr_nonnull(strstr(f, "MMU fault: copy engine read"));
  mock_nv_stop();
}
END_TEST

void mocknv_add_gpu(Suite *s) {
  TCase *tc = tcase_create("gpu");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, assembler_cubin_loads);
  tcase_add_loop_test(tc, pushbuffer_runs, 0, 2);
  tcase_add_test(tc, acquire_waits);
  tcase_add_test(tc, v03_on_hopper_rejected);
  tcase_add_loop_test(tc, method_strictness, 0, 4);
  tcase_add_loop_test(tc, launch_checks_and_fault, 0, 3);
  tcase_add_loop_test(tc, chained_qmd, 0, 2);
  tcase_add_test(tc, uvm_free_unmaps);
  suite_add_tcase(s, tc);
}
