/* tests/unit/cdna3/test_asm.c: wave64 semantics from gfx942 assembly (asm_snippets.s), expected values computed
 * here from the CDNA3 ISA guide's pseudocode: 64-bit VCC/EXEC masks, carries, saveexec, v_cmpx, mbcnt and lane
 * moves, AccVGPR moves, SDWA, 64-bit index math, M0-relative indexing, LDS, and the load latency model. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "tests.h"

static wave_run *run_snippet(gpu *g, const char *name, void (*preset)(wave_run *)) {
  wave_run *r = wave_new(g, name);
  for (unsigned l = 0; l < CDNA3_LANES; l++) r->w.v[0][l] = l;
  if (preset) preset(r);
  ck_assert_msg(wave_go(r) == 0, "%s: %s", name, r->rep.msg);
  return r;
}

static uint64_t sgpr64(const wave_run *r, unsigned s) { return r->w.s[s] | (uint64_t)r->w.s[s + 1] << 32; }

START_TEST(vcc_exec_wave64) {
  gpu g;
  gpu_init(&g);
  wave_run *r = run_snippet(&g, "vcc_wave64", NULL);
  ck_assert_uint_eq(sgpr64(r, 0), (1ull << 45) - 1);                 /* VCC from a 64-lane compare */
  for (unsigned l = 0; l < 64; l++) {
    ck_assert_uint_eq(r->w.v[1][l], l < 45 ? 20u : 10u);             /* v_cndmask: src1 where VCC */
    ck_assert_uint_eq(r->w.v[2][l], l > 40 ? 7u : 0u);               /* written under the saved-and-masked EXEC */
    ck_assert_uint_eq(r->w.v[3][l], l == 33 ? 9u : 0u);              /* v_cmpx narrowed EXEC to lane 33 */
  }
  ck_assert_uint_eq(sgpr64(r, 2), ~0ull);                            /* s_and_saveexec_b64 saved all 64 lanes */
  ck_assert_uint_eq(sgpr64(r, 6), 1ull << 33);
  ck_assert_uint_eq(sgpr64(r, 8), 1ull << 33);                       /* gfx9 V_CMPX writes VCC too */
  free(r);
  gpu_free(&g);
}
END_TEST

static void preset_carry(wave_run *r) {
  for (unsigned l = 0; l < 64; l++) {
    uint64_t a = 0xfffffff0ull * (l + 1) + (uint64_t)l * 0x100000001ull, b = 0x0000001fffffffffull >> (l % 7);
    r->w.v[0][l] = (uint32_t)a, r->w.v[1][l] = (uint32_t)(a >> 32);
    r->w.v[2][l] = (uint32_t)b, r->w.v[3][l] = (uint32_t)(b >> 32);
  }
}

START_TEST(carries) {
  gpu g;
  gpu_init(&g);
  wave_run *r = run_snippet(&g, "carry64", preset_carry);
  uint64_t borrow = 0;
  for (unsigned l = 0; l < 64; l++) {
    uint64_t a = r->w.v[0][l] | (uint64_t)r->w.v[1][l] << 32, b = r->w.v[2][l] | (uint64_t)r->w.v[3][l] << 32;
    uint64_t s = r->w.v[4][l] | (uint64_t)r->w.v[5][l] << 32, d = r->w.v[6][l] | (uint64_t)r->w.v[7][l] << 32;
    ck_assert_uint_eq(s, a + b);
    ck_assert_uint_eq(d, a - b);
    if ((uint32_t)b > (uint32_t)a) borrow |= 1ull << l;
  }
  ck_assert_uint_eq(sgpr64(r, 10), borrow);  /* the low half's borrow-out pair */
  free(r);
  gpu_free(&g);
}
END_TEST

static void preset_lanes(wave_run *r) {
  for (unsigned l = 0; l < 64; l++) r->w.v[2][l] = 1000 + l, r->w.v[3][l] = 5;
}

START_TEST(lane_ops) {
  gpu g;
  gpu_init(&g);
  wave_run *r = run_snippet(&g, "lanes", preset_lanes);
  for (unsigned l = 0; l < 64; l++) {
    ck_assert_uint_eq(r->w.v[1][l], l);                       /* mbcnt_lo + mbcnt_hi of all ones: the lane id */
    ck_assert_uint_eq(r->w.v[3][l], l == 50 ? 1045u : 5u);    /* v_writelane ignores EXEC */
  }
  ck_assert_uint_eq(r->w.s[4], 1045);                         /* v_readlane lane 45 */
  ck_assert_uint_eq(r->w.s[5], 1048);                         /* v_readfirstlane: first lane of EXEC (48) */
  free(r);
  gpu_free(&g);
}
END_TEST

START_TEST(accvgpr_moves) {
  gpu g;
  gpu_init(&g);
  wave_run *r = run_snippet(&g, "accvgpr", NULL);
  for (unsigned l = 0; l < 64; l++) {
    ck_assert_uint_eq(agpr(r, 3)[l], l);
    ck_assert_uint_eq(agpr(r, 4)[l], l);
    ck_assert_uint_eq(agpr(r, 5)[l], 5);
    ck_assert_uint_eq(r->w.v[6][l], l);
    ck_assert_uint_eq(r->w.v[3][l], 0);  /* a3 is not v3: AGPRs start at ACCUM_OFFSET */
  }
  free(r);
  gpu_free(&g);
}
END_TEST

static void preset_sdwa(wave_run *r) {
  for (unsigned l = 0; l < 64; l++)
    r->w.v[2][l] = 0x80a1b2c3u + l * 0x01010101u, r->w.v[3][l] = 0x1234f00du + l, r->w.v[1][l] = 0xdead5555u;
}

START_TEST(sdwa) {
  gpu g;
  gpu_init(&g);
  wave_run *r = run_snippet(&g, "sdwa", preset_sdwa);
  for (unsigned l = 0; l < 64; l++) {
    uint32_t a = 0x80a1b2c3u + l * 0x01010101u, b = 0x1234f00du + l;
    uint32_t sum = ((a >> 8) & 0xff) + (b & 0xffff);
    ck_assert_uint_eq(r->w.v[1][l], (sum & 0xffff) << 16 | 0x5555);  /* WORD_1, low half preserved */
    ck_assert_uint_eq(r->w.v[4][l], (a >> 24) | (b & 0xff));
    ck_assert_uint_eq(r->w.v[5][l], (uint32_t)(int32_t)(int8_t)(a & 0xff));
  }
  free(r);
  gpu_free(&g);
}
END_TEST

static void preset_index(wave_run *r) {
  for (unsigned l = 0; l < 64; l++)
    r->w.v[0][l] = 0x89abcdefu + l * 77777, r->w.v[1][l] = 0x12345 + l, r->w.v[2][l] = 0xfedcba98u,
    r->w.v[3][l] = 0x76543210u + l;
}

START_TEST(index64) {
  gpu g;
  gpu_init(&g);
  wave_run *r = run_snippet(&g, "index64", preset_index);
  for (unsigned l = 0; l < 64; l++) {
    uint64_t a = r->w.v[0][l] | (uint64_t)r->w.v[1][l] << 32, c = r->w.v[2][l] | (uint64_t)r->w.v[3][l] << 32;
    ck_assert_uint_eq(r->w.v[4][l] | (uint64_t)r->w.v[5][l] << 32, (a << 3) + c);
    ck_assert_uint_eq(r->w.v[6][l] | (uint64_t)r->w.v[7][l] << 32, (uint64_t)r->w.v[0][l] * r->w.v[1][l] + c);
  }
  free(r);
  gpu_free(&g);
}
END_TEST

START_TEST(gpr_idx) {
  gpu g;
  gpu_init(&g);
  wave_run *r = run_snippet(&g, "gpr_idx", NULL);
  for (unsigned l = 0; l < 64; l++) {
    ck_assert_uint_eq(r->w.v[15][l], l);  /* v10 + M0[7:0] (5) */
    ck_assert_uint_eq(r->w.v[10][l], 0);
    ck_assert_uint_eq(r->w.v[11][l], l);  /* indexing off again */
  }
  free(r);
  gpu_free(&g);
}
END_TEST

static uint64_t load_va;
static void preset_load(wave_run *r) {
  for (unsigned l = 0; l < 64; l++) {
    uint64_t va = load_va + 4 * l;
    r->w.v[2][l] = (uint32_t)va, r->w.v[3][l] = (uint32_t)(va >> 32), r->w.v[1][l] = 0xaaaa;
  }
}

START_TEST(waitcnt) {
  gpu g;
  gpu_init(&g);
  load_va = gpu_alloc(&g, 256, 256);
  uint32_t *m = gpu_ptr(&g, load_va);
  for (unsigned l = 0; l < 64; l++) m[l] = 5000 + l;
  wave_run *r = run_snippet(&g, "waitcnt", preset_load);
  for (unsigned l = 0; l < 64; l++) {
    ck_assert_uint_eq(r->w.v[4][l], 0xaaaa);    /* read before s_waitcnt: the old value */
    ck_assert_uint_eq(r->w.v[5][l], 5000 + l);  /* after it: the loaded one */
  }
  free(r);
  gpu_free(&g);
}
END_TEST

static uint64_t smem_va;
static void preset_smem(wave_run *r) {
  r->w.s[0] = (uint32_t)smem_va, r->w.s[1] = (uint32_t)(smem_va >> 32), r->w.s[4] = 1, r->w.s[5] = 2;
}

START_TEST(smem_lgkmcnt) {
  gpu g;
  gpu_init(&g);
  smem_va = gpu_alloc(&g, 64, 64);
  uint32_t *m = gpu_ptr(&g, smem_va);
  m[2] = 0x1111, m[3] = 0x2222;
  wave_run *r = run_snippet(&g, "smem", preset_smem);
  ck_assert_uint_eq(r->w.s[6], 1);       /* s4 before the wait */
  ck_assert_uint_eq(r->w.s[7], 0x2222);  /* s5 after it */
  free(r);
  gpu_free(&g);
}
END_TEST

static void preset_lds(wave_run *r) {
  for (unsigned l = 0; l < 64; l++) r->w.v[2][l] = 3 * l + 1;
}

START_TEST(lds) {
  gpu g;
  gpu_init(&g);
  wave_run *r = run_snippet(&g, "lds", preset_lds);
  for (unsigned l = 0; l < 64; l++) {
    ck_assert_uint_eq(r->w.v[4][l], l);
    ck_assert_uint_eq(r->w.v[5][l], 3 * l + 1);                 /* offset1:64 dwords further */
    ck_assert_uint_eq(r->w.v[6][l], l);                         /* ds_add_rtn: the old value */
    uint32_t now;
    memcpy(&now, r->lds + 4 * l, 4);
    ck_assert_uint_eq(now, l + 3 * l + 1);
  }
  ck_assert_uint_eq(r->c.st.lds_insts, 3);
  free(r);
  gpu_free(&g);
}
END_TEST

static float fv(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint32_t uv(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float hv(uint32_t u, unsigned hi) { _Float16 h; uint16_t x = (uint16_t)(u >> (16 * hi)); memcpy(&h, &x, 2); return (float)h; }
static uint32_t hu(float f) { _Float16 h = (_Float16)f; uint16_t x; memcpy(&x, &h, 2); return x; }

static void preset_packed(wave_run *r) {
  for (unsigned l = 0; l < 64; l++) {
    for (unsigned i = 0; i < 6; i++) r->w.v[i][l] = uv(0.25f * (float)(l + 1) * (float)(i + 1) - 3.0f);
    r->w.v[6][l] = hu(0.5f * (float)l) | hu(-1.5f) << 16;
    r->w.v[7][l] = hu(2.0f) | hu(0.125f * (float)l) << 16;
  }
}

START_TEST(packed) {
  gpu g;
  gpu_init(&g);
  wave_run *r = run_snippet(&g, "packed", preset_packed);
  for (unsigned l = 0; l < 64; l++) {
    const uint32_t *v[6];
    for (unsigned i = 0; i < 6; i++) v[i] = &r->w.v[i][l];
    float a0 = fv(*v[0]), a1 = fv(*v[1]), b0 = fv(*v[2]), b1 = fv(*v[3]), c0 = fv(*v[4]), c1 = fv(*v[5]);
    ck_assert_uint_eq(r->w.v[10][l], uv(fmaf(a0, b0, c0)));
    ck_assert_uint_eq(r->w.v[11][l], uv(fmaf(a1, b1, c1)));
    ck_assert_uint_eq(r->w.v[12][l], uv(a1 * b0));          /* low: src0's high dword (op_sel), src1's low */
    ck_assert_uint_eq(r->w.v[13][l], uv(a0 * b1));          /* high: src0's low dword (op_sel_hi 0), src1's high */
    ck_assert_uint_eq(r->w.v[14][l], uv(a0 - b0));          /* neg_lo on src1: low result only */
    ck_assert_uint_eq(r->w.v[15][l], uv(a1 + b1));
    ck_assert_uint_eq(r->w.v[16][l], *v[1]);                /* v_pk_mov_b32: src0's high dword, src1's low */
    ck_assert_uint_eq(r->w.v[17][l], *v[2]);
    uint32_t x = r->w.v[6][l], y = r->w.v[7][l];
    ck_assert_uint_eq(r->w.v[18][l], hu(hv(x, 1) + hv(y, 0)) | hu(hv(x, 0) + hv(y, 1)) << 16);
    ck_assert_uint_eq(r->w.v[19][l], hu(hv(x, 0) * hv(y, 0)) | hu(-hv(x, 1) * hv(y, 1)) << 16);
    ck_assert_uint_eq(r->w.v[20][l], uv((float)((double)hv(x, 0) * hv(y, 0) + (double)hv(x, 1) * hv(y, 1) + a0)));
  }
  free(r);
  gpu_free(&g);
}
END_TEST

START_TEST(agpr_mem) {
  gpu g;
  gpu_init(&g);
  load_va = gpu_alloc(&g, 512, 256);
  uint32_t *m = gpu_ptr(&g, load_va);
  for (unsigned l = 0; l < 64; l++) m[l] = 0xabc00 + l;
  wave_run *r = run_snippet(&g, "agpr_mem", preset_load);
  for (unsigned l = 0; l < 64; l++) {
    ck_assert_uint_eq(agpr(r, 1)[l], 0xabc00 + l);
    ck_assert_uint_eq(agpr(r, 2)[l], 0xabc00 + l);
    ck_assert_uint_eq(r->w.v[1 + 0][l], 4 * l);  /* v1 is not a1 */
    ck_assert_uint_eq(m[64 + l], 0xabc00 + l);
  }
  free(r);
  gpu_free(&g);
}
END_TEST

START_TEST(lds_banks) {
  gpu g;
  gpu_init(&g);
  wave_run *r = run_snippet(&g, "lds_banks", NULL);
  /* stride 32 dwords: 32 lanes of each half meet bank 0 at distinct dwords, 31 extra cycles per half */
  ck_assert_uint_eq(r->c.st.lds_bank_conflict_cycles, 2 * 31);
  ck_assert_uint_eq(r->c.st.lds_store_bytes, 2 * 64 * 4);
  free(r);
  gpu_free(&g);
}
END_TEST

START_TEST(hwreg_mode) {
  gpu g;
  gpu_init(&g);
  wave_run *r = wave_new(&g, "hwreg_mode");
  r->w.mode = 0x3c0;  /* FP_DENORM f64/f16 3, DX10_CLAMP, IEEE_MODE */
  ck_assert_msg(wave_go(r) == 0, "%s", r->rep.msg);
  ck_assert_uint_eq(r->w.s[0], 0x30);     /* bits 4..7 set to 3 */
  ck_assert_uint_eq(r->w.s[2], 0x33a);    /* bits 0..3 from s1's low 4 bits (0xa) */
  free(r);
  r = wave_new(&g, "hwreg_other");
  ck_assert_int_eq(wave_go(r), -1);
  ck_assert_msg(strstr(r->rep.msg, "hardware register 4 is not modelled"), "%s", r->rep.msg);
  free(r);
  gpu_free(&g);
}
END_TEST

TCase *asm_tests(void) {
  TCase *tc = tcase_create("asm");
  tcase_add_test(tc, vcc_exec_wave64);
  tcase_add_test(tc, carries);
  tcase_add_test(tc, lane_ops);
  tcase_add_test(tc, accvgpr_moves);
  tcase_add_test(tc, sdwa);
  tcase_add_test(tc, index64);
  tcase_add_test(tc, gpr_idx);
  tcase_add_test(tc, waitcnt);
  tcase_add_test(tc, smem_lgkmcnt);
  tcase_add_test(tc, lds);
  tcase_add_test(tc, hwreg_mode);
  tcase_add_test(tc, lds_banks);
  tcase_add_test(tc, packed);
  tcase_add_test(tc, agpr_mem);
  return tc;
}
