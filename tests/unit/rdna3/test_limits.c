/* tests/unit/rdna3/test_limits.c: what a wave may rely on and use. Loads land only at s_waitcnt
 * (a snippet without its wait reads the old register value); vmcnt / lgkmcnt retire in issue
 * order; the VGPR grant of COMPUTE_PGM_RSRC1 and the LDS of RSRC2 bound a dispatch (an LLVM
 * kernel with an understated descriptor fails, as given it runs); scalar loads read through the
 * K$ until it is invalidated. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "tests.h"

static gpu g;
static wave_run r;
static uint64_t buf;
static uint32_t *mem;

/* snippet with s[0:1] = a buffer of 32 lanes x 8 dwords (lane l's dword i = 1000 * l + i), v0 = l * 32 */
static void start(const char *snippet) {
  gpu_init(&g);
  wave_setup(&r, &g, snippet);
  buf = gpu_alloc(&g, 32 * 32, 256);
  mem = gpu_ptr(&g, buf);
  for (unsigned l = 0; l < 32; l++)
    for (unsigned i = 0; i < 8; i++) mem[l * 8 + i] = 1000 * l + i;
  r.w.s[0] = (uint32_t)buf, r.w.s[1] = (uint32_t)(buf >> 32);
  for (unsigned l = 0; l < 32; l++) r.w.v[0][l] = l * 32, r.w.v[1][l] = 7, r.w.v[3][l] = 9;
  r.w.s[4] = 5;
}

static void finish(void) { gpu_free(&g); }

START_TEST(vm_wait) {
  start("vm_wait");
  ck_assert_int_eq(wave_go(&r), 0);
  for (unsigned l = 0; l < 32; l++) ck_assert_uint_eq(r.w.v[2][l], 1000 * l + 1);
  finish();
}
END_TEST

/* the same code without s_waitcnt: v_add reads v1 before the load landed (it lands at s_endpgm) */
START_TEST(vm_without_wait_reads_old_value) {
  start("vm_nowait");
  ck_assert_int_eq(wave_go(&r), 0);
  for (unsigned l = 0; l < 32; l++) {
    ck_assert_uint_eq(r.w.v[2][l], 8);
    ck_assert_uint_eq(r.w.v[1][l], 1000 * l);
  }
  finish();
}
END_TEST

/* vmcnt(1) after two loads: the first has landed, the second not; s_waitcnt_vmcnt 0 lands it */
START_TEST(vm_partial_wait) {
  start("vm_partial");
  ck_assert_int_eq(wave_go(&r), 0);
  for (unsigned l = 0; l < 32; l++) {
    ck_assert_uint_eq(r.w.v[2][l], 1000 * l);
    ck_assert_uint_eq(r.w.v[4][l], 9);
    ck_assert_uint_eq(r.w.v[5][l], 1000 * l + 1);
  }
  finish();
}
END_TEST

START_TEST(smem_wait) {
  start("smem_wait");
  ck_assert_int_eq(wave_go(&r), 0);
  ck_assert_uint_eq(r.w.s[5], 1);
  finish();
  start("smem_nowait");
  ck_assert_int_eq(wave_go(&r), 0);
  ck_assert_uint_eq(r.w.s[5], 6);  /* the old s4 + 1 */
  ck_assert_uint_eq(r.w.s[4], 0);  /* landed at s_endpgm */
  finish();
}
END_TEST

/* LDS: a load read before lgkmcnt(0) is the old value; a store issued after a load counts too, so
 * lgkmcnt(1) then covers the load (in-order retirement). */
START_TEST(lds_waits) {
  start("lds_nowait");
  for (unsigned l = 0; l < 32; l++) r.w.v[5][l] = 500 + l;
  ck_assert_int_eq(wave_go(&r), 0);
  for (unsigned l = 0; l < 32; l++) {
    ck_assert_uint_eq(r.w.v[2][l], 7);
    ck_assert_uint_eq(r.w.v[3][l], 500 + l);
  }
  finish();
  start("lds_order");
  for (unsigned l = 0; l < 32; l++) r.w.v[5][l] = 500 + l;
  memcpy(r.lds, mem, 32 * 32);  /* lds[l * 32] = 1000 * l */
  ck_assert_int_eq(wave_go(&r), 0);
  for (unsigned l = 0; l < 32; l++) ck_assert_uint_eq(r.w.v[2][l], 1000 * l);
  finish();
}
END_TEST

/* more loads outstanding than the model keeps: the oldest lands early, the newest still waits */
START_TEST(pending_overflow) {
  start("vm_nowait");
  for (unsigned i = 0; i < RDNA3_PEND_MAX; i++) {
    rdna3_pend *p = rdna3_pend_new(&r.w, RDNA3_VMCNT, RDNA3_SRC_VGPR + 20 + i, 1, 0xffffffffu, 0xffffffffu);
    for (unsigned l = 0; l < 32; l++) p->d[0][l] = 100 + i;
  }
  ck_assert_uint_eq(r.w.v[20][0], 0);
  rdna3_pend_new(&r.w, RDNA3_VMCNT, RDNA3_SRC_VGPR + 40, 1, 0xffffffffu, 0xffffffffu)->d[0][0] = 1;
  ck_assert_uint_eq(r.w.v[20][0], 100);  /* landed to make room */
  ck_assert_uint_eq(r.w.v[21][0], 0);
  rdna3_wait(&r.w, RDNA3_VMCNT, 0);
  ck_assert_uint_eq(r.w.v[20 + RDNA3_PEND_MAX - 1][5], 100 + RDNA3_PEND_MAX - 1);
  ck_assert_uint_eq(r.w.v[40][0], 1);
  finish();
}
END_TEST

/* VGPR grant: v9 is the tenth register, beyond a grant of 8 */
START_TEST(vgpr_beyond_grant) {
  start("vgpr_v9");
  r.c.nvgpr = 16;
  ck_assert_int_eq(wave_go(&r), 0);
  finish();
  start("vgpr_v9");
  r.c.nvgpr = 8;
  ck_assert_int_eq(wave_go(&r), -1);
  ck_assert_msg(strstr(r.rep.msg, "VGPR v9 (destination) beyond the 8 VGPRs") != NULL, "%s", r.rep.msg);
  ck_assert_msg(strstr(r.rep.msg, "v_mov_b32") || strstr(r.rep.msg, "no disassembler"), "%s", r.rep.msg);
  finish();
  start("vgpr_load_v9");  /* a 4-register load destination crossing the grant */
  r.c.nvgpr = 8;
  ck_assert_int_eq(wave_go(&r), -1);
  ck_assert_msg(strstr(r.rep.msg, "VGPR v9 of a multi-register operand (destination) beyond the 8") != NULL, "%s",
                r.rep.msg);
  finish();
}
END_TEST

/* An LLVM kernel runs with the VGPRs its descriptor asks for and fails with one block less. */
START_TEST(kernel_descriptor_vgprs) {
  gpu_init(&g);
  kernel k;
  kernel_load(&g, "matmul", &k);
  enum { N = 16 };
  static float a[N * N];
  for (int i = 0; i < N * N; i++) a[i] = (float)(i % 7);
  uint64_t pa = gpu_alloc(&g, sizeof a, 256), c = gpu_alloc(&g, sizeof a, 256);
  memcpy(gpu_ptr(&g, pa), a, sizeof a);
  struct { uint64_t c, a, b; uint32_t n; } __attribute__((packed)) args = {c, pa, pa, N};
  rdna3_report rep;
  unsigned blocks = k.rsrc1 & 0x3f;
  ck_assert_uint_gt(blocks, 0);  /* matmul needs more than 8 VGPRs */
  ck_assert_int_eq(kernel_run(&g, &k, (uint32_t[3]){N / 8, N / 8, 1}, (uint32_t[3]){8, 8, 1}, &args, sizeof args, &rep), 0);
  kernel under = k;
  under.rsrc1 = (k.rsrc1 & ~0x3fu) | (blocks - 1);
  ck_assert_int_eq(kernel_run(&g, &under, (uint32_t[3]){N / 8, N / 8, 1}, (uint32_t[3]){8, 8, 1}, &args, sizeof args, &rep), -1);
  char want[96];
  snprintf(want, sizeof want, "beyond the %u VGPRs the dispatch grants", blocks * 8);
  ck_assert_msg(strstr(rep.msg, want) != NULL, "%s", rep.msg);
  kernel sg = k;
  sg.rsrc1 |= 1u << 6;  /* SGPRS: reserved on gfx10+ */
  ck_assert_int_eq(kernel_run(&g, &sg, (uint32_t[3]){1, 1, 1}, (uint32_t[3]){8, 8, 1}, &args, sizeof args, &rep), -1);
  ck_assert_msg(strstr(rep.msg, "SGPRS 1: reserved on gfx10+") != NULL, "%s", rep.msg);
  gpu_free(&g);
}
END_TEST

/* An LLVM kernel using LDS fails when the descriptor's group segment (RSRC2.LDS_SIZE) is understated. */
START_TEST(kernel_descriptor_lds) {
  gpu_init(&g);
  kernel k;
  kernel_load(&g, "reduce_lds", &k);
  ck_assert_uint_eq(k.group_segment, 512);
  static float in[512];
  for (int i = 0; i < 512; i++) in[i] = 1.0f;
  uint64_t pi = gpu_alloc(&g, sizeof in, 256), po = gpu_alloc(&g, 256, 256);
  memcpy(gpu_ptr(&g, pi), in, sizeof in);
  const uint64_t args[2] = {po, pi};  /* out, in */
  rdna3_report rep;
  kernel under = k;
  ck_assert_int_eq(kernel_run(&g, &k, (uint32_t[3]){1, 1, 1}, (uint32_t[3]){128, 1, 1}, &args, sizeof args, &rep), 0);
  ck_assert(*(float *)gpu_ptr(&g, po) == 512.0f);
  under.group_segment = 0;
  ck_assert_int_eq(kernel_run(&g, &under, (uint32_t[3]){1, 1, 1}, (uint32_t[3]){128, 1, 1}, &args, sizeof args, &rep), -1);
  ck_assert_msg(strstr(rep.msg, "outside the workgroup's 0 bytes") != NULL, "%s", rep.msg);
  gpu_free(&g);
}
END_TEST

/* The K$: a second dispatch reads the line the first one cached, however memory changed, until it is
 * invalidated (the CP's ACQUIRE_MEM GLK_INV, or s_dcache_inv in the shader); without a K$ memory is read. */
static uint32_t kload(const char *snippet, rdna3_kcache *kc, uint64_t src, uint64_t dst) {
  rdna3_dispatch d = {.pgm_addr = snippet_va(&g, snippet), .pgm_rsrc2 = 4u << 1, .num_thread = {32, 1, 1},
                      .grid = {1, 1, 1}, .initiator = 1u << 15, .max_insts = 1000,
                      .user_data = {(uint32_t)src, (uint32_t)(src >> 32), (uint32_t)dst, (uint32_t)(dst >> 32)}};
  rdna3_report rep;
  rdna3_mem m = gpu_mem(&g);
  m.kcache = kc;
  ck_assert_msg(rdna3_dispatch(&d, &m, &rep) == 0, "%s", rep.msg);
  return *(uint32_t *)gpu_ptr(&g, dst);
}

START_TEST(kcache_stale_until_invalidated) {
  gpu_init(&g);
  static rdna3_kcache kc;
  rdna3_kcache_invalidate(&kc);
  uint64_t src = gpu_alloc(&g, 256, 256), dst = gpu_alloc(&g, 256, 256);
  uint32_t *s = gpu_ptr(&g, src);
  s[0] = 7;
  ck_assert_uint_eq(kload("kload", &kc, src, dst), 7);
  s[0] = 8;
  ck_assert_uint_eq(kload("kload", &kc, src, dst), 7);    /* stale */
  ck_assert_uint_eq(kload("kload", NULL, src, dst), 8);   /* no K$ */
  rdna3_kcache_invalidate(&kc);
  ck_assert_uint_eq(kload("kload", &kc, src, dst), 8);
  s[0] = 9;
  ck_assert_uint_eq(kload("kload_inv", &kc, src, dst), 9); /* s_dcache_inv */
  ck_assert_uint_ge(kc.hits, 1);
  gpu_free(&g);
}
END_TEST

TCase *limit_tests(void) {
  TCase *tc = tcase_create("limits");
  tcase_add_test(tc, vm_wait);
  tcase_add_test(tc, vm_without_wait_reads_old_value);
  tcase_add_test(tc, vm_partial_wait);
  tcase_add_test(tc, smem_wait);
  tcase_add_test(tc, lds_waits);
  tcase_add_test(tc, pending_overflow);
  tcase_add_test(tc, vgpr_beyond_grant);
  tcase_add_test(tc, kernel_descriptor_vgprs);
  tcase_add_test(tc, kernel_descriptor_lds);
  tcase_add_test(tc, kcache_stale_until_invalidated);
  return tc;
}
