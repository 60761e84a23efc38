/* tests/mockgpu/nv_pci/nvpci_gsp.c: the GSP-RM model: boot arguments, message queues, the RPC record checks, the
 * pre-queued SET_SYSTEM_INFO / SET_REGISTRY, the CPU-sequencer event and GSP_INIT_DONE.
 *
 * Everything GSP-RM touches in host memory is reached by bus address (nvpci_dma_read/write), the queues through the
 * page list of the shared region, as the firmware does (r535.c r535_gsp_shared_init lays it out: page list, command
 * queue, status queue). Checks on each command element, as the firmware would make them (r535.c r535_gsp_cmdq_push
 * and r535_gsp_rpc_get say what a well-formed element is): elemCount 1..16 and within what the host wrote, the XOR of
 * its u64 words folded hi^lo is 0, seqNum the next one, rpc header version 0x03000000 and signature "VRPC", length
 * that fills exactly elemCount elements. A bad element is a recorded failure (nvpci_fail) and is dropped with an error
 * reply (rpc_result NV_ERR_INVALID_DATA for checksum and header, NV_ERR_INVALID_STATE for the sequence,
 * NV_ERR_INVALID_ARGUMENT for elemCount and length); an unknown function is answered NV_ERR_NOT_SUPPORTED.
 *
 * Replies go into the status queue only where the host's read pointer leaves room (never over unread elements); while
 * one waits, GSP reads no further commands (as the firmware blocks), and it retries at every notify and register
 * write. Limits: the model learns of a freed status queue only at the host's next notify or register write, and the
 * pre-queued SET_SYSTEM_INFO / SET_REGISTRY get no reply (the host awaits none: tinygrad runtime/support/nv/ip.py NV_GSP.init_sw). */
#include <stdio.h>
#include <stdlib.h>

#include "mock_internal.h" /* bar_base: where the emulated sysfs placed BAR1 */
#include "mock_pci.h"
#include "nvpci_gsp_internal.h"

/* GspFwWprMeta (gsp_fw_wpr_meta.h): magic @0, revision @8. */
#define WPR_META_MAGIC 0xdc3aae21371a60b3ull
#define WPR_META_REVISION 1u
/* LibosMemoryRegionInitArgument (libos_init_args.h): id8 @0, pa @8, size @16, kind u8 @24, loc u8 @25; 32 bytes. */
enum { LIBOS_ARG_SIZE = 32, LIBOS_KIND_CONTIGUOUS = 1, LIBOS_LOC_SYSMEM = 1 };
/* GSP_ARGUMENTS_CACHED (570 gsp_init_args.h): MESSAGE_QUEUE_INIT_ARGUMENTS at 0. */
enum { RMARGS_MIN = 32, SYSINFO_SIZE = 928 };

/* "RMARGS" as r535.c r535_gsp_libos_id8 names a region: its bytes as a big-endian integer. */
#define RMARGS_ID8 0x524d41524753ull

/* ---- shared region access, page by page ---- */

static int shm_io(nvpci_gsp *s, uint64_t off, void *buf, size_t n, bool wr) {
  uint8_t *b = buf;
  while (n) {
    uint64_t pg = off / GSPM_PAGE, in = off % GSPM_PAGE;
    size_t k = n < GSPM_PAGE - in ? n : (size_t)(GSPM_PAGE - in);
    if (pg >= s->npages) {
      nvpci_fail(s->g, "GSP: shared-region offset 0x%llx beyond its %u pages (pageTableEntryCount)",
                 (unsigned long long)off, s->npages);
      return -1;
    }
    int rc = wr ? nvpci_dma_write(s->g, s->pages[pg] + in, b, k) : nvpci_dma_read(s->g, s->pages[pg] + in, b, k);
    if (rc) return -1;
    off += k;
    b += k;
    n -= k;
  }
  return 0;
}
static uint32_t shm_r32(nvpci_gsp *s, uint64_t off) {
  uint32_t v = 0;
  if (shm_io(s, off, &v, 4, false)) return UINT32_MAX;
  return v;
}
static void shm_w32(nvpci_gsp *s, uint64_t off, uint32_t v) { (void)shm_io(s, off, &v, 4, true); }

/* Element i of a queue (entryOff 0x1000, msgSize 0x1000). */
static uint64_t elem_off(uint64_t q, uint32_t i) { return q + GSPM_PAGE + (uint64_t)i * GSPM_PAGE; }

/* XOR of the u64 words folded hi ^ lo (r535.c r535_gsp_cmdq_push). */
static uint32_t fold_xor(const uint8_t *p, size_t n) {
  uint64_t x = 0;
  for (size_t i = 0; i + 8 <= n; i += 8) x ^= gspm_g64(p, i);
  return (uint32_t)(x >> 32) ^ (uint32_t)x;
}

/* ---- status queue ---- */

static void post(nvpci_gsp *s, uint32_t fn, uint32_t result, uint32_t rpc_seq, const void *payload, size_t len) {
  if (len > GSPM_MAX_PAYLOAD) len = 0; /* a reply too big for one record carries no payload */
  gspm_out *o = calloc(1, sizeof *o + len);
  if (!o) {
    nvpci_fail(s->g, "GSP: out of memory for a status message");
    return;
  }
  *o = (gspm_out){.fn = fn, .result = result, .rpc_seq = rpc_seq, .len = len};
  if (len) memcpy(o->payload, payload, len);
  gspm_out **pp = &s->out;
  while (*pp) pp = &(*pp)->next;
  *pp = o;
}

/* Write what fits below the host's read pointer (cmd queue + rxHdrOff). */
static void flush(nvpci_gsp *s);
void gspm_post_event(nvpci_gsp *s, uint32_t fn, const void *payload, size_t len) {
  if (!s->running) return;
  post(s, fn, GSPM_OK, 0, payload, len);
  flush(s);
}

static void flush(nvpci_gsp *s) {
  while (s->out && s->running) {
    gspm_out *o = s->out;
    uint32_t cnt = s->stat_cnt, need = (uint32_t)((GSPM_ELEM_HDR + GSPM_RPC_HDR + o->len + GSPM_PAGE - 1) / GSPM_PAGE);
    uint32_t rptr = shm_r32(s, s->cmdq + GSPM_TX_HDR);
    if (rptr >= cnt) {
      nvpci_fail(s->g, "GSP: host status-queue readPtr %u is not below msgCount %u", rptr, cnt);
      return;
    }
    uint32_t used = (s->stat_wptr + cnt - rptr) % cnt;
    if (need > cnt - 1 - used) return; /* full: the host has not read enough yet */
    size_t sz = (size_t)need * GSPM_PAGE;
    uint8_t *e = calloc(1, sz);
    if (!e) return;
    gspm_p32(e, 36, s->stat_seq);
    gspm_p32(e, 40, need);
    uint8_t *r = e + GSPM_ELEM_HDR;
    gspm_p32(r, 0, GSPM_RPC_VERSION);
    gspm_p32(r, 4, GSPM_RPC_SIGNATURE);
    gspm_p32(r, 8, (uint32_t)(GSPM_RPC_HDR + o->len));
    gspm_p32(r, 12, o->fn);
    gspm_p32(r, 16, o->result);
    gspm_p32(r, 20, o->result);
    gspm_p32(r, 24, o->rpc_seq);
    if (o->len) memcpy(r + GSPM_RPC_HDR, o->payload, o->len);
    gspm_p32(e, 32, fold_xor(e, sz));
    int rc = 0;
    for (uint32_t k = 0; k < need && !rc; k++)
      rc = shm_io(s, elem_off(s->statq, (s->stat_wptr + k) % cnt), e + (size_t)k * GSPM_PAGE, GSPM_PAGE, true);
    free(e);
    if (rc) return;
    s->stat_seq++;
    s->stat_wptr = (s->stat_wptr + need) % cnt;
    shm_w32(s, s->statq + 16, s->stat_wptr); /* writePtr after the elements */
    if (o->fn == GSPM_EV_GSP_INIT_DONE) nvpci_set_stage(s->g, NVPCI_STAGE_INIT_DONE);
    s->out = o->next;
    free(o);
  }
}

static void free_out(nvpci_gsp *s) {
  while (s->out) {
    gspm_out *o = s->out;
    s->out = o->next;
    free(o);
  }
}

/* ---- CPU sequencer (rmgspseq.h; run by the host as r535.c r535_gsp_msg_run_cpu_sequencer does) ---- */

static void post_sequencer(nvpci_gsp *s) {
  uint32_t tok = 0x5e900000u | (s->boots & 0xffff);
  /* WRITE, MODIFY (addr, mask, val), POLL (addr, mask, val, timeout, error), DELAY_US, STORE (addr, index) */
  const uint32_t cmds[] = {
      GSPM_SEQ_WRITE,    GSPM_REG_GSP_MAILBOX0, tok,
      GSPM_SEQ_MODIFY,   GSPM_REG_GSP_MAILBOX1, 0x0000ff00u, 0x00003a00u,
      GSPM_SEQ_POLL,     GSPM_REG_GSP_MAILBOX0, 0xffffffffu, tok, 1000, 0,
      GSPM_SEQ_DELAY_US, 2,
      GSPM_SEQ_STORE,    GSPM_REG_BOOT_42, 0,
  };
  uint32_t n = sizeof cmds / 4;
  uint8_t p[40 + sizeof cmds];
  memset(p, 0, sizeof p);
  gspm_p32(p, 0, n); /* bufferSizeDWord */
  gspm_p32(p, 4, n); /* cmdIndex: dwords used */
  memcpy(p + 40, cmds, sizeof cmds);
  s->seq_token = tok;
  s->seq_w[0] = (gspm_seqw){GSPM_REG_GSP_MAILBOX0, 0xffffffffu, tok};
  s->seq_w[1] = (gspm_seqw){GSPM_REG_GSP_MAILBOX1, 0x0000ff00u, 0x00003a00u};
  s->seq_seen = 0;
  s->seq_posted = true;
  post(s, GSPM_EV_RUN_CPU_SEQUENCER, GSPM_OK, 0, p, sizeof p);
}

/* INIT_DONE once the host made the sequence's writes in order and the registers hold what they asked for. */
static void check_sequencer(nvpci_gsp *s) {
  if (!s->seq_posted || s->seq_done || !s->running) return;
  if (s->seq_seen < 2) return;
  for (int i = 0; i < 2; i++) {
    uint32_t v = nvpci_reg_read(s->g, s->seq_w[i].reg);
    if ((v & s->seq_w[i].mask) != s->seq_w[i].val) return;
  }
  s->seq_done = true;
  s->init_done = true;
  uint8_t p[4] = {0}; /* rpc_init_done_v17_00.not_used */
  post(s, GSPM_EV_GSP_INIT_DONE, GSPM_OK, 0, p, sizeof p);
}

void nvpci_gsp_reg_written(nvpci_gsp *s, uint32_t reg, uint32_t v) {
  if (!s || !s->running) return;
  if (s->seq_posted && !s->seq_done && s->seq_seen < 2 && reg == s->seq_w[s->seq_seen].reg &&
      (v & s->seq_w[s->seq_seen].mask) == s->seq_w[s->seq_seen].val)
    s->seq_seen++;
  check_sequencer(s);
  flush(s);
}

/* ---- pre-queued RPCs ---- */

static uint64_t bar_addr(const uint8_t *cfg, int i) {
  uint32_t lo = gspm_g32(cfg, 0x10 + 4 * (size_t)i);
  uint64_t a = lo & ~0xfull;
  if ((lo & 6) == 4) a |= (uint64_t)gspm_g32(cfg, 0x14 + 4 * (size_t)i) << 32;
  return a;
}

/* GspSystemInfo (570 gsp_static_config.h; values as tinygrad's NV_GSP sends them): gpuPhysAddr @0 (BAR0), gpuPhysFbAddr @8 (BAR1),
 * gpuPhysInstAddr @16 (BAR3), nvDomainBusDeviceFunc @32, pciConfigMirrorBase @80, pciConfigMirrorSize @84,
 * PCIDeviceID @88, PCISubDeviceID @92, PCIRevisionID @96. */
static bool set_system_info(nvpci_gsp *s, const uint8_t *p, size_t n) {
  if (n != SYSINFO_SIZE) {
    nvpci_fail(s->g, "GSP: GSP_SET_SYSTEM_INFO payload is %zu bytes, expected GspSystemInfo's %d", n, SYSINFO_SIZE);
    return false;
  }
  mock_pci *m = nvpci_pci(s->g);
  const uint8_t *cfg = mock_pci_config(m);
  unsigned dom = 0, bus = 0, dev = 0, fn = 0;
  /* behind the emulated USB bridge (which re-places BAR1) the host has no PCI address to give: 0, as tinygrad's bdf_as_int */
  if (bar_addr(cfg, 1) == m->bar_base[1]) sscanf(mock_pci_bdf(m), "%x:%x:%x.%x", &dom, &bus, &dev, &fn);
  const struct { const char *name; uint64_t got, want; } f[] = {
      {"gpuPhysAddr (BAR0)", gspm_g64(p, 0), bar_addr(cfg, 0)},
      {"gpuPhysFbAddr (BAR1)", gspm_g64(p, 8), bar_addr(cfg, 1)},
      {"gpuPhysInstAddr (BAR3)", gspm_g64(p, 16), bar_addr(cfg, 3)},
      {"nvDomainBusDeviceFunc", gspm_g64(p, 32) & 0xffff, (uint64_t)(bus << 8 | dev << 3 | fn)},
      {"pciConfigMirrorBase", gspm_g32(p, 80), s->chip->config_mirror},
      {"pciConfigMirrorSize", gspm_g32(p, 84), 0x1000},
      {"PCIDeviceID", gspm_g32(p, 88), gspm_g32(cfg, 0)},
      {"PCISubDeviceID", gspm_g32(p, 92), gspm_g32(cfg, 0x2c)},
      {"PCIRevisionID", gspm_g32(p, 96), cfg[8]},
  };
  bool ok = true;
  for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
    if (f[i].got != f[i].want) {
      nvpci_fail(s->g, "GSP: GSP_SET_SYSTEM_INFO %s is 0x%llx, the device has 0x%llx", f[i].name,
                 (unsigned long long)f[i].got, (unsigned long long)f[i].want);
      ok = false;
    }
  s->sysinfo = true;
  return ok;
}

/* PACKED_REGISTRY_TABLE (r535.c build_registry): size @0, numEntries @4, entries of 16 bytes {nameOffset, type u8,
 * data, length}, then the NUL-terminated names (offsets from the table start). Types 1 DWORD (length 4), 2 BINARY and
 * 3 STRING (data = offset of the bytes inside the table). */
static bool set_registry(nvpci_gsp *s, const uint8_t *p, size_t n) {
  if (n < 8 || gspm_g32(p, 0) != n) {
    nvpci_fail(s->g, "GSP: SET_REGISTRY table size %u does not match the RPC payload of %zu bytes",
               n >= 4 ? gspm_g32(p, 0) : 0, n);
    return false;
  }
  uint32_t ne = gspm_g32(p, 4);
  if ((uint64_t)ne * 16 + 8 > n) {
    nvpci_fail(s->g, "GSP: SET_REGISTRY numEntries %u do not fit its %zu bytes", ne, n);
    return false;
  }
  size_t names = 8 + (size_t)ne * 16;
  for (uint32_t i = 0; i < ne; i++) {
    const uint8_t *e = p + 8 + 16 * (size_t)i;
    uint32_t no = gspm_g32(e, 0), type = e[4], data = gspm_g32(e, 8), len = gspm_g32(e, 12);
    const char *why = NULL;
    if (no < names || no >= n) why = "nameOffset outside the name area";
    else if (!memchr(p + no, 0, n - no)) why = "name without NUL inside the table";
    else if (p[no] == 0) why = "empty name";
    else if (type == 1 && len != 4) why = "DWORD entry with length other than 4";
    else if ((type == 2 || type == 3) && ((uint64_t)data + len > n || data < names)) why = "data outside the table";
    else if (type == 3 && (len == 0 || p[data + len - 1] != 0)) why = "STRING without its NUL";
    else if (type < 1 || type > 3) why = "type not 1 (DWORD), 2 (BINARY) or 3 (STRING)";
    if (why) {
      nvpci_fail(s->g, "GSP: SET_REGISTRY entry %u: %s", i, why);
      return false;
    }
  }
  s->reg_entries += ne;
  s->registry = true;
  return true;
}

/* ---- command records ---- */

/* Total payload a record announces (RM alloc/control: header + paramsSize; registry: its size). */
static size_t announced(uint32_t fn, const uint8_t *p, size_t n) {
  if (fn == GSPM_FN_GSP_RM_ALLOC && n >= 32) return 32 + (size_t)gspm_g32(p, 20);
  if (fn == GSPM_FN_GSP_RM_CONTROL && n >= 24) return 24 + (size_t)gspm_g32(p, 16);
  if (fn == GSPM_FN_SET_REGISTRY && n >= 4) return gspm_g32(p, 0);
  return n;
}

static void reject(nvpci_gsp *s, uint32_t fn, uint32_t rpc_seq, uint32_t st) {
  s->rejected++;
  post(s, fn, st, rpc_seq, NULL, 0);
}

/* A complete record (joined from continuations when it was one). */
static void dispatch(nvpci_gsp *s, uint32_t fn, uint32_t rpc_seq, uint8_t *p, size_t n) {
  size_t want = announced(fn, p, n);
  if (want != n) {
    nvpci_fail(s->g, "GSP: RPC function %u carries %zu payload bytes but announces %zu", fn, n, want);
    reject(s, fn, rpc_seq, GSPM_ERR_INVALID_ARGUMENT);
    return;
  }
  bool rm = fn == GSPM_FN_GSP_RM_ALLOC || fn == GSPM_FN_GSP_RM_CONTROL || fn == GSPM_FN_FREE ||
            fn == GSPM_FN_UNLOADING_GUEST_DRIVER || fn == GSPM_FN_SET_PAGE_DIRECTORY;
  if (rm && !s->init_done) {
    nvpci_fail(s->g, "GSP: RPC function %u before GSP_INIT_DONE", fn);
    reject(s, fn, rpc_seq, GSPM_ERR_INVALID_STATE);
    return;
  }
  uint32_t st = GSPM_OK;
  switch (fn) {
  case GSPM_FN_GSP_SET_SYSTEM_INFO:
    if (!set_system_info(s, p, n)) s->rejected++;
    return; /* no reply (pre-queued) */
  case GSPM_FN_SET_REGISTRY:
    if (!set_registry(s, p, n)) s->rejected++;
    return;
  case GSPM_FN_GSP_RM_ALLOC: st = gspm_rm_alloc(s, p, n); break;
  case GSPM_FN_GSP_RM_CONTROL: st = gspm_rm_control(s, p, n); break;
  case GSPM_FN_FREE: st = gspm_rm_free(s, p, n); break;
  case GSPM_FN_SET_PAGE_DIRECTORY: st = gspm_rm_set_page_directory(s, p, n); break;
  case GSPM_FN_UNLOADING_GUEST_DRIVER:
    /* rpc_unloading_guest_driver_v1F_07: bInPMTransition u8, bGc6Entering u8, newLevel u32 */
    if (n != 8) {
      reject(s, fn, rpc_seq, GSPM_ERR_INVALID_ARGUMENT);
      return;
    }
    break;
  default:
    reject(s, fn, rpc_seq, GSPM_ERR_NOT_SUPPORTED);
    return;
  }
  s->served++;
  if (fn < 128) s->by_fn[fn]++;
  post(s, fn, st, rpc_seq, p, n);
  if (fn == GSPM_FN_UNLOADING_GUEST_DRIVER) {
    flush(s);
    s->running = false; /* GSP-RM stops after its last reply */
  }
}

static void record(nvpci_gsp *s, uint32_t fn, uint32_t rpc_seq, uint8_t *p, size_t n) {
  if (fn == GSPM_FN_CONTINUATION_RECORD) {
    if (!s->cont) {
      nvpci_fail(s->g, "GSP: CONTINUATION_RECORD with no record to continue");
      reject(s, fn, rpc_seq, GSPM_ERR_INVALID_STATE);
      return;
    }
    if (s->cont_len + n > s->cont_need || (s->cont_len + n < s->cont_need && n != GSPM_MAX_PAYLOAD)) {
      nvpci_fail(s->g, "GSP: CONTINUATION_RECORD of %zu bytes: the record of function %u needs %zu more", n,
                 s->cont_fn, s->cont_need - s->cont_len);
      uint32_t cfn = s->cont_fn;
      free(s->cont);
      s->cont = NULL;
      reject(s, cfn, s->cont_rpc_seq, GSPM_ERR_INVALID_ARGUMENT);
      return;
    }
    memcpy(s->cont + s->cont_len, p, n);
    s->cont_len += n;
    if (s->cont_len == s->cont_need) {
      uint8_t *all = s->cont;
      s->cont = NULL;
      dispatch(s, s->cont_fn, s->cont_rpc_seq, all, s->cont_len);
      free(all);
    }
    return;
  }
  if (s->cont) {
    nvpci_fail(s->g, "GSP: function %u while the record of function %u waits for %zu continuation bytes", fn,
               s->cont_fn, s->cont_need - s->cont_len);
    free(s->cont);
    s->cont = NULL;
    reject(s, fn, rpc_seq, GSPM_ERR_INVALID_STATE);
    return;
  }
  size_t want = announced(fn, p, n);
  if (n == GSPM_MAX_PAYLOAD && want > n) { /* the rest follows in CONTINUATION_RECORDs (r535.c r535_gsp_rpc_push) */
    s->cont = malloc(want);
    if (!s->cont) {
      reject(s, fn, rpc_seq, GSPM_ERR_NO_MEMORY);
      return;
    }
    memcpy(s->cont, p, n);
    s->cont_len = n;
    s->cont_need = want;
    s->cont_fn = fn;
    s->cont_rpc_seq = rpc_seq;
    return;
  }
  dispatch(s, fn, rpc_seq, p, n);
}

/* Read and check the command element(s) at the read pointer; returns how many elements to consume (0: stop). */
static uint32_t take_one(nvpci_gsp *s, uint32_t avail) {
  uint32_t cnt = s->cmd_cnt, r = s->cmd_rptr;
  uint8_t h[GSPM_ELEM_HDR + GSPM_RPC_HDR];
  if (shm_io(s, elem_off(s->cmdq, r), h, sizeof h, false)) return 0;
  uint32_t ec = gspm_g32(h, 40), seq = gspm_g32(h, 36), fn = gspm_g32(h, GSPM_ELEM_HDR + 12);
  uint32_t rpc_seq = gspm_g32(h, GSPM_ELEM_HDR + 24);
  if (ec == 0 || ec > GSPM_MAX_ELEMS || ec > avail) {
    nvpci_fail(s->g, "GSP: command element %u (seqNum %u): elemCount %u, expected 1..%d and at most the %u elements "
               "the host wrote", r, seq, ec, GSPM_MAX_ELEMS, avail);
    reject(s, fn, rpc_seq, GSPM_ERR_INVALID_ARGUMENT);
    return ec == 0 ? 1 : ec < avail ? ec : avail; /* what the host wrote of it */
  }
  size_t sz = (size_t)ec * GSPM_PAGE;
  uint8_t *e = malloc(sz);
  if (!e) return 0;
  for (uint32_t k = 0; k < ec; k++)
    if (shm_io(s, elem_off(s->cmdq, (r + k) % cnt), e + (size_t)k * GSPM_PAGE, GSPM_PAGE, false)) {
      free(e);
      return 0;
    }
  uint8_t *rpc = e + GSPM_ELEM_HDR;
  uint32_t len = gspm_g32(rpc, 8);
  uint32_t csum = fold_xor(e, sz);
  bool seq_ok = seq == s->cmd_seq;
  if (seq_ok) s->cmd_seq++; /* the sequence counts every element that carried the expected number */
  if (csum != 0) {
    nvpci_fail(s->g, "GSP: command seqNum %u (function %u): checksum mismatch (the folded XOR over its %u elements is "
               "0x%08x, expected 0)", seq, fn, ec, csum);
    reject(s, fn, rpc_seq, GSPM_ERR_INVALID_DATA);
  } else if (!seq_ok) {
    nvpci_fail(s->g, "GSP: command seqNum %u (function %u), expected %u", seq, fn, s->cmd_seq);
    reject(s, fn, rpc_seq, GSPM_ERR_INVALID_STATE);
  } else if (gspm_g32(rpc, 0) != GSPM_RPC_VERSION || gspm_g32(rpc, 4) != GSPM_RPC_SIGNATURE) {
    nvpci_fail(s->g, "GSP: command seqNum %u: rpc header_version 0x%08x signature 0x%08x, expected 0x%08x \"VRPC\"",
               seq, gspm_g32(rpc, 0), gspm_g32(rpc, 4), GSPM_RPC_VERSION);
    reject(s, fn, rpc_seq, GSPM_ERR_INVALID_DATA);
  } else if (len < GSPM_RPC_HDR || (GSPM_ELEM_HDR + len + GSPM_PAGE - 1) / GSPM_PAGE != ec) {
    nvpci_fail(s->g, "GSP: command seqNum %u (function %u): rpc length %u does not fill elemCount %u elements", seq, fn,
               len, ec);
    reject(s, fn, rpc_seq, GSPM_ERR_INVALID_ARGUMENT);
  } else {
    record(s, fn, rpc_seq, rpc + GSPM_RPC_HDR, len - GSPM_RPC_HDR);
  }
  free(e);
  return ec;
}

/* Consume the command queue up to the host's writePtr. */
static void drain(nvpci_gsp *s) {
  flush(s);
  while (s->running && !s->out && !s->cmd_broken) {
    uint32_t cnt = s->cmd_cnt, w = shm_r32(s, s->cmdq + 16);
    if (w >= cnt) {
      nvpci_fail(s->g, "GSP: host command-queue writePtr %u is not below msgCount %u", w, cnt);
      s->cmd_broken = true;
      return;
    }
    if (w == s->cmd_rptr) break;
    uint32_t n = take_one(s, (w + cnt - s->cmd_rptr) % cnt);
    if (!n) return;
    s->cmd_rptr = (s->cmd_rptr + n) % cnt;
    shm_w32(s, s->statq + GSPM_TX_HDR, s->cmd_rptr); /* GSP's readPtr: status queue + its rxHdrOff */
    flush(s);
  }
}

void nvpci_gsp_notify(nvpci_gsp *s) {
  if (!s || !s->running) return; /* before start the write only sets the register (pre-queued RPCs) */
  check_sequencer(s);
  drain(s);
}

/* ---- start ---- */

/* The host's command-queue header (r535.c r535_gsp_shared_init): version 0, size, msgSize 0x1000, msgCount,
 * writePtr, flags 1, rxHdrOff 32, entryOff 0x1000. */
static int check_cmdq_header(nvpci_gsp *s) {
  uint8_t h[GSPM_TX_HDR];
  if (shm_io(s, s->cmdq, h, sizeof h, false)) return -1;
  uint64_t room = s->statq - s->cmdq;
  uint32_t size = gspm_g32(h, 4);
  const struct { const char *name; uint32_t got, want; } f[] = {
      {"version", gspm_g32(h, 0), 0},
      {"size", size, (uint32_t)room},
      {"msgSize", gspm_g32(h, 8), GSPM_PAGE},
      {"msgCount", gspm_g32(h, 12), (uint32_t)((room - GSPM_PAGE) / GSPM_PAGE)},
      {"flags", gspm_g32(h, 20), 1},
      {"rxHdrOff", gspm_g32(h, 24), GSPM_TX_HDR},
      {"entryOff", gspm_g32(h, 28), GSPM_PAGE},
  };
  for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
    if (f[i].got != f[i].want) {
      nvpci_fail(s->g, "GSP: command-queue header %s is 0x%x, expected 0x%x", f[i].name, f[i].got, f[i].want);
      return -1;
    }
  s->cmd_cnt = f[3].want;
  if (gspm_g32(h, 16) >= s->cmd_cnt) {
    nvpci_fail(s->g, "GSP: command-queue writePtr %u is not below msgCount %u", gspm_g32(h, 16), s->cmd_cnt);
    return -1;
  }
  return 0;
}

/* Find RMARGS in the libos argument page and the queues through GSP_ARGUMENTS_CACHED. */
static int find_queues(nvpci_gsp *s, uint64_t libos_args_bus) {
  uint8_t la[GSPM_PAGE];
  if (nvpci_dma_read(s->g, libos_args_bus, la, sizeof la)) {
    nvpci_fail(s->g, "GSP: libos arguments at bus 0x%llx unreadable", (unsigned long long)libos_args_bus);
    return -1;
  }
  uint64_t rm_pa = 0, rm_size = 0;
  for (size_t i = 0; i < GSPM_PAGE / LIBOS_ARG_SIZE; i++) {
    const uint8_t *a = la + i * LIBOS_ARG_SIZE;
    if (gspm_g64(a, 0) != RMARGS_ID8) continue;
    if (a[24] != LIBOS_KIND_CONTIGUOUS || a[25] != LIBOS_LOC_SYSMEM) {
      nvpci_fail(s->g, "GSP: libos RMARGS kind %u loc %u, expected 1 (CONTIGUOUS) 1 (SYSMEM)", a[24], a[25]);
      return -1;
    }
    rm_pa = gspm_g64(a, 8);
    rm_size = gspm_g64(a, 16);
  }
  if (!rm_pa || rm_size < RMARGS_MIN) {
    nvpci_fail(s->g, "GSP: no RMARGS region of at least %d bytes in the libos arguments (pa 0x%llx size 0x%llx)",
               RMARGS_MIN, (unsigned long long)rm_pa, (unsigned long long)rm_size);
    return -1;
  }
  uint8_t mq[RMARGS_MIN];
  if (nvpci_dma_read(s->g, rm_pa, mq, sizeof mq)) return -1;
  uint64_t shm = gspm_g64(mq, 0), cmdq = gspm_g64(mq, 16), statq = gspm_g64(mq, 24);
  uint32_t npte = gspm_g32(mq, 8);
  if (!shm || shm % GSPM_PAGE || npte < 4 || npte > (1u << 16)) {
    nvpci_fail(s->g, "GSP: MESSAGE_QUEUE_INIT_ARGUMENTS sharedMemPhysAddr 0x%llx / pageTableEntryCount %u: expected a "
               "page-aligned address and 4..65536 pages", (unsigned long long)shm, npte);
    return -1;
  }
  uint64_t total = (uint64_t)npte * GSPM_PAGE;
  if (cmdq % GSPM_PAGE || statq % GSPM_PAGE || (uint64_t)npte * 8 > cmdq || cmdq + 2 * GSPM_PAGE > statq ||
      statq + 2 * GSPM_PAGE > total) {
    nvpci_fail(s->g, "GSP: cmdQueueOffset 0x%llx / statQueueOffset 0x%llx do not lie after the page list, in order, "
               "page-aligned, inside the %u pages", (unsigned long long)cmdq, (unsigned long long)statq, npte);
    return -1;
  }
  /* The page list: entry i lies in page i*8/4096 of the region itself; page 0 is sharedMemPhysAddr. */
  s->pages = calloc(npte, sizeof *s->pages);
  if (!s->pages) return -1;
  s->npages = npte;
  s->pages[0] = shm;
  for (uint32_t i = 0; i < npte; i++) {
    uint64_t v;
    uint64_t at = (uint64_t)i * 8; /* in page at/4096 < i: already known */
    if (nvpci_dma_read(s->g, s->pages[at / GSPM_PAGE] + at % GSPM_PAGE, &v, 8)) return -1;
    if (!v || v % GSPM_PAGE || (i == 0 && v != shm)) {
      nvpci_fail(s->g, "GSP: page list entry %u is 0x%llx: expected a page-aligned bus address%s", i,
                 (unsigned long long)v, i == 0 ? " equal to sharedMemPhysAddr" : "");
      return -1;
    }
    s->pages[i] = v;
  }
  s->cmdq = cmdq;
  s->statq = statq;
  return 0;
}

int nvpci_gsp_start(nvpci_gsp *s, uint64_t wpr_meta_bus, uint64_t libos_args_bus) {
  nvpci_gsp_reset(s);
  s->chip = gspm_chip_find(nvpci_chip_name(s->g));
  if (!s->chip) {
    nvpci_fail(s->g, "GSP: no GSP-RM model for chip \"%s\"", nvpci_chip_name(s->g));
    return -1;
  }
  uint8_t meta[16];
  if (nvpci_dma_read(s->g, wpr_meta_bus, meta, sizeof meta) || gspm_g64(meta, 0) != WPR_META_MAGIC ||
      gspm_g64(meta, 8) != WPR_META_REVISION) {
    nvpci_fail(s->g, "GSP: WPR metadata at bus 0x%llx: magic/revision are not 0x%llx/%u",
               (unsigned long long)wpr_meta_bus, WPR_META_MAGIC, WPR_META_REVISION);
    return -1;
  }
  if (find_queues(s, libos_args_bus) || check_cmdq_header(s)) {
    nvpci_gsp_reset(s);
    return -1;
  }
  /* GSP's status-queue header; entryOff last, which the host waits for (tinygrad NV_GSP.init_hw). */
  uint64_t size = (uint64_t)s->npages * GSPM_PAGE - s->statq;
  s->stat_cnt = (uint32_t)((size - GSPM_PAGE) / GSPM_PAGE);
  uint8_t h[GSPM_TX_HDR + 4] = {0};
  gspm_p32(h, 4, (uint32_t)size);
  gspm_p32(h, 8, GSPM_PAGE);
  gspm_p32(h, 12, s->stat_cnt);
  gspm_p32(h, 20, 1);
  gspm_p32(h, 24, GSPM_TX_HDR);
  if (shm_io(s, s->statq, h, sizeof h, true)) return -1;
  shm_w32(s, s->statq + 28, GSPM_PAGE);
  s->running = true;
  s->boots++;
  drain(s); /* the pre-queued records */
  if (!s->sysinfo || !s->registry) {
    nvpci_fail(s->g, "GSP: GSP-RM started without the pre-queued %s%s%s", s->sysinfo ? "" : "GSP_SET_SYSTEM_INFO",
               !s->sysinfo && !s->registry ? " and " : "", s->registry ? "" : "SET_REGISTRY");
    s->running = false;
    return -1;
  }
  post_sequencer(s);
  flush(s);
  return 0;
}

/* ---- lifetime ---- */

nvpci_gsp *nvpci_gsp_new(nvpci_gpu *g) {
  nvpci_gsp *s = calloc(1, sizeof *s);
  if (s) s->g = g;
  return s;
}

void nvpci_gsp_reset(nvpci_gsp *s) {
  if (!s) return;
  free(s->pages);
  free(s->cont);
  free_out(s);
  gspm_rm_clear(s);
  nvpci_gpu *g = s->g;
  unsigned boots = s->boots;
  nvpci_exec *exec = s->exec;
  uint64_t serial = s->chan_serial;
  /* counters too: they count one boot; the engine stays, channels go (serial 0: a running kernel finds its gone) */
  *s = (nvpci_gsp){.g = g, .boots = boots, .exec = exec, .chan_serial = serial};
}

void nvpci_gsp_free(nvpci_gsp *s) {
  if (!s) return;
  gspm_exec_free(s);
  nvpci_gsp_reset(s);
  free(s);
}

bool nvpci_gsp_running(const nvpci_gsp *s) { return s && s->running; }
uint64_t nvpci_gsp_rpcs(const nvpci_gsp *s) { return s ? s->served : 0; }
uint64_t nvpci_gsp_rejected(const nvpci_gsp *s) { return s ? s->rejected : 0; }
uint64_t nvpci_gsp_served_fn(const nvpci_gsp *s, uint32_t fn) { return s && fn < 128 ? s->by_fn[fn] : 0; }
unsigned nvpci_gsp_registry_entries(const nvpci_gsp *s) { return s ? s->reg_entries : 0; }
