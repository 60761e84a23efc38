/* tests/unit/rdna3/test_faults.c: what stops a dispatch and what its report says: encodings the
 * emulator does not implement (with their dwords, address and disassembly), unmapped memory,
 * misaligned scalar loads, LDS out of range, a PC outside mapped code, the instruction budget. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "tests.h"

static gpu g;
static wave_run r;

static void start(const char *snippet) {
  gpu_init(&g);
  wave_setup(&r, &g, snippet);
}

static void expect_fail(const char *needle) {
  ck_assert_int_eq(wave_go(&r), -1);
  ck_assert_msg(strstr(r.rep.msg, needle) != NULL, "report \"%s\" lacks \"%s\"", r.rep.msg, needle);
}

static bool have_disassembler(void) {
  char buf[64];
  const uint32_t nop = 0xbf800000u;
  rdna3_disasm(&nop, 1, buf, sizeof buf);
  return strcmp(buf, "s_nop 0") == 0;
}

START_TEST(unknown_encoding_report) {
  start("bad_unknown");
  uint64_t pc = r.w.pc;
  const uint32_t *code = gpu_ptr(&g, pc);
  expect_fail("unknown encoding");
  char where[64], dwords[32];
  snprintf(where, sizeof where, "at pc 0x%llx", (unsigned long long)pc);
  snprintf(dwords, sizeof dwords, "[%08x", code[0]);
  ck_assert_ptr_nonnull(strstr(r.rep.msg, where));
  ck_assert_ptr_nonnull(strstr(r.rep.msg, dwords));
  ck_assert_uint_eq(r.rep.pc, pc);
  ck_assert_uint_eq(r.rep.enc[0], code[0]);
  if (have_disassembler()) ck_assert_ptr_nonnull(strstr(r.rep.msg, "tbuffer_load_format_x v1"));
  gpu_free(&g);
  start("bad_unimpl_mubuf");
  expect_fail("unimplemented MUBUF opcode 20");
  gpu_free(&g);
}
END_TEST

START_TEST(unimplemented_valu_and_dpp) {
  start("bad_unimpl_valu");
  expect_fail("unimplemented VALU opcode 0x20c");
  if (have_disassembler()) ck_assert_ptr_nonnull(strstr(r.rep.msg, "v_cubeid_f32"));
  gpu_free(&g);
  start("bad_dpp");
  expect_fail("DPP");
  gpu_free(&g);
  start("bad_sendmsg");
  expect_fail("s_sendmsg 1 is not supported");
  gpu_free(&g);
}
END_TEST

START_TEST(unmapped_global_access) {
  start("bad_unmapped");
  uint64_t hole = gpu_alloc(&g, 8192, 4096);
  g.hole_va = hole, g.hole_size = 8192;
  r.w.s[0] = (uint32_t)hole, r.w.s[1] = (uint32_t)(hole >> 32);
  for (unsigned l = 0; l < 32; l++) r.w.v[0][l] = l * 4 + 4;
  char addr[64];
  snprintf(addr, sizeof addr, "address 0x%llx is not mapped", (unsigned long long)(hole + 4));
  expect_fail(addr);
  gpu_free(&g);
}
END_TEST

START_TEST(misaligned_smem) {
  start("bad_smem_align");
  uint64_t buf = gpu_alloc(&g, 64, 64);
  r.w.s[0] = (uint32_t)buf, r.w.s[1] = (uint32_t)(buf >> 32);
  expect_fail("misaligned scalar load");
  gpu_free(&g);
}
END_TEST

START_TEST(lds_out_of_range) {
  start("bad_lds");
  for (unsigned l = 0; l < 32; l++) r.w.v[0][l] = l == 9 ? 8 : 0;
  expect_fail("outside the workgroup's 65536 bytes");
  ck_assert_ptr_nonnull(strstr(r.rep.msg, "lane 9"));
  gpu_free(&g);
}
END_TEST

START_TEST(pc_outside_code) {
  start("bad_setpc");
  uint64_t far = GPU_BASE + GPU_SIZE + 0x1000;
  r.w.s[0] = (uint32_t)far, r.w.s[1] = (uint32_t)(far >> 32);
  expect_fail("program counter outside mapped code");
  ck_assert_uint_eq(r.rep.pc, far);
  gpu_free(&g);
}
END_TEST

START_TEST(budget_exhausted) {
  start("bad_loop");
  r.c.budget = 5000;
  expect_fail("instruction budget of 5000 exhausted");
  ck_assert_uint_eq(r.c.insts, 5000);
  gpu_free(&g);
}
END_TEST

/* Code ending at a page boundary with nothing mapped after it: instruction fetch translates
 * only what instructions need. An instruction continuing into the hole is a report. */
START_TEST(code_at_page_end) {
  start("page_end");
  const uint32_t *src = gpu_ptr(&g, r.w.pc);  /* v_mov_b32 v1, lit (2 dwords); s_endpgm */
  uint32_t code[3] = {src[0], src[1], src[2]};
  uint64_t pages = gpu_alloc(&g, 3 * GPU_PAGE, GPU_PAGE);
  g.hole_va = pages + GPU_PAGE, g.hole_size = GPU_PAGE;
  uint64_t at = pages + GPU_PAGE - 12;
  memcpy(gpu_ptr(&g, at), code, 12);
  r.w.pc = at;
  ck_assert_int_eq(wave_go(&r), 0);
  ck_assert_uint_eq(r.w.v[1][0], 0x12345678u);
  ck_assert_uint_eq(g.faults, 0);
  /* the literal split across a page boundary into a mapped page */
  uint64_t split = pages + 3 * GPU_PAGE - 4;
  uint64_t more = gpu_alloc(&g, GPU_PAGE, GPU_PAGE);
  ck_assert_uint_eq(more, pages + 3 * GPU_PAGE);
  memcpy(gpu_ptr(&g, split), code, 12);
  r.w.pc = split, r.w.done = false, r.w.v[1][0] = 0;
  ck_assert_int_eq(wave_go(&r), 0);
  ck_assert_uint_eq(r.w.v[1][0], 0x12345678u);
  /* and into the hole */
  memcpy(gpu_ptr(&g, pages + GPU_PAGE - 4), code, 4);
  r.w.pc = pages + GPU_PAGE - 4, r.w.done = false;
  expect_fail("instruction runs past mapped code");
  gpu_free(&g);
}
END_TEST

/* A VOP3 and a VOPD whose second dword lies on the next page: fetch hands out dwords only to the end of a page,
 * so the decoders must fetch dword 1 before reading it (they read a stale 0 once: the VOPD then wrote v0/v1
 * instead of v13/v12, and a 12 KiB AMD kernel stored through a corrupted index: a page fault). */
START_TEST(two_dword_valu_across_pages) {
  start("page_end");   /* the wave's context; its code is replaced below */
  uint64_t pages = gpu_alloc(&g, 2 * GPU_PAGE, GPU_PAGE);
  static const uint32_t vop3[3] = {0xd6470005u, 0x020a0101u, 0xbfb00000u}; /* v_add_lshl_u32 v5, v1, v0, 2 */
  static const uint32_t vopd[3] = {0xc908f70du, 0x0d0cd90cu, 0xbfb00000u}; /* v_dual_add_f32 v13, v13, v123 ::
                                                                              v_dual_add_f32 v12, v12, v108 */
  uint64_t split = pages + GPU_PAGE - 4;
  memcpy(gpu_ptr(&g, split), vop3, sizeof vop3);
  r.w.pc = split, r.w.v[0][0] = 3, r.w.v[1][0] = 4;
  ck_assert_int_eq(wave_go(&r), 0);
  ck_assert_uint_eq(r.w.v[5][0], (3u + 4u) << 2);
  memcpy(gpu_ptr(&g, split), vopd, sizeof vopd);
  float one = 1, two = 2, three = 3, four = 4, f;
  memcpy(&r.w.v[13][0], &one, 4), memcpy(&r.w.v[123][0], &two, 4);
  memcpy(&r.w.v[12][0], &three, 4), memcpy(&r.w.v[108][0], &four, 4);
  r.w.pc = split, r.w.done = false;
  ck_assert_int_eq(wave_go(&r), 0);
  memcpy(&f, &r.w.v[13][0], 4);
  ck_assert(f == 3.0f);
  memcpy(&f, &r.w.v[12][0], 4);
  ck_assert(f == 7.0f);
  ck_assert_uint_eq(r.w.v[0][0], 3);
  ck_assert_uint_eq(r.w.v[1][0], 4);
  gpu_free(&g);
}
END_TEST

/* Through rdna3_dispatch: the report names the workgroup and wave; a wave64 dispatch is refused. */
START_TEST(dispatch_reports) {
  gpu_init(&g);
  rdna3_dispatch d = {.pgm_addr = snippet_va(&g, "bad_loop"), .num_thread = {64, 1, 1}, .grid = {2, 1, 1},
                      .start = {5, 0, 0}, .max_insts = 100000};
  rdna3_report rep;
  rdna3_mem mem = gpu_mem(&g);
  ck_assert_int_eq(rdna3_dispatch(&d, &mem, &rep), -1);
  ck_assert_ptr_nonnull(strstr(rep.msg, "CS_W32_EN"));
  d.initiator = 1u << 15;
  ck_assert_int_eq(rdna3_dispatch(&d, &mem, &rep), -1);
  ck_assert_ptr_nonnull(strstr(rep.msg, "budget"));
  ck_assert_ptr_nonnull(strstr(rep.msg, "workgroup (5,0,0) wave 0"));
  ck_assert_uint_eq(rep.wg[0], 5);
  ck_assert_uint_eq(rep.insts, 100000);
  gpu_free(&g);
}
END_TEST

TCase *fault_tests(void) {
  TCase *tc = tcase_create("faults");
  tcase_add_test(tc, unknown_encoding_report);
  tcase_add_test(tc, unimplemented_valu_and_dpp);
  tcase_add_test(tc, unmapped_global_access);
  tcase_add_test(tc, misaligned_smem);
  tcase_add_test(tc, lds_out_of_range);
  tcase_add_test(tc, pc_outside_code);
  tcase_add_test(tc, budget_exhausted);
  tcase_add_test(tc, dispatch_reports);
  tcase_add_test(tc, code_at_page_end);
  tcase_add_test(tc, two_dword_valu_across_pages);
  return tc;
}
