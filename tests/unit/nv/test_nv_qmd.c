/* tests/unit/nv/test_nv_qmd.c: QMD packing (nv/nv_qmd.h) and pushbuffer method encoding (nv/nv_push.h).
 *
 * The golden positions are written here independently of nv_qmd.c's tables: each is the MW(hi:lo) of the named
 * macro in NVIDIA/open-gpu-doc classes/compute/clc6c0qmd.h (V03), clcbc0qmd.h (V04), clcec0qmd.h (V05), turned into
 * a dword index (bit / 32) and a mask by hand. The pushbuffer values are NVIDIA's (clc56f.h SEM_EXECUTE fields,
 * clc6b5.h LAUNCH_DMA fields) as tinygrad tinygrad/runtime/ops_nv.py writes them. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "../check_helpers.h"
#include "baregpu/error.h"
#include "nv/nv_push.h"
#include "nv/nv_qmd.h"

static unsigned popcount_all(const uint32_t *q, unsigned n) {
  unsigned c = 0;
  for (unsigned i = 0; i < n; i++) c += (unsigned)__builtin_popcount(q[i]);
  return c;
}

/* Set a field to v in an empty QMD: exactly the expected dword holds exactly the expected bits. */
static void golden(int ver, enum bg_nv_qmd_field f, unsigned index, uint64_t v, unsigned dw, uint32_t want) {
  uint32_t q[BG_NV_QMD_MAX_DWORDS];
  memset(q, 0, sizeof(q));
  OK(bg_nv_qmd_set(q, ver, f, index, v));
  ck_assert_msg(q[dw] == want, "V%02d field %d[%u] = 0x%llx: dword %u is 0x%08x, want 0x%08x", ver, (int)f, index,
                (unsigned long long)v, dw, q[dw], want);
  ck_assert_uint_eq(popcount_all(q, BG_NV_QMD_MAX_DWORDS), (unsigned)__builtin_popcount(want));
  ck_assert_uint_eq(bg_nv_qmd_get(q, ver, f, index), v);
}

START_TEST(qmd_v03_golden) {
  ck_assert_uint_eq(bg_nv_qmd_bytes(3), 256);
  golden(3, BG_QMD_QMD_MAJOR_VERSION, 0, 3, 18, 0x30);                 /* MW(583:580) */
  golden(3, BG_QMD_QMD_GROUP_ID, 0, 0x3f, 4, 0x3f);                    /* MW(133:128) */
  golden(3, BG_QMD_SM_GLOBAL_CACHING_ENABLE, 0, 1, 4, 0x40);           /* MW(134:134) */
  golden(3, BG_QMD_GRID_WIDTH, 0, 0x12345678, 12, 0x12345678);         /* CTA_RASTER_WIDTH MW(415:384) */
  golden(3, BG_QMD_GRID_HEIGHT, 0, 0xffff, 13, 0xffff);                /* CTA_RASTER_HEIGHT MW(431:416) */
  golden(3, BG_QMD_CTA_THREAD_DIMENSION1, 0, 0xabcd, 19, 0xabcd);      /* MW(623:608) */
  golden(3, BG_QMD_REGISTER_COUNT, 0, 0x1ff, 20, 0x1ff00);             /* REGISTER_COUNT_V MW(656:648) */
  golden(3, BG_QMD_BARRIER_COUNT, 0, 1, 23, 1u << 27);                 /* MW(767:763) */
  golden(3, BG_QMD_RELEASE_ENABLE, 0, 1, 25, 1u << 23);                /* RELEASE0_ENABLE MW(823:823) */
  golden(3, BG_QMD_RELEASE_ENABLE, 1, 1, 29, 1u << 23);                /* RELEASE1_ENABLE MW(951:951) */
  golden(3, BG_QMD_CONSTANT_BUFFER_SIZE_SHIFTED4, 0, 0x1fff, 33, 0xfff80000u); /* MW(1087:1075) */
  golden(3, BG_QMD_CONSTANT_BUFFER_SIZE_SHIFTED4, 1, 1, 35, 1u << 19);         /* (i=1) MW(1151:1139) */
  golden(3, BG_QMD_CONSTANT_BUFFER_VALID, 5, 1, 20, 1u << 5);          /* MW(645:645) */
  golden(3, BG_QMD_PROGRAM_ADDRESS_UPPER, 0, 0x1ffff, 49, 0x1ffff);    /* MW(1584:1568) */
  golden(3, BG_QMD_SHADER_LOCAL_MEMORY_HIGH_SIZE, 0, 0x240, 50, 0x240); /* MW(1623:1600) */
  golden(3, BG_QMD_SASS_VERSION, 0, 0x89, 51, 0x89000000u);            /* MW(1663:1656) */
}
END_TEST

START_TEST(qmd_v04_golden) {
  ck_assert_uint_eq(bg_nv_qmd_bytes(4), 384);
  golden(4, BG_QMD_QMD_TYPE, 0, 2, 0, 1u << 24);                        /* MW(25:23) = GRID_CTA */
  golden(4, BG_QMD_QMD_GROUP_ID, 0, 0x3f, 0, 0x3f0000);                 /* MW(21:16) */
  golden(4, BG_QMD_QMD_MAJOR_VERSION, 0, 4, 18, 0x40);                  /* MW(583:580) */
  golden(4, BG_QMD_GRID_WIDTH, 0, 7, 32, 7);                            /* MW(1055:1024) */
  golden(4, BG_QMD_GRID_DEPTH, 0, 0xffff, 34, 0xffff);                  /* MW(1103:1088) */
  golden(4, BG_QMD_CTA_THREAD_DIMENSION2, 0, 64, 37, 64);               /* MW(1199:1184) */
  golden(4, BG_QMD_REGISTER_COUNT, 0, 0x20, 37, 0x200000);              /* MW(1208:1200) */
  golden(4, BG_QMD_CONSTANT_BUFFER_VALID, 1, 1, 13, 1u << 4);           /* (i=1) MW(420:420) */
  golden(4, BG_QMD_CONSTANT_BUFFER_INVALIDATE, 0, 1, 13, 1u << 3);      /* MW(419:419) */
  golden(4, BG_QMD_CONSTANT_BUFFER_ADDR_UPPER, 1, 0x7ffff, 51, 0x7ffff); /* (i=1) MW(1650:1632) */
  golden(4, BG_QMD_RELEASE_ENABLE, 1, 1, 10, 1u << 16);                 /* (i=1) MW(336:336) */
  golden(4, BG_QMD_RELEASE0_ADDRESS_UPPER, 0, 0x1ffffff, 21, 0x1ffffff); /* RELEASE_SEMAPHORE0_ADDR_UPPER MW(696:672) */
  golden(4, BG_QMD_SHARED_MEMORY_SIZE, 0, 0x400, 18, 0x400u << 8);      /* MW(601:584) */
  golden(4, BG_QMD_DEPENDENT_QMD0_POINTER, 0, 0xdeadbeef, 14, 0xdeadbeefu); /* MW(479:448) */
}
END_TEST

START_TEST(qmd_v05_golden) {
  ck_assert_uint_eq(bg_nv_qmd_bytes(5), 384);
  golden(5, BG_QMD_QMD_MAJOR_VERSION, 0, 5, 14, 0x500000);              /* MW(471:468) */
  golden(5, BG_QMD_QMD_TYPE, 0, 2, 4, 1u << 24);                        /* MW(153:151) */
  golden(5, BG_QMD_GRID_WIDTH, 0, 0x1000, 39, 0x1000);                  /* MW(1279:1248) */
  golden(5, BG_QMD_CTA_THREAD_DIMENSION2, 0, 0xff, 35, 0xff);           /* MW(1127:1120) */
  golden(5, BG_QMD_CONSTANT_BUFFER_VALID, 2, 1, 58, 1u << 8);           /* (i=2) MW(1864:1864) */
  golden(5, BG_QMD_RELEASE1_ADDRESS_LOWER, 0, 0xcafe, 24, 0xcafe);      /* RELEASE_SEMAPHORE1_ADDR_LOWER MW(799:768) */
  uint32_t q[BG_NV_QMD_MAX_DWORDS];
  memset(q, 0, sizeof(q));
  OK(bg_nv_qmd_set_scaled(q, 5, BG_QMD_SHARED_MEMORY_SIZE, 0, 0x800));  /* SHARED_MEMORY_SIZE_SHIFTED7 MW(1162:1152) */
  ck_assert_uint_eq(q[36], 0x10);
  OK(bg_nv_qmd_set_addr(q, 5, BG_QMD_PROGRAM_ADDRESS_LOWER, BG_QMD_PROGRAM_ADDRESS_UPPER, 0, 0x1234567890ull));
  ck_assert_uint_eq(q[32], 0x23456789u); /* PROGRAM_ADDRESS_LOWER_SHIFTED4 MW(1055:1024) = addr >> 4 */
  ck_assert_uint_eq(q[33], 0x1);         /* PROGRAM_ADDRESS_UPPER_SHIFTED4 MW(1076:1056) */
}
END_TEST

START_TEST(qmd_errors) {
  uint32_t q[BG_NV_QMD_MAX_DWORDS];
  memset(q, 0, sizeof(q));
  FAILS(bg_nv_qmd_set(q, 3, BG_QMD_GRID_HEIGHT, 0, 0x10000), BG_EINVAL, "NVC6C0_QMDV03_00_CTA_RASTER_HEIGHT");
  ck_assert_msg(strstr(bg_last_error(), "16 bits"), "%s", bg_last_error());
  FAILS(bg_nv_qmd_set(q, 5, BG_QMD_CTA_THREAD_DIMENSION2, 0, 256), BG_EINVAL, "NVCEC0_QMDV05_00_CTA_THREAD_DIMENSION2");
  FAILS(bg_nv_qmd_set(q, 4, BG_QMD_REGISTER_COUNT, 0, 512), BG_EINVAL, "V04");
  FAILS(bg_nv_qmd_set(q, 3, BG_QMD_QMD_TYPE, 0, 2), BG_EINVAL, "V03 has no field");
  FAILS(bg_nv_qmd_set(q, 4, BG_QMD_SM_GLOBAL_CACHING_ENABLE, 0, 1), BG_EINVAL, "V04 has no field");
  FAILS(bg_nv_qmd_set(q, 6, BG_QMD_GRID_WIDTH, 0, 1), BG_EINVAL, "QMD version 6");
  FAILS(bg_nv_qmd_set(q, 4, BG_QMD_CONSTANT_BUFFER_VALID, 8, 1), BG_EINVAL, "index 8");
  FAILS(bg_nv_qmd_set_scaled(q, 5, BG_QMD_SHARED_MEMORY_SIZE, 0, 0x801), BG_EINVAL, "multiple of 128");
  FAILS(bg_nv_qmd_set_addr(q, 4, BG_QMD_CONSTANT_BUFFER_ADDR_LOWER, BG_QMD_CONSTANT_BUFFER_ADDR_UPPER, 0, 0x1020),
        BG_EINVAL, "aligned to 64");
  ck_assert_uint_eq(popcount_all(q, BG_NV_QMD_MAX_DWORDS), 0); /* failed sets wrote nothing */
  ck_assert(!bg_nv_qmd_has(3, BG_QMD_QMD_TYPE) && bg_nv_qmd_has(4, BG_QMD_QMD_TYPE));
  /* a set replaces the old value and leaves the neighbours */
  OK(bg_nv_qmd_set(q, 3, BG_QMD_REGISTER_COUNT, 0, 0x1ff));
  OK(bg_nv_qmd_set(q, 3, BG_QMD_TARGET_SM_CONFIG_SHARED_MEM_SIZE, 0, 0x3f)); /* MW(662:657), next to it */
  OK(bg_nv_qmd_set(q, 3, BG_QMD_REGISTER_COUNT, 0, 0x20));
  ck_assert_uint_eq(q[20], 0x20u << 8 | 0x3fu << 17);
}
END_TEST

/* ---- pushbuffer ---- */

START_TEST(push_methods) {
  uint32_t dw[16];
  /* header: SEC_OP INCR (1) 31:29, COUNT 28:16, SUBCHANNEL 15:13, ADDRESS 11:0 = method >> 2 */
  ck_assert_uint_eq(bg_nv_method(0, 0x5c, 5), 0x20050017u);
  ck_assert_uint_eq(bg_nv_method(1, 0x2b4, 1), 0x200120adu);
  ck_assert_uint_eq(bg_nv_method(4, 0x300, 1), 0x200180c0u);
  /* wait: SEM_ADDR_LO..SEM_EXECUTE, ACQ_CIRC_GEQ with a 64-bit payload = 0x01000003 */
  ck_assert_uint_eq(bg_nv_push_semaphore(dw, 0x1122334455ull, 0xaabbccdd00000007ull, BG_NV_SEM_ACQUIRE_GEQ64), 6);
  const uint32_t wait[6] = {0x20050017u, 0x22334455u, 0x11u, 7u, 0xaabbccddu, 0x01000003u};
  ck_assert_mem_eq(dw, wait, sizeof(wait));
  /* signal: RELEASE, RELEASE_WFI, 64-bit payload, RELEASE_TIMESTAMP = 0x03100001 */
  bg_nv_push_semaphore(dw, 0, 0, BG_NV_SEM_RELEASE64_TS);
  ck_assert_uint_eq(dw[BG_NV_SEM_DW_EXECUTE], 0x03100001u);
  /* launch: SEND_PCAS_A = qmd >> 8, SEND_SIGNALING_PCAS2_B = 9 (PREFETCH_SCHEDULE) */
  ck_assert_uint_eq(bg_nv_push_send_pcas(dw, 0x123456700ull), 4);
  const uint32_t pcas[4] = {0x200120adu, 0x1234567u, 0x200120b0u, 9u};
  ck_assert_mem_eq(dw, pcas, sizeof(pcas));
  /* memory barrier: INVALIDATE_SHADER_CACHES_NO_WFI 0x1698, INSTRUCTION | GLOBAL_DATA | CONSTANT */
  bg_nv_push_barrier(dw);
  ck_assert_uint_eq(dw[0], 0x200125a6u);
  ck_assert_uint_eq(dw[1], 0x1011u);
  /* copy: OFFSET_IN_UPPER (4 methods), LINE_LENGTH_IN, LAUNCH_DMA 0x182 (NON_PIPELINED, pitch, pitch) */
  ck_assert_uint_eq(bg_nv_push_copy(dw, 0xaa00001000ull, 0xbb00002000ull, 0x4000), 9);
  const uint32_t copy[9] = {0x20048100u, 0xbbu, 0x2000u, 0xaau, 0x1000u, 0x20018106u, 0x4000u, 0x200180c0u, 0x182u};
  ck_assert_mem_eq(dw, copy, sizeof(copy));
  /* local memory: SET_SHADER_LOCAL_MEMORY_A/B (hi, lo), NON_THROTTLED_A/B/C (hi, lo, 0xff) */
  ck_assert_uint_eq(bg_nv_push_local_memory(dw, 0x7f00000000ull, 0x240000), 7);
  const uint32_t lm[7] = {0x200221e4u, 0x7fu, 0, 0x200320b9u, 0, 0x240000u, 0xffu};
  ck_assert_mem_eq(dw, lm, sizeof(lm));
  /* SET_OBJECT on the copy subchannel */
  bg_nv_push_set_object(dw, BG_NV_SUBC_COPY, 0xc8b5);
  ck_assert_uint_eq(dw[0], 0x20018000u);
  ck_assert_uint_eq(dw[1], 0xc8b5u);
}
END_TEST

int main(void) {
  Suite *s = suite_create("nv-qmd");
  TCase *tc = tcase_create("qmd");
  tcase_add_test(tc, qmd_v03_golden);
  tcase_add_test(tc, qmd_v04_golden);
  tcase_add_test(tc, qmd_v05_golden);
  tcase_add_test(tc, qmd_errors);
  tcase_add_test(tc, push_methods);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
