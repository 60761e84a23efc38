/* tests/mockgpu/amd_reg_allow.c: the registers the emulated AMD GPU accepts writes to without a hook
 * (amd_reg_allow.h), each with the reason. Sources cited are Linux's drivers/gpu/drm/amd/amdgpu/ files and
 * tinygrad tinygrad/runtime/support/am/ip.py (whose programming baregpu's am/ follows). */
#include "amd_reg_allow.h"

#include <string.h>

#include "am/am_regs.h"

#define M(n, why) {#n, AMD_REG_MODELLED, why}
#define RB(n, why) {#n, AMD_REG_READBACK, why}
#define GOLD(n, why) {#n, AMD_REG_GOLDEN, why}
#define GATE(n, why) {#n, AMD_REG_GATING, why}
#define HUB(n, why) {#n, AMD_REG_HUB, why}
#define INIT(n, why) {#n, AMD_REG_IP_INIT, why}

/* Reasons shared by a family of registers (one engine per register, one instance per field...). */
#define WHY_M_1 "amd_smu.c: SMU message argument (53 debug, 82 regular), read when the message is posted (smu_v13_0/v14_0 smu_cmn_send_smc_msg_with_param)"
#define WHY_M_2 "amd_gfx9.c: the indirect SMN index pair the model follows (amdgpu_device_indirect_rreg_ext)"
#define WHY_M_3 "amd_gpu.c: a write is an HDP flush request (amd_hdp.h); GPU_HDP_FLUSH_DONE returns the request bits (flushes complete at once; nbio_v4_3/v7_9 hdp_flush)"
#define WHY_M_4 "amd_cp.c/amd_gfx9.c: HQD state; CP_HQD_ACTIVE=1 compares every register CP_MQD_BASE_ADDR..CP_HQD_PQ_WPTR_HI with the MQD (gfx_v11_0_kiq/compute_mqd_init, gfx_v9_4_3_xcc_kiq_init_register) and the queue executor reads ring, EOP and doorbell settings; GRBM_GFX_CNTL selects the pipe/queue"
#define WHY_M_5 "amd_gfx9.c: AID 0 doorbell routing checked when the SDMA ring is enabled (nbio_v7_9_sdma_doorbell_range)"
#define WHY_M_6 "amd_vm.c: system aperture bounds the walker honours (gfxhub_v3_0_init_system_aperture_regs)"
#define WHY_M_7 "amd_gmc.c/amd_vm.c: the page-table walker reads context 0 (gfxhub_v3_0/mmhub_v3_0_init_gart_aperture_regs, _setup_vmid_config)"
#define WHY_M_8 "amd_gmc.c: IH ring the model writes interrupt vectors into (ih_v6_0/v4_4_2 irq_init)"
#define WHY_M_9 "amd_psp.c: PSP ring address lo/hi and size, read on the ring-create command (psp_v13_0/v14_0 psp_*_ring_create)"
#define WHY_M_10 "amd_cp.c/amd_gfx9.c: read when SDMA RB_CNTL enables the ring (sdma_v6_0/v7_0/v4_4_2 gfx_resume): ring base, rptr/wptr report addresses, doorbell, engine halt and trap enable"
#define WHY_GOLD_1 "golden settings (Linux gfx_v9_4_3.c golden_settings_gc_9_4_3 applied by am/gfx_v9.c golden: GB_ADDR_CONFIG, TCP_UTCL1_CNTL2; TCP_CNTL bit 29 in am/am_gfx.c as Linux sets it): cache and address-config tuning no part of the model reads"
#define WHY_GATE_1 "HDP memory light sleep (hdp_v6_0/v7_0 update_clock_gating)"
#define WHY_GATE_2 "ATC L2 clock gating (mmhub_v1_8 / athub_v3_0 update_medium_grain_clock_gating)"
#define WHY_GATE_3 "coarse/medium-grain clock gating of GFX (gfx_v11_0/gfx_v9_4_3 update_coarse_grain_clock_gating, update_medium_grain_clock_gating)"
#define WHY_GATE_4 "SDMA coarse-grain clock gating (gfx_v11_0_update_coarse_grain_clock_gating)"
#define WHY_HUB_1 "AGP aperture, disabled (BOT > TOP) by gfxhub_v3_0/mmhub_v3_0 init_system_aperture_regs: the model has no AGP aperture"
#define WHY_HUB_2 "L1 TLB enable/MTYPE (gfxhub_v3_0/mmhub_v3_0 init_tlb_regs): the model has no TLB cache"
#define WHY_HUB_3 "dummy page for out-of-aperture system accesses (gfxhub_v3_0/mmhub_v3_0 init_system_aperture_regs): out-of-aperture accesses fail in the model"
#define WHY_HUB_4 "range of invalidation engine n (gfxhub_v3_0/mmhub_v3_0/mmhub_v1_8 program_invalidation): the model invalidates whole TLBs on ENG17_REQ"
#define WHY_HUB_5 "VM L2 cache configuration (gfxhub_v3_0/mmhub_v3_0/mmhub_v1_8 init_cache_regs): the model has no L2 TLB cache"
#define WHY_HUB_6 "identity aperture disabled (gfxhub_v3_0/mmhub_v3_0 init_cache_regs): the walker never uses one"
#define WHY_HUB_7 "fault handling options and dummy-page address (gfxhub_v3_0/mmhub_v3_0 init_system_aperture_regs, setup_vmid_config): the model records faults in GCVM_L2_PROTECTION_FAULT_STATUS and stops the access instead"
#define WHY_HUB_8 "MMHUB system aperture (mmhub_v3_0/mmhub_v1_8 init_system_aperture_regs): SDMA/IH accesses through MMHUB are walked with the context-0 tables only"
#define WHY_INIT_1 "NBIO doorbell aperture / interrupt monitor / strap settings (nbio_v4_3/v7_9 enable_doorbell_aperture, init_registers): the model always decodes BAR2 doorbells"
#define WHY_INIT_2 "gfx ring halt / CP interrupt enables / wptr polling (gfx_v11_0_cp_gfx_enable, gfx_v11_0_enable_gui_idle_interrupt, gfx_v11_0_cp_gfx_resume): the model emulates the compute and SDMA queues only and raises no CP interrupts"
#define WHY_INIT_3 "MEC doorbell range (gfx_v11_0_compute_mqd_init / gfx_v9_4_3_xcc_kiq_init_register): the model routes a doorbell by the HQD doorbell offset alone"
#define WHY_INIT_4 "firmware start addresses (gfx_v11_0_config_gfx_rs64, config_mec_cache_rs64): the model CP runs no firmware"
#define WHY_INIT_5 "doorbell routing of other clients (nbio_v7_9_sdma_doorbell_range/vcn_doorbell_range, tinygrad AM_SOC soc init): the model routes BAR2 doorbells to its engines itself"
#define WHY_INIT_6 "GRBM_CNTL.READ_TIMEOUT (am/am_gfx.c; Linux gfx_v9_0_constants_init, tinygrad AM_GFX): the model answers register reads at once"
#define WHY_INIT_7 "compute-queue reset pulse after a dequeue request and the CP/CPC soft reset around MEC re-init (am/am_gfx.c bg_am_gfx_dequeue, reset_mec; Linux gfx_v9_4_3_xcc_kcq_fini_register, gfx_v11_0_soft_reset): the model drops the queue on CP_HQD_DEQUEUE_REQUEST and reloads it on CP_HQD_ACTIVE"
#define WHY_INIT_8 "IH ring 1, rptr/doorbell, storm and flood controls (ih_v6_0/ih_v4_4_2 irq_init, enable_ring): the model writes ring 0 only and never overflows it"
#define WHY_INIT_9 "RLC start/stop, save-restore machine and SPM memory controls (gfx_v11_0_rlc_start/stop, gfx_v9_4_3_xcc_rlc_start, rlc_spm setup): the model has no RLC firmware; RLC_SAFE_MODE is modelled"
#define WHY_INIT_10 "SDMA IB enable and ring pointers zeroed before the ring is enabled (sdma_v6_0_gfx_resume_instance, sdma_v4_4_2_gfx_resume): the model restarts the ring at read pointer 0 on each RB_CNTL enable (amd_sdma_exec.c sdma_run) and takes the write pointer from the doorbell"
#define WHY_INIT_11 "SDMA UTCL1 and watchdog settings (sdma_v4_4_2_inst_start/gfx_resume): the model has no UTCL1 and no watchdog"
#define WHY_INIT_12 "flat LDS/scratch apertures and alignment mode (gfx_v11_0/gfx_v9_4_3 init_compute_vmid, constants_init): the shader-core model addresses LDS and scratch directly"

const amd_reg_allow amd_reg_allow_list[] = {
    /* ---- driver read-back: written, later read by the driver, so the register file must return it ---- */
    RB(regSCRATCH_REG6, "am/am_hcq.c fini/open: 'GPU in use' flag the next open reads (tinygrad AMDev.__init__/fini)"),
    RB(regSCRATCH_REG7, "am/am_boot.c: BG_AM_BOOT_MAGIC, read on the next open to start warm (tinygrad AMDev.__init__)"),
    /* ---- modelled: the model reads the value back to act on it ---- */
    M(mmMP1_SMN_C2PMSG_53, WHY_M_1),
    M(mmMP1_SMN_C2PMSG_82, WHY_M_1),
    M(regBIF_BX0_PCIE_INDEX2, WHY_M_2),
    M(regBIF_BX0_PCIE_INDEX2_HI, WHY_M_2),
    M(regBIF_BX_PF0_GPU_HDP_FLUSH_REQ, WHY_M_3),
    M(regCP_HQD_AQL_CONTROL, WHY_M_4),
    M(regCP_HQD_ATOMIC0_PREOP_HI, WHY_M_4),
    M(regCP_HQD_ATOMIC0_PREOP_LO, WHY_M_4),
    M(regCP_HQD_ATOMIC1_PREOP_HI, WHY_M_4),
    M(regCP_HQD_ATOMIC1_PREOP_LO, WHY_M_4),
    M(regCP_HQD_CNTL_STACK_OFFSET, WHY_M_4),
    M(regCP_HQD_CNTL_STACK_SIZE, WHY_M_4),
    M(regCP_HQD_CTX_SAVE_BASE_ADDR_HI, WHY_M_4),
    M(regCP_HQD_CTX_SAVE_BASE_ADDR_LO, WHY_M_4),
    M(regCP_HQD_CTX_SAVE_CONTROL, WHY_M_4),
    M(regCP_HQD_CTX_SAVE_SIZE, WHY_M_4),
    M(regCP_HQD_DMA_OFFLOAD, WHY_M_4),
    M(regCP_HQD_EOP_BASE_ADDR, WHY_M_4),
    M(regCP_HQD_EOP_BASE_ADDR_HI, WHY_M_4),
    M(regCP_HQD_EOP_CONTROL, WHY_M_4),
    M(regCP_HQD_EOP_EVENTS, WHY_M_4),
    M(regCP_HQD_EOP_RPTR, WHY_M_4),
    M(regCP_HQD_EOP_WPTR, WHY_M_4),
    M(regCP_HQD_EOP_WPTR_MEM, WHY_M_4),
    M(regCP_HQD_ERROR, WHY_M_4),
    M(regCP_HQD_GDS_RESOURCE_STATE, WHY_M_4),
    M(regCP_HQD_HQ_CONTROL0, WHY_M_4),
    M(regCP_HQD_HQ_CONTROL1, WHY_M_4),
    M(regCP_HQD_HQ_SCHEDULER0, WHY_M_4),
    M(regCP_HQD_HQ_STATUS1, WHY_M_4),
    M(regCP_HQD_IB_BASE_ADDR, WHY_M_4),
    M(regCP_HQD_IB_BASE_ADDR_HI, WHY_M_4),
    M(regCP_HQD_IB_CONTROL, WHY_M_4),
    M(regCP_HQD_IB_RPTR, WHY_M_4),
    M(regCP_HQD_IQ_RPTR, WHY_M_4),
    M(regCP_HQD_IQ_TIMER, WHY_M_4),
    M(regCP_HQD_MSG_TYPE, WHY_M_4),
    M(regCP_HQD_PERSISTENT_STATE, WHY_M_4),
    M(regCP_HQD_PIPE_PRIORITY, WHY_M_4),
    M(regCP_HQD_PQ_BASE, WHY_M_4),
    M(regCP_HQD_PQ_BASE_HI, WHY_M_4),
    M(regCP_HQD_PQ_CONTROL, WHY_M_4),
    M(regCP_HQD_PQ_DOORBELL_CONTROL, WHY_M_4),
    M(regCP_HQD_PQ_RPTR, WHY_M_4),
    M(regCP_HQD_PQ_RPTR_REPORT_ADDR, WHY_M_4),
    M(regCP_HQD_PQ_RPTR_REPORT_ADDR_HI, WHY_M_4),
    M(regCP_HQD_PQ_WPTR_HI, WHY_M_4),
    M(regCP_HQD_PQ_WPTR_LO, WHY_M_4),
    M(regCP_HQD_PQ_WPTR_POLL_ADDR, WHY_M_4),
    M(regCP_HQD_PQ_WPTR_POLL_ADDR_HI, WHY_M_4),
    M(regCP_HQD_QUANTUM, WHY_M_4),
    M(regCP_HQD_QUEUE_PRIORITY, WHY_M_4),
    M(regCP_HQD_SEMA_CMD, WHY_M_4),
    M(regCP_HQD_VMID, WHY_M_4),
    M(regCP_HQD_WG_STATE_OFFSET, WHY_M_4),
    M(regCP_MEC_CNTL, WHY_M_4),
    M(regCP_MEC_RS64_CNTL, WHY_M_4),
    M(regCP_MQD_BASE_ADDR, WHY_M_4),
    M(regCP_MQD_BASE_ADDR_HI, WHY_M_4),
    M(regCP_MQD_CONTROL, WHY_M_4),
    M(regDOORBELL0_CTRL_ENTRY_1, WHY_M_5),
    M(regGCMC_VM_SYSTEM_APERTURE_HIGH_ADDR, WHY_M_6),
    M(regGCMC_VM_SYSTEM_APERTURE_LOW_ADDR, WHY_M_6),
    M(regGCVM_CONTEXT0_CNTL, WHY_M_7),
    M(regGCVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_HI32, WHY_M_7),
    M(regGCVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32, WHY_M_7),
    M(regGCVM_CONTEXT0_PAGE_TABLE_END_ADDR_HI32, WHY_M_7),
    M(regGCVM_CONTEXT0_PAGE_TABLE_END_ADDR_LO32, WHY_M_7),
    M(regGCVM_CONTEXT0_PAGE_TABLE_START_ADDR_HI32, WHY_M_7),
    M(regGCVM_CONTEXT0_PAGE_TABLE_START_ADDR_LO32, WHY_M_7),
    M(regGRBM_GFX_CNTL, WHY_M_4),
    M(regIH_RB_BASE, WHY_M_8),
    M(regIH_RB_BASE_HI, WHY_M_8),
    M(regIH_RB_CNTL, WHY_M_8),
    M(regIH_RB_WPTR, WHY_M_8),
    M(regIH_RB_WPTR_ADDR_HI, WHY_M_8),
    M(regIH_RB_WPTR_ADDR_LO, WHY_M_8),
    M(regMMVM_CONTEXT0_CNTL, WHY_M_7),
    M(regMMVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_HI32, WHY_M_7),
    M(regMMVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32, WHY_M_7),
    M(regMMVM_CONTEXT0_PAGE_TABLE_END_ADDR_HI32, WHY_M_7),
    M(regMMVM_CONTEXT0_PAGE_TABLE_END_ADDR_LO32, WHY_M_7),
    M(regMMVM_CONTEXT0_PAGE_TABLE_START_ADDR_HI32, WHY_M_7),
    M(regMMVM_CONTEXT0_PAGE_TABLE_START_ADDR_LO32, WHY_M_7),
    M(regMP0_SMN_C2PMSG_69, WHY_M_9),
    M(regMP0_SMN_C2PMSG_70, WHY_M_9),
    M(regMP0_SMN_C2PMSG_71, WHY_M_9),
    M(regMP1_SMN_C2PMSG_53, WHY_M_1),
    M(regMP1_SMN_C2PMSG_82, WHY_M_1),
    M(regMPASP_SMN_C2PMSG_69, WHY_M_9),
    M(regMPASP_SMN_C2PMSG_70, WHY_M_9),
    M(regMPASP_SMN_C2PMSG_71, WHY_M_9),
    M(regSDMA0_CNTL, WHY_M_10),
    M(regSDMA0_F32_CNTL, WHY_M_10),
    M(regSDMA0_MCU_CNTL, WHY_M_10),
    M(regSDMA0_QUEUE0_DOORBELL, WHY_M_10),
    M(regSDMA0_QUEUE0_DOORBELL_OFFSET, WHY_M_10),
    M(regSDMA0_QUEUE0_MINOR_PTR_UPDATE, WHY_M_10),
    M(regSDMA0_QUEUE0_RB_BASE, WHY_M_10),
    M(regSDMA0_QUEUE0_RB_BASE_HI, WHY_M_10),
    M(regSDMA0_QUEUE0_RB_RPTR_ADDR_HI, WHY_M_10),
    M(regSDMA0_QUEUE0_RB_RPTR_ADDR_LO, WHY_M_10),
    M(regSDMA0_QUEUE0_RB_WPTR_POLL_ADDR_HI, WHY_M_10),
    M(regSDMA0_QUEUE0_RB_WPTR_POLL_ADDR_LO, WHY_M_10),
    M(regSDMA_CNTL, WHY_M_10),
    M(regSDMA_GFX_DOORBELL, WHY_M_10),
    M(regSDMA_GFX_DOORBELL_OFFSET, WHY_M_10),
    M(regSDMA_GFX_MINOR_PTR_UPDATE, WHY_M_10),
    M(regSDMA_GFX_RB_BASE, WHY_M_10),
    M(regSDMA_GFX_RB_BASE_HI, WHY_M_10),
    M(regSDMA_GFX_RB_RPTR_ADDR_HI, WHY_M_10),
    M(regSDMA_GFX_RB_RPTR_ADDR_LO, WHY_M_10),
    M(regSDMA_GFX_RB_WPTR_POLL_ADDR_HI, WHY_M_10),
    M(regSDMA_GFX_RB_WPTR_POLL_ADDR_LO, WHY_M_10),
    /* ---- golden settings ---- */
    GOLD(regGB_ADDR_CONFIG, WHY_GOLD_1),
    GOLD(regTCP_CNTL, WHY_GOLD_1),
    GOLD(regTCP_UTCL1_CNTL2, WHY_GOLD_1),
    /* ---- clock / power gating ---- */
    GATE(regHDP_MEM_POWER_CTRL, WHY_GATE_1),
    GATE(regMM_ATC_L2_MISC_CG, WHY_GATE_2),
    GATE(regRLC_CGCG_CGLS_CTRL, WHY_GATE_3),
    GATE(regRLC_CGTT_MGCG_OVERRIDE, WHY_GATE_3),
    GATE(regSDMA0_RLC_CGCG_CTRL, WHY_GATE_4),
    GATE(regSDMA1_RLC_CGCG_CTRL, WHY_GATE_4),
    /* ---- GC/MM hub settings the GMC model does not simulate ---- */
    HUB(regGCMC_VM_AGP_BASE, WHY_HUB_1),
    HUB(regGCMC_VM_AGP_BOT, WHY_HUB_1),
    HUB(regGCMC_VM_AGP_TOP, WHY_HUB_1),
    HUB(regGCMC_VM_MX_L1_TLB_CNTL, WHY_HUB_2),
    HUB(regGCMC_VM_SYSTEM_APERTURE_DEFAULT_ADDR_LSB, WHY_HUB_3),
    HUB(regGCMC_VM_SYSTEM_APERTURE_DEFAULT_ADDR_MSB, WHY_HUB_3),
    HUB(regGCVM_INVALIDATE_ENG0_ADDR_RANGE_HI32, WHY_HUB_4),
    HUB(regGCVM_INVALIDATE_ENG0_ADDR_RANGE_LO32, WHY_HUB_4),
    HUB(regGCVM_INVALIDATE_ENG10_ADDR_RANGE_HI32, WHY_HUB_4),
    HUB(regGCVM_INVALIDATE_ENG10_ADDR_RANGE_LO32, WHY_HUB_4),
    HUB(regGCVM_INVALIDATE_ENG11_ADDR_RANGE_HI32, WHY_HUB_4),
    HUB(regGCVM_INVALIDATE_ENG11_ADDR_RANGE_LO32, WHY_HUB_4),
    HUB(regGCVM_INVALIDATE_ENG12_ADDR_RANGE_HI32, WHY_HUB_4),
    HUB(regGCVM_INVALIDATE_ENG12_ADDR_RANGE_LO32, WHY_HUB_4),
    HUB(regGCVM_INVALIDATE_ENG13_ADDR_RANGE_HI32, WHY_HUB_4),
    HUB(regGCVM_INVALIDATE_ENG13_ADDR_RANGE_LO32, WHY_HUB_4),
    HUB(regGCVM_INVALIDATE_ENG14_ADDR_RANGE_HI32, WHY_HUB_4),
    HUB(regGCVM_INVALIDATE_ENG14_ADDR_RANGE_LO32, WHY_HUB_4),
    HUB(regGCVM_INVALIDATE_ENG15_ADDR_RANGE_HI32, WHY_HUB_4),
    HUB(regGCVM_INVALIDATE_ENG15_ADDR_RANGE_LO32, WHY_HUB_4),
    HUB(regGCVM_INVALIDATE_ENG16_ADDR_RANGE_HI32, WHY_HUB_4),
    HUB(regGCVM_INVALIDATE_ENG16_ADDR_RANGE_LO32, WHY_HUB_4),
    HUB(regGCVM_INVALIDATE_ENG17_ADDR_RANGE_HI32, WHY_HUB_4),
    HUB(regGCVM_INVALIDATE_ENG17_ADDR_RANGE_LO32, WHY_HUB_4),
    HUB(regGCVM_INVALIDATE_ENG1_ADDR_RANGE_HI32, WHY_HUB_4),
    HUB(regGCVM_INVALIDATE_ENG1_ADDR_RANGE_LO32, WHY_HUB_4),
    HUB(regGCVM_INVALIDATE_ENG2_ADDR_RANGE_HI32, WHY_HUB_4),
    HUB(regGCVM_INVALIDATE_ENG2_ADDR_RANGE_LO32, WHY_HUB_4),
    HUB(regGCVM_INVALIDATE_ENG3_ADDR_RANGE_HI32, WHY_HUB_4),
    HUB(regGCVM_INVALIDATE_ENG3_ADDR_RANGE_LO32, WHY_HUB_4),
    HUB(regGCVM_INVALIDATE_ENG4_ADDR_RANGE_HI32, WHY_HUB_4),
    HUB(regGCVM_INVALIDATE_ENG4_ADDR_RANGE_LO32, WHY_HUB_4),
    HUB(regGCVM_INVALIDATE_ENG5_ADDR_RANGE_HI32, WHY_HUB_4),
    HUB(regGCVM_INVALIDATE_ENG5_ADDR_RANGE_LO32, WHY_HUB_4),
    HUB(regGCVM_INVALIDATE_ENG6_ADDR_RANGE_HI32, WHY_HUB_4),
    HUB(regGCVM_INVALIDATE_ENG6_ADDR_RANGE_LO32, WHY_HUB_4),
    HUB(regGCVM_INVALIDATE_ENG7_ADDR_RANGE_HI32, WHY_HUB_4),
    HUB(regGCVM_INVALIDATE_ENG7_ADDR_RANGE_LO32, WHY_HUB_4),
    HUB(regGCVM_INVALIDATE_ENG8_ADDR_RANGE_HI32, WHY_HUB_4),
    HUB(regGCVM_INVALIDATE_ENG8_ADDR_RANGE_LO32, WHY_HUB_4),
    HUB(regGCVM_INVALIDATE_ENG9_ADDR_RANGE_HI32, WHY_HUB_4),
    HUB(regGCVM_INVALIDATE_ENG9_ADDR_RANGE_LO32, WHY_HUB_4),
    HUB(regGCVM_L2_CNTL, WHY_HUB_5),
    HUB(regGCVM_L2_CNTL2, WHY_HUB_5),
    HUB(regGCVM_L2_CNTL3, WHY_HUB_5),
    HUB(regGCVM_L2_CNTL4, WHY_HUB_5),
    HUB(regGCVM_L2_CNTL5, WHY_HUB_5),
    HUB(regGCVM_L2_CONTEXT1_IDENTITY_APERTURE_HIGH_ADDR_HI32, WHY_HUB_6),
    HUB(regGCVM_L2_CONTEXT1_IDENTITY_APERTURE_HIGH_ADDR_LO32, WHY_HUB_6),
    HUB(regGCVM_L2_CONTEXT1_IDENTITY_APERTURE_LOW_ADDR_HI32, WHY_HUB_6),
    HUB(regGCVM_L2_CONTEXT1_IDENTITY_APERTURE_LOW_ADDR_LO32, WHY_HUB_6),
    HUB(regGCVM_L2_CONTEXT_IDENTITY_PHYSICAL_OFFSET_HI32, WHY_HUB_6),
    HUB(regGCVM_L2_CONTEXT_IDENTITY_PHYSICAL_OFFSET_LO32, WHY_HUB_6),
    HUB(regGCVM_L2_PROTECTION_FAULT_CNTL2, WHY_HUB_7),
    HUB(regGCVM_L2_PROTECTION_FAULT_DEFAULT_ADDR_HI32, WHY_HUB_7),
    HUB(regGCVM_L2_PROTECTION_FAULT_DEFAULT_ADDR_LO32, WHY_HUB_7),
    HUB(regMMMC_VM_AGP_BASE, WHY_HUB_1),
    HUB(regMMMC_VM_AGP_BOT, WHY_HUB_1),
    HUB(regMMMC_VM_AGP_TOP, WHY_HUB_1),
    HUB(regMMMC_VM_MX_L1_TLB_CNTL, WHY_HUB_2),
    HUB(regMMMC_VM_SYSTEM_APERTURE_DEFAULT_ADDR_LSB, WHY_HUB_3),
    HUB(regMMMC_VM_SYSTEM_APERTURE_DEFAULT_ADDR_MSB, WHY_HUB_3),
    HUB(regMMMC_VM_SYSTEM_APERTURE_HIGH_ADDR, WHY_HUB_8),
    HUB(regMMMC_VM_SYSTEM_APERTURE_LOW_ADDR, WHY_HUB_8),
    HUB(regMMVM_INVALIDATE_ENG0_ADDR_RANGE_HI32, WHY_HUB_4),
    HUB(regMMVM_INVALIDATE_ENG0_ADDR_RANGE_LO32, WHY_HUB_4),
    HUB(regMMVM_INVALIDATE_ENG10_ADDR_RANGE_HI32, WHY_HUB_4),
    HUB(regMMVM_INVALIDATE_ENG10_ADDR_RANGE_LO32, WHY_HUB_4),
    HUB(regMMVM_INVALIDATE_ENG11_ADDR_RANGE_HI32, WHY_HUB_4),
    HUB(regMMVM_INVALIDATE_ENG11_ADDR_RANGE_LO32, WHY_HUB_4),
    HUB(regMMVM_INVALIDATE_ENG12_ADDR_RANGE_HI32, WHY_HUB_4),
    HUB(regMMVM_INVALIDATE_ENG12_ADDR_RANGE_LO32, WHY_HUB_4),
    HUB(regMMVM_INVALIDATE_ENG13_ADDR_RANGE_HI32, WHY_HUB_4),
    HUB(regMMVM_INVALIDATE_ENG13_ADDR_RANGE_LO32, WHY_HUB_4),
    HUB(regMMVM_INVALIDATE_ENG14_ADDR_RANGE_HI32, WHY_HUB_4),
    HUB(regMMVM_INVALIDATE_ENG14_ADDR_RANGE_LO32, WHY_HUB_4),
    HUB(regMMVM_INVALIDATE_ENG15_ADDR_RANGE_HI32, WHY_HUB_4),
    HUB(regMMVM_INVALIDATE_ENG15_ADDR_RANGE_LO32, WHY_HUB_4),
    HUB(regMMVM_INVALIDATE_ENG16_ADDR_RANGE_HI32, WHY_HUB_4),
    HUB(regMMVM_INVALIDATE_ENG16_ADDR_RANGE_LO32, WHY_HUB_4),
    HUB(regMMVM_INVALIDATE_ENG17_ADDR_RANGE_HI32, WHY_HUB_4),
    HUB(regMMVM_INVALIDATE_ENG17_ADDR_RANGE_LO32, WHY_HUB_4),
    HUB(regMMVM_INVALIDATE_ENG1_ADDR_RANGE_HI32, WHY_HUB_4),
    HUB(regMMVM_INVALIDATE_ENG1_ADDR_RANGE_LO32, WHY_HUB_4),
    HUB(regMMVM_INVALIDATE_ENG2_ADDR_RANGE_HI32, WHY_HUB_4),
    HUB(regMMVM_INVALIDATE_ENG2_ADDR_RANGE_LO32, WHY_HUB_4),
    HUB(regMMVM_INVALIDATE_ENG3_ADDR_RANGE_HI32, WHY_HUB_4),
    HUB(regMMVM_INVALIDATE_ENG3_ADDR_RANGE_LO32, WHY_HUB_4),
    HUB(regMMVM_INVALIDATE_ENG4_ADDR_RANGE_HI32, WHY_HUB_4),
    HUB(regMMVM_INVALIDATE_ENG4_ADDR_RANGE_LO32, WHY_HUB_4),
    HUB(regMMVM_INVALIDATE_ENG5_ADDR_RANGE_HI32, WHY_HUB_4),
    HUB(regMMVM_INVALIDATE_ENG5_ADDR_RANGE_LO32, WHY_HUB_4),
    HUB(regMMVM_INVALIDATE_ENG6_ADDR_RANGE_HI32, WHY_HUB_4),
    HUB(regMMVM_INVALIDATE_ENG6_ADDR_RANGE_LO32, WHY_HUB_4),
    HUB(regMMVM_INVALIDATE_ENG7_ADDR_RANGE_HI32, WHY_HUB_4),
    HUB(regMMVM_INVALIDATE_ENG7_ADDR_RANGE_LO32, WHY_HUB_4),
    HUB(regMMVM_INVALIDATE_ENG8_ADDR_RANGE_HI32, WHY_HUB_4),
    HUB(regMMVM_INVALIDATE_ENG8_ADDR_RANGE_LO32, WHY_HUB_4),
    HUB(regMMVM_INVALIDATE_ENG9_ADDR_RANGE_HI32, WHY_HUB_4),
    HUB(regMMVM_INVALIDATE_ENG9_ADDR_RANGE_LO32, WHY_HUB_4),
    HUB(regMMVM_L2_BANK_SELECT_RESERVED_CID2, WHY_HUB_5),
    HUB(regMMVM_L2_CNTL, WHY_HUB_5),
    HUB(regMMVM_L2_CNTL2, WHY_HUB_5),
    HUB(regMMVM_L2_CNTL3, WHY_HUB_5),
    HUB(regMMVM_L2_CNTL4, WHY_HUB_5),
    HUB(regMMVM_L2_CNTL5, WHY_HUB_5),
    HUB(regMMVM_L2_CONTEXT1_IDENTITY_APERTURE_HIGH_ADDR_HI32, WHY_HUB_6),
    HUB(regMMVM_L2_CONTEXT1_IDENTITY_APERTURE_HIGH_ADDR_LO32, WHY_HUB_6),
    HUB(regMMVM_L2_CONTEXT1_IDENTITY_APERTURE_LOW_ADDR_HI32, WHY_HUB_6),
    HUB(regMMVM_L2_CONTEXT1_IDENTITY_APERTURE_LOW_ADDR_LO32, WHY_HUB_6),
    HUB(regMMVM_L2_CONTEXT_IDENTITY_PHYSICAL_OFFSET_HI32, WHY_HUB_6),
    HUB(regMMVM_L2_CONTEXT_IDENTITY_PHYSICAL_OFFSET_LO32, WHY_HUB_6),
    HUB(regMMVM_L2_PROTECTION_FAULT_CNTL2, WHY_HUB_7),
    HUB(regMMVM_L2_PROTECTION_FAULT_DEFAULT_ADDR_HI32, WHY_HUB_7),
    HUB(regMMVM_L2_PROTECTION_FAULT_DEFAULT_ADDR_LO32, WHY_HUB_7),
    /* ---- other IP init settings the model does not simulate ---- */
    INIT(regBIFC_DOORBELL_ACCESS_EN_PF, WHY_INIT_1),
    INIT(regBIFC_GFX_INT_MONITOR_MASK, WHY_INIT_1),
    INIT(regCP_INT_CNTL, WHY_INIT_2),
    INIT(regCP_MEC_DOORBELL_RANGE_LOWER, WHY_INIT_3),
    INIT(regCP_MEC_DOORBELL_RANGE_UPPER, WHY_INIT_3),
    INIT(regCP_MEC_RS64_PRGRM_CNTR_START, WHY_INIT_4),
    INIT(regCP_MEC_RS64_PRGRM_CNTR_START_HI, WHY_INIT_4),
    INIT(regCP_ME_CNTL, WHY_INIT_2),
    INIT(regCP_ME_PRGRM_CNTR_START, WHY_INIT_4),
    INIT(regCP_ME_PRGRM_CNTR_START_HI, WHY_INIT_4),
    INIT(regCP_PFP_PRGRM_CNTR_START, WHY_INIT_4),
    INIT(regCP_PFP_PRGRM_CNTR_START_HI, WHY_INIT_4),
    INIT(regCP_RB_WPTR_POLL_CNTL, WHY_INIT_2),
    INIT(regDOORBELL0_CTRL_ENTRY_10, WHY_INIT_5),
    INIT(regDOORBELL0_CTRL_ENTRY_11, WHY_INIT_5),
    INIT(regDOORBELL0_CTRL_ENTRY_12, WHY_INIT_5),
    INIT(regDOORBELL0_CTRL_ENTRY_13, WHY_INIT_5),
    INIT(regDOORBELL0_CTRL_ENTRY_14, WHY_INIT_5),
    INIT(regDOORBELL0_CTRL_ENTRY_15, WHY_INIT_5),
    INIT(regDOORBELL0_CTRL_ENTRY_16, WHY_INIT_5),
    INIT(regDOORBELL0_CTRL_ENTRY_2, WHY_INIT_5),
    INIT(regDOORBELL0_CTRL_ENTRY_3, WHY_INIT_5),
    INIT(regDOORBELL0_CTRL_ENTRY_4, WHY_INIT_5),
    INIT(regDOORBELL0_CTRL_ENTRY_5, WHY_INIT_5),
    INIT(regDOORBELL0_CTRL_ENTRY_6, WHY_INIT_5),
    INIT(regDOORBELL0_CTRL_ENTRY_7, WHY_INIT_5),
    INIT(regDOORBELL0_CTRL_ENTRY_8, WHY_INIT_5),
    INIT(regDOORBELL0_CTRL_ENTRY_9, WHY_INIT_5),
    INIT(regGDC_S2A0_S2A_DOORBELL_ENTRY_0_CTRL, WHY_INIT_5),
    INIT(regGDC_S2A0_S2A_DOORBELL_ENTRY_2_CTRL, WHY_INIT_5),
    INIT(regGDC_S2A0_S2A_DOORBELL_ENTRY_3_CTRL, WHY_INIT_5),
    INIT(regGRBM_CNTL, WHY_INIT_6),
    INIT(regGRBM_SOFT_RESET, WHY_INIT_7),
    INIT(regIH_DOORBELL_RPTR, WHY_INIT_8),
    INIT(regIH_DOORBELL_RPTR_RING1, WHY_INIT_8),
    INIT(regIH_INT_FLOOD_CNTL, WHY_INIT_8),
    INIT(regIH_MSI_STORM_CTRL, WHY_INIT_8),
    INIT(regIH_RB_BASE_HI_RING1, WHY_INIT_8),
    INIT(regIH_RB_BASE_RING1, WHY_INIT_8),
    INIT(regIH_RB_CNTL_RING1, WHY_INIT_8),
    INIT(regIH_RB_RPTR, WHY_INIT_8),
    INIT(regIH_RB_RPTR_RING1, WHY_INIT_8),
    INIT(regIH_RB_WPTR_RING1, WHY_INIT_8),
    INIT(regIH_STORM_CLIENT_LIST_CNTL, WHY_INIT_8),
    INIT(regRCC_DEV0_EPF0_RCC_DOORBELL_APER_EN, WHY_INIT_1),
    INIT(regRCC_DEV0_EPF2_STRAP2, WHY_INIT_1),
    INIT(regRLC_CNTL, WHY_INIT_9),
    INIT(regRLC_SPM_MC_CNTL, WHY_INIT_9),
    INIT(regRLC_SRM_CNTL, WHY_INIT_9),
    INIT(regS2A_DOORBELL_ENTRY_0_CTRL, WHY_INIT_5),
    INIT(regS2A_DOORBELL_ENTRY_2_CTRL, WHY_INIT_5),
    INIT(regS2A_DOORBELL_ENTRY_3_CTRL, WHY_INIT_5),
    INIT(regSDMA0_QUEUE0_IB_CNTL, WHY_INIT_10),
    INIT(regSDMA0_QUEUE0_RB_RPTR, WHY_INIT_10),
    INIT(regSDMA0_QUEUE0_RB_RPTR_HI, WHY_INIT_10),
    INIT(regSDMA0_QUEUE0_RB_WPTR, WHY_INIT_10),
    INIT(regSDMA0_QUEUE0_RB_WPTR_HI, WHY_INIT_10),
    INIT(regSDMA0_UTCL1_CNTL, WHY_INIT_11),
    INIT(regSDMA0_UTCL1_PAGE, WHY_INIT_11),
    INIT(regSDMA0_WATCHDOG_CNTL, WHY_INIT_11),
    INIT(regSDMA_GFX_IB_CNTL, WHY_INIT_10),
    INIT(regSDMA_GFX_RB_RPTR, WHY_INIT_10),
    INIT(regSDMA_GFX_RB_RPTR_HI, WHY_INIT_10),
    INIT(regSDMA_GFX_RB_WPTR, WHY_INIT_10),
    INIT(regSDMA_GFX_RB_WPTR_HI, WHY_INIT_10),
    INIT(regSH_MEM_BASES, WHY_INIT_12),
    INIT(regSH_MEM_CONFIG, WHY_INIT_12),
    INIT(regSPI_COMPUTE_QUEUE_RESET, WHY_INIT_7),
};
const size_t amd_reg_allow_count = sizeof(amd_reg_allow_list) / sizeof(amd_reg_allow_list[0]);

const amd_reg_range amd_reg_ranges[] = {
    {"regCP_MQD_BASE_ADDR", "regCP_HQD_PQ_WPTR_HI",
     "amd_cp.c/amd_gfx9.c: CP_HQD_ACTIVE=1 compares every register of this range with MQD dwords 0x80.. (the "
     "driver loads the HQD from the MQD image dword by dword: gfx_v11_0_kiq_init_register, "
     "gfx_v9_4_3_xcc_kiq_init_register)"},
};
const size_t amd_reg_range_count = sizeof(amd_reg_ranges) / sizeof(amd_reg_ranges[0]);

const char *amd_reg_group_name(enum amd_reg_group g) {
  static const char *const names[AMD_REG_NGROUPS] = {"modelled", "driver read-back", "golden settings",
                                                     "clock/power gating", "hub settings", "IP init settings"};
  return (unsigned)g < AMD_REG_NGROUPS ? names[g] : "(bad group)";
}

/* The tables of device d paired with the IP whose bases address them (am/am_regs.h bg_am_regs_select). */
static size_t tables(const struct bg_am_discovery *d, const struct bg_am_regtab **t, int *hwip) {
  struct bg_am_regset s;
  if (bg_am_regs_select(d, &s) < 0) return 0;
  size_t n = 0;
  const struct bg_am_regtab *one[] = {s.gc, s.mmhub, s.nbio, s.mp, s.smu, s.hdp, s.osssys};
  const int ip[] = {GC_HWIP, MMHUB_HWIP, NBIO_HWIP, MP0_HWIP, MP1_HWIP, HDP_HWIP, OSSSYS_HWIP};
  for (size_t i = 0; i < sizeof(one) / sizeof(one[0]); i++) t[n] = one[i], hwip[n++] = ip[i];
  for (int i = SDMA0_HWIP; s.sdma && i <= SDMA7_HWIP; i++) t[n] = s.sdma, hwip[n++] = i;
  return n;
}

#define MAX_TABLES 16

int amd_reg_allow_each(const struct bg_am_discovery *d, void (*visit)(void *ctx, uint32_t addr, size_t idx),
                       void *ctx, const char **bad) {
  const struct bg_am_regtab *t[MAX_TABLES];
  int hwip[MAX_TABLES];
  size_t nt = tables(d, t, hwip);
  for (size_t e = 0; e < amd_reg_range_count; e++) {
    enum bg_am_reg_id lo, hi;
    if (bg_am_reg_id_by_name(amd_reg_ranges[e].first, &lo) < 0 || bg_am_reg_id_by_name(amd_reg_ranges[e].last, &hi) < 0) {
      *bad = amd_reg_ranges[e].first;
      return -1;
    }
    for (size_t k = 0; k < nt; k++) {
      const struct bg_am_reg *a = bg_am_reg_find(t[k], lo), *b = bg_am_reg_find(t[k], hi);
      if (!a || !b) continue;
      for (unsigned inst = 0; inst < BG_AM_MAX_INSTANCES; inst++) {
        uint32_t x, y;
        if (!(d->ip[hwip[k]].inst_mask >> inst & 1) || bg_am_reg_abs(d, hwip[k], inst, a, &x) < 0 ||
            bg_am_reg_abs(d, hwip[k], inst, b, &y) < 0)
          continue;
        for (uint32_t r = x; r <= y && y - x < 0x1000; r++) visit(ctx, r, amd_reg_allow_count + e);
      }
    }
  }
  for (size_t e = 0; e < amd_reg_allow_count; e++) {
    enum bg_am_reg_id id;
    if (bg_am_reg_id_by_name(amd_reg_allow_list[e].name, &id) < 0) {
      *bad = amd_reg_allow_list[e].name;
      return -1;
    }
    for (size_t k = 0; k < nt; k++) {
      const struct bg_am_reg *r = bg_am_reg_find(t[k], id);
      if (!r) continue;
      for (unsigned inst = 0; inst < BG_AM_MAX_INSTANCES; inst++) {
        uint32_t a;
        if (!(d->ip[hwip[k]].inst_mask >> inst & 1) || bg_am_reg_abs(d, hwip[k], inst, r, &a) < 0) continue;
        visit(ctx, a, e);
      }
    }
  }
  return 0;
}

const char *amd_reg_name_at(const struct bg_am_discovery *d, uint32_t addr) {
  const struct bg_am_regtab *t[MAX_TABLES];
  int hwip[MAX_TABLES];
  size_t nt = tables(d, t, hwip);
  for (size_t k = 0; k < nt; k++) {
    if (!t[k]) continue;
    for (unsigned inst = 0; inst < BG_AM_MAX_INSTANCES; inst++) {
      if (!(d->ip[hwip[k]].inst_mask >> inst & 1)) continue;
      for (size_t i = 0; i < t[k]->nregs; i++) {
        uint32_t a;
        if (bg_am_reg_abs(d, hwip[k], inst, &t[k]->regs[i], &a) == 0 && a == addr) return t[k]->regs[i].name;
      }
    }
  }
  return "(no register known at this address)";
}
