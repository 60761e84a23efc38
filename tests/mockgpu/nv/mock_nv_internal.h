/* tests/mockgpu/nv/mock_nv_internal.h: the emulated nvidia kernel module's state, shared by its files.
 *
 * Layouts, class ids, control ids and statuses are NVIDIA's (NVIDIA/open-gpu-kernel-modules tag 580.65.06:
 * nvos.h, nv-ioctl-numbers.h, uvm_ioctl.h, nvstatuscodes.h, class/ and ctrl/ headers; NVIDIA/open-gpu-doc
 * classes/host/clc56f.h, classes/dma-copy/clc8b5.h, classes/compute/clcbc0qmd.h). The model keeps its own small
 * offset tables (get/put at byte offsets) and never includes nv/ driver headers other than the nv_sys.h contract.
 *
 * Locking: one module lock (S.lock) guards the object table, the fds, the VA map and the failure list. Each GPU's
 * engine thread takes it while it looks up the VA map and channels, and drops it while a kernel runs (the PTX
 * interpreter reads memory through the VA map under the lock per access). */
#ifndef BG_MOCKGPU_NV_INTERNAL_H
#define BG_MOCKGPU_NV_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "mock_nv.h"
#include "nvx_engine.h"
#include "nv/nv_sys.h"

/* ---- byte-offset access to parameter blocks ---- */
static inline uint32_t nvm_g32(const void *p, size_t off) {
  uint32_t v;
  memcpy(&v, (const uint8_t *)p + off, 4);
  return v;
}
static inline uint64_t nvm_g64(const void *p, size_t off) {
  uint64_t v;
  memcpy(&v, (const uint8_t *)p + off, 8);
  return v;
}
static inline void nvm_p32(void *p, size_t off, uint32_t v) { memcpy((uint8_t *)p + off, &v, 4); }
static inline void nvm_p64(void *p, size_t off, uint64_t v) { memcpy((uint8_t *)p + off, &v, 8); }

/* ---- RM statuses (nvstatuscodes.h) ---- */
enum {
  NVS_OK = 0x00,
  NVS_ERR_ILLEGAL_ACTION = 0x16,
  NVS_ERR_INSERT_DUPLICATE_NAME = 0x19,
  NVS_ERR_INVALID_ADDRESS = 0x1e,
  NVS_ERR_INVALID_ARGUMENT = 0x1f,
  NVS_ERR_INVALID_CLASS = 0x22,
  NVS_ERR_INVALID_DEVICE = 0x26,
  NVS_ERR_INVALID_LIMIT = 0x2e,
  NVS_ERR_INVALID_OBJECT_HANDLE = 0x33,
  NVS_ERR_INVALID_OBJECT_PARENT = 0x36,
  NVS_ERR_INVALID_OFFSET = 0x37,
  NVS_ERR_INVALID_PARAM_STRUCT = 0x3a,
  NVS_ERR_INVALID_STATE = 0x40,
  NVS_ERR_NO_MEMORY = 0x51,
  NVS_ERR_NOT_SUPPORTED = 0x56,
  NVS_ERR_OBJECT_NOT_FOUND = 0x57,
  NVS_ERR_UVM_ADDRESS_IN_USE = 0x68,
};

/* ---- classes (g_allclasses.h) ---- */
enum {
  NVC_ROOT_CLIENT = 0x41, NVC_DEVICE = 0x80, NVC_SUBDEVICE = 0x2080, NVC_MEMORY_VIRTUAL = 0x70,
  NVC_MEMORY_SYSTEM = 0x3e, NVC_MEMORY_USER = 0x40, NVC_OS_DESCRIPTOR = 0x71, NVC_VASPACE = 0x90f1,
  NVC_TSG = 0xa06c, NVC_CTXSHARE = 0x9067, NVC_DEBUGGER = 0x83de,
  NVC_TURING_USERMODE_A = 0xc461, NVC_HOPPER_USERMODE_A = 0xc661,
  NVC_AMPERE_GPFIFO_A = 0xc56f, NVC_HOPPER_GPFIFO_A = 0xc86f,
  NVC_ADA_COMPUTE_A = 0xc9c0, NVC_HOPPER_COMPUTE_A = 0xcbc0,
  NVC_AMPERE_DMA_COPY_B = 0xc7b5, NVC_HOPPER_DMA_COPY_A = 0xc8b5,
};

/* One emulated GPU configuration. */
typedef struct nvm_config {
  const char *name;                 /* "hopper" / "ada" */
  uint32_t compute, copy, gpfifo, usermode;
  uint32_t sm_version;              /* NV2080_CTRL_GR_INFO_SM_VERSION value: 0x900, 0x809 */
  unsigned qmd_major;               /* 4 (Hopper), 3 (Ada) */
  uint16_t device_id;               /* PCI */
  const char *gpu_name;
} nvm_config;

/* Backing of a memory object: a memfd shared by the model's view and the driver's CPU mappings, or (OS descriptor)
 * the driver's own host range. */
typedef struct nvm_mem {
  int memfd;                        /* -1: host range */
  uint8_t *view;                    /* the model's mapping (memfd) or the host range */
  uint64_t size;
} nvm_mem;

typedef struct nvm_obj nvm_obj;
struct nvm_obj {
  uint32_t client, handle, parent, cls;
  int gpu;                          /* device instance of the object's device (-1 for the client) */
  nvm_mem mem;                      /* memory classes and usermode */
  bool huge;                        /* 2 MiB pages */
  bool scheduled;                   /* TSG: GPFIFO_SCHEDULE enabled */
  int chan;                         /* GPFIFO channel: index in its GPU's channel table */
  uint32_t engine_obj_cls;          /* GPFIFO: the compute/copy class allocated under it (0: none yet) */
  uint64_t va_start, va_limit;      /* MEMORY_VIRTUAL / DMA mapping record */
  nvm_obj *next;
};

/* A GPFIFO channel: the RM side here, its execution state in the shared engine (nvx_engine.h). */
#define NVM_MAX_CHANNELS 64
typedef struct nvm_chan {
  bool used;
  uint32_t handle, client;
  nvm_obj *obj;
  uint32_t token;
  uint8_t *notifier;                /* error notifier (hObjectError's memory): NvNotification[NVC86F_NOTIFIERS_RC] */
  nvx_chan x;
} nvm_chan;

typedef struct nvm_gpu {
  int index;
  pthread_t thread;
  bool thread_up, quit, kick;
  pthread_cond_t cond;
  nvm_chan chan[NVM_MAX_CHANNELS];
  nvx_engine eng;
  uint8_t uuid[16];
  bool fault_valid;
  uint64_t fault_addr;
  uint32_t fault_access;            /* 0 read, 1 write */
  uint64_t vram_used;
} nvm_gpu;

/* A UVM external range and the memory mapped into it. */
typedef struct nvm_range {
  uint64_t base, length;
  nvm_obj *mem;                     /* NULL until MAP_EXTERNAL_ALLOCATION */
  uint64_t mem_offset;
  uint32_t gpu_mask;
  struct nvm_range *next;
} nvm_range;

enum { NVM_FD_CTL = 1, NVM_FD_DEV, NVM_FD_UVM };
#define NVM_MAX_FDS 256
typedef struct nvm_fd {
  int fd, kind, minor;
  bool uvm_init, uvm_mm;            /* UVM_INITIALIZE done; MM_INITIALIZE done */
  uint32_t uvm_registered;          /* GPUs registered (bit per index) */
  uint32_t uvm_vaspace;             /* GPUs with a registered VA space */
  bool map_pending;                 /* NV_ESC_RM_MAP_MEMORY prepared a mapping of map_obj */
  nvm_obj *map_obj;
  uint64_t map_offset, map_length;
  int registered_ctl;               /* /dev/nvidiaN: REGISTER_FD's ctl fd (-1 none) */
} nvm_fd;

/* A CPU mapping of a usermode object (the doorbell page). */
typedef struct nvm_umap {
  uint8_t *addr;
  size_t len;
  int gpu;
  struct nvm_umap *next;
} nvm_umap;

#define NVM_VRAM_BUDGET (4ull << 30)
#define NVM_DRIVER_VERSION "580.65.06"

typedef struct nvm_state {
  pthread_mutex_t lock;
  bool started;
  pid_t owner;                      /* the process that started the GPUs (a fork()ed child has no engine threads) */
  const nvm_config *cfg;
  int count;
  nvm_gpu gpu[8];
  nvm_obj *objs;
  uint32_t next_client, next_handle;
  nvm_fd fds[NVM_MAX_FDS];
  int null_fd;                      /* O_PATH /dev/null: virtual fds are dup()s of it */
  nvm_range *ranges;                /* UVM external ranges (reservations) */
  nvm_range *maps;                  /* memory mapped into them, per GPU */
  nvm_umap *umaps;
  char failures[4096];
  unsigned nfailures;
  uint64_t exec_ns;
} nvm_state;

extern nvm_state nvm_S;

/* Record a failure (the model's complaint about what the driver did); printed to stderr too. Lock held or not. */
void nvm_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* mock_nv_rm.c: the RM escapes. Lock held. ioctl-level return: 0 or an errno (RM status in the block). */
int nvm_rm_alloc(nvm_fd *f, void *p);
int nvm_rm_free(nvm_fd *f, void *p);
int nvm_rm_control(nvm_fd *f, void *p);
int nvm_rm_map_memory(nvm_fd *f, void *p);
int nvm_rm_unmap_memory(nvm_fd *f, void *p);
int nvm_rm_map_dma(nvm_fd *f, void *p);
int nvm_rm_alloc_memory(nvm_fd *f, void *p);
nvm_obj *nvm_obj_find(uint32_t client, uint32_t handle);
void nvm_objs_free_all(void);
/* mock_nv_uvm.c: UVM ioctls by number; 0 or an errno. */
int nvm_uvm_ioctl(nvm_fd *f, unsigned long nr, void *p);
nvm_fd *nvm_fd_get(int fd);
/* Translate a GPU VA of gpu into the model's pointer for n bytes (within one mapping), NULL: unmapped. Lock held. */
uint8_t *nvm_va(int gpu, uint64_t va, uint64_t n);
void nvm_ranges_drop_mem(const nvm_obj *mem);
void nvm_ranges_free_all(void);
/* mock_nv_gpu.c: engines. */
int nvm_gpu_start(nvm_gpu *g);
void nvm_gpu_stop(nvm_gpu *g);
void nvm_gpu_kick(nvm_gpu *g);
/* A new channel on gpu for the GPFIFO object; -1 when the table is full. Lock held. */
int nvm_chan_new(int gpu, nvm_obj *o, uint8_t *ring, uint64_t ring_va, uint32_t entries, uint8_t *userd);
/* Stop channel c as RM's robust-channel recovery does: the channel runs nothing more and its error notifier gets the
 * time, the error code (info32) and a nonzero status, which is how the client learns of it (clc86fsw.h:
 * NVC86F_NOTIFIERS_RC = entry 0). */
void nvm_chan_error(nvm_chan *c, uint32_t rc_code);
void nvm_chan_drop(int gpu, int chan);
uint64_t nvm_now_ns(void);
/* The engines' parsed-kernel caches (at teardown). */
void nvm_qmd_cache_free(void);

#endif
