/* nv/nv_falcon.h: falcon primitives of the bare-metal bring-up (nv_falcon.c) and the boot paths' internal interface
 * (nv_boot_flcn.c, nv_boot_fsp.c, nv_pci_boot.c; not installed).
 *
 * Facts: Linux nouveau nvkm/falcon/{gm200,ga102}.c (reset, scrub wait, DMA, boot, mailboxes), nvkm/subdev/gsp/ga102.c
 * (RISC-V core select), tinygrad tinygrad/runtime/support/nv/ip.py NV_FLCN. Every poll is bounded and its failure names the falcon, the register and
 * the value it last read. */
#ifndef BG_NV_FALCON_H
#define BG_NV_FALCON_H

#include <stdbool.h>
#include <stdint.h>

#include "nv/nv_pci.h"

typedef struct bg_nv_falcon {
  const char *name; /* "GSP", "SEC2" */
  uint32_t base;    /* NV_FALCON_BASE_* */
} bg_nv_falcon;

extern const bg_nv_falcon bg_nv_falcon_gsp, bg_nv_falcon_sec2;

/* Poll limits (ms). BG_WAIT_TIMEOUT_MS, when set lower, caps each of them (bg_nv_poll). */
#define BG_NV_TIMEOUT_SCRUB_MS 1000
#define BG_NV_TIMEOUT_HALT_MS 2000
#define BG_NV_TIMEOUT_BOOT_MS 10000

uint32_t bg_nv_falcon_rd(bg_nv_pci *d, const bg_nv_falcon *f, uint32_t off);
void bg_nv_falcon_wr(bg_nv_pci *d, const bg_nv_falcon *f, uint32_t off, uint32_t v);

/* Engine reset (ENGINE.reset pulsed), wait for IMEM/DMEM scrubbing, then the core: RISC-V (BCR_CTRL core_select and
 * brfetch) or, on a falcon that has a RISC-V core too, the falcon core (BCR_CTRL 0, wait valid, FALCON_RM = boot0). */
int bg_nv_falcon_reset(bg_nv_pci *d, const bg_nv_falcon *f, bool riscv);
/* FBIF_CTL.allow_phys_no_ctx and DMACTL = 0: DMA by physical address without a context (nouveau
 * ga102_flcn_fw_boot / r535 CORE_RESET). */
void bg_nv_falcon_disable_ctx_req(bg_nv_pci *d, const bg_nv_falcon *f);
/* size bytes (rounded up to whole 256-byte DMATRF blocks) from src (a VRAM address, 256-byte aligned) to IMEM/DMEM
 * offset dest: mem_off + x is the offset from src of block x. Waits for a free slot before each block and for idle
 * at the end. */
int bg_nv_falcon_dma(bg_nv_pci *d, const bg_nv_falcon *f, uint32_t cmd, uint32_t dest, uint32_t mem_off, uint64_t src,
                     uint32_t size);
/* Start the CPU (CPUCTL_ALIAS when CPUCTL.alias_en, else CPUCTL.startcpu) and wait for CPUCTL.halted. */
void bg_nv_falcon_start(bg_nv_pci *d, const bg_nv_falcon *f);
int bg_nv_falcon_wait_halt(bg_nv_pci *d, const bg_nv_falcon *f);

/* A heavy-secure ucode in VRAM and where its parts go (tinygrad tinygrad/runtime/support/nv/ip.py NV_FLCN execute_hs). */
typedef struct bg_nv_hs_ucode {
  const char *what;          /* "FWSEC-FRTS", "Booter" */
  uint64_t image_pa;         /* VRAM address of the image */
  uint32_t code_off, data_off;
  uint32_t imem_pa, imem_va, imem_size;
  uint32_t dmem_pa, dmem_va, dmem_size;
  uint32_t pkc_off, engine_id_mask, ucode_id;
  bool mailbox;              /* write mailbox_in to MAILBOX0/1 before the start */
  uint64_t mailbox_in;
} bg_nv_hs_ucode;

/* Load IMEM (secure) and DMEM, BROM parameters (PKC offset, engine mask, ucode id, RSA3K), BOOTVEC = imem_va,
 * mailboxes, start, wait halted; mbox[0..1] = MAILBOX0/1 after the halt. */
int bg_nv_falcon_execute_hs(bg_nv_pci *d, const bg_nv_falcon *f, const bg_nv_hs_ucode *u, uint32_t mbox[2]);

/* ---- boot internals ---- */

/* Register name for logs and errors ("NV_PMC_BOOT_42", "GSP NV_PFALCON_FALCON_HWCFG2"), or NULL. */
const char *bg_nv_reg_name(uint32_t reg, char *buf, unsigned cap);
/* Poll until (reg & mask) != 0 (any) or == want; see bg_nv_poll. */
int bg_nv_poll_set(bg_nv_pci *d, uint32_t reg, uint32_t mask, int timeout_ms, const char *what);
void bg_nv_sleep_us(uint64_t us);
/* A timeout capped by BG_WAIT_TIMEOUT_MS. */
int bg_nv_timeout_ms(int ms);

/* Boot steps (nv_pci_boot.c): begin records the counters, end fills ns/reads/writes/RPCs. */
void bg_nv_step_begin(bg_nv_pci *d, const char *name);
void bg_nv_step_end(bg_nv_pci *d);

/* Data into VRAM at pa through BAR1 (the aperture is in physical mode at cold boot and after the switch). */
int bg_nv_vram_write(bg_nv_pci *d, uint64_t pa, const void *src, size_t n);

/* Boot memory the firmware takes by one bus address: host memory (one page, or contiguous) or VRAM through BAR1
 * (bus = BAR1 + VRAM address) when it is larger than a page and BAR1 shows it; freed by bg_nv_pci_boot_fini. */
int bg_nv_boot_mem(bg_nv_pci *d, bg_sysmem *m, uint64_t size, const char *what);

/* The chip's boot path, split so that everything that can fail on bad input (VBIOS, images) runs before the first
 * register write: prepare reads only; run writes. */
typedef struct bg_nv_flcn_boot {
  uint8_t *frts_image;       /* patched FWSEC image (malloc'd) */
  size_t frts_size;
  bg_nv_fwsec_desc fwsec;
  unsigned sig_index;
  uint64_t frts_pa, booter_pa;
} bg_nv_flcn_boot;
int bg_nv_boot_flcn_prepare(bg_nv_pci *d, bg_nv_flcn_boot *b);
int bg_nv_boot_flcn_run(bg_nv_pci *d, bg_nv_flcn_boot *b, uint64_t libos_bus, uint64_t wpr_meta_bus);
void bg_nv_boot_flcn_free(bg_nv_pci *d, bg_nv_flcn_boot *b);

#define BG_NV_FSP_MSG_CAP 0x400u /* NV_PFSP_EMEM_QUEUE_MAX */
typedef struct bg_nv_fsp_boot {
  uint8_t msg[BG_NV_FSP_MSG_CAP];
  size_t msg_len;
} bg_nv_fsp_boot;
int bg_nv_boot_fsp_prepare(bg_nv_pci *d, bg_nv_fsp_boot *b, uint64_t libos_bus, uint64_t wpr_meta_bus);
int bg_nv_boot_fsp_run(bg_nv_pci *d, const bg_nv_fsp_boot *b);
uint32_t bg_nv_therm_i2cs_scratch(const bg_nv_chip *chip);

/* The device with what only the boot code needs (bg_nv_pci_open allocates this; bg_nv_pci is its first member). */
typedef struct bg_nv_pci_priv {
  bg_nv_pci pub;
  bg_nv_seq_ops seq;         /* the CPU sequencer's device side (bg_nv_gsp_ops.seq points here) */
  bool gsp_init;             /* bg_nv_gsp_init ran */
  bool gsp_up;               /* GSP_INIT_DONE seen: close sends UNLOADING_GUEST_DRIVER */
} bg_nv_pci_priv;
static inline bg_nv_pci_priv *bg_nv_priv(bg_nv_pci *d) { return (bg_nv_pci_priv *)d; }

/* nv_pci_boot.c: everything after early init (d has its BARs, chip, firmware, VRAM allocators); and its undo. */
int bg_nv_pci_boot(bg_nv_pci *d);
void bg_nv_pci_boot_fini(bg_nv_pci *d);

#endif
