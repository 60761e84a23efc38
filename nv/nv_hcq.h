/* nv/nv_hcq.h: NVIDIA as an HCQ device through the nvidia kernel module (NVK+NV) or its emulation (MOCKNVK+NV):
 * the state the backend's files share (internal to nv/).
 *
 *   nv_sys.c      the system-call table of NVK+NV (nv_sys.h)
 *   nv_dev.c      open: RM root client, driver version / ABI family, card info, device, subdevice, class list and
 *                 class choice, usermode page (doorbell), VA space, UVM registration, GR info, GID, TSG, context
 *                 share, GPFIFO area, the compute and copy channels with USERD and work-submit tokens; close
 *   nv_mem.c      memory: video memory (4 KiB / 2 MiB pages), host memory (OS descriptor), CPU mappings (RM_MAP_MEMORY
 *                 + mmap), GPU mappings (UVM external ranges), free
 *   nv_submit.c   GPFIFO: pushbuffer slices of the command ring, GPFIFO entries, GPPut, fence, doorbell; GPGet is read
 *                 before a GPFIFO entry or ring space is reused (never overrun)
 *   nv_fault.c    SM error / MMU fault readout through the debugger object after a hang (sleep/fault_check)
 *   nv_iface.c    the NVK and MOCKNVK interfaces (bg_iface) and the bg_backend_ops table
 *   nv_query.c    facts for tools (nv_query.h: hcq_smi list)
 *   nv_qmd.c      QMD versions 3, 4 and 5 from per-version field tables (nv_qmd.h)
 *   nv_push.c     pushbuffer method headers and the methods of the host, compute and copy classes (nv_push.h)
 *   nv_lower.c    bg_cmd -> pushbuffer template + kernel-argument block (QMD, constant bank 0) with patches
 *   nv_prog.c     programs: PTX -> cubin (nvJitLink / ptxas, or the emulated GPU's assembler), cubin -> GPU image,
 *                 QMD and constant-bank-0 templates, local memory
 *   nv_copy.c     host <-> device copies through the copy engine and host staging buffers (chunked)
 * The bg_devs of one GPU may run on different threads: what they share is used under nv_gpu.lock. */
#ifndef BG_NV_HCQ_H
#define BG_NV_HCQ_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "hcq/backend.h"
#include "nv/nv_abi_family.h"
#include "nv/nv_classes.h"
#include "nv/nv_rm.h"
#include "nv/nv_sys.h"
#include "nv/nv_version.h"
#include "platform/pci.h"

/* GPU global timer: nanoseconds. */
#define BG_NV_TICKS_PER_US 1000.0

/* What an allocation is (bg_mem.meta). */
typedef struct nv_alloc {
  uint32_t hmem;          /* RM memory object */
  bool host;              /* host memory (OS descriptor) */
  bool cpu_mapped;        /* mmap'd at mem.va */
  bool huge;              /* 2 MiB pages */
  struct bg_nv_pci_mem *pm; /* bare metal: the driver's own allocation (nv_pci_hcq.c); no RM memory object */
  int map_fd;             /* the fd the CPU mapping came from (-1 none) */
  uint64_t map_size;      /* size rounded to the page size */
} nv_alloc;

typedef struct nv_gpu nv_gpu;
typedef struct nv_pci_gpu nv_pci_gpu; /* the bare-metal side (nv_pci_hcq.h) */

/* One GPFIFO channel (a bg_queue_hw of the HCQ core). */
struct bg_queue_hw {
  nv_gpu *g;
  enum bg_queue_kind kind;
  char name[64];              /* "compute channel (HOPPER_CHANNEL_GPFIFO_A, token 3)" */
  uint32_t hchannel;          /* RM handle of the channel */
  uint32_t hengine;           /* compute / copy object under it */
  uint32_t token;             /* work-submit token */
  volatile uint64_t *ring;    /* GPFIFO entries (CPU view) */
  uint32_t entries;           /* ring length */
  volatile uint32_t *userd;   /* USERD (AmpereAControlGPFifo): GPGet at 0x88, GPPut at 0x8c (byte offsets) */
  /* behind the USB bridge ring and userd are NULL: the GPFIFO area's and the pushbuffer ring's BAR1 views instead */
  const struct bg_mmio *area_view, *cmdq_view;
  uint64_t area_base, cmdq_base;  /* their offsets in those views */
  uint32_t put;               /* next GPFIFO entry index (mod entries) */
  bg_mem cmdq;                /* pushbuffer ring this channel's submits are copied into (CPU and GPU view) */
  uint64_t cmdq_put;          /* bytes written so far (never wrapped) */
  uint64_t *entry_end;        /* per GPFIFO entry: cmdq_put after it, to know what the GPU has consumed */
  uint64_t nsubmits;
  /* ---- nvdev (nv_dev.c, nv_submit.c, nv_fault.c) ---- */
  uint32_t ring_off;          /* ring offset in the GPFIFO area; USERD follows the ring */
  bg_mem notifier;            /* error notifier (bg_nv_notification[]), CPU-mapped when the driver allows it */
  uint64_t uvm_base;          /* UVM_REGISTER_CHANNEL range (low window), 0 when not registered */
};

/* A loaded program (bg_program.handle). */
typedef struct nv_prog {
  char name[128];
  bg_mem image;               /* relocated cubin image in GPU memory */
  uint64_t code_va;           /* .text.<name> */
  uint32_t code_size;
  uint32_t regs, shared, local, param_base, param_size;
  uint32_t cb0_size;          /* bytes of constant bank 0 (driver area + parameters) */
  uint32_t nparams;
  uint32_t *param_offsets;    /* from .nv.info (EIATTR_KPARAM_INFO), relative to param_base */
  uint32_t *param_sizes;
  uint32_t qmd[96];           /* QMD template (up to 384 bytes), dims/cbuf/release filled at lowering */
  uint32_t max_threads;       /* launch limit from registers / .maxntid */
  /* ---- nvq (nv_prog.c, nv_lower.c) ---- */
  int qmd_version;            /* 3, 4 or 5: the layout of qmd[] */
  uint32_t local_need;        /* local memory bytes per thread it needs (stack + 0x240, rounded to 32) */
} nv_prog;

struct nv_gpu {
  pthread_mutex_t lock;
  const bg_nv_sys *sys;
  bool mock;                  /* MOCKNVK: PTX is assembled by the emulated GPU's assembler */
  unsigned refs;
  int index;                  /* card index */
  bg_nv_rm rm;
  bg_nv_driver_version ver;
  bg_nv_abi_layout abi;
  int ctl_fd, gpu_fd, uvm_fd, uvm_fd2;
  uint32_t minor, gpu_id, gpu_instance;
  uint16_t pci_device;
  char bdf[16];
  uint8_t uuid[16];
  uint32_t hdevice, hsubdevice, hvirtmem, hvaspace, husermode, htsg, hctxshare, hdebugger, hgpfifo_area;
  volatile uint8_t *usermode; /* 0x10000 bytes; doorbell at +0x90 */
  bg_nv_class_choice cls;
  uint32_t classes[512];
  unsigned nclasses;
  unsigned sm;                /* 80, 86, 89, 90, 100, 120 */
  uint32_t gpcs, tpc_per_gpc, sm_per_tpc, max_warps_per_sm;
  bg_mem gpfifo_area;         /* rings + USERDs */
  bg_queue_hw *q[2];          /* compute, copy (enum bg_queue_kind) */
  /* local memory (nv_prog.c grows it before a launch that needs more) */
  bg_mem local_mem;
  uint32_t slm_per_thread;
  uint64_t local_bytes_per_tpc;
  /* host staging for copies (nv_copy.c) */
  bg_mem staging;
  /* ---- nvq (nv_prog.c, nv_copy.c) ---- */
  struct nv_local_retired *local_retired;  /* replaced local-memory buffers: templates may still set them; freed at close */
  struct nv_stage *stages;                 /* per bg_dev: staging buffer + copy queue of bg_nv_copyin/out */
  /* VA allocators: the low window for CPU-visible buffers, the high window for the rest (nv_mem.c) */
  uint64_t va_low, va_high;
  bg_dev *devs[8];
  unsigned ndevs;
  /* ---- nvdev (nv_dev.c, nv_mem.c, nv_fault.c, nv_iface.c) ---- */
  char name[64];              /* "NVK GPU 0 (10de:2335 at 0000:41:00.0)": the prefix of every message */
  char version_source[48];    /* the step the driver version came from */
  int usermode_fd;            /* /dev/nvidiaN the usermode page is mapped from (-1 none) */
  bool have_virtmem;          /* NV01_MEMORY_VIRTUAL allocated: buffers also go through RM_MAP_MEMORY_DMA */
  bool dma_refused;           /* RM_MAP_MEMORY_DMA was refused once: UVM mappings only from then on */
  bool perf_boost;            /* NV2080_CTRL_CMD_PERF_BOOST accepted */
  bool uvm_gpu_registered;    /* UVM_REGISTER_GPU done (UVM_UNREGISTER_GPU at close) */
  uint16_t pci_vendor;
  uint32_t sm_version;        /* NV2080_CTRL_GR_INFO_SM_VERSION_* */
  uint64_t fb_size;           /* card info: framebuffer BAR size */
  uint64_t alloc_bytes;       /* bytes allocated now (nv_mem.c) */
  struct nv_gpu *next;        /* the open GPUs of this process (nv_iface.c) */
  char key[32];               /* "NVK:0", "MOCKNVK:0", "MOCKPCI:0" */
  nv_pci_gpu *pci;            /* bare metal (PCI+NV, MOCKPCI+NV): RM over GSP RPC, own memory; NULL on NVK */
};

/* ---- nv_dev.c ---- */
/* NVIDIA GPUs the kernel module lists (NV_ESC_CARD_INFO, valid entries): 0 when /dev/nvidiactl is absent. */
int bg_nv_card_count(const bg_nv_sys *sys);
/* Open GPU `index`: RM client, driver version, UVM, device objects, class choice, VA space, TSG, the compute and copy
 * channels. The channels' setup pushbuffers are the caller's (nv_iface.c). Every failure names the step; nothing is
 * left allocated. name_prefix: "NVK" or "MOCKNVK". */
int bg_nv_gpu_open(const bg_nv_sys *sys, int index, const char *name_prefix, nv_gpu **out);
/* Free every object, mapping and fd of g (a partially opened one too), children before parents; frees g. */
void bg_nv_gpu_close(nv_gpu *g);
/* The steps both interfaces share (nv_pci_hcq.c calls them after its boot): a zeroed nv_gpu named "<prefix> GPU
 * <index>", and the object graph from the device on (RM's root client already allocated). */
nv_gpu *bg_nv_gpu_new(const bg_nv_sys *sys, int index, const char *name_prefix);
int bg_nv_gpu_objects(nv_gpu *g);
/* ---- nv_pci_hcq.c (bare metal) ---- */
/* Open the NVIDIA GPU on pci (whose ownership passes to g) from cold or warm: boot, golden context, object graph. */
int bg_nv_pci_gpu_open(bg_pci_dev *pci, const char *fw_dir, int index, const char *name_prefix, nv_gpu **out);
/* What bg_nv_gpu_close does last on a bare-metal GPU: golden context, GSP-RM unload, the device. */
void bg_nv_pci_gpu_fini(nv_gpu *g);
int bg_nv_pci_mem_alloc(nv_gpu *g, uint64_t size, unsigned flags, bg_mem *out);
void bg_nv_pci_mem_free(nv_gpu *g, bg_mem *m);
void bg_nv_pci_doorbell(nv_gpu *g, uint32_t token);
/* Behind the USB bridge (no host DMA, no pointer into VRAM): */
bool bg_nv_pci_bridged(const nv_gpu *g);
/* the core's access to memory without a CPU view (bg_backend_ops mem_read/mem_write), through the BAR1 view */
int bg_nv_pci_mem_read(bg_dev *dev, const bg_mem *m, uint64_t off, void *dst, uint64_t n);
int bg_nv_pci_mem_write(bg_dev *dev, const bg_mem *m, uint64_t off, const void *src, uint64_t n);
/* a host copy to (src set) or from (into dst) the VRAM of m at off, through BAR1 with the device's bulk copy */
int bg_nv_pci_copy(nv_gpu *g, const bg_mem *m, uint64_t off, const void *src, void *dst, uint64_t n);
/* where the CPU reaches a buffer: *view at *base (its own view at 0, or BAR1 at its VRAM address) */
int bg_nv_pci_cpu_view(const nv_gpu *g, const bg_mem *m, const struct bg_mmio **view, uint64_t *base);
/* GSP-RM's events drained; -BG_EHANG naming what GSP-RM reported (MMU fault, OS error) once the device is in error. */
int bg_nv_pci_events(nv_gpu *g);
/* ---- nv_mem.c (g-level, the caller holds g->lock or owns g alone) ---- */
int bg_nv_mem_alloc(nv_gpu *g, uint64_t size, unsigned flags, bg_mem *out);
void bg_nv_mem_free(nv_gpu *g, bg_mem *m);
/* A range of the process-wide low (CPU-visible) VA window that no buffer uses (UVM_REGISTER_CHANNEL's range). */
int bg_nv_va_low(uint64_t size, uint64_t align, uint64_t *va);
void bg_nv_va_free(uint64_t va, uint64_t size);
/* ---- nv_submit.c ---- */
/* The channel's GPGet (USERD +0x88), through the CPU view or the bridge. */
uint32_t bg_nv_gpget(const bg_queue_hw *hq);
/* Wait until the channel's GPGet reaches GPPut (bounded by BG_WAIT_TIMEOUT_MS): -BG_EHANG naming the channel. */
int bg_nv_channel_wait_idle(bg_queue_hw *hq);
/* ---- nv_fault.c ---- */
/* -BG_EHANG with the SM error / MMU fault report when a channel's error notifier is set, 1 when a channel still has
 * work, 0 when all are idle. */
int bg_nv_fault_check(bg_dev *d);
/* The SM error states and MMU fault info through the debugger object, appended to buf ("" when none). */
void bg_nv_fault_report(nv_gpu *g, char *buf, size_t cap);

/* ---- nv_mem.c ---- */
int bg_nv_alloc(bg_dev *d, uint64_t size, unsigned flags, bg_mem *out);
void bg_nv_free(bg_dev *d, bg_mem *m);
/* ---- nv_submit.c ---- */
int bg_nv_submit(bg_dev *d, bg_queue_hw *hq, const void *cmd, size_t len);
/* ---- nv_lower.c ---- */
int bg_nv_lower(bg_dev *d, bg_queue_hw *hq, const bg_cmd *cmds, size_t ncmds, bg_tmpl *t);
/* The pushbuffer that makes a new channel usable (SET_OBJECT of the engine class; on compute the shared and local
 * memory windows), appended to buf (grown with bg_grow: *cap counts uint32_t elements); *len in bytes. */
int bg_nv_channel_setup_cmds(nv_gpu *g, enum bg_queue_kind kind, uint32_t **buf, size_t *len, size_t *cap);
/* ---- nv_prog.c ---- */
int bg_nv_program_load(bg_dev *d, const void *bin, size_t size, const bg_program_info *info, void **handle);
void bg_nv_program_free(bg_dev *d, void *handle);
uint32_t bg_nv_program_max_workgroup(bg_dev *d, void *handle);
/* ---- nv_copy.c ---- */
int bg_nv_copyin(bg_dev *d, bg_mem *dst, uint64_t off, const void *src, uint64_t n);
int bg_nv_copyout(bg_dev *d, const bg_mem *src, uint64_t off, void *dst, uint64_t n);
/* ---- nvq: what nv_iface.c's close calls for each bg_dev before its queues and memory go ---- */
/* nv_copy.c: frees d's staging buffer and copy queue. */
void bg_nv_copy_fini(bg_dev *d);
/* nv_prog.c: when the last bg_dev of the GPU has closed (before bg_nv_gpu_close; the caller owns g alone): frees the
 * local-memory buffer and the replaced ones. */
void bg_nv_local_fini(nv_gpu *g);
/* ---- nv_fault.c ---- */
int bg_nv_sleep(bg_dev *d, int ms);

static inline nv_gpu *bg_nv_gpu(bg_dev *d) { return (nv_gpu *)d->priv; }

#endif
