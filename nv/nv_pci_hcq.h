/* nv/nv_pci_hcq.h: the HCQ backend on a bare-metal NVIDIA GPU (PCI+NV, MOCKPCI+NV): what nv_dev.c's shared object
 * graph needs from the PCI interface (internal to nv/).
 *
 *   nv_pci_hcq.c     open (boot, golden context, then nv_dev.c's graph with RM over RPC), RM's RPC transport under
 *                    nv_rm.c (one RPC at a time), memory (bg_nv_pci_alloc behind bg_nv_mem_alloc), doorbell, close
 *   nv_pci_golden.c  the golden context under the driver's own client (tinygrad tinygrad/runtime/support/nv/ip.py
 *                    NV_GSP.init_golden_image): runlists, GSP-RM's reserved PDEs, the golden channel, its promoted
 *                    graphics context and engine objects; and the per-channel parts a user channel needs (memory
 *                    descriptors, promoted context buffers, the runlist in the work-submit token)
 *
 * Differences from tinygrad: no physical address travels in a handle field (hObjectError, hObjectBuffer,
 * hUserdMemory stay 0: there are no RM memory objects on this path, the descriptors carry the addresses); the
 * context buffers of PROMOTE_CTX are allocated once per buffer (tinygrad's `.get(k, valloc(...))` leaks one per
 * compute object, reference quirk 10) and freed at close; GSP-RM's reserved PDE tables are pinned so an unmap never
 * frees a table GSP-RM holds. */
#ifndef BG_NV_PCI_HCQ_H
#define BG_NV_PCI_HCQ_H

#include <pthread.h>
#include <stdint.h>

#include "nv/nv_abi_gsp.h"
#include "nv/nv_classes.h"
#include "nv/nv_hcq.h"
#include "nv/nv_pci.h"

#define NV_PCI_MAX_CTX_BUFS 48

/* The PCI side of an nv_gpu (nv_gpu.pci). */
typedef struct nv_pci_gpu {
  bg_pci_dev *pci;                   /* the device (closed with the GPU) */
  bg_nv_pci *d;
  pthread_mutex_t rpc_lock;          /* one RPC exchange at a time on GSP-RM's queues */
  bg_nv_rm_rpc rpc;                  /* nv_rm.c's transport: g->rm goes through it */
  bg_nv_class_choice cls;            /* the chip's classes (CLASSLIST_V2 of the driver's device) */
  uint32_t runlist_gr;               /* the GRAPHICS engine's runlist (FIFO_GET_DEVICE_INFO_TABLE) */
  bg_nv2080_gr_ctx_buffers ctx_info; /* context-buffer sizes and alignments of GR engine 0 */
  uint64_t reserved_va;              /* GSP-RM's 512 MiB (COPY_SERVER_RESERVED_PDES); never reused */
  uint32_t golden_vaspace, golden_channel, golden_compute, golden_copy;
  bg_nv_pci_mem golden_ring, golden_inst, golden_mthd;
  bg_nv_pci_mem bufs[NV_PCI_MAX_CTX_BUFS]; /* context buffers and channel memory, freed at close */
  unsigned nbufs;
} nv_pci_gpu;

/* ---- nv_pci_golden.c ---- */
/* The golden context under the driver's client (d->client/hdevice/hsubdevice); each failure names its part. */
int bg_nv_pci_golden(nv_gpu *g);
/* Free the golden objects (channel first) and every buffer in p->bufs. */
void bg_nv_pci_golden_fini(nv_gpu *g);
/* A user channel's NV_CHANNEL_ALLOC_PARAMS (570) in out: ring at ring_va with `entries`, USERD at userd_off in the
 * GPFIFO area and at userd_pa in VRAM, the context share; RAMFC/instance and method-buffer memory allocated here (kept
 * in p->bufs). */
int bg_nv_pci_channel_params(nv_gpu *g, uint64_t ring_va, uint32_t entries, uint64_t userd_off, uint64_t userd_pa,
                             uint32_t hctxshare, bg_nv_gsp_channel_alloc *out);
/* After the compute object is allocated on channel hchannel of the user client: PROMOTE_CTX of its graphics context
 * buffers (0, 1, 2: first their physical side, then their virtual side, as GSP-RM takes them). */
int bg_nv_pci_promote_compute(nv_gpu *g, uint32_t hchannel);
/* The work-submit token as the doorbell takes it: GSP-RM returns the channel id; the runlist goes in bits 16+ (and on
 * GB20x bit 30, the doorbell enable; tinygrad NV_GSP.rpc_rm_control). */
uint32_t bg_nv_pci_token(const nv_gpu *g, uint32_t chid);

/* ---- nv_pci_hcq.c ---- */
/* A VRAM or system-memory allocation of this GPU kept in p->bufs (freed at close); BG_ENOMEM when the table is full. */
int bg_nv_pci_keep(nv_pci_gpu *p, uint64_t size, unsigned flags, bg_nv_pci_mem **out);

#endif
