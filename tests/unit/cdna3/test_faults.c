/* tests/unit/cdna3/test_faults.c: strictness and dispatch rules: an unimplemented opcode or DPP is reported with
 * pc, dwords, the gfx942 disassembly, workgroup and wave; unmapped addresses fault; registers beyond the
 * RSRC1/RSRC3 grant stop the dispatch; the instruction budget and the preempted poll end an endless wave; a
 * wave32 initiator is refused; multi-XCC dispatches split the workgroups by linear id % nxcc. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "tests.h"

static void expect_fail(gpu *g, const char *snippet, unsigned nvgpr, const char *want1, const char *want2) {
  wave_run *r = wave_new(g, snippet);
  if (nvgpr) r->c.nvgpr = r->c.accum_offset = nvgpr, r->c.nreg = nvgpr + 8;
  ck_assert_int_eq(wave_go(r), -1);
  ck_assert_msg(strstr(r->rep.msg, want1), "%s: '%s' not in: %s", snippet, want1, r->rep.msg);
  if (want2) ck_assert_msg(strstr(r->rep.msg, want2), "%s: '%s' not in: %s", snippet, want2, r->rep.msg);
  ck_assert_uint_eq(r->rep.pc, snippet_va(g, snippet));
  free(r);
}

START_TEST(reports) {
  gpu g;
  gpu_init(&g);
  expect_fail(&g, "unknown_op", 0, "unimplemented VALU opcode 0x1dc", "v_sad_u32 v1, v2, v3, v4");
  expect_fail(&g, "dpp_op", 0, "DPP is not implemented", "quad_perm");
  expect_fail(&g, "high_vgpr", 32, "VGPR v40 (destination) beyond the 32 VGPRs", "workgroup (0,0,0) wave 0");
  expect_fail(&g, "high_agpr", 32, "AGPR a9 (destination) beyond the grant", NULL);
  gpu_free(&g);
}
END_TEST

static uint64_t hole;
START_TEST(unmapped) {
  gpu g;
  gpu_init(&g);
  hole = gpu_alloc(&g, 8192, 4096);
  g.hole_va = hole, g.hole_size = 8192;
  wave_run *r = wave_new(&g, "unmapped_load");
  for (unsigned l = 0; l < 64; l++) r->w.v[2][l] = (uint32_t)(hole + 4 * l), r->w.v[3][l] = (uint32_t)((hole + 4 * l) >> 32);
  ck_assert_int_eq(wave_go(r), -1);
  ck_assert_msg(strstr(r->rep.msg, "read fault") && strstr(r->rep.msg, "global_load_dword"), "%s", r->rep.msg);
  free(r);
  r = wave_new(&g, "unmapped_sload");
  r->w.s[0] = (uint32_t)hole, r->w.s[1] = (uint32_t)(hole >> 32);
  ck_assert_int_eq(wave_go(r), -1);
  ck_assert_msg(strstr(r->rep.msg, "read fault") && strstr(r->rep.msg, "(s_load_dword s4, s[0:1], 0x0)"), "%s",
                r->rep.msg);
  free(r);
  gpu_free(&g);
}
END_TEST

static bool always(void *ctx) { (void)ctx; return true; }

START_TEST(budget_and_preempt) {
  gpu g;
  gpu_init(&g);
  wave_run *r = wave_new(&g, "endless");
  ck_assert_int_eq(wave_go(r), -1);
  ck_assert_msg(strstr(r->rep.msg, "instruction budget of 100000"), "%s", r->rep.msg);
  free(r);
  r = wave_new(&g, "endless");
  r->mem.preempted = always;
  r->c.insts = 4096;
  ck_assert_int_eq(wave_go(r), -1);
  ck_assert_str_eq(r->rep.msg, "cdna3: preempted (queue dequeued)");
  free(r);
  gpu_free(&g);
}
END_TEST

START_TEST(dispatch_rules) {
  gpu g;
  gpu_init(&g);
  kernel k;
  kernel_load(&g, "ew_f32", &k);
  /* the descriptor's grants: a wave64 kernel with no AGPRs puts ACCUM_OFFSET at the end of its VGPRs */
  ck_assert_uint_eq(((k.rsrc3 & 0x3f) + 1) * 4, ((k.rsrc1 & 0x3f) + 1) * 8);
  rdna3_report rep;
  cdna3_dispatch d = {.regs = {.pgm_addr = k.code_va, .pgm_rsrc1 = k.rsrc1, .pgm_rsrc2 = k.rsrc2, .pgm_rsrc3 = k.rsrc3,
                               .num_thread = {64, 1, 1}, .grid = {1, 1, 1}, .initiator = 1u << 15},
                      .nxcc = 1};
  rdna3_mem mem = gpu_mem(&g);
  ck_assert_int_eq(cdna3_dispatch_run(&d, &mem, &rep), -1);
  ck_assert_msg(strstr(rep.msg, "CS_W32_EN"), "%s", rep.msg);
  d.regs.initiator = 0, d.xcc = 2, d.nxcc = 2;
  ck_assert_int_eq(cdna3_dispatch_run(&d, &mem, &rep), -1);
  ck_assert_msg(strstr(rep.msg, "XCC 2 of 2"), "%s", rep.msg);
  /* an understated descriptor: 4 VGPRs (ACCUM_OFFSET too) for a kernel that uses more */
  d.xcc = 0, d.nxcc = 1;
  d.regs.pgm_rsrc1 = k.rsrc1 & ~0x3fu, d.regs.pgm_rsrc3 = k.rsrc3 & ~0x3fu;
  uint64_t ka0 = gpu_alloc(&g, 64, 64), data = gpu_alloc(&g, 1024, 256);
  uint64_t ew_args[4] = {data, data, data, (uint64_t)64 << 32};  /* out, a, b, c = 0, n = 64 */
  memcpy(gpu_ptr(&g, ka0), ew_args, sizeof ew_args);
  d.regs.user_data[4] = (uint32_t)ka0, d.regs.user_data[5] = (uint32_t)(ka0 >> 32);  /* after dispatch, queue ptrs */
  ck_assert_int_eq(cdna3_dispatch_run(&d, &mem, &rep), -1);
  ck_assert_msg(strstr(rep.msg, "beyond the 4 VGPRs the dispatch grants") && strstr(rep.msg, "), workgroup (0,0,0) wave 0") &&
                    strstr(rep.msg, "(v_"),
                "%s", rep.msg);
  /* LDS: reduce_lds needs 512 bytes; RSRC2.LDS_SIZE 0 grants none */
  kernel_load(&g, "reduce_lds", &k);
  d.regs = (rdna3_dispatch){.pgm_addr = k.code_va, .pgm_rsrc1 = k.rsrc1, .pgm_rsrc2 = k.rsrc2, .pgm_rsrc3 = k.rsrc3,
                            .num_thread = {128, 1, 1}, .grid = {1, 1, 1}};
  uint64_t buf = gpu_alloc(&g, 4096, 256), ka = gpu_alloc(&g, 64, 64);
  uint64_t kargs[2] = {buf, buf};
  memcpy(gpu_ptr(&g, ka), kargs, sizeof kargs);
  d.regs.user_data[4] = (uint32_t)ka, d.regs.user_data[5] = (uint32_t)(ka >> 32);
  ck_assert_int_eq(cdna3_dispatch_run(&d, &mem, &rep), -1);
  ck_assert_msg(strstr(rep.msg, "outside the workgroup's 0 bytes (RSRC2.LDS_SIZE)") && strstr(rep.msg, "(ds_write"),
                "%s", rep.msg);
  d.regs.pgm_rsrc2 |= 1u << 15;  /* one 512-byte unit: enough */
  ck_assert_msg(cdna3_dispatch_run(&d, &mem, &rep) == 0, "%s", rep.msg);
  gpu_free(&g);
}
END_TEST

/* Each XCC runs the workgroups whose linear id % nxcc == xcc: together they write every element once. */
START_TEST(xcc_share) {
  gpu g;
  gpu_init(&g);
  kernel k;
  kernel_load(&g, "ew_f32", &k);
  enum { N = 7 * 64 };
  static float a[N], b[N];
  for (int i = 0; i < N; i++) a[i] = (float)i, b[i] = 2.0f;
  uint64_t out = gpu_alloc(&g, N * 4, 256), pa = gpu_alloc(&g, N * 4, 256), pb = gpu_alloc(&g, N * 4, 256);
  memcpy(gpu_ptr(&g, pa), a, sizeof a);
  memcpy(gpu_ptr(&g, pb), b, sizeof b);
  uint8_t args[32];
  float cc = 1.0f;
  uint32_t n = N;
  memcpy(args, &out, 8), memcpy(args + 8, &pa, 8), memcpy(args + 16, &pb, 8), memcpy(args + 24, &cc, 4);
  memcpy(args + 28, &n, 4);
  const uint32_t grid[3] = {7, 1, 1}, local[3] = {64, 1, 1};
  float *o = gpu_ptr(&g, out);
  rdna3_report rep;
  ck_assert_msg(kernel_run_xcc(&g, &k, grid, local, args, 32, 1, 3, &rep) == 0, "%s", rep.msg);
  ck_assert_uint_eq(rep.waves, 2);  /* workgroups 1 and 4 */
  for (int i = 0; i < N; i++) ck_assert_float_eq(o[i], (i / 64) % 3 == 1 ? 2.0f * (float)i + 1.0f : 0.0f);
  for (unsigned x = 0; x < 3; x += 2) ck_assert_msg(kernel_run_xcc(&g, &k, grid, local, args, 32, x, 3, &rep) == 0, "%s", rep.msg);
  for (int i = 0; i < N; i++) ck_assert_float_eq(o[i], 2.0f * (float)i + 1.0f);
  /* a 3-D grid (3x2x2 workgroups of 4x2x2): the linear id is x + 3 * (y + 2 * z), not x */
  kernel_load(&g, "grid3d", &k);
  uint64_t out3 = gpu_alloc(&g, 12 * 4 * 4 * 4, 256);
  memcpy(args, &out3, 8);
  const uint32_t grid3[3] = {3, 2, 2}, local3[3] = {4, 2, 2};
  ck_assert_msg(kernel_run_xcc(&g, &k, grid3, local3, args, 8, 1, 4, &rep) == 0, "%s", rep.msg);
  const uint32_t *o3 = gpu_ptr(&g, out3);
  for (uint32_t z = 0; z < 4; z++)
    for (uint32_t y = 0; y < 4; y++)
      for (uint32_t x = 0; x < 12; x++) {
        uint32_t linear = x / 4 + 3 * (y / 2 + 2 * (z / 2));
        uint32_t want = (z / 2) << 24 | (y / 2) << 20 | (x / 4) << 16 | (z % 2) << 8 | (y % 2) << 4 | (x % 4);
        ck_assert_uint_eq(o3[(z * 4 + y) * 12 + x], linear % 4 == 1 ? want : 0);
      }
  gpu_free(&g);
}
END_TEST

/* Statistics: every instruction in exactly one class, bytes of active lanes only (200 of 256 work-items). */
START_TEST(stats) {
  gpu g;
  gpu_init(&g);
  kernel k;
  kernel_load(&g, "ew_f32", &k);
  enum { N = 200 };
  uint64_t out = gpu_alloc(&g, 256 * 4, 256), pa = gpu_alloc(&g, 256 * 4, 256), pb = gpu_alloc(&g, 256 * 4, 256);
  uint8_t args[32];
  float cc = 1.0f;
  uint32_t n = N;
  memcpy(args, &out, 8), memcpy(args + 8, &pa, 8), memcpy(args + 16, &pb, 8), memcpy(args + 24, &cc, 4);
  memcpy(args + 28, &n, 4);
  const uint32_t grid[3] = {4, 1, 1}, local[3] = {64, 1, 1};
  rdna3_report rep;
  ck_assert_msg(kernel_run(&g, &k, grid, local, args, 32, &rep) == 0, "%s", rep.msg);
  const rdna3_stats *st = &rep.stats;
  ck_assert_uint_eq(st->waves, 4);
  ck_assert_uint_eq(st->wave_insts, rep.insts);
  ck_assert_uint_eq(st->valu_insts + st->salu_insts + st->smem_insts + st->vmem_insts + st->lds_insts, st->wave_insts);
  ck_assert_uint_eq(st->global_load_bytes, 2 * N * 4);
  ck_assert_uint_eq(st->global_store_bytes, N * 4);
  ck_assert_uint_eq(st->vmem_insts, 3 * 4);  /* two loads and a store per wave: the last has 8 live lanes */
  gpu_free(&g);
}
END_TEST

TCase *fault_tests(void) {
  TCase *tc = tcase_create("faults");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, reports);
  tcase_add_test(tc, unmapped);
  tcase_add_test(tc, budget_and_preempt);
  tcase_add_test(tc, dispatch_rules);
  tcase_add_test(tc, xcc_share);
  tcase_add_test(tc, stats);
  return tc;
}
