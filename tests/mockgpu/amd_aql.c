/* tests/mockgpu/amd_aql.c: the AQL packet processor of the emulated MI300 (amd_aql.h). Packet and structure layouts:
 * hsa.h (HSA Runtime specification), ROCm amd_hsa_queue.h / amd_hsa_signal.h; kernel descriptor: LLVM AMDGPUUsage. */
#include "amd_aql.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amd_engine.h"
#include "amd_internal.h"
#include "amd_pm4.h"
#include "amd_vm.h"
#include "mock_shm.h"
#ifdef BG_MOCK_CDNA3
#ifndef BG_MOCK_RDNA3
#error "the CDNA3 core shares the RDNA3 core's types and scalar cache (cdna3.h): build both"
#endif
#include "cdna3/cdna3.h"
#elif defined(BG_MOCK_RDNA3)
#include "rdna3/rdna3.h"
#endif

#define PKT_BYTES 64u
/* hsa_packet_header_t bit positions (hsa.h) */
#define HDR_TYPE(h) ((h) & 0xffu)
#define HDR_BARRIER(h) (((h) >> 8) & 1u)
#define HDR_ACQUIRE(h) (((h) >> 9) & 3u)
#define HDR_RELEASE(h) (((h) >> 11) & 3u)
/* amd_queue_t (amd_hsa_queue.h) byte offsets */
enum { AQ_READ_DISPATCH_ID = 128, AQ_READ_ID_OFFSET = 136, AQ_TMPRING = 140, AQ_SCRATCH_RSRC = 144,
       AQ_SCRATCH_BASE = 160, AQ_SCRATCH_SIZE = 168, AQ_PROPERTIES = 180 };
#define AQ_PROP_ENABLE_PROFILING (1u << 3) /* AMD_QUEUE_PROPERTIES_ENABLE_PROFILING */
/* amd_signal_t (amd_hsa_signal.h) byte offsets; 64-byte aligned (AMD_SIGNAL_ALIGN) */
enum { SIG_VALUE = 8, SIG_START_TS = 32, SIG_END_TS = 40, SIG_ALIGN = 64 };
/* kernel descriptor (AMDGPUUsage "Kernel Descriptor") byte offsets */
enum { KD_GROUP = 0, KD_PRIVATE = 4, KD_KERNARG_SIZE = 8, KD_ENTRY = 16, KD_RSRC3 = 44, KD_RSRC1 = 48, KD_RSRC2 = 52,
       KD_PROPS = 56, KD_PRELOAD = 58, KD_BYTES = 64 };
/* kernel_code_properties bits */
enum { KCP_PRIV_BUF = 1u << 0, KCP_DISPATCH_PTR = 1u << 1, KCP_QUEUE_PTR = 1u << 2, KCP_KERNARG_PTR = 1u << 3,
       KCP_DISPATCH_ID = 1u << 4, KCP_FLAT_SCRATCH_INIT = 1u << 5, KCP_PRIV_SIZE = 1u << 6,
       KCP_WAVE32 = 1u << 10, KCP_DYNAMIC_STACK = 1u << 11 };
#define KCP_KNOWN (0x7fu | KCP_WAVE32 | KCP_DYNAMIC_STACK)
/* COMPUTE_PGM_RSRC2 (gc_9_4_3_sh_mask.h): USER_SGPR [5:1], LDS_SIZE [23:15] in 128-dword blocks on gfx9 */
#define RSRC2_USER_SGPR(v) (((v) >> 1) & 0x1fu)
#define RSRC2_LDS_SHIFT 15
#define LDS_BLOCK 512u
#define LDS_MAX 65536u
#define MAX_WG_THREADS 1024u
/* COMPUTE_DISPATCH_INITIATOR: COMPUTE_SHADER_EN | FORCE_START_AT_000 (CS_W32_EN clear: wave64) */
#define INITIATOR_WAVE64 0x5u
/* amd_aql_pm4_ib_packet_t */
#define AMD_AQL_FORMAT_PM4_IB 1u
#define PM4_IB_HEADER 0xC0023F00u /* PACKET3(INDIRECT_BUFFER 0x3F, 2) */
#define PM4_IB_VALID (1u << 23)
#define PM4_IB_DW_REMAIN 10u

typedef struct aql {
  amd_engine e;
  const mock_amd_hqd9 *hqd[MOCK_GFX9_MAX_XCC]; /* queue 1 of each live XCC, XCC 0 first */
  unsigned nxcc;
  amd_vm vm;
  amd_pm4 *pm4;
  mock_amd_aql_stats st;
  mock_amd_pm4_stats pm4_st;
#ifdef BG_MOCK_RDNA3
  rdna3_kcache kcache;
#endif
} aql;

enum { X_OK = AMD_X_OK, X_HUNG = AMD_X_HUNG, X_STOPPED = AMD_X_STOPPED };

static int bad(aql *a, const amd_pk_src *s, const uint32_t *pk, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int bad(aql *a, const amd_pk_src *s, const uint32_t *pk, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  amd_engine_vbad(&a->e, s, "packet", pk, pk ? 16 : 0, fmt, ap);
  va_end(ap);
  a->st.hung = true;
  return X_HUNG;
}

uint64_t mock_amd_aql_xcc_share(uint64_t total, unsigned xcc, unsigned nxcc) {
  if (nxcc <= 1) return total;
  return total / nxcc + (xcc < total % nxcc ? 1 : 0);
}

static uint64_t u64at(const uint32_t *pk, unsigned byte) { return (uint64_t)pk[byte / 4 + 1] << 32 | pk[byte / 4]; }
static uint32_t u16at(const uint32_t *pk, unsigned byte) { return (pk[byte / 4] >> (byte % 4 * 8)) & 0xffffu; }

static uint64_t ring_bytes(const aql *a) { return 8ull << (a->hqd[0]->q.pq_control & 0x3f); }
static uint64_t pkt_va(const aql *a, uint64_t idx) { return a->hqd[0]->q.pq_base + idx * PKT_BYTES % ring_bytes(a); }

/* The signal's value word, writable, or NULL after recording the failure (what names the field). */
static int64_t *signal_value(aql *a, const amd_pk_src *s, const uint32_t *pk, uint64_t handle, const char *what) {
  if (handle % SIG_ALIGN) {
    bad(a, s, pk, "%s 0x%" PRIx64 " is not a 64-byte aligned amd_signal_t (AMD_SIGNAL_ALIGN)", what, handle);
    return NULL;
  }
  char why[256];
  size_t avail;
  uint8_t *h = amd_vm_xlate(&a->vm, handle + SIG_VALUE, true, &avail, why, sizeof(why));
  if (!h) {
    amd_vm_fault(a->e.g, "CP AQL signal", AMD_VM_CID_CPC, handle + SIG_VALUE, true, avail == 0, why);
    bad(a, s, pk, "%s 0x%" PRIx64 ": its value is not mapped writable", what, handle);
    return NULL;
  }
  return (int64_t *)(void *)h;
}

static int amd_queue_u32(aql *a, unsigned off, uint32_t *v) {
  return amd_vm_read(&a->vm, a->hqd[0]->q.rptr_report - AQ_READ_DISPATCH_ID + off, v, 4, "CP amd_queue_t", AMD_VM_CID_CPC);
}

static int complete(aql *a, const amd_pk_src *s, const uint32_t *pk, uint64_t t0) {
  uint64_t handle = u64at(pk, 56);
  if (!handle) return X_OK;
  int64_t *v = signal_value(a, s, pk, handle, "completion_signal");
  if (!v) return X_HUNG;
  uint32_t props = 0;
  if (amd_queue_u32(a, AQ_PROPERTIES, &props) < 0) return bad(a, s, pk, "amd_queue_t not readable");
  if ((props & AQ_PROP_ENABLE_PROFILING) &&
      (amd_vm_store(&a->vm, handle + SIG_START_TS, t0, 8, "CP AQL signal", AMD_VM_CID_CPC) < 0 ||
       amd_vm_store(&a->vm, handle + SIG_END_TS, amd_gpu_clock(), 8, "CP AQL signal", AMD_VM_CID_CPC) < 0))
    return bad(a, s, pk, "completion_signal 0x%" PRIx64 ": start_ts/end_ts not writable", handle);
  __atomic_fetch_sub(v, 1, __ATOMIC_ACQ_REL);
  a->st.completions++;
  return X_OK;
}

/* ---------------- barriers ---------------- */

static int barrier(aql *a, const amd_pk_src *s, const uint32_t *pk, bool any) {
  const char *name = any ? "BARRIER_OR" : "BARRIER_AND";
  if (u16at(pk, 2) || pk[1] || pk[12] || pk[13])
    return bad(a, s, pk, "%s with reserved0/reserved1/reserved2 not 0", name);
  int64_t *dep[5];
  unsigned n = 0;
  for (unsigned i = 0; i < 5; i++) {
    uint64_t h = u64at(pk, 8 + 8 * i);
    if (!h) continue;
    char what[32];
    snprintf(what, sizeof(what), "dep_signal[%u]", i);
    if (!(dep[n++] = signal_value(a, s, pk, h, what))) return X_HUNG;
  }
  any ? a->st.barriers_or++ : a->st.barriers_and++;
  for (unsigned us = 10;; us = us < 1000 ? us * 2 : 1000) {
    unsigned zero = 0;
    for (unsigned i = 0; i < n; i++) zero += __atomic_load_n(dep[i], __ATOMIC_ACQUIRE) == 0;
    if (n == 0 || (any ? zero > 0 : zero == n)) return X_OK;
    if (!amd_engine_sleep(&a->e, us) || !amd_engine_alive(&a->e)) return X_STOPPED;
  }
}

/* ---------------- vendor-specific: a PM4 IB ---------------- */

static int vendor_ib(aql *a, const amd_pk_src *s, const uint32_t *pk) {
  if (u16at(pk, 2) != AMD_AQL_FORMAT_PM4_IB)
    return bad(a, s, pk, "VENDOR_SPECIFIC amd_format %u (only AMD_AQL_FORMAT_PM4_IB 1)", u16at(pk, 2));
  if (pk[1] != PM4_IB_HEADER || !(pk[4] & PM4_IB_VALID) || ((pk[4] >> 24) & 0xf))
    return bad(a, s, pk, "VENDOR_SPECIFIC PM4_IB: ib_jump_cmd 0x%08x .. 0x%08x is not INDIRECT_BUFFER (0x%08x) with "
               "VALID and VMID 0", pk[1], pk[4], PM4_IB_HEADER);
  if (pk[5] != PM4_IB_DW_REMAIN) return bad(a, s, pk, "VENDOR_SPECIFIC PM4_IB: dw_cnt_remain %u (expected 10)", pk[5]);
  for (unsigned i = 6; i < 14; i++)
    if (pk[i]) return bad(a, s, pk, "VENDOR_SPECIFIC PM4_IB: reserved dword %u is 0x%x (expected 0)", i, pk[i]);
  uint64_t va = (uint64_t)(pk[3] & 0xffff) << 32 | pk[2];
  if (va & 3) return bad(a, s, pk, "VENDOR_SPECIFIC PM4_IB: IB address 0x%" PRIx64 " not dword aligned", va);
  a->st.vendor_ibs++;
  for (unsigned k = 0; k < a->nxcc; k++) { /* every XCC's CP executes the IB */
    uint64_t before = a->pm4_st.packets, waits = a->pm4_st.waits;
    int r = amd_pm4_ib_run(a->pm4, &a->vm, k, va, pk[4] & 0xfffff, &a->pm4_st);
    a->st.pm4_packets += a->pm4_st.packets - before;
    a->st.pm4_waits += a->pm4_st.waits - waits;
    if (r == X_HUNG) a->st.hung = true;
    if (r != X_OK) return r;
  }
  return X_OK;
}

/* ---------------- kernel dispatch ---------------- */

#ifdef BG_MOCK_CDNA3
typedef struct shader_mem {
  amd_vm vm;
  bool faulted;
  const amd_engine *e;
} shader_mem;

static bool shader_preempted(void *ctx) { return amd_engine_preempted(((shader_mem *)ctx)->e); }

static uint8_t *shader_xlate(void *ctx, uint64_t va, bool write, size_t *avail) {
  shader_mem *m = ctx;
  char why[256];
  uint8_t *h = amd_vm_xlate(&m->vm, va, write, avail, why, sizeof(why));
  if (!h && !m->faulted) {
    m->faulted = true;
    amd_vm_fault(m->vm.g, "shader", AMD_VM_CID_TCP, va, write, *avail == 0, why);
  }
  return h;
}
#endif

/* The dispatch's register values (rdna3_dispatch fields) from the packet and its kernel descriptor. */
typedef struct dispatch_regs {
  uint64_t pgm;
  uint32_t rsrc1, rsrc2, rsrc3, user[16], nuser, wg[3], ngroups[3], tmpring;
  uint64_t scratch_base, scratch_per_xcc;
  bool scratch_rsrc;
} dispatch_regs;

static int check_grid(aql *a, const amd_pk_src *s, const uint32_t *pk, dispatch_regs *r) {
  uint32_t setup = u16at(pk, 2), dims = setup & 3;
  if (dims == 0 || (setup & ~3u))
    return bad(a, s, pk, "KERNEL_DISPATCH setup 0x%x: dimensions must be 1..3 and the other setup bits 0", setup);
  uint64_t threads = 1;
  for (unsigned k = 0; k < 3; k++) {
    uint32_t wg = u16at(pk, 4 + 2 * k), grid = pk[3 + k];
    if (k >= dims && (wg != 1 || grid != 1))
      return bad(a, s, pk, "KERNEL_DISPATCH workgroup_size_%c %u / grid_size_%c %u: an unused dimension must be 1",
                 "xyz"[k], wg, "xyz"[k], grid);
    if (wg == 0 || grid == 0 || grid % wg)
      return bad(a, s, pk, "KERNEL_DISPATCH grid_size_%c %u with workgroup_size_%c %u: both must be >= 1 and the grid a "
                 "multiple of the work-group (partial work-groups are not modelled)", "xyz"[k], grid, "xyz"[k], wg);
    threads *= wg;
    r->wg[k] = wg, r->ngroups[k] = grid / wg;
  }
  if (threads > MAX_WG_THREADS)
    return bad(a, s, pk, "KERNEL_DISPATCH work-group of %" PRIu64 " threads (at most %u)", threads, MAX_WG_THREADS);
  if (u16at(pk, 10)) return bad(a, s, pk, "KERNEL_DISPATCH reserved0 0x%x (expected 0)", u16at(pk, 10));
  return X_OK;
}

static int read_kd(aql *a, const amd_pk_src *s, const uint32_t *pk, uint64_t dispatch_va, uint64_t index,
                   dispatch_regs *r) {
  uint64_t kd_va = u64at(pk, 32), kargs = u64at(pk, 40);
  uint32_t private_size = pk[6], group_size = pk[7];
  uint8_t kd[KD_BYTES];
  if (!kd_va || kd_va % 64) return bad(a, s, pk, "KERNEL_DISPATCH kernel_object 0x%" PRIx64 " not a 64-byte aligned kernel "
                                       "descriptor", kd_va);
  if (amd_vm_read(&a->vm, kd_va, kd, sizeof(kd), "CP kernel descriptor fetch", AMD_VM_CID_CPC) < 0)
    return bad(a, s, pk, "KERNEL_DISPATCH kernel_object 0x%" PRIx64 " not mapped", kd_va);
  if (kargs % 16) return bad(a, s, pk, "KERNEL_DISPATCH kernarg_address 0x%" PRIx64 " not 16-byte aligned", kargs);
  uint16_t props, preload;
  int64_t entry;
  memcpy(&props, kd + KD_PROPS, 2), memcpy(&preload, kd + KD_PRELOAD, 2), memcpy(&entry, kd + KD_ENTRY, 8);
  memcpy(&r->rsrc1, kd + KD_RSRC1, 4), memcpy(&r->rsrc2, kd + KD_RSRC2, 4), memcpy(&r->rsrc3, kd + KD_RSRC3, 4);
  if (props & KCP_WAVE32)
    return bad(a, s, pk, "kernel descriptor 0x%" PRIx64 ": kernel_code_properties ENABLE_WAVEFRONT_SIZE32 on gfx9 (wave64 "
               "only)", kd_va);
  if (props & KCP_FLAT_SCRATCH_INIT)
    return bad(a, s, pk, "kernel descriptor 0x%" PRIx64 ": ENABLE_SGPR_FLAT_SCRATCH_INIT (gfx940+ has architected flat "
               "scratch, AMDGPUUsage)", kd_va);
  if (props & ~KCP_KNOWN)
    return bad(a, s, pk, "kernel descriptor 0x%" PRIx64 ": kernel_code_properties 0x%x sets reserved bits", kd_va, props);
  if (preload) return bad(a, s, pk, "kernel descriptor 0x%" PRIx64 ": kernarg_preload 0x%x not modelled", kd_va, preload);
  r->pgm = kd_va + (uint64_t)entry;
  if (r->pgm % 256)
    return bad(a, s, pk, "kernel descriptor 0x%" PRIx64 ": kernel_code_entry_byte_offset %" PRId64 " gives 0x%" PRIx64 ", not "
               "256-byte aligned (COMPUTE_PGM_LO holds address >> 8)", kd_va, entry, r->pgm);
  if (group_size > LDS_MAX) return bad(a, s, pk, "KERNEL_DISPATCH group_segment_size %u > %u bytes of LDS", group_size, LDS_MAX);
  r->rsrc2 = (r->rsrc2 & ~(0x1ffu << RSRC2_LDS_SHIFT)) | ((group_size + LDS_BLOCK - 1) / LDS_BLOCK) << RSRC2_LDS_SHIFT;
  uint64_t q = a->hqd[0]->q.rptr_report - AQ_READ_DISPATCH_ID;
  if (private_size || (props & (KCP_PRIV_BUF | KCP_QUEUE_PTR))) {
    uint32_t off = 0;
    if (amd_queue_u32(a, AQ_READ_ID_OFFSET, &off) < 0) return bad(a, s, pk, "amd_queue_t at 0x%" PRIx64 " not readable", q);
    if (off != AQ_READ_DISPATCH_ID)
      return bad(a, s, pk, "amd_queue_t 0x%" PRIx64 ": read_dispatch_id_field_base_byte_offset %u (the rptr report address "
                 "is its read_dispatch_id: 128)", q, off);
  }
  uint32_t rsrc[4] = {0, 0, 0, 0};
  if (private_size) {
    uint64_t size;
    if (amd_vm_read(&a->vm, q + AQ_SCRATCH_BASE, &r->scratch_base, 8, "CP amd_queue_t", AMD_VM_CID_CPC) < 0 ||
        amd_vm_read(&a->vm, q + AQ_SCRATCH_SIZE, &size, 8, "CP amd_queue_t", AMD_VM_CID_CPC) < 0 ||
        amd_queue_u32(a, AQ_TMPRING, &r->tmpring) < 0 ||
        amd_vm_read(&a->vm, q + AQ_SCRATCH_RSRC, rsrc, 16, "CP amd_queue_t", AMD_VM_CID_CPC) < 0)
      return bad(a, s, pk, "amd_queue_t 0x%" PRIx64 ": scratch fields not readable", q);
    if (!r->scratch_base || !size)
      return bad(a, s, pk, "KERNEL_DISPATCH private_segment_size %u but amd_queue_t has no scratch "
                 "(scratch_backing_memory_location 0x%" PRIx64 ", byte size %" PRIu64 ")", private_size, r->scratch_base, size);
    r->scratch_per_xcc = size / a->nxcc;
    r->scratch_rsrc = props & KCP_PRIV_BUF;
  }
  unsigned n = 0;
#define PUT64(v) (r->user[n] = (uint32_t)(v), r->user[n + 1] = (uint32_t)((v) >> 32), n += 2)
  if (props & KCP_PRIV_BUF) memcpy(r->user, rsrc, 16), n = 4;
  if (props & KCP_DISPATCH_PTR) PUT64(dispatch_va);
  if (props & KCP_QUEUE_PTR) PUT64(q);
  if (props & KCP_KERNARG_PTR) PUT64(kargs);
  if (props & KCP_DISPATCH_ID) PUT64(index);
  if (props & KCP_PRIV_SIZE) r->user[n++] = private_size;
#undef PUT64
  if (RSRC2_USER_SGPR(r->rsrc2) != n)
    return bad(a, s, pk, "kernel descriptor 0x%" PRIx64 ": COMPUTE_PGM_RSRC2.USER_SGPR %u but kernel_code_properties 0x%x "
               "enables %u user SGPRs", kd_va, RSRC2_USER_SGPR(r->rsrc2), props, n);
  r->nuser = n;
  return X_OK;
}

static int kernel_dispatch(aql *a, const amd_pk_src *s, const uint32_t *pk, uint64_t index) {
  dispatch_regs r;
  memset(&r, 0, sizeof(r));
  int x = check_grid(a, s, pk, &r);
  if (x == X_OK) x = read_kd(a, s, pk, pkt_va(a, index), index, &r);
  if (x != X_OK) return x;
  a->st.dispatches++;
  uint64_t total = (uint64_t)r.ngroups[0] * r.ngroups[1] * r.ngroups[2];
  for (unsigned k = 0; k < a->nxcc; k++) {
    const mock_amd_hqd9 *h = a->hqd[k];
    if (!h->q.active || h->q.pq_base != a->hqd[0]->q.pq_base || !h->aql)
      return bad(a, s, pk, "KERNEL_DISPATCH: XCC %u's AQL HQD is not active on this ring (every XCC runs its share)", k);
    if (a->nxcc > 1 && (h->tg_chunk != 1 || h->xcc_id != k))
      return bad(a, s, pk, "KERNEL_DISPATCH: XCC %u's MQD has compute_tg_chunk_size %u, compute_current_logic_xcc_id %u "
                 "(modelled: 1 and %u)", k, h->tg_chunk, h->xcc_id, k);
  }
#ifdef BG_MOCK_CDNA3
  mock_amd *g = a->e.g;
  if (HDR_ACQUIRE(pk[0]) != 0) rdna3_kcache_invalidate(&a->kcache); /* an acquire fence invalidates the K$ */
  for (unsigned k = 0; k < a->nxcc; k++) {
    cdna3_dispatch d;
    memset(&d, 0, sizeof(d));
    d.regs.pgm_addr = r.pgm;
    d.regs.pgm_rsrc1 = r.rsrc1, d.regs.pgm_rsrc2 = r.rsrc2, d.regs.pgm_rsrc3 = r.rsrc3;
    memcpy(d.regs.user_data, r.user, sizeof(r.user));
    if (r.scratch_rsrc) { /* this XCC's part of the scratch (tinygrad tinygrad/runtime/ops_amd.py: size per XCC) */
      uint64_t base = ((uint64_t)(r.user[1] & 0xffff) << 32 | r.user[0]) + r.scratch_per_xcc * k;
      d.regs.user_data[0] = (uint32_t)base;
      d.regs.user_data[1] = (r.user[1] & ~0xffffu) | (uint32_t)(base >> 32 & 0xffff);
    }
    for (unsigned i = 0; i < 3; i++) d.regs.num_thread[i] = r.wg[i], d.regs.grid[i] = r.ngroups[i];
    d.regs.initiator = INITIATOR_WAVE64;
    d.regs.scratch_base = r.scratch_base ? r.scratch_base + r.scratch_per_xcc * k : 0;
    d.regs.tmpring_size = r.tmpring;
    d.xcc = a->nxcc > 1 ? a->hqd[k]->xcc_id : 0;
    d.nxcc = a->nxcc;
    shader_mem m = {.vm = a->vm, .faulted = false, .e = &a->e};
    rdna3_mem mem = {.ctx = &m, .kcache = &a->kcache, .xlate = shader_xlate, .preempted = shader_preempted};
    rdna3_report rep;
    memset(&rep, 0, sizeof(rep));
    pthread_mutex_unlock(&g->lock); /* the shader core touches only memory */
    int rc = cdna3_dispatch_run(&d, &mem, &rep);
    mock_shm_lock(&g->lock);
    a->st.xcc_dispatches[k]++;
    a->st.xcc_workgroups[k] += mock_amd_aql_xcc_share(total, d.xcc, a->nxcc);
    a->st.xcc_waves[k] += rep.stats.waves;
    g->shader.dispatches += k == 0;
    amd_shader_stats_add(&g->shader, &rep.stats);
    if (rc < 0 && !m.faulted && !amd_engine_alive(&a->e)) return X_STOPPED;
    if (rc < 0)
      return bad(a, s, pk, "KERNEL_DISPATCH on XCC %u: %s (pc 0x%" PRIx64 " enc %08x %08x, workgroup %u,%u,%u wave %u)", k,
                 rep.msg, rep.pc, rep.enc[0], rep.enc[1], rep.wg[0], rep.wg[1], rep.wg[2], rep.wave);
  }
  return X_OK;
#else
  (void)total;
  return bad(a, s, pk, "KERNEL_DISPATCH of %ux%ux%u work-groups: no shader core (tests/mockgpu/cdna3 not built in)",
             r.ngroups[0], r.ngroups[1], r.ngroups[2]);
#endif
}

/* ---------------- the queue ---------------- */

static int exec_packet(aql *a, const amd_pk_src *s, const uint32_t *pk, uint64_t index, uint64_t t0) {
  uint32_t hdr = pk[0] & 0xffff, type = HDR_TYPE(hdr);
  if (HDR_ACQUIRE(hdr) == 3 || HDR_RELEASE(hdr) == 3 || (hdr >> 13))
    return bad(a, s, pk, "packet header 0x%04x: fence scope 3 or bits 13..15 are reserved", hdr);
  int r;
  switch (type) {
  case AQL_PKT_KERNEL_DISPATCH: r = kernel_dispatch(a, s, pk, index); break;
  case AQL_PKT_BARRIER_AND: r = barrier(a, s, pk, false); break;
  case AQL_PKT_BARRIER_OR: r = barrier(a, s, pk, true); break;
  case AQL_PKT_VENDOR: r = vendor_ib(a, s, pk); break;
  default:
    return bad(a, s, pk, "packet type %u (header 0x%04x) not processed by the CP (KERNEL_DISPATCH 2, BARRIER_AND 3, "
               "BARRIER_OR 5, VENDOR_SPECIFIC 0)", type, hdr);
  }
  return r == X_OK ? complete(a, s, pk, t0) : r;
}

static void aql_run(amd_engine *e) {
  aql *a = e->priv;
  if (!a->hqd[0]->q.active) return;
  if (amd_engine_new_activation(e)) {
    a->st.rptr = 0;
    a->st.hung = false;
  }
  if (a->st.hung) return;
  amd_vm_load(&a->vm, e->g);
  uint64_t slots = ring_bytes(a) / PKT_BYTES, end = e->db + 1; /* the doorbell carries the last packet's index */
  amd_pk_src s = {false, a->hqd[0]->q.pq_base, a->st.rptr};
  if (end < a->st.rptr || end - a->st.rptr > slots) {
    bad(a, &s, NULL, "doorbell 0x%" PRIx64 " (last packet index) with read_dispatch_id %" PRIu64 " on a ring of %" PRIu64
        " packets", e->db, a->st.rptr, slots);
    return;
  }
  uint32_t pk[16];
  while (a->st.rptr < end && amd_engine_alive(e)) {
    uint64_t idx = a->st.rptr;
    s.off = idx;
    if (amd_engine_ring_read(e, &a->vm, a->hqd[0]->q.pq_base, ring_bytes(a), idx * PKT_BYTES, 16, pk, AMD_VM_CID_CPC) < 0) {
      bad(a, &s, NULL, "ring not readable");
      return;
    }
    if (HDR_TYPE(pk[0]) == AQL_PKT_INVALID) { /* not published yet: the packet processor waits for its header */
      if (!amd_engine_sleep(e, 100)) return;
      continue;
    }
    a->st.packets++;
    uint64_t t0 = amd_gpu_clock();
    if (exec_packet(a, &s, pk, idx, t0) != X_OK) return;
    /* consumed: header type INVALID (hsa: the packet processor invalidates the slot), then read_dispatch_id */
    if (amd_vm_store(&a->vm, pkt_va(a, idx), (pk[0] & ~0xffu) | AQL_PKT_INVALID, 4, "CP AQL header", AMD_VM_CID_CPC) < 0 ||
        amd_vm_store(&a->vm, a->hqd[0]->q.rptr_report, idx + 1, 8, "CP rptr report", AMD_VM_CID_CPC) < 0) {
      a->st.hung = true;
      return;
    }
    a->st.rptr = idx + 1;
  }
}

static int64_t aql_doorbell(amd_engine *e) {
  const aql *a = e->priv;
  const mock_amd_hqd *q = &a->hqd[0]->q;
  if (!q->active || !a->hqd[0]->aql || !(q->doorbell_control & (1u << 30))) return -1;
  return (int64_t)((q->doorbell_control >> 2) & 0x3ffffff) * 4;
}

static void aql_destroy(amd_engine *e) {
  aql *a = e->priv;
  amd_pm4_ib_free(a->pm4);
  free(a);
}

static const amd_engine_ops AQL_OPS = {"CP AQL", aql_doorbell, aql_run, aql_destroy};

amd_engine *amd_aql_engine(mock_amd *g) {
  aql *a = calloc(1, sizeof(*a));
  if (!a) return NULL;
  for (unsigned i = 0; i < 32 && a->nxcc < MOCK_GFX9_MAX_XCC; i++) {
    const mock_amd_hqd9 *h = mock_amd_gfx9_hqd(g, i, 1);
    if (h) a->hqd[a->nxcc++] = h;
  }
  a->e.ops = &AQL_OPS;
  a->e.priv = a;
  a->e.g = g;
#ifdef BG_MOCK_RDNA3
  a->pm4 = a->nxcc ? amd_pm4_ib_new(&a->e, &a->kcache) : NULL;
#else
  a->pm4 = a->nxcc ? amd_pm4_ib_new(&a->e, NULL) : NULL;
#endif
  if (!a->pm4) {
    free(a);
    return NULL;
  }
  a->st.nxcc = a->nxcc;
  a->e.q_active = &a->hqd[0]->q.active;
  a->e.q_nactivate = &a->hqd[0]->q.nactivate;
  return &a->e;
}

bool mock_amd_aql_stats_get(mock_amd *g, mock_amd_aql_stats *out) {
  return amd_engine_read_priv(g, &AQL_OPS, offsetof(aql, st), out, sizeof(*out));
}
