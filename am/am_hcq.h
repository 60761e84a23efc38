/* am/am_hcq.h: AMD as an HCQ device: the bg_backend_ops of an AM-booted GPU (internal to am_hcq*.c, am_iface.c).
 *
 *   am_hcq.c        attach (boot result -> bg_dev), memory (VRAM + GPU VA + page tables; BG_BUF_HOST and
 *                   uncached CPU-visible buffers in DMA'd system memory with SYSTEM|SNOOPED PTEs), copies, sleep
 *                   (IH fault report), close (fini: the next open starts warm)
 *   am_hcq_copy.c   host <-> device copies: CPU view / BAR, or SDMA through a host staging buffer
 *   am_hcq_queue.c  the two hardware queues: compute = the HQD ring am_gfx set up (PM4, pointers in dwords,
 *                   doorbell 3), copy = SDMA0 queue 0 (SDMA packets, pointers in bytes, doorbell 256); submit
 *   am_hcq_lower.c  bg_cmd -> PM4 / SDMA bytes, every operand through bg_tmpl_put
 *   am_hcq_aql.c    gfx942: the AQL compute queue (amd_queue_t, dispatch packets, PM4 IBs in vendor packets)
 *   am_hcq_prog.c   code objects (formats/amdgpu_elf.h), kernel descriptor -> dispatch registers, scratch
 *   am_hcq_usb.c    behind an ASM24 USB bridge: VRAM accesses through the bridge, pipelined host copies
 *   am_hcq_peer.c   peer access between AM devices: bus pages of an allocation, peer mappings (SYSTEM pages)
 * The bg_devs of one GPU may run on different threads: what they share is used under am_hcq.lock (am_hcq.c). */
#ifndef BG_AM_HCQ_H
#define BG_AM_HCQ_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "am/am_boot.h"
#include "am/mm_va.h"
#include "hcq/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BG_AM_TICKS_PER_US 100.0 /* the GPU timestamp clock runs at 100 MHz (tinygrad tinygrad/runtime/support/am/amdev.py) */

typedef struct am_hcq am_hcq;

/* What an allocation is backed by (bg_mem.meta). */
typedef struct am_alloc {
  bool host;                 /* system memory (sm) or VRAM (pa) */
  uint64_t pa, map_size;
  bg_sysmem sm;
} am_alloc;

/* One hardware ring (a bg_queue_hw of the HCQ core). */
struct bg_queue_hw {
  am_hcq *h;
  unsigned refs;             /* bg_devs using this ring */
  enum bg_queue_kind kind;
  bool sdma;                 /* SDMA packets, byte pointers; else PM4, dword pointers */
  bool aql;                  /* gfx942 compute: 64-byte AQL packets, pointers in packets (dispatch ids) */
  char name[40];             /* "compute queue (HQD me1 pipe0 queue0)" */
  uint64_t ring;             /* VRAM offset of the ring */
  uint64_t ring_bytes;
  uint64_t wptr, rptr;       /* VRAM offsets of the write-pointer poll / read-pointer report words */
  uint32_t doorbell;         /* index into BAR2 (8 bytes each) */
  uint64_t put;              /* next write position: dwords (PM4) or bytes (SDMA), never wrapped */
  uint64_t consumed;         /* read position last seen (same units): the engine is at least there */
  uint64_t nsubmits;
  /* hang check (bg_am_hcq_hang_check): the read position last seen busy and since when it has not moved */
  uint64_t stall_pos, stall_ns;
  bool stall_armed;
  uint64_t kick_ns;          /* time in the HDP flush + doorbell writes (register hooks of the emulator on MOCKPCI) */
};

/* Kernel-descriptor enables of user SGPRs and the wave size (LLVM AMDGPUUsage kernel_code_properties). */
enum {
  KCP_PRIVATE_SEGMENT_BUFFER = 1u << 0,
  KCP_DISPATCH_PTR = 1u << 1,
  KCP_QUEUE_PTR = 1u << 2,
  KCP_KERNARG_SEGMENT_PTR = 1u << 3,
  KCP_DISPATCH_ID = 1u << 4,
  KCP_FLAT_SCRATCH_INIT = 1u << 5,
  KCP_PRIVATE_SEGMENT_SIZE = 1u << 6,
  KCP_WAVEFRONT_SIZE32 = 1u << 10,
};

/* A code object loaded into VRAM. */
typedef struct am_prog {
  struct am_prog *next;      /* the device's loaded programs (dispatch logs name the kernel by code address) */
  char name[64];
  bg_mem mem;
  uint64_t code_va;          /* COMPUTE_PGM_LO/HI << 8 */
  uint64_t kd_va;            /* the kernel descriptor (an AQL dispatch's kernel_object) */
  uint32_t rsrc1, rsrc2, rsrc3;
  uint16_t code_props;       /* kernel_code_properties */
  bool wave32;
  uint32_t kernarg_size;     /* from the kernel descriptor */
  uint32_t private_size, group_size;
  uint32_t max_workgroup;    /* .max_flat_workgroup_size of the code object's metadata, 0 when absent */
} am_prog;

#define BG_AM_MAX_OPENS 8

struct am_hcq {
  /* The bg_devs that share this GPU (a second bg_dev_open of a function already open in the process gets the same
   * hardware: memory, page tables, rings). dev is the one owning the staging objects (am_hcq_copy.c). */
  bg_dev *dev;
  bg_dev *devs[BG_AM_MAX_OPENS];
  unsigned ndevs;
  char key[320];             /* sysfs root + BDF: the process-wide registry's key */
  struct am_hcq *next;
  bg_am_dev *d;
  bg_am_blocks blk;
  bg_am_va *va;
  bool mock;
  bool usb;                  /* behind an ASM24 bridge: everything in VRAM, no direct CPU views (am_hcq_usb.c) */
  unsigned gfx;              /* GC major */
  unsigned sdma_major;
  uint64_t max_copy;         /* COPY_LINEAR limit */
  uint32_t hdp_req, hdp_done;/* absolute dword addresses of GPU_HDP_FLUSH_REQ/DONE (PM4 memory barrier) */
  bg_queue_hw *q[2];
  /* scratch (tinygrad tinygrad/runtime/ops_amd.py AMDDevice._ensure_has_local_memory) */
  bg_mem scratch;
  uint32_t scratch_per_thread, tmpring;
  struct am_retired *retired;
  am_prog *progs;
  /* SDMA copies for host transfers (am_hcq_copy.c): a host staging buffer and a copy-queue recording */
  bg_buf *stage;
  bg_queue *stage_q;  /* smaller scratch buffers earlier templates may still use, freed at close */
  pthread_mutex_t lock;
  unsigned long nfaults;
  unsigned long mode1_recoveries; /* bg_am_hcq_recover fell back to a mode1 reset in place */
  uint32_t ih_wptr_reg;      /* absolute dword of IH_RB_WPTR (0: not looked up yet) */
  uint32_t ih_seen;          /* IH_RB_WPTR at the last fault check that found nothing */
  /* Over USB, a signal read while a fault check is due (bg_dev_synchronize's wait) also reads, in the same round trip
   * and in the check's order, the read pointers of the queues with work and IH_RB_WPTR; the check that follows uses
   * them instead of reading again (am_hcq_usb.c, bg_am_hcq_fault_check). Under lock. */
  struct am_polled {
    bool valid, busy[2], ih;
    uint64_t submits;        /* dev->submits when read: a later submit makes them stale */
    const bg_dev *dev;
    uint64_t raw[2];         /* read-pointer words as read_consumed reads them */
    uint32_t ih_wptr;
  } polled;
};

/* Fill d->ops / d->priv / d->arch from a booted AM device and its blocks; on failure nothing is kept (the caller
 * still owns am and blk). key names the function process-wide (sysfs root + BDF). */
int bg_am_hcq_attach(bg_dev *dev, bg_am_dev *am, bg_am_blocks *blk, bool mock, const char *key);
/* If the function `key` is open in this process already, share it with dev (1), else 0; negative on error. */
int bg_am_hcq_share(bg_dev *dev, const char *key);

/* am_hcq.c */
int bg_am_hcq_alloc(bg_dev *dev, uint64_t size, unsigned flags, bg_mem *out);
void bg_am_hcq_free(bg_dev *dev, bg_mem *m);
static inline int bg_am_hcq_flush_hdp(am_hcq *h) { return bg_am_flush_hdp(h->d); } /* am_dev.h: fails loudly */
/* am_hcq_copy.c */
int bg_am_hcq_copyin(bg_dev *dev, bg_mem *dst, uint64_t off, const void *src, uint64_t n);
int bg_am_hcq_copyout(bg_dev *dev, const bg_mem *src, uint64_t off, void *dst, uint64_t n);
void bg_am_hcq_copy_fini(am_hcq *h);
/* am_hcq_usb.c: over USB, the backend's mem_read/mem_write (BAR0 view, write-combined) and host copies through the
 * bridge's pipelined copy paths */
int bg_am_hcq_usb_mem_read(bg_dev *dev, const bg_mem *m, uint64_t off, void *dst, uint64_t n);
int bg_am_hcq_usb_mem_write(bg_dev *dev, const bg_mem *m, uint64_t off, const void *src, uint64_t n);
/* am_hcq_queue.c: for the batched poll: the VRAM address and size of q's read-pointer word, the position it means,
 * and the absolute dword of IH_RB_WPTR (0 and an error when it cannot be looked up). */
void bg_am_hcq_rptr_word(const bg_queue_hw *q, uint64_t *pa, size_t *n);
bool bg_am_hcq_queue_busy(const bg_queue_hw *q);
uint64_t bg_am_hcq_consumed_from(const bg_queue_hw *q, uint64_t raw);
int bg_am_hcq_ih_wptr_reg(am_hcq *h, uint32_t *reg);
int bg_am_hcq_usb_copyin(am_hcq *h, const bg_mem *dst, uint64_t off, const void *src, uint64_t n);
int bg_am_hcq_usb_copyout(am_hcq *h, const bg_mem *src, uint64_t off, void *dst, uint64_t n);
/* am_hcq_queue.c */
int bg_am_hcq_queue_create(bg_dev *dev, enum bg_queue_kind kind, bg_queue_hw **out);
void bg_am_hcq_queue_destroy(bg_dev *dev, bg_queue_hw *hq);
int bg_am_hcq_submit(bg_dev *dev, bg_queue_hw *hq, const void *cmd, size_t len);
/* bg_backend_ops.fault_check: the read pointer of each queue that still had work, then one register read
 * (IH_RB_WPTR); when the interrupt ring moved, the full check of the backend's sleep (drain it,
 * GCVM_L2_PROTECTION_FAULT_STATUS) reports a page fault or shader error of any queue. 1 while a queue has work. */
int bg_am_hcq_fault_check(bg_dev *dev);
/* bg_backend_ops.recover: drain the IH ring and clear the latched VM fault; dequeue the compute HQD (DEQUEUE_REQUEST,
 * wait for CP_HQD_ACTIVE 0: Linux gfx_v11_0_reset_kcq) and soft-reset the SDMA engine (bg_am_sdma_reset), zero their
 * read/write-pointer words and set them up again (am_gfx/am_sdma setup_queue), so the next submit starts at ring
 * offset 0. Work pending on either ring is dropped. When a queue does not stop, a mode1 reset in place
 * (bg_am_boot_reset_in_place: the cold boot's hardware steps on the same page tables and rings) brings the device back;
 * only when that fails too does recovery fail, naming both. */
int bg_am_hcq_recover(bg_dev *dev);
/* The progress check of the backend's sleep (after the fault drain found nothing): a queue with work pending whose
 * read pointer has not moved for BG_HANG_CHECK_MS is hung, unless the packet at its read pointer is a memory wait
 * (WAIT_REG_MEM / POLL_REGMEM) whose condition does not hold yet, or holds on memory outside the signal pools (a
 * wait for the host is not a hang; BG_WAIT_TIMEOUT_MS bounds it). -BG_EHANG names the queue, the packet at the read
 * pointer with its GPU address and the time. Under h->lock. */
int bg_am_hcq_hang_check(am_hcq *h);
/* Describe where a queue stands ("compute queue (...): rptr dword 0x40 of 0x80 written, at PACKET3_WAIT_REG_MEM"). */
void bg_am_hcq_queue_state(const bg_queue_hw *hq, char *buf, size_t n);
/* am_hcq_lower.c */
int bg_am_hcq_lower(bg_dev *dev, bg_queue_hw *hq, const bg_cmd *cmds, size_t ncmds, bg_tmpl *t);
const char *bg_am_hcq_op_name(int op);
/* Where lowered PM4 goes: the command section (ib false), or an IB in the kernel-argument block (ib true: start is
 * its offset, -1 before the first packet, ndw its size) that an AQL vendor-specific packet runs. */
typedef struct am_pm4_out {
  bg_tmpl *t;
  bool ib;
  long start;
  unsigned ndw;
} am_pm4_out;
/* Append PM4 dwords to o: their byte offset in o's section, or a negative error. */
long bg_am_pm4_emit(am_pm4_out *o, const uint32_t *dw, unsigned n);
/* Lower a wait, signal, timestamp or memory barrier into PM4 at o (operands through bg_tmpl_put). */
int bg_am_hcq_lower_pm4_sync(const am_hcq *h, am_pm4_out *o, const bg_cmd *c);
/* am_hcq_aql.c: the gfx942 AQL compute queue (tinygrad tinygrad/runtime/ops_amd.py AMDComputeAQLQueue): ring, amd_queue_t,
 * lowering (kernel dispatch packets; PM4 between them in IBs run by vendor-specific packets). */
int bg_am_hcq_aql_queue_init(am_hcq *h, bg_queue_hw *q);
/* Write the scratch fields of the amd_queue_t (after the scratch buffer changed). */
int bg_am_hcq_aql_scratch(am_hcq *h);
int bg_am_hcq_lower_aql(const am_hcq *h, bg_queue_hw *hq, const bg_cmd *cmds, size_t ncmds, bg_tmpl *t);
/* The hang check's question for an AQL queue: does the packet at the read position wait (a barrier or a PM4 wait in a
 * vendor IB) on a condition that does not hold yet? */
int bg_am_hcq_aql_blocking(am_hcq *h, const bg_queue_hw *q, bool *blocking);
void bg_am_hcq_aql_state(const bg_queue_hw *q, char *buf, size_t n);
/* BG_DEBUG=2: log the KERNEL_DISPATCH packets of a submission (kernel, grid in work-items, local size, kernargs). */
void bg_am_hcq_aql_log(const bg_queue_hw *q, const void *cmd, size_t len);

/* am_hcq_peer.c: bg_backend_ops.peer_export / peer_reach / peer_map / peer_unmap (hcq/backend.h) */
int bg_am_hcq_peer_export(bg_dev *owner, const bg_mem *m, bg_peer_pages *out);
int bg_am_hcq_peer_reach(const bg_dev *d, const bg_dev *owner, bool vram, char *why, size_t n);
int bg_am_hcq_peer_map(bg_dev *d, const bg_peer_pages *p, uint64_t *va);
void bg_am_hcq_peer_unmap(bg_dev *d, uint64_t va, uint64_t size);
/* am_hcq_prog.c */
int bg_am_hcq_program_load(bg_dev *dev, const void *bin, size_t size, const bg_program_info *info, void **handle);
void bg_am_hcq_program_free(bg_dev *dev, void *handle);
/* bg_backend_ops.program_max_workgroup: the code object's .max_flat_workgroup_size (0: none). */
uint32_t bg_am_hcq_program_max_workgroup(bg_dev *dev, void *handle);
void bg_am_hcq_scratch_free(am_hcq *h);
/* The loaded program whose first instruction is at code_va, or NULL. */
const am_prog *bg_am_hcq_prog_at(const am_hcq *h, uint64_t code_va);

#ifdef __cplusplus
}
#endif
#endif
