/* tests/mockgpu/nv/nvx_engine.c: the engine's channels (nvx_engine.h): GPFIFO entries, pushbuffer methods, host
 * semaphores and the copy engine (the compute launch is nvx_qmd.c), over its host's GPU-VA read/write.
 *
 * Per channel it reads GPPut (USERD + 0x8c, AmpereAControlGPFifo in NVIDIA/open-gpu-doc classes/host/clc56f.h), runs
 * the GPFIFO entries from GPGet (NVC56F_GP_ENTRY0/1: GET 31:2, GET_HI 7:0, LEVEL 9, LENGTH 30:10) and writes GPGet
 * (+0x88) after each. Pushbuffer headers (NVC56F_DMA_*): SEC_OP 31:29 (1 INC, 3 NON_INC, 4 IMMD, 5 ONE_INC), COUNT
 * 28:16, SUBCHANNEL 15:13, METHOD ADDRESS 11:0 (dwords). Methods below 0x100 are host methods (clc56f.h); others go to
 * the object SET_OBJECT bound on the subchannel.
 *
 * Strict: an unknown host, compute or copy method, a method on a subchannel without SET_OBJECT, SET_OBJECT of a
 * class that is not the channel's engine, an unknown header opcode, a GPFIFO entry with FETCH conditional set or
 * GPPut past the ring, and any access to an unmapped GPU VA (an MMU fault) stop the channel with a failure naming the
 * channel, the GPFIFO entry, the dword and the method. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nvx_engine.h"

uint64_t nvx_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void nvx_engine_init(nvx_engine *e, const char *name, const nvx_cfg *cfg, const nvx_host *host) {
  memset(e, 0, sizeof *e);
  snprintf(e->name, sizeof e->name, "%s", name);
  e->cfg = *cfg;
  e->host = *host;
}

static void report(nvx_engine *e, nvx_chan *c, const char *what, uint32_t rc, bool is_fault, uint64_t va, bool write) {
  char m[800];
  snprintf(m, sizeof m, "%s channel 0x%x GPFIFO entry %u dword %u (method 0x%x subchannel %u): %.600s", e->name,
           c->handle, c->entry_index, c->pb_pos, c->hdr_method, c->hdr_subc, what);
  c->stopped = true;
  e->host.stopped(e->host.ctx, c, m, rc, is_fault, va, write);
}
void nvx_stop(nvx_engine *e, nvx_chan *c, const char *what, uint32_t rc) { report(e, c, what, rc, false, 0, false); }
static void stop_chan(nvx_engine *e, nvx_chan *c, const char *what) { nvx_stop(e, c, what, NVX_RC_PBDMA_ERROR); }

/* An MMU fault at va: the host latches it (the debugger's fault info, GSP-RM's MMU_FAULT_QUEUED event); the channel
 * stops. */
void nvx_fault(nvx_engine *e, nvx_chan *c, uint64_t va, bool write, const char *who) {
  char m[400];
  snprintf(m, sizeof m, "MMU fault: %.300s %s of unmapped GPU VA 0x%llx", who, write ? "write" : "read",
           (unsigned long long)va);
  report(e, c, m, NVX_RC_MMU_FAULT, true, va, write);
}

static int rd(nvx_engine *e, uint64_t va, void *dst, size_t n, uint64_t *fva) {
  return e->host.read(e->host.ctx, va, dst, n, fva);
}
static int wr(nvx_engine *e, uint64_t va, const void *src, size_t n, uint64_t *fva) {
  return e->host.write(e->host.ctx, va, src, n, fva);
}

static bool sem_release(nvx_engine *e, nvx_chan *c, uint64_t va, uint64_t payload, bool is64, bool ts, const char *who) {
  uint64_t fva = va, now = nvx_now_ns();
  uint32_t p32 = (uint32_t)payload;
  if ((ts && wr(e, va + 8, &now, 8, &fva)) || /* four-word: timestamp at +8, written before the payload */
      (is64 ? wr(e, va, &payload, 8, &fva) : wr(e, va, &p32, 4, &fva))) {
    nvx_fault(e, c, fva, true, who);
    return false;
  }
  return true;
}

/* SEM_EXECUTE (clc56f.h): OPERATION 2:0, RELEASE_WFI 20, PAYLOAD_SIZE 24 (1: 64-bit), RELEASE_TIMESTAMP 25. */
static int host_sem(nvx_engine *e, nvx_chan *c, uint32_t v) {
  uint64_t va = (c->sem_addr_lo & ~3u) | (uint64_t)(c->sem_addr_hi & 0xff) << 32;
  uint64_t payload = c->sem_pay_lo | (uint64_t)c->sem_pay_hi << 32;
  bool is64 = v >> 24 & 1;
  unsigned op = v & 7;
  if (op == 1) return sem_release(e, c, va, payload, is64, v >> 25 & 1, "SEM_EXECUTE release") ? NVX_RUN_PROGRESS : NVX_RUN_STOPPED;
  if (op == 6) {
    stop_chan(e, c, "SEM_EXECUTE operation REDUCTION is not modelled");
    return NVX_RUN_STOPPED;
  }
  if (op == 7) {
    stop_chan(e, c, "SEM_EXECUTE operation 7 is reserved");
    return NVX_RUN_STOPPED;
  }
  uint64_t cur = 0, fva = va;
  uint32_t c32 = 0;
  if (is64 ? rd(e, va, &cur, 8, &fva) : rd(e, va, &c32, 4, &fva)) {
    nvx_fault(e, c, fva, false, "SEM_EXECUTE acquire");
    return NVX_RUN_STOPPED;
  }
  if (!is64) {
    cur = c32;
    payload &= 0xffffffffu;
  }
  bool met;
  switch (op) {
  case 0: met = cur == payload; break;                                       /* ACQUIRE */
  case 2: met = cur >= payload; break;                                       /* ACQ_STRICT_GEQ */
  case 3: met = is64 ? (int64_t)(cur - payload) >= 0 : (int32_t)(uint32_t)(cur - payload) >= 0; break; /* CIRC_GEQ */
  case 4: met = (cur & payload) != 0; break;                                 /* ACQ_AND */
  default: met = ~(cur | payload) != 0 && (is64 || (~(cur | payload) & 0xffffffffu) != 0); break; /* ACQ_NOR */
  }
  return met ? NVX_RUN_PROGRESS : NVX_RUN_BLOCKED;
}

static int host_method(nvx_engine *e, nvx_chan *c, unsigned subc, uint32_t m, uint32_t v) {
  switch (m) {
  case 0x00: /* SET_OBJECT: the class bound on this subchannel; it must be the channel's engine */
    if (!c->cls_engine || v != c->cls_engine) {
      char w[128];
      snprintf(w, sizeof w, "SET_OBJECT class 0x%x is not this channel's engine (0x%x)", v, c->cls_engine);
      stop_chan(e, c, w);
      return NVX_RUN_STOPPED;
    }
    c->subc_class[subc] = v;
    return NVX_RUN_PROGRESS;
  case 0x08: case 0x20: case 0x78: /* NOP, NON_STALL_INTERRUPT, WFI (the model executes in order) */
  case 0x28: case 0x2c: case 0x30: case 0x34: /* MEM_OP_A..D (cache/TLB maintenance: coherent model) */
    return NVX_RUN_PROGRESS;
  case 0x5c: c->sem_addr_lo = v; return NVX_RUN_PROGRESS;
  case 0x60: c->sem_addr_hi = v; return NVX_RUN_PROGRESS;
  case 0x64: c->sem_pay_lo = v; return NVX_RUN_PROGRESS;
  case 0x68: c->sem_pay_hi = v; return NVX_RUN_PROGRESS;
  case 0x6c: return host_sem(e, c, v);
  }
  stop_chan(e, c, "unknown host method");
  return NVX_RUN_STOPPED;
}

/* Compute class methods (clc9c0.h / clcbc0.h: same offsets). */
static int compute_method(nvx_engine *e, nvx_chan *c, uint32_t m, uint32_t v) {
  switch (m) {
  case 0x100: case 0x110: case 0x140: case 0x144: case 0x21c: case 0x1698: /* NOP, WFI, PM_TRIGGER(_WFI), invalidates */
  case 0x2e4: case 0x2e8: case 0x2ec:                 /* SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A/B/C */
    return NVX_RUN_PROGRESS;
  case 0x2a0: c->shared_window = (c->shared_window & 0xffffffffu) | (uint64_t)v << 32; return NVX_RUN_PROGRESS;
  case 0x2a4: c->shared_window = (c->shared_window & ~0xffffffffull) | v; return NVX_RUN_PROGRESS;
  case 0x790: c->local_mem = (c->local_mem & 0xffffffffu) | (uint64_t)v << 32; return NVX_RUN_PROGRESS;
  case 0x794: c->local_mem = (c->local_mem & ~0xffffffffull) | v; return NVX_RUN_PROGRESS;
  case 0x7b0: c->local_window = (c->local_window & 0xffffffffu) | (uint64_t)v << 32; return NVX_RUN_PROGRESS;
  case 0x7b4: c->local_window = (c->local_window & ~0xffffffffull) | v; return NVX_RUN_PROGRESS;
  case 0x2b4: c->pcas_a = v; return NVX_RUN_PROGRESS;     /* SEND_PCAS_A: QMD address >> 8 */
  case 0x2c0:                                         /* SEND_SIGNALING_PCAS2_B */
    if (v == 0) return NVX_RUN_PROGRESS;                  /* PCAS_ACTION_NOP */
    if (v != 2 && v != 9) {
      stop_chan(e, c, "SEND_SIGNALING_PCAS2_B action other than SCHEDULE (2) or PREFETCH_SCHEDULE (9)");
      return NVX_RUN_STOPPED;
    }
    return nvx_qmd_launch(e, c, (uint64_t)c->pcas_a << 8) == 0 ? NVX_RUN_PROGRESS : NVX_RUN_STOPPED;
  }
  stop_chan(e, c, "unknown compute method");
  return NVX_RUN_STOPPED;
}

/* A copy of n bytes through a bounce buffer, page-sized pieces, backwards when dst overlaps src from above (memmove). */
static int copy(nvx_engine *e, nvx_chan *c, uint64_t src, uint64_t dst, uint64_t n) {
  uint8_t buf[4096];
  bool back = dst > src && dst - src < n;
  for (uint64_t done = 0; done < n;) {
    size_t k = n - done < sizeof buf ? (size_t)(n - done) : sizeof buf;
    uint64_t at = back ? n - done - k : done, fva = 0;
    if (rd(e, src + at, buf, k, &fva)) {
      nvx_fault(e, c, fva, false, "copy engine");
      return -1;
    }
    if (wr(e, dst + at, buf, k, &fva)) {
      nvx_fault(e, c, fva, true, "copy engine");
      return -1;
    }
    done += k;
  }
  return 0;
}

/* Copy class methods (clc7b5.h / clc8b5.h). LAUNCH_DMA: DATA_TRANSFER_TYPE 1:0 (0 NONE, 1 PIPELINED, 2 NON_PIPELINED),
 * FLUSH_ENABLE 2, SEMAPHORE_TYPE 4:3 (0 NONE, 1 ONE_WORD, 2 FOUR_WORD), INTERRUPT_TYPE 6:5, SRC/DST_MEMORY_LAYOUT 7/8
 * (1 PITCH), MULTI_LINE_ENABLE 9, REMAP_ENABLE 10, SRC/DST_TYPE 12/13 (virtual 0), SEMAPHORE_PAYLOAD_SIZE 27. */
static int copy_launch(nvx_engine *e, nvx_chan *c, uint32_t v) {
  uint32_t xfer = v & 3, semt = v >> 3 & 3;
  uint32_t known = 3u | 1u << 2 | 3u << 3 | 3u << 5 | 1u << 7 | 1u << 8 | 1u << 27;
  if (v & ~known) {
    stop_chan(e, c, "LAUNCH_DMA flags outside what the model executes (multi-line, remap, physical, reduction, ...)");
    return NVX_RUN_STOPPED;
  }
  if (xfer == 3 || semt == 3) {
    stop_chan(e, c, "LAUNCH_DMA with a reserved DATA_TRANSFER_TYPE or SEMAPHORE_TYPE");
    return NVX_RUN_STOPPED;
  }
  if (xfer) {
    if (!(v >> 7 & 1) || !(v >> 8 & 1)) {
      stop_chan(e, c, "LAUNCH_DMA copy with a block-linear layout (only PITCH to PITCH is modelled)");
      return NVX_RUN_STOPPED;
    }
    uint64_t src = (uint64_t)c->ce_in_hi << 32 | c->ce_in_lo, dst = (uint64_t)c->ce_out_hi << 32 | c->ce_out_lo;
    uint64_t n = c->ce_len;
    if (n && copy(e, c, src, dst, n)) return NVX_RUN_STOPPED;
  }
  if (semt) {
    uint64_t va = (uint64_t)(c->ce_sem_a & 0x1ffffff) << 32 | c->ce_sem_b;
    bool four = semt == 2, is64 = v >> 27 & 1;
    /* four-word release: payload at +0, timestamp at +8 (clc8b5.h SET_SEMAPHORE_A/B) */
    uint64_t pay = c->ce_sem_pay | (is64 ? (uint64_t)c->ce_sem_pay_hi << 32 : 0);
    if (!sem_release(e, c, va, pay, is64 || four, four, "copy-engine semaphore")) return NVX_RUN_STOPPED;
  }
  return NVX_RUN_PROGRESS;
}

static int copy_method(nvx_engine *e, nvx_chan *c, uint32_t m, uint32_t v) {
  switch (m) {
  case 0x100: return NVX_RUN_PROGRESS; /* NOP */
  case 0x240: c->ce_sem_a = v; return NVX_RUN_PROGRESS;
  case 0x244: c->ce_sem_b = v; return NVX_RUN_PROGRESS;
  case 0x248: c->ce_sem_pay = v; return NVX_RUN_PROGRESS;
  case 0x24c: c->ce_sem_pay_hi = v; return NVX_RUN_PROGRESS; /* SET_SEMAPHORE_PAYLOAD_UPPER (PAYLOAD_SIZE 64) */
  case 0x140: return NVX_RUN_PROGRESS;                       /* PM_TRIGGER */
  case 0x400: c->ce_in_hi = v; return NVX_RUN_PROGRESS;
  case 0x404: c->ce_in_lo = v; return NVX_RUN_PROGRESS;
  case 0x408: c->ce_out_hi = v; return NVX_RUN_PROGRESS;
  case 0x40c: c->ce_out_lo = v; return NVX_RUN_PROGRESS;
  case 0x418: c->ce_len = v; return NVX_RUN_PROGRESS;
  case 0x300: return copy_launch(e, c, v);
  }
  stop_chan(e, c, "unknown copy-engine method");
  return NVX_RUN_STOPPED;
}

static int method(nvx_engine *e, nvx_chan *c, unsigned subc, uint32_t m, uint32_t v) {
  if (m < 0x100) return host_method(e, c, subc, m, v);
  uint32_t cls = c->subc_class[subc];
  if (!cls) {
    stop_chan(e, c, "method on a subchannel without SET_OBJECT");
    return NVX_RUN_STOPPED;
  }
  if (cls == e->cfg.compute) return compute_method(e, c, m, v);
  return copy_method(e, c, m, v);
}

/* Run channel c until idle, blocked or stopped. */
int nvx_run_channel(nvx_engine *e, nvx_chan *c) {
  int did = NVX_RUN_IDLE;
  for (;;) {
    if (!c->in_entry) {
      uint32_t get = __atomic_load_n((uint32_t *)(c->userd + 0x88), __ATOMIC_ACQUIRE), put = __atomic_load_n((uint32_t *)(c->userd + 0x8c), __ATOMIC_ACQUIRE);
      if (get == put) return did;
      if (put >= c->entries) {
        c->entry_index = put;
        stop_chan(e, c, "GPPut is past the end of the GPFIFO ring");
        return NVX_RUN_STOPPED;
      }
      uint32_t ent[2];
      uint64_t fva = c->ring_va + 8ull * get;
      if (c->ring) memcpy(ent, c->ring + 8ull * get, 8);
      else if (rd(e, c->ring_va + 8ull * get, ent, 8, &fva)) {
        c->entry_index = get;
        nvx_fault(e, c, fva, false, "GPFIFO entry fetch");
        return NVX_RUN_STOPPED;
      }
      uint32_t e0 = ent[0], e1 = ent[1];
      c->entry_index = get;
      c->pb_va = (e0 & ~3u) | (uint64_t)(e1 & 0xff) << 32;
      c->pb_len = e1 >> 10 & 0x1fffff;
      c->pb_pos = 0;
      c->hdr_count = 0;
      c->hdr_method = 0;
      c->hdr_subc = 0;
      if (e0 & 1) {
        stop_chan(e, c, "GPFIFO entry with FETCH conditional (not modelled)");
        return NVX_RUN_STOPPED;
      }
      c->in_entry = true;
    }
    while (c->pb_pos < c->pb_len) {
      uint64_t va = c->pb_va + 4ull * c->pb_pos;
      uint32_t d;
      uint64_t fva = va;
      if (rd(e, va, &d, 4, &fva)) {
        nvx_fault(e, c, fva, false, "pushbuffer fetch");
        return NVX_RUN_STOPPED;
      }
      if (c->hdr_count == 0) {
        unsigned op = d >> 29;
        c->hdr_method = (d & 0xfff) << 2;
        c->hdr_subc = d >> 13 & 7;
        c->hdr_count = d >> 16 & 0x1fff;
        c->hdr_op = op;
        if (d == 0) { /* NVC56F_DMA_NOP */
          c->pb_pos++;
          continue;
        }
        if (op == 4) { /* IMMD_DATA_METHOD: the data is in the header */
          c->hdr_count = 0;
          int r = method(e, c, c->hdr_subc, c->hdr_method, d >> 16 & 0x1fff);
          if (r == NVX_RUN_BLOCKED || r == NVX_RUN_STOPPED) return r;
          c->pb_pos++;
          did = NVX_RUN_PROGRESS;
          continue;
        }
        if (op != 1 && op != 3 && op != 5) {
          stop_chan(e, c, "pushbuffer header with an unknown SEC_OP");
          return NVX_RUN_STOPPED;
        }
        c->pb_pos++;
        continue;
      }
      int r = method(e, c, c->hdr_subc, c->hdr_method, d);
      if (r == NVX_RUN_BLOCKED || r == NVX_RUN_STOPPED) return r;
      did = NVX_RUN_PROGRESS;
      c->pb_pos++;
      c->hdr_count--;
      if (c->hdr_op == 1) c->hdr_method += 4;
      else if (c->hdr_op == 5) c->hdr_op = 3, c->hdr_method += 4;
    }
    if (c->hdr_count) {
      stop_chan(e, c, "pushbuffer segment ends inside a method's data");
      return NVX_RUN_STOPPED;
    }
    c->in_entry = false;
    uint32_t get = (c->entry_index + 1) % c->entries;
    __atomic_store_n((uint32_t *)(c->userd + 0x88), get, __ATOMIC_RELEASE); /* GPGet */
    did = NVX_RUN_PROGRESS;
  }
}

