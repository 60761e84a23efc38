/* tests/unit/mockamd/test_exec.c: the emulated AMD GPU executes queues (tests/mockgpu/amd_engine.h, amd_vm.h,
 * amd_pm4.h, amd_sdma_exec.h). After a real AM bring-up (am/am_boot.h) of an emulated gfx11 / gfx12, hand-built
 * PM4 and SDMA packets go into the rings the driver set up, the doorbell is rung through BAR2 and the results are
 * read back from VRAM and host pages: RELEASE_MEM value + timestamp, a WAIT_REG_MEM that blocks until the test
 * writes memory, HDP flush through WAIT_REG_MEM register mode, INDIRECT_BUFFER (with a chain), a ring wrap, SDMA
 * copies of random sizes and offsets VRAM<->VRAM and VRAM<->host (bit-exact), CONST_FILL, TIMESTAMP, POLL_REGMEM,
 * an SDMA ring wrap; VM faults (unmapped, write to a read-only PTE) visible in GCVM_L2_PROTECTION_FAULT_* and the
 * failure list; unknown opcodes and bad lengths naming the packet; a write to an unmodelled register that is not
 * on the allow-list (tests/mockgpu/amd_reg_allow.h) failing by name; a kernel on the RDNA3 core, the scalar cache
 * that only ACQUIRE_MEM GLK_INV invalidates and the VGPR grant of COMPUTE_PGM_RSRC1 ("dispatch" mode, run as the mockamd-dispatch test: skipped (77) without
 * the core or llvm-mc-22). */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "am/am_boot.h"
#include "am/am_dev.h"
#include "am/am_soc.h"
#include "am/mm_pt.h"
#include "am/mm_vram.h"
#include "amd_cp.h"
#include "amd_engine.h"
#include "amd_gpu.h"
#include "amd_pm4.h"
#include "amd_reg_allow.h"
#include "amd_sdma_exec.h"
#include "amd_testbed.h"
#include "baregpu/error.h"
#include "platform/pci.h"
#include "util/clock.h"

#define BDF "0000:03:00.0"
#define OK(call) ck_assert_msg((call) == 0, "%s: %s", #call, bg_last_error())
#define PACKET3(op, n) ((3u << 30) | (((op) & 0xffu) << 8) | (((n) & 0x3fffu) << 16))

static amd_testbed TB;
static mock_amd *G; /* TB.gpu */
static bg_am_dev *D;
static bg_am_blocks B;
static uint64_t cp_put, sdma_put; /* dwords / bytes */
/* test memory: 2 MiB VRAM mapped at VA_VRAM through the page tables, 64 KiB of host pages at VA_HOST */
static uint64_t vbuf;
static bg_sysmem hbuf;
#define VA_VRAM (0x200000000000ull + 0x40000000ull)
#define VA_HOST (VA_VRAM + 0x400000ull)
#define VA_UNMAPPED (VA_VRAM + 0x10000000ull)
#define HOST_SIZE 0x10000u

static void setup_chip(mock_amd_chip chip) {
  mock_amd_cfg cfg = {.chip = chip, .bdf = BDF};
  OK(amd_testbed_new(&TB, &cfg, "bg_exec"));
  G = TB.gpu;
  bg_am_open_opts o = {.fw_dir = TB.fw_dir, .timeout_ms = 2000, .settle_ms = -1, .reset_delay_ms = -1};
  OK(bg_am_dev_open(BDF, &o, &D));
  memset(&B, 0, sizeof(B));
  OK(bg_am_boot_ex(D, NULL, NULL, &B));
  ck_assert_msg(mock_amd_nfail(G) == 0, "%s", mock_amd_failures(G));
  cp_put = sdma_put = 0;
  OK(bg_am_vram_alloc(D->mm, BG_AM_VRAM_MAIN, 0x200000, 0x200000, true, &vbuf));
  OK(bg_am_pt_map_contig(B.gmc->pt, VA_VRAM, vbuf, 0x200000, BG_AM_ASPACE_VRAM, BG_AM_PT_RWX));
  OK(bg_pci_alloc_sysmem(D->pci, HOST_SIZE, 0, NULL, &hbuf));
  memset((void *)hbuf.view.ptr, 0, HOST_SIZE);
  OK(bg_am_pt_map_pages(B.gmc->pt, VA_HOST, hbuf.bus, hbuf.npages, BG_AM_ASPACE_SYS,
                        BG_AM_PT_RWX | BG_AM_PT_SNOOPED | BG_AM_PT_UNCACHED));
}

static void setup11(void) { setup_chip(MOCK_AMD_GFX11); }
static void setup12(void) { setup_chip(MOCK_AMD_MOCK); }

static void teardown(void) {
  ck_assert_int_eq(mock_amd_engines_wait_idle(G, 5000), 0);
  OK(bg_am_boot_fini(D, &B));
  OK(bg_am_pt_unmap(B.gmc->pt, VA_VRAM, 0x200000));
  OK(bg_am_pt_unmap(B.gmc->pt, VA_HOST, HOST_SIZE));
  bg_pci_free_sysmem(D->pci, &hbuf);
  OK(bg_am_vram_free(D->mm, vbuf));
  bg_am_blocks_free(&B);
  bg_am_dev_close(D);
  char msg[4096];
  unsigned nfail = amd_testbed_failures(&TB, msg, sizeof(msg));
  amd_testbed_free(&TB);
  ck_assert_msg(nfail == 0, "unexpected model failures:\n%s", msg);
}

/* ---------------- helpers ---------------- */

static uint32_t *host32(uint64_t off) { return (uint32_t *)(void *)((uint8_t *)hbuf.view.ptr + off); }
static uint32_t vram32(uint64_t pa) { return bg_mmio_rd32(&D->vram, pa); }

/* Copy dwords into the compute ring at the put pointer (wrapping per dword), publish wptr, ring the doorbell. */
static void cp_submit(const uint32_t *dw, unsigned n) {
  uint64_t ndw = BG_AM_GFX_RING_SIZE / 4;
  for (unsigned i = 0; i < n; i++) OK(bg_mmio_wr32(&D->vram, B.gfx->ring + ((cp_put + i) % ndw) * 4, dw[i]));
  cp_put += n;
  OK(bg_mmio_wr64(&D->vram, B.gfx->ptrs + 0x38, cp_put));
  OK(bg_am_flush_hdp(D)); /* the ring and wptr writes reach the engines (tests/mockgpu/amd_hdp.h) */
  OK(bg_mmio_wr64(&D->doorbell, BG_AM_GFX_DOORBELL * 8, cp_put));
}

static void sdma_submit(const uint32_t *dw, unsigned n) {
  for (unsigned i = 0; i < n; i++)
    OK(bg_mmio_wr32(&D->vram, B.sdma->ring + (sdma_put + 4ull * i) % BG_AM_SDMA_RING_SIZE, dw[i]));
  sdma_put += 4ull * n;
  OK(bg_mmio_wr64(&D->vram, B.sdma->ptrs + 0x38, sdma_put));
  OK(bg_am_flush_hdp(D)); /* the ring and wptr writes reach the engines (tests/mockgpu/amd_hdp.h) */
  OK(bg_mmio_wr64(&D->doorbell, BG_AM_SDMA_DOORBELL * 8, sdma_put));
}

static void wait_idle(void) { ck_assert_int_eq(mock_amd_engines_wait_idle(G, 10000), 0); }

static unsigned release_mem(uint32_t *p, uint64_t va, uint64_t v, unsigned data_sel) {
  p[0] = PACKET3(0x49, 6);
  p[1] = 0x14 | 5u << 8;              /* CACHE_FLUSH_AND_INV_TS_EVENT, EVENT_INDEX end-of-pipe */
  p[2] = data_sel << 29;              /* DST_SEL 0 memory, INT_SEL 0 */
  p[3] = (uint32_t)va, p[4] = (uint32_t)(va >> 32), p[5] = (uint32_t)v, p[6] = (uint32_t)(v >> 32), p[7] = 0;
  return 8;
}

static unsigned wait_mem(uint32_t *p, uint64_t va, unsigned func, uint32_t ref) {
  p[0] = PACKET3(0x3C, 5);
  p[1] = func | 1u << 4; /* MEM_SPACE memory */
  p[2] = (uint32_t)va, p[3] = (uint32_t)(va >> 32), p[4] = ref, p[5] = 0xffffffffu, p[6] = 4;
  return 7;
}

static uint64_t clock100(void) { return bg_now_ns() / 10; }

static uint32_t gc_reg(enum bg_am_reg_id name) {
  uint32_t a = 0;
  OK(bg_am_nreg_addr(D, GC_HWIP, 0, name, &a));
  return a;
}

/* ---------------- CP ---------------- */

static void release_mem_run(void) {
  uint32_t pk[32];
  unsigned n = 0;
  uint64_t t0 = clock100(), ns0 = mock_amd_exec_ns(G);
  n += release_mem(pk + n, VA_VRAM + 0x100, 0xC0FFEE01u, 1);       /* 32-bit through the page tables, in VRAM */
  n += release_mem(pk + n, VA_HOST + 0x208, 0x1122334455667788ull, 2); /* 64-bit into a host page */
  n += release_mem(pk + n, VA_HOST + 0x300, 0, 3);                  /* GPU clock */
  n += release_mem(pk + n, B.gfx->eop + 0x40, 0xAB, 1);             /* an MC address: system aperture */
  cp_submit(pk, n);
  wait_idle();
  uint64_t t1 = clock100();
  ck_assert_uint_eq(vram32(vbuf + 0x100), 0xC0FFEE01u);
  uint64_t v64, ts;
  memcpy(&v64, host32(0x208), 8);
  memcpy(&ts, host32(0x300), 8);
  ck_assert_uint_eq(v64, 0x1122334455667788ull);
  ck_assert_msg(ts >= t0 && ts <= t1, "timestamp %" PRIu64 " outside [%" PRIu64 ", %" PRIu64 "]", ts, t0, t1);
  ck_assert_uint_eq(vram32(B.gfx->eop + 0x40), 0xAB);
  ck_assert_uint_eq(bg_mmio_rd64(&D->vram, B.gfx->ptrs + 0x80), cp_put); /* rptr report */
  mock_amd_pm4_stats st;
  ck_assert(mock_amd_pm4_stats_get(G, &st));
  ck_assert_uint_eq(st.packets, 4);
  ck_assert(!st.hung);
  ck_assert_uint_gt(mock_amd_exec_ns(G), ns0);
}

START_TEST(cp_release_mem) { release_mem_run(); }
END_TEST

START_TEST(cp_wait_reg_mem) {
  uint32_t pk[64];
  unsigned n = 0;
  *host32(0x10) = 3;
  n += wait_mem(pk + n, VA_HOST + 0x10, 5 /* >= */, 5);
  n += release_mem(pk + n, VA_HOST + 0x20, 0x77, 1);
  /* HDP flush as the driver sends it: WAIT_REG_MEM register mode, write HDP_FLUSH_REQ then poll HDP_FLUSH_DONE */
  const mock_amd_regmap *R = mock_amd_regs(G);
  pk[n++] = PACKET3(0x3C, 5);
  pk[n++] = 5u | 1u << 6; /* GEQ, MEM_SPACE register, OPERATION write-then-wait */
  pk[n++] = R->hdp_flush_req, pk[n++] = R->hdp_flush_done, pk[n++] = 0xffffffffu, pk[n++] = 0xffffffffu, pk[n++] = 4;
  n += wait_mem(pk + n, VA_VRAM + 0x40, 3 /* == */, 0xdead);
  n += release_mem(pk + n, VA_HOST + 0x24, 0x88, 1);
  cp_submit(pk, n);
  usleep(30000);
  ck_assert_uint_eq(__atomic_load_n(host32(0x20), __ATOMIC_ACQUIRE), 0); /* still blocked on 3 >= 5 */
  __atomic_store_n(host32(0x10), 4, __ATOMIC_RELEASE);
  usleep(20000);
  ck_assert_uint_eq(__atomic_load_n(host32(0x20), __ATOMIC_ACQUIRE), 0);
  __atomic_store_n(host32(0x10), 9, __ATOMIC_RELEASE);
  for (int i = 0; i < 2000 && __atomic_load_n(host32(0x20), __ATOMIC_ACQUIRE) != 0x77; i++) usleep(1000);
  ck_assert_uint_eq(*host32(0x20), 0x77);
  ck_assert_uint_eq(mock_amd_peek(G, R->hdp_flush_req), 0xffffffffu);
  usleep(10000);
  ck_assert_uint_eq(__atomic_load_n(host32(0x24), __ATOMIC_ACQUIRE), 0); /* second wait: VRAM word == 0xdead */
  __atomic_store_n((uint32_t *)(uintptr_t)(D->vram.ptr + vbuf + 0x40), 0xdead, __ATOMIC_RELEASE); /* the CP polls it */
  usleep(10000);
  ck_assert_uint_eq(__atomic_load_n(host32(0x24), __ATOMIC_ACQUIRE), 0); /* posted in the HDP (amd_hdp.h) */
  OK(bg_am_flush_hdp(D));
  wait_idle();
  ck_assert_uint_eq(*host32(0x24), 0x88);
  mock_amd_pm4_stats st;
  ck_assert(mock_amd_pm4_stats_get(G, &st));
  ck_assert_uint_eq(st.waits, 3);
}
END_TEST

START_TEST(cp_indirect_buffer) {
  /* IB1 in VRAM: WRITE_DATA (2 dwords to memory) + a chain to IB2; IB2 in a host page: RELEASE_MEM */
  uint32_t ib1[16], ib2[16], pk[8];
  unsigned n1 = 0, n2 = 0;
  ib1[n1++] = PACKET3(0x37, 3 + 1);
  ib1[n1++] = 5u << 8 | 1u << 20; /* DST_SEL memory, WR_CONFIRM */
  ib1[n1++] = (uint32_t)(VA_VRAM + 0x200), ib1[n1++] = (uint32_t)((VA_VRAM + 0x200) >> 32);
  ib1[n1++] = 0x1111, ib1[n1++] = 0x2222;
  n2 += release_mem(ib2, VA_HOST + 0x400, 0x3333, 1);
  ib2[n2++] = PACKET3(0x10, 0), ib2[n2++] = 0; /* NOP */
  uint64_t ib2_va = VA_HOST + 0x1000;
  memcpy(host32(0x1000), ib2, n2 * 4);
  ib1[n1++] = PACKET3(0x3F, 2);
  ib1[n1++] = (uint32_t)ib2_va, ib1[n1++] = (uint32_t)(ib2_va >> 32), ib1[n1++] = n2 | 1u << 20 | 1u << 23;
  for (unsigned i = 0; i < n1; i++) OK(bg_mmio_wr32(&D->vram, vbuf + 0x1000 + 4 * i, ib1[i]));
  pk[0] = PACKET3(0x3F, 2);
  pk[1] = (uint32_t)(VA_VRAM + 0x1000), pk[2] = (uint32_t)((VA_VRAM + 0x1000) >> 32), pk[3] = n1 | 1u << 23;
  cp_submit(pk, 4);
  wait_idle();
  ck_assert_uint_eq(vram32(vbuf + 0x200), 0x1111);
  ck_assert_uint_eq(vram32(vbuf + 0x204), 0x2222);
  ck_assert_uint_eq(*host32(0x400), 0x3333);
  mock_amd_pm4_stats st;
  ck_assert(mock_amd_pm4_stats_get(G, &st));
  ck_assert_uint_eq(st.packets, 1 + 2 + 2); /* IB, WRITE_DATA + chain, RELEASE_MEM + NOP */
  ck_assert_uint_eq(st.rptr, 4);
}
END_TEST

/* Length of the next padding NOP for `left` dwords: at most 0x4001 (count 0x3fff), never leaving a single dword. */
static uint32_t nop_len(uint64_t left) { return left > 0x4001 + 2 ? 0x4001 : left > 0x4001 ? 2 : (uint32_t)left; }

START_TEST(cp_ring_wrap) {
  /* big NOPs up to 3 dwords before the ring end, then a RELEASE_MEM that wraps */
  uint64_t ndw = BG_AM_GFX_RING_SIZE / 4, end = ndw - 3;
  while (cp_put < end) {
    uint32_t len = nop_len(end - cp_put);
    OK(bg_mmio_wr32(&D->vram, B.gfx->ring + cp_put * 4, PACKET3(0x10, len - 2)));
    cp_put += len;
  }
  OK(bg_mmio_wr64(&D->vram, B.gfx->ptrs + 0x38, cp_put)); /* the CP catches up before the wrapping packet */
  OK(bg_am_flush_hdp(D)); /* the ring and wptr writes reach the engines (tests/mockgpu/amd_hdp.h) */
  OK(bg_mmio_wr64(&D->doorbell, BG_AM_GFX_DOORBELL * 8, cp_put));
  wait_idle();
  ck_assert_uint_eq(bg_mmio_rd64(&D->vram, B.gfx->ptrs + 0x80), cp_put);
  uint32_t pk[8];
  release_mem(pk, VA_HOST + 0x500, 0x5a5a, 1);
  cp_submit(pk, 8);
  ck_assert_uint_gt(cp_put, ndw);
  wait_idle();
  ck_assert_uint_eq(*host32(0x500), 0x5a5a);
  ck_assert_uint_eq(bg_mmio_rd64(&D->vram, B.gfx->ptrs + 0x80), cp_put);
}
END_TEST

START_TEST(cp_fault) {
  const mock_amd_regmap *R = mock_amd_regs(G);
  uint32_t pk[16];
  unsigned n = release_mem(pk, VA_UNMAPPED + 0x10, 1, 1);
  n += release_mem(pk + n, VA_HOST, 2, 1); /* never executed: the queue hung */
  cp_submit(pk, n);
  wait_idle();
  ck_assert_uint_ge(mock_amd_nfail(G), 1);
  ck_assert_ptr_nonnull(strstr(mock_amd_failures(G), "VM fault (CP RELEASE_MEM write at 0x200050000010)"));
  ck_assert_ptr_nonnull(strstr(mock_amd_failures(G), "not valid"));
  uint32_t st = mock_amd_peek(G, R->gc_fault_status);
  ck_assert_uint_eq((st >> 8) & 1, 1);      /* MAPPING_ERROR */
  ck_assert_uint_eq((st >> 9) & 0x1ff, 5);  /* CID: CPC */
  ck_assert_uint_eq((st >> 18) & 1, 1);     /* RW: write */
  ck_assert_uint_eq(mock_amd_peek(G, gc_reg(regGCVM_L2_PROTECTION_FAULT_ADDR_LO32)), (uint32_t)(VA_UNMAPPED >> 12));
  ck_assert_uint_eq(mock_amd_peek(G, gc_reg(regGCVM_L2_PROTECTION_FAULT_ADDR_HI32)), (uint32_t)(VA_UNMAPPED >> 44));
  ck_assert_uint_eq(*host32(0), 0);
  mock_amd_pm4_stats ps;
  ck_assert(mock_amd_pm4_stats_get(G, &ps));
  ck_assert(ps.hung);
  /* a later doorbell does nothing on a hung queue */
  cp_submit(pk + 8, 8);
  wait_idle();
  ck_assert_uint_eq(*host32(0), 0);
  /* SDMA reading an unmapped page: a second fault only adds MORE_FAULTS */
  uint32_t cp[7] = {1, 15, 0, (uint32_t)VA_UNMAPPED, (uint32_t)(VA_UNMAPPED >> 32), (uint32_t)VA_HOST, (uint32_t)(VA_HOST >> 32)};
  sdma_submit(cp, 7);
  wait_idle();
  ck_assert_ptr_nonnull(strstr(mock_amd_failures(G), "VM fault (SDMA0 copy read at 0x200050000000)"));
  ck_assert_uint_eq(mock_amd_peek(G, R->gc_fault_status), st | 1u);
  mock_amd_clear_failures(G);
  mock_amd_poke(G, R->gc_fault_status, 0);
}
END_TEST

START_TEST(cp_unknown_opcode) {
  uint32_t pk[5] = {PACKET3(0x10, 0), 0, PACKET3(0xEE, 1), 0x12345678, 0x9abcdef0};
  cp_submit(pk, 5);
  wait_idle();
  ck_assert_uint_eq(mock_amd_nfail(G), 1);
  const char *f = mock_amd_failures(G);
  ck_assert_msg(strstr(f, "unknown PM4 opcode 0xee") && strstr(f, "ring") && strstr(f, "dword 0x2:") &&
                strstr(f, "c001ee00 12345678 9abcdef0"), "%s", f);
  mock_amd_clear_failures(G);
  /* a bad packet length is refused too (RELEASE_MEM with count 5) */
  uint32_t bad[7] = {PACKET3(0x49, 5), 0, 0, 0, 0, 0, 0};
  cp_put = 0; /* a re-activation restarts the ring: dequeue + setup */
  OK(bg_am_gfx_dequeue(B.gfx));
  OK(bg_am_gfx_setup_queue(B.gfx));
  cp_submit(bad, 7);
  wait_idle();
  ck_assert_ptr_nonnull(strstr(mock_amd_failures(G), "opcode 0x49 with count 5 (expected 6)"));
  mock_amd_clear_failures(G);
}
END_TEST

START_TEST(cp_dispatch_fault) {
  /* code at an unmapped address: a VM fault of the shader core (TCP), or "no shader core" without one */
  uint32_t pk[32];
  unsigned n = 0;
  pk[n++] = PACKET3(0x76, 2), pk[n++] = 0x20c, pk[n++] = (uint32_t)(VA_UNMAPPED >> 8), pk[n++] = (uint32_t)(VA_UNMAPPED >> 40);
  pk[n++] = PACKET3(0x76, 6), pk[n++] = 0x204, pk[n++] = 0, pk[n++] = 0, pk[n++] = 0, pk[n++] = 32, pk[n++] = 1, pk[n++] = 1;
  pk[n++] = PACKET3(0x15, 3), pk[n++] = 1, pk[n++] = 1, pk[n++] = 1, pk[n++] = 1u | 1u << 15;
  cp_submit(pk, n);
  wait_idle();
  const char *f = mock_amd_failures(G);
#ifndef BG_MOCK_RDNA3
  ck_assert_msg(strstr(f, "no shader core") != NULL, "%s", f);
#else
  ck_assert_msg(strstr(f, "VM fault (shader read at 0x200050000000)") != NULL, "%s", f);
  ck_assert_uint_eq((mock_amd_peek(G, mock_amd_regs(G)->gc_fault_status) >> 9) & 0x1ff, 8); /* CID: TCP */
#endif
  mock_amd_pm4_stats st;
  ck_assert(mock_amd_pm4_stats_get(G, &st));
  ck_assert(st.hung && st.dispatches == 1);
  mock_amd_clear_failures(G);
  mock_amd_poke(G, mock_amd_regs(G)->gc_fault_status, 0);
}
END_TEST

START_TEST(doorbell_without_queue) {
  OK(bg_mmio_wr64(&D->doorbell, 100 * 8, 5));
  ck_assert_ptr_nonnull(strstr(mock_amd_failures(G), "BAR2+0x320: no enabled queue"));
  ck_assert_uint_eq(bg_mmio_rd64(&D->doorbell, 100 * 8), 5);
  mock_amd_clear_failures(G);
}
END_TEST

/* Assemble gfx1100 code with llvm-mc-22 (-show-encoding); the number of dwords, or -1 when it is not installed. */
static int assemble(const char *src, uint32_t *out, int max) {
  char path[] = "/tmp/bg_exec_asm_XXXXXX", cmd[160], line[512];
  int fd = mkstemp(path);
  if (fd < 0) return -1;
  ssize_t len = (ssize_t)strlen(src);
  if (write(fd, src, (size_t)len) != len) len = -1;
  close(fd);
  snprintf(cmd, sizeof(cmd), "llvm-mc-22 -arch=amdgcn -mcpu=gfx1100 -show-encoding %s 2>/dev/null", path);
  FILE *p = len < 0 ? NULL : popen(cmd, "r");
  int nb = 0;
  uint8_t *bytes = (uint8_t *)out;
  while (p && fgets(line, sizeof(line), p)) {
    const char *e = strstr(line, "encoding: [");
    for (e = e ? e + 11 : NULL; e && *e && *e != ']' && nb < max * 4;) {
      unsigned v;
      if (sscanf(e, "0x%x", &v) != 1) break;
      bytes[nb++] = (uint8_t)v;
      e = strchr(e, ',');
      e = e ? e + 1 : NULL;
    }
  }
  int st = p ? pclose(p) : -1;
  unlink(path);
  return st == 0 && nb % 4 == 0 && nb ? nb / 4 : -1;
}

static unsigned set_sh(uint32_t *p, uint32_t off, const uint32_t *v, unsigned n) {
  p[0] = PACKET3(0x76, n);
  p[1] = off;
  memcpy(p + 2, v, n * 4);
  return n + 2;
}

/* A kernel on the RDNA3 core: every work-item of 4 workgroups x 64 stores base + global id at out[global id]. */
static int dispatch_run(void) {
  static const char src[] = "s_lshl_b32 s4, s3, 6\nv_add_nc_u32 v3, s4, v0\nv_lshlrev_b32 v1, 2, v3\n"
                            "v_add_nc_u32 v2, s2, v3\nglobal_store_b32 v1, v2, s[0:1]\ns_endpgm\n";
  uint32_t code[32];
  int ncode = assemble(src, code, 32);
  if (ncode < 0) return 77;
  for (int i = 0; i < ncode; i++) OK(bg_mmio_wr32(&D->vram, vbuf + 0x8000 + 4ull * i, code[i]));
  uint64_t pgm = VA_VRAM + 0x8000, out = VA_HOST + 0x2000;
  uint32_t pk[64], v[8];
  unsigned n = 0;
  v[0] = (uint32_t)(pgm >> 8), v[1] = (uint32_t)(pgm >> 40);
  n += set_sh(pk + n, 0x20c, v, 2);                 /* COMPUTE_PGM_LO/HI */
  v[0] = 0x1, v[1] = 3u << 1 | 1u << 7;             /* RSRC1; RSRC2: USER_SGPR 3, TGID_X_EN */
  n += set_sh(pk + n, 0x212, v, 2);
  v[0] = (uint32_t)out, v[1] = (uint32_t)(out >> 32), v[2] = 1000;
  n += set_sh(pk + n, 0x240, v, 3);                 /* COMPUTE_USER_DATA_0..2 */
  uint32_t start[6] = {0, 0, 0, 64, 1, 1};
  n += set_sh(pk + n, 0x204, start, 6);             /* START_X/Y/Z, NUM_THREAD_X/Y/Z */
  pk[n++] = PACKET3(0x15, 3), pk[n++] = 4, pk[n++] = 1, pk[n++] = 1, pk[n++] = 1u | 1u << 15; /* CS_W32_EN */
  pk[n++] = PACKET3(0x46, 0), pk[n++] = 7 | 4u << 8; /* CS_PARTIAL_FLUSH */
  n += release_mem(pk + n, VA_HOST + 0x30, 0x99, 1);
  cp_submit(pk, n);
  wait_idle();
  ck_assert_msg(mock_amd_nfail(G) == 0, "%s", mock_amd_failures(G));
  ck_assert_uint_eq(*host32(0x30), 0x99);
  for (uint32_t i = 0; i < 256; i++) ck_assert_uint_eq(*host32(0x2000 + 4 * i), 1000 + i);
  ck_assert_uint_eq(*host32(0x2000 + 4 * 256), 0);
  mock_amd_pm4_stats st;
  ck_assert(mock_amd_pm4_stats_get(G, &st));
  ck_assert_uint_eq(st.dispatches, 1);
  return 0;
}

static int dispatch_rc = -1;
START_TEST(cp_dispatch) { dispatch_rc = dispatch_run(); }
END_TEST

/* ACQUIRE_MEM (gfx10+ layout) with GCR_CNTL gcr (nvd.h: GLK_INV bit 7, GLV_INV 8, GL1_INV 9, GL2_INV 14). */
static unsigned acquire_mem(uint32_t *p, uint32_t gcr) {
  p[0] = PACKET3(0x58, 6);
  p[1] = 0, p[2] = 0xffffffffu, p[3] = 0xffffffffu, p[4] = 0, p[5] = 0, p[6] = 0, p[7] = gcr;
  return 8;
}

/* The shader core's K$ and ACQUIRE_MEM: a kernel copies a dword it reads with a scalar load into out[slot]. A second
 * dispatch after the host changed the dword still reads the cached line, also after an ACQUIRE_MEM that invalidates
 * only the vector caches and GL2; after GLK_INV (what the driver's exec prologue sends) it reads the new value. */
static int kcache_run(void) {
  static const char src[] = "s_load_b32 s4, s[0:1], 0x0\ns_waitcnt lgkmcnt(0)\nv_mov_b32 v1, s4\nv_mov_b32 v2, 0\n"
                            "global_store_b32 v2, v1, s[2:3]\ns_endpgm\n";
  uint32_t code[32];
  int ncode = assemble(src, code, 32);
  if (ncode < 0) return 77;
  for (int i = 0; i < ncode; i++) OK(bg_mmio_wr32(&D->vram, vbuf + 0x8000 + 4ull * i, code[i]));
  uint64_t pgm = VA_VRAM + 0x8000, in = VA_HOST + 0x1000;
  static const uint32_t gcr[4] = {0, 1u << 8 | 1u << 9 | 1u << 14, 1u << 7, 0}; /* before dispatch 1..4 */
  static const uint32_t want[4] = {5, 5, 6, 6};
  *host32(0x1000) = 5;
  uint32_t pk[128], v[8];
  for (unsigned k = 0; k < 4; k++) {
    unsigned n = 0;
    if (k) *host32(0x1000) = 6; /* a host page (snooped): visible to the GPU at once, but not through a stale K$ */
    if (gcr[k]) n += acquire_mem(pk + n, gcr[k]);
    v[0] = (uint32_t)(pgm >> 8), v[1] = (uint32_t)(pgm >> 40);
    n += set_sh(pk + n, 0x20c, v, 2);
    v[0] = 0, v[1] = 4u << 1; /* RSRC1; RSRC2: USER_SGPR 4 */
    n += set_sh(pk + n, 0x212, v, 2);
    uint64_t out = VA_HOST + 0x3000 + 4ull * k;
    v[0] = (uint32_t)in, v[1] = (uint32_t)(in >> 32), v[2] = (uint32_t)out, v[3] = (uint32_t)(out >> 32);
    n += set_sh(pk + n, 0x240, v, 4);
    uint32_t start[6] = {0, 0, 0, 32, 1, 1};
    n += set_sh(pk + n, 0x204, start, 6);
    pk[n++] = PACKET3(0x15, 3), pk[n++] = 1, pk[n++] = 1, pk[n++] = 1, pk[n++] = 1u | 1u << 15;
    cp_submit(pk, n);
    wait_idle();
    ck_assert_msg(mock_amd_nfail(G) == 0, "%s", mock_amd_failures(G));
    ck_assert_msg(*host32(0x3000 + 4 * k) == want[k], "dispatch %u (ACQUIRE_MEM GCR_CNTL 0x%x before it) read %u, want %u",
                  k + 1, gcr[k], *host32(0x3000 + 4 * k), want[k]);
  }
  mock_amd_pm4_stats st;
  ck_assert(mock_amd_pm4_stats_get(G, &st));
  ck_assert_uint_eq(st.acquires, 2);
  return 0;
}

/* COMPUTE_PGM_RSRC1.VGPRS as the CP got it limits the wave: v9 with VGPRS 0 (8 VGPRs) hangs the queue with a failure
 * naming the register and the grant; VGPRS 1 (16) runs. */
static int vgpr_grant_run(void) {
  static const char src[] = "v_mov_b32 v9, 7\nv_mov_b32 v2, 0\nglobal_store_b32 v2, v9, s[0:1]\ns_endpgm\n";
  uint32_t code[32];
  int ncode = assemble(src, code, 32);
  if (ncode < 0) return 77;
  for (int i = 0; i < ncode; i++) OK(bg_mmio_wr32(&D->vram, vbuf + 0x8000 + 4ull * i, code[i]));
  uint64_t pgm = VA_VRAM + 0x8000, out = VA_HOST + 0x3000;
  for (uint32_t vgprs = 1; vgprs != ~0u; vgprs--) { /* 16 VGPRs, then 8 */
    uint32_t pk[64], v[4];
    unsigned n = 0;
    v[0] = (uint32_t)(pgm >> 8), v[1] = (uint32_t)(pgm >> 40);
    n += set_sh(pk + n, 0x20c, v, 2);
    v[0] = vgprs, v[1] = 2u << 1; /* RSRC1.VGPRS; RSRC2: USER_SGPR 2 */
    n += set_sh(pk + n, 0x212, v, 2);
    v[0] = (uint32_t)out, v[1] = (uint32_t)(out >> 32);
    n += set_sh(pk + n, 0x240, v, 2);
    uint32_t start[6] = {0, 0, 0, 32, 1, 1};
    n += set_sh(pk + n, 0x204, start, 6);
    pk[n++] = PACKET3(0x15, 3), pk[n++] = 1, pk[n++] = 1, pk[n++] = 1, pk[n++] = 1u | 1u << 15;
    *host32(0x3000) = 0;
    cp_submit(pk, n);
    wait_idle();
    mock_amd_pm4_stats st;
    ck_assert(mock_amd_pm4_stats_get(G, &st));
    if (vgprs) {
      ck_assert_msg(mock_amd_nfail(G) == 0, "%s", mock_amd_failures(G));
      ck_assert_uint_eq(*host32(0x3000), 7);
      continue;
    }
    const char *f = mock_amd_failures(G);
    ck_assert_msg(strstr(f, "VGPR v9 (destination) beyond the 8 VGPRs the dispatch grants") != NULL, "%s", f);
    ck_assert(st.hung);
    ck_assert_uint_eq(*host32(0x3000), 0);
    mock_amd_clear_failures(G);
  }
  return 0;
}

static int vgpr_rc = -1;
START_TEST(cp_dispatch_vgpr_grant) { vgpr_rc = vgpr_grant_run(); }
END_TEST

static int kcache_rc = -1;
START_TEST(cp_acquire_kcache) { kcache_rc = kcache_run(); }
END_TEST

/* ---------------- SDMA ---------------- */

static unsigned sdma_fence(uint32_t *p, uint64_t va, uint32_t v) {
  p[0] = 5 | 3u << 16, p[1] = (uint32_t)va, p[2] = (uint32_t)(va >> 32), p[3] = v;
  return 4;
}

static unsigned sdma_copy(uint32_t *p, uint64_t dst, uint64_t src, uint32_t bytes) {
  p[0] = 1, p[1] = bytes - 1, p[2] = 0;
  p[3] = (uint32_t)src, p[4] = (uint32_t)(src >> 32), p[5] = (uint32_t)dst, p[6] = (uint32_t)(dst >> 32);
  return 7;
}

/* Where a test address lives: VRAM through the page tables, VRAM through the system aperture (MC), a host page. */
typedef struct loc {
  uint64_t va;
  uint8_t *cpu;
} loc;

static void sdma_copies_run(unsigned iters) {
  uint8_t *vcpu = (uint8_t *)D->vram.ptr + vbuf; /* BAR0 is a direct view */
  uint8_t *hcpu = (uint8_t *)hbuf.view.ptr;
  unsigned seed = 12345;
  uint32_t fence = 0;
  uint64_t ns0 = mock_amd_exec_ns(G);
  for (unsigned it = 0; it < iters; it++) {
    /* 0: VRAM VA, 1: VRAM MC address, 2: host VA; each half of its buffer for source / destination */
    unsigned sk = (unsigned)rand_r(&seed) % 3, dk = (unsigned)rand_r(&seed) % 3;
    uint64_t half_v = 0x100000, half_h = HOST_SIZE / 2 - 0x800;
    loc src = sk == 2 ? (loc){VA_HOST, hcpu} : (loc){sk ? vbuf : VA_VRAM, vcpu};
    loc dst = dk == 2 ? (loc){VA_HOST + HOST_SIZE / 2, hcpu + HOST_SIZE / 2}
                      : (loc){(dk ? vbuf : VA_VRAM) + half_v, vcpu + half_v};
    uint64_t lim = (sk == 2 || dk == 2) ? half_h : half_v;
    uint32_t bytes = 1 + (uint32_t)((unsigned)rand_r(&seed) % (lim - 64));
    uint32_t so = (uint32_t)((unsigned)rand_r(&seed) % (lim - bytes)), d_o = (uint32_t)((unsigned)rand_r(&seed) % (lim - bytes));
    for (uint32_t i = 0; i < bytes; i++) src.cpu[so + i] = (uint8_t)rand_r(&seed);
    memset(dst.cpu + d_o, 0xEE, bytes);
    uint8_t before = d_o ? dst.cpu[d_o - 1] : 0, after = dst.cpu[d_o + bytes];
    uint32_t pk[16];
    unsigned n = sdma_copy(pk, dst.va + d_o, src.va + so, bytes);
    n += sdma_fence(pk + n, VA_HOST + HOST_SIZE - 16, ++fence);
    sdma_submit(pk, n);
    for (int i = 0; i < 5000 && __atomic_load_n(host32(HOST_SIZE - 16), __ATOMIC_ACQUIRE) != fence; i++) usleep(200);
    ck_assert_uint_eq(*host32(HOST_SIZE - 16), fence);
    ck_assert_msg(memcmp(dst.cpu + d_o, src.cpu + so, bytes) == 0, "copy %u: %u bytes %u+0x%x -> %u+0x%x differ", it,
                  bytes, sk, so, dk, d_o);
    if (d_o) ck_assert_uint_eq(dst.cpu[d_o - 1], before);
    ck_assert_uint_eq(dst.cpu[d_o + bytes], after);
  }
  mock_amd_sdma_stats st;
  ck_assert(mock_amd_sdma_stats_get(G, &st));
  ck_assert_uint_eq(st.copies, iters);
  ck_assert(!st.hung);
  ck_assert_uint_eq(bg_mmio_rd64(&D->vram, B.sdma->ptrs + 0x80), sdma_put); /* rptr writeback (bytes) */
  printf("%s: %u SDMA copies, %" PRIu64 " bytes, emulator time %.2f ms\n", D->disc.arch, iters, st.bytes_copied,
         (double)(mock_amd_exec_ns(G) - ns0) / 1e6);
}

START_TEST(sdma_copies) { sdma_copies_run(40); }
END_TEST

START_TEST(sdma_misc) {
  uint32_t pk[64];
  unsigned n = 0;
  /* CONST_FILL dwords, TIMESTAMP, WRITE, POLL_REGMEM on host memory, then a fence */
  pk[n++] = 11 | 2u << 30, pk[n++] = (uint32_t)(VA_VRAM + 0x3000), pk[n++] = (uint32_t)((VA_VRAM + 0x3000) >> 32);
  pk[n++] = 0xA5A5F00Du, pk[n++] = 0x100 - 1;
  pk[n++] = 13 | 2u << 8, pk[n++] = (uint32_t)(VA_HOST + 0x600), pk[n++] = (uint32_t)((VA_HOST + 0x600) >> 32);
  pk[n++] = 2, pk[n++] = (uint32_t)(VA_HOST + 0x700), pk[n++] = (uint32_t)((VA_HOST + 0x700) >> 32), pk[n++] = 1;
  pk[n++] = 0xdddd0001u, pk[n++] = 0xdddd0002u;
  pk[n++] = 8 | 3u << 28 | 1u << 31, pk[n++] = (uint32_t)(VA_HOST + 0x800), pk[n++] = (uint32_t)((VA_HOST + 0x800) >> 32);
  pk[n++] = 42, pk[n++] = 0xffffffffu, pk[n++] = 4 | 0xfffu << 16;
  n += sdma_fence(pk + n, VA_HOST + 0x900, 7);
  pk[n++] = 0, pk[n++] = 0; /* NOPs */
  uint64_t t0 = clock100();
  sdma_submit(pk, n);
  usleep(30000);
  ck_assert_uint_eq(__atomic_load_n(host32(0x900), __ATOMIC_ACQUIRE), 0);
  __atomic_store_n(host32(0x800), 42, __ATOMIC_RELEASE);
  for (int i = 0; i < 2000 && __atomic_load_n(host32(0x900), __ATOMIC_ACQUIRE) != 7; i++) usleep(1000);
  ck_assert_uint_eq(*host32(0x900), 7);
  for (unsigned i = 0; i < 0x100; i += 4) ck_assert_uint_eq(vram32(vbuf + 0x3000 + i), 0xA5A5F00Du);
  ck_assert_uint_eq(vram32(vbuf + 0x3100), 0);
  uint64_t ts;
  memcpy(&ts, host32(0x600), 8);
  ck_assert(ts >= t0 && ts <= clock100());
  ck_assert_uint_eq(*host32(0x700), 0xdddd0001u);
  ck_assert_uint_eq(*host32(0x704), 0xdddd0002u);
  /* unknown opcode: named with its dwords and ring offset */
  uint32_t bad[2] = {0x3f, 0x1234};
  uint64_t at = sdma_put;
  sdma_submit(bad, 2);
  wait_idle();
  char want[64];
  snprintf(want, sizeof(want), "byte 0x%" PRIx64 ": 0000003f", at);
  ck_assert_msg(strstr(mock_amd_failures(G), "unknown SDMA opcode 63") && strstr(mock_amd_failures(G), want), "%s",
                mock_amd_failures(G));
  mock_amd_clear_failures(G);
}
END_TEST

/* A read-only alias of the VRAM buffer: SDMA may read through it; a write is a permission fault. */
START_TEST(vm_permission) {
  const mock_amd_regmap *R = mock_amd_regs(G);
  uint64_t ro = VA_VRAM + 0x800000;
  OK(bg_am_pt_map_contig(B.gmc->pt, ro, vbuf, 0x1000, BG_AM_ASPACE_VRAM, BG_AM_PT_READ));
  OK(bg_mmio_wr32(&D->vram, vbuf + 0x10, 0x51515151));
  uint32_t pk[16];
  unsigned n = sdma_copy(pk, VA_HOST + 0xb00, ro + 0x10, 4);
  n += sdma_fence(pk + n, ro + 0x20, 1);
  sdma_submit(pk, n);
  wait_idle();
  ck_assert_uint_eq(*host32(0xb00), 0x51515151);
  ck_assert_uint_eq(vram32(vbuf + 0x20), 0);
  ck_assert_ptr_nonnull(strstr(mock_amd_failures(G), "write through a PTE without WRITEABLE"));
  uint32_t st = mock_amd_peek(G, R->gc_fault_status);
  ck_assert_uint_eq((st >> 4) & 0xf, 4);    /* PERMISSION_FAULTS: write */
  ck_assert_uint_eq((st >> 8) & 1, 0);      /* not a MAPPING_ERROR */
  ck_assert_uint_eq((st >> 9) & 0x1ff, 0xd); /* CID: SDMA0 */
  ck_assert_uint_eq((st >> 18) & 1, 1);
  mock_amd_sdma_stats sst;
  ck_assert(mock_amd_sdma_stats_get(G, &sst));
  ck_assert(sst.hung);
  OK(bg_am_pt_unmap(B.gmc->pt, ro, 0x1000));
  mock_amd_clear_failures(G);
  mock_amd_poke(G, R->gc_fault_status, 0);
}
END_TEST

/* Dwords of the next SDMA NOP for `left` dwords: at most 0x4000 (count 0x3fff). */
static uint32_t sdma_nop_len(uint64_t left) { return left > 0x4000 ? 0x4000 : (uint32_t)left; }

START_TEST(sdma_ring_wrap) {
  /* NOPs (count up to 0x3fff) up to 8 bytes before the ring end, a fence that wraps, then the zero padding
   * (NOPs) the runtime writes when a packet would cross the end, and a fence at the ring start */
  uint64_t end = BG_AM_SDMA_RING_SIZE - 8;
  while (sdma_put < end) {
    uint32_t len = sdma_nop_len((end - sdma_put) / 4);
    OK(bg_mmio_wr32(&D->vram, B.sdma->ring + sdma_put, (len - 1) << 16)); /* SDMA_OP_NOP, count len - 1 */
    sdma_put += 4ull * len;
  }
  OK(bg_mmio_wr64(&D->vram, B.sdma->ptrs + 0x38, sdma_put)); /* the engine catches up first */
  OK(bg_am_flush_hdp(D)); /* the ring and wptr writes reach the engines (tests/mockgpu/amd_hdp.h) */
  OK(bg_mmio_wr64(&D->doorbell, BG_AM_SDMA_DOORBELL * 8, sdma_put));
  wait_idle();
  uint32_t pk[8];
  sdma_submit(pk, sdma_fence(pk, VA_HOST + 0xa00, 0x1234)); /* crosses the end: SDMA reads it wrapped */
  wait_idle();
  ck_assert_uint_eq(*host32(0xa00), 0x1234);
  ck_assert_uint_eq(bg_mmio_rd64(&D->vram, B.sdma->ptrs + 0x80), sdma_put);
  ck_assert_uint_gt(sdma_put, BG_AM_SDMA_RING_SIZE);
  uint32_t zeros[3] = {0, 0, 0};
  sdma_submit(zeros, 3);
  sdma_submit(pk, sdma_fence(pk, VA_HOST + 0xa04, 0x5678));
  wait_idle();
  ck_assert_uint_eq(*host32(0xa04), 0x5678);
  mock_amd_sdma_stats st;
  ck_assert(mock_amd_sdma_stats_get(G, &st));
  ck_assert(!st.hung);
}
END_TEST

/* ---------------- unmodelled register writes (amd_reg_allow.h) ---------------- */

/* A write to a register with no hook, not read by the model and not on the allow-list fails naming it (and is
 * stored); a write to a listed one (GCVM_L2_CNTL3: gfxhub_v3_0_init_cache_regs) and to the modelled HQD range
 * does not. GCVM_CONTEXT1_CNTL (VMID 1) is never programmed by the driver and never walked by the model. */
START_TEST(unlisted_register_write) {
  uint32_t a = gc_reg(regGCVM_CONTEXT1_CNTL);
  mock_amd_wreg(G, a, 0x1234);
  ck_assert_uint_eq(mock_amd_nfail(G), 1);
  const char *f = mock_amd_failures(G);
  ck_assert_msg(strstr(f, "regGCVM_CONTEXT1_CNTL") && strstr(f, "not on the allow-list (tests/mockgpu/amd_reg_allow.c)"),
                "failure does not name the register: %s", f);
  ck_assert_uint_eq(mock_amd_rreg(G, a), 0x1234);
  mock_amd_clear_failures(G);
  mock_amd_wreg(G, gc_reg(regGCVM_L2_CNTL3), mock_amd_rreg(G, gc_reg(regGCVM_L2_CNTL3)));
  mock_amd_wreg(G, gc_reg(regCP_HQD_PQ_WPTR_HI) - 1, 0); /* inside the modelled HQD range */
  ck_assert_msg(mock_amd_nfail(G) == 0, "listed register refused: %s", mock_amd_failures(G));
  /* every entry documented */
  ck_assert_uint_gt(amd_reg_allow_count, 0);
  for (size_t i = 0; i < amd_reg_allow_count; i++)
    ck_assert_msg(amd_reg_allow_list[i].reason && strlen(amd_reg_allow_list[i].reason) >= 20 &&
                      amd_reg_allow_list[i].group < AMD_REG_NGROUPS,
                  "allow-list entry %s has no reason or group", amd_reg_allow_list[i].name);
}
END_TEST

static TCase *tc(const char *name, void (*su)(void)) {
  TCase *t = tcase_create(name);
  tcase_add_checked_fixture(t, su, teardown);
  tcase_set_timeout(t, 120);
  return t;
}

/* "test_mock_exec dispatch": only the shader-core dispatch, exit 77 (skip) without the RDNA3 core or llvm-mc-22. */
static int main_dispatch(void) {
#ifndef BG_MOCK_RDNA3
  puts("no RDNA3 core linked: skipped");
  return 77;
#else
  Suite *s = suite_create("mockamd-dispatch");
  TCase *t = tc("gfx11", setup11);
  tcase_add_test(t, cp_dispatch);
  tcase_add_test(t, cp_acquire_kcache);
  tcase_add_test(t, cp_dispatch_vgpr_grant);
  suite_add_tcase(s, t);
  SRunner *sr = srunner_create(s);
  srunner_set_fork_status(sr, CK_NOFORK); /* dispatch_rc comes back from the test */
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  bool skip = dispatch_rc == 77 || kcache_rc == 77 || vgpr_rc == 77;
  if (!failed && skip) puts("llvm-mc-22 not found: skipped");
  return failed ? 1 : skip ? 77 : 0;
#endif
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "dispatch") == 0) return main_dispatch();
  Suite *s = suite_create("mockamd");
  TCase *t11 = tc("gfx11", setup11);
  tcase_add_test(t11, cp_release_mem);
  tcase_add_test(t11, cp_wait_reg_mem);
  tcase_add_test(t11, cp_indirect_buffer);
  tcase_add_test(t11, cp_ring_wrap);
  tcase_add_test(t11, cp_fault);
  tcase_add_test(t11, cp_unknown_opcode);
  tcase_add_test(t11, cp_dispatch_fault);
  tcase_add_test(t11, doorbell_without_queue);
  tcase_add_test(t11, sdma_copies);
  tcase_add_test(t11, sdma_misc);
  tcase_add_test(t11, sdma_ring_wrap);
  tcase_add_test(t11, vm_permission);
  tcase_add_test(t11, unlisted_register_write);
  suite_add_tcase(s, t11);
  TCase *t12 = tc("gfx12", setup12);
  tcase_add_test(t12, cp_release_mem);
  tcase_add_test(t12, cp_wait_reg_mem);
  tcase_add_test(t12, sdma_copies);
  tcase_add_test(t12, sdma_misc);
  tcase_add_test(t12, vm_permission);
  tcase_add_test(t12, cp_fault);
  tcase_add_test(t12, unlisted_register_write);
  suite_add_tcase(s, t12);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
