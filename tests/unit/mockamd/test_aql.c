/* tests/unit/mockamd/test_aql.c: the emulated MI300's AQL packet processor (tests/mockgpu/amd_aql.h) and SDMA 4.4.2
 * (amd_sdma_exec.h) after a real AM bring-up (am/am_boot.h) of an emulated gfx942 (8 XCCs): hand-built AQL packets
 * go into the AQL ring the driver set up on every XCC, write_dispatch_id into the amd_queue_t page, the doorbell
 * carries the last packet's index. Checked: BARRIER_AND waits for every dependency and BARRIER_OR for any (the
 * packets behind them do not run before), completion signals are decremented once (with start/end timestamps when
 * the amd_queue_t asks for profiling), consumed headers read INVALID, read_dispatch_id follows, a vendor-specific
 * PM4 IB runs once per XCC (its WAIT_REG_MEM / RELEASE_MEM / gfx9 ACQUIRE_MEM), the round-robin share of work-groups
 * over the XCCs, strict refusals naming the field (kernarg alignment, setup dimensions, packet type, wave32
 * descriptor), and the SDMA 4 forms (COPY_LINEAR with the 22-bit count, FENCE without MTYPE, GCR_REQ refused). */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "am/am_boot.h"
#include "am/am_dev.h"
#include "am/am_gfx.h"
#include "am/am_sdma.h"
#include "am/mm_pt.h"
#include "am/mm_vram.h"
#include "amd_aql.h"
#include "amd_engine.h"
#include "amd_gpu.h"
#include "amd_sdma_exec.h"
#include "amd_testbed.h"
#include "amd_test_kernels.h"
#include "baregpu/error.h"
#include "bg_config.h"
#include "formats/amdgpu_elf.h"
#include "platform/pci.h"
#if BG_HAVE_LLVM
#include "compile/llvm_amdgpu.h"
#endif

#define BDF "0000:03:00.0"
#define OK(call) ck_assert_msg((call) == 0, "%s: %s", #call, bg_last_error())
#define PACKET3(op, n) ((3u << 30) | (((op) & 0xffu) << 8) | (((n) & 0x3fffu) << 16))
/* hsa_packet_header_t: BARRIER | ACQUIRE_SYSTEM | RELEASE_SYSTEM | type */
#define HDR(type) (1u << 8 | 2u << 9 | 2u << 11 | (type))

static amd_testbed TB;
static mock_amd *G;
static bg_am_dev *D;
static bg_am_blocks B;
static uint64_t aql_put, sdma_put, vbuf, va_vram, va_host;
static bg_sysmem hbuf;
#define HOST_SIZE 0x10000u

static void setup(void) {
  mock_amd_cfg cfg = {.chip = MOCK_AMD_GFX942, .bdf = BDF, .vram_size = 1024ull << 20};
  OK(amd_testbed_new(&TB, &cfg, "bg_aql"));
  G = TB.gpu;
  bg_am_open_opts o = {.fw_dir = TB.fw_dir, .timeout_ms = 2000, .settle_ms = -1, .reset_delay_ms = -1};
  OK(bg_am_dev_open(BDF, &o, &D));
  memset(&B, 0, sizeof(B));
  OK(bg_am_boot_ex(D, NULL, NULL, &B));
  ck_assert_msg(mock_amd_nfail(G) == 0, "%s", mock_amd_failures(G));
  ck_assert(B.gfx->aql_active);
  aql_put = bg_mmio_rd64(&D->vram, B.gfx->aql_ptrs + 56);
  sdma_put = 0;
  va_vram = B.gmc->vm_base + 0x40000000ull;
  va_host = va_vram + 0x400000ull;
  OK(bg_am_vram_alloc(D->mm, BG_AM_VRAM_MAIN, 0x200000, 0x200000, true, &vbuf));
  OK(bg_am_pt_map_contig(B.gmc->pt, va_vram, vbuf, 0x200000, BG_AM_ASPACE_VRAM, BG_AM_PT_RWX));
  OK(bg_pci_alloc_sysmem(D->pci, HOST_SIZE, 0, NULL, &hbuf));
  memset((void *)hbuf.view.ptr, 0, HOST_SIZE);
  OK(bg_am_pt_map_pages(B.gmc->pt, va_host, hbuf.bus, hbuf.npages, BG_AM_ASPACE_SYS,
                        BG_AM_PT_RWX | BG_AM_PT_SNOOPED | BG_AM_PT_UNCACHED));
}

static void teardown(void) {
  ck_assert_int_eq(mock_amd_engines_wait_idle(G, 5000), 0);
  OK(bg_am_boot_fini(D, &B));
  OK(bg_am_pt_unmap(B.gmc->pt, va_vram, 0x200000));
  OK(bg_am_pt_unmap(B.gmc->pt, va_host, HOST_SIZE));
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

static volatile int64_t *host64(uint64_t off) { return (volatile int64_t *)(void *)((uint8_t *)hbuf.view.ptr + off); }
static uint32_t *host32(uint64_t off) { return (uint32_t *)(void *)((uint8_t *)hbuf.view.ptr + off); }

/* Publish n packets at the put index and ring the doorbell with the last one's index. */
static void aql_submit(const uint32_t (*pk)[16], unsigned n) {
  uint64_t slots = BG_AM_GFX_RING_SIZE / 64;
  for (unsigned i = 0; i < n; i++)
    OK(bg_mmio_write(&D->vram, B.gfx->aql_ring + (aql_put + i) % slots * 64, pk[i], 64));
  aql_put += n;
  OK(bg_mmio_wr64(&D->vram, B.gfx->aql_ptrs + 56, aql_put));
  OK(bg_am_flush_hdp(D));
  OK(bg_mmio_wr64(&D->doorbell, BG_AM_GFX_DOORBELL_AQL * 8, aql_put - 1));
}

static uint32_t header_at(uint64_t idx) {
  return bg_mmio_rd32(&D->vram, B.gfx->aql_ring + idx % (BG_AM_GFX_RING_SIZE / 64) * 64) & 0xffff;
}
static uint64_t read_dispatch_id(void) { return bg_mmio_rd64(&D->vram, B.gfx->aql_ptrs + 128); }
static void wait_idle(void) { ck_assert_int_eq(mock_amd_engines_wait_idle(G, 10000), 0); }
static void settle(void) { usleep(50000); } /* long enough for the engine to run past a barrier it should not pass */

/* An amd_signal_t in the host pages at off (64-byte aligned): value at +8. */
static uint64_t signal_at(uint64_t off, int64_t v) {
  *host64(off + 8) = v;
  return va_host + off;
}

static void barrier_pkt(uint32_t *pk, unsigned type, const uint64_t dep[5], uint64_t completion) {
  memset(pk, 0, 64);
  pk[0] = HDR(type);
  for (unsigned i = 0; i < 5; i++) pk[2 + 2 * i] = (uint32_t)dep[i], pk[3 + 2 * i] = (uint32_t)(dep[i] >> 32);
  pk[14] = (uint32_t)completion, pk[15] = (uint32_t)(completion >> 32);
}

/* A vendor-specific packet running ndw dwords of PM4 at IB offset ib_off of the VRAM buffer. */
static void vendor_pkt(uint32_t *pk, uint64_t ib_off, const uint32_t *ib, unsigned ndw, uint64_t completion) {
  OK(bg_mmio_write(&D->vram, vbuf + ib_off, ib, ndw * 4ull));
  uint64_t va = va_vram + ib_off;
  memset(pk, 0, 64);
  pk[0] = HDR(0) | 1u << 16; /* AMD_AQL_FORMAT_PM4_IB */
  pk[1] = PACKET3(0x3F, 2), pk[2] = (uint32_t)va, pk[3] = (uint32_t)(va >> 32), pk[4] = ndw | 1u << 23;
  pk[5] = 10;
  pk[14] = (uint32_t)completion, pk[15] = (uint32_t)(completion >> 32);
}

/* RELEASE_MEM of a 32-bit value (gfx9 cache bits as the driver emits them). */
static unsigned release32(uint32_t *p, uint64_t va, uint32_t v) {
  p[0] = PACKET3(0x49, 6);
  p[1] = 0x14 | 5u << 8 | 1u << 15 | 1u << 19;
  p[2] = 1u << 29;
  p[3] = (uint32_t)va, p[4] = (uint32_t)(va >> 32), p[5] = v, p[6] = 0, p[7] = 0;
  return 8;
}

static void stats(mock_amd_aql_stats *st) { ck_assert(mock_amd_aql_stats_get(G, st)); }

/* ---------------- barriers ---------------- */

static void barrier_run(unsigned type) {
  uint64_t s1 = signal_at(0x100, 1), s2 = signal_at(0x140, 1), done = signal_at(0x180, 1);
  uint64_t dep[5] = {s1, 0, s2, 0, 0}; /* a zero handle is no dependency */
  uint32_t pk[2][16], ib[8];
  barrier_pkt(pk[0], type, dep, done);
  vendor_pkt(pk[1], 0x1000, ib, release32(ib, va_host + 0x200, 0xabcd), 0);
  uint64_t base = aql_put;
  aql_submit((const uint32_t(*)[16])pk, 2);
  settle();
  ck_assert_uint_eq(*host32(0x200), 0);
  ck_assert_uint_eq(read_dispatch_id(), base);
  *host64(s2 - va_host + 8) = 0; /* one of two */
  settle();
  if (type == 3) { /* BARRIER_AND: still waiting for s1, and the packet behind it has not run */
    ck_assert_uint_eq(*host32(0x200), 0);
    ck_assert_uint_eq(read_dispatch_id(), base);
    ck_assert_int_eq(*host64(0x188), 1);
    *host64(s1 - va_host + 8) = 0;
  }
  wait_idle();
  ck_assert_uint_eq(*host32(0x200), 0xabcd);
  ck_assert_int_eq(*host64(0x188), 0); /* completion signal decremented once */
  ck_assert_uint_eq(read_dispatch_id(), base + 2);
  ck_assert_uint_eq(header_at(base) & 0xff, 1); /* INVALID after consumption */
  ck_assert_uint_eq(header_at(base + 1) & 0xff, 1);
  ck_assert_uint_eq(header_at(base) >> 8, HDR(type) >> 8); /* only the type field changes */
  mock_amd_aql_stats st;
  stats(&st);
  ck_assert_uint_eq(type == 3 ? st.barriers_and : st.barriers_or, 1);
}

START_TEST(barrier_and) { barrier_run(3); }
END_TEST

START_TEST(barrier_or) { barrier_run(5); }
END_TEST

/* ---------------- completion signals, per-XCC PM4 ---------------- */

START_TEST(completion_signal) {
  uint32_t props = 1u << 3; /* amd_queue_t.queue_properties ENABLE_PROFILING */
  OK(bg_mmio_write(&D->vram, B.gfx->aql_ptrs + 180, &props, 4));
  uint64_t c = signal_at(0x300, 5);
  uint32_t pk[3][16], ib[32];
  unsigned n = release32(ib, va_host + 0x400, 7);
  /* a wait that holds, then a gfx9 ACQUIRE_MEM (CP_COHER_CNTL form, 6 payload dwords) */
  ib[n++] = PACKET3(0x3C, 5), ib[n++] = 5 | 1u << 4, ib[n++] = (uint32_t)(va_host + 0x400),
  ib[n++] = (uint32_t)((va_host + 0x400) >> 32), ib[n++] = 7, ib[n++] = 0xffffffffu, ib[n++] = 4;
  ib[n++] = PACKET3(0x58, 5), ib[n++] = 1u << 27, ib[n++] = 0xffffffffu, ib[n++] = 0xffffffffu, ib[n++] = 0,
  ib[n++] = 0, ib[n++] = 0xA;
  for (int i = 0; i < 3; i++) vendor_pkt(pk[i], 0x2000, ib, n, c);
  mock_amd_aql_stats st0, st;
  stats(&st0);
  aql_submit((const uint32_t(*)[16])pk, 3);
  wait_idle();
  ck_assert_int_eq(*host64(0x308), 2); /* 5 - 3 packets */
  uint64_t start = (uint64_t)*host64(0x300 + 32), end = (uint64_t)*host64(0x300 + 40);
  ck_assert_uint_ne(start, 0);
  ck_assert_uint_ge(end, start);
  stats(&st);
  ck_assert_uint_eq(st.nxcc, 8);
  ck_assert_uint_eq(st.completions - st0.completions, 3);
  ck_assert_uint_eq(st.vendor_ibs - st0.vendor_ibs, 3);
  ck_assert_uint_eq(st.pm4_packets - st0.pm4_packets, 3u * 3 * st.nxcc); /* every XCC's CP runs the IB */
  ck_assert_uint_eq(st.pm4_waits - st0.pm4_waits, 3u * st.nxcc);
}
END_TEST

/* ---------------- the work-group split over the XCCs ---------------- */

START_TEST(xcc_split) {
  static const unsigned totals[] = {1, 7, 8, 37, 4096};
  for (size_t t = 0; t < sizeof(totals) / sizeof(totals[0]); t++) {
    uint64_t sum = 0;
    for (unsigned x = 0; x < 8; x++) {
      uint64_t n = mock_amd_aql_xcc_share(totals[t], x, 8), want = 0;
      for (uint64_t id = 0; id < totals[t]; id++) want += id % 8 == x; /* COMPUTE_TG_CHUNK_SIZE 1: round robin */
      ck_assert_uint_eq(n, want);
      sum += n;
    }
    ck_assert_uint_eq(sum, totals[t]);
  }
  ck_assert_uint_eq(mock_amd_aql_xcc_share(37, 0, 1), 37);
  /* what the driver programmed on each XCC's MQD: xcc id k, chunk 1 */
  for (unsigned x = 0; x < 8; x++) {
    const mock_amd_hqd9 *h = mock_amd_gfx9_hqd(G, x, 1);
    ck_assert_ptr_nonnull(h);
    ck_assert(h->aql && h->q.active);
    ck_assert_uint_eq(h->xcc_id, x);
    ck_assert_uint_eq(h->tg_chunk, 1);
  }
}
END_TEST

static void dispatch_pkt(uint32_t *pk, uint32_t setup, uint64_t kobj, uint64_t kargs);

/* A real kernel (add1, LLVM-compiled for gfx942) over 37 work-groups of 32: every XCC runs its round-robin share on
 * the CDNA3 core, the completion signal drops once. Skipped without LLVM or the core. */
START_TEST(xcc_dispatch) {
#if BG_HAVE_LLVM && defined(BG_MOCK_CDNA3)
  void *obj;
  size_t n;
  OK(bg_llvm_amdgpu_compile(AMD_TEST_ADD1_IR, "gfx942", &obj, &n));
  bg_amdgpu_image img;
  memset(&img, 0, sizeof(img));
  OK(bg_amdgpu_elf_load(obj, n, "add1", &img));
  free(obj);
  ck_assert_uint_le(img.size, 0x10000);
  OK(bg_amdgpu_image_relocate(&img, va_vram + 0x10000));
  OK(bg_mmio_write(&D->vram, vbuf + 0x10000, img.data, img.size));
  uint64_t kd_va = va_vram + 0x10000 + img.kd_offset;
  bg_amdgpu_image_free(&img);
  enum { WGS = 37, LOCAL = 32 };
  float in[WGS * LOCAL];
  for (unsigned i = 0; i < WGS * LOCAL; i++) in[i] = (float)i * 0.5f;
  OK(bg_mmio_write(&D->vram, vbuf + 0x20000, in, sizeof(in)));
  uint64_t kargs[32] = {va_vram + 0x30000, va_vram + 0x20000}; /* out, in; hidden arguments read 0 */
  OK(bg_mmio_write(&D->vram, vbuf + 0x4000, kargs, sizeof(kargs)));
  uint64_t done = signal_at(0x500, 1);
  uint32_t pk[16];
  dispatch_pkt(pk, 1, kd_va, va_vram + 0x4000);
  pk[1] = LOCAL | 1u << 16, pk[3] = WGS * LOCAL;
  pk[14] = (uint32_t)done, pk[15] = (uint32_t)(done >> 32);
  mock_amd_aql_stats st0, st;
  stats(&st0);
  aql_submit((const uint32_t(*)[16])&pk, 1);
  wait_idle();
  ck_assert_msg(mock_amd_nfail(G) == 0, "%s", mock_amd_failures(G));
  float out[WGS * LOCAL];
  OK(bg_mmio_read(&D->vram, vbuf + 0x30000, out, sizeof(out)));
  for (unsigned i = 0; i < WGS * LOCAL; i++) ck_assert_msg(out[i] == in[i] + 1.0f, "out[%u] = %g", i, (double)out[i]);
  ck_assert_int_eq(*host64(0x508), 0);
  stats(&st);
  uint64_t sum = 0;
  for (unsigned x = 0; x < st.nxcc; x++) {
    ck_assert_uint_eq(st.xcc_dispatches[x] - st0.xcc_dispatches[x], 1);
    ck_assert_uint_eq(st.xcc_workgroups[x] - st0.xcc_workgroups[x], x < WGS % 8 ? WGS / 8 + 1 : WGS / 8);
    ck_assert_uint_eq(st.xcc_waves[x] - st0.xcc_waves[x], st.xcc_workgroups[x] - st0.xcc_workgroups[x]);
    sum += st.xcc_waves[x] - st0.xcc_waves[x];
    printf("# XCC %u: %" PRIu64 " dispatch, %" PRIu64 " work-groups, %" PRIu64 " waves\n", x,
           st.xcc_dispatches[x] - st0.xcc_dispatches[x], st.xcc_workgroups[x] - st0.xcc_workgroups[x],
           st.xcc_waves[x] - st0.xcc_waves[x]);
  }
  ck_assert_uint_eq(sum, WGS); /* one wave64 per 32-thread work-group, each run once */
#endif
}
END_TEST

/* PRED_EXEC: every XCC's CP reads the IB, only the XCCs DEVICE_SELECT names run the dwords it covers. XCC 3 alone
 * writes 0x33 (its release is one packet, not nxcc); the unpredicated release after it runs on every XCC. */
START_TEST(pred_exec) {
  uint32_t pk[1][16], ib[32];
  *host32(0x500) = 0, *host32(0x504) = 0;
  unsigned n = 0;
  ib[n++] = PACKET3(0x23, 0), ib[n++] = 1u << (24 + 3) | 8;
  n += release32(ib + n, va_host + 0x500, 0x33);
  n += release32(ib + n, va_host + 0x504, 0x44);
  vendor_pkt(pk[0], 0x2800, ib, n, 0);
  mock_amd_aql_stats st0, st;
  stats(&st0);
  aql_submit((const uint32_t(*)[16])pk, 1);
  wait_idle();
  ck_assert_uint_eq(mock_amd_nfail(G), 0);
  ck_assert_uint_eq(*host32(0x500), 0x33);
  ck_assert_uint_eq(*host32(0x504), 0x44);
  stats(&st);
  ck_assert_uint_eq(st.pm4_packets - st0.pm4_packets, st.nxcc /* PRED_EXEC */ + 1 + st.nxcc);
}
END_TEST

/* ---------------- strict refusals ---------------- */

/* Submit one packet that must be refused with `want` in the failure; the queue hangs there. */
static void refused(const uint32_t *pk, const char *want) {
  uint64_t base = aql_put;
  aql_submit((const uint32_t(*)[16])pk, 1);
  wait_idle();
  ck_assert_uint_ge(mock_amd_nfail(G), 1);
  ck_assert_msg(strstr(mock_amd_failures(G), want), "expected \"%s\" in: %s", want, mock_amd_failures(G));
  ck_assert_ptr_nonnull(strstr(mock_amd_failures(G), "(queue hung)"));
  ck_assert_uint_eq(read_dispatch_id(), base);
  mock_amd_aql_stats st;
  stats(&st);
  ck_assert(st.hung);
  mock_amd_clear_failures(G);
}

/* A kernel descriptor at VRAM offset 0x3000 (64-byte aligned), entry 256 bytes after it. */
static uint64_t kd(uint16_t props) {
  uint8_t d[64];
  memset(d, 0, sizeof(d));
  int64_t entry = 256;
  uint32_t rsrc2 = 2u << 1; /* USER_SGPR 2: the kernarg pointer */
  memcpy(d + 16, &entry, 8), memcpy(d + 52, &rsrc2, 4), memcpy(d + 56, &props, 2);
  OK(bg_mmio_write(&D->vram, vbuf + 0x3000, d, sizeof(d)));
  return va_vram + 0x3000;
}

static void dispatch_pkt(uint32_t *pk, uint32_t setup, uint64_t kobj, uint64_t kargs) {
  memset(pk, 0, 64);
  pk[0] = HDR(2) | setup << 16;
  pk[1] = 64 | 1u << 16, pk[2] = 1; /* workgroup 64 x 1 x 1 */
  pk[3] = 128, pk[4] = 1, pk[5] = 1;
  pk[8] = (uint32_t)kobj, pk[9] = (uint32_t)(kobj >> 32), pk[10] = (uint32_t)kargs, pk[11] = (uint32_t)(kargs >> 32);
}

START_TEST(refuse_kernarg_alignment) {
  uint32_t pk[16];
  dispatch_pkt(pk, 1, kd(1u << 3), va_vram + 0x4008);
  refused(pk, "kernarg_address 0x");
}
END_TEST

START_TEST(refuse_setup) {
  uint32_t pk[16];
  dispatch_pkt(pk, 0, kd(1u << 3), va_vram + 0x4000);
  refused(pk, "KERNEL_DISPATCH setup 0x0: dimensions must be 1..3");
}
END_TEST

START_TEST(refuse_wave32) {
  uint32_t pk[16];
  dispatch_pkt(pk, 1, kd(1u << 3 | 1u << 10), va_vram + 0x4000);
  refused(pk, "ENABLE_WAVEFRONT_SIZE32 on gfx9");
}
END_TEST

START_TEST(refuse_unmapped_kd) {
  uint32_t pk[16];
  dispatch_pkt(pk, 1, va_vram + 0x10000000ull, va_vram + 0x4000);
  refused(pk, "kernel_object 0x");
}
END_TEST

/* PRED_EXEC covering more than the IB holds, or naming no XCC. */
START_TEST(refuse_pred_exec) {
  uint32_t pk[16], ib[16];
  unsigned n = 0;
  ib[n++] = PACKET3(0x23, 0), ib[n++] = 1u << 24 | 9;
  n += release32(ib + n, va_host + 0x500, 1);
  vendor_pkt(pk, 0x2800, ib, n, 0);
  refused(pk, "PRED_EXEC EXEC_COUNT 9: expected 1..8");
}
END_TEST

START_TEST(refuse_packet_type) {
  uint32_t pk[16];
  memset(pk, 0, sizeof(pk));
  pk[0] = HDR(4); /* AGENT_DISPATCH */
  refused(pk, "packet type 4");
}
END_TEST

/* ---------------- SDMA 4.4.2 ---------------- */

static void sdma_submit(const uint32_t *dw, unsigned n) {
  for (unsigned i = 0; i < n; i++)
    OK(bg_mmio_wr32(&D->vram, B.sdma->ring + (sdma_put + 4ull * i) % BG_AM_SDMA_RING_SIZE, dw[i]));
  sdma_put += 4ull * n;
  OK(bg_mmio_wr64(&D->vram, B.sdma->ptrs + 0x38, sdma_put));
  OK(bg_am_flush_hdp(D));
  OK(bg_mmio_wr64(&D->doorbell, BG_AM_SDMA_DOORBELL * 8, sdma_put));
}

START_TEST(sdma_v4) {
  uint8_t src[4096];
  for (unsigned i = 0; i < sizeof(src); i++) src[i] = (uint8_t)(i * 7 + 3);
  OK(bg_mmio_write(&D->vram, vbuf + 0x8000, src, sizeof(src)));
  uint64_t s = va_vram + 0x8000, d = va_host + 0x1000, f = va_host + 0x40;
  uint32_t p[] = {1, sizeof(src) - 1, 0, (uint32_t)s, (uint32_t)(s >> 32), (uint32_t)d, (uint32_t)(d >> 32), /* COPY */
                  5, (uint32_t)f, (uint32_t)(f >> 32), 0x1234};                                          /* FENCE */
  sdma_submit(p, sizeof(p) / 4);
  wait_idle();
  ck_assert_int_eq(memcmp((uint8_t *)hbuf.view.ptr + 0x1000, src, sizeof(src)), 0);
  ck_assert_uint_eq(*host32(0x40), 0x1234);
  uint32_t big[] = {1, 0x400000, 0, (uint32_t)s, (uint32_t)(s >> 32), (uint32_t)d, (uint32_t)(d >> 32)};
  sdma_submit(big, 7); /* 0x400001 bytes: beyond SDMA 4's 22-bit count */
  wait_idle();
  ck_assert_ptr_nonnull(strstr(mock_amd_failures(G), "COPY_LINEAR count 0x400000 has bits beyond the SDMA 4 count field"));
  mock_amd_clear_failures(G);
}
END_TEST

START_TEST(sdma_v4_fence_mtype) {
  uint64_t f = va_host + 0x40;
  uint32_t p[] = {5 | 3u << 16, (uint32_t)f, (uint32_t)(f >> 32), 1}; /* the SDMA 5+ MTYPE field */
  sdma_submit(p, 4);
  wait_idle();
  ck_assert_ptr_nonnull(strstr(mock_amd_failures(G), "SDMA 4 has no MTYPE"));
  ck_assert_uint_eq(*host32(0x40), 0);
  mock_amd_clear_failures(G);
}
END_TEST

int main(void) {
  Suite *s = suite_create("mockamd-aql");
  TCase *t = tcase_create("gfx942");
  tcase_add_checked_fixture(t, setup, teardown);
  tcase_set_timeout(t, 120);
  tcase_add_test(t, barrier_and);
  tcase_add_test(t, barrier_or);
  tcase_add_test(t, completion_signal);
  tcase_add_test(t, xcc_split);
  tcase_add_test(t, xcc_dispatch);
  tcase_add_test(t, refuse_kernarg_alignment);
  tcase_add_test(t, refuse_setup);
  tcase_add_test(t, refuse_wave32);
  tcase_add_test(t, refuse_unmapped_kd);
  tcase_add_test(t, refuse_packet_type);
  tcase_add_test(t, pred_exec);
  tcase_add_test(t, refuse_pred_exec);
  tcase_add_test(t, sdma_v4);
  tcase_add_test(t, sdma_v4_fence_mtype);
  suite_add_tcase(s, t);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
