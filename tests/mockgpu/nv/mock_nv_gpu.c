/* tests/mockgpu/nv/mock_nv_gpu.c: one engine thread per emulated GPU: GPFIFO channels, pushbuffer methods,
 * host semaphores and the copy engine (the compute launch is mock_nv_qmd.c).
 *
 * The engine wakes on a doorbell and, while a channel waits on a semaphore acquire, re-checks every 50 us (as
 * hardware re-polls). Per channel it reads GPPut (USERD + 0x8c, AmpereAControlGPFifo in clc56f.h), runs the GPFIFO
 * entries from GPGet (NVC56F_GP_ENTRY0/1: GET 31:2, GET_HI 7:0, LEVEL 9, LENGTH 30:10) and writes GPGet (+0x88)
 * after each. Pushbuffer headers (NVC56F_DMA_*): SEC_OP 31:29 (1 INC, 3 NON_INC, 4 IMMD, 5 ONE_INC), COUNT 28:16,
 * SUBCHANNEL 15:13, METHOD ADDRESS 11:0 (dwords). Methods below 0x100 are host methods (clc56f.h); others go to the
 * object SET_OBJECT bound on the subchannel.
 *
 * Strict: an unknown host, compute or copy method, a method on a subchannel without SET_OBJECT, SET_OBJECT of a
 * class that is not the channel's engine, an unknown header opcode, a GPFIFO entry with FETCH conditional set or
 * GPPut past the ring, and any access to an unmapped GPU VA (an MMU fault, latched for the debugger) stop the
 * channel with a failure naming the channel, the GPFIFO entry, the dword and the method. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "mock_nv_internal.h"

#define S nvm_S

uint64_t nvm_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int nvm_chan_new(int gpu, nvm_obj *o, uint8_t *ring, uint64_t ring_va, uint32_t entries, uint8_t *userd) {
  nvm_gpu *g = &S.gpu[gpu];
  for (int i = 0; i < NVM_MAX_CHANNELS; i++)
    if (!g->chan[i].used) {
      nvm_chan *c = &g->chan[i];
      memset(c, 0, sizeof *c);
      c->used = true;
      c->handle = o->handle;
      c->client = o->client;
      c->obj = o;
      c->ring = ring;
      c->ring_va = ring_va;
      c->entries = entries;
      c->userd = userd;
      c->token = 0x100u * (unsigned)(gpu + 1) + (unsigned)i; /* the work-submit token: a channel id */
      nvm_p32(userd, 0x88, 0);
      return i;
    }
  return -1;
}

void nvm_chan_error(nvm_chan *c, uint32_t rc_code) {
  c->stopped = true;
  if (!c->notifier) return;
  /* NvNotification: timeStamp u64 @0, info32 @8, info16 @12, status u16 @14. */
  uint8_t *n = c->notifier;
  uint64_t t = nvm_now_ns();
  memcpy(n, &t, 8);
  nvm_p32(n, 8, rc_code);
  uint32_t st = 0xffffu << 16; /* info16 0, status 0xffff */
  __atomic_store_n((uint32_t *)(n + 12), st, __ATOMIC_SEQ_CST);
}

void nvm_chan_drop(int gpu, int chan) { memset(&S.gpu[gpu].chan[chan], 0, sizeof(nvm_chan)); }

void nvm_gpu_kick(nvm_gpu *g) {
  g->kick = true;
  pthread_cond_signal(&g->cond);
}

enum { RUN_IDLE, RUN_PROGRESS, RUN_BLOCKED, RUN_STOPPED };

static void stop_chan_code(nvm_gpu *g, nvm_chan *c, const char *what, uint32_t rc_code) {
  nvm_fail("GPU %d channel 0x%x GPFIFO entry %u dword %u (method 0x%x subchannel %u): %s", g->index, c->handle,
           c->entry_index, c->pb_pos, c->hdr_method, c->hdr_subc, what);
  nvm_chan_error(c, rc_code);
}
static void stop_chan(nvm_gpu *g, nvm_chan *c, const char *what) { stop_chan_code(g, c, what, NVM_RC_PBDMA_ERROR); }

/* An MMU fault at va: latch it for NV83DE_CTRL_CMD_DEBUG_READ_MMU_FAULT_INFO and stop the channel. */
static void fault(nvm_gpu *g, nvm_chan *c, uint64_t va, bool write, const char *who) {
  char m[160];
  snprintf(m, sizeof m, "MMU fault: %s %s of unmapped GPU VA 0x%llx", who, write ? "write" : "read",
           (unsigned long long)va);
  if (!g->fault_valid) {
    g->fault_valid = true;
    g->fault_addr = va;
    g->fault_access = write;
  }
  stop_chan_code(g, c, m, NVM_RC_MMU_FAULT);
}

static bool sem_release(nvm_gpu *g, nvm_chan *c, uint64_t va, uint64_t payload, bool is64, bool ts, const char *who) {
  uint8_t *p = nvm_va(g->index, va, ts ? 16 : is64 ? 8 : 4);
  if (!p) {
    fault(g, c, va, true, who);
    return false;
  }
  if (is64) __atomic_store_n((uint64_t *)p, payload, __ATOMIC_SEQ_CST);
  else __atomic_store_n((uint32_t *)p, (uint32_t)payload, __ATOMIC_SEQ_CST);
  if (ts) __atomic_store_n((uint64_t *)(p + 8), nvm_now_ns(), __ATOMIC_SEQ_CST); /* four-word: timestamp at +8 */
  return true;
}

/* SEM_EXECUTE (clc56f.h): OPERATION 2:0, RELEASE_WFI 20, PAYLOAD_SIZE 24 (1: 64-bit), RELEASE_TIMESTAMP 25. */
static int host_sem(nvm_gpu *g, nvm_chan *c, uint32_t v) {
  uint64_t va = (c->sem_addr_lo & ~3u) | (uint64_t)(c->sem_addr_hi & 0xff) << 32;
  uint64_t payload = c->sem_pay_lo | (uint64_t)c->sem_pay_hi << 32;
  bool is64 = v >> 24 & 1;
  unsigned op = v & 7;
  if (op == 1) return sem_release(g, c, va, payload, is64, v >> 25 & 1, "SEM_EXECUTE release") ? RUN_PROGRESS : RUN_STOPPED;
  if (op == 6) {
    stop_chan(g, c, "SEM_EXECUTE operation REDUCTION is not modelled");
    return RUN_STOPPED;
  }
  if (op == 7) {
    stop_chan(g, c, "SEM_EXECUTE operation 7 is reserved");
    return RUN_STOPPED;
  }
  uint8_t *p = nvm_va(g->index, va, is64 ? 8 : 4);
  if (!p) {
    fault(g, c, va, false, "SEM_EXECUTE acquire");
    return RUN_STOPPED;
  }
  uint64_t cur = is64 ? __atomic_load_n((uint64_t *)p, __ATOMIC_SEQ_CST) : __atomic_load_n((uint32_t *)p, __ATOMIC_SEQ_CST);
  if (!is64) payload &= 0xffffffffu;
  bool met;
  switch (op) {
  case 0: met = cur == payload; break;                                       /* ACQUIRE */
  case 2: met = cur >= payload; break;                                       /* ACQ_STRICT_GEQ */
  case 3: met = is64 ? (int64_t)(cur - payload) >= 0 : (int32_t)(uint32_t)(cur - payload) >= 0; break; /* CIRC_GEQ */
  case 4: met = (cur & payload) != 0; break;                                 /* ACQ_AND */
  default: met = ~(cur | payload) != 0 && (is64 || (~(cur | payload) & 0xffffffffu) != 0); break; /* ACQ_NOR */
  }
  return met ? RUN_PROGRESS : RUN_BLOCKED;
}

static int host_method(nvm_gpu *g, nvm_chan *c, unsigned subc, uint32_t m, uint32_t v) {
  switch (m) {
  case 0x00: /* SET_OBJECT: the class bound on this subchannel; it must be the channel's engine */
    if (!c->cls_engine || v != c->cls_engine) {
      char w[128];
      snprintf(w, sizeof w, "SET_OBJECT class 0x%x is not this channel's engine (0x%x)", v, c->cls_engine);
      stop_chan(g, c, w);
      return RUN_STOPPED;
    }
    c->subc_class[subc] = v;
    return RUN_PROGRESS;
  case 0x08: case 0x20: case 0x78: /* NOP, NON_STALL_INTERRUPT, WFI (the model executes in order) */
  case 0x28: case 0x2c: case 0x30: case 0x34: /* MEM_OP_A..D (cache/TLB maintenance: coherent model) */
    return RUN_PROGRESS;
  case 0x5c: c->sem_addr_lo = v; return RUN_PROGRESS;
  case 0x60: c->sem_addr_hi = v; return RUN_PROGRESS;
  case 0x64: c->sem_pay_lo = v; return RUN_PROGRESS;
  case 0x68: c->sem_pay_hi = v; return RUN_PROGRESS;
  case 0x6c: return host_sem(g, c, v);
  }
  stop_chan(g, c, "unknown host method");
  return RUN_STOPPED;
}

/* Compute class methods (clc9c0.h / clcbc0.h: same offsets). */
static int compute_method(nvm_gpu *g, nvm_chan *c, uint32_t m, uint32_t v) {
  switch (m) {
  case 0x100: case 0x110: case 0x140: case 0x144: case 0x21c: case 0x1698: /* NOP, WFI, PM_TRIGGER(_WFI), invalidates */
  case 0x2e4: case 0x2e8: case 0x2ec:                 /* SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A/B/C */
    return RUN_PROGRESS;
  case 0x2a0: c->shared_window = (c->shared_window & 0xffffffffu) | (uint64_t)v << 32; return RUN_PROGRESS;
  case 0x2a4: c->shared_window = (c->shared_window & ~0xffffffffull) | v; return RUN_PROGRESS;
  case 0x790: c->local_mem = (c->local_mem & 0xffffffffu) | (uint64_t)v << 32; return RUN_PROGRESS;
  case 0x794: c->local_mem = (c->local_mem & ~0xffffffffull) | v; return RUN_PROGRESS;
  case 0x7b0: c->local_window = (c->local_window & 0xffffffffu) | (uint64_t)v << 32; return RUN_PROGRESS;
  case 0x7b4: c->local_window = (c->local_window & ~0xffffffffull) | v; return RUN_PROGRESS;
  case 0x2b4: c->pcas_a = v; return RUN_PROGRESS;     /* SEND_PCAS_A: QMD address >> 8 */
  case 0x2c0:                                         /* SEND_SIGNALING_PCAS2_B */
    if (v == 0) return RUN_PROGRESS;                  /* PCAS_ACTION_NOP */
    if (v != 2 && v != 9) {
      stop_chan(g, c, "SEND_SIGNALING_PCAS2_B action other than SCHEDULE (2) or PREFETCH_SCHEDULE (9)");
      return RUN_STOPPED;
    }
    return nvm_qmd_launch(g, c, (uint64_t)c->pcas_a << 8) == 0 ? RUN_PROGRESS : RUN_STOPPED;
  }
  stop_chan(g, c, "unknown compute method");
  return RUN_STOPPED;
}

/* Copy class methods (clc7b5.h / clc8b5.h). LAUNCH_DMA: DATA_TRANSFER_TYPE 1:0 (0 NONE, 1 PIPELINED, 2 NON_PIPELINED),
 * FLUSH_ENABLE 2, SEMAPHORE_TYPE 4:3 (0 NONE, 1 ONE_WORD, 2 FOUR_WORD), INTERRUPT_TYPE 6:5, SRC/DST_MEMORY_LAYOUT 7/8
 * (1 PITCH), MULTI_LINE_ENABLE 9, REMAP_ENABLE 10, SRC/DST_TYPE 12/13 (virtual 0), SEMAPHORE_PAYLOAD_SIZE 27. */
static int copy_launch(nvm_gpu *g, nvm_chan *c, uint32_t v) {
  uint32_t xfer = v & 3, semt = v >> 3 & 3;
  uint32_t known = 3u | 1u << 2 | 3u << 3 | 3u << 5 | 1u << 7 | 1u << 8 | 1u << 27;
  if (v & ~known) {
    stop_chan(g, c, "LAUNCH_DMA flags outside what the model executes (multi-line, remap, physical, reduction, ...)");
    return RUN_STOPPED;
  }
  if (xfer == 3 || semt == 3) {
    stop_chan(g, c, "LAUNCH_DMA with a reserved DATA_TRANSFER_TYPE or SEMAPHORE_TYPE");
    return RUN_STOPPED;
  }
  if (xfer) {
    if (!(v >> 7 & 1) || !(v >> 8 & 1)) {
      stop_chan(g, c, "LAUNCH_DMA copy with a block-linear layout (only PITCH to PITCH is modelled)");
      return RUN_STOPPED;
    }
    uint64_t src = (uint64_t)c->ce_in_hi << 32 | c->ce_in_lo, dst = (uint64_t)c->ce_out_hi << 32 | c->ce_out_lo;
    uint64_t n = c->ce_len;
    uint8_t *s = n ? nvm_va(g->index, src, n) : NULL, *d = n ? nvm_va(g->index, dst, n) : NULL;
    if (n && !s) {
      fault(g, c, src, false, "copy engine");
      return RUN_STOPPED;
    }
    if (n && !d) {
      fault(g, c, dst, true, "copy engine");
      return RUN_STOPPED;
    }
    if (n) memmove(d, s, n);
  }
  if (semt) {
    uint64_t va = (uint64_t)(c->ce_sem_a & 0x1ffffff) << 32 | c->ce_sem_b;
    bool four = semt == 2, is64 = v >> 27 & 1;
    /* four-word release: payload at +0, timestamp at +8 (clc8b5.h SET_SEMAPHORE_A/B) */
    uint64_t pay = c->ce_sem_pay | (is64 ? (uint64_t)c->ce_sem_pay_hi << 32 : 0);
    if (!sem_release(g, c, va, pay, is64 || four, four, "copy-engine semaphore")) return RUN_STOPPED;
  }
  return RUN_PROGRESS;
}

static int copy_method(nvm_gpu *g, nvm_chan *c, uint32_t m, uint32_t v) {
  switch (m) {
  case 0x100: return RUN_PROGRESS; /* NOP */
  case 0x240: c->ce_sem_a = v; return RUN_PROGRESS;
  case 0x244: c->ce_sem_b = v; return RUN_PROGRESS;
  case 0x248: c->ce_sem_pay = v; return RUN_PROGRESS;
  case 0x24c: c->ce_sem_pay_hi = v; return RUN_PROGRESS; /* SET_SEMAPHORE_PAYLOAD_UPPER (PAYLOAD_SIZE 64) */
  case 0x140: return RUN_PROGRESS;                       /* PM_TRIGGER */
  case 0x400: c->ce_in_hi = v; return RUN_PROGRESS;
  case 0x404: c->ce_in_lo = v; return RUN_PROGRESS;
  case 0x408: c->ce_out_hi = v; return RUN_PROGRESS;
  case 0x40c: c->ce_out_lo = v; return RUN_PROGRESS;
  case 0x418: c->ce_len = v; return RUN_PROGRESS;
  case 0x300: return copy_launch(g, c, v);
  }
  stop_chan(g, c, "unknown copy-engine method");
  return RUN_STOPPED;
}

static int method(nvm_gpu *g, nvm_chan *c, unsigned subc, uint32_t m, uint32_t v) {
  if (m < 0x100) return host_method(g, c, subc, m, v);
  uint32_t cls = c->subc_class[subc];
  if (!cls) {
    stop_chan(g, c, "method on a subchannel without SET_OBJECT");
    return RUN_STOPPED;
  }
  if (cls == S.cfg->compute) return compute_method(g, c, m, v);
  return copy_method(g, c, m, v);
}

/* Run channel c until idle, blocked or stopped. */
static int run_channel(nvm_gpu *g, nvm_chan *c) {
  int did = RUN_IDLE;
  for (;;) {
    if (!c->in_entry) {
      uint32_t get = nvm_g32(c->userd, 0x88), put = __atomic_load_n((uint32_t *)(c->userd + 0x8c), __ATOMIC_ACQUIRE);
      if (get == put) return did;
      if (put >= c->entries) {
        c->entry_index = put;
        stop_chan(g, c, "GPPut is past the end of the GPFIFO ring");
        return RUN_STOPPED;
      }
      uint32_t e0 = nvm_g32(c->ring, 8 * get), e1 = nvm_g32(c->ring, 8 * get + 4);
      c->entry_index = get;
      c->pb_va = (e0 & ~3u) | (uint64_t)(e1 & 0xff) << 32;
      c->pb_len = e1 >> 10 & 0x1fffff;
      c->pb_pos = 0;
      c->hdr_count = 0;
      c->hdr_method = 0;
      c->hdr_subc = 0;
      if (e0 & 1) {
        stop_chan(g, c, "GPFIFO entry with FETCH conditional (not modelled)");
        return RUN_STOPPED;
      }
      c->in_entry = true;
    }
    while (c->pb_pos < c->pb_len) {
      uint64_t va = c->pb_va + 4ull * c->pb_pos;
      uint8_t *p = nvm_va(g->index, va, 4);
      if (!p) {
        fault(g, c, va, false, "pushbuffer fetch");
        return RUN_STOPPED;
      }
      uint32_t d = __atomic_load_n((uint32_t *)p, __ATOMIC_ACQUIRE);
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
          int r = method(g, c, c->hdr_subc, c->hdr_method, d >> 16 & 0x1fff);
          if (r == RUN_BLOCKED || r == RUN_STOPPED) return r;
          c->pb_pos++;
          did = RUN_PROGRESS;
          continue;
        }
        if (op != 1 && op != 3 && op != 5) {
          stop_chan(g, c, "pushbuffer header with an unknown SEC_OP");
          return RUN_STOPPED;
        }
        c->pb_pos++;
        continue;
      }
      int r = method(g, c, c->hdr_subc, c->hdr_method, d);
      if (r == RUN_BLOCKED || r == RUN_STOPPED) return r;
      did = RUN_PROGRESS;
      c->pb_pos++;
      c->hdr_count--;
      if (c->hdr_op == 1) c->hdr_method += 4;
      else if (c->hdr_op == 5) c->hdr_op = 3, c->hdr_method += 4;
    }
    if (c->hdr_count) {
      stop_chan(g, c, "pushbuffer segment ends inside a method's data");
      return RUN_STOPPED;
    }
    c->in_entry = false;
    uint32_t get = (c->entry_index + 1) % c->entries;
    __atomic_store_n((uint32_t *)(c->userd + 0x88), get, __ATOMIC_RELEASE); /* GPGet */
    did = RUN_PROGRESS;
  }
}

static bool chan_scheduled(const nvm_chan *c) {
  nvm_obj *tsg = nvm_obj_find(c->client, c->obj->parent);
  return tsg && tsg->scheduled;
}

static void *engine(void *arg) {
  nvm_gpu *g = arg;
  pthread_mutex_lock(&S.lock);
  while (!g->quit) {
    g->kick = false;
    bool progress = false, blocked = false;
    for (int i = 0; i < NVM_MAX_CHANNELS; i++) {
      nvm_chan *c = &g->chan[i];
      if (!c->used || c->stopped || !chan_scheduled(c)) continue;
      uint64_t t0 = nvm_now_ns();
      int r = run_channel(g, c);
      S.exec_ns += nvm_now_ns() - t0;
      if (r == RUN_PROGRESS) progress = true;
      if (r == RUN_BLOCKED) blocked = true;
    }
    if (progress || g->kick || g->quit) continue;
    if (blocked) {
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      ts.tv_nsec += 50000;
      if (ts.tv_nsec >= 1000000000) ts.tv_sec++, ts.tv_nsec -= 1000000000;
      pthread_cond_timedwait(&g->cond, &S.lock, &ts);
    } else pthread_cond_wait(&g->cond, &S.lock);
  }
  pthread_mutex_unlock(&S.lock);
  return NULL;
}

int nvm_gpu_start(nvm_gpu *g) {
  if (pthread_cond_init(&g->cond, NULL)) return -1;
  if (pthread_create(&g->thread, NULL, engine, g)) {
    pthread_cond_destroy(&g->cond);
    return -1;
  }
  g->thread_up = true;
  return 0;
}

void nvm_gpu_stop(nvm_gpu *g) {
  if (!g->thread_up) return;
  pthread_mutex_lock(&S.lock);
  g->quit = true;
  pthread_cond_signal(&g->cond);
  pthread_mutex_unlock(&S.lock);
  pthread_join(g->thread, NULL);
  pthread_cond_destroy(&g->cond);
  g->thread_up = false;
}
