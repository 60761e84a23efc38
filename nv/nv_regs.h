/* nv/nv_regs.h: the BAR0 registers the bare-metal bring-up touches, per block, named as NVIDIA names them.
 *
 * Sources: open-gpu-kernel-modules src/common/inc/swref/published/{ampere/ga102,hopper/gh100,blackwell/gb202}/
 * dev_boot.h, dev_gc6_island.h, dev_therm.h, dev_fb.h, dev_falcon_v4.h, dev_riscv_pri.h, dev_fsp_pri.h, dev_vm.h;
 * Linux nouveau nvkm/falcon/{gm200,ga102}.c and nvkm/subdev/gsp/{ga102,r535}.c; tinygrad tinygrad/runtime/support/nv/nvdev.py.
 * Falcon registers are offsets from a falcon's base (NV_FALCON_BASE_*); everything else is absolute. */
#ifndef BG_NV_REGS_H
#define BG_NV_REGS_H

/* ---- PMC (dev_boot.h) ---- */
#define NV_PMC_BOOT_0 0x00000000u
#define NV_PMC_BOOT_42 0x00000a00u
#define NV_PMC_BOOT_42_ARCH(v) (((v) >> 24) & 0x3fu)
#define NV_PMC_BOOT_42_IMPL(v) (((v) >> 20) & 0xfu)

/* ---- PBUS (dev_bus.h): BAR1 block (ptr 27:0, target 29:28, mode 31; 0 = physical mode, VRAM) ---- */
#define NV_PBUS_BAR1_BLOCK 0x00001704u

/* ---- PGC6 always-on scratch (dev_gc6_island.h) ---- */
#define NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_PRIV_LEVEL_MASK 0x00118128u /* bit 0: read protection level 0 */
#define NV_PGC6_AON_SECURE_SCRATCH_GROUP_05(i) (0x00118234u + (i) * 4u) /* 7:0 == 0xff: GFW boot done */
#define NV_PGC6_AON_SECURE_SCRATCH_GROUP_42 0x001183a4u                 /* VRAM size in MiB */
#define NV_PGC6_BSI_SECURE_SCRATCH_14 0x001180f8u                       /* bit 26: boot_stage_3_handoff */
#define NV_PGC6_BSI_SECURE_SCRATCH_14_BOOT_STAGE_3_HANDOFF (1u << 26)

/* ---- THERM (dev_therm.h): FSP boot complete (0xff = success); the address moved on Blackwell ---- */
#define NV_THERM_I2CS_SCRATCH_GH100 0x000200bcu
#define NV_THERM_I2CS_SCRATCH_GB202 0x00ad00bcu
#define NV_THERM_I2CS_SCRATCH_FSP_BOOT_COMPLETE_SUCCESS 0xffu

/* ---- PFB (dev_fb.h): WPR2, set by FWSEC-FRTS / FSP, cleared by a function reset ---- */
#define NV_PFB_PRI_MMU_WPR2_ADDR_LO 0x001fa824u
#define NV_PFB_PRI_MMU_WPR2_ADDR_HI 0x001fa828u

/* ---- FUSE (dev_fuse.h): FPF GSP ucode versions, one per ucode id from 1; nouveau ga102_gsp_fwsec_signature reads
 * 0x8241c0 + (ucode_id - 1) * 4 to pick the FWSEC signature ---- */
#define NV_FUSE_OPT_FPF_GSP_UCODE1_VERSION 0x008241c0u
#define NV_FUSE_OPT_FPF_GSP_UCODE_VERSION(id) (NV_FUSE_OPT_FPF_GSP_UCODE1_VERSION + ((id) - 1u) * 4u)

/* ---- PROM: the VBIOS window ---- */
#define NV_PROM_DATA 0x00300000u
#define NV_PROM_SIZE 0x00100000u

/* ---- falcon bases ---- */
#define NV_FALCON_BASE_GSP 0x00110000u  /* NV_PGSP */
#define NV_FALCON_BASE_SEC2 0x00840000u /* NV_PSEC */
#define NV_FALCON_BASE_FSP 0x008f0000u  /* NV_PFSP */

/* ---- NV_PFALCON_FALCON_* (dev_falcon_v4.h), offsets from a falcon base ---- */
#define NV_PFALCON_FALCON_MAILBOX0 0x040u
#define NV_PFALCON_FALCON_MAILBOX1 0x044u
#define NV_PFALCON_FALCON_OS 0x080u
#define NV_PFALCON_FALCON_RM 0x084u
#define NV_PFALCON_FALCON_HWCFG2 0x0f4u
#define NV_PFALCON_FALCON_HWCFG2_RISCV (1u << 10)
#define NV_PFALCON_FALCON_HWCFG2_MEM_SCRUBBING (1u << 12)
#define NV_PFALCON_FALCON_HWCFG2_RISCV_BR_PRIV_LOCKDOWN (1u << 13)
#define NV_PFALCON_FALCON_CPUCTL 0x100u
#define NV_PFALCON_FALCON_CPUCTL_STARTCPU (1u << 1)
#define NV_PFALCON_FALCON_CPUCTL_HALTED (1u << 4)
#define NV_PFALCON_FALCON_CPUCTL_ALIAS_EN (1u << 6)
#define NV_PFALCON_FALCON_BOOTVEC 0x104u
#define NV_PFALCON_FALCON_DMACTL 0x10cu
#define NV_PFALCON_FALCON_DMATRFBASE 0x110u
#define NV_PFALCON_FALCON_DMATRFMOFFS 0x114u
#define NV_PFALCON_FALCON_DMATRFCMD 0x118u
#define NV_PFALCON_FALCON_DMATRFCMD_FULL (1u << 0)
#define NV_PFALCON_FALCON_DMATRFCMD_IDLE (1u << 1)
#define NV_PFALCON_FALCON_DMATRFCMD_SEC(v) ((uint32_t)(v) << 2)
#define NV_PFALCON_FALCON_DMATRFCMD_IMEM (1u << 4)
#define NV_PFALCON_FALCON_DMATRFCMD_WRITE (1u << 5)
#define NV_PFALCON_FALCON_DMATRFCMD_SIZE_256B (6u << 8)
#define NV_PFALCON_FALCON_DMATRFCMD_CTXDMA(v) ((uint32_t)(v) << 12)
#define NV_PFALCON_FALCON_DMATRFFBOFFS 0x11cu
#define NV_PFALCON_FALCON_DMATRFBASE1 0x128u
#define NV_PFALCON_FALCON_CPUCTL_ALIAS 0x130u
#define NV_PFALCON_FALCON_CPUCTL_ALIAS_STARTCPU (1u << 1)
#define NV_PFALCON_FALCON_ENGINE 0x3c0u /* NV_PGSP_FALCON_ENGINE 0x1103c0, NV_PSEC_FALCON_ENGINE 0x8403c0 */
#define NV_PFALCON_FALCON_ENGINE_RESET (1u << 0)
#define NV_PFALCON_FALCON_DMA_BLOCK 256u /* one DMATRF transfer */

/* ---- NV_PFALCON_FBIF_* (dev_fbif_v4.h) ---- */
#define NV_PFALCON_FBIF_TRANSCFG(i) (0x600u + (i) * 4u)
#define NV_PFALCON_FBIF_TRANSCFG_TARGET_MASK 0x3u /* 0: local FB */
#define NV_PFALCON_FBIF_TRANSCFG_MEM_TYPE_PHYSICAL (1u << 2)
#define NV_PFALCON_FBIF_CTL 0x624u
#define NV_PFALCON_FBIF_CTL_ALLOW_PHYS_NO_CTX (1u << 7)

/* ---- NV_PFALCON2_FALCON_* and NV_PRISCV_RISCV_* (dev_falcon_second_pri.h, dev_riscv_pri.h): base + 0x1000 + off */
#define NV_PFALCON2_FALCON_MOD_SEL 0x1180u
#define NV_PFALCON2_FALCON_MOD_SEL_ALGO_RSA3K 1u
#define NV_PFALCON2_FALCON_BROM_CURR_UCODE_ID 0x1198u
#define NV_PFALCON2_FALCON_BROM_ENGIDMASK 0x119cu
#define NV_PFALCON2_FALCON_BROM_PARAADDR(i) (0x1210u + (i) * 4u)
#define NV_PRISCV_RISCV_CPUCTL 0x1388u
#define NV_PRISCV_RISCV_CPUCTL_HALTED (1u << 4)
#define NV_PRISCV_RISCV_CPUCTL_ACTIVE_STAT (1u << 7)
#define NV_PRISCV_RISCV_BCR_CTRL 0x1668u
#define NV_PRISCV_RISCV_BCR_CTRL_VALID (1u << 0)
#define NV_PRISCV_RISCV_BCR_CTRL_CORE_SELECT_RISCV (1u << 4)
#define NV_PRISCV_RISCV_BCR_CTRL_BRFETCH (1u << 8)

/* ---- PGSP (dev_gsp.h) ---- */
#define NV_PGSP_FALCON_MAILBOX0 (NV_FALCON_BASE_GSP + NV_PFALCON_FALCON_MAILBOX0)
#define NV_PGSP_FALCON_MAILBOX1 (NV_FALCON_BASE_GSP + NV_PFALCON_FALCON_MAILBOX1)
#define NV_PGSP_QUEUE_HEAD(i) (0x00110c00u + (i) * 8u) /* a write notifies GSP of new commands */

/* ---- PFSP (dev_fsp_pri.h, GH100 and GB202 alike): EMEM port 0 and the queues ---- */
#define NV_PFSP_EMEMC(i) (0x008f2ac0u + (i) * 8u)
#define NV_PFSP_EMEMC_OFFS(v) ((uint32_t)(v) & 0xfcu) /* 7:2: dword offset in the block */
#define NV_PFSP_EMEMC_BLK(v) (((uint32_t)(v) & 0xffu) << 8)
#define NV_PFSP_EMEMC_AINCW (1u << 24)
#define NV_PFSP_EMEMC_AINCR (1u << 25)
#define NV_PFSP_EMEMD(i) (0x008f2ac4u + (i) * 8u)
#define NV_PFSP_QUEUE_HEAD(i) (0x008f2c00u + (i) * 8u)
#define NV_PFSP_QUEUE_TAIL(i) (0x008f2c04u + (i) * 8u) /* offset of the last dword written */
#define NV_PFSP_MSGQ_HEAD(i) (0x008f2c80u + (i) * 8u)
#define NV_PFSP_MSGQ_TAIL(i) (0x008f2c84u + (i) * 8u)
#define NV_PFSP_EMEM_QUEUE_MAX 0x400u /* message bytes the command queue takes */

/* ---- VIRTUAL_FUNCTION (dev_vm.h) ---- */
#define NV_VIRTUAL_FUNCTION_PRIV_FUNC_BAR1_BLOCK_LOW_ADDR 0x00b80f60u /* GH100+: BAR1 block (kern_bus_gh100.c) */
#define NV_VIRTUAL_FUNCTION_PRIV_MMU_INVALIDATE 0x00b830b0u
#define NV_VIRTUAL_FUNCTION_DOORBELL 0x00bb0090u

#endif
