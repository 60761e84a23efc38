/* tests/mockgpu/nv_pci/nvpci_internal.h: state shared by the hardware model's files (nvpci_gpu.c registers and BARs,
 * nvpci_falcon.c GSP/SEC2 falcons and their HS ucode models, nvpci_fsp.c the FSP, nvpci_fwgen.c the generated
 * firmware). Register offsets are the model's own constants, taken from Linux nouveau (nvkm/falcon, nvkm/subdev/gsp,
 * include/nvfw), open-gpu-kernel-modules (src/common/inc/swref/published/<chip>/dev_*.h) and tinygrad tinygrad/runtime/support/nv/ip.py. */
#ifndef BG_MOCKGPU_NVPCI_INTERNAL_H
#define BG_MOCKGPU_NVPCI_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nvpci.h"

/* ---- chips ---- */
typedef enum { NVPCI_GA102, NVPCI_AD102, NVPCI_GH100, NVPCI_GB202, NVPCI_NCHIPS } nvpci_chip_id;
typedef struct nvpci_chip {
  const char *name, *sig_suffix;  /* "ga102", ".fwsignature_ga10x" */
  uint16_t device;                /* PCI device id */
  uint32_t class_code;
  uint8_t arch, impl;             /* NV_PMC_BOOT_42 architecture 29:24, implementation 23:20 */
  bool fsp;                       /* Hopper/Blackwell: FSP chain of trust instead of FWSEC + Booter */
} nvpci_chip;
extern const nvpci_chip NVPCI_CHIPS[NVPCI_NCHIPS];
int nvpci_chip_find(const char *name); /* index or -1 */

/* ---- BAR0 registers (byte offsets) ---- */
#define NV_PMC_BOOT_0 0x000000u
#define NV_PMC_BOOT_42 0x000a00u
#define NV_PBUS_SW_SCRATCH(i) (0x001400u + (i) * 4u) /* 64 dwords; FWSEC reports its error in scratch 0xe [31:16] */
#define NV_PBUS_BAR1_BLOCK 0x001704u                 /* GA/AD (dev_bus.h) */
#define NV_PGC6_BSI_SECURE_SCRATCH_14 0x1180f8u      /* bit 26: boot stage 3 handoff (FSP handed over to GSP-RM) */
#define NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_PRIV_LEVEL_MASK 0x118128u
#define NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_0 0x118234u
#define NV_PGC6_AON_SECURE_SCRATCH_GROUP_42 0x1183a4u /* VRAM size in MiB */
#define NV_PFB_PRI_MMU_WPR2_ADDR_LO 0x1fa824u         /* VAL 31:4 = address >> 12 (gh100 dev_fb.h) */
#define NV_PFB_PRI_MMU_WPR2_ADDR_HI 0x1fa828u         /* VAL 31:4 = last 4 KiB page >> 12 */
#define NV_PROM_DATA 0x300000u                        /* 1 MiB window onto the VBIOS */
#define NV_PROM_SIZE 0x100000u
#define NV_FUSE_UCODE_VERSION_BASE 0x824100u          /* nouveau ga100_flcn_fw_signature: 0x824100/40/c0 + (id-1)*4 */
#define NV_FUSE_UCODE_VERSION_END 0x824200u
#define NV_THERM_I2CS_SCRATCH 0xad00bcu               /* FSP chips: 0xff once GFW boot is done */
#define NV_VF_BAR1_BLOCK_LOW 0xb80f60u                /* GH100+: NV_VIRTUAL_FUNCTION_PRIV_FUNC_BAR1_BLOCK_LOW/HIGH_ADDR */
#define NV_VF_BAR1_BLOCK_HIGH 0xb80f64u
#define NV_VF_MMU_INVALIDATE_PDB 0xb830a0u
#define NV_VF_MMU_INVALIDATE_UPPER_PDB 0xb830a4u
#define NV_VF_MMU_INVALIDATE 0xb830b0u                /* trigger bit 31, self-clearing */
#define NV_VF_DOORBELL 0xbb0090u

#define NVPCI_GSP_BASE 0x110000u
#define NVPCI_SEC2_BASE 0x840000u
#define NV_PGSP_QUEUE_HEAD0 0x110c00u

/* Falcon registers relative to the falcon base (tinygrad tinygrad/runtime/support/nv/ip.py NV_FLCN; open-gpu-kernel-modules dev_falcon_v4.h) */
#define FLCN_MAILBOX0 0x040u
#define FLCN_MAILBOX1 0x044u
#define FLCN_OS 0x080u
#define FLCN_RM 0x084u
#define FLCN_HWCFG2 0x0f4u
#define FLCN_HWCFG2_RISCV (1u << 10)
#define FLCN_HWCFG2_MEM_SCRUBBING (1u << 12)
#define FLCN_HWCFG2_BR_PRIV_LOCKDOWN (1u << 13)
#define FLCN_CPUCTL 0x100u
#define FLCN_CPUCTL_STARTCPU (1u << 1)
#define FLCN_CPUCTL_HALTED (1u << 4)
#define FLCN_CPUCTL_ALIAS_EN (1u << 6)
#define FLCN_BOOTVEC 0x104u
#define FLCN_DMACTL 0x10cu
#define FLCN_DMATRFBASE 0x110u
#define FLCN_DMATRFMOFFS 0x114u
#define FLCN_DMATRFCMD 0x118u
#define FLCN_DMATRFFBOFFS 0x11cu
#define FLCN_DMATRFBASE1 0x128u
#define FLCN_CPUCTL_ALIAS 0x130u
#define FLCN_ENGINE 0x3c0u
#define FLCN_FBIF_TRANSCFG0 0x600u
#define FLCN_FBIF_CTL 0x624u
#define FLCN_FBIF_CTL_ALLOW_PHYS_NO_CTX (1u << 7)
#define FLCN2_MOD_SEL 0x1180u
#define FLCN2_BROM_CURR_UCODE_ID 0x1198u
#define FLCN2_BROM_ENGIDMASK 0x119cu
#define FLCN2_BROM_PARAADDR0 0x1210u
#define RISCV_CPUCTL 0x1388u
#define RISCV_CPUCTL_HALTED (1u << 4)
#define RISCV_CPUCTL_ACTIVE_STAT (1u << 7)
#define RISCV_BCR_CTRL 0x1668u
#define RISCV_BCR_CTRL_VALID (1u << 0)
#define RISCV_BCR_CTRL_CORE_SELECT_RISCV (1u << 4)

/* FSP (gh100/gb202 dev_fsp_pri.h), channel 0 (FSP_EMEM_CHANNEL_RM, 1 KiB) */
#define NV_PFSP_EMEMC0 0x8f2ac0u
#define NV_PFSP_EMEMD0 0x8f2ac4u
#define NV_PFSP_EMEMC_AINCW (1u << 24)
#define NV_PFSP_EMEMC_AINCR (1u << 25)
#define NV_PFSP_QUEUE_HEAD0 0x8f2c00u
#define NV_PFSP_QUEUE_TAIL0 0x8f2c04u
#define NV_PFSP_MSGQ_HEAD0 0x8f2c80u
#define NV_PFSP_MSGQ_TAIL0 0x8f2c84u
#define NVPCI_EMEM_SIZE 1024u

/* NV_PFSP error codes of the model's COT response (NVDM_PAYLOAD_COMMAND_RESPONSE.errorCode) */
enum { NVPCI_FSP_OK = 0, NVPCI_FSP_ERR_FORMAT = 0x1, NVPCI_FSP_ERR_TYPE = 0x2, NVPCI_FSP_ERR_PAYLOAD = 0x3,
       NVPCI_FSP_ERR_IMAGE = 0x4, NVPCI_FSP_ERR_BOOT = 0x5 };

/* ---- falcons ---- */
#define NVPCI_IMEM_SIZE (64u << 10)
#define NVPCI_DMEM_SIZE (64u << 10)
typedef enum { NVPCI_FLCN_GSP, NVPCI_FLCN_SEC2, NVPCI_NFLCN } nvpci_flcn_id;
typedef struct nvpci_falcon {
  uint32_t base;
  const char *name;
  bool in_reset;       /* ENGINE.reset held */
  unsigned scrub_reads; /* HWCFG2 reads left before mem_scrubbing clears after a reset */
  bool halted, riscv_active, lockdown;
  uint32_t r[0x1700 / 4]; /* plain register values by (offset / 4) */
  uint8_t imem[NVPCI_IMEM_SIZE], dmem[NVPCI_DMEM_SIZE];
  uint8_t imem_blk[NVPCI_IMEM_SIZE / 256]; /* 0 never loaded since reset, 1 loaded, 2 loaded secure */
  uint8_t dmem_blk[NVPCI_DMEM_SIZE / 256];
  unsigned dma_blocks, starts;
} nvpci_falcon;

/* ---- generated firmware (nvpci_fwgen.c) ---- */
typedef struct nvpci_blob {
  uint8_t *p;
  size_t n;
} nvpci_blob;
#define NVPCI_SIG_SIZE 384u       /* RSA-3K signature (96 dwords) */
#define NVPCI_FWSEC_NSIG 3u
typedef struct nvpci_fw {
  nvpci_blob vbios;
  /* FWSEC-PROD as in the VBIOS (unpatched), its descriptor fields and signatures */
  nvpci_blob fwsec;         /* IMEMLoadSize + DMEMLoadSize bytes */
  uint32_t fw_imem_phys, fw_imem_size, fw_imem_virt, fw_dmem_phys, fw_dmem_size, fw_pkc, fw_iface;
  uint16_t fw_engid, fw_sigver;
  uint8_t fw_ucode_id;
  uint32_t fw_mapper_off, fw_cmd_off; /* DMEM offsets of the DMEM mapper and its command buffer */
  uint8_t fw_sigs[NVPCI_FWSEC_NSIG][NVPCI_SIG_SIZE];
  /* Booter (GA/AD): the data image, load layout and the production signature patched in */
  nvpci_blob booter_file, booter_img; /* booter_img: the data section with the expected signature patched */
  uint32_t bt_code_off, bt_code_size, bt_data_off, bt_data_size, bt_patch_loc;
  uint32_t bt_fuse, bt_engid, bt_ucode_id;
  /* bootloader (RM_RISCV_UCODE_DESC) */
  nvpci_blob bl_file, bl_data;
  uint32_t bl_manifest, bl_mon_data, bl_mon_code;
  /* GSP-RM ELF */
  nvpci_blob gsp_file, fwimage, fwsig;
  /* FMC (GH/GB) */
  nvpci_blob fmc_file, fmc_image, fmc_hash, fmc_sig, fmc_pubkey;
} nvpci_fw;
int nvpci_fw_build(nvpci_fw *fw, nvpci_chip_id chip);
void nvpci_fw_free(nvpci_fw *fw);
/* The FWSEC image the driver must load: init_cmd FRTS, the FRTS command for [frts, +1 MiB), signature sig. */
void nvpci_fwsec_expected(const nvpci_fw *fw, unsigned sig, uint64_t frts, uint8_t *out);
unsigned nvpci_fwsec_sig_index(const nvpci_fw *fw, uint32_t fuse_version, bool *ok);

/* ---- the GPU ---- */
struct nvpci_gpu {
  pthread_mutex_t lock; /* recursive: the GSP model calls back into the register file */
  nvpci_chip_id chip;
  const nvpci_chip *c;
  char bdf[16];
  nvpci_cfg cfg;
  mock_pci *pci;
  nvpci_gsp *gsp;
  uint8_t *vram;       /* BAR1's backing memory when BAR1 covers VRAM, else an own mapping */
  bool vram_own;
  uint64_t vram_size, bar1_size;
  nvpci_fw fw;
  nvpci_falcon flcn[NVPCI_NFLCN];
  uint32_t scratch[64];
  uint32_t bar1_block, vf_bar1_lo, vf_bar1_hi, inv_pdb, inv_upper_pdb;
  uint32_t wpr2_lo, wpr2_hi;
  uint32_t gsp_queue_head0;
  uint64_t mmu_invalidates, doorbells;
  uint32_t inv_last_pdb, inv_last_upper, inv_last_cmd; /* latched at the last trigger */
  uint32_t last_doorbell;
  int stage;
  /* FSP */
  uint8_t emem[NVPCI_EMEM_SIZE];
  uint32_t ememc, q_head, q_tail, mq_head, mq_tail;
  unsigned fsp_msgs, fsp_padded, fsp_last_error;
  bool handoff;
  /* failures */
  unsigned nfail;
  char failures[8192];
};

/* Register access by the hooks (lock held): true when the offset is modelled. */
bool nvpci_falcon_rd(nvpci_gpu *g, uint32_t off, uint32_t *v, bool side_effects);
bool nvpci_falcon_wr(nvpci_gpu *g, uint32_t off, uint32_t v, bool side_effects);
void nvpci_falcon_cold(nvpci_gpu *g);
bool nvpci_fsp_rd(nvpci_gpu *g, uint32_t off, uint32_t *v, bool side_effects);
bool nvpci_fsp_wr(nvpci_gpu *g, uint32_t off, uint32_t v, bool side_effects);
void nvpci_fsp_cold(nvpci_gpu *g);
/* WPR metadata at bus checked against the generated firmware (fmc: the FSP's layout, sizes only); 0 or -1 after a
 * recorded failure naming the field. */
int nvpci_dma_same(nvpci_gpu *g, uint64_t bus, const uint8_t *want, size_t n, const char *who, const char *what);
int nvpci_check_wpr_meta(nvpci_gpu *g, uint64_t bus, bool fmc, const char *who);
/* GSP-RM starts (the Booter or the FSP verified everything): WPR2 over the WPR, RISC-V active. */
int nvpci_start_gsp_rm(nvpci_gpu *g, uint64_t wpr_meta, uint64_t libos, const char *who);

/* For tests (test_nvpci_hw.c) */
void nvpci_set_gsp(nvpci_gpu *g, nvpci_gsp *s);
void nvpci_clear_failures(nvpci_gpu *g);
const nvpci_fw *nvpci_firmware(const nvpci_gpu *g);
uint64_t nvpci_mmu_invalidates(const nvpci_gpu *g);
uint64_t nvpci_doorbells(const nvpci_gpu *g, uint32_t *last);
unsigned nvpci_fsp_padded(const nvpci_gpu *g);
uint32_t nvpci_fuse_reg(const nvpci_gpu *g, uint32_t off);

static inline uint32_t nvpci_get32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t nvpci_get64(const uint8_t *p) { return nvpci_get32(p) | (uint64_t)nvpci_get32(p + 4) << 32; }
static inline uint16_t nvpci_get16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline void nvpci_put32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline void nvpci_put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8); }
static inline void nvpci_put64(uint8_t *p, uint64_t v) { nvpci_put32(p, (uint32_t)v), nvpci_put32(p + 4, (uint32_t)(v >> 32)); }

#endif
