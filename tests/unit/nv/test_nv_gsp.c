/* tests/unit/nv/test_nv_gsp.c: GSP-RM message queues, RPC records, the CPU sequencer, the boot structures and RM calls
 * over RPC (nv/nv_gsp.h).
 *
 * The test plays GSP itself: a small responder (fake_*) that reads the command queue and writes the status queue,
 * written here from the layouts (Linux nouveau include/nvrm/535.113.01 msgq_priv.h and nvkm/subdev/gsp/r535.c
 * struct r535_gsp_msg / nvfw_gsp_rpc; tinygrad tinygrad/runtime/support/nv/ip.py NV_GSP.init_sw; open-gpu-kernel-modules message_queue_cpu.c for the
 * checksum range), never with the driver's encoder. Offsets and expected values below are numbers from those sources,
 * written out by hand. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "../check_helpers.h"
#include "baregpu/error.h"
#include "nv/nv_chips.h"
#include "nv/nv_fw.h"
#include "nv/nv_gsp.h"
#include "nv/nv_status.h"

/* ---- little-endian access ---- */
static uint32_t r32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t r64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static uint16_t r16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static void w32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }

/* ---- the fake GSP ---- */
#define REGION 0x81000u   /* page list + 2 x 0x40000 (tinygrad tinygrad/runtime/support/nv/ip.py NV_GSP.init_sw) */
#define CMDQ 0x1000u
#define STATQ 0x41000u
#define ELEMS 63u         /* (0x40000 - 0x1000) / 0x1000 */
#define EL(queue, i) (f->region + (queue) + 0x1000u + ((i) % ELEMS) * 0x1000u)

typedef struct reply_plan {
  uint32_t status;        /* rpc_gsp_rm_alloc_v.status / control status / free status */
  uint32_t rpc_result;    /* rpc_message_header_v.rpc_result */
  int event;              /* 0, or an event to send before the reply */
  const uint8_t *event_payload;
  size_t event_len;
} reply_plan;

typedef struct fake {
  uint8_t *region;
  uint64_t bus[REGION / 0x1000];
  bg_nv_gsp g;
  int respond;            /* answer on notify */
  reply_plan plan;
  uint32_t stat_seq;
  /* what the responder saw last */
  uint32_t last_fn, last_len;
  uint8_t last_payload[0x20000];
  int notified;
  /* register file for the sequencer */
  uint32_t regs[64];
  uint64_t delay_total;
  unsigned delay_calls, resets, starts, halts, resumes;
  uint64_t ready_after_us; /* REG_POLL target register becomes ready once this much delay passed */
} fake;

static fake *fake_new(void) {
  fake *f = calloc(1, sizeof *f);
  ck_assert_ptr_nonnull(f);
  f->region = aligned_alloc(0x1000, REGION);
  ck_assert_ptr_nonnull(f->region);
  memset(f->region, 0xa5, REGION); /* init must clear it */
  for (unsigned i = 0; i < REGION / 0x1000; i++) f->bus[i] = 0x4000000000ull + 0x3000ull * i; /* scattered pages */
  OK(bg_nv_msgq_init(&f->g.q, f->region, REGION, f->bus, REGION / 0x1000));
  return f;
}

static void fake_free(fake *f) {
  bg_nv_gsp_fini(&f->g);
  free(f->region);
  free(f);
}

/* XOR of the u64 words of n bytes starting at element `first` of a queue (wrapping per element), folded hi ^ lo;
 * bytes past n in the last word count as zero. */
static uint32_t fold_sum(fake *f, uint32_t queue, uint32_t first, size_t n) {
  uint64_t s = 0;
  for (size_t off = 0; off < n; off += 8) {
    uint8_t w[8] = {0};
    memcpy(w, EL(queue, first + off / 0x1000) + off % 0x1000, n - off < 8 ? n - off : 8);
    s ^= r64(w);
  }
  return (uint32_t)(s >> 32) ^ (uint32_t)s;
}

/* GSP reads one command record (GSP's read pointer lives in the status queue's rx header, +32). Returns elemCount,
 * 0 when empty; checks the record as the firmware would. */
static uint32_t fake_read_cmd(fake *f, uint32_t *fn, uint8_t *payload, uint32_t *plen, uint32_t *seq) {
  uint32_t rptr = r32(f->region + STATQ + 32), wptr = r32(f->region + CMDQ + 16);
  if (rptr == wptr) return 0;
  const uint8_t *e = EL(CMDQ, rptr);
  uint32_t count = r32(e + 40), len = r32(e + 0x30 + 8);
  ck_assert_uint_ge(count, 1);
  ck_assert_uint_le(count, 16);
  ck_assert_uint_eq(count, (0x30 + len + 0xfff) / 0x1000);
  ck_assert_uint_eq(r32(e + 0x30), 0x03000000u);
  ck_assert_uint_eq(r32(e + 0x30 + 4), 0x43505256u);
  ck_assert_uint_eq(r32(e + 0x30 + 16), 0xffffffffu);
  ck_assert_uint_eq(r32(e + 0x30 + 20), 0xffffffffu);
  ck_assert_msg(fold_sum(f, CMDQ, rptr, 0x30 + len) == 0, "command record checksum does not fold to 0");
  /* the whole elements too: the padding is zero (GSP's confidential-compute check covers them) */
  ck_assert_msg(fold_sum(f, CMDQ, rptr, (size_t)count * 0x1000) == 0, "element padding not zero");
  *fn = r32(e + 0x30 + 12);
  *seq = r32(e + 36);
  *plen = len - 0x20;
  for (uint32_t k = 0; k < len - 0x20; k++) payload[k] = EL(CMDQ, rptr + (0x50 + k) / 0x1000)[(0x50 + k) % 0x1000];
  w32(f->region + STATQ + 32, (rptr + count) % ELEMS);
  return count;
}

/* GSP writes one status message; elem_override != 0 replaces the computed elemCount; flip >= 0 flips that byte of the
 * message after the checksum. */
static void fake_put(fake *f, uint32_t fn, uint32_t result, const void *payload, uint32_t n, uint32_t elem_override,
                     long flip) {
  uint32_t wptr = r32(f->region + STATQ + 16);
  uint32_t len = 0x20 + n, count = elem_override ? elem_override : (0x30 + len + 0xfff) / 0x1000;
  uint32_t span = (0x30 + len + 0xfff) / 0x1000 > count ? (0x30 + len + 0xfff) / 0x1000 : count;
  for (uint32_t i = 0; i < span; i++) memset(EL(STATQ, wptr + i), 0, 0x1000);
  uint8_t hdr[0x50] = {0};
  w32(hdr + 36, f->stat_seq++);
  w32(hdr + 40, count);
  w32(hdr + 0x30, 0x03000000u);
  w32(hdr + 0x34, 0x43505256u);
  w32(hdr + 0x38, len);
  w32(hdr + 0x3c, fn);
  w32(hdr + 0x40, result);
  w32(hdr + 0x44, result);
  for (uint32_t k = 0; k < 0x30 + len; k++) {
    uint8_t b = k < 0x50 ? hdr[k] : ((const uint8_t *)payload)[k - 0x50];
    EL(STATQ, wptr + k / 0x1000)[k % 0x1000] = b;
  }
  w32(EL(STATQ, wptr) + 32, fold_sum(f, STATQ, wptr, 0x30 + len));
  if (flip >= 0) EL(STATQ, wptr + (uint32_t)flip / 0x1000)[flip % 0x1000] ^= 0x10;
  w32(f->region + STATQ + 16, (wptr + count) % ELEMS);
}

static void fake_notify(void *ctx) {
  fake *f = ctx;
  f->notified++;
  if (!f->respond) return;
  uint32_t fn, len, seq;
  while (fake_read_cmd(f, &fn, f->last_payload, &len, &seq)) {
    f->last_fn = fn;
    f->last_len = len;
    if (f->plan.event) fake_put(f, (uint32_t)f->plan.event, 0, f->plan.event_payload, (uint32_t)f->plan.event_len, 0, -1);
    uint8_t *p = f->last_payload;
    if (fn == BG_NV_RPC_GSP_RM_ALLOC) {
      w32(p + 16, f->plan.status);                   /* rpc_gsp_rm_alloc_v.status */
      if (len >= 36) w32(p + 32, r32(p + 32) + 0x100); /* the "RM" changes the first params dword */
    } else if (fn == BG_NV_RPC_GSP_RM_CONTROL) {
      w32(p + 12, f->plan.status);
      if (len >= 28) w32(p + 24, ~r32(p + 24));
    } else if (fn == BG_NV_RPC_FREE) {
      w32(p + 12, f->plan.status);
    }
    fake_put(f, fn, f->plan.rpc_result, p, len, 0, -1);
  }
}

static void fake_relax(void *ctx) { (void)ctx; }

/* register file: index = addr / 4 */
static uint32_t fk_rd(void *ctx, uint32_t addr) {
  fake *f = ctx;
  if (addr == 0x40 && f->delay_total >= f->ready_after_us) return f->regs[0x40 / 4] | 0x80000000u;
  return f->regs[(addr / 4) % 64];
}
static void fk_wr(void *ctx, uint32_t addr, uint32_t v) { ((fake *)ctx)->regs[(addr / 4) % 64] = v; }
static void fk_delay(void *ctx, uint32_t us) {
  fake *f = ctx;
  f->delay_total += us;
  f->delay_calls++;
}
static int fk_reset(void *ctx) { ((fake *)ctx)->resets++; return 0; }
static int fk_start(void *ctx) { ((fake *)ctx)->starts++; return 0; }
static int fk_halt(void *ctx) { ((fake *)ctx)->halts++; return 0; }
static int fk_resume(void *ctx) { ((fake *)ctx)->resumes++; return 0; }
static int fk_resume_fails(void *ctx) { (void)ctx; return bg_error(BG_EHANG, "SEC2 mailbox0 0x1"); }

static bg_nv_seq_ops seq_ops(fake *f) {
  return (bg_nv_seq_ops){.ctx = f, .rd32 = fk_rd, .wr32 = fk_wr, .delay_us = fk_delay, .core_reset = fk_reset,
                         .core_start = fk_start, .core_wait_halt = fk_halt, .core_resume = fk_resume, .timeout_ms = 1};
}

static bg_nv_seq_ops g_seq; /* lives as long as the gsp using it */

static void gsp_up(fake *f, int timeout_ms) {
  g_seq = seq_ops(f);
  bg_nv_gsp_ops ops = {.ctx = f, .notify = fake_notify, .seq = &g_seq, .relax = fake_relax, .timeout_ms = timeout_ms};
  OK(bg_nv_gsp_init(&f->g, &ops));
  f->respond = 1;
}

/* ---- queue init ---- */
START_TEST(queue_init) {
  fake *f = fake_new();
  const uint8_t *h = f->region + CMDQ;
  /* msgqTxHeader: version 0, size 0x40000, msgSize 0x1000, msgCount 63, writePtr 0, flags 1, rxHdrOff 32,
   * entryOff 0x1000 */
  const uint32_t want[8] = {0, 0x40000, 0x1000, 63, 0, 1, 32, 0x1000};
  for (int i = 0; i < 8; i++) ck_assert_uint_eq(r32(h + 4 * i), want[i]);
  ck_assert_uint_eq(r32(h + 32), 0); /* rx readPtr */
  for (unsigned i = 0; i < REGION / 0x1000; i++) ck_assert_uint_eq(r64(f->region + 8 * i), f->bus[i]);
  ck_assert_uint_eq(r64(f->region + 8 * 129), 0);
  ck_assert_uint_eq(f->g.q.pte_count, 129);
  ck_assert_uint_eq(f->g.q.bus0, f->bus[0]);
  ck_assert_uint_eq(f->region[STATQ + 100], 0); /* the rest zeroed */
  bg_nv_msgq q;
  FAILS(bg_nv_msgq_init(&q, f->region, REGION - 0x1000, f->bus, 128), BG_EINVAL, "region of");
  FAILS(bg_nv_msgq_init(&q, f->region, REGION, f->bus, 128), BG_EINVAL, "128 bus addresses");
  uint64_t bad[129];
  memcpy(bad, f->bus, sizeof bad);
  bad[7] |= 0x10;
  FAILS(bg_nv_msgq_init(&q, f->region, REGION, bad, 129), BG_EINVAL, "page 7");
  /* the RM arguments point at it (tinygrad tinygrad/runtime/support/nv/ip.py NV_GSP.init_sw: sharedMemPhysAddr @0, pageTableEntryCount @8, cmdQueueOffset @16,
   * statQueueOffset @24, bDmemStack @48) */
  uint8_t args[0x1000];
  OK(bg_nv_gsp_rm_args(args, sizeof args, &f->g.q));
  ck_assert_uint_eq(r64(args), f->bus[0]);
  ck_assert_uint_eq(r32(args + 8), 129);
  ck_assert_uint_eq(r64(args + 16), 0x1000);
  ck_assert_uint_eq(r64(args + 24), 0x41000);
  ck_assert_uint_eq(args[48], 1);
  fake_free(f);
}
END_TEST

/* ---- send ---- */
START_TEST(send_records) {
  fake *f = fake_new();
  static uint8_t pay[0x12000], got[0x12000];
  for (size_t i = 0; i < sizeof pay; i++) pay[i] = (uint8_t)(i * 7 + 3);
  uint32_t fn, len, seq;
  /* one element */
  OK(bg_nv_msgq_send(&f->g.q, BG_NV_RPC_GSP_SET_SYSTEM_INFO, pay, 100));
  ck_assert_uint_eq(r32(f->region + CMDQ + 16), 1);
  ck_assert_uint_eq(fake_read_cmd(f, &fn, got, &len, &seq), 1);
  ck_assert_uint_eq(fn, 72);
  ck_assert_uint_eq(len, 100);
  ck_assert_uint_eq(seq, 0);
  ck_assert_mem_eq(got, pay, 100);
  /* exactly one element: 0x50 + 0xfb0 = 0x1000; one byte more takes two */
  OK(bg_nv_msgq_send(&f->g.q, BG_NV_RPC_SET_REGISTRY, pay, 0xfb0));
  ck_assert_uint_eq(fake_read_cmd(f, &fn, got, &len, &seq), 1);
  ck_assert_uint_eq(seq, 1);
  OK(bg_nv_msgq_send(&f->g.q, BG_NV_RPC_SET_REGISTRY, pay, 0xfb1));
  ck_assert_uint_eq(fake_read_cmd(f, &fn, got, &len, &seq), 2);
  ck_assert_mem_eq(got, pay, 0xfb1);
  /* multi-element */
  OK(bg_nv_msgq_send(&f->g.q, BG_NV_RPC_GSP_RM_CONTROL, pay, 0x3000));
  ck_assert_uint_eq(fake_read_cmd(f, &fn, got, &len, &seq), 4);
  ck_assert_uint_eq(len, 0x3000);
  ck_assert_mem_eq(got, pay, 0x3000);
  /* continuation: 0x10000 - 0x50 = 0xffb0 bytes in the first record (16 elements), the rest in CONTINUATION_RECORDs */
  size_t big = 0xffb0 + 0x2000;
  uint64_t sent = f->g.q.sent;
  OK(bg_nv_msgq_send(&f->g.q, BG_NV_RPC_ALLOC_MEMORY, pay, big));
  ck_assert_uint_eq(f->g.q.sent, sent + 2);
  ck_assert_uint_eq(fake_read_cmd(f, &fn, got, &len, &seq), 16);
  ck_assert_uint_eq(fn, BG_NV_RPC_ALLOC_MEMORY);
  ck_assert_uint_eq(len, 0xffb0);
  uint32_t seq0 = seq;
  ck_assert_uint_eq(fake_read_cmd(f, &fn, got + 0xffb0, &len, &seq), 3);
  ck_assert_uint_eq(fn, BG_NV_RPC_CONTINUATION_RECORD);
  ck_assert_uint_eq(len, 0x2000);
  ck_assert_uint_eq(seq, seq0 + 1);
  ck_assert_mem_eq(got, pay, big);
  ck_assert_uint_eq(fake_read_cmd(f, &fn, got, &len, &seq), 0);
  /* more than the queue can ever hold */
  FAILS(bg_nv_msgq_send(&f->g.q, 4, pay, (size_t)63 * 0x1000), BG_EINVAL, "queue elements");
  fake_free(f);
}
END_TEST

START_TEST(send_wraps_and_fills) {
  fake *f = fake_new();
  static uint8_t pay[0x8000], got[0x8000];
  for (size_t i = 0; i < sizeof pay; i++) pay[i] = (uint8_t)(i ^ (i >> 8));
  uint32_t fn, len, seq;
  /* walk the write pointer to 61 with GSP consuming, then a 4-element record wraps to 2 */
  for (int i = 0; i < 61; i++) {
    OK(bg_nv_msgq_send(&f->g.q, 10, pay, 8));
    ck_assert_uint_eq(fake_read_cmd(f, &fn, got, &len, &seq), 1);
  }
  ck_assert_uint_eq(r32(f->region + CMDQ + 16), 61);
  OK(bg_nv_msgq_send(&f->g.q, 76, pay + 5, 0x3100));
  ck_assert_uint_eq(r32(f->region + CMDQ + 16), 2);
  ck_assert_uint_eq(fake_read_cmd(f, &fn, got, &len, &seq), 4);
  ck_assert_uint_eq(len, 0x3100);
  ck_assert_mem_eq(got, pay + 5, 0x3100);
  ck_assert_uint_eq(seq, 61);
  /* GSP stops reading: 62 elements free at most (one stays empty); fill with 8 records of 7 elements = 56 */
  for (int i = 0; i < 8; i++) OK(bg_nv_msgq_send(&f->g.q, 76, pay, 0x6000));
  /* 6 free: a 7-element record does not fit, nothing is written */
  static uint8_t before[REGION];
  memcpy(before, f->region, REGION);
  FAILS(bg_nv_msgq_send(&f->g.q, 76, pay, 0x6000), BG_EBUSY, "GSP_RM_CONTROL");
  ck_assert_msg(memcmp(before, f->region, REGION) == 0, "a refused send wrote into the queue");
  /* a 6-element one fits exactly */
  OK(bg_nv_msgq_send(&f->g.q, 76, pay, 0x5000));
  FAILS(bg_nv_msgq_send(&f->g.q, 76, pay, 1), BG_EBUSY, "full");
  /* GSP consumes one record: room again */
  ck_assert_uint_eq(fake_read_cmd(f, &fn, got, &len, &seq), 7);
  OK(bg_nv_msgq_send(&f->g.q, 76, pay, 0x6000));
  /* a read pointer GSP corrupted is refused */
  w32(f->region + STATQ + 32, 63);
  FAILS(bg_nv_msgq_send(&f->g.q, 76, pay, 1), BG_EIO, "readPtr 63");
  fake_free(f);
}
END_TEST

/* ---- receive ---- */
START_TEST(recv_messages) {
  fake *f = fake_new();
  static uint8_t pay[0x6000], buf[0x10000];
  for (size_t i = 0; i < sizeof pay; i++) pay[i] = (uint8_t)(i * 13);
  bg_nv_rpc_msg m;
  ck_assert_int_eq(bg_nv_msgq_recv(&f->g.q, &m, buf, sizeof buf), 0);
  fake_put(f, 0x1001, 0, pay, 40, 0, -1);
  fake_put(f, 76, 0x22, pay, 0x4000, 0, -1);
  ck_assert_int_eq(bg_nv_msgq_recv(&f->g.q, &m, buf, sizeof buf), 1);
  ck_assert_uint_eq(m.function, 0x1001);
  ck_assert_uint_eq(m.length, 40);
  ck_assert_uint_eq(m.elem_count, 1);
  ck_assert_mem_eq(buf, pay, 40);
  ck_assert_int_eq(bg_nv_msgq_recv(&f->g.q, &m, buf, sizeof buf), 1);
  ck_assert_uint_eq(m.function, 76);
  ck_assert_uint_eq(m.result, 0x22);
  ck_assert_uint_eq(m.elem_count, 5);
  ck_assert_mem_eq(buf, pay, 0x4000);
  ck_assert_uint_eq(r32(f->region + CMDQ + 32), 6);
  ck_assert_int_eq(bg_nv_msgq_recv(&f->g.q, &m, buf, sizeof buf), 0);
  /* wrap: move both pointers to 61, then a 3-element message spans 61, 62, 0 */
  w32(f->region + STATQ + 16, 61);
  w32(f->region + CMDQ + 32, 61);
  fake_put(f, 103, 0, pay + 1, 0x2500, 0, -1);
  ck_assert_int_eq(bg_nv_msgq_recv(&f->g.q, &m, buf, sizeof buf), 1);
  ck_assert_uint_eq(m.elem_count, 3);
  ck_assert_mem_eq(buf, pay + 1, 0x2500);
  ck_assert_uint_eq(r32(f->region + CMDQ + 32), 1);
  fake_free(f);
}
END_TEST

/* tinygrad tinygrad/runtime/support/nv/ip.py NV_GSP.read_resp: a message whose 0x30-byte element header pushes it into a second element (rpc length 0xfe0: tinygrad's
 * round_up(length, 0x1000) says 1 element, elemCount says 2). Advancing by anything but elemCount misreads the next. */
START_TEST(recv_advances_by_elem_count) {
  fake *f = fake_new();
  static uint8_t pay[0x1000], buf[0x10000];
  memset(pay, 0x5a, sizeof pay);
  bg_nv_rpc_msg m;
  fake_put(f, 76, 0, pay, 0xfc0, 0, -1); /* length 0xfe0, 0x30 + 0xfe0 = 0x1010: 2 elements */
  fake_put(f, 0x1001, 0, pay, 8, 0, -1);
  ck_assert_int_eq(bg_nv_msgq_recv(&f->g.q, &m, buf, sizeof buf), 1);
  ck_assert_uint_eq(m.elem_count, 2);
  ck_assert_uint_eq(m.length, 0xfc0);
  ck_assert_int_eq(bg_nv_msgq_recv(&f->g.q, &m, buf, sizeof buf), 1);
  ck_assert_uint_eq(m.function, 0x1001);
  ck_assert_uint_eq(m.length, 8);
  /* GSP may also use more elements than the length needs: elemCount rules */
  fake_put(f, 76, 0, pay, 16, 3, -1);
  fake_put(f, 72, 0, pay, 16, 0, -1);
  ck_assert_int_eq(bg_nv_msgq_recv(&f->g.q, &m, buf, sizeof buf), 1);
  ck_assert_uint_eq(m.elem_count, 3);
  ck_assert_int_eq(bg_nv_msgq_recv(&f->g.q, &m, buf, sizeof buf), 1);
  ck_assert_uint_eq(m.function, 72);
  fake_free(f);
}
END_TEST

START_TEST(recv_refuses_bad_messages) {
  fake *f = fake_new();
  static uint8_t pay[0x2000], buf[0x10000];
  memset(pay, 0x33, sizeof pay);
  bg_nv_rpc_msg m;
  /* a flipped payload byte: checksum */
  fake_put(f, 76, 0, pay, 64, 0, 0x50 + 9);
  FAILS(bg_nv_msgq_recv(&f->g.q, &m, buf, sizeof buf), BG_EIO, "checksum");
  ck_assert_uint_eq(r32(f->region + CMDQ + 32), 0); /* not consumed */
  /* reset the status queue for each case */
#define RESET() (w32(f->region + STATQ + 16, 0), w32(f->region + CMDQ + 32, 0))
  RESET();
  fake_put(f, 76, 0, pay, 64, 0, -1);
  uint8_t *e = EL(STATQ, 0);
  uint32_t sum = r32(e + 32);
  /* bad header version / signature (checksum fixed up, so only that field is wrong) */
  w32(e + 0x30, 0x02000000u);
  w32(e + 32, sum ^ 0x03000000u ^ 0x02000000u);
  FAILS(bg_nv_msgq_recv(&f->g.q, &m, buf, sizeof buf), BG_EIO, "header_version 0x02000000");
  RESET();
  fake_put(f, 76, 0, pay, 64, 0, -1);
  sum = r32(e + 32);
  w32(e + 0x34, 0x43505257u);
  w32(e + 32, sum ^ 0x43505256u ^ 0x43505257u);
  FAILS(bg_nv_msgq_recv(&f->g.q, &m, buf, sizeof buf), BG_EIO, "signature");
  /* elemCount 0, 17, more than written */
  RESET();
  fake_put(f, 76, 0, pay, 64, 0, -1);
  w32(e + 40, 0);
  FAILS(bg_nv_msgq_recv(&f->g.q, &m, buf, sizeof buf), BG_EIO, "elemCount 0");
  w32(e + 40, 17);
  w32(f->region + STATQ + 16, 20);
  FAILS(bg_nv_msgq_recv(&f->g.q, &m, buf, sizeof buf), BG_EIO, "elemCount 17");
  w32(e + 40, 3);
  w32(f->region + STATQ + 16, 2);
  FAILS(bg_nv_msgq_recv(&f->g.q, &m, buf, sizeof buf), BG_EIO, "elemCount 3");
  /* length below the RPC header, length beyond elemCount */
  RESET();
  fake_put(f, 76, 0, pay, 64, 0, -1);
  w32(e + 0x38, 0x10);
  FAILS(bg_nv_msgq_recv(&f->g.q, &m, buf, sizeof buf), BG_EIO, "length 16");
  RESET();
  fake_put(f, 76, 0, pay, 0x1000, 1, -1); /* 0x1050 bytes in one element */
  FAILS(bg_nv_msgq_recv(&f->g.q, &m, buf, sizeof buf), BG_EIO, "length 4128");
  /* write pointer out of range */
  RESET();
  w32(f->region + STATQ + 16, 63);
  FAILS(bg_nv_msgq_recv(&f->g.q, &m, buf, sizeof buf), BG_EIO, "writePtr 63");
  /* payload larger than the caller's buffer: refused, consumed, the next one reads */
  RESET();
  fake_put(f, 76, 0, pay, 200, 0, -1);
  fake_put(f, 72, 0, pay, 4, 0, -1);
  FAILS(bg_nv_msgq_recv(&f->g.q, &m, buf, 100), BG_EINVAL, "GSP_RM_CONTROL reply of 200 bytes");
  ck_assert_int_eq(bg_nv_msgq_recv(&f->g.q, &m, buf, 100), 1);
  ck_assert_uint_eq(m.function, 72);
#undef RESET
  fake_free(f);
}
END_TEST

/* ---- RPC ---- */
START_TEST(rpc_rm_calls) {
  fake *f = fake_new();
  gsp_up(f, 2000);
  uint32_t h = 0, params[4] = {7, 8, 9, 10};
  OK(bg_nv_gsp_rm_alloc(&f->g, 0, 0, 0, 0 /* NV01_ROOT */, params, sizeof params, &h));
  ck_assert_uint_eq(h, 0xcf000000u);
  ck_assert_uint_eq(f->last_fn, 103);
  ck_assert_uint_eq(f->last_len, 32 + 16);
  ck_assert_uint_eq(r32(f->last_payload + 0), 0xcf000000u); /* hClient = the root itself */
  ck_assert_uint_eq(r32(f->last_payload + 8), 0xcf000000u); /* hObject */
  ck_assert_uint_eq(r32(f->last_payload + 12), 0);           /* hClass */
  ck_assert_uint_eq(r32(f->last_payload + 20), 16);          /* paramsSize */
  ck_assert_uint_eq(params[0], 7 + 0x100);                   /* reply params written back */
  uint32_t dev = 0;
  OK(bg_nv_gsp_rm_alloc(&f->g, h, h, 0, 0x80, params, sizeof params, &dev));
  ck_assert_uint_eq(dev, 0xcf000001u);
  ck_assert_uint_eq(r32(f->last_payload + 0), h);
  ck_assert_uint_eq(r32(f->last_payload + 4), h);
  ck_assert_uint_eq(r32(f->last_payload + 12), 0x80);
  uint32_t fixed = 0;
  OK(bg_nv_gsp_rm_alloc(&f->g, h, dev, 0xc1e00004u, 0x2080, NULL, 0, &fixed));
  ck_assert_uint_eq(fixed, 0xc1e00004u);
  /* a failing alloc names the class and the NV_STATUS, and consumes no handle */
  f->plan.status = NV_ERR_INVALID_CLASS;
  FAILS(bg_nv_gsp_rm_alloc(&f->g, h, dev, 0, 0xc7c0, params, sizeof params, &fixed), BG_EIO, "class 0xc7c0");
  ck_assert_msg(strstr(bg_last_error(), "NV_ERR_INVALID_CLASS"), "%s", bg_last_error());
  f->plan.status = 0;
  OK(bg_nv_gsp_rm_alloc(&f->g, h, dev, 0, 0x90f1, NULL, 0, &fixed));
  ck_assert_uint_eq(fixed, 0xcf000002u);
  /* control: params in and out; status checked */
  uint32_t cp[3] = {0x11, 0x22, 0x33};
  OK(bg_nv_gsp_rm_control(&f->g, h, dev, 0x20801112u, cp, sizeof cp));
  ck_assert_uint_eq(f->last_fn, 76);
  ck_assert_uint_eq(r32(f->last_payload + 8), 0x20801112u);
  ck_assert_uint_eq(r32(f->last_payload + 16), 12);
  ck_assert_uint_eq(cp[0], ~0x11u);
  ck_assert_uint_eq(cp[1], 0x22);
  f->plan.status = NV_ERR_NOT_SUPPORTED;
  FAILS(bg_nv_gsp_rm_control(&f->g, h, dev, 0x20800a32u, cp, sizeof cp), BG_EIO, "0x20800a32");
  ck_assert_msg(strstr(bg_last_error(), "NV_ERR_NOT_SUPPORTED"), "%s", bg_last_error());
  /* free through FREE {hRoot, hObjectParent, hObjectOld, status} */
  f->plan.status = 0;
  OK(bg_nv_gsp_rm_free(&f->g, h, dev, fixed));
  ck_assert_uint_eq(f->last_fn, 10);
  ck_assert_uint_eq(f->last_len, 16);
  ck_assert_uint_eq(r32(f->last_payload + 0), h);
  ck_assert_uint_eq(r32(f->last_payload + 4), dev);
  ck_assert_uint_eq(r32(f->last_payload + 8), fixed);
  f->plan.status = NV_ERR_INVALID_OBJECT_HANDLE;
  FAILS(bg_nv_gsp_rm_free(&f->g, h, dev, 0x1234), BG_EIO, "NV_ERR_INVALID_OBJECT_HANDLE");
  /* rpc_result non-zero: the RPC and the NV_STATUS are named */
  f->plan.status = 0;
  f->plan.rpc_result = NV_ERR_INSUFFICIENT_PERMISSIONS;
  FAILS(bg_nv_gsp_rm_control(&f->g, h, dev, 0x2080012bu, cp, sizeof cp), BG_EIO, "GSP_RM_CONTROL");
  ck_assert_msg(strstr(bg_last_error(), "rpc_result 0x1b (NV_ERR_INSUFFICIENT_PERMISSIONS)"), "%s", bg_last_error());
  ck_assert_uint_eq(f->g.nrpc, 10);
  fake_free(f);
}
END_TEST

START_TEST(rpc_events_and_timeout) {
  fake *f = fake_new();
  gsp_up(f, 30);
  uint32_t h = 0;
  /* a sequencer event before the reply runs on the way: WRITE 0x10 = 0xabcd */
  uint8_t seq[40 + 12] = {0};
  w32(seq + 0, 3);
  w32(seq + 4, 3);
  w32(seq + 40, 0);
  w32(seq + 44, 0x10);
  w32(seq + 48, 0xabcd);
  f->plan = (reply_plan){.event = BG_NV_RPC_EVENT_RUN_CPU_SEQUENCER, .event_payload = seq, .event_len = sizeof seq};
  OK(bg_nv_gsp_rm_alloc(&f->g, 0, 0, 0, 0, NULL, 0, &h));
  ck_assert_uint_eq(f->regs[0x10 / 4], 0xabcd);
  /* a broken sequencer fails the wait with the sequencer's error */
  w32(seq + 40, 99);
  FAILS(bg_nv_gsp_rm_alloc(&f->g, h, h, 0, 0x80, NULL, 0, &h), BG_EINVAL, "unknown opcode 99");
  /* no reply: BG_EHANG naming the awaited function */
  f->plan = (reply_plan){0};
  f->respond = 0;
  FAILS(bg_nv_gsp_rm_control(&f->g, h, h, 0x20801112u, NULL, 0), BG_EHANG, "GSP_RM_CONTROL");
  /* drain what the non-responding GSP left, then an OS_ERROR_LOG puts the device in error */
  uint32_t fn, len, sq;
  while (fake_read_cmd(f, &fn, f->last_payload, &len, &sq)) {}
  f->respond = 1;
  uint8_t log[12 + 32] = {0};
  memcpy(log + 12, "Xid 31: MMU fault", 17);
  f->plan = (reply_plan){.event = BG_NV_RPC_EVENT_OS_ERROR_LOG, .event_payload = log, .event_len = sizeof log};
  FAILS(bg_nv_gsp_rm_free(&f->g, h, h, h), BG_EHANG, "Xid 31: MMU fault");
  ck_assert(f->g.error);
  f->plan = (reply_plan){0};
  int before = f->notified;
  FAILS(bg_nv_gsp_rm_alloc(&f->g, h, h, 0, 0x80, NULL, 0, &h), BG_EHANG, "Xid 31");
  FAILS(bg_nv_gsp_poll(&f->g), BG_EHANG, "Xid 31");
  ck_assert_int_eq(f->notified, before); /* nothing sent once in error */
  fake_free(f);

  /* MMU_FAULT_QUEUED seen by poll */
  f = fake_new();
  gsp_up(f, 30);
  fake_put(f, 0x1001, 0, log, 4, 0, -1); /* an event poll passes over */
  OK(bg_nv_gsp_poll(&f->g));
  fake_put(f, BG_NV_RPC_EVENT_MMU_FAULT_QUEUED, 0, log, 4, 0, -1);
  FAILS(bg_nv_gsp_poll(&f->g), BG_EHANG, "MMU_FAULT_QUEUED");
  FAILS(bg_nv_gsp_send(&f->g, 10, log, 4), BG_EHANG, "MMU_FAULT_QUEUED");
  fake_free(f);
}
END_TEST

/* ops.timeout_ms 0: BG_WAIT_TIMEOUT_MS (util/env.h), range-checked */
START_TEST(rpc_timeout_from_env) {
  fake *f = fake_new();
  bg_nv_gsp_ops ops = {.ctx = f, .notify = fake_notify, .timeout_ms = 0};
  setenv("BG_WAIT_TIMEOUT_MS", "25", 1);
  OK(bg_nv_gsp_init(&f->g, &ops));
  ck_assert_int_eq(f->g.ops.timeout_ms, 25);
  ck_assert_uint_eq(f->g.next_handle, 0xcf000000u);
  FAILS(bg_nv_gsp_wait(&f->g, BG_NV_RPC_EVENT_GSP_INIT_DONE, NULL, 0, NULL), BG_EHANG, "GSP_INIT_DONE");
  bg_nv_gsp_fini(&f->g);
  setenv("BG_WAIT_TIMEOUT_MS", "0", 1);
  FAILS(bg_nv_gsp_init(&f->g, &ops), BG_EINVAL, "BG_WAIT_TIMEOUT_MS");
  unsetenv("BG_WAIT_TIMEOUT_MS");
  ops.notify = NULL;
  FAILS(bg_nv_gsp_init(&f->g, &ops), BG_EINVAL, "notify");
  /* a reply larger than the caller's buffer */
  ops.notify = fake_notify;
  ops.timeout_ms = 100;
  OK(bg_nv_gsp_init(&f->g, &ops));
  uint8_t small[8];
  fake_put(f, 76, 0, f->last_payload, 64, 0, -1);
  size_t len = 0;
  FAILS(bg_nv_gsp_wait(&f->g, 76, small, sizeof small, &len), BG_EINVAL, "reply of 64 bytes");
  fake_free(f);
}
END_TEST

/* ---- sequencer ---- */
static size_t seq_build(uint8_t *p, const uint32_t *cmds, uint32_t ndw) {
  memset(p, 0, 40);
  w32(p, ndw);
  w32(p + 4, ndw);
  memcpy(p + 40, cmds, 4 * ndw);
  return 40 + 4 * (size_t)ndw;
}

START_TEST(sequencer_opcodes) {
  fake *f = fake_new();
  bg_nv_seq_ops o = seq_ops(f);
  uint8_t p[400];
  f->regs[0x20 / 4] = 0xffff0000u;
  f->regs[0x30 / 4] = 0x1234;
  f->ready_after_us = 35;
  const uint32_t cmds[] = {
      0, 0x10, 0xcafe,                  /* REG_WRITE */
      1, 0x20, 0x00ff00ffu, 0x12345678u, /* REG_MODIFY {addr, mask, val} */
      2, 0x40, 0x80000000u, 0x80000000u, 1000, 0x77, /* REG_POLL: ready after 35 us */
      3, 250,                           /* DELAY_US */
      4, 0x30, 7,                       /* REG_STORE */
      5, 6, 7, 8,                       /* CORE_RESET, START, WAIT_HALT, RESUME */
  };
  OK(bg_nv_gsp_sequencer_run(p, seq_build(p, cmds, sizeof cmds / 4), &o));
  ck_assert_uint_eq(f->regs[0x10 / 4], 0xcafe);
  ck_assert_uint_eq(f->regs[0x20 / 4], (0xffff0000u & ~0x00ff00ffu) | (0x12345678u & 0x00ff00ffu));
  ck_assert_uint_ge(f->delay_total, 35 + 250);
  ck_assert_uint_le(f->delay_total, 2 * 35 + 250); /* polls at most double their wait */
  ck_assert_uint_eq(f->resets, 1);
  ck_assert_uint_eq(f->starts, 1);
  ck_assert_uint_eq(f->halts, 1);
  ck_assert_uint_eq(f->resumes, 1);
  /* POLL timeout: exactly the command's timeout in delays, error names the index, opcode and address */
  f->delay_total = 0;
  f->ready_after_us = ~0ull;
  const uint32_t poll[] = {3, 1, 2, 0x40, 0x80000000u, 0x80000000u, 100, 0};
  FAILS(bg_nv_gsp_sequencer_run(p, seq_build(p, poll, 8), &o), BG_ETIMEDOUT, "dword 2 (REG_POLL 0x000040)");
  ck_assert_uint_eq(f->delay_total, 1 + 100);
  /* timeout 0: ops->timeout_ms (1 ms) */
  f->delay_total = 0;
  const uint32_t poll0[] = {2, 0x40, 0x80000000u, 0x80000000u, 0, 0};
  FAILS(bg_nv_gsp_sequencer_run(p, seq_build(p, poll0, 6), &o), BG_ETIMEDOUT, "after 1000 us");
  ck_assert_uint_eq(f->delay_total, 1000);
  /* a command timeout beyond ops->timeout_ms is capped to it */
  f->delay_total = 0;
  const uint32_t poll_long[] = {2, 0x40, 0x80000000u, 0x80000000u, 0xffffffffu, 0};
  FAILS(bg_nv_gsp_sequencer_run(p, seq_build(p, poll_long, 6), &o), BG_ETIMEDOUT, "after 1000 us");
  ck_assert_uint_eq(f->delay_total, 1000);
  /* unknown opcode, SAVE out of range, a command past cmdIndex, cmdIndex past the payload */
  const uint32_t unk[] = {0, 0x10, 1, 9};
  FAILS(bg_nv_gsp_sequencer_run(p, seq_build(p, unk, 4), &o), BG_EINVAL, "dword 3: unknown opcode 9");
  const uint32_t save[] = {4, 0x30, 8};
  FAILS(bg_nv_gsp_sequencer_run(p, seq_build(p, save, 3), &o), BG_EINVAL, "index 8");
  const uint32_t trunc[] = {0, 0x10, 1, 2, 0x40, 0x80000000u};
  FAILS(bg_nv_gsp_sequencer_run(p, seq_build(p, trunc, 6), &o), BG_EINVAL, "runs past cmdIndex 6");
  size_t n = seq_build(p, unk, 4);
  w32(p + 4, 5);
  FAILS(bg_nv_gsp_sequencer_run(p, n, &o), BG_EINVAL, "cmdIndex 5");
  FAILS(bg_nv_gsp_sequencer_run(p, 39, &o), BG_EINVAL, "39 bytes");
  /* a core operation that fails, and one with no handler */
  const uint32_t res[] = {8};
  o.core_resume = fk_resume_fails;
  FAILS(bg_nv_gsp_sequencer_run(p, seq_build(p, res, 1), &o), BG_EHANG, "CORE_RESUME");
  o.core_resume = NULL;
  FAILS(bg_nv_gsp_sequencer_run(p, seq_build(p, res, 1), &o), BG_EINVAL, "no handler");
  /* empty sequence */
  OK(bg_nv_gsp_sequencer_run(p, seq_build(p, res, 0), &o));
  fake_free(f);
}
END_TEST

/* ---- boot structures ---- */
START_TEST(radix3_tables) {
  /* pages before the image: n3 image pages, n2 = ceil(n3/512), n1 = ceil(n2/512), n0 = ceil(n1/512) */
  ck_assert_uint_eq(bg_nv_radix3_table_pages(1), 3);
  ck_assert_uint_eq(bg_nv_radix3_table_pages(512ull * 4096), 3);
  ck_assert_uint_eq(bg_nv_radix3_table_pages(512ull * 4096 + 1), 4);
  ck_assert_uint_eq(bg_nv_radix3_table_pages(512ull * 512 * 4096), 1 + 1 + 512);
  ck_assert_uint_eq(bg_nv_radix3_table_pages(512ull * 512 * 4096 + 1), 1 + 2 + 513);
  /* build for 513 image pages (the first level-2 boundary) */
  size_t len = 513 * 4096 - 100, tp = 4, np = tp + 513;
  uint8_t *img = malloc(len), *buf = malloc(tp * 4096 + len);
  uint64_t *bus = malloc(np * 8);
  ck_assert_ptr_nonnull(img);
  ck_assert_ptr_nonnull(buf);
  ck_assert_ptr_nonnull(bus);
  for (size_t i = 0; i < len; i++) img[i] = (uint8_t)(i * 31);
  for (size_t i = 0; i < np; i++) bus[i] = 0x100000000ull + (np - i) * 0x2000ull; /* not in order */
  OK(bg_nv_radix3_build(buf, tp * 4096 + len, bus, np, img, len));
  ck_assert_uint_eq(r64(buf), bus[1]);           /* level 0 -> the level-1 page */
  ck_assert_uint_eq(r64(buf + 8), 0);
  ck_assert_uint_eq(r64(buf + 4096), bus[2]);    /* level 1 -> the 2 level-2 pages */
  ck_assert_uint_eq(r64(buf + 4096 + 8), bus[3]);
  ck_assert_uint_eq(r64(buf + 4096 + 16), 0);
  for (size_t j = 0; j < 513; j++) ck_assert_uint_eq(r64(buf + 2 * 4096 + 8 * j), bus[4 + j]); /* level 2 -> image */
  ck_assert_uint_eq(r64(buf + 2 * 4096 + 8 * 513), 0);
  ck_assert_mem_eq(buf + tp * 4096, img, len);
  FAILS(bg_nv_radix3_build(buf, tp * 4096 + len, bus, np - 1, img, len), BG_EINVAL, "516 bus addresses");
  FAILS(bg_nv_radix3_build(buf, tp * 4096 + len - 1, bus, np, img, len), BG_EINVAL, "buffer of");
  free(img);
  free(buf);
  free(bus);
}
END_TEST

static const bg_nv_chip *chip(const char *name) {
  const bg_nv_chip *c = bg_nv_chip_by_name(name);
  ck_assert_ptr_nonnull(c);
  return c;
}

START_TEST(wpr_meta_layout) {
  uint8_t b[256];
  const uint64_t M = 1ull << 20;
  bg_nv_wpr_in in = {.chip = chip("GA102"), .vram_size = 24576 * M, .radix3_bus = 0x11000, .radix3_image_size = 0x2a00000,
                     .radix3_total_size = 0x2a03000 + 0x3000, .bootloader_bus = 0x22000, .bootloader_size = 0x1d800,
                     .bl_code_offset = 0x100, .bl_data_offset = 0x900, .bl_manifest_offset = 0xa00,
                     .signature_bus = 0x33000};
  OK(bg_nv_wpr_meta(b, sizeof b, &in));
  ck_assert_uint_eq(r64(b + 0), 0xdc3aae21371a60b3ull);
  ck_assert_uint_eq(r64(b + 8), 1);
  ck_assert_uint_eq(r64(b + 16), 0x11000);
  ck_assert_uint_eq(r64(b + 24), 0x2a00000);
  ck_assert_uint_eq(r64(b + 32), 0x22000);
  ck_assert_uint_eq(r64(b + 40), 0x1d800);
  ck_assert_uint_eq(r64(b + 48), 0x100);
  ck_assert_uint_eq(r64(b + 56), 0x900);
  ck_assert_uint_eq(r64(b + 64), 0xa00);
  ck_assert_uint_eq(r64(b + 72), 0x33000);
  ck_assert_uint_eq(r64(b + 80), 0x1000);
  /* 24 GiB = 0x600000000: vga 0x5fff00000, frts 0x5ffe00000 (vram - 2 MiB), boot 0x5ffe00000 - 0x1d800 = 0x5ffde2800,
   * fw = round_down(0x5ffde2800 - 0x2a06000, 64K) = 0x5fd3d0000, heap = round_down(fw - 0x8100000, 1M) = 0x5f5200000,
   * wpr = round_down(heap - 0x1000, 1M) = 0x5f5100000, nonwpr = 0x5f5000000 */
  ck_assert_uint_eq(r64(b + 184), 0x5fff00000ull); /* vgaWorkspaceOffset */
  ck_assert_uint_eq(r64(b + 192), M);
  ck_assert_uint_eq(r64(b + 168), 0x5fff00000ull); /* gspFwWprEnd */
  ck_assert_uint_eq(r64(b + 152), 0x5ffe00000ull); /* frtsOffset */
  ck_assert_uint_eq(r64(b + 160), M);
  ck_assert_uint_eq(r64(b + 144), 0x5ffde2800ull); /* bootBinOffset */
  ck_assert_uint_eq(r64(b + 136), 0x5fd3d0000ull); /* gspFwOffset */
  ck_assert_uint_eq(r64(b + 120), 0x5f5200000ull); /* gspFwHeapOffset */
  ck_assert_uint_eq(r64(b + 128), 0x8100000ull);
  ck_assert_uint_eq(r64(b + 112), 0x5f5100000ull); /* gspFwWprStart */
  ck_assert_uint_eq(r64(b + 96), 0x5f5000000ull);  /* nonWprHeapOffset */
  ck_assert_uint_eq(r64(b + 104), M);
  ck_assert_uint_eq(r64(b + 88), 0x5f5000000ull);  /* gspFwRsvdStart */
  ck_assert_uint_eq(r64(b + 176), 24576 * M);      /* fbSize */
  ck_assert_uint_eq(r32(b + 244), 0);
  /* other sizes: the invariants */
  const uint64_t sizes[] = {8192 * M, 12288 * M + 7 * M, 16376 * M};
  for (int i = 0; i < 3; i++) {
    in.vram_size = sizes[i];
    in.chip = chip(i == 1 ? "AD102" : "GA102");
    OK(bg_nv_wpr_meta(b, sizeof b, &in));
    ck_assert_uint_eq(r64(b + 152), sizes[i] - 2 * M);
    ck_assert_uint_eq(r64(b + 144) + in.bootloader_size, r64(b + 152));
    ck_assert_uint_eq(r64(b + 136) % 0x10000, 0);
    ck_assert_uint_le(r64(b + 136) + in.radix3_total_size, r64(b + 144));
    ck_assert_uint_eq(r64(b + 120) % M, 0);
    ck_assert_uint_le(r64(b + 120) + 0x8100000, r64(b + 136));
    ck_assert_uint_eq(r64(b + 112) % M, 0);
    ck_assert_uint_le(r64(b + 112) + 0x1000, r64(b + 120));
    ck_assert_uint_eq(r64(b + 96) % M, 0);
    ck_assert_uint_le(r64(b + 96) + M, r64(b + 112));
  }
  in.vram_size = 100 * M;
  FAILS(bg_nv_wpr_meta(b, sizeof b, &in), BG_EINVAL, "too small");
  in.vram_size = 8192 * M + 4096;
  FAILS(bg_nv_wpr_meta(b, sizeof b, &in), BG_EINVAL, "multiple of 1 MiB");
  /* FSP chips: sizes only (vga 0x20000, pmuReserved 0x1820000, nonWprHeap 0x220000, heap 0x8700000, frts 1 MiB) */
  const char *fsp[] = {"GH100", "GB202"};
  for (int i = 0; i < 2; i++) {
    in.chip = chip(fsp[i]);
    in.vram_size = 0;
    OK(bg_nv_wpr_meta(b, sizeof b, &in));
    ck_assert_uint_eq(r64(b + 0), 0xdc3aae21371a60b3ull);
    ck_assert_uint_eq(r64(b + 192), 0x20000);
    ck_assert_uint_eq(r32(b + 244), 0x1820000);
    ck_assert_uint_eq(r64(b + 104), 0x220000);
    ck_assert_uint_eq(r64(b + 128), 0x8700000);
    ck_assert_uint_eq(r64(b + 160), M);
    const int offs[] = {88, 96, 112, 120, 136, 144, 152, 168, 176, 184};
    for (int k = 0; k < 10; k++) ck_assert_uint_eq(r64(b + offs[k]), 0);
  }
}
END_TEST

START_TEST(fsp_structures) {
  uint8_t b[0x400];
  /* GSP_FMC_BOOT_PARAMS: bootGspRmParams @8 {target 1, gspRmDescSize 256, gspRmDescOffset @8, bIsGspRmBoot @28},
   * gspRmParams @40 {target 1, bootArgsOffset @8} */
  memset(b, 0xee, sizeof b);
  OK(bg_nv_fmc_boot_params(b, 80, 0x1234567000ull, 0x89abc000ull));
  ck_assert_uint_eq(r32(b + 8), 1);
  ck_assert_uint_eq(r32(b + 12), 256);
  ck_assert_uint_eq(r64(b + 16), 0x1234567000ull);
  ck_assert_uint_eq(b[36], 1);
  ck_assert_uint_eq(r32(b + 40), 1);
  ck_assert_uint_eq(r64(b + 48), 0x89abc000ull);
  ck_assert_uint_eq(r64(b + 0), 0);
  ck_assert_uint_eq(b[80], 0xee);
  FAILS(bg_nv_fmc_boot_params(b, 79, 0, 0), BG_EINVAL, "80");
  /* NVDM_PAYLOAD_COT: 860 bytes */
  bg_nv_fmc fmc;
  memset(&fmc, 0, sizeof fmc);
  memset(fmc.hash, 0x11, sizeof fmc.hash);
  memset(fmc.public_key, 0x22, sizeof fmc.public_key);
  memset(fmc.signature, 0x33, sizeof fmc.signature);
  uint8_t cot[0x400] = {0};
  OK(bg_nv_cot_payload(cot, 860, 2, &fmc, 0xf000000ull, 0x1c00000, 0x7777000ull));
  ck_assert_uint_eq(r16(cot), 2);
  ck_assert_uint_eq(r16(cot + 2), 860);
  ck_assert_uint_eq(r64(cot + 4), 0xf000000ull);
  ck_assert_uint_eq(r64(cot + 24), 0x1c00000);
  ck_assert_uint_eq(r32(cot + 32), 0x100000);
  ck_assert_uint_eq(cot[36], 0x11);
  ck_assert_uint_eq(cot[83], 0x11);
  ck_assert_uint_eq(cot[84], 0x22);
  ck_assert_uint_eq(cot[467], 0x22);
  ck_assert_uint_eq(cot[468], 0x33);
  ck_assert_uint_eq(cot[851], 0x33);
  ck_assert_uint_eq(r64(cot + 852), 0x7777000ull);
  /* GH100's version 1; anything else refused */
  uint8_t cot1[0x400] = {0};
  OK(bg_nv_cot_payload(cot1, 860, 1, &fmc, 0xf000000ull, 0x1c00000, 0x7777000ull));
  ck_assert_uint_eq(r16(cot1), 1);
  ck_assert_int_eq(memcmp(cot1 + 2, cot + 2, 858), 0);
  ck_assert_int_eq(bg_nv_cot_payload(cot1, 860, 3, &fmc, 0, 0x1c00000, 0), -BG_EINVAL);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "version 3, expected 1 (GH100) or 2 (GB20x)"));
  /* the message: MCTP SOM|EOM, NVDM header 0x7e | 0x10de << 8 | type << 24, payload, pad to the next dword only
   * (tinygrad tinygrad/runtime/support/nv/ip.py kfsp_send_msg: tinygrad adds 4 bytes to an aligned payload) */
  size_t len = 0;
  memset(b, 0xee, sizeof b);
  OK(bg_nv_fsp_message(b, sizeof b, 0x14, cot, 860, &len));
  ck_assert_uint_eq(len, 8 + 860);
  ck_assert_uint_eq(r32(b), 0xc0000000u);
  ck_assert_uint_eq(r32(b + 4), 0x1410de7eu);
  ck_assert_mem_eq(b + 8, cot, 860);
  ck_assert_uint_eq(b[868], 0xee);
  memset(b, 0xee, sizeof b);
  OK(bg_nv_fsp_message(b, sizeof b, 0x14, cot, 861, &len));
  ck_assert_uint_eq(len, 872);
  ck_assert_uint_eq(b[869], 0);
  ck_assert_uint_eq(b[871], 0);
  ck_assert_uint_eq(b[872], 0xee);
  OK(bg_nv_fsp_message(b, sizeof b, 0x14, cot, 1, &len));
  ck_assert_uint_eq(len, 12);
  FAILS(bg_nv_fsp_message(b, sizeof b, 0x14, cot, 0x3f8, &len), BG_EINVAL, "less than 0x400");
  FAILS(bg_nv_fsp_message(b, 100, 0x14, cot, 860, &len), BG_EINVAL, "buffer of 100");
}
END_TEST

START_TEST(boot_args) {
  uint8_t b[0x1000];
  /* LibOS regions: id8 = the name big-endian, pa, size, kind 1, loc 1 */
  OK(bg_nv_libos_args(b, sizeof b, 0x50000000ull, 0x60000000ull));
  ck_assert_uint_eq(r64(b + 0), 0x4c4f47494e4954ull); /* "LOGINIT" */
  ck_assert_uint_eq(r64(b + 8), 0x50000000ull);
  ck_assert_uint_eq(r64(b + 16), 0x10000);
  ck_assert_uint_eq(b[24], 1);
  ck_assert_uint_eq(b[25], 1);
  ck_assert_uint_eq(r64(b + 64), 0x4c4f47524dull); /* "LOGRM" */
  ck_assert_uint_eq(r64(b + 64 + 8), 0x50020000ull);
  ck_assert_uint_eq(r64(b + 128 + 8), 0x50040000ull); /* LOGKRNL */
  ck_assert_uint_eq(r64(b + 160), 0x524d41524753ull); /* "RMARGS" */
  ck_assert_uint_eq(r64(b + 168), 0x60000000ull);
  ck_assert_uint_eq(r64(b + 176), 0x1000);
  ck_assert_uint_eq(r64(b + 192), 0);
  /* GspSystemInfo */
  bg_nv_sysinfo_in si = {.chip = chip("GB202"), .bar0_bus = 0xf0000000ull, .bar1_bus = 0x38000000000ull,
                         .bar3_bus = 0xf2000000ull, .bus = 0x41, .dev = 3, .fn = 1, .cfg_id = 0x2b8510de,
                         .cfg_subsys = 0x20551458, .revision = 0xa1};
  OK(bg_nv_gsp_system_info(b, sizeof b, &si));
  ck_assert_uint_eq(r64(b + 0), 0xf0000000ull);
  ck_assert_uint_eq(r64(b + 8), 0x38000000000ull);
  ck_assert_uint_eq(r64(b + 16), 0xf2000000ull);
  ck_assert_uint_eq(r64(b + 32), 0x41 << 8 | 3 << 3 | 1);
  ck_assert_uint_eq(r64(b + 72), 0x7ffffffff000ull);
  ck_assert_uint_eq(r32(b + 80), 0x92000);
  ck_assert_uint_eq(r32(b + 84), 0x1000);
  ck_assert_uint_eq(r32(b + 88), 0x2b8510de);
  ck_assert_uint_eq(r32(b + 92), 0x20551458);
  ck_assert_uint_eq(r32(b + 96), 0xa1);
  ck_assert_uint_eq(b[840], 1);
  si.chip = chip("GA102");
  OK(bg_nv_gsp_system_info(b, sizeof b, &si));
  ck_assert_uint_eq(r32(b + 80), 0x88000);
  si.dev = 32;
  FAILS(bg_nv_gsp_system_info(b, sizeof b, &si), BG_EINVAL, "device 32");
  /* registry: {size, numEntries} + 16-byte entries + names; nameOffset from the table start */
  size_t len = 0;
  OK(bg_nv_gsp_registry(b, sizeof b, &len));
  ck_assert_uint_eq(len, 8 + 32 + 22 + 20);
  ck_assert_uint_eq(r32(b), len);
  ck_assert_uint_eq(r32(b + 4), 2);
  ck_assert_uint_eq(r32(b + 8), 40);
  ck_assert_uint_eq(b[12], 1);
  ck_assert_uint_eq(r32(b + 16), 1);
  ck_assert_uint_eq(r32(b + 20), 4);
  ck_assert_str_eq((const char *)b + 40, "RMForcePcieConfigSave");
  ck_assert_uint_eq(r32(b + 24), 62);
  ck_assert_str_eq((const char *)b + 62, "RMSecBusResetEnable");
  FAILS(bg_nv_gsp_registry(b, 50, &len), BG_EINVAL, "needs 82");
  ck_assert_str_eq(bg_nv_rpc_name(103), "GSP_RM_ALLOC");
  ck_assert_str_eq(bg_nv_rpc_name(0x1002), "GSP_RUN_CPU_SEQUENCER");
  ck_assert_str_eq(bg_nv_rpc_name(5), "unknown");
}
END_TEST

int main(void) {
  Suite *s = suite_create("nv-gsp");
  TCase *tc = tcase_create("gsp");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, queue_init);
  tcase_add_test(tc, send_records);
  tcase_add_test(tc, send_wraps_and_fills);
  tcase_add_test(tc, recv_messages);
  tcase_add_test(tc, recv_advances_by_elem_count);
  tcase_add_test(tc, recv_refuses_bad_messages);
  tcase_add_test(tc, rpc_rm_calls);
  tcase_add_test(tc, rpc_events_and_timeout);
  tcase_add_test(tc, rpc_timeout_from_env);
  tcase_add_test(tc, sequencer_opcodes);
  tcase_add_test(tc, radix3_tables);
  tcase_add_test(tc, wpr_meta_layout);
  tcase_add_test(tc, fsp_structures);
  tcase_add_test(tc, boot_args);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
