/* tests/mockgpu/nv_pci/nvpci.h: the emulated NVIDIA GPU on the emulated PCI device (MOCKPCI+NV, MOCKUSB+NV).
 *
 * Two models, each strict (a wrong access is a recorded failure, as in the AMD model), with facts taken from sources
 * independent of the driver in nv/: Linux nouveau (drivers/gpu/drm/nouveau: nvkm/falcon, nvkm/subdev/gsp/r535.c,
 * include/nvrm/535.113.01, include/nvfw), open-gpu-kernel-modules (FSP, Hopper/Blackwell registers) and reference
 * tinygrad's NV code:
 *
 *   nvpci_gpu.c, nvpci_falcon.c, nvpci_fsp.c (hardware): BAR0 registers of the chip (PMC_BOOT_0/42, GFW-done and VRAM-
 *     size scratch, WPR2, BAR1 block, MMU invalidate, doorbell), the GSP and SEC2 falcons (reset and scrub, DMA into
 *     IMEM/DMEM from VRAM or system memory, HS execution that checks what was loaded: FWSEC with the FRTS command and the
 *     signature the fuse selects sets WPR2; Booter with the WPR metadata in its mailboxes starts GSP-RM), the FSP's EMEM
 *     message queue (Hopper/Blackwell: the COT message checked, then GSP-RM started), BAR1 as VRAM, BAR3; the
 *     firmware files the driver loads (nvpci_fwgen.c, written from nouveau's nvfw headers).
 *   nvpci_gsp.c, nvpci_gsp_rm.c (GSP-RM): the message queues in host memory found through the libos arguments, every
 *     element checked as the firmware would (checksum, sequence, elemCount, header version and signature, known
 *     function), the pre-queued SET_SYSTEM_INFO / SET_REGISTRY, a CPU-sequencer event the host must run, GSP_INIT_DONE,
 *     then RM alloc / control / free against an object table, replies with status.
 */
#ifndef BG_MOCKGPU_NVPCI_H
#define BG_MOCKGPU_NVPCI_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct mock_sysfs mock_sysfs;
typedef struct mock_pci mock_pci;
typedef struct nvpci_gpu nvpci_gpu;
typedef struct nvpci_gsp nvpci_gsp;

/* ---- hardware model (nvpci_gpu.c) ---- */

typedef struct nvpci_cfg {
  const char *chip;             /* "ga102", "ad102", "gh100", "gb202" */
  const char *bdf;
  uint64_t vram_size;           /* bytes, a power of two */
  bool small_bar;               /* BAR1 of 256 MiB instead of all of VRAM */
  uint32_t fuse_version;        /* the FWSEC fuse version the chip reports (selects the signature) */
} nvpci_cfg;

nvpci_gpu *nvpci_new(mock_sysfs *tree, const nvpci_cfg *cfg);
void nvpci_free(nvpci_gpu *g);
mock_pci *nvpci_pci(nvpci_gpu *g);
/* Write the firmware folder the driver should load for this chip (BG_NV_FIRMWARE_DIR): VBIOS goes into the PROM
 * window, files into dir. */
int nvpci_write_firmware(nvpci_gpu *g, const char *dir);
/* Failures recorded by either model ("" when none), and their count. */
const char *nvpci_failures(const nvpci_gpu *g);
unsigned nvpci_nfail(const nvpci_gpu *g);
void nvpci_fail(nvpci_gpu *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Boot state for tests: 0 cold, then the highest stage reached (NVPCI_STAGE_*). */
enum { NVPCI_STAGE_COLD, NVPCI_STAGE_FRTS, NVPCI_STAGE_GSP_LOADED, NVPCI_STAGE_GSP_RUNNING, NVPCI_STAGE_INIT_DONE };
int nvpci_stage(const nvpci_gpu *g);
/* The GSP-RM model reports the stages only it sees (NVPCI_STAGE_INIT_DONE once it posted GSP_INIT_DONE); the stage
 * never goes down except through a function reset. */
void nvpci_set_stage(nvpci_gpu *g, int stage);

/* What the GSP model needs from the hardware model. */
int nvpci_dma_read(nvpci_gpu *g, uint64_t bus, void *dst, size_t n);   /* system memory by bus address */
int nvpci_dma_write(nvpci_gpu *g, uint64_t bus, const void *src, size_t n);
uint8_t *nvpci_vram(nvpci_gpu *g, uint64_t *size);
uint32_t nvpci_reg_read(nvpci_gpu *g, uint32_t reg);                    /* BAR0 register file, no side effects */
void nvpci_reg_write(nvpci_gpu *g, uint32_t reg, uint32_t v);
const char *nvpci_chip_name(const nvpci_gpu *g);
/* The hardware model's lock (recursive): held across every BAR access and the GSP-RM model's work; the engine thread
 * holds it while it runs methods and drops it while a kernel runs. */
pthread_mutex_t *nvpci_lock_of(nvpci_gpu *g);
/* The GSP-RM model attached to this GPU (NULL when none). */
nvpci_gsp *nvpci_gsp_of(nvpci_gpu *g);
/* TLB invalidates triggered through NV_VIRTUAL_FUNCTION_PRIV_MMU_INVALIDATE (bit 31), and what the last one named:
 * the PDB address (from _PDB ADDR 31:4 and _UPPER_PDB ADDR 19:0, in 4 KiB units), its aperture (_PDB 1:1: 0 VRAM, 1
 * system memory) and the trigger value (ALL_VA 0, ALL_PDB 1, SYS_MEMBAR 6, ...). Counts since the GPU was created. */
uint64_t nvpci_tlb_invalidates(const nvpci_gpu *g);
uint64_t nvpci_tlb_last(const nvpci_gpu *g, int *pdb_aperture, uint32_t *trigger);

/* ---- GSP-RM model (nvpci_gsp.c) ---- */

nvpci_gsp *nvpci_gsp_new(nvpci_gpu *g);
void nvpci_gsp_free(nvpci_gsp *s);
/* GSP-RM starts (the Booter or FSP handed it the WPR metadata at wpr_meta_bus and the libos arguments at
 * libos_args_bus): it finds its queues, reads the pre-queued RPCs and posts a CPU-sequencer event. */
int nvpci_gsp_start(nvpci_gsp *s, uint64_t wpr_meta_bus, uint64_t libos_args_bus);
/* The host wrote NV_PGSP_QUEUE_HEAD(0): GSP processes its command queue. */
void nvpci_gsp_notify(nvpci_gsp *s);
/* A register write the CPU sequencer might have asked for (the GSP model checks the sequence it posted ran). */
void nvpci_gsp_reg_written(nvpci_gsp *s, uint32_t reg, uint32_t v);
/* Function-level reset: GSP-RM stops, state cleared. */
void nvpci_gsp_reset(nvpci_gsp *s);
bool nvpci_gsp_running(const nvpci_gsp *s);
/* Counters for tests: RPCs served by function, rejected elements. */
uint64_t nvpci_gsp_rpcs(const nvpci_gsp *s);
/* The last SET_PAGE_DIRECTORY GSP-RM accepted: the client, the FERMI_VASPACE_A handle, the root table's VRAM address
 * and its entry count. 0, or -1 when none was accepted since GSP-RM started. */
int nvpci_gsp_page_directory(const nvpci_gsp *s, uint32_t *client, uint32_t *hvaspace, uint64_t *root_pa,
                             unsigned *num_entries);
/* The chip's page-table format (2: GA/AD, 3: GH/GB; 0 before GSP-RM started). */
int nvpci_gsp_mmu_version(const nvpci_gsp *s);
/* Translate va through the root the last SET_PAGE_DIRECTORY named, with the GPU's MMU walker (nvpci_mmu.h) over the
 * emulated VRAM (tables in system memory read by DMA). 0 with *pa and *aperture (NVPCI_MMU_APER_*), or -NVPCI_MMU_*
 * with why naming the level and entry (or that no page directory was set). */
int nvpci_translate(nvpci_gpu *g, uint64_t va, uint64_t *pa, int *aperture, char *why, size_t n);

/* ---- channels and their execution (nvpci_gsp_chan.c, nvpci_exec.c) ---- */

/* A write of token to NV_VIRTUAL_FUNCTION_DOORBELL (BAR0 0xbb0090): channel id 15:0, runlist 29:16, bit 30 set on
 * gb202 only (tinygrad ip.py); it must name a channel of a TSG that GPFIFO_SCHEDULE enabled, else a recorded failure
 * "doorbell token 0x... names no scheduled channel". The engine thread then runs that channel from GPGet to GPPut. */
void nvpci_gsp_doorbell(nvpci_gsp *s, uint32_t token);
typedef struct nvpci_chan_info {
  uint32_t client, handle, cls, tsg;   /* tsg: the parent KEPLER_CHANNEL_GROUP_A, 0 for a channel under the device */
  uint32_t engine_cls;                 /* the compute / copy class SET_OBJECT must name (0: none allocated) */
  uint32_t runlist, chid;              /* the work-submit token is chid | runlist << 16 (| 1 << 30 on gb202) */
  uint64_t ring_va, userd_pa;
  uint32_t entries;
  bool scheduled;                      /* its TSG's GPFIFO_SCHEDULE bEnable */
  bool gr_context;                     /* PROMOTE_CTX of buffers 0, 1, 2 with physical and virtual addresses */
  bool stopped;                        /* a failure (method, fault, launch) stopped it */
} nvpci_chan_info;
/* Live GPFIFO channels, and the i-th of them (0, or -1 past the end). */
unsigned nvpci_gsp_channels(nvpci_gsp *s);
int nvpci_gsp_channel(nvpci_gsp *s, unsigned i, nvpci_chan_info *out);
/* GPU faults (each also posted as NV_VGPU_MSG_EVENT_MMU_FAULT_QUEUED and recorded in nvpci_failures). */
uint64_t nvpci_gsp_mmu_faults(const nvpci_gsp *s);
/* Wait until no rung channel has work the engine could run (0), or timeout_ms passed (-1: e.g. an unmet acquire). */
int nvpci_gsp_wait_idle(nvpci_gsp *s, unsigned timeout_ms);

#endif
