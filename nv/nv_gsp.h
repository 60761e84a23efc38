/* nv/nv_gsp.h: GSP-RM as the driver sees it: the shared message queues, the RPC format, the structures handed to the
 * firmware at boot, the CPU sequencer, and RM calls (alloc / control / free) as RPCs.
 *
 * Facts: tinygrad tinygrad/runtime/support/nv/ip.py NV_GSP.init_sw; Linux nouveau nvkm/subdev/gsp/r535.c and include/nvrm/535.113.01 (msgq_priv.h,
 * rpc headers, gsp_fw_wpr_meta.h, libos_init_args.h; the 570 structures differ only where tinygrad's NV code says so);
 * open-gpu-kernel-modules src/nvidia/inc/kernel/vgpu/rpc_global_enums.h (function numbers).
 *
 * Two tinygrad quirks fixed here (tinygrad tinygrad/runtime/support/nv/ip.py NV_GSP.read_resp): the receive pointer advances by the element's elemCount, not by
 * round_up(length, 0x1000); every RM reply's status is checked (rpc_result and the alloc/control block's status), and
 * a failure names the RPC, the class or command, and the NV_STATUS (nv_status.h).
 *
 * Nothing here touches registers: the device side comes in through bg_nv_gsp_ops. Not thread-safe: the caller
 * serializes (nv_pci.h holds the device lock around every RPC). */
#ifndef BG_NV_GSP_H
#define BG_NV_GSP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nv/nv_chips.h"

/* ---- constants (rpc_global_enums.h, msgq_priv.h) ---- */
#define BG_NV_GSP_QUEUE_SIZE 0x40000u       /* each of the two queues */
#define BG_NV_GSP_MSG_SIZE 0x1000u          /* one queue element */
#define BG_NV_GSP_ELEM_HDR 0x30u            /* GSP_MSG_QUEUE_ELEMENT header before the RPC header */
#define BG_NV_GSP_RPC_HDR 0x20u             /* rpc_message_header_v */
#define BG_NV_GSP_MAX_RECORD (16u * BG_NV_GSP_MSG_SIZE) /* one record spans at most 16 elements */

enum bg_nv_rpc_function {
  BG_NV_RPC_ALLOC_MEMORY = 4,
  BG_NV_RPC_FREE = 10,
  BG_NV_RPC_UNLOADING_GUEST_DRIVER = 47,
  BG_NV_RPC_SET_PAGE_DIRECTORY = 54,
  BG_NV_RPC_CONTINUATION_RECORD = 71,
  BG_NV_RPC_GSP_SET_SYSTEM_INFO = 72,
  BG_NV_RPC_SET_REGISTRY = 73,
  BG_NV_RPC_GSP_RM_CONTROL = 76,
  BG_NV_RPC_GSP_RM_ALLOC = 103,
  /* events GSP sends unasked */
  BG_NV_RPC_EVENT_GSP_INIT_DONE = 0x1001,
  BG_NV_RPC_EVENT_RUN_CPU_SEQUENCER = 0x1002,
  BG_NV_RPC_EVENT_MMU_FAULT_QUEUED = 0x1005,
  BG_NV_RPC_EVENT_OS_ERROR_LOG = 0x1006,
};

/* The name of a function number ("GSP_RM_ALLOC"), or "unknown". */
const char *bg_nv_rpc_name(uint32_t function);

/* ---- the shared region: page-table page, command queue (host -> GSP), status queue (GSP -> host) ---- */

typedef struct bg_nv_msgq {
  uint8_t *base;          /* CPU view of the region (host DMA memory, direct) */
  size_t size;            /* 0x1000 + 2 * BG_NV_GSP_QUEUE_SIZE */
  uint64_t bus0;          /* bus address of page 0 (sharedMemPhysAddr) */
  uint32_t pte_count;     /* pages listed in page 0 */
  uint32_t seq;           /* next seqNum */
  uint32_t msg_count;     /* elements per queue (63) */
  uint64_t sent, received; /* records, for the boot statistics */
} bg_nv_msgq;

/* Fill page 0 with the bus address of every 4 KiB page of the region (bus[i], npages of them), write the command
 * queue's msgqTxHeader (version 0, size, msgSize 0x1000, msgCount, writePtr 0, flags 1, rxHdrOff 32, entryOff 0x1000)
 * and zero the rest. Region too small or npages wrong: BG_EINVAL. */
int bg_nv_msgq_init(bg_nv_msgq *q, uint8_t *region, size_t size, const uint64_t *bus, size_t npages);

/* Offsets for MESSAGE_QUEUE_INIT_ARGUMENTS. */
#define BG_NV_MSGQ_CMD_OFFSET 0x1000u
#define BG_NV_MSGQ_STAT_OFFSET (0x1000u + BG_NV_GSP_QUEUE_SIZE)

/* Queue one RPC (function, payload of n bytes) as one record, or a record plus CONTINUATION_RECORDs when it exceeds
 * BG_NV_GSP_MAX_RECORD: element header (checksum = XOR of the u64 words folded hi ^ lo, seqNum, elemCount), RPC header
 * (version 0x03000000, "VRPC", length, function, result PENDING 0xffffffff), payload; writePtr advanced by elemCount
 * with wrap, after a release fence. Space is checked against GSP's read pointer (in the status queue's rx header):
 * BG_EBUSY naming the RPC when GSP has not consumed enough. The caller notifies GSP (NV_PGSP_QUEUE_HEAD(0)). */
int bg_nv_msgq_send(bg_nv_msgq *q, uint32_t function, const void *payload, size_t n);

/* One received message: its function, rpc_result and payload (copied into the caller's buffer). */
typedef struct bg_nv_rpc_msg {
  uint32_t function, result, result_private, seq;
  uint32_t length;        /* payload bytes */
  uint32_t elem_count;
} bg_nv_rpc_msg;

/* Take one message from the status queue if GSP wrote one: 1 with *msg and up to cap payload bytes in buf, 0 when the
 * queue is empty. Checked: elemCount (1..16 and within the written part), checksum, header version and signature,
 * length (>= 0x20, fits in elemCount elements), payload fits cap (BG_ENOSPC naming the function otherwise; the message
 * is consumed). The host's read pointer advances by elemCount (tinygrad tinygrad/runtime/support/nv/ip.py NV_GSP.read_resp). */
int bg_nv_msgq_recv(bg_nv_msgq *q, bg_nv_rpc_msg *msg, void *buf, size_t cap);

/* ---- the CPU sequencer (rpc_run_cpu_sequencer_v17_00) ---- */

typedef struct bg_nv_seq_ops {
  void *ctx;
  uint32_t (*rd32)(void *ctx, uint32_t addr);
  void (*wr32)(void *ctx, uint32_t addr, uint32_t val);
  void (*delay_us)(void *ctx, uint32_t us);
  /* opcodes 5..8: GSP core reset / start / wait for halt / resume (resume also restarts SEC2, tinygrad tinygrad/runtime/support/nv/ip.py NV_GSP) */
  int (*core_reset)(void *ctx);
  int (*core_start)(void *ctx);
  int (*core_wait_halt)(void *ctx);
  int (*core_resume)(void *ctx);
  int timeout_ms;         /* POLL's limit when the command's own timeout is 0, and the most any POLL waits */
} bg_nv_seq_ops;

/* Run the sequencer payload (bufferSizeDWord, cmdIndex, regSaveArea[8], commands): opcodes WRITE, MODIFY, POLL, DELAY_US,
 * SAVE, CORE_RESET, CORE_START, CORE_WAIT_HALT, CORE_RESUME. An unknown opcode, a command that runs past cmdIndex, a
 * SAVE index >= 8 or a POLL that times out: an error naming the command index, opcode and address. */
int bg_nv_gsp_sequencer_run(const uint8_t *payload, size_t n, const bg_nv_seq_ops *ops);

/* ---- boot structures (written into caller buffers; sizes are the 570 ones) ---- */

#define BG_NV_LIBOS_ARGS_SIZE 0x1000u
#define BG_NV_LIBOS_LOG_SIZE 0x10000u       /* each of LOGINIT, LOGINTR, LOGRM, LOGMNOC, LOGKRNL */
#define BG_NV_WPR_META_SIZE 256u
#define BG_NV_SYSTEM_INFO_SIZE 928u

/* GSP_ARGUMENTS_CACHED with MESSAGE_QUEUE_INIT_ARGUMENTS (bDmemStack 1) into buf (>= 0x1000 zeroed bytes). */
int bg_nv_gsp_rm_args(uint8_t *buf, size_t cap, const bg_nv_msgq *q);
/* LibosMemoryRegionInitArgument entries LOGINIT..LOGKRNL (log_bus + i * BG_NV_LIBOS_LOG_SIZE) and RMARGS. */
int bg_nv_libos_args(uint8_t *buf, size_t cap, uint64_t log_bus, uint64_t rmargs_bus);

/* Radix-3 page tree of an image of len bytes (tinygrad tinygrad/runtime/support/nv/ip.py NV_GSP.init_sw): pages before the image, and the builder that writes level
 * 0..2 tables given the bus address of every page of the tree+image buffer. */
uint64_t bg_nv_radix3_table_pages(uint64_t len);
int bg_nv_radix3_build(uint8_t *buf, size_t cap, const uint64_t *bus, size_t npages, const uint8_t *image, size_t len);

/* GspFwWprMeta. Non-FSP chips: the top-down VRAM layout of tinygrad tinygrad/runtime/support/nv/ip.py NV_GSP.init_sw from vram_size (frts must land at vram - 2 MiB);
 * FSP chips: sizes only. All addresses are bus addresses. */
typedef struct bg_nv_wpr_in {
  const bg_nv_chip *chip;
  uint64_t vram_size;
  uint64_t radix3_bus, radix3_image_size; /* sizeOfRadix3Elf = image bytes */
  uint64_t radix3_total_size;             /* table pages + image, for the layout */
  uint64_t bootloader_bus, bootloader_size;
  uint32_t bl_code_offset, bl_data_offset, bl_manifest_offset;
  uint64_t signature_bus;
} bg_nv_wpr_in;
int bg_nv_wpr_meta(uint8_t *buf, size_t cap, const bg_nv_wpr_in *in);

/* GspSystemInfo for GSP_SET_SYSTEM_INFO and the PACKED_REGISTRY_TABLE for SET_REGISTRY. */
typedef struct bg_nv_sysinfo_in {
  const bg_nv_chip *chip;
  uint64_t bar0_bus, bar1_bus, bar3_bus;
  uint8_t bus, dev, fn;
  uint32_t cfg_id, cfg_subsys;            /* config dwords 0x00 and 0x2c */
  uint8_t revision;
} bg_nv_sysinfo_in;
int bg_nv_gsp_system_info(uint8_t *buf, size_t cap, const bg_nv_sysinfo_in *in);
int bg_nv_gsp_registry(uint8_t *buf, size_t cap, size_t *len);

/* FSP boot (tinygrad tinygrad/runtime/support/nv/ip.py NV_FLCN_COT): GSP_FMC_BOOT_PARAMS (80 B), NVDM_PAYLOAD_COT (860 B;
 * version 1 on GH100, 2 on Blackwell: open-gpu-kernel-modules kern_fsp cotPayloadVersion) and the MCTP/NVDM message around it
 * (padding only up to the next dword, never 4 extra bytes: tinygrad tinygrad/runtime/support/nv/ip.py kfsp_send_msg). */
int bg_nv_fmc_boot_params(uint8_t *buf, size_t cap, uint64_t wpr_meta_bus, uint64_t libos_args_bus);
int bg_nv_cot_payload(uint8_t *buf, size_t cap, uint16_t version, const void *fmc /* const bg_nv_fmc * */, uint64_t fmc_image_bus,
                      uint64_t frts_vidmem_offset, uint64_t boot_params_bus);
int bg_nv_fsp_message(uint8_t *buf, size_t cap, uint8_t nvdm_type, const void *payload, size_t n, size_t *len);

/* ---- RM over RPC ---- */

typedef struct bg_nv_gsp_ops {
  void *ctx;
  void (*notify)(void *ctx);                  /* NV_PGSP_QUEUE_HEAD(0) = 0 */
  const bg_nv_seq_ops *seq;                   /* for RUN_CPU_SEQUENCER events */
  void (*relax)(void *ctx);                   /* between empty polls (sleep or yield) */
  int timeout_ms;                             /* for one reply */
} bg_nv_gsp_ops;

typedef struct bg_nv_gsp {
  bg_nv_msgq q;
  bg_nv_gsp_ops ops;
  bool error;                                 /* OS_ERROR_LOG or MMU_FAULT_QUEUED seen: every later call fails */
  char error_text[256];
  uint32_t next_handle;                       /* host-chosen handles from 0xcf000000 */
  uint64_t nrpc;                              /* RPCs sent (statistics) */
  uint8_t *buf;                               /* reply buffer (BG_NV_GSP_MAX_RECORD bytes) */
} bg_nv_gsp;

int bg_nv_gsp_init(bg_nv_gsp *g, const bg_nv_gsp_ops *ops);
void bg_nv_gsp_fini(bg_nv_gsp *g);
/* Send and notify. */
int bg_nv_gsp_send(bg_nv_gsp *g, uint32_t function, const void *payload, size_t n);
/* Receive until a message of `function` arrives (events handled on the way: RUN_CPU_SEQUENCER runs, OS_ERROR_LOG and
 * MMU_FAULT_QUEUED put the device in error); its payload is copied to reply (up to cap; *len its length). Timeout:
 * BG_EHANG naming the function awaited. Non-zero rpc_result: an error naming the function and the NV_STATUS. */
int bg_nv_gsp_wait(bg_nv_gsp *g, uint32_t function, void *reply, size_t cap, size_t *len);
/* Drain whatever GSP sent (events) without waiting; error state reported. */
int bg_nv_gsp_poll(bg_nv_gsp *g);

/* RM_ALLOC: object 0 => a new host handle; *out the handle (the client's for class NV01_ROOT). params (size bytes) are
 * sent and the reply's copy written back. The rpc_gsp_rm_alloc_v status is checked. */
int bg_nv_gsp_rm_alloc(bg_nv_gsp *g, uint32_t client, uint32_t parent, uint32_t object, uint32_t cls, void *params,
                       uint32_t size, uint32_t *out);
/* RM_CONTROL: params in and out; status checked. */
int bg_nv_gsp_rm_control(bg_nv_gsp *g, uint32_t client, uint32_t object, uint32_t cmd, void *params, uint32_t size);
/* RM free (function FREE: rpc_free_v {hRoot, hObjectParent, hObjectOld, status}). */
int bg_nv_gsp_rm_free(bg_nv_gsp *g, uint32_t client, uint32_t parent, uint32_t object);

#endif
