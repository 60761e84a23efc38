/* tests/mockgpu/nv_pci/nvpci_gsp_internal.h: the GSP-RM model's state, shared by nvpci_gsp.c (queues, boot, RPC
 * checks, CPU sequencer) and nvpci_gsp_rm.c (RM object table and controls).
 *
 * Facts (own constants; nothing from nv/): Linux nouveau nvkm/subdev/gsp/r535.c and include/nvrm/535.113.01
 * (msgq_priv.h, libos_init_args.h, rmgspseq.h, rpc_global_enums.h), NVIDIA/open-gpu-kernel-modules 570.133.20 (the
 * 570 layouts the bare-metal driver uses: gsp_init_args.h, gsp_static_config.h, g_rpc-structures.h, nvstatuscodes.h,
 * class/ and ctrl/ headers, g_gpu_class_list.c) and tinygrad's bare-metal path (runtime/support/nv/ip.py NV_GSP). */
#ifndef BG_MOCKGPU_NVPCI_GSP_INTERNAL_H
#define BG_MOCKGPU_NVPCI_GSP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nvpci.h"
#include "../nv/nvx_engine.h"

/* ---- queue and record layout (r535.c struct r535_gsp_msg / nvfw_gsp_rpc, msgq_priv.h) ---- */
enum {
  GSPM_PAGE = 0x1000,
  GSPM_ELEM_HDR = 0x30,      /* authTag[16], aad[16], checkSum @32, seqNum @36, elemCount @40, pad @44 */
  GSPM_RPC_HDR = 0x20,       /* header_version, signature, length, function, rpc_result, rpc_result_private, sequence, spare */
  GSPM_MAX_ELEMS = 16,
  GSPM_MAX_PAYLOAD = GSPM_MAX_ELEMS * GSPM_PAGE - GSPM_ELEM_HDR - GSPM_RPC_HDR,
  GSPM_TX_HDR = 32,          /* msgqTxHeader; msgqRxHeader.readPtr follows it */
};
#define GSPM_RPC_VERSION 0x03000000u
#define GSPM_RPC_SIGNATURE 0x43505256u /* 'C'<<24 | 'P'<<16 | 'R'<<8 | 'V' */

/* RPC functions and events (rpc_global_enums.h). */
enum {
  GSPM_FN_FREE = 10,
  GSPM_FN_UNLOADING_GUEST_DRIVER = 47,
  GSPM_FN_SET_PAGE_DIRECTORY = 54,
  GSPM_FN_CONTINUATION_RECORD = 71,
  GSPM_FN_GSP_SET_SYSTEM_INFO = 72,
  GSPM_FN_SET_REGISTRY = 73,
  GSPM_FN_GSP_RM_CONTROL = 76,
  GSPM_FN_GSP_RM_ALLOC = 103,
  GSPM_EV_GSP_INIT_DONE = 0x1001,
  GSPM_EV_RUN_CPU_SEQUENCER = 0x1002,
  GSPM_EV_MMU_FAULT_QUEUED = 0x1005,
};

/* NV_STATUS (nvstatuscodes.h). */
enum {
  GSPM_OK = 0x00,
  GSPM_ERR_INSERT_DUPLICATE_NAME = 0x19,
  GSPM_ERR_INVALID_ARGUMENT = 0x1f,
  GSPM_ERR_INVALID_CHANNEL = 0x21,
  GSPM_ERR_INVALID_CLASS = 0x22,
  GSPM_ERR_INVALID_CLIENT = 0x23,
  GSPM_ERR_INVALID_DATA = 0x25,
  GSPM_ERR_INVALID_OBJECT_HANDLE = 0x33,
  GSPM_ERR_INVALID_OBJECT_PARENT = 0x36,
  GSPM_ERR_INVALID_PARAM_STRUCT = 0x3a,
  GSPM_ERR_INVALID_STATE = 0x40,
  GSPM_ERR_NO_MEMORY = 0x51,
  GSPM_ERR_NOT_SUPPORTED = 0x56,
  GSPM_ERR_OBJECT_NOT_FOUND = 0x57,
};

/* CPU-sequencer opcodes (rmgspseq.h GSP_SEQ_BUF_OPCODE). */
enum { GSPM_SEQ_WRITE, GSPM_SEQ_MODIFY, GSPM_SEQ_POLL, GSPM_SEQ_DELAY_US, GSPM_SEQ_STORE };

/* Registers the posted sequence touches: the GSP falcon's mailboxes (NV_PGSP base 0x110000 + falcon MAILBOX0 0x40 /
 * MAILBOX1 0x44, nvkm/falcon) and NV_PMC_BOOT_42 (0xa00), present on all four chips. */
enum { GSPM_REG_GSP_MAILBOX0 = 0x110040, GSPM_REG_GSP_MAILBOX1 = 0x110044, GSPM_REG_BOOT_42 = 0xa00 };

/* One emulated chip's GSP-RM facts. */
typedef struct gspm_chip {
  const char *name;            /* "ga102", ... (nvpci_chip_name) */
  uint32_t config_mirror;      /* pciConfigMirrorBase: NV_PCFG 0x88000 (ga100 dev_nv_xve.h), NV_EP_PCFGM 0x92000 (gh100) */
  uint32_t sm_version;         /* NV2080_CTRL_GR_INFO_INDEX_SM_VERSION (sm_86, sm_89, sm_90, sm_120) */
  uint32_t warps_per_sm;
  int mmu_ver;                 /* page-table format: 2 (GA/AD, 4 root entries) or 3 (GH/GB, 2 root entries) */
  uint32_t classes[8];         /* the chip's engine classes (g_gpu_class_list.c), 0-terminated */
  uint32_t compute, copy;      /* the compute and DMA copy classes user channels bind */
  unsigned qmd_major;          /* the compute class's QMD version: 3 (clc6c0qmd.h/clc7c0), 4 (clcbc0qmd.h), 5 (clcec0qmd.h) */
} gspm_chip;
const gspm_chip *gspm_chip_find(const char *name);

typedef struct gspm_seqw {
  uint32_t reg, mask, val;
} gspm_seqw;

/* A reply or event waiting for room in the status queue. */
typedef struct gspm_out {
  struct gspm_out *next;
  uint32_t fn, result, rpc_seq;
  size_t len;
  uint8_t payload[];
} gspm_out;

typedef struct gspm_obj {
  struct gspm_obj *next;
  uint32_t client, handle, parent, cls;
  /* FERMI_VASPACE_A: the root SET_PAGE_DIRECTORY gave it */
  bool has_root;
  uint64_t root_pa;
  uint32_t root_entries;
  /* KEPLER_CHANNEL_GROUP_A: its engine (NV2080_ENGINE_TYPE_*) and GPFIFO_SCHEDULE state */
  uint32_t engine_type;
  bool scheduled;
  /* GPFIFO channel: its slot in nvpci_gsp.chan + 1 (0: none) */
  unsigned chan;
} gspm_obj;

/* A GPFIFO channel as GSP-RM set it up (nvpci_gsp_chan.c) and the emulated GPU runs it (nvpci_exec.c). */
#define GSPM_MAX_CHANNELS 64
typedef struct gspm_chan {
  bool used, pending;          /* pending: a doorbell since the engine last found it idle */
  uint32_t client, handle, cls, tsg;   /* tsg: the parent KEPLER_CHANNEL_GROUP_A (0: under the device) */
  uint32_t engine_type, runlist, chid;
  uint64_t ring_va, userd_pa;
  uint32_t entries;
  uint32_t compute_obj, copy_obj;      /* engine objects under it (handles, 0: none) */
  uint32_t prom_phys, prom_virt;       /* PROMOTE_CTX buffer ids promoted with a physical / virtual address */
  nvx_chan x;
} gspm_chan;
typedef struct nvpci_exec nvpci_exec;

struct nvpci_gsp {
  nvpci_gpu *g;
  const gspm_chip *chip;
  bool running;                /* started and not unloaded / reset */
  bool sysinfo, registry;      /* pre-queued RPCs consumed */
  bool seq_posted, seq_done, init_done;
  /* Shared region (page list at sharedMemPhysAddr) and the two queues in it. */
  uint64_t *pages;
  uint32_t npages;
  uint64_t cmdq, statq;        /* byte offsets of the queues in the region */
  uint32_t cmd_cnt, stat_cnt;  /* msgCount of each */
  uint32_t cmd_rptr, stat_wptr;
  uint32_t cmd_seq, stat_seq;  /* next element seqNum expected / sent */
  bool cmd_broken;             /* the host's write pointer was out of range: GSP stops reading */
  /* A record being joined from CONTINUATION_RECORDs. */
  uint8_t *cont;
  size_t cont_len, cont_need;
  uint32_t cont_fn, cont_rpc_seq;
  gspm_out *out;               /* pending status-queue messages, oldest first */
  /* The posted CPU sequence: register writes the host must make, in order, and what they must leave. */
  gspm_seqw seq_w[2];
  unsigned seq_seen;
  uint32_t seq_token;
  unsigned boots;
  /* RM */
  gspm_obj *objs;
  /* The last accepted SET_PAGE_DIRECTORY (nvpci_gsp_page_directory). */
  bool pd_set;
  uint32_t pd_client, pd_vaspace, pd_entries;
  uint64_t pd_root;
  /* Channels (nvpci_gsp_chan.c) and their execution (nvpci_exec.c; the engine and its thread survive a reset) */
  gspm_chan chan[GSPM_MAX_CHANNELS];
  nvpci_exec *exec;
  uint64_t chan_serial, mmu_faults;
  /* Counters */
  uint64_t served, rejected, by_fn[128];
  unsigned reg_entries;        /* SET_REGISTRY entries accepted */
};

/* ---- nvpci_gsp_rm.c: RM over RPC. p is the RPC payload (rpc_gsp_rm_alloc_v03_00 / rpc_gsp_rm_control_v03_00 /
 * rpc_free_v03_00 and their params), updated in place into the reply's payload; returns the NV status, which is also
 * written into the block's status field. */
uint32_t gspm_rm_alloc(nvpci_gsp *s, uint8_t *p, size_t n);
uint32_t gspm_rm_control(nvpci_gsp *s, uint8_t *p, size_t n);
uint32_t gspm_rm_free(nvpci_gsp *s, uint8_t *p, size_t n);
/* rpc_set_page_directory_v1E_05 (nvpci_gsp_vm.c). */
uint32_t gspm_rm_set_page_directory(nvpci_gsp *s, uint8_t *p, size_t n);
gspm_obj *gspm_rm_find(nvpci_gsp *s, uint32_t client, uint32_t handle);
gspm_obj *gspm_rm_add(nvpci_gsp *s, uint32_t client, uint32_t handle, uint32_t parent, uint32_t cls);
/* The runlist of an RM engine type (NV2080_ENGINE_TYPE_*) in the device-info table, -1 when the GPU has no such engine. */
int gspm_engine_runlist(uint32_t engine_type);
/* nvpci_gsp_chan.c: the channel object graph. gspm_chan_class: the class is one of it (then gspm_chan_alloc does the
 * class's parent and parameter checks; the handle is free). gspm_chan_control: true when cmd is one of its controls
 * (*st the status). gspm_chan_freed: an object is going (a channel's record goes with it). */
bool gspm_chan_class(const nvpci_gsp *s, uint32_t cls);
uint32_t gspm_chan_alloc(nvpci_gsp *s, uint32_t hc, uint32_t hp, uint32_t ho, uint32_t cls, gspm_obj *parent,
                         uint8_t *prm, uint32_t psize);
bool gspm_chan_control(nvpci_gsp *s, uint32_t hc, gspm_obj *o, uint32_t cmd, uint8_t *prm, uint32_t size, uint32_t *st);
void gspm_chan_freed(nvpci_gsp *s, const gspm_obj *o);
/* nvpci_exec.c: the engine (created on first use), its thread, stopped at free. */
void gspm_exec_free(nvpci_gsp *s);
void gspm_exec_chan_start(nvpci_gsp *s, gspm_chan *c);
/* nvpci_gsp.c: an event on the status queue (MMU_FAULT_QUEUED). */
void gspm_post_event(nvpci_gsp *s, uint32_t fn, const void *payload, size_t len);
gspm_obj *gspm_rm_client(nvpci_gsp *s, uint32_t handle);
void gspm_rm_clear(nvpci_gsp *s);

/* For tests: records rejected (bad element or unknown function), replies of one function, SET_REGISTRY entries. */
uint64_t nvpci_gsp_rejected(const nvpci_gsp *s);
uint64_t nvpci_gsp_served_fn(const nvpci_gsp *s, uint32_t fn);
unsigned nvpci_gsp_registry_entries(const nvpci_gsp *s);

static inline uint32_t gspm_g32(const void *p, size_t off) {
  uint32_t v;
  memcpy(&v, (const uint8_t *)p + off, 4);
  return v;
}
static inline uint64_t gspm_g64(const void *p, size_t off) {
  uint64_t v;
  memcpy(&v, (const uint8_t *)p + off, 8);
  return v;
}
static inline void gspm_p32(void *p, size_t off, uint32_t v) { memcpy((uint8_t *)p + off, &v, 4); }
static inline void gspm_p64(void *p, size_t off, uint64_t v) { memcpy((uint8_t *)p + off, &v, 8); }

#endif
