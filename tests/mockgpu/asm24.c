/* tests/mockgpu/asm24.c: the USB side of the emulated ASM24 bridge (asm24.h): the transport,
 * vendor requests (tinygrad tinygrad/runtime/support/usb.py ASM24Controller), XDATA and its windows, the SRAM engine,
 * streaming TLPs, faults. The PCIe side is asm24_fabric.c. Decoding is written from the
 * reference, independently of usb/asm24_proto.c, so the two check each other. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asm24_internal.h"
#include "baregpu/error.h"

static int next_id;

int m24_fail(mock_asm24 *m, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  m->nfail++;
  size_t used = strlen(m->failures);
  if (used + 2 < sizeof(m->failures)) snprintf(m->failures + used, sizeof(m->failures) - used, "%s\n", msg);
  fprintf(stderr, "mock_asm24: %s\n", msg);
  return -BG_EIO;
}

unsigned mock_asm24_nfail(const mock_asm24 *m) { return m->nfail; }
const char *mock_asm24_failures(const mock_asm24 *m) { return m->failures; }
void mock_asm24_clear_failures(mock_asm24 *m) {
  m->nfail = 0;
  m->failures[0] = 0;
  m->lost = false;
}

/* An ordering violation: the real firmware would take a request as data or data as a request (or re-arm under a
 * stream whose data then lands at the new address); from here on nothing it does can be trusted, so every later
 * transfer fails as from a device that went away, and the run fails loudly instead of a retry hiding it. */
static int m24_lose(mock_asm24 *m, int r) {
  m->lost = true;
  fprintf(stderr, "mock_asm24: the emulated firmware is out of step (seed %llu, firmware mode %s): every later "
          "transfer fails until the failures are cleared\n", (unsigned long long)m->seed,
          m->fw_mode == MOCK_ASM24_FW_HOLD ? "hold" : "strict");
  return r;
}
const mock_asm24_stats *mock_asm24_get_stats(const mock_asm24 *m) { return &m->st; }
void mock_asm24_reset_stats(mock_asm24 *m) { memset(&m->st, 0, sizeof(m->st)); }
uint8_t *mock_asm24_sram(mock_asm24 *m) { return m->sram; }
uint8_t *mock_asm24_xdata(mock_asm24 *m) { return m->xdata; }
bool mock_asm24_link_up(const mock_asm24 *m) { return m->xdata[0xB450] == 0x78; }

/* ---------------- windows (tinygrad tinygrad/runtime/support/usb.py ASM24Controller; tinygrad test/mockgpu/usb.py) ---------------- */

typedef struct win {
  uint16_t xdata;
  uint64_t sys;
  uint32_t size;
  size_t field;      /* offset of the backing array in mock_asm24 */
} win;

static const win WINS[] = {
  {0xF000, 0x200000, 0x80000, offsetof(mock_asm24, sram)},
  {0xA000, 0x820000, 0x1000, offsetof(mock_asm24, sysbuf)},
  {0xB800, 0x822000, 0x1000, offsetof(mock_asm24, cqbuf)},
  {0xB000, 0x800000, 0x200, offsetof(mock_asm24, win800)},
};

/* One XDATA byte: a window's memory, else the register file. */
static uint8_t *xbyte(mock_asm24 *m, uint32_t a) {
  for (size_t i = 0; i < sizeof(WINS) / sizeof(WINS[0]); i++)
    if (a >= WINS[i].xdata && a - WINS[i].xdata < WINS[i].size)
      return (uint8_t *)m + WINS[i].field + (a - WINS[i].xdata);
  return &m->xdata[a & 0xffff];
}

uint8_t *mock_asm24_sys(mock_asm24 *m, uint64_t sys, size_t *avail) {
  for (size_t i = 0; i < sizeof(WINS) / sizeof(WINS[0]); i++)
    if (sys >= WINS[i].sys && sys - WINS[i].sys < WINS[i].size) {
      size_t left = (size_t)(WINS[i].size - (sys - WINS[i].sys));
      if (avail) *avail = *avail < left ? *avail : left;
      return (uint8_t *)m + WINS[i].field + (sys - WINS[i].sys);
    }
  return NULL;
}

static uint8_t *dma_target(void *user, uint64_t bus, size_t *avail) { return mock_asm24_sys(user, bus, avail); }

/* ---------------- faults ---------------- */

void mock_asm24_inject(mock_asm24 *m, mock_asm24_fault f, unsigned after, unsigned count) {
  if (m->nfaults < M24_MAX_FAULTS) {
    m->faults[m->nfaults].kind = f;
    m->faults[m->nfaults].skip = after;
    m->faults[m->nfaults].left = count;
    m->nfaults++;
  }
}

void mock_asm24_clear_faults(mock_asm24 *m) {
  m->nfaults = 0;
  m->gone = false;
  atomic_store(&m->stalls_left, 0);
}

void mock_asm24_inject_stall(mock_asm24 *m, unsigned count) { atomic_fetch_add(&m->stalls_left, count); }
unsigned mock_asm24_stalls_pending(const mock_asm24 *m) { return atomic_load(&m->stalls_left); }

static bool is_bulk(const bg_usb_xfer *x) { return x->kind == BG_USB_BULK_OUT || x->kind == BG_USB_BULK_IN; }

static bool applies(mock_asm24_fault f, const bg_usb_xfer *x) {
  switch (f) {
  case MOCK_ASM24_SHORT: case MOCK_ASM24_HALT: case MOCK_ASM24_HALT_AFTER: case MOCK_ASM24_HANG:
  case MOCK_ASM24_HANG_AFTER: return is_bulk(x);
  case MOCK_ASM24_CPL_ERROR: return x->kind == BG_USB_CTRL_IN && x->req == 0xF0;
  default: return true;
  }
}

/* One of mock_asm24_inject_stall's stalls for a bulk transfer, in turn, or -1. */
static int injected_stall(mock_asm24 *m, const bg_usb_xfer *x) {
  static const mock_asm24_fault turn[4] = {MOCK_ASM24_HALT, MOCK_ASM24_HANG_AFTER, MOCK_ASM24_HALT_AFTER,
                                           MOCK_ASM24_HANG};
  if (!is_bulk(x)) return -1;
  unsigned left = atomic_load(&m->stalls_left);
  while (left && !atomic_compare_exchange_weak(&m->stalls_left, &left, left - 1)) {}
  if (!left) return -1;
  m->st.faults_fired++;
  return (int)turn[m->stall_turn++ % 4];
}

/* The fault this transfer meets, or -1. */
static int fault_for(mock_asm24 *m, const bg_usb_xfer *x) {
  int hit = -1;
  for (unsigned i = 0; i < m->nfaults; i++) {
    if (!m->faults[i].left) continue;
    if (m->faults[i].skip) {
      m->faults[i].skip--;
      continue;
    }
    if (hit < 0 && applies(m->faults[i].kind, x)) {
      m->faults[i].left--;
      hit = (int)m->faults[i].kind;
    }
  }
  if (hit >= 0) m->st.faults_fired++;
  return hit;
}

/* ---------------- requests ---------------- */

static const char *pending_name(m24_pending p) {
  static const char *const n[] = {"nothing", "PCIe stream write", "PCIe stream read", "SRAM write", "SRAM read"};
  return n[p];
}

static int arm(mock_asm24 *m, m24_pending what, uint64_t addr, size_t len) {
  m->pending = what;
  m->pend_addr = addr;
  m->pend_len = len;
  return 0;
}

static size_t div_up(size_t a, size_t b) { return (a + b - 1) / b; }

static int req_sram(mock_asm24 *m, const bg_usb_xfer *x) {
  if (x->len) return m24_fail(m, "0xF2 with %zu data bytes (expected none)", x->len);
  if (x->val & 0x8000) {
    size_t len = (size_t)(x->val & 0x7FFF) * 512;
    if (!len || len > sizeof(m->sram) || (x->idx & 0xFF) != 0 || (x->idx >> 8) != div_up(len, 0x4000))
      return m24_fail(m, "0xF2 read arm wValue 0x%04x wIndex 0x%04x: expected 1..1024 sectors from slot 0 with "
                      "wIndex = ceil(len/16K) << 8", x->val, x->idx);
    m->st.sram_reads++;
    return arm(m, M24_SRAM_R, 0, len);
  }
  size_t len = (size_t)x->val * 512, slot = x->idx & 0xFF;
  if (!len || slot * 0x4000 + len > sizeof(m->sram) || (x->idx >> 8) != div_up(len, 0x4000))
    return m24_fail(m, "0xF2 write wValue 0x%04x wIndex 0x%04x: %zu bytes at slot %zu do not fit the 512 KiB SRAM or "
                    "the slot count is not ceil(len/16K)", x->val, x->idx, len, slot);
  m->st.sram_writes++;
  return arm(m, M24_SRAM_W, slot * 0x4000, len);
}

static int req_tlp_out(mock_asm24 *m, const bg_usb_xfer *x) {
  if (x->len != 12) return m24_fail(m, "0xF0 OUT with %zu data bytes (expected 12)", x->len);
  uint32_t lo, hi, value;
  memcpy(&lo, x->buf, 4);
  memcpy(&hi, (uint8_t *)x->buf + 4, 4);
  memcpy(&value, (uint8_t *)x->buf + 8, 4);
  uint64_t addr = (uint64_t)hi << 32 | lo;
  uint8_t fmt = (uint8_t)(x->val & 0xFF), be = (uint8_t)(x->val >> 8);
  switch (x->idx) {
  case 0:
    m24_tlp(m, fmt, be, addr, value, m->cpl);
    /* Posted requests (MWr, Msg) leave no completion to read. */
    m->cpl_valid = !((fmt & 0xDF) == 0x40 || (fmt & 0xB8) == 0x30);
    return 0;
  case 1:
  case 2: {
    bool w = x->idx == 1;
    if (fmt != (w ? 0x60 : 0x20) || be != 0xF || (addr & 3) || !value)
      return m24_fail(m, "0xF0 mode %u: fmt_type 0x%02x byte_en 0x%x at 0x%" PRIx64 " count %u (expected %s, 0xF, "
                      "dword-aligned, count > 0)", x->idx, fmt, be, addr, value, w ? "0x60" : "0x20");
    if (!mock_asm24_link_up(m)) return m24_fail(m, "0xF0 mode %u with the PCIe link down", x->idx);
    int bar;
    uint64_t off;
    if (m24_route_mem(m, addr, (size_t)value * 4, &bar, &off) < 0) return -BG_EIO;
    w ? m->st.stream_writes++ : m->st.stream_reads++;
    return arm(m, w ? M24_STREAM_W : M24_STREAM_R, addr, (size_t)value * 4);
  }
  default: return m24_fail(m, "0xF0 mode %u is not a mode (0, 1, 2)", x->idx);
  }
}

static int ctrl_out(mock_asm24 *m, const bg_usb_xfer *x) {
  if (m->pending != M24_NONE) {
    int r = m24_fail(m, "request 0x%02X while a %s of %zu bytes is still armed", x->req, pending_name(m->pending),
                     m->pend_len);
    m->pending = M24_NONE;
    return m24_lose(m, r);
  }
  switch (x->req) {
  case 0xE5:
    if (x->len || x->idx > 0xFF) return m24_fail(m, "0xE5 wIndex 0x%04x, %zu data bytes: one byte in wIndex, no data",
                                                 x->idx, x->len);
    *xbyte(m, x->val) = (uint8_t)x->idx;
    return 0;
  case 0xF3:
    if (x->len || x->val > 1) return m24_fail(m, "0xF3 wValue %u: 0 or 1, no data", x->val);
    m->xdata[0xB450] = x->val ? 0x78 : 0;
    return 0;
  case 0xF2: return req_sram(m, x);
  case 0xF0: return req_tlp_out(m, x);
  default: return m24_fail(m, "unknown vendor request 0x%02X OUT", x->req);
  }
}

static int ctrl_in(mock_asm24 *m, bg_usb_xfer *x) {
  if (x->req == 0xE4) {
    if (!x->len || x->len > 255 || x->idx)
      return m24_fail(m, "0xE4 of %zu bytes (1..255), wIndex %u (0)", x->len, x->idx);
    for (size_t i = 0; i < x->len; i++) ((uint8_t *)x->buf)[i] = *xbyte(m, (uint32_t)x->val + (uint32_t)i);
    x->actual = x->len;
    return 0;
  }
  if (x->req == 0xF0) {
    if (x->len != 8 || !m->cpl_valid)
      return m24_fail(m, "0xF0 IN of %zu bytes with %s", x->len, m->cpl_valid ? "8 expected" : "no completion pending");
    memcpy(x->buf, m->cpl, 8);
    m->cpl_valid = false;
    x->actual = 8;
    return 0;
  }
  return m24_fail(m, "unknown vendor request 0x%02X IN", x->req);
}

/* A bulk transfer of n bytes (n <= pend_len checked by the caller) against what was armed. */
static int bulk_data(mock_asm24 *m, uint8_t *buf, size_t n, bool out) {
  switch (m->pending) {
  case M24_STREAM_W: return out ? m24_mem_stream(m, m->pend_addr, buf, n & ~(size_t)3, true) : -BG_EIO;
  case M24_STREAM_R: return out ? -BG_EIO : m24_mem_stream(m, m->pend_addr, buf, n, false);
  case M24_SRAM_W: if (out) memcpy(m->sram + m->pend_addr, buf, n); return out ? 0 : -BG_EIO;
  case M24_SRAM_R: if (!out) memcpy(buf, m->sram + m->pend_addr, n); return out ? -BG_EIO : 0;
  default: return -BG_EIO;
  }
}

static int do_bulk(mock_asm24 *m, bg_usb_xfer *x, bool short_fault) {
  bool out = x->kind == BG_USB_BULK_OUT;
  bool dir_ok = out ? (m->pending == M24_STREAM_W || m->pending == M24_SRAM_W)
                    : (m->pending == M24_STREAM_R || m->pending == M24_SRAM_R);
  if (!dir_ok || x->len != m->pend_len) {
    if (m->pending == M24_NONE) m->st.early_bulk++;
    int r = m->pending == M24_NONE
                ? m24_fail(m, "bulk %s of %zu bytes while nothing is armed (data before its arm: the firmware rejects "
                           "it and stalls)", out ? "OUT" : "IN", x->len)
                : m24_fail(m, "bulk %s of %zu bytes while %s of %zu bytes is armed", out ? "OUT" : "IN", x->len,
                           pending_name(m->pending), m->pend_len);
    m->pending = M24_NONE;
    x->halted = true;
    m->halted[!out] = true;
    return m24_lose(m, r);
  }
  size_t n = short_fault ? x->len / 2 : x->len;
  int r = bulk_data(m, x->buf, n, out);
  x->actual = r == 0 ? n : 0;
  m->pending = M24_NONE;
  return r < 0 ? r : short_fault ? -BG_EIO : 0;
}

static void process(mock_asm24 *m, bg_usb_xfer *x) {
  m->st.xfers[x->kind]++;
  m->st.bytes[x->kind] += x->len;
  x->actual = 0;
  x->status = 0;
  x->halted = false;
  if (m->lost) {
    x->status = -BG_ENODEV;
    return;
  }
  int f = m->gone ? (int)MOCK_ASM24_GONE : fault_for(m, x);
  if (f == MOCK_ASM24_GONE) {
    m->gone = true;
    x->status = -BG_ENODEV;
    return;
  }
  if (is_bulk(x) && m->halted[x->kind == BG_USB_BULK_IN]) {
    /* a halted endpoint answers STALL to everything until the host clears it; the armed command waits */
    x->status = -BG_EIO;
    x->halted = true;
    return;
  }
  if (f < 0) f = injected_stall(m, x);
  if (f >= MOCK_ASM24_HALT) {
    bool after = f == MOCK_ASM24_HALT_AFTER || f == MOCK_ASM24_HANG_AFTER, halt = f <= MOCK_ASM24_HALT_AFTER;
    m->st.stalls[f - MOCK_ASM24_HALT]++;
    /* after: the command ran (and disarmed); the host sees only the failure, and an IN's buffer is not data */
    if (after && do_bulk(m, x, false) == 0 && x->kind == BG_USB_BULK_IN) memset(x->buf, 0xA5, x->len);
    x->actual = 0;
    x->status = halt ? -BG_EIO : -BG_ETIMEDOUT;
    x->halted = halt;
    if (halt) m->halted[x->kind == BG_USB_BULK_IN] = true;
    return;
  }
  if (f == MOCK_ASM24_STALL || f == MOCK_ASM24_TIMEOUT) {
    if (x->kind == BG_USB_BULK_OUT || x->kind == BG_USB_BULK_IN) m->pending = M24_NONE;
    x->status = f == MOCK_ASM24_STALL ? -BG_EIO : -BG_ETIMEDOUT;
    return;
  }
  switch (x->kind) {
  case BG_USB_CTRL_OUT: x->status = ctrl_out(m, x); x->actual = x->status ? 0 : x->len; break;
  case BG_USB_CTRL_IN:
    x->status = ctrl_in(m, x);
    if (x->status == 0 && f == MOCK_ASM24_CPL_ERROR) ((uint8_t *)x->buf)[7] = 1;  /* firmware transport error */
    break;
  default: x->status = do_bulk(m, x, f == MOCK_ASM24_SHORT); break;
  }
}

/* ---------------- the host controller: three endpoint queues ---------------- */

void mock_asm24_set_seed(mock_asm24 *m, uint64_t seed) {
  m->seed = seed;
  /* splitmix64 of the seed: nearby seeds give unrelated sequences */
  uint64_t z = seed + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  m->rng = (z ^ (z >> 31)) | 1u;
}
uint64_t mock_asm24_get_seed(const mock_asm24 *m) { return m->seed; }
void mock_asm24_set_fw_mode(mock_asm24 *m, mock_asm24_fw_mode mode) { m->fw_mode = mode; }

static uint64_t next_rand(mock_asm24 *m) {  /* xorshift64* */
  m->rng ^= m->rng >> 12;
  m->rng ^= m->rng << 25;
  m->rng ^= m->rng >> 27;
  return m->rng * 0x2545F4914F6CDD1Dull;
}

static unsigned ep_of(const bg_usb_xfer *x) {
  return x->kind == BG_USB_BULK_OUT ? 1u : x->kind == BG_USB_BULK_IN ? 2u : 0u;
}

static int q_push(m24_queue *q, m24_slot s) {
  if (q->n == q->cap) {
    size_t cap = q->cap ? q->cap * 2 : 64;
    m24_slot *ns = malloc(cap * sizeof(*ns));
    if (!ns) return -BG_ENOMEM;
    for (size_t i = 0; i < q->n; i++) ns[i] = q->s[(q->head + i) % q->cap];
    free(q->s);
    q->s = ns;
    q->cap = cap;
    q->head = 0;
  }
  q->s[(q->head + q->n++) % q->cap] = s;
  return 0;
}

static m24_slot *q_at(m24_queue *q, size_t i) { return &q->s[(q->head + i) % q->cap]; }

/* Remove entry i, keeping the order of the rest. */
static m24_slot q_take(m24_queue *q, size_t i) {
  m24_slot s = *q_at(q, i);
  for (size_t k = i; k > 0; k--) *q_at(q, k) = *q_at(q, k - 1);
  q->head = (q->head + 1) % q->cap;
  q->n--;
  return s;
}

static bool armed_for(const mock_asm24 *m, const bg_usb_xfer *x) {
  return x->kind == BG_USB_BULK_OUT ? (m->pending == M24_STREAM_W || m->pending == M24_SRAM_W)
                                    : (m->pending == M24_STREAM_R || m->pending == M24_SRAM_R);
}

typedef struct mock_xport {
  bg_usb_transport t;
  mock_asm24 *m;
} mock_xport;

static void report(bg_usb_transport *t, bg_usb_xfer *x) {
  if (t->complete) t->complete(t->complete_ctx, x);
}

static int mx_start(bg_usb_transport *t, bg_usb_xfer *x) {
  mock_asm24 *m = ((mock_xport *)t)->m;
  if (q_push(&m->epq[ep_of(x)], (m24_slot){.x = x, .seq = m->next_seq++}) < 0) return -BG_ENOMEM;
  m->inflight++;
  return 0;
}

static void mx_cancel(bg_usb_transport *t, bg_usb_xfer *x) {
  mock_asm24 *m = ((mock_xport *)t)->m;
  m24_queue *q = &m->epq[ep_of(x)];
  for (size_t i = 0; i < q->n; i++)
    if (q_at(q, i)->x == x) q_at(q, i)->cancelled = true;
}

/* One completion per call: a cancelled transfer first (it never reached the device), else the head of a queue the
 * seeded generator draws among those the host can service now. */
static int mx_poll(bg_usb_transport *t) {
  mock_asm24 *m = ((mock_xport *)t)->m;
  if (!m->inflight) return 0;
  for (unsigned e = 0; e < 3; e++)
    for (size_t i = 0; i < m->epq[e].n; i++)
      if (q_at(&m->epq[e], i)->cancelled) {
        m24_slot s = q_take(&m->epq[e], i);
        m->inflight--;
        s.x->status = -BG_EIO;
        s.x->actual = 0;
        report(t, s.x);
        return 0;
      }
  unsigned cand[3], nc = 0, held = 3;
  uint64_t oldest = UINT64_MAX;
  for (unsigned e = 0; e < 3; e++) {
    if (!m->epq[e].n) continue;
    m24_slot *h = q_at(&m->epq[e], 0);
    if (h->seq < oldest) oldest = h->seq;
    if (e && m->fw_mode == MOCK_ASM24_FW_HOLD && !m->gone && !m->lost && !armed_for(m, h->x)) {
      /* flow control: the firmware NAKs (NRDY) data it is not armed for; the host retries it later */
      if (!h->held) {
        h->held = true;
        m->st.held++;
        m->st.early_bulk++;
      }
      if (held == 3 || h->seq < q_at(&m->epq[held], 0)->seq) held = e;
      continue;
    }
    cand[nc++] = e;
  }
  m24_slot s;
  if (!nc) {
    /* only held data and nothing that could arm it: the host's timeout ends the oldest */
    s = q_take(&m->epq[held], 0);
    m->inflight--;
    s.x->status = -BG_ETIMEDOUT;
    s.x->actual = 0;
    report(t, s.x);
    return 0;
  }
  unsigned pick = 0;
  if (m->seed == 0) {
    for (unsigned i = 1; i < nc; i++)
      if (q_at(&m->epq[cand[i]], 0)->seq < q_at(&m->epq[cand[pick]], 0)->seq) pick = i;
  } else {
    pick = (unsigned)(next_rand(m) % nc);
  }
  s = q_take(&m->epq[cand[pick]], 0);
  m->inflight--;
  if (s.seq > oldest) m->st.overtakes++;
  process(m, s.x);
  report(t, s.x);
  return 0;
}

/* CLEAR_FEATURE(ENDPOINT_HALT): the endpoint takes transfers again, and the firmware drops a command armed for it
 * (as a bulk-only device resets its state in reset recovery): the next request starts clean. */
static int mx_clear_halt(bg_usb_transport *t, uint8_t ep) {
  mock_asm24 *m = ((mock_xport *)t)->m;
  if (m->gone) return -BG_ENODEV;
  if (ep != 0x02 && ep != 0x81) return m24_fail(m, "clear halt of endpoint 0x%02X (bulk endpoints: 0x02, 0x81)", ep);
  if (m->inflight) return m24_fail(m, "clear halt of endpoint 0x%02X with %zu transfers in flight", ep, m->inflight);
  bool in = ep == 0x81;
  m->st.clear_halts++;
  m->halted[in] = false;
  bool armed_here = in ? (m->pending == M24_STREAM_R || m->pending == M24_SRAM_R)
                       : (m->pending == M24_STREAM_W || m->pending == M24_SRAM_W);
  if (armed_here) {
    m->pending = M24_NONE;
    m->st.dropped_arms++;
  }
  return 0;
}

/* Whatever is still queued never reaches the device. */
static void mx_close(bg_usb_transport *t) {
  mock_asm24 *m = ((mock_xport *)t)->m;
  for (unsigned e = 0; e < 3; e++) m->epq[e].n = 0;
  m->inflight = 0;
  free(t);
}

static const bg_usb_transport_ops mock_ops = {mx_start, mx_cancel, mx_poll, mx_close, mx_clear_halt};

bg_usb_transport *mock_asm24_transport(mock_asm24 *m) {
  mock_xport *x = calloc(1, sizeof(*x));
  if (!x) return NULL;
  x->t.ops = &mock_ops;
  x->m = m;
  snprintf(x->t.name, sizeof(x->t.name), "mockusb:%d", m->id);
  snprintf(x->t.product, sizeof(x->t.product), "custom ASM24 firmware (emulated)");
  for (unsigned e = 0; e < 3; e++) m->epq[e].n = 0;
  m->inflight = 0;
  return &x->t;
}

mock_asm24 *mock_asm24_new(mock_pci *gpu) {
  mock_asm24 *m = calloc(1, sizeof(*m));
  if (!m) return NULL;
  m->gpu = gpu;
  m->id = next_id++;
  /* the host's order: MOCKUSB_SEED (0 = start order), else 1; the firmware: MOCKUSB_FW strict (default) or hold */
  const char *seed = getenv("MOCKUSB_SEED"), *fw = getenv("MOCKUSB_FW");
  char *end = NULL;
  unsigned long long sv = seed && *seed ? strtoull(seed, &end, 10) : 1;
  if (seed && *seed && *end) {
    fprintf(stderr, "mock_asm24: MOCKUSB_SEED=%s is not a decimal number: using 1\n", seed);
    sv = 1;
  }
  mock_asm24_set_seed(m, sv);
  if (fw && strcmp(fw, "hold") == 0) m->fw_mode = MOCK_ASM24_FW_HOLD;
  else if (fw && *fw && strcmp(fw, "strict") != 0)
    fprintf(stderr, "mock_asm24: MOCKUSB_FW=%s is neither strict nor hold: using strict\n", fw);
  m24_fabric_init(m);
  mock_pci_set_dma_target(gpu, dma_target, m);
  return m;
}

void mock_asm24_free(mock_asm24 *m) {
  if (!m) return;
  for (unsigned e = 0; e < 3; e++) free(m->epq[e].s);
  mock_pci_set_dma_target(m->gpu, NULL, NULL);
  m24_fabric_free(m);
  free(m);
}
