/* tests/mockgpu/nv_pci/test_nvpci_gsp.c: the GSP-RM model (nvpci_gsp.c, nvpci_gsp_rm.c) driven through its queues.
 *
 * The hardware functions it calls (nvpci_dma_read/write, nvpci_reg_read/write, nvpci_fail, nvpci_pci,
 * nvpci_chip_name) are a stand-in here over host buffers mapped at scattered bus addresses and a small register file,
 * with a mock_pci device of a fake sysfs tree for the PCI identity. The test is its own host driver, written from
 * Linux nouveau's r535.c (queue layout r535_gsp_shared_init, records r535_gsp_rpc_get / r535_gsp_cmdq_push, the CPU
 * sequencer r535_gsp_msg_run_cpu_sequencer) and tinygrad's NV_GSP (runtime/support/nv/ip.py). */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "mock_pci.h"
#include "mock_sysfs.h"
#include "nvpci_gsp_internal.h"
#include "nvpci_mmu.h"

/* ---- stand-in hardware model ---- */

#define NREGS 64
#define NMAP 256
struct nvpci_gpu {
  mock_sysfs *tree;
  mock_pci *pci;
  const char *chip;
  nvpci_gsp *gsp;
  uint32_t reg_addr[NREGS], reg_val[NREGS];
  unsigned nregs;
  struct { uint64_t bus; uint8_t *host; size_t size; } map[NMAP];
  unsigned nmap;
  char fails[16384];
  unsigned nfail;
  int stage;
  uint8_t *vram; /* the emulated VRAM page tables are walked in */
  uint64_t vram_size;
};

void nvpci_fail(nvpci_gpu *g, const char *fmt, ...) {
  size_t at = strlen(g->fails);
  va_list ap;
  va_start(ap, fmt);
  if (at < sizeof g->fails - 2) vsnprintf(g->fails + at, sizeof g->fails - at - 1, fmt, ap);
  va_end(ap);
  at = strlen(g->fails);
  if (at < sizeof g->fails - 1) strcat(g->fails, "\n");
  g->nfail++;
}

static uint8_t *bus_host(nvpci_gpu *g, uint64_t bus, size_t n) {
  for (unsigned i = 0; i < g->nmap; i++)
    if (bus >= g->map[i].bus && bus + n <= g->map[i].bus + g->map[i].size) return g->map[i].host + (bus - g->map[i].bus);
  return NULL;
}
int nvpci_dma_read(nvpci_gpu *g, uint64_t bus, void *dst, size_t n) {
  uint8_t *h = bus_host(g, bus, n);
  if (!h) {
    nvpci_fail(g, "DMA read of %zu bytes at unmapped bus address 0x%llx", n, (unsigned long long)bus);
    return -1;
  }
  memcpy(dst, h, n);
  return 0;
}
int nvpci_dma_write(nvpci_gpu *g, uint64_t bus, const void *src, size_t n) {
  uint8_t *h = bus_host(g, bus, n);
  if (!h) {
    nvpci_fail(g, "DMA write of %zu bytes at unmapped bus address 0x%llx", n, (unsigned long long)bus);
    return -1;
  }
  memcpy(h, src, n);
  return 0;
}
uint32_t nvpci_reg_read(nvpci_gpu *g, uint32_t reg) {
  for (unsigned i = 0; i < g->nregs; i++)
    if (g->reg_addr[i] == reg) return g->reg_val[i];
  return 0;
}
void nvpci_reg_write(nvpci_gpu *g, uint32_t reg, uint32_t v) {
  unsigned i = 0;
  while (i < g->nregs && g->reg_addr[i] != reg) i++;
  if (i == g->nregs && g->nregs < NREGS) g->reg_addr[g->nregs++] = reg;
  if (i < NREGS) g->reg_val[i] = v;
  nvpci_gsp_reg_written(g->gsp, reg, v);
}
void nvpci_set_stage(nvpci_gpu *g, int stage) {
  if (stage > g->stage) g->stage = stage;
}
mock_pci *nvpci_pci(nvpci_gpu *g) { return g->pci; }
uint8_t *nvpci_vram(nvpci_gpu *g, uint64_t *size) {
  if (size) *size = g->vram_size;
  return g->vram;
}
nvpci_gsp *nvpci_gsp_of(nvpci_gpu *g) { return g->gsp; }
const char *nvpci_chip_name(const nvpci_gpu *g) { return g->chip; }
static pthread_mutex_t stand_in_lock;
pthread_mutex_t *nvpci_lock_of(nvpci_gpu *g) {
  (void)g;
  return &stand_in_lock;
}

/* ---- the test's host driver ---- */

enum { NPAGES = 129, CMDQ = 0x1000, STATQ = 0x41000, QCNT = 63 };
#define SHM_BUS 0x2000000000ull
#define LIBOS_BUS 0x3000000000ull
#define RMARGS_BUS 0x3000010000ull
#define META_BUS 0x3000020000ull
#define CLIENT 0xc1e00004u
#define VRAM_SIZE (32ull << 20)

typedef struct chipinfo {
  const char *name;
  uint16_t device;
  uint32_t mirror, sm, gpfifo, compute, copy;
} chipinfo;
static const chipinfo CHIPS[] = {
    {"ga102", 0x2204, 0x88000, 0x806, 0xc56f, 0xc7c0, 0xc7b5},
    {"ad102", 0x2684, 0x88000, 0x809, 0xc56f, 0xc9c0, 0xc7b5},
    {"gh100", 0x2335, 0x92000, 0x900, 0xc86f, 0xcbc0, 0xc8b5},
    {"gb202", 0x2b85, 0x92000, 0xa04, 0xc96f, 0xcec0, 0xcab5},
};

typedef struct host {
  nvpci_gpu g;
  const chipinfo *ci;
  uint8_t *shm, *libos, *rmargs, *meta;
  uint32_t cmd_wptr, cmd_seq, stat_rptr, stat_seq;
  uint32_t save[8];
} host;

static host H;

static uint32_t g32(const void *p, size_t o) { return gspm_g32(p, o); }
static void p32(void *p, size_t o, uint32_t v) { gspm_p32(p, o, v); }
static void p64(void *p, size_t o, uint64_t v) { gspm_p64(p, o, v); }

static uint32_t fold(const uint8_t *p, size_t n) {
  uint64_t x = 0;
  for (size_t i = 0; i < n; i += 8) x ^= gspm_g64(p, i);
  return (uint32_t)(x >> 32) ^ (uint32_t)x;
}

static void map_host(uint64_t bus, uint8_t *p, size_t n) {
  ck_assert_uint_lt(H.g.nmap, NMAP);
  H.g.map[H.g.nmap].bus = bus;
  H.g.map[H.g.nmap].host = p;
  H.g.map[H.g.nmap].size = n;
  H.g.nmap++;
}

static uint64_t bar_of(const uint8_t *cfg, int i) {
  uint32_t lo = g32(cfg, 0x10 + 4 * (size_t)i);
  uint64_t a = lo & ~0xfull;
  if ((lo & 6) == 4) a |= (uint64_t)g32(cfg, 0x14 + 4 * (size_t)i) << 32;
  return a;
}

/* Build one RPC record (elements ready to copy): r535_gsp_rpc_get + r535_gsp_cmdq_push. */
static uint8_t *build(uint32_t fn, const void *payload, size_t len, uint32_t *nelem) {
  size_t sz = (0x50 + len + 0xfff) & ~(size_t)0xfff;
  uint8_t *e = calloc(1, sz);
  ck_assert_ptr_nonnull(e);
  uint8_t *r = e + 0x30;
  p32(r, 0, 0x03000000);
  p32(r, 4, 0x43505256);
  p32(r, 8, (uint32_t)(0x20 + len));
  p32(r, 12, fn);
  p32(r, 16, 0xffffffff);
  p32(r, 20, 0xffffffff);
  if (len) memcpy(r + 0x20, payload, len);
  p32(e, 36, H.cmd_seq++);
  p32(e, 40, (uint32_t)(sz / 0x1000));
  p32(e, 32, fold(e, sz));
  *nelem = (uint32_t)(sz / 0x1000);
  return e;
}
static void reseal(uint8_t *e, uint32_t nelem) {
  p32(e, 32, 0);
  p32(e, 32, fold(e, (size_t)nelem * 0x1000));
}

static uint32_t gsp_cmd_rptr(void) { return g32(H.shm, STATQ + 32); }
static uint32_t cmd_free(void) { return (gsp_cmd_rptr() + QCNT - H.cmd_wptr - 1) % QCNT; }

/* Copy nelem elements at the write pointer (wrapping) and publish writePtr advanced by `advance`. */
static void put_n(const uint8_t *e, uint32_t nelem, uint32_t advance) {
  ck_assert_msg(cmd_free() >= nelem, "command queue full (%u free, %u needed)", cmd_free(), nelem);
  for (uint32_t k = 0; k < nelem; k++)
    memcpy(H.shm + CMDQ + 0x1000 + (size_t)((H.cmd_wptr + k) % QCNT) * 0x1000, e + (size_t)k * 0x1000, 0x1000);
  H.cmd_wptr = (H.cmd_wptr + advance) % QCNT;
  p32(H.shm, CMDQ + 16, H.cmd_wptr);
}
static void put(const uint8_t *e, uint32_t nelem) { put_n(e, nelem, nelem); }

static void queue_rpc(uint32_t fn, const void *payload, size_t len) {
  uint32_t n;
  uint8_t *e = build(fn, payload, len, &n);
  put(e, n);
  free(e);
}

/* A record too big for one: the first part, then CONTINUATION_RECORDs (r535.c r535_gsp_rpc_push). */
static void queue_big(uint32_t fn, const uint8_t *payload, size_t len) {
  size_t first = len < GSPM_MAX_PAYLOAD ? len : GSPM_MAX_PAYLOAD;
  queue_rpc(fn, payload, first);
  for (size_t at = first; at < len;) {
    size_t k = len - at < GSPM_MAX_PAYLOAD ? len - at : GSPM_MAX_PAYLOAD;
    queue_rpc(GSPM_FN_CONTINUATION_RECORD, payload + at, k);
    at += k;
  }
}

/* Next status message: checksum, sequence and header checked; readPtr advanced by elemCount. -1: none. */
static long recv_msg(uint32_t *fn, uint32_t *result, uint8_t *out, size_t cap) {
  uint32_t w = g32(H.shm, STATQ + 16);
  if (w == H.stat_rptr) return -1;
  uint8_t *first = H.shm + STATQ + 0x1000 + (size_t)H.stat_rptr * 0x1000;
  uint32_t ec = g32(first, 40);
  ck_assert_msg(ec >= 1 && ec <= 16, "status elemCount %u", ec);
  uint8_t *e = malloc((size_t)ec * 0x1000);
  for (uint32_t k = 0; k < ec; k++)
    memcpy(e + (size_t)k * 0x1000, H.shm + STATQ + 0x1000 + (size_t)((H.stat_rptr + k) % QCNT) * 0x1000, 0x1000);
  ck_assert_msg(fold(e, (size_t)ec * 0x1000) == 0, "status message checksum");
  ck_assert_uint_eq(g32(e, 36), H.stat_seq);
  H.stat_seq++;
  uint8_t *r = e + 0x30;
  ck_assert_uint_eq(g32(r, 0), 0x03000000);
  ck_assert_uint_eq(g32(r, 4), 0x43505256);
  uint32_t len = g32(r, 8) - 0x20;
  ck_assert_uint_le(0x50 + len, ec * 0x1000);
  *fn = g32(r, 12);
  *result = g32(r, 16);
  if (out) memcpy(out, r + 0x20, len < cap ? len : cap);
  free(e);
  H.stat_rptr = (H.stat_rptr + ec) % QCNT;
  p32(H.shm, CMDQ + 32, H.stat_rptr); /* the host's readPtr: cmd queue + rxHdrOff */
  return len;
}

/* GspSystemInfo of the device, as tinygrad's NV_GSP fills it. */
static void sysinfo(uint8_t *p) {
  memset(p, 0, 928);
  const uint8_t *cfg = mock_pci_config(H.g.pci);
  p64(p, 0, bar_of(cfg, 0));
  p64(p, 8, bar_of(cfg, 1));
  p64(p, 16, bar_of(cfg, 3));
  p64(p, 32, 0x0300); /* bus 3 << 8 | device 0 << 3 | function 0 (0000:03:00.0) */
  p64(p, 72, 0x7ffffffff000ull);
  p32(p, 80, H.ci->mirror);
  p32(p, 84, 0x1000);
  p32(p, 88, g32(cfg, 0));
  p32(p, 92, g32(cfg, 0x2c));
  p32(p, 96, cfg[8]);
  p[840] = 1;
}

/* PACKED_REGISTRY_TABLE with n DWORD entries (the first two tinygrad's). Returns its size. */
static size_t registry(uint8_t *p, unsigned n) {
  size_t at = 8 + 16 * (size_t)n;
  for (unsigned i = 0; i < n; i++) {
    char name[40];
    if (i == 0) snprintf(name, sizeof name, "RMForcePcieConfigSave");
    else if (i == 1) snprintf(name, sizeof name, "RMSecBusResetEnable");
    else snprintf(name, sizeof name, "RMTestKey%05u", i);
    uint8_t *e = p + 8 + 16 * (size_t)i;
    p32(e, 0, (uint32_t)at);
    e[4] = 1;
    p32(e, 8, 1);
    p32(e, 12, 4);
    memcpy(p + at, name, strlen(name) + 1);
    at += strlen(name) + 1;
  }
  p32(p, 0, (uint32_t)at);
  p32(p, 4, n);
  return at;
}

static void host_setup(const chipinfo *ci) {
  memset(&H, 0, sizeof H);
  H.ci = ci;
  H.g.chip = ci->name;
  H.g.tree = mock_sysfs_new();
  ck_assert_ptr_nonnull(H.g.tree);
  mock_pci_cfg pc = {.bdf = "0000:03:00.0", .vendor = 0x10de, .device = ci->device, .subvendor = 0x10de,
                     .subdevice = 0x1612, .class_code = 0x030000, .revision = 0xa1,
                     .bars = {[0] = {.size = 16u << 20}, [1] = {.size = 32u << 20, .is_64 = true, .prefetch = true},
                              [3] = {.size = 32u << 20, .is_64 = true, .prefetch = true}},
                     .iommu_group = -1};
  H.g.pci = mock_sysfs_add(H.g.tree, &pc);
  ck_assert_ptr_nonnull(H.g.pci);
  H.g.vram_size = VRAM_SIZE;
  H.g.vram = calloc(1, VRAM_SIZE);
  ck_assert_ptr_nonnull(H.g.vram);
  H.g.gsp = nvpci_gsp_new(&H.g);
  ck_assert_ptr_nonnull(H.g.gsp);
  nvpci_reg_write(&H.g, GSPM_REG_BOOT_42, 0x17000000u);
  /* Shared region: pages at scattered bus addresses, in reverse order. */
  H.shm = aligned_alloc(0x1000, (size_t)NPAGES * 0x1000);
  memset(H.shm, 0, (size_t)NPAGES * 0x1000);
  for (unsigned i = 0; i < NPAGES; i++) {
    uint64_t bus = SHM_BUS + (uint64_t)(NPAGES - 1 - i) * 0x3000;
    map_host(bus, H.shm + (size_t)i * 0x1000, 0x1000);
    p64(H.shm, 8 * (size_t)i, bus);
  }
  uint8_t *cq = H.shm + CMDQ;
  p32(cq, 4, 0x40000);
  p32(cq, 8, 0x1000);
  p32(cq, 12, QCNT);
  p32(cq, 20, 1);
  p32(cq, 24, 32);
  p32(cq, 28, 0x1000);
  H.libos = calloc(1, 0x1000);
  H.rmargs = calloc(1, 0x1000);
  H.meta = calloc(1, 0x100);
  map_host(LIBOS_BUS, H.libos, 0x1000);
  map_host(RMARGS_BUS, H.rmargs, 0x1000);
  map_host(META_BUS, H.meta, 0x100);
  static const char *names[] = {"LOGINIT", "LOGINTR", "LOGRM", "RMARGS"};
  for (int i = 0; i < 4; i++) {
    uint64_t id = 0;
    for (const char *c = names[i]; *c; c++) id = id << 8 | (uint8_t)*c;
    uint8_t *a = H.libos + 32 * i;
    p64(a, 0, id);
    p64(a, 8, i == 3 ? RMARGS_BUS : 0x4000000000ull + 0x10000ull * (unsigned)i);
    p64(a, 16, i == 3 ? 0x1000 : 0x10000);
    a[24] = 1;
    a[25] = 1;
  }
  p64(H.rmargs, 0, SHM_BUS + (uint64_t)(NPAGES - 1) * 0x3000); /* page 0's bus address */
  p32(H.rmargs, 8, NPAGES);
  p64(H.rmargs, 16, CMDQ);
  p64(H.rmargs, 24, STATQ);
  p64(H.meta, 0, 0xdc3aae21371a60b3ull);
  p64(H.meta, 8, 1);
}

/* Fresh queues in the same shared region, as a driver lays them out again after a reset. */
static void host_requeue(void) {
  memset(H.shm + CMDQ, 0, (size_t)(NPAGES * 0x1000 - CMDQ));
  uint8_t *cq = H.shm + CMDQ;
  p32(cq, 4, 0x40000);
  p32(cq, 8, 0x1000);
  p32(cq, 12, QCNT);
  p32(cq, 20, 1);
  p32(cq, 24, 32);
  p32(cq, 28, 0x1000);
  H.cmd_wptr = H.cmd_seq = H.stat_rptr = H.stat_seq = 0;
}

static void host_teardown(void) {
  nvpci_gsp_free(H.g.gsp);
  mock_sysfs_free(H.g.tree);
  free(H.shm);
  free(H.libos);
  free(H.rmargs);
  free(H.meta);
  free(H.g.vram);
}

static void prequeue(void) {
  uint8_t si[928], reg[256];
  sysinfo(si);
  queue_rpc(GSPM_FN_GSP_SET_SYSTEM_INFO, si, sizeof si);
  queue_rpc(GSPM_FN_SET_REGISTRY, reg, registry(reg, 2));
}

/* Run a CPU-sequencer event as nouveau does. ops: bit per opcode seen. `stop_after` commands (-1: all). */
static unsigned run_sequencer(const uint8_t *p, int stop_after) {
  uint32_t n = g32(p, 4);
  const uint8_t *c = p + 40;
  unsigned ops = 0;
  int done = 0;
  for (uint32_t at = 0; at < n && (stop_after < 0 || done < stop_after); done++) {
    uint32_t op = g32(c, 4 * (size_t)at), a = g32(c, 4 * (size_t)at + 4);
    ops |= 1u << op;
    switch (op) {
    case GSPM_SEQ_WRITE: nvpci_reg_write(&H.g, a, g32(c, 4 * (size_t)at + 8)); at += 3; break;
    case GSPM_SEQ_MODIFY: {
      uint32_t mask = g32(c, 4 * (size_t)at + 8), val = g32(c, 4 * (size_t)at + 12);
      nvpci_reg_write(&H.g, a, (nvpci_reg_read(&H.g, a) & ~mask) | (val & mask));
      at += 4;
      break;
    }
    case GSPM_SEQ_POLL: {
      uint32_t mask = g32(c, 4 * (size_t)at + 8), val = g32(c, 4 * (size_t)at + 12);
      ck_assert_msg((nvpci_reg_read(&H.g, a) & mask) == val, "sequencer POLL of 0x%x never met", a);
      at += 6;
      break;
    }
    case GSPM_SEQ_DELAY_US: at += 2; break;
    case GSPM_SEQ_STORE: H.save[g32(c, 4 * (size_t)at + 8) & 7] = nvpci_reg_read(&H.g, a); at += 3; break;
    default: ck_abort_msg("sequencer opcode %u", op);
    }
  }
  return ops;
}

/* Cold boot to GSP_INIT_DONE. */
static void boot(void) {
  prequeue();
  ck_assert_int_eq(nvpci_gsp_start(H.g.gsp, META_BUS, LIBOS_BUS), 0);
  uint8_t buf[4096];
  uint32_t fn, res;
  ck_assert_int_gt(recv_msg(&fn, &res, buf, sizeof buf), 0);
  ck_assert_uint_eq(fn, GSPM_EV_RUN_CPU_SEQUENCER);
  run_sequencer(buf, -1);
  ck_assert_int_ge(recv_msg(&fn, &res, NULL, 0), 0);
  ck_assert_uint_eq(fn, GSPM_EV_GSP_INIT_DONE);
  ck_assert_uint_eq(res, 0);
  ck_assert_msg(H.g.nfail == 0, "boot failures:\n%s", H.g.fails);
}

/* Send one RPC and wait for its reply (no events expected). Returns rpc_result; the reply payload into out. */
static uint32_t rpc(uint32_t fn, const void *payload, size_t len, uint8_t *out, size_t cap) {
  queue_rpc(fn, payload, len);
  nvpci_gsp_notify(H.g.gsp);
  uint32_t rfn, res;
  long n = recv_msg(&rfn, &res, out, cap);
  ck_assert_msg(n >= 0, "no reply to function %u", fn);
  ck_assert_uint_eq(rfn, fn);
  return res;
}

static uint32_t rm_alloc(uint32_t hc, uint32_t hp, uint32_t ho, uint32_t cls, uint32_t psize) {
  uint8_t p[32 + 256] = {0}, out[32 + 256];
  p32(p, 0, hc);
  p32(p, 4, hp);
  p32(p, 8, ho);
  p32(p, 12, cls);
  p32(p, 20, psize);
  if (cls == 0x80) p32(p, 32 + 4, CLIENT); /* hClientShare */
  uint32_t res = rpc(GSPM_FN_GSP_RM_ALLOC, p, 32 + psize, out, sizeof out);
  ck_assert_uint_eq(g32(out, 16), res); /* the block's status is the result */
  return res;
}

static uint32_t rm_ctrl(uint32_t ho, uint32_t cmd, uint8_t *params, uint32_t psize) {
  uint8_t *p = calloc(1, 24 + (size_t)psize), *out = calloc(1, 24 + (size_t)psize);
  p32(p, 0, CLIENT);
  p32(p, 4, ho);
  p32(p, 8, cmd);
  p32(p, 16, psize);
  if (params) memcpy(p + 24, params, psize);
  uint32_t res = rpc(GSPM_FN_GSP_RM_CONTROL, p, 24 + (size_t)psize, out, 24 + (size_t)psize);
  ck_assert_uint_eq(g32(out, 12), res);
  if (params) memcpy(params, out + 24, psize);
  free(p);
  free(out);
  return res;
}

static void expect_fail(const char *needle) {
  ck_assert_msg(H.g.nfail == 1 && strstr(H.g.fails, needle), "expected one failure with '%s', got %u:\n%s", needle,
                H.g.nfail, H.g.fails);
  H.g.nfail = 0;
  H.g.fails[0] = 0;
}

static void setup_ad(void) { host_setup(&CHIPS[1]); }

/* ---- tests ---- */

/* Cold boot on each chip: queues found through the page list, GSP's header, the sequencer, then INIT_DONE. */
START_TEST(boot_each_chip) {
  host_setup(&CHIPS[_i]);
  prequeue();
  ck_assert_int_eq(nvpci_gsp_start(H.g.gsp, META_BUS, LIBOS_BUS), 0);
  ck_assert(nvpci_gsp_running(H.g.gsp));
  const uint8_t *sq = H.shm + STATQ;
  ck_assert_uint_eq(g32(sq, 0), 0);
  ck_assert_uint_eq(g32(sq, 4), 0x40000);
  ck_assert_uint_eq(g32(sq, 8), 0x1000);
  ck_assert_uint_eq(g32(sq, 12), QCNT);
  ck_assert_uint_eq(g32(sq, 24), 32);
  ck_assert_uint_eq(g32(sq, 28), 0x1000);
  ck_assert_uint_eq(gsp_cmd_rptr(), H.cmd_wptr); /* both pre-queued records consumed */
  ck_assert_uint_eq(nvpci_gsp_registry_entries(H.g.gsp), 2);
  uint8_t buf[4096];
  uint32_t fn, res;
  ck_assert_int_gt(recv_msg(&fn, &res, buf, sizeof buf), 0);
  ck_assert_uint_eq(fn, GSPM_EV_RUN_CPU_SEQUENCER);
  /* No INIT_DONE before the host ran the sequence, not even at a notify. */
  ck_assert_int_lt(recv_msg(&fn, &res, NULL, 0), 0);
  nvpci_gsp_notify(H.g.gsp);
  ck_assert_int_lt(recv_msg(&fn, &res, NULL, 0), 0);
  ck_assert_int_eq(H.g.stage, NVPCI_STAGE_COLD);
  unsigned ops = run_sequencer(buf, -1);
  ck_assert_int_eq(H.g.stage, NVPCI_STAGE_INIT_DONE); /* reported to the hardware model */
  ck_assert_uint_eq(ops, 0x1f); /* WRITE, MODIFY, POLL, DELAY_US, STORE */
  ck_assert_uint_eq(H.save[0], 0x17000000u);
  ck_assert_int_ge(recv_msg(&fn, &res, NULL, 0), 0);
  ck_assert_uint_eq(fn, GSPM_EV_GSP_INIT_DONE);
  ck_assert_msg(H.g.nfail == 0, "%s", H.g.fails);
  host_teardown();
}
END_TEST

/* INIT_DONE is withheld while the sequence ran only in part. */
START_TEST(init_done_needs_sequencer) {
  prequeue();
  ck_assert_int_eq(nvpci_gsp_start(H.g.gsp, META_BUS, LIBOS_BUS), 0);
  uint8_t buf[4096];
  uint32_t fn, res;
  ck_assert_int_gt(recv_msg(&fn, &res, buf, sizeof buf), 0);
  run_sequencer(buf, 1); /* the WRITE only */
  nvpci_gsp_notify(H.g.gsp);
  ck_assert_int_lt(recv_msg(&fn, &res, NULL, 0), 0);
  /* An RM call before INIT_DONE is refused. */
  uint8_t p[32] = {0};
  p32(p, 0, CLIENT);
  p32(p, 8, CLIENT);
  ck_assert_uint_eq(rpc(GSPM_FN_GSP_RM_ALLOC, p, 32, NULL, 0), GSPM_ERR_INVALID_STATE);
  expect_fail("before GSP_INIT_DONE");
  run_sequencer(buf, -1);
  ck_assert_int_ge(recv_msg(&fn, &res, NULL, 0), 0);
  ck_assert_uint_eq(fn, GSPM_EV_GSP_INIT_DONE);
}
END_TEST

/* The sequence's writes in the wrong order (MODIFY before WRITE) leave the right values but do not count as a run. */
START_TEST(sequencer_order) {
  prequeue();
  ck_assert_int_eq(nvpci_gsp_start(H.g.gsp, META_BUS, LIBOS_BUS), 0);
  uint8_t buf[4096];
  uint32_t fn, res;
  ck_assert_int_gt(recv_msg(&fn, &res, buf, sizeof buf), 0);
  const uint8_t *c = buf + 40; /* WRITE (3 dwords), then MODIFY (4 dwords) */
  ck_assert_uint_eq(g32(c, 0), GSPM_SEQ_WRITE);
  ck_assert_uint_eq(g32(c, 12), GSPM_SEQ_MODIFY);
  uint32_t ma = g32(c, 16), mask = g32(c, 20), mval = g32(c, 24);
  nvpci_reg_write(&H.g, ma, (nvpci_reg_read(&H.g, ma) & ~mask) | (mval & mask));
  nvpci_reg_write(&H.g, g32(c, 4), g32(c, 8));
  nvpci_gsp_notify(H.g.gsp);
  ck_assert_int_lt(recv_msg(&fn, &res, NULL, 0), 0);
  run_sequencer(buf, -1);
  ck_assert_int_ge(recv_msg(&fn, &res, NULL, 0), 0);
  ck_assert_uint_eq(fn, GSPM_EV_GSP_INIT_DONE);
}
END_TEST

/* Each field of the host's command-queue header checked; GSP does not start (no status header). */
START_TEST(bad_cmdq_header) {
  static const struct { size_t off; uint32_t v; const char *name; } bad[] = {
      {0, 1, "version"}, {4, 0x20000, "size"}, {8, 0x800, "msgSize"}, {12, 64, "msgCount"},
      {20, 0, "flags"},  {24, 0, "rxHdrOff"}, {28, 0x800, "entryOff"},
  };
  p32(H.shm, CMDQ + bad[_i].off, bad[_i].v);
  prequeue();
  ck_assert_int_eq(nvpci_gsp_start(H.g.gsp, META_BUS, LIBOS_BUS), -1);
  char want[64];
  snprintf(want, sizeof want, "header %s", bad[_i].name);
  expect_fail(want);
  ck_assert(!nvpci_gsp_running(H.g.gsp));
  ck_assert_uint_eq(g32(H.shm, STATQ + 28), 0); /* entryOff never written */
}
END_TEST

/* SET_SYSTEM_INFO checked against the device; SET_REGISTRY must be well formed. */
START_TEST(bad_prequeued) {
  uint8_t si[928], reg[256];
  sysinfo(si);
  size_t rn = registry(reg, 2);
  const char *want = NULL;
  switch (_i) {
  case 0: p64(si, 0, gspm_g64(si, 0) + 0x1000); want = "gpuPhysAddr (BAR0)"; break;
  case 1: p64(si, 8, 0); want = "gpuPhysFbAddr (BAR1)"; break;
  case 2: p32(si, 80, H.ci->mirror == 0x88000 ? 0x92000 : 0x88000); want = "pciConfigMirrorBase"; break;
  case 3: p32(si, 88, 0x123410de); want = "PCIDeviceID"; break;
  case 4: p32(reg + 8, 0, 3); want = "SET_REGISTRY entry 0: nameOffset"; break;
  case 5: reg[rn - 1] = 'x'; want = "SET_REGISTRY entry 1: name without NUL"; break;
  default: break;
  }
  queue_rpc(GSPM_FN_GSP_SET_SYSTEM_INFO, si, sizeof si);
  queue_rpc(GSPM_FN_SET_REGISTRY, reg, rn);
  int rc = nvpci_gsp_start(H.g.gsp, META_BUS, LIBOS_BUS);
  ck_assert_msg(strstr(H.g.fails, want), "no failure naming '%s':\n%s", want, H.g.fails);
  if (_i >= 4) { /* a refused registry leaves GSP-RM without one */
    ck_assert_int_eq(rc, -1);
    ck_assert(strstr(H.g.fails, "without the pre-queued SET_REGISTRY"));
  }
  H.g.nfail = 0;
}
END_TEST

/* A flipped byte: the checksum fails, the element is dropped with an error reply; the next one is served. */
START_TEST(checksum_rejected) {
  boot();
  uint8_t p[32 + 120] = {0};
  p32(p, 0, CLIENT);
  p32(p, 8, CLIENT);
  p32(p, 20, 120);
  uint32_t n;
  uint8_t *e = build(GSPM_FN_GSP_RM_ALLOC, p, sizeof p, &n);
  e[0x50 + 40] ^= 0x10;
  put(e, n);
  free(e);
  nvpci_gsp_notify(H.g.gsp);
  uint32_t fn, res;
  ck_assert_int_ge(recv_msg(&fn, &res, NULL, 0), 0);
  ck_assert_uint_eq(fn, GSPM_FN_GSP_RM_ALLOC);
  ck_assert_uint_eq(res, GSPM_ERR_INVALID_DATA);
  expect_fail("checksum mismatch");
  ck_assert_uint_eq(nvpci_gsp_rejected(H.g.gsp), 1);
  ck_assert_uint_eq(nvpci_gsp_served_fn(H.g.gsp, GSPM_FN_GSP_RM_ALLOC), 0); /* nothing allocated */
  ck_assert_uint_eq(rm_alloc(CLIENT, 0, CLIENT, 0, 120), GSPM_OK);
  ck_assert_uint_eq(H.g.nfail, 0);
}
END_TEST

/* A skipped seqNum is refused. */
START_TEST(sequence_rejected) {
  boot();
  H.cmd_seq++;
  uint8_t p[32] = {0};
  p32(p, 0, CLIENT);
  p32(p, 8, CLIENT);
  ck_assert_uint_eq(rpc(GSPM_FN_GSP_RM_ALLOC, p, sizeof p, NULL, 0), GSPM_ERR_INVALID_STATE);
  expect_fail("expected");
  ck_assert_uint_eq(nvpci_gsp_rejected(H.g.gsp), 1);
}
END_TEST

/* elemCount 0, 17 (all 17 elements written), and 2 where the host wrote 1. */
START_TEST(elem_count_rejected) {
  static const uint32_t counts[] = {0, 17, 2};
  boot();
  size_t len = _i == 1 ? 17 * 0x1000 - 0x50 : 32;
  uint8_t *p = calloc(1, len);
  uint32_t n;
  uint8_t *e = build(GSPM_FN_GSP_RM_ALLOC, p, len, &n);
  free(p);
  p32(e, 40, counts[_i]);
  reseal(e, n);
  put(e, n);
  free(e);
  nvpci_gsp_notify(H.g.gsp);
  uint32_t fn, res;
  ck_assert_int_ge(recv_msg(&fn, &res, NULL, 0), 0);
  ck_assert_uint_eq(res, GSPM_ERR_INVALID_ARGUMENT);
  expect_fail("elemCount");
  ck_assert_uint_eq(gsp_cmd_rptr(), H.cmd_wptr); /* dropped */
}
END_TEST

/* rpc header version, signature and length. */
START_TEST(rpc_header_rejected) {
  boot();
  uint8_t p[64] = {0};
  uint32_t n;
  uint8_t *e = build(GSPM_FN_GSP_RM_ALLOC, p, sizeof p, &n);
  const char *want = "header_version";
  if (_i == 0) p32(e, 0x30, 0x02000000);
  else if (_i == 1) p32(e, 0x34, 0x43505257);
  else {
    p32(e, 0x38, 0x20 + 0x1000); /* more than the one element holds */
    want = "does not fill";
  }
  reseal(e, n);
  put(e, n);
  free(e);
  nvpci_gsp_notify(H.g.gsp);
  uint32_t fn, res;
  ck_assert_int_ge(recv_msg(&fn, &res, NULL, 0), 0);
  ck_assert_uint_ne(res, GSPM_OK);
  expect_fail(want);
}
END_TEST

/* An unknown function: NV_ERR_NOT_SUPPORTED (not a model failure: the firmware answers it). */
START_TEST(unknown_function) {
  boot();
  uint8_t p[16] = {1, 2, 3};
  ck_assert_uint_eq(rpc(200, p, sizeof p, NULL, 0), GSPM_ERR_NOT_SUPPORTED);
  ck_assert_uint_eq(rpc(4 /* ALLOC_MEMORY: not modelled */, p, sizeof p, NULL, 0), GSPM_ERR_NOT_SUPPORTED);
  ck_assert_uint_eq(nvpci_gsp_rejected(H.g.gsp), 2);
  ck_assert_uint_eq(H.g.nfail, 0);
}
END_TEST

/* A 3-element record that wraps around the end of the queue, answered with a 3-element reply. */
START_TEST(multi_element_wrap) {
  boot();
  ck_assert_uint_eq(rm_alloc(CLIENT, 0, CLIENT, 0, 0), GSPM_OK);
  ck_assert_uint_eq(rm_alloc(CLIENT, CLIENT, 0xd0, 0x80, 56), GSPM_OK);
  ck_assert_uint_eq(rm_alloc(CLIENT, 0xd0, 0xd1, 0x2080, 4), GSPM_OK);
  while (H.cmd_wptr != QCNT - 1) { /* move the write pointer to the last element */
    uint8_t gid[268] = {0};
    p32(gid, 4, 2);
    ck_assert_uint_eq(rm_ctrl(0xd1, 0x2080014a, gid, sizeof gid), GSPM_OK);
  }
  uint8_t *big = calloc(1, 9000);
  ck_assert_uint_eq(rm_ctrl(0xd1, 0x20800a2a, big, 9000), GSPM_ERR_INVALID_PARAM_STRUCT);
  ck_assert_uint_eq(H.cmd_wptr, 2); /* wrapped */
  /* The right size.*/
  ck_assert_uint_eq(rm_ctrl(0xd1, 0x20800a2a, big, 3712), GSPM_OK);
  ck_assert_uint_eq(g32(big, 0x0c * 8), 0x0c);
  ck_assert_uint_eq(g32(big, 0x0c * 8 + 4), H.ci->sm);
  free(big);
  ck_assert_uint_eq(H.g.nfail, 0);
}
END_TEST

/* A registry bigger than one record: CONTINUATION_RECORDs joined; a continuation with nothing to continue. */
START_TEST(continuation_joined) {
  uint8_t si[928];
  sysinfo(si);
  queue_rpc(GSPM_FN_GSP_SET_SYSTEM_INFO, si, sizeof si);
  uint8_t *reg = calloc(1, 100000);
  size_t rn = registry(reg, 3000);
  ck_assert_uint_gt(rn, GSPM_MAX_PAYLOAD);
  if (_i == 1) reg[rn - 1] = 'x'; /* the last name, in the continuation, loses its NUL */
  queue_big(GSPM_FN_SET_REGISTRY, reg, rn);
  free(reg);
  int rc = nvpci_gsp_start(H.g.gsp, META_BUS, LIBOS_BUS);
  if (_i == 1) {
    ck_assert_int_eq(rc, -1);
    ck_assert(strstr(H.g.fails, "entry 2999: name without NUL"));
    H.g.nfail = 0;
    return;
  }
  ck_assert_int_eq(rc, 0);
  ck_assert_uint_eq(nvpci_gsp_registry_entries(H.g.gsp), 3000);
  ck_assert_uint_eq(gsp_cmd_rptr(), H.cmd_wptr);
  ck_assert_msg(H.g.nfail == 0, "%s", H.g.fails);
  uint8_t buf[4096];
  uint32_t fn, res;
  ck_assert_int_gt(recv_msg(&fn, &res, buf, sizeof buf), 0);
  run_sequencer(buf, -1);
  ck_assert_int_ge(recv_msg(&fn, &res, NULL, 0), 0);
  ck_assert_uint_eq(fn, GSPM_EV_GSP_INIT_DONE);
  uint8_t p[8] = {0};
  ck_assert_uint_eq(rpc(GSPM_FN_CONTINUATION_RECORD, p, sizeof p, NULL, 0), GSPM_ERR_INVALID_STATE);
  expect_fail("no record to continue");
}
END_TEST

/* The object graph of tinygrad's NV_GSP.init_hw and each refusal's status, and the controls, on each chip. */
START_TEST(rm_objects_and_controls) {
  host_setup(&CHIPS[_i]);
  boot();
  ck_assert_uint_eq(rm_alloc(CLIENT, 0, CLIENT, 0, 120), GSPM_OK);
  ck_assert_uint_eq(rm_alloc(CLIENT, 0, CLIENT, 0, 120), GSPM_ERR_INSERT_DUPLICATE_NAME);
  ck_assert_uint_eq(rm_alloc(CLIENT, CLIENT, 0xd0, 0x80, 40), GSPM_ERR_INVALID_ARGUMENT); /* params size */
  ck_assert_uint_eq(rm_alloc(CLIENT, CLIENT, 0xd0, 0x80, 56), GSPM_OK);
  ck_assert_uint_eq(rm_alloc(CLIENT, CLIENT, 0xd1, 0x2080, 4), GSPM_ERR_INVALID_OBJECT_PARENT); /* not a device */
  ck_assert_uint_eq(rm_alloc(CLIENT, 0xd0, 0xd1, 0x2080, 4), GSPM_OK);
  ck_assert_uint_eq(rm_alloc(CLIENT, 0xd0, 0xd1, 0x90f1, 48), GSPM_ERR_INSERT_DUPLICATE_NAME);
  ck_assert_uint_eq(rm_alloc(CLIENT, 0xd0, 0xd2, 0x90f1, 48), GSPM_OK);
  ck_assert_uint_eq(rm_alloc(CLIENT, 0xd0, 0xd3, 0xdead, 0), GSPM_ERR_INVALID_CLASS);
  ck_assert_uint_eq(rm_alloc(0xc1e00099, 0xd0, 0xd4, 0x2080, 4), GSPM_ERR_INVALID_CLIENT);
  ck_assert_uint_eq(rm_alloc(CLIENT, 0xd9, 0xd4, 0x2080, 4), GSPM_ERR_INVALID_OBJECT_PARENT); /* no such parent */
  /* Class lists: count (V1 with NULL), V1 with a pointer GSP cannot follow, the list (V2). */
  uint8_t cl[404] = {0};
  ck_assert_uint_eq(rm_ctrl(0xd0, 0x800201, cl, 16), GSPM_OK);
  uint32_t count = g32(cl, 0);
  p64(cl, 8, 0x1000);
  ck_assert_uint_eq(rm_ctrl(0xd0, 0x800201, cl, 16), 0x3d);
  memset(cl, 0, sizeof cl);
  ck_assert_uint_eq(rm_ctrl(0xd0, 0x800292, cl, sizeof cl), GSPM_OK);
  ck_assert_uint_eq(g32(cl, 0), count);
  unsigned found = 0;
  for (uint32_t i = 0; i < count; i++) {
    uint32_t c = g32(cl, 4 + 4 * (size_t)i);
    found |= (c == H.ci->gpfifo) | (c == H.ci->compute) << 1 | (c == H.ci->copy) << 2 | (c == 0xc661) << 3;
  }
  ck_assert_uint_eq(found & 7, 7);
  ck_assert_uint_eq(!!(found & 8), H.ci->sm >= 0x900); /* HOPPER_USERMODE_A on GH100 and GB202 */
  /* GR info: the chip's SM version. */
  uint8_t *gr = calloc(1, 3712);
  ck_assert_uint_eq(rm_ctrl(0xd1, 0x20800a2a, gr, 3712), GSPM_OK);
  ck_assert_uint_eq(g32(gr, 0x0c * 8 + 4), H.ci->sm);
  ck_assert_uint_eq(rm_ctrl(0xd1, 0x20800a2a, gr, 3700), GSPM_ERR_INVALID_PARAM_STRUCT);
  ck_assert_uint_eq(rm_ctrl(0xd0, 0x20800a2a, gr, 3712), GSPM_ERR_NOT_SUPPORTED); /* a device has no such control */
  free(gr);
  /* Device info table: GR0 (RM engine type 1) and two copy engines, each with its runlist. */
  uint8_t *dt = calloc(1, 3212);
  ck_assert_uint_eq(rm_ctrl(0xd1, 0x20801112, dt, 3212), GSPM_OK);
  ck_assert_uint_eq(g32(dt, 4), 3);
  ck_assert_uint_eq(g32(dt, 12 + 8), 1);
  ck_assert_uint_eq(g32(dt, 12 + 100 + 8), 9);
  ck_assert_uint_eq(g32(dt, 12 + 100 + 12), 1);
  free(dt);
  /* GID: binary 16 bytes, ASCII "GPU-..." */
  uint8_t gid[268] = {0};
  p32(gid, 4, 2);
  ck_assert_uint_eq(rm_ctrl(0xd1, 0x2080014a, gid, sizeof gid), GSPM_OK);
  ck_assert_uint_eq(g32(gid, 8), 16);
  memset(gid, 0, sizeof gid);
  ck_assert_uint_eq(rm_ctrl(0xd1, 0x2080014a, gid, sizeof gid), GSPM_OK);
  ck_assert_uint_eq(g32(gid, 8), 41);
  ck_assert(memcmp(gid + 12, "GPU-", 4) == 0);
  ck_assert_uint_eq(rm_ctrl(0xd9, 0x2080014a, gid, sizeof gid), GSPM_ERR_INVALID_OBJECT_HANDLE);
  /* FREE: the subdevice, then controls on it fail; the client takes the rest. */
  uint8_t fr[16] = {0};
  p32(fr, 0, CLIENT);
  p32(fr, 4, 0xd0);
  p32(fr, 8, 0xd1);
  uint8_t out[16];
  ck_assert_uint_eq(rpc(GSPM_FN_FREE, fr, sizeof fr, out, sizeof out), GSPM_OK);
  ck_assert_uint_eq(rm_ctrl(0xd1, 0x2080014a, gid, sizeof gid), GSPM_ERR_INVALID_OBJECT_HANDLE);
  ck_assert_uint_eq(rpc(GSPM_FN_FREE, fr, sizeof fr, out, sizeof out), GSPM_ERR_OBJECT_NOT_FOUND);
  ck_assert_uint_eq(g32(out, 12), GSPM_ERR_OBJECT_NOT_FOUND);
  p32(fr, 4, 0);
  p32(fr, 8, CLIENT);
  ck_assert_uint_eq(rpc(GSPM_FN_FREE, fr, sizeof fr, out, sizeof out), GSPM_OK);
  ck_assert_uint_eq(rm_ctrl(0xd0, 0x800201, cl, 16), GSPM_ERR_INVALID_CLIENT);
  ck_assert_msg(H.g.nfail == 0, "%s", H.g.fails);
  ck_assert_uint_eq(nvpci_gsp_rpcs(H.g.gsp), nvpci_gsp_served_fn(H.g.gsp, GSPM_FN_GSP_RM_ALLOC) +
                                                 nvpci_gsp_served_fn(H.g.gsp, GSPM_FN_GSP_RM_CONTROL) +
                                                 nvpci_gsp_served_fn(H.g.gsp, GSPM_FN_FREE));
  host_teardown();
}
END_TEST

/* UNLOADING_GUEST_DRIVER: answered, then GSP-RM stops and reads no more. */
START_TEST(unloading_stops) {
  boot();
  uint8_t p[8] = {0};
  p32(p, 4, 1u << 6);
  ck_assert_uint_eq(rpc(GSPM_FN_UNLOADING_GUEST_DRIVER, p, sizeof p, NULL, 0), GSPM_OK);
  ck_assert(!nvpci_gsp_running(H.g.gsp));
  queue_rpc(200, p, sizeof p);
  nvpci_gsp_notify(H.g.gsp);
  uint32_t fn, res;
  ck_assert_int_lt(recv_msg(&fn, &res, NULL, 0), 0);
  /* A reset, and GSP boots again on fresh queues. */
  nvpci_gsp_reset(H.g.gsp);
  host_teardown();
  setup_ad();
  boot();
}
END_TEST

/* RM picks the handle when hObject is 0; NV01_ROOT_CLIENT (0x41) works as class 0 does. */
START_TEST(rm_chosen_handle) {
  boot();
  ck_assert_uint_eq(rm_alloc(CLIENT, 0, CLIENT, 0x41, 0), GSPM_OK);
  uint8_t p[32 + 56] = {0}, out[32 + 56];
  p32(p, 0, CLIENT);
  p32(p, 4, CLIENT);
  p32(p, 12, 0x80);
  p32(p, 20, 56);
  ck_assert_uint_eq(rpc(GSPM_FN_GSP_RM_ALLOC, p, sizeof p, out, sizeof out), GSPM_OK);
  uint32_t hdev = g32(out, 8);
  ck_assert_uint_eq(hdev, 0xcaf00000u);
  ck_assert_uint_eq(rm_alloc(CLIENT, hdev, 0xd1, 0x2080, 0), GSPM_OK); /* subdevice params are optional */
  uint8_t cl[16] = {0};
  ck_assert_uint_eq(rm_ctrl(hdev, 0x800201, cl, sizeof cl), GSPM_OK);
  ck_assert_uint_gt(g32(cl, 0), 3);
}
END_TEST

/* A function-level reset stops GSP-RM and empties its object table; it boots again on fresh queues. */
START_TEST(reset_clears) {
  boot();
  ck_assert_uint_eq(rm_alloc(CLIENT, 0, CLIENT, 0, 0), GSPM_OK);
  nvpci_gsp_reset(H.g.gsp);
  ck_assert(!nvpci_gsp_running(H.g.gsp));
  ck_assert_uint_eq(nvpci_gsp_rpcs(H.g.gsp), 0);
  host_requeue();
  boot();
  ck_assert_uint_eq(rm_alloc(CLIENT, 0, CLIENT, 0, 0), GSPM_OK); /* the old client is gone */
}
END_TEST

/* The host stops reading: GSP fills the status queue to msgCount-1 and no further, then stops taking commands; once
 * the host reads, the held replies follow in order. */
START_TEST(status_queue_not_overrun) {
  boot();
  ck_assert_uint_eq(rm_alloc(CLIENT, 0, CLIENT, 0, 0), GSPM_OK);
  ck_assert_uint_eq(rm_alloc(CLIENT, CLIENT, 0xd0, 0x80, 56), GSPM_OK);
  ck_assert_uint_eq(rm_alloc(CLIENT, 0xd0, 0xd1, 0x2080, 4), GSPM_OK);
  uint8_t p[24 + 268] = {0};
  p32(p, 0, CLIENT);
  p32(p, 4, 0xd1);
  p32(p, 8, 0x2080014a);
  p32(p, 16, 268);
  p32(p, 24 + 4, 2);
  unsigned sent = 0;
  uint32_t unread_seq = 0;
  while (cmd_free() > 0) {
    queue_rpc(GSPM_FN_GSP_RM_CONTROL, p, sizeof p);
    sent++;
    nvpci_gsp_notify(H.g.gsp);
    uint32_t used = (g32(H.shm, STATQ + 16) + QCNT - H.stat_rptr) % QCNT;
    ck_assert_uint_le(used, QCNT - 1);
    /* The oldest unread element keeps its content (nothing written over it). */
    if (sent > 1)
      ck_assert_uint_eq(g32(H.shm + STATQ + 0x1000 + (size_t)H.stat_rptr * 0x1000, 36), unread_seq);
    else
      unread_seq = g32(H.shm + STATQ + 0x1000 + (size_t)H.stat_rptr * 0x1000, 36);
    ck_assert_uint_lt(sent, 200);
  }
  ck_assert_uint_eq((g32(H.shm, STATQ + 16) + QCNT - H.stat_rptr) % QCNT, QCNT - 1);
  unsigned got = 0;
  uint32_t fn, res;
  for (int round = 0; round < 10 && got < sent; round++) {
    while (recv_msg(&fn, &res, NULL, 0) >= 0) {
      ck_assert_uint_eq(fn, GSPM_FN_GSP_RM_CONTROL);
      ck_assert_uint_eq(res, GSPM_OK);
      got++;
    }
    nvpci_gsp_notify(H.g.gsp);
  }
  ck_assert_uint_eq(got, sent);
  ck_assert_msg(H.g.nfail == 0, "%s", H.g.fails);
}
END_TEST

/* ---- SET_PAGE_DIRECTORY and translation ---- */

/* The root table's entry count of the chip's format (dev_mmu.h: v2 PDE3 VA 48:47, v3 PDE4 VA 56). */
static uint32_t root_entries(void) { return H.ci->sm >= 0x900 ? 2 : 4; }

/* rpc_set_page_directory_v1E_05 (g_rpc-structures.h 570): hClient, hDevice, pasid, then
 * NV0080_CTRL_DMA_SET_PAGE_DIRECTORY_PARAMS_v1E_05 at 16 (physAddress u64, numEntries, flags, hVASpace, chId,
 * subDeviceId, pasid), 48 bytes. */
static uint32_t set_pd(uint32_t hc, uint32_t hd, uint32_t hva, uint64_t pa, uint32_t entries, uint32_t flags,
                       size_t len) {
  uint8_t p[48] = {0}, out[48];
  p32(p, 0, hc);
  p32(p, 4, hd);
  p32(p, 8, 0xffffffffu);
  p64(p, 16, pa);
  p32(p, 24, entries);
  p32(p, 28, flags);
  p32(p, 32, hva);
  p32(p, 40, 1); /* subDeviceId: subdevice 0 + 1 */
  p32(p, 44, 0xffffffffu);
  return rpc(GSPM_FN_SET_PAGE_DIRECTORY, p, len, out, sizeof out);
}

/* Client 0xd0 device, 0xd1 subdevice, 0xd2 and 0xd3 VA spaces (NV_VASPACE_ALLOCATION_PARAMETERS, 48 bytes). */
static void vm_objects(void) {
  ck_assert_uint_eq(rm_alloc(CLIENT, 0, CLIENT, 0, 120), GSPM_OK);
  ck_assert_uint_eq(rm_alloc(CLIENT, CLIENT, 0xd0, 0x80, 56), GSPM_OK);
  ck_assert_uint_eq(rm_alloc(CLIENT, 0xd0, 0xd1, 0x2080, 4), GSPM_OK);
  ck_assert_uint_eq(rm_alloc(CLIENT, 0xd0, 0xd2, 0x90f1, 48), GSPM_OK);
  ck_assert_uint_eq(rm_alloc(CLIENT, 0xd0, 0xd3, 0x90f1, 48), GSPM_OK);
  ck_assert_uint_eq(rm_alloc(CLIENT, 0xd0, 0xd4, 0x90f1, 56), GSPM_ERR_INVALID_ARGUMENT); /* 580's size (pasid) */
}

/* A good SET_PAGE_DIRECTORY is recorded; each wrong one gets RM's status and changes nothing. */
START_TEST(set_page_directory) {
  host_setup(&CHIPS[_i]);
  boot();
  vm_objects();
  const uint32_t all = 0x8, n = root_entries(), other = n == 4 ? 2 : 4;
  uint32_t c, va;
  uint64_t root;
  unsigned ne;
  ck_assert_int_eq(nvpci_gsp_page_directory(H.g.gsp, &c, &va, &root, &ne), -1);
  ck_assert_uint_eq(set_pd(0xc1e00099, 0xd0, 0xd2, 0x100000, n, all, 48), GSPM_ERR_INVALID_CLIENT);
  ck_assert_uint_eq(set_pd(CLIENT, 0xd1, 0xd2, 0x100000, n, all, 48), GSPM_ERR_INVALID_OBJECT_HANDLE); /* not a device */
  ck_assert_uint_eq(set_pd(CLIENT, 0xd0, 0xd1, 0x100000, n, all, 48), GSPM_ERR_INVALID_OBJECT_HANDLE); /* not a VA space */
  ck_assert_uint_eq(set_pd(CLIENT, 0xd0, 0xd9, 0x100000, n, all, 48), GSPM_ERR_INVALID_OBJECT_HANDLE); /* no object */
  ck_assert_uint_eq(set_pd(CLIENT, 0xd0, 0xd2, 0x100800, n, all, 48), GSPM_ERR_INVALID_ARGUMENT);     /* unaligned */
  ck_assert_uint_eq(set_pd(CLIENT, 0xd0, 0xd2, VRAM_SIZE, n, all, 48), GSPM_ERR_INVALID_ARGUMENT);    /* outside */
  ck_assert_uint_eq(set_pd(CLIENT, 0xd0, 0xd2, 0x100000, other, all, 48), GSPM_ERR_INVALID_ARGUMENT); /* other format */
  ck_assert_uint_eq(set_pd(CLIENT, 0xd0, 0xd2, 0x100000, n, 0, 48), GSPM_ERR_INVALID_ARGUMENT);       /* no ALL_CHANNELS */
  ck_assert_uint_eq(set_pd(CLIENT, 0xd0, 0xd2, 0x100000, n, all | 1, 48), GSPM_ERR_INVALID_ARGUMENT); /* sysmem root */
  ck_assert_int_eq(nvpci_gsp_page_directory(H.g.gsp, &c, &va, &root, &ne), -1);
  ck_assert_msg(H.g.nfail == 0, "%s", H.g.fails);
  ck_assert_uint_eq(set_pd(CLIENT, 0xd0, 0xd2, 0x100000, n, all, 40), GSPM_ERR_INVALID_ARGUMENT); /* short payload */
  expect_fail("SET_PAGE_DIRECTORY payload of 40 bytes");
  ck_assert_uint_eq(set_pd(CLIENT, 0xd0, 0xd2, 0x100000, n, all, 48), GSPM_OK);
  ck_assert_int_eq(nvpci_gsp_page_directory(H.g.gsp, &c, &va, &root, &ne), 0);
  ck_assert_uint_eq(c, CLIENT);
  ck_assert_uint_eq(va, 0xd2);
  ck_assert_uint_eq(root, 0x100000);
  ck_assert_uint_eq(ne, n);
  ck_assert_uint_eq(set_pd(CLIENT, 0xd0, 0xd3, VRAM_SIZE - 0x1000, n, all | 0x10, 48), GSPM_OK); /* the last one set */
  ck_assert_int_eq(nvpci_gsp_page_directory(H.g.gsp, &c, &va, &root, &ne), 0);
  ck_assert_uint_eq(va, 0xd3);
  ck_assert_uint_eq(root, VRAM_SIZE - 0x1000);
  ck_assert_uint_eq(nvpci_gsp_served_fn(H.g.gsp, GSPM_FN_SET_PAGE_DIRECTORY), 12);
  /* FREE of the VA space takes its root with it. */
  uint8_t fr[16] = {0}, out[16];
  p32(fr, 0, CLIENT);
  p32(fr, 4, 0xd0);
  p32(fr, 8, 0xd3);
  ck_assert_uint_eq(rpc(GSPM_FN_FREE, fr, sizeof fr, out, sizeof out), GSPM_OK);
  ck_assert_int_eq(nvpci_gsp_page_directory(H.g.gsp, &c, &va, &root, &ne), -1);
  ck_assert_msg(H.g.nfail == 0, "%s", H.g.fails);
  host_teardown();
}
END_TEST

/* Page-table entries written from dev_mmu.h (open-gpu-kernel-modules ga100 and gh100), not from any driver's encoder.
 * v2: PDE APERTURE 2:1 = 1 (video memory), ADDRESS 53:8 = pa >> 12; PTE VALID 0, APERTURE 2:1 = 0, ADDRESS 53:8.
 * v3: PDE APERTURE 2:1 = 1, ADDRESS 51:12 = the address itself; PTE VALID 0, APERTURE 2:1 = 0, ADDRESS 51:12.
 * The dual PDE0 has the small-page table's pointer in its high qword. */
static uint64_t pde_of(uint64_t pa) { return H.ci->sm >= 0x900 ? (pa | 2) : (pa >> 12 << 8 | 2); }
static uint64_t pte_of(uint64_t pa) { return H.ci->sm >= 0x900 ? (pa | 1) : (pa >> 12 << 8 | 1); }

/* Map the 4 KiB page at va to pa in tables from `next` on; the root at root. Returns the next free table. */
static uint64_t map4k(uint64_t root, uint64_t next, uint64_t va, uint64_t pa) {
  static const unsigned lo_v2[] = {47, 38, 29, 21, 12}, lo_v3[] = {56, 47, 38, 29, 21, 12};
  const bool v3 = H.ci->sm >= 0x900;
  const unsigned *lo = v3 ? lo_v3 : lo_v2;
  const int nlv = v3 ? 6 : 5;
  uint64_t table = root;
  for (int l = 0; l < nlv; l++) {
    unsigned bits = l == 0 ? (v3 ? 1 : 2) : lo[l - 1] - lo[l];
    uint64_t idx = va >> lo[l] & ((1ull << bits) - 1);
    bool dual = l == nlv - 2, last = l == nlv - 1;
    uint8_t *e = H.g.vram + table + idx * (dual ? 16 : 8) + (dual ? 8 : 0);
    if (last) {
      p64(e, 0, pte_of(pa));
      break;
    }
    uint64_t have = gspm_g64(e, 0);
    if (!have) {
      p64(e, 0, pde_of(next));
      table = next;
      next += 0x1000;
    } else {
      table = v3 ? have & 0x000ffffffffff000ull : (have >> 8) << 12 & 0x003ffffffffff000ull;
    }
  }
  return next;
}

/* nvpci_translate walks the root the last SET_PAGE_DIRECTORY named, with the chip's format. */
START_TEST(translate_recorded_root) {
  host_setup(&CHIPS[_i]);
  boot();
  vm_objects();
  uint64_t pa = 0;
  int aper = -1;
  char why[256];
  ck_assert_int_eq(nvpci_translate(&H.g, 0x10000, &pa, &aper, why, sizeof why), -NVPCI_MMU_UNMAPPED);
  ck_assert_msg(strstr(why, "SET_PAGE_DIRECTORY"), "%s", why);
  /* Two VA spaces: roots at 1 MiB and 2 MiB, the same VA to different pages. */
  const uint64_t va = 0x7f0012345000ull;
  uint64_t next = map4k(0x100000, 0x101000, va, 0x1234000);
  map4k(0x100000, next, va + 0x200000, 0x1236000);
  map4k(0x200000, 0x201000, va, 0x1800000);
  ck_assert_uint_eq(set_pd(CLIENT, 0xd0, 0xd2, 0x100000, root_entries(), 0x8, 48), GSPM_OK);
  ck_assert_int_eq(nvpci_translate(&H.g, va + 0x45, &pa, &aper, why, sizeof why), 0);
  ck_assert_uint_eq(pa, 0x1234045);
  ck_assert_int_eq(aper, NVPCI_MMU_APER_VID);
  ck_assert_int_eq(nvpci_translate(&H.g, va + 0x200ff8, &pa, &aper, why, sizeof why), 0);
  ck_assert_uint_eq(pa, 0x1236ff8);
  ck_assert_int_eq(nvpci_translate(&H.g, va + 0x1000, &pa, &aper, why, sizeof why), -NVPCI_MMU_UNMAPPED);
  ck_assert_msg(strstr(why, "PTE"), "%s", why);
  ck_assert_uint_eq(set_pd(CLIENT, 0xd0, 0xd3, 0x200000, root_entries(), 0x8, 48), GSPM_OK);
  ck_assert_int_eq(nvpci_translate(&H.g, va + 0x10, &pa, &aper, why, sizeof why), 0);
  ck_assert_uint_eq(pa, 0x1800010);
  ck_assert_int_eq(nvpci_gsp_mmu_version(H.g.gsp), H.ci->sm >= 0x900 ? 3 : 2);
  ck_assert_msg(H.g.nfail == 0, "%s", H.g.fails);
  host_teardown();
}
END_TEST

/* ---- channels: the RM object graph a bare-metal driver builds, and GPFIFO execution ----
 * Written from open-gpu-kernel-modules 570 layouts (alloc_channel.h NV_CHANNEL_ALLOC_PARAMS, ctrl2080gpu.h
 * PROMOTE_CTX, ctrl90f1.h COPY_SERVER_RESERVED_PDES), tinygrad's graph (runtime/support/nv/ip.py init_golden_image,
 * rpc_rm_alloc; ops_nv.py _new_gpu_fifo), NVIDIA/open-gpu-doc clc56f.h (GPFIFO entry, method header, semaphores),
 * clc7b5.h (LAUNCH_DMA), clc6c0qmd.h / clcbc0qmd.h (QMD V03 / V04 fields), clcec0qmd.h (QMD V05, tinygrad
 * extra/nv_gpu_driver/clcec0qmd.h). */

#define C1 0xc1000000u
enum { CH_PSIZE = 368, GR_MAIN = 0x400000, GR_PM = 0x600000, GR_PATCH = 0x620000 };

static uint32_t alloc_c(uint32_t hc, uint32_t hp, uint32_t ho, uint32_t cls, const void *prm, uint32_t psize) {
  uint8_t p[32 + 400] = {0}, out[32 + 400];
  p32(p, 0, hc);
  p32(p, 4, hp);
  p32(p, 8, ho);
  p32(p, 12, cls);
  p32(p, 20, psize);
  if (prm) memcpy(p + 32, prm, psize);
  uint32_t res = rpc(GSPM_FN_GSP_RM_ALLOC, p, 32 + psize, out, sizeof out);
  ck_assert_uint_eq(g32(out, 16), res);
  return res;
}
static uint32_t ctrl_c(uint32_t hc, uint32_t ho, uint32_t cmd, uint8_t *params, uint32_t psize) {
  uint8_t *p = calloc(1, 24 + (size_t)psize), *out = calloc(1, 24 + (size_t)psize);
  p32(p, 0, hc);
  p32(p, 4, ho);
  p32(p, 8, cmd);
  p32(p, 16, psize);
  memcpy(p + 24, params, psize);
  uint32_t res = rpc(GSPM_FN_GSP_RM_CONTROL, p, 24 + (size_t)psize, out, 24 + (size_t)psize);
  memcpy(params, out + 24, psize);
  free(p);
  free(out);
  return res;
}
static void mem_desc(uint8_t *d, uint64_t base, uint64_t size, uint32_t as) {
  p64(d, 0, base);
  p64(d, 8, size);
  p32(d, 16, as);
}
/* A user channel (ip.py rpc_rm_alloc for gpfifo_class): ring at ring_va, USERD after it, a 4 KiB VRAM page for RAMFC
 * and the instance block, 0x5000 B of method buffer, no error notifier. */
static void user_chan(uint8_t *p, uint64_t ring_va, uint32_t share, uint64_t userd_pa, uint64_t inst_pa) {
  memset(p, 0, CH_PSIZE);
  p64(p, 8, ring_va);
  p32(p, 16, 0x400);
  p32(p, 24, share);
  p64(p, 64, 0x400 * 8);
  mem_desc(p + 144, inst_pa, 0x1000, 2);
  mem_desc(p + 168, userd_pa, 0x400, 2);
  mem_desc(p + 192, inst_pa, 0x200, 2);
  mem_desc(p + 216, inst_pa + 0x10000, 0x5000, 2);
  mem_desc(p + 248, 0, 0xecc, 0);
}
static uint32_t promote(uint32_t hc, uint32_t hsub, uint32_t hchan, const uint32_t *ids, unsigned n, bool phys,
                        bool virt) {
  uint8_t p[560] = {0};
  static const uint64_t pa[3] = {GR_MAIN, GR_PM, GR_PATCH};
  p32(p, 0, 1);
  p32(p, 12, hc);
  p32(p, 16, hchan);
  p32(p, 40, n);
  for (unsigned i = 0; i < n; i++) {
    uint8_t *e = p + 48 + 32 * i;
    uint32_t id = ids[i];
    if (phys) p64(e, 0, id < 3 ? pa[id] : 0x680000), p64(e, 16, id == 0 ? 0x1e0000 : 0x20000), p32(e, 24, 4);
    if (virt) p64(e, 8, 0x50000000ull + 0x200000ull * id);
    e[28] = (uint8_t)id;
    e[30] = phys;
    e[31] = phys && !virt;
  }
  return ctrl_c(hc, hsub, 0x2080012b, p, sizeof p);
}
static uint32_t hdr(unsigned op, unsigned count, unsigned subc, uint32_t method) {
  return op << 29 | count << 16 | subc << 13 | method >> 2;
}
/* One GPFIFO entry for the pushbuffer at pb_va (ndw dwords), GPPut advanced, the doorbell rung. */
static void submit(uint64_t ring_pa, uint64_t userd_pa, uint32_t *put, uint64_t pb_va, uint32_t ndw, uint32_t token) {
  p32(H.g.vram, ring_pa + 8ull * *put, (uint32_t)pb_va & ~3u);
  p32(H.g.vram, ring_pa + 8ull * *put + 4, (uint32_t)(pb_va >> 32 & 0xff) | ndw << 10);
  *put = (*put + 1) % 0x400;
  p32(H.g.vram, userd_pa + 0x8c, *put);
  nvpci_gsp_doorbell(H.g.gsp, token);
  ck_assert_int_eq(nvpci_gsp_wait_idle(H.g.gsp, 5000), 0);
}
static void qset(uint8_t *q, unsigned hi, unsigned lo, uint32_t v) {
  for (unsigned b = lo; b <= hi; b++, v >>= 1) q[b / 8] = (uint8_t)((q[b / 8] & ~(1u << b % 8)) | (v & 1) << b % 8);
}
/* A QMD for one thread of the program at prog with constant bank 0 at cb (0x1000 B); V05 also releases a one-word
 * semaphore 0x5a5 at 0x30010030. */
static void make_qmd(uint8_t *q, unsigned major, uint64_t prog, uint64_t cb) {
  memset(q, 0, 384);
  if (major == 5) { /* NVCEC0_QMDV05_00_*: QMD_MAJOR_VERSION 471:468, QMD_TYPE GRID_CTA, REGISTER_COUNT 32 */
    qset(q, 471, 468, 5), qset(q, 153, 151, 2), qset(q, 1136, 1128, 32);
    qset(q, 1279, 1248, 1), qset(q, 1295, 1280, 1), qset(q, 1327, 1312, 1);          /* GRID_WIDTH/HEIGHT/DEPTH */
    qset(q, 1103, 1088, 1), qset(q, 1119, 1104, 1), qset(q, 1127, 1120, 1);          /* CTA_THREAD_DIMENSION0..2 */
    qset(q, 1856, 1856, 1), qset(q, 1375, 1344, (uint32_t)(cb >> 6)), qset(q, 1407, 1395, 0x100); /* CB 0 */
    qset(q, 1055, 1024, (uint32_t)(prog >> 4)), qset(q, 1076, 1056, (uint32_t)(prog >> 36)); /* PROGRAM_ADDRESS */
    qset(q, 288, 288, 1), qset(q, 290, 289, 1), qset(q, 511, 480, 0x30010030), qset(q, 575, 544, 0x5a5); /* release0 */
    return;
  }
  qset(q, 583, 580, major);
  if (major == 4) {
    qset(q, 1055, 1024, 1), qset(q, 1071, 1056, 1), qset(q, 1103, 1088, 1);
    qset(q, 1167, 1152, 1), qset(q, 1183, 1168, 1), qset(q, 1199, 1184, 1);
    qset(q, 416, 416, 1), qset(q, 1567, 1536, (uint32_t)(cb >> 6)), qset(q, 1599, 1587, 0x100);
    qset(q, 1247, 1216, (uint32_t)prog), qset(q, 1272, 1248, (uint32_t)(prog >> 32));
  } else {
    qset(q, 415, 384, 1), qset(q, 431, 416, 1), qset(q, 463, 448, 1);
    qset(q, 607, 592, 1), qset(q, 623, 608, 1), qset(q, 639, 624, 1);
    qset(q, 640, 640, 1), qset(q, 1055, 1024, (uint32_t)cb), qset(q, 1087, 1075, 0x100);
    qset(q, 1567, 1536, (uint32_t)prog), qset(q, 1584, 1568, (uint32_t)(prog >> 32));
  }
}
static const char KERNEL[] = ".version 7.0\n.target sm_80\n.address_size 64\n"
                             ".visible .entry k(.param .u64 out)\n{\n.reg .b64 %rd<2>;\n.reg .b32 %r<2>;\n"
                             "ld.param.u64 %rd1, [out];\nmov.u32 %r1, 42;\nst.global.u32 [%rd1], %r1;\nret;\n}\n";

START_TEST(channels_graph_and_execution) {
  host_setup(&CHIPS[_i]);
  boot();
  const bool v3 = H.ci->sm >= 0x900, gb = H.ci->sm >= 0xa00;
  const uint32_t gpf = H.ci->gpfifo, comp = H.ci->compute, copy = H.ci->copy, root = root_entries();
  uint8_t p[CH_PSIZE], c[1664];
  /* page tables: the driver's root at 1 MiB; rings, pushbuffers, data */
  uint64_t next = 0x101000;
  for (uint64_t k = 0; k < 3; k++) {
    next = map4k(0x100000, next, 0x10000000 + 0x1000 * k, 0x800000 + 0x1000 * k); /* compute ring + USERD */
    next = map4k(0x100000, next, 0x10100000 + 0x1000 * k, 0x900000 + 0x1000 * k); /* copy ring + USERD */
    next = map4k(0x100000, next, 0x10200000 + 0x1000 * k, 0x980000 + 0x1000 * k); /* third channel */
  }
  for (uint64_t k = 0; k < 4; k++) next = map4k(0x100000, next, 0x20000000 + 0x1000 * k, 0xb00000 + 0x1000 * k);
  next = map4k(0x100000, next, 0x30000000, 0xc00000); /* copy source: two pages, not contiguous */
  next = map4k(0x100000, next, 0x30001000, 0xc08000);
  next = map4k(0x100000, next, 0x30004000, 0xc10000); /* copy destination: two pages, not contiguous */
  next = map4k(0x100000, next, 0x30005000, 0xc18000);
  next = map4k(0x100000, next, 0x30010000, 0xc20000); /* semaphores and the kernel's output */
  ck_assert_uint_lt(next, 0x200000);

  /* golden context under C0 (ip.py init_golden_image) */
  ck_assert_uint_eq(rm_alloc(CLIENT, 0, CLIENT, 0, 120), GSPM_OK);
  ck_assert_uint_eq(rm_alloc(CLIENT, CLIENT, 0xd0, 0x80, 56), GSPM_OK);
  ck_assert_uint_eq(rm_alloc(CLIENT, 0xd0, 0xd1, 0x2080, 4), GSPM_OK);
  ck_assert_uint_eq(rm_alloc(CLIENT, 0xd0, 0xd2, 0x90f1, 48), GSPM_OK);
  ck_assert_uint_eq(set_pd(CLIENT, 0xd0, 0xd2, 0x100000, root, 0x8, 48), GSPM_OK);
  ck_assert_uint_eq(rm_alloc(CLIENT, 0xd0, 0xd3, 0x90f1, 48), GSPM_OK);
  uint8_t pd[184] = {0};
  static const uint8_t sh2[] = {47, 38, 29}, sh3[] = {56, 47, 38};
  p64(pd, 8, 512ull << 20);
  p64(pd, 16, 0x80000000ull);
  p64(pd, 24, 0x80000000ull + (512ull << 20) - 1);
  p32(pd, 32, 3);
  for (int i = 0; i < 3; i++) {
    uint8_t *l = pd + 40 + 24 * i;
    p64(l, 0, 0x210000 + 0x1000 * (uint64_t)i);
    p64(l, 8, i == 0 ? 8ull * root : 0x1000);
    p32(l, 16, 1);
    l[20] = v3 ? sh3[i] : sh2[i];
  }
  uint8_t bad[184];
  memcpy(bad, pd, sizeof bad);
  p32(bad + 40 + 24, 16, 2); /* a level in system memory */
  ck_assert_uint_eq(ctrl_c(CLIENT, 0xd3, 0x90f10106, bad, 184), GSPM_ERR_INVALID_ARGUMENT);
  memcpy(bad, pd, sizeof bad);
  bad[40 + 24 + 20] = 21; /* a pageShift the format does not have there */
  ck_assert_uint_eq(ctrl_c(CLIENT, 0xd3, 0x90f10106, bad, 184), GSPM_ERR_INVALID_ARGUMENT);
  ck_assert_uint_eq(ctrl_c(CLIENT, 0xd3, 0x90f10106, pd, 184), GSPM_OK);
  memset(p, 0, CH_PSIZE);
  p64(p, 8, 0x40000000);
  p32(p, 16, 32);
  p32(p, 28, 0xd3);
  p64(p, 64, 0x100);
  p32(p, 128, 1);
  p32(p, 132, 3);
  p32(p, 20, 0x200320);
  p32(p, 244, 0x1a);
  mem_desc(p + 168, 0x200100, 0x20, 2);
  mem_desc(p + 192, 0x201000, 0x200, 2);
  mem_desc(p + 144, 0x201000, 0x1000, 2);
  mem_desc(p + 216, 0x202000, 0x5000, 2);
  ck_assert_uint_eq(alloc_c(CLIENT, 0xd0, 0xd4, gpf, p, CH_PSIZE), GSPM_OK);
  memset(c, 0, sizeof c);
  ck_assert_uint_eq(ctrl_c(CLIENT, 0xd1, 0x20800a32, c, sizeof c), GSPM_OK);
  ck_assert_uint_ge(g32(c, 0), 0x1000); /* GRAPHICS */
  ck_assert_uint_ne(g32(c, 8 * 0x13 + 4), 0); /* ATTRIBUTE_CB's alignment */
  const uint32_t golden_ids[] = {0, 2, 9};
  ck_assert_uint_eq(promote(CLIENT, 0xd1, 0xd4, golden_ids, 3, true, true), GSPM_OK);
  ck_assert_uint_eq(alloc_c(CLIENT, 0xd4, 0xd5, comp, NULL, 0), GSPM_OK);
  ck_assert_uint_eq(alloc_c(CLIENT, 0xd4, 0xd6, copy, NULL, 0), GSPM_OK);

  /* user graph under C1 (ops_nv.py NVDevice.__init__, _new_gpu_fifo) */
  uint8_t q[56] = {0};
  ck_assert_uint_eq(alloc_c(C1, 0, C1, 0x41, NULL, 0), GSPM_OK);
  p32(q, 4, C1);
  p32(q, 48, 2); /* vaMode OPTIONAL_MULTIPLE_VASPACES */
  ck_assert_uint_eq(alloc_c(C1, C1, 0xe0, 0x80, q, 56), GSPM_OK);
  ck_assert_uint_eq(alloc_c(C1, 0xe0, 0xe1, 0x2080, NULL, 0), GSPM_OK);
  memset(q, 0, sizeof q);
  p64(q, 8, 0x1ffffffffffffull);
  ck_assert_uint_eq(alloc_c(C1, 0xe0, 0xe2, 0x70, q, 24), GSPM_OK);
  uint8_t boost[8] = {0};
  ck_assert_uint_eq(ctrl_c(C1, 0xe1, 0x2080200a, boost, 8), GSPM_OK);
  uint8_t va[48] = {0};
  p32(va, 4, 0x20 | 0x8);
  p64(va, 8, 0x1fffffb000000ull);
  p64(va, 40, 0x1000);
  ck_assert_uint_eq(alloc_c(C1, 0xe0, 0xe3, 0x90f1, va, 48), GSPM_OK);
  ck_assert_uint_eq(set_pd(C1, 0xe0, 0xe3, 0x100000, root, 0x8, 48), GSPM_OK);
  memset(q, 0, sizeof q);
  p32(q, 12, 77);
  ck_assert_uint_eq(alloc_c(C1, 0xe0, 0xe4, 0xa06c, q, 20), GSPM_ERR_INVALID_ARGUMENT); /* no engine type 77 */
  p32(q, 12, 1);
  ck_assert_uint_eq(alloc_c(C1, 0xe0, 0xe4, 0xa06c, q, 20), GSPM_OK);
  memset(q, 0, sizeof q);
  p32(q, 0, 0xe3);
  p32(q, 4, 1);
  ck_assert_uint_eq(alloc_c(C1, 0xe4, 0xe5, 0x9067, q, 12), GSPM_OK);
  /* refusals of a channel */
  user_chan(p, 0x10000000, 0xe5, 0x802000, 0xa00000);
  ck_assert_uint_eq(alloc_c(C1, 0xe4, 0xe6, gpf, p, 360), GSPM_ERR_INVALID_ARGUMENT);          /* params size */
  ck_assert_uint_eq(alloc_c(C1, 0xe1, 0xe6, gpf, p, CH_PSIZE), GSPM_ERR_INVALID_OBJECT_PARENT); /* subdevice */
  p32(p, 0, 0x800000);                                                                          /* tinygrad's paddr */
  ck_assert_uint_eq(alloc_c(C1, 0xe4, 0xe6, gpf, p, CH_PSIZE), GSPM_ERR_INVALID_OBJECT_HANDLE);
  p32(p, 0, 0);
  p32(p + 168, 16, 1); /* USERD in system memory */
  ck_assert_uint_eq(alloc_c(C1, 0xe4, 0xe6, gpf, p, CH_PSIZE), GSPM_ERR_INVALID_ARGUMENT);
  p32(p + 168, 16, 2);
  p64(p + 144, 0, VRAM_SIZE); /* instance block outside VRAM */
  ck_assert_uint_eq(alloc_c(C1, 0xe4, 0xe6, gpf, p, CH_PSIZE), GSPM_ERR_INVALID_ARGUMENT);
  p64(p + 144, 0, 0xa00000);
  p32(p, 24, 0xe3); /* hContextShare names the VA space */
  ck_assert_uint_eq(alloc_c(C1, 0xe4, 0xe6, gpf, p, CH_PSIZE), GSPM_ERR_INVALID_OBJECT_HANDLE);
  ck_assert_uint_eq(nvpci_gsp_channels(H.g.gsp), 1);
  /* the channels */
  user_chan(p, 0x10000000, 0xe5, 0x802000, 0xa00000);
  ck_assert_uint_eq(alloc_c(C1, 0xe4, 0xe6, gpf, p, CH_PSIZE), GSPM_OK);
  user_chan(p, 0x10100000, 0xe5, 0x902000, 0xa20000);
  ck_assert_uint_eq(alloc_c(C1, 0xe4, 0xe7, gpf, p, CH_PSIZE), GSPM_OK);
  user_chan(p, 0x10200000, 0xe5, 0x982000, 0xa40000);
  ck_assert_uint_eq(alloc_c(C1, 0xe4, 0xeb, gpf, p, CH_PSIZE), GSPM_OK);
  ck_assert_uint_eq(alloc_c(C1, 0xe4, 0xe8, comp, NULL, 0), GSPM_ERR_INVALID_OBJECT_PARENT); /* under the TSG */
  ck_assert_uint_eq(alloc_c(C1, 0xe6, 0xe8, comp, NULL, 0), GSPM_OK);
  ck_assert_uint_eq(alloc_c(C1, 0xe6, 0xef, comp, NULL, 0), GSPM_ERR_INVALID_STATE); /* a second compute object */
  ck_assert_uint_eq(alloc_c(C1, 0xe7, 0xe9, copy, NULL, 0), GSPM_OK);
  ck_assert_uint_eq(alloc_c(C1, 0xeb, 0xec, comp, NULL, 0), GSPM_OK);
  const uint32_t ids[] = {0, 1, 2}, bad_id[] = {13};
  ck_assert_uint_eq(promote(C1, 0xe1, 0xe2, ids, 3, true, false), GSPM_ERR_INVALID_CHANNEL); /* not a channel */
  ck_assert_uint_eq(promote(C1, 0xe1, 0xe6, bad_id, 1, true, false), GSPM_ERR_INVALID_ARGUMENT); /* buffer id */
  ck_assert_uint_eq(promote(C1, 0xe1, 0xe6, ids, 3, true, false), GSPM_OK);
  ck_assert_uint_eq(promote(C1, 0xe1, 0xe6, ids, 3, false, true), GSPM_OK);
  memset(q, 0, sizeof q);
  p32(q, 4, C1);
  p32(q, 8, 0xe9);
  ck_assert_uint_eq(alloc_c(C1, 0xe0, 0xea, 0x83de, q, 12), GSPM_ERR_INVALID_OBJECT_HANDLE); /* a copy object */
  p32(q, 8, 0xe8);
  ck_assert_uint_eq(alloc_c(C1, 0xe0, 0xea, 0x83de, q, 12), GSPM_OK);
  uint8_t tok[4] = {0};
  ck_assert_uint_eq(ctrl_c(C1, 0xe4, 0xc36f0108, tok, 4), GSPM_ERR_NOT_SUPPORTED); /* on the TSG */
  uint32_t token[3];
  const uint32_t chans[3] = {0xe6, 0xe7, 0xeb};
  for (int i = 0; i < 3; i++) {
    ck_assert_uint_eq(ctrl_c(C1, chans[i], 0xc36f0108, tok, 4), GSPM_OK);
    token[i] = g32(tok, 0) | (gb ? 1u << 30 : 0); /* runlist 0: GR0's */
  }
  ck_assert_uint_ne(token[0], token[1]);
  uint8_t sched[4] = {1};
  ck_assert_uint_eq(ctrl_c(C1, 0xe4, 0xa06c0101, sched, 4), GSPM_ERR_INVALID_PARAM_STRUCT);
  ck_assert_uint_eq(ctrl_c(C1, 0xe4, 0xa06c0101, sched, 2), GSPM_OK);
  ck_assert_uint_eq(nvpci_gsp_channels(H.g.gsp), 4);
  nvpci_chan_info ci;
  ck_assert_int_eq(nvpci_gsp_channel(H.g.gsp, 3, &ci), 0);
  ck_assert_int_eq(nvpci_gsp_channel(H.g.gsp, 4, &ci), -1);
  ck_assert_msg(H.g.nfail == 0, "%s", H.g.fails);

  /* a doorbell naming no scheduled channel */
  nvpci_gsp_doorbell(H.g.gsp, token[0] + 0x30);
  expect_fail("names no scheduled channel");
  /* copy channel: a copy across non-contiguous source pages, then a semaphore release */
  uint32_t put_c = 0, put_k = 0, put_t = 0;
  for (int i = 0; i < 0x1800; i++) H.g.vram[(i < 0x1000 ? 0xc00000 : 0xc08000 - 0x1000) + i] = (uint8_t)(i * 7);
  uint32_t pb[64], n = 0;
  pb[n++] = hdr(1, 1, 0, 0x0), pb[n++] = copy;
  pb[n++] = hdr(1, 4, 0, 0x400), pb[n++] = 0, pb[n++] = 0x30000000, pb[n++] = 0, pb[n++] = 0x30004800;
  pb[n++] = hdr(1, 1, 0, 0x418), pb[n++] = 0x1800;
  pb[n++] = hdr(1, 3, 0, 0x240), pb[n++] = 0, pb[n++] = 0x30010010, pb[n++] = 0x77;
  pb[n++] = hdr(1, 1, 0, 0x300), pb[n++] = 2 | 1 << 2 | 1 << 3 | 1 << 7 | 1 << 8;
  memcpy(H.g.vram + 0xb00000, pb, 4 * n);
  submit(0x900000, 0x902000, &put_c, 0x20000000, n, token[1]);
  ck_assert_msg(H.g.nfail == 0, "%s", H.g.fails);
  for (int i = 0; i < 0x1800; i++)
    ck_assert_uint_eq(H.g.vram[(i < 0x800 ? 0xc10800 : 0xc18000 - 0x800) + i], (uint8_t)(i * 7));
  ck_assert_uint_eq(g32(H.g.vram, 0xc20010), 0x77);
  ck_assert_uint_eq(g32(H.g.vram, 0x902088), 1); /* GPGet */
  /* compute channel: a host semaphore release and a launch of the kernel */
  memcpy(H.g.vram + 0xb03000, KERNEL, sizeof KERNEL);
  p64(H.g.vram, 0xb02000 + (gb ? 0x380 : 0x210), 0x30010020); /* the parameter: out (sm_100 on: after 0x380) */
  make_qmd(H.g.vram + 0xb01000, v3 ? (gb ? 5 : 4) : 3, 0x20003000, 0x20002000);
  n = 0;
  pb[n++] = hdr(1, 1, 0, 0x0), pb[n++] = comp;
  pb[n++] = hdr(1, 5, 0, 0x5c), pb[n++] = 0x30010000, pb[n++] = 0, pb[n++] = 0xabc, pb[n++] = 0, pb[n++] = 1;
  pb[n++] = hdr(1, 1, 0, 0x2b4), pb[n++] = 0x20001000 >> 8;
  pb[n++] = hdr(1, 1, 0, 0x2c0), pb[n++] = 9;
  memcpy(H.g.vram + 0xb00400, pb, 4 * n);
  submit(0x800000, 0x802000, &put_k, 0x20000400, n, token[0]);
  ck_assert_uint_eq(g32(H.g.vram, 0xc20000), 0xabc);
  ck_assert_msg(H.g.nfail == 0, "%s", H.g.fails);
  ck_assert_uint_eq(g32(H.g.vram, 0xc20020), 42);
  if (gb) { /* V05: release0 written; a QMDV05_01 (minor 1, the sub-task layout) is refused */
    ck_assert_uint_eq(g32(H.g.vram, 0xc20030), 0x5a5);
    qset(H.g.vram + 0xb01000, 467, 464, 1);
    memcpy(H.g.vram + 0xb00600, pb, 4 * n);
    submit(0x800000, 0x802000, &put_k, 0x20000600, n, token[0]);
    expect_fail("QMD_MINOR_VERSION 1");
  }
  /* the third channel had no PROMOTE_CTX: its launch is a failure */
  memcpy(H.g.vram + 0xb00800, pb, 4 * n);
  p32(H.g.vram, 0xb00800 + 4, comp);
  submit(0x980000, 0x982000, &put_t, 0x20000800, n, token[2]);
  expect_fail("no GR context");
  ck_assert_int_eq(nvpci_gsp_channel(H.g.gsp, 3, &ci), 0);
  ck_assert(ci.stopped && !ci.gr_context);
  /* a GPU fault: the copy engine reads an unmapped VA; the channel stops and GSP-RM posts MMU_FAULT_QUEUED */
  n = 0;
  pb[n++] = hdr(1, 4, 0, 0x400), pb[n++] = 0, pb[n++] = 0x3f000000, pb[n++] = 0, pb[n++] = 0x30004000;
  pb[n++] = hdr(1, 1, 0, 0x418), pb[n++] = 16;
  pb[n++] = hdr(1, 1, 0, 0x300), pb[n++] = 2 | 1 << 7 | 1 << 8;
  memcpy(H.g.vram + 0xb00c00, pb, 4 * n);
  submit(0x900000, 0x902000, &put_c, 0x20000c00, n, token[1]);
  expect_fail("MMU fault: copy engine read of unmapped GPU VA 0x3f000000");
  ck_assert_uint_eq(nvpci_gsp_mmu_faults(H.g.gsp), 1);
  uint32_t fn, res;
  ck_assert_int_ge(recv_msg(&fn, &res, NULL, 0), 0);
  ck_assert_uint_eq(fn, GSPM_EV_MMU_FAULT_QUEUED);
  ck_assert_msg(H.g.nfail == 0, "%s", H.g.fails);
  host_teardown();
}
END_TEST

static void plain_setup(void) { setup_ad(); }
static void plain_teardown(void) {
  ck_assert_msg(H.g.nfail == 0, "unexpected model failures:\n%s", H.g.fails);
  host_teardown();
}

int main(void) {
  pthread_mutexattr_t a;
  pthread_mutexattr_init(&a);
  pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&stand_in_lock, &a);
  pthread_mutexattr_destroy(&a);
  Suite *s = suite_create("nvpci-gsp");
  TCase *each = tcase_create("each-chip");
  tcase_set_timeout(each, 60);
  tcase_add_loop_test(each, boot_each_chip, 0, 4);
  tcase_add_loop_test(each, rm_objects_and_controls, 0, 4);
  tcase_add_loop_test(each, set_page_directory, 0, 4);
  tcase_add_loop_test(each, translate_recorded_root, 0, 4);
  tcase_add_loop_test(each, channels_graph_and_execution, 0, 4);
  suite_add_tcase(s, each);
  TCase *tc = tcase_create("ad102");
  tcase_set_timeout(tc, 60);
  tcase_add_checked_fixture(tc, plain_setup, plain_teardown);
  tcase_add_test(tc, init_done_needs_sequencer);
  tcase_add_test(tc, sequencer_order);
  tcase_add_loop_test(tc, bad_cmdq_header, 0, 7);
  tcase_add_loop_test(tc, bad_prequeued, 0, 6);
  tcase_add_test(tc, checksum_rejected);
  tcase_add_test(tc, sequence_rejected);
  tcase_add_loop_test(tc, elem_count_rejected, 0, 3);
  tcase_add_loop_test(tc, rpc_header_rejected, 0, 3);
  tcase_add_test(tc, unknown_function);
  tcase_add_test(tc, multi_element_wrap);
  tcase_add_loop_test(tc, continuation_joined, 0, 2);
  tcase_add_test(tc, unloading_stops);
  tcase_add_test(tc, rm_chosen_handle);
  tcase_add_test(tc, reset_clears);
  tcase_add_test(tc, status_queue_not_overrun);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int nf = srunner_ntests_failed(sr);
  srunner_free(sr);
  return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
