/* nv/nv_pci_boot.c: the order of the bare-metal boot after early init (nv/nv_pci.h), its steps table, and teardown.
 *
 *   boot structures   host DMA memory: message queues, GSP_ARGUMENTS_CACHED, libos arguments, radix-3 tree of the
 *                     GSP-RM image, bootloader, signature, WPR metadata; SET_SYSTEM_INFO and SET_REGISTRY pre-queued;
 *                     the FSP COT message (Hopper/Blackwell). Without host DMA (the USB bridge) all of it in VRAM
 *                     behind BAR1, built in host copies and written through BAR1; the queues' copy synced on notify
 *                     and on each empty poll
 *   VBIOS             (Ampere/Ada) the ROM's image chain through the PROM window, the FWSEC signature the fuse picks, the FRTS image:
 *                     up to here nothing is written to BAR0
 *   FWSEC-FRTS, Booter (Ampere/Ada)  or  FSP chain of trust (Hopper/Blackwell): nv_boot_flcn.c / nv_boot_fsp.c
 *   GSP init done     GSP's status-queue header, then GSP_INIT_DONE with CPU-sequencer events run on the way
 *   BAR1 physical mode
 *   RM objects        the driver's client (NV01_ROOT), device (NV01_DEVICE_0), subdevice (NV20_SUBDEVICE_0)
 *   VA space          the driver's page tables (root in boot VRAM), FERMI_VASPACE_A and SET_PAGE_DIRECTORY (nv_pci_vm.c)
 *
 * Facts: tinygrad tinygrad/runtime/support/nv/ip.py NV_GSP.init_sw, tinygrad tinygrad/runtime/support/nv/ip.py (NV_GSP.init_sw/init_hw), Linux nouveau
 * nvkm/subdev/gsp/r535.c (r535_gsp_init, r535_gsp_rpc_unloading_guest_driver, the sequencer's core ops). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/error.h"
#include "nv/nv_falcon.h"
#include "nv/nv_gsp_priv.h"
#include "nv/nv_regs.h"
#include "util/clock.h"

#define NV01_ROOT 0x0u
#define NV01_DEVICE_0 0x80u
#define NV20_SUBDEVICE_0 0x2080u
#define PRIV_ROOT 0xc1e00004u       /* the driver's own client handle (tinygrad NV_GSP.priv_root) */
#define GSP_FAST_UNLOAD (1u << 6)   /* __GPU_STATE_FLAGS_FAST_UNLOAD */
#define GSP_RPC_TIMEOUT_MS 10000

/* ---------------- steps ---------------- */

void bg_nv_step_begin(bg_nv_pci *d, const char *name) {
  if (d->nsteps >= BG_NV_PCI_MAX_STEPS) return;
  bg_nv_boot_step *s = &d->steps[d->nsteps];
  *s = (bg_nv_boot_step){name, bg_now_ns(), d->reg_reads, d->reg_writes, d->gsp.q.sent};
}

void bg_nv_step_end(bg_nv_pci *d) {
  if (d->nsteps >= BG_NV_PCI_MAX_STEPS) return;
  bg_nv_boot_step *s = &d->steps[d->nsteps++];
  s->ns = bg_now_ns() - s->ns;
  s->reg_reads = d->reg_reads - s->reg_reads;
  s->reg_writes = d->reg_writes - s->reg_writes;
  s->rpcs = d->gsp.q.sent - s->rpcs;
  BG_LOG(2, "nv: %s: step %-20s %10.3f ms %8" PRIu64 " reads %6" PRIu64 " writes %3" PRIu64 " RPCs",
         bg_pci_name(d->pci), s->name, (double)s->ns / 1e6, s->reg_reads, s->reg_writes, s->rpcs);
}

static int step_fail(bg_nv_pci *d, int e) {
  const char *name = d->nsteps ? d->steps[d->nsteps - 1].name : "boot";
  return bg_error_context(e, "nv: %s: step '%s': ", bg_pci_name(d->pci), name);
}

/* ---------------- the CPU sequencer's device side and the GSP's notify ---------------- */

static uint32_t seq_rd32(void *ctx, uint32_t a) { return bg_nv_rd32(ctx, a); }
static void seq_wr32(void *ctx, uint32_t a, uint32_t v) { bg_nv_wr32(ctx, a, v); }
static void seq_delay(void *ctx, uint32_t us) {
  (void)ctx;
  bg_nv_sleep_us(us);
}

/* CORE_RESET: reset GSP's falcon and let it DMA without a context (nouveau r535 GSP_SEQ_BUF_OPCODE_CORE_RESET) */
static int seq_core_reset(void *ctx) {
  bg_nv_pci *d = ctx;
  int e = bg_nv_falcon_reset(d, &bg_nv_falcon_gsp, false);
  if (e >= 0) bg_nv_falcon_disable_ctx_req(d, &bg_nv_falcon_gsp);
  return e;
}

static int seq_core_start(void *ctx) {
  bg_nv_falcon_start(ctx, &bg_nv_falcon_gsp);
  return 0;
}

static int seq_core_wait_halt(void *ctx) { return bg_nv_falcon_wait_halt(ctx, &bg_nv_falcon_gsp); }

/* CORE_RESUME (nouveau r535 GSP_SEQ_BUF_OPCODE_CORE_RESUME, tinygrad tinygrad/runtime/support/nv/ip.py NV_GSP): GSP back to RISC-V with the libos arguments,
 * SEC2 restarted, wait for its boot-stage-3 handoff, SEC2 MAILBOX0 must read 0. */
static int seq_core_resume(void *ctx) {
  bg_nv_pci *d = ctx;
  int e = bg_nv_falcon_reset(d, &bg_nv_falcon_gsp, true);
  if (e < 0) return e;
  uint64_t libos = d->libos_mem.bus[0];
  bg_nv_wr32(d, NV_PGSP_FALCON_MAILBOX0, (uint32_t)libos);
  bg_nv_wr32(d, NV_PGSP_FALCON_MAILBOX1, (uint32_t)(libos >> 32));
  bg_nv_falcon_start(d, &bg_nv_falcon_sec2);
  if ((e = bg_nv_poll_set(d, NV_PGC6_BSI_SECURE_SCRATCH_14, NV_PGC6_BSI_SECURE_SCRATCH_14_BOOT_STAGE_3_HANDOFF,
                          BG_NV_TIMEOUT_HALT_MS, "sequencer CORE_RESUME: SEC2 boot stage 3 handoff")) < 0)
    return e;
  uint32_t m = bg_nv_falcon_rd(d, &bg_nv_falcon_sec2, NV_PFALCON_FALCON_MAILBOX0);
  if (m != 0)
    return bg_error(BG_EIO, "nv: %s: sequencer CORE_RESUME: SEC2 NV_PFALCON_FALCON_MAILBOX0 = 0x%08" PRIx32
                    " (0 expected)", bg_pci_name(d->pci), m);
  return 0;
}

static int msgq_push(bg_nv_pci *d);
static void msgq_pull(bg_nv_pci *d);

/* Without host DMA the queues' host copy goes to VRAM first: the doorbell write then flushes it out in order. */
static void gsp_notify(void *ctx) {
  bg_nv_pci *d = ctx;
  if (msgq_push(d) < 0) BG_LOG(1, "nv: %s: GSP command queue to VRAM: %s", bg_pci_name(d->pci), bg_last_error());
  bg_nv_wr32(d, NV_PGSP_QUEUE_HEAD(0), 0);
}

static void gsp_relax(void *ctx) {
  bg_nv_sleep_us(20);
  msgq_pull(ctx);
}

/* ---------------- boot structures ---------------- */

static int sysmem(bg_nv_pci *d, bg_sysmem *m, uint64_t size, bool contiguous, const char *what) {
  int e = bg_pci_alloc_sysmem(d->pci, size, contiguous ? BG_SYSMEM_CONTIGUOUS : 0, NULL, m);
  if (e < 0) return bg_error_context(e, "nv: %s: DMA memory for %s (%" PRIu64 " bytes): ", bg_pci_name(d->pci), what,
                                     size);
  memset((void *)m->view.ptr, 0, m->size);
  return 0;
}

/* Boot memory the firmware takes by one address (tinygrad tinygrad/runtime/support/nv/nvdev.py step 6, tinygrad NVDev._alloc_boot_mem): a page of host
 * memory when it fits in one; else VRAM seen through BAR1, the firmware given BAR1's bus address + the VRAM address
 * (the GPU reaches its own VRAM through its aperture as coherent memory), so no hugepage is needed; host memory
 * (contiguous: a hugepage) only when BAR1 cannot show it. The region is described as a bg_sysmem with map_base NULL.
 * Without host DMA (d->no_host_dma) every size goes to VRAM and BAR1 is a callback view: the CPU builds the region in
 * a host copy (view.ptr) that commit() writes through BAR1 before the firmware reads it. */
static int boot_mem(bg_nv_pci *d, bg_sysmem *m, uint64_t size, const char *what) {
  size = (size + 4095) & ~(uint64_t)4095;
  uint64_t pa;
  bool stage = d->no_host_dma && !d->bar1.ptr;
  if (d->no_host_dma) {
    int e = bg_tlsf_alloc(d->vram_main, size, 4096, &pa);
    if (e < 0) return bg_error_context(e, "nv: %s: VRAM for %s (%" PRIu64 " bytes; the device cannot reach host "
                                       "memory): ", bg_pci_name(d->pci), what, size);
    if (pa + size > d->bar1.size) {
      bg_tlsf_free(d->vram_main, pa);
      return bg_error(BG_ENOMEM, "nv: %s: %s at VRAM 0x%" PRIx64 " (+0x%" PRIx64 ") lies outside BAR1 (0x%" PRIx64
                      " bytes) and the device cannot reach host memory", bg_pci_name(d->pci), what, pa, size,
                      d->bar1.size);
    }
  } else if (size <= 4096 || !d->bar1.ptr || bg_tlsf_alloc(d->vram_main, size, 4096, &pa) < 0 ||
             pa + size > d->bar1.size) {
    return sysmem(d, m, size, true, what);
  }
  memset(m, 0, sizeof(*m));
  m->npages = size / 4096;
  uint8_t *host = stage ? calloc(1, size) : NULL;
  if (!(m->bus = malloc(m->npages * sizeof(*m->bus))) || (stage && !host)) {
    free(m->bus);
    free(host);
    m->bus = NULL;
    bg_tlsf_free(d->vram_main, pa);
    return bg_error(BG_ENOMEM, "nv: %s: page list of %s", bg_pci_name(d->pci), what);
  }
  for (size_t i = 0; i < m->npages; i++) m->bus[i] = d->bar1_bus + pa + 4096 * i;
  m->size = size;
  m->view = (bg_mmio){stage ? host : d->bar1.ptr + pa, size, NULL, NULL};
  memset((void *)m->view.ptr, 0, size);
  return 0;
}

/* VRAM address of boot memory placed there (bus addresses inside BAR1). */
static uint64_t vram_pa(const bg_nv_pci *d, const bg_sysmem *m) { return m->bus[0] - d->bar1_bus; }
static bool staged(const bg_nv_pci *d, const bg_sysmem *m) { return m->bus && !m->map_base && !d->bar1.ptr; }

/* [off, off+n) of staged boot memory's host copy into VRAM (queued write-combined writes over the bridge). */
static int commit_range(bg_nv_pci *d, const bg_sysmem *m, uint64_t off, size_t n) {
  if (!staged(d, m) || !n) return 0;
  return bg_nv_vram_write(d, vram_pa(d, m) + off, (const uint8_t *)m->view.ptr + off, n);
}
static int commit(bg_nv_pci *d, const bg_sysmem *m) { return commit_range(d, m, 0, m->size); }

/* [off, off+n) of VRAM into staged boot memory's host copy. */
static int fetch_range(bg_nv_pci *d, bg_sysmem *m, uint64_t off, size_t n) {
  if (!staged(d, m) || !n) return 0;
  return bg_mmio_read(&d->bar1, vram_pa(d, m) + off, (uint8_t *)(uintptr_t)m->view.ptr + off, n);
}

int bg_nv_boot_mem(bg_nv_pci *d, bg_sysmem *m, uint64_t size, const char *what) { return boot_mem(d, m, size, what); }

static uint8_t *cpu(bg_sysmem *m) { return (uint8_t *)m->view.ptr; }

/* ---------------- the message queues in VRAM, without host DMA ---------------- */

static uint32_t q_rd32(const bg_nv_pci *d, uint32_t off) {
  uint32_t v;
  memcpy(&v, (const uint8_t *)d->msgq_mem.view.ptr + off, 4);
  return v;
}

/* Elements [from, to) (mod the element count, as the queue wraps) of the queue at qoff: host copy to VRAM (out) or
 * VRAM to host copy. */
static int sync_elems(bg_nv_pci *d, uint32_t qoff, uint32_t from, uint32_t to, bool out) {
  uint32_t cnt = d->gsp.q.msg_count;
  while (from != to) {
    uint32_t end = to > from ? to : cnt;
    uint64_t off = qoff + BG_MSGQ_ENTRY_OFF + (uint64_t)from * BG_NV_GSP_MSG_SIZE;
    size_t n = (size_t)(end - from) * BG_NV_GSP_MSG_SIZE;
    int e = out ? commit_range(d, &d->msgq_mem, off, n) : fetch_range(d, &d->msgq_mem, off, n);
    if (e < 0) return e;
    from = end % cnt;
  }
  return 0;
}

/* What the host wrote since the last push: the new command elements, then the command queue's writePtr, and the
 * host's readPtr of the status queue (both host-owned words of the command queue's header page). */
static int msgq_push(bg_nv_pci *d) {
  if (!staged(d, &d->msgq_mem) || !d->gsp.q.msg_count) return 0;
  uint32_t cnt = d->gsp.q.msg_count, w = q_rd32(d, BG_NV_MSGQ_CMD_OFFSET + BG_MSGQ_TX_WRITE_PTR);
  uint32_t r = q_rd32(d, BG_NV_MSGQ_CMD_OFFSET + BG_MSGQ_RX_READ_PTR);
  int e = 0;
  if (w != d->msgq_cmd_w && w < cnt) {
    e = sync_elems(d, BG_NV_MSGQ_CMD_OFFSET, d->msgq_cmd_w, w, true);
    if (e >= 0) e = commit_range(d, &d->msgq_mem, BG_NV_MSGQ_CMD_OFFSET + BG_MSGQ_TX_WRITE_PTR, 4);
    if (e >= 0) d->msgq_cmd_w = w;
  }
  if (e >= 0 && r != d->msgq_host_r) {
    e = commit_range(d, &d->msgq_mem, BG_NV_MSGQ_CMD_OFFSET + BG_MSGQ_RX_READ_PTR, 4);
    if (e >= 0) d->msgq_host_r = r;
  }
  return e;
}

/* What GSP wrote: the status queue's header (its writePtr) and GSP's readPtr of the command queue, then the new status
 * elements. On a failed read the host copy keeps the old writePtr, so the receiver sees nothing new (and times out
 * naming the RPC; the bridge's error is logged). */
static void msgq_pull(bg_nv_pci *d) {
  if (!staged(d, &d->msgq_mem) || !d->gsp.q.msg_count) return;
  uint32_t cnt = d->gsp.q.msg_count;
  int e = msgq_push(d);
  if (e >= 0) e = fetch_range(d, &d->msgq_mem, BG_NV_MSGQ_STAT_OFFSET, BG_MSGQ_RX_READ_PTR + 4);
  uint32_t w = q_rd32(d, BG_NV_MSGQ_STAT_OFFSET + BG_MSGQ_TX_WRITE_PTR);
  if (e >= 0 && w != d->msgq_stat_w && w < cnt && d->msgq_stat_w < cnt) {
    e = sync_elems(d, BG_NV_MSGQ_STAT_OFFSET, d->msgq_stat_w, w, false);
    if (e >= 0) d->msgq_stat_w = w;
  }
  if (e < 0) {
    uint32_t old = d->msgq_stat_w;
    memcpy((uint8_t *)(uintptr_t)d->msgq_mem.view.ptr + BG_NV_MSGQ_STAT_OFFSET + BG_MSGQ_TX_WRITE_PTR, &old, 4);
    BG_LOG(1, "nv: %s: GSP status queue from VRAM: %s", bg_pci_name(d->pci), bg_last_error());
  }
}

static int parse_bdf(const char *name, uint8_t *bus, uint8_t *dev, uint8_t *fn) {
  unsigned dom, b, dv, f;
  if (sscanf(name, "%x:%x:%x.%x", &dom, &b, &dv, &f) != 4) {
    *bus = *dev = *fn = 0; /* not a PCI address (the USB bridge): GSP takes 0 (tinygrad bdf_as_int) */
    return 0;
  }
  *bus = (uint8_t)b;
  *dev = (uint8_t)(dv & 0x1f);
  *fn = (uint8_t)(f & 7);
  return 0;
}

static int prequeue(bg_nv_pci *d) {
  bg_nv_sysinfo_in in = {.chip = d->chip, .bar0_bus = d->bar0_bus, .bar1_bus = d->bar1_bus, .bar3_bus = d->bar3_bus};
  parse_bdf(bg_pci_name(d->pci), &in.bus, &in.dev, &in.fn);
  uint32_t rev = 0;
  int e = bg_pci_cfg_read(d->pci, 0x00, 4, &in.cfg_id);
  if (e >= 0) e = bg_pci_cfg_read(d->pci, 0x2c, 4, &in.cfg_subsys);
  if (e >= 0) e = bg_pci_cfg_read(d->pci, 0x08, 1, &rev);
  if (e < 0) return e;
  in.revision = (uint8_t)rev;
  uint8_t sys[BG_NV_SYSTEM_INFO_SIZE], reg[512];
  size_t reglen = 0;
  memset(sys, 0, sizeof(sys));
  memset(reg, 0, sizeof(reg));
  if ((e = bg_nv_gsp_system_info(sys, sizeof(sys), &in)) < 0 ||
      (e = bg_nv_msgq_send(&d->gsp.q, BG_NV_RPC_GSP_SET_SYSTEM_INFO, sys, sizeof(sys))) < 0 ||
      (e = bg_nv_gsp_registry(reg, sizeof(reg), &reglen)) < 0 ||
      (e = bg_nv_msgq_send(&d->gsp.q, BG_NV_RPC_SET_REGISTRY, reg, reglen)) < 0)
    return e;
  return 0;
}

static int boot_structures(bg_nv_pci *d) {
  bg_nv_pci_priv *p = bg_nv_priv(d);
  const bg_nv_firmware *fw = &d->fw;
  p->seq = (bg_nv_seq_ops){d, seq_rd32, seq_wr32, seq_delay, seq_core_reset, seq_core_start, seq_core_wait_halt,
                           seq_core_resume, bg_nv_timeout_ms(BG_NV_TIMEOUT_HALT_MS)};
  bg_nv_gsp_ops ops = {d, gsp_notify, &p->seq, gsp_relax, bg_nv_timeout_ms(GSP_RPC_TIMEOUT_MS)};
  int e = bg_nv_gsp_init(&d->gsp, &ops);
  if (e < 0) return e;
  p->gsp_init = true;

  uint64_t r3_tables = bg_nv_radix3_table_pages(fw->gsp.image_size);
  uint64_t r3_size = r3_tables * 4096 + fw->gsp.image_size, sig_size = fw->gsp.signature_size;
  /* the queues and the image's page tree in host memory on PCI; without host DMA all goes to VRAM (boot_mem) */
  uint64_t msgq_size = 0x1000 + 2ull * BG_NV_GSP_QUEUE_SIZE;
  if ((e = d->no_host_dma ? boot_mem(d, &d->msgq_mem, msgq_size, "the GSP message queues")
                          : sysmem(d, &d->msgq_mem, msgq_size, false, "the GSP message queues")) < 0 ||
      (e = boot_mem(d, &d->rmargs_mem, BG_NV_LIBOS_ARGS_SIZE, "GSP_ARGUMENTS_CACHED")) < 0 ||
      (e = boot_mem(d, &d->libos_mem, BG_NV_LIBOS_ARGS_SIZE + 5ull * BG_NV_LIBOS_LOG_SIZE, "the libos arguments")) <
          0 ||
      (e = d->no_host_dma ? boot_mem(d, &d->radix3_mem, r3_size, "the GSP-RM image")
                          : sysmem(d, &d->radix3_mem, r3_size, false, "the GSP-RM image")) < 0 ||
      (e = boot_mem(d, &d->bootloader_mem, fw->bootloader.data_size, "the GSP bootloader")) < 0 ||
      (e = boot_mem(d, &d->sig_mem, sig_size, "the GSP-RM signature")) < 0 ||
      (e = boot_mem(d, &d->wpr_meta_mem, 4096, "the WPR metadata")) < 0)
    return e;

  if ((e = bg_nv_msgq_init(&d->gsp.q, cpu(&d->msgq_mem), d->msgq_mem.size, d->msgq_mem.bus, d->msgq_mem.npages)) < 0 ||
      (e = bg_nv_gsp_rm_args(cpu(&d->rmargs_mem), d->rmargs_mem.size, &d->gsp.q)) < 0 ||
      (e = bg_nv_libos_args(cpu(&d->libos_mem), BG_NV_LIBOS_ARGS_SIZE, d->libos_mem.bus[0] + BG_NV_LIBOS_ARGS_SIZE,
                            d->rmargs_mem.bus[0])) < 0 ||
      (e = bg_nv_radix3_build(cpu(&d->radix3_mem), d->radix3_mem.size, d->radix3_mem.bus, d->radix3_mem.npages,
                              fw->gsp.image, fw->gsp.image_size)) < 0)
    return e;
  memcpy(cpu(&d->bootloader_mem), fw->bootloader.data, fw->bootloader.data_size);
  memcpy(cpu(&d->sig_mem), fw->gsp.signature, sig_size);
  bg_nv_wpr_in w = {.chip = d->chip, .vram_size = d->vram_size, .radix3_bus = d->radix3_mem.bus[0],
                    .radix3_image_size = fw->gsp.image_size, .radix3_total_size = r3_size,
                    .bootloader_bus = d->bootloader_mem.bus[0], .bootloader_size = fw->bootloader.data_size,
                    .bl_code_offset = fw->bootloader.monitor_code_offset,
                    .bl_data_offset = fw->bootloader.monitor_data_offset,
                    .bl_manifest_offset = fw->bootloader.manifest_offset, .signature_bus = d->sig_mem.bus[0]};
  if ((e = bg_nv_wpr_meta(cpu(&d->wpr_meta_mem), d->wpr_meta_mem.size, &w)) < 0) return e;
  return prequeue(d);
}

/* GSP initialised its side: the status queue's msgqTxHeader.entryOff reads 0x1000 (tinygrad tinygrad/runtime/support/nv/ip.py NV_GSP.init_hw step 1). */
static int wait_status_queue(bg_nv_pci *d) {
  const volatile uint8_t *h = d->msgq_mem.view.ptr + BG_NV_MSGQ_STAT_OFFSET;
  int ms = bg_nv_timeout_ms(BG_NV_TIMEOUT_BOOT_MS);
  uint64_t end = bg_now_ns() + (uint64_t)ms * 1000000u;
  uint32_t off;
  for (unsigned i = 0;; i++) {
    off = staged(d, &d->msgq_mem) ? bg_mmio_rd32(&d->bar1, vram_pa(d, &d->msgq_mem) + BG_NV_MSGQ_STAT_OFFSET + 28)
                                  : *(const volatile uint32_t *)(h + 28);
    if (off == 0x1000) return 0;
    if (bg_now_ns() > end) break;
    if (i >= 16) bg_nv_sleep_us(i >= 256 ? 1000 : 10);
  }
  return bg_error(BG_EHANG, "nv: %s: GSP did not set up its status queue within %d ms (msgqTxHeader.entryOff = "
                  "0x%" PRIx32 ", 0x1000 expected)", bg_pci_name(d->pci), ms, off);
}

static int rm_objects(bg_nv_pci *d) {
  uint8_t root[120], dev[56], sub[4];
  memset(root, 0, sizeof(root));
  memset(dev, 0, sizeof(dev));
  memset(sub, 0, sizeof(sub));
  uint32_t client = 0, hdev = 0, hsub = 0, share = PRIV_ROOT;
  int e = bg_nv_gsp_rm_alloc(&d->gsp, PRIV_ROOT, 0, PRIV_ROOT, NV01_ROOT, root, sizeof(root), &client);
  if (e < 0) return e;
  d->client = client;
  memcpy(dev + 4, &share, 4); /* NV0080_ALLOC_PARAMETERS.hClientShare */
  if ((e = bg_nv_gsp_rm_alloc(&d->gsp, client, client, 0, NV01_DEVICE_0, dev, sizeof(dev), &hdev)) < 0) return e;
  d->hdevice = hdev;
  if ((e = bg_nv_gsp_rm_alloc(&d->gsp, client, hdev, 0, NV20_SUBDEVICE_0, sub, sizeof(sub), &hsub)) < 0) return e;
  d->hsubdevice = hsub;
  return 0;
}

/* Without host DMA: every staged region into VRAM once built (before the firmware is started), and what the VRAM copy
 * of the queues now holds (the pre-queued records). */
static int commit_staged(bg_nv_pci *d) {
  bg_sysmem *mems[] = {&d->msgq_mem, &d->libos_mem, &d->rmargs_mem, &d->radix3_mem, &d->bootloader_mem, &d->sig_mem,
                       &d->wpr_meta_mem, &d->fmc_mem};
  for (size_t i = 0; i < sizeof(mems) / sizeof(mems[0]); i++) {
    int e = commit(d, mems[i]);
    if (e < 0) return bg_error_context(e, "nv: %s: boot structures into VRAM: ", bg_pci_name(d->pci));
  }
  if (staged(d, &d->msgq_mem)) {
    d->msgq_cmd_w = q_rd32(d, BG_NV_MSGQ_CMD_OFFSET + BG_MSGQ_TX_WRITE_PTR);
    d->msgq_host_r = d->msgq_stat_w = 0;
  }
  return 0;
}

int bg_nv_pci_boot(bg_nv_pci *d) {
  bg_nv_pci_priv *p = bg_nv_priv(d);
  bg_nv_flcn_boot fb = {0};
  bg_nv_fsp_boot *sb = NULL;
  bg_nv_step_begin(d, "boot structures");
  int e = boot_structures(d);
  uint64_t libos = d->libos_mem.bus ? d->libos_mem.bus[0] : 0, meta = d->wpr_meta_mem.bus ? d->wpr_meta_mem.bus[0] : 0;
  if (e >= 0 && d->chip->fsp_boot) {
    if (!(sb = calloc(1, sizeof(*sb)))) e = bg_error(BG_ENOMEM, "nv: FSP message");
    else e = bg_nv_boot_fsp_prepare(d, sb, libos, meta);
  }
  if (e >= 0) e = commit_staged(d);
  bg_nv_step_end(d);
  if (e >= 0 && !d->chip->fsp_boot) { /* its own step: the ROM's dword reads dominate the boot's register reads */
    bg_nv_step_begin(d, "VBIOS");
    e = bg_nv_boot_flcn_prepare(d, &fb);
    bg_nv_step_end(d);
  }
  /* Up to here nothing was written to BAR0: the first write below starts the chip's boot. */
  if (e >= 0) e = d->chip->fsp_boot ? bg_nv_boot_fsp_run(d, sb) : bg_nv_boot_flcn_run(d, &fb, libos, meta);
  free(sb);
  bg_nv_boot_flcn_free(d, &fb);
  if (e < 0) return step_fail(d, e);

  bg_nv_step_begin(d, "GSP init done");
  e = wait_status_queue(d);
  if (e >= 0) {
    uint8_t reply[64];
    size_t len = 0;
    e = bg_nv_gsp_wait(&d->gsp, BG_NV_RPC_EVENT_GSP_INIT_DONE, reply, sizeof(reply), &len);
  }
  bg_nv_step_end(d);
  if (e < 0) return step_fail(d, e);
  p->gsp_up = true;

  /* BAR1 in physical mode, VRAM target: BAR1 offset == VRAM address from here on (tinygrad tinygrad/runtime/support/nv/ip.py NV_GSP.init_hw step 2). From Hopper on
   * the block lives in the function's own space (open-gpu-kernel-modules kern_bus_gh100.c writes
   * NV_VIRTUAL_FUNCTION_PRIV_FUNC_BAR1_BLOCK_LOW_ADDR; gh100 dev_bus.h has no NV_PBUS_BAR1_BLOCK). */
  bg_nv_step_begin(d, "BAR1 physical mode");
  bg_nv_wr32(d, d->chip->fsp_boot ? NV_VIRTUAL_FUNCTION_PRIV_FUNC_BAR1_BLOCK_LOW_ADDR : NV_PBUS_BAR1_BLOCK, 0);
  bg_nv_step_end(d);

  bg_nv_step_begin(d, "RM objects");
  e = rm_objects(d);
  bg_nv_step_end(d);
  if (e < 0) return step_fail(d, e);

  bg_nv_step_begin(d, "VA space");
  e = bg_nv_pci_vm_init(d);
  if (e >= 0) e = bg_nv_pci_vaspace(d);
  bg_nv_step_end(d);
  return e < 0 ? step_fail(d, e) : 0;
}

static void free_sysmem(bg_nv_pci *d, bg_sysmem *m) {
  if (m->map_base) {
    bg_pci_free_sysmem(d->pci, m);
  } else if (m->bus) { /* boot memory in VRAM (boot_mem), staged in a host copy without a direct BAR1 */
    if (staged(d, m)) free((void *)(uintptr_t)m->view.ptr);
    if (d->vram_main) bg_tlsf_free(d->vram_main, m->bus[0] - d->bar1_bus);
    free(m->bus);
  }
  memset(m, 0, sizeof(*m));
}

void bg_nv_pci_boot_fini(bg_nv_pci *d) {
  bg_nv_pci_priv *p = bg_nv_priv(d);
  if (p->gsp_up) {
    int e = 0;
    if (d->client) e = bg_nv_gsp_rm_free(&d->gsp, d->client, 0, d->client);
    /* rpc_unloading_guest_driver_v1F_07 {bInPMTransition u8, bGc6Entering u8, newLevel u32 @4} */
    uint8_t msg[8] = {0};
    uint32_t level = GSP_FAST_UNLOAD;
    memcpy(msg + 4, &level, 4);
    if (e >= 0) e = bg_nv_gsp_send(&d->gsp, BG_NV_RPC_UNLOADING_GUEST_DRIVER, msg, sizeof(msg));
    if (e >= 0) {
      uint8_t reply[16];
      size_t len = 0;
      e = bg_nv_gsp_wait(&d->gsp, BG_NV_RPC_UNLOADING_GUEST_DRIVER, reply, sizeof(reply), &len);
    }
    if (e < 0) BG_LOG(1, "nv: %s: close: %s", bg_pci_name(d->pci), bg_last_error());
    p->gsp_up = false;
    d->client = d->hdevice = d->hsubdevice = d->hvaspace = 0;
  }
  bg_nv_pci_vm_fini(d);
  if (p->gsp_init) bg_nv_gsp_fini(&d->gsp);
  p->gsp_init = false;
  bg_sysmem *mems[] = {&d->msgq_mem, &d->libos_mem, &d->rmargs_mem, &d->radix3_mem, &d->bootloader_mem, &d->sig_mem,
                       &d->wpr_meta_mem, &d->fmc_mem};
  for (size_t i = 0; i < sizeof(mems) / sizeof(mems[0]); i++) free_sysmem(d, mems[i]);
}
