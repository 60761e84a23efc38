/* nv/nv_rm.h: typed wrappers over the nvidia kernel module's RM escapes and UVM ioctls.
 *
 * Each wrapper fills one parameter block (nv_abi.h), sends it through an injectable ioctl function (the system's
 * ioctl() by default; tests and the emulated RM stand in for the kernel) and checks both the ioctl's return value
 * and the RM status in the block. Failures return a negative BG_E* code with a message naming the escape, the class
 * or control command, the handles and the status: "RM_ALLOC of class 0xcbc0 (HOPPER_COMPUTE_A) under 0xa0000003
 * failed: NV_ERR_INVALID_CLASS (0x22)".
 *
 * Handles: the root client handle is the one RM returns (hObjectNew = 0 on NV01_ROOT_CLIENT). Every other object
 * gets a handle from this client's allocator, counting up from NV_RM_HANDLE_BASE over NV_RM_HANDLE_COUNT values and
 * never reused: that range lies below RM's client handles (RS_CLIENT_HANDLE_BASE 0xc1d00000) and outside the range
 * RM generates handles from (RS_UNIQUE_HANDLE_BASE 0xcaf00000 + 0x80000; open-gpu-kernel-modules
 * src/nvidia/inc/libraries/resserv/resserv.h, g_rs_client_nvoc.h), so one rule names every object, RM-allocated
 * memory and host memory alike (no handle is told apart by its magnitude). */
#ifndef BG_NV_RM_H
#define BG_NV_RM_H

#include <stddef.h>
#include <stdint.h>

#include "nv_abi_family.h"
#include "nv_version.h"

#define NV_RM_HANDLE_BASE 0xa0000000u
#define NV_RM_HANDLE_COUNT 0x01000000u

/* ioctl(fd, request, arg): returns 0 or -1 with errno set, like the system call. */
typedef int (*bg_nv_ioctl_fn)(void *ctx, int fd, unsigned long request, void *arg);
typedef struct {
  bg_nv_ioctl_fn ioctl;
  void *ctx;
} bg_nv_ioctl_ops;

/* The system's ioctl(), retried on EINTR. */
extern const bg_nv_ioctl_ops bg_nv_sys_ioctl;

/* RM over GSP-RM's RPCs (the bare-metal path, nv_pci_hcq.c) instead of the kernel module's escapes: the same object
 * graph (nv_dev.c) goes through either. Each returns 0 or a negative BG_E* code with the message set (the RPC's
 * rpc_result and the block's status both checked). The host chooses every handle, the client's too. */
typedef struct bg_nv_rm_rpc {
  void *ctx;
  int (*alloc)(void *ctx, uint32_t client, uint32_t parent, uint32_t object, uint32_t cls, void *params, uint32_t size);
  int (*control)(void *ctx, uint32_t client, uint32_t object, uint32_t cmd, void *params, uint32_t size);
  int (*free)(void *ctx, uint32_t client, uint32_t parent, uint32_t object);
  uint32_t client;      /* the handle bg_nv_rm_alloc_root gives the client */
} bg_nv_rm_rpc;

typedef struct {
  bg_nv_ioctl_ops ops;
  const bg_nv_rm_rpc *rpc; /* non-NULL: RM calls go as GSP-RM RPCs (bg_nv_rm_init_rpc) */
  int ctl_fd;           /* /dev/nvidiactl */
  uint32_t root;        /* hClient returned by RM; 0 before bg_nv_rm_alloc_root */
  uint32_t next_handle; /* next child handle offset from NV_RM_HANDLE_BASE */
} bg_nv_rm;

/* ops NULL = bg_nv_sys_ioctl. */
void bg_nv_rm_init(bg_nv_rm *rm, int ctl_fd, const bg_nv_ioctl_ops *ops);
/* RM calls through rpc (kept by pointer: it must outlive rm). Escapes that only the kernel module has (memory
 * mapping, OS descriptors, version queries) fail with BG_ENOTSUP naming the escape. */
void bg_nv_rm_init_rpc(bg_nv_rm *rm, const bg_nv_rm_rpc *rpc);
/* A fresh child handle of this client; -BG_ENOMEM when the range is used up. */
int bg_nv_rm_new_handle(bg_nv_rm *rm, uint32_t *handle);

/* NV_ESC_RM_ALLOC of NV01_ROOT_CLIENT: sets rm->root. */
int bg_nv_rm_alloc_root(bg_nv_rm *rm);
/* NV_ESC_RM_ALLOC of `cls` under `parent` with a new handle (*handle). params and size go together: NULL and 0 for
 * a class without parameters, else the exact size of the class's parameter struct (never the size-0 "RM infers it"
 * form). */
int bg_nv_rm_alloc(bg_nv_rm *rm, uint32_t parent, uint32_t cls, void *params, uint32_t size, uint32_t *handle);
/* NV_ESC_RM_CONTROL `cmd` on `object` with params of `size` bytes (both 0/NULL for a control without params). */
int bg_nv_rm_control(bg_nv_rm *rm, uint32_t object, uint32_t cmd, void *params, uint32_t size);
/* NV_ESC_RM_FREE of `object` (child of `parent`); the root client itself is freed with parent 0 and object rm->root. */
int bg_nv_rm_free(bg_nv_rm *rm, uint32_t parent, uint32_t object);
/* NV_ESC_RM_MAP_MEMORY: prepares a CPU mapping of `memory` on `map_fd` (the caller then mmap()s map_fd at offset 0);
 * *linear gets pLinearAddress. */
int bg_nv_rm_map_memory(bg_nv_rm *rm, int map_fd, uint32_t device, uint32_t memory, uint64_t offset, uint64_t length,
                     uint32_t flags, uint64_t *linear);
/* NV_ESC_RM_UNMAP_MEMORY */
int bg_nv_rm_unmap_memory(bg_nv_rm *rm, uint32_t device, uint32_t memory, uint64_t linear, uint32_t flags);
/* NV_ESC_RM_ALLOC_MEMORY on gpu_fd (/dev/nvidiaN): e.g. NV01_MEMORY_SYSTEM_OS_DESCRIPTOR over [va, va+size). */
int bg_nv_rm_alloc_memory(bg_nv_rm *rm, int gpu_fd, uint32_t parent, uint32_t cls, uint32_t flags, uint64_t va,
                       uint64_t size, uint32_t *handle);
/* NV_ESC_RM_MAP_MEMORY_DMA (NVOS46, whose layout depends on the family): maps `memory` into the GPU VA space of
 * `dma`; with DMA_OFFSET_FIXED in flags *dma_offset is in and out. */
int bg_nv_rm_map_memory_dma(bg_nv_rm *rm, const bg_nv_abi_layout *abi, uint32_t device, uint32_t dma, uint32_t memory,
                         uint64_t offset, uint64_t length, uint32_t flags, uint64_t *dma_offset);
/* NV_ESC_CHECK_VERSION_STR with cmd QUERY on the control fd: the driver's version and family. */
int bg_nv_rm_query_version(bg_nv_rm *rm, bg_nv_driver_version *out);

/* A UVM ioctl: `request` on uvm_fd with params of `size` bytes whose NV_STATUS rmStatus sits at status_off; `name`
 * ("UVM_REGISTER_GPU") goes into the error message. */
int bg_nv_uvm_ioctl(const bg_nv_ioctl_ops *ops, int uvm_fd, uint32_t request, const char *name, void *params, size_t size,
                 size_t status_off);

#endif
