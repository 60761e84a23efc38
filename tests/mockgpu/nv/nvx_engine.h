/* tests/mockgpu/nv/nvx_engine.h: the emulated NVIDIA GPU's execution engine, one instance per GPU, shared by the
 * emulated kernel module (MOCKNVK+NV, mock_nv_gpu.c) and the emulated GPU on the emulated PCI device (MOCKPCI+NV /
 * MOCKUSB+NV, tests/mockgpu/nv_pci/nvpci_exec.c).
 *
 * The engine runs GPFIFO channels: the ring and USERD (GPGet +0x88, GPPut +0x8c, AmpereAControlGPFifo in
 * NVIDIA/open-gpu-doc classes/host/clc56f.h), pushbuffer methods (host methods clc56f.h, compute clc9c0.h/clcbc0.h,
 * copy clc7b5.h/clc8b5.h), semaphores, the copy engine and compute launches (QMD V03/V04 decoded, the kernel's PTX run
 * by tests/mockgpu/ptx). It owns no memory and no lock: its host gives it GPU-VA access (read/write callbacks, which
 * fail on an unmapped byte: an MMU fault), drops and retakes its lock around a kernel's run (the interpreter's accesses
 * then go through read/write with the lock taken per access), and is told of each failure (the channel stops). */
#ifndef BG_MOCKGPU_NVX_ENGINE_H
#define BG_MOCKGPU_NVX_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Robust-channel error codes (open-gpu-kernel-modules nverror.h ROBUST_CHANNEL_*). */
enum { NVX_RC_GR_EXCEPTION = 13, NVX_RC_MMU_FAULT = 31, NVX_RC_PBDMA_ERROR = 32 };
/* run_channel results */
enum { NVX_RUN_IDLE, NVX_RUN_PROGRESS, NVX_RUN_BLOCKED, NVX_RUN_STOPPED };

/* One GPFIFO channel's execution state. The host fills the first block (serial: nonzero and unique while the channel
 * lives; the host zeroes the struct when the channel goes) and cls_engine when the engine object is allocated. */
typedef struct nvx_chan {
  uint64_t serial;
  uint32_t handle;                  /* for failure messages */
  void *user;                       /* the host's channel */
  const uint8_t *ring;              /* the host's view of the ring, or NULL: read through ring_va */
  uint64_t ring_va;
  uint32_t entries;
  uint8_t *userd;                   /* USERD in the host's memory (GPGet +0x88 written here, GPPut +0x8c read) */
  uint32_t cls_engine;              /* the compute or copy class allocated under the channel (SET_OBJECT must name it) */
  bool stopped;
  /* Execution cursor (an unmet acquire resumes here) */
  bool in_entry;
  uint64_t pb_va;
  uint32_t pb_len, pb_pos;
  uint32_t hdr_method, hdr_count, hdr_subc, hdr_op;
  uint32_t entry_index;
  /* Method state */
  uint32_t subc_class[8];
  uint32_t sem_addr_lo, sem_addr_hi, sem_pay_lo, sem_pay_hi;
  uint32_t ce_in_hi, ce_in_lo, ce_out_hi, ce_out_lo, ce_len, ce_sem_a, ce_sem_b, ce_sem_pay, ce_sem_pay_hi;
  uint32_t pcas_a;
  uint64_t local_mem, local_window, shared_window;
} nvx_chan;

typedef struct nvx_host {
  void *ctx;
  /* GPU VA access with the host's lock held: 0, or -1 when a byte is unmapped (*fault_va: the first such address).
   * Aligned 4- and 8-byte accesses are single atomic accesses (semaphores). */
  int (*read)(void *ctx, uint64_t va, void *dst, size_t n, uint64_t *fault_va);
  int (*write)(void *ctx, uint64_t va, const void *src, size_t n, uint64_t *fault_va);
  /* Channel c stopped: msg says why; rc is the robust-channel code; fault: an MMU fault at fault_va. Lock held. */
  void (*stopped)(void *ctx, nvx_chan *c, const char *msg, uint32_t rc, bool fault, uint64_t fault_va, bool write);
  /* May c launch compute work? NULL: always. false with why: the launch is a failure. Lock held. */
  bool (*may_launch)(void *ctx, const nvx_chan *c, char *why, size_t n);
  void (*lock)(void *ctx);
  void (*unlock)(void *ctx);
} nvx_host;

typedef struct nvx_cfg {
  uint32_t compute, copy;           /* the engine classes */
  unsigned qmd_major;               /* 3 (QMDV03_00), 4 (QMDV04_00), 5 (QMDV05_00); others: launches refused */
} nvx_cfg;

#define NVX_CACHE_N 64
typedef struct nvx_module {
  uint64_t addr, hash;
  struct ptx_module *m;
  char *text;
  uint32_t shared;
  char entry[128];
} nvx_module;

typedef struct nvx_engine {
  char name[32];                    /* "GPU 0": failure messages start with it */
  nvx_cfg cfg;
  nvx_host host;
  nvx_module cache[NVX_CACHE_N];    /* parsed kernels, by program address and text hash */
  unsigned cache_next;
} nvx_engine;

void nvx_engine_init(nvx_engine *e, const char *name, const nvx_cfg *cfg, const nvx_host *host);
void nvx_engine_fini(nvx_engine *e);   /* frees the parsed kernels */
/* Run c until idle, blocked on a semaphore acquire, or stopped (NVX_RUN_*). Host lock held. */
int nvx_run_channel(nvx_engine *e, nvx_chan *c);

/* ---- within the engine (nvx_engine.c, nvx_qmd.c) ---- */
void nvx_stop(nvx_engine *e, nvx_chan *c, const char *what, uint32_t rc);
void nvx_fault(nvx_engine *e, nvx_chan *c, uint64_t va, bool write, const char *who);
/* Run the QMD at qmd_va (dependent QMDs followed): 0, or -1 (failure reported, channel stopped). */
int nvx_qmd_launch(nvx_engine *e, nvx_chan *c, uint64_t qmd_va);
uint64_t nvx_now_ns(void);

#endif
