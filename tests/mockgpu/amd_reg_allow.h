/* tests/mockgpu/amd_reg_allow.h: which register writes the emulated AMD GPU accepts although no hook
 * (amd_gpu.c build_hooks, amd_cp.c) acts on them. A write to any other register without a hook is a failure
 * (amd_gpu.c reg_write), so the emulator cannot silently swallow programming the driver depends on.
 *
 * Two kinds of entries (amd_reg_allow.c), each with its reason:
 *   modelled  - the model reads the stored value back to act on it (CP/HQD, SDMA, GMC walker, IH, VM, PM4
 *               dispatch, PSP, SMU), or the driver reads back what it wrote (scratch) and the register file
 *               returns it;
 *   harmless  - a setting the emulator does not simulate and whose absence cannot change what the driver
 *               observes: golden settings, clock/power gating, cache/TLB tuning of the hubs, ...
 * Registers are named as Linux names them (the generated am/regs tables, "regGCVM_L2_CNTL"). */
#ifndef BG_MOCKGPU_AMD_REG_ALLOW_H
#define BG_MOCKGPU_AMD_REG_ALLOW_H

#include <stddef.h>
#include <stdint.h>

#include "am/discovery.h"

enum amd_reg_group {
  AMD_REG_MODELLED,      /* read back by the model */
  AMD_REG_READBACK,      /* written then read back by the driver: the register file returns it */
  AMD_REG_GOLDEN,        /* golden settings */
  AMD_REG_GATING,        /* clock / power gating */
  AMD_REG_HUB,           /* GC/MM hub (L2, TLB, aperture, protection) settings the GMC model does not simulate */
  AMD_REG_IP_INIT,       /* other IP init settings the model does not simulate (NBIO, HDP, IH, SDMA, CP) */
  AMD_REG_NGROUPS
};

typedef struct amd_reg_allow {
  const char *name; /* Linux's name, prefix included ("regGCVM_L2_CNTL") */
  enum amd_reg_group group;
  const char *reason;
} amd_reg_allow;

extern const amd_reg_allow amd_reg_allow_list[];
extern const size_t amd_reg_allow_count;

/* Modelled register ranges, first..last inclusive by Linux's names: the registers between them include offsets the
 * generated tables leave out (am/regs/gen_regs.py keeps the names the driver uses), which the model still reads. */
typedef struct amd_reg_range {
  const char *first, *last;
  const char *reason;
} amd_reg_range;

extern const amd_reg_range amd_reg_ranges[];
extern const size_t amd_reg_range_count;

const char *amd_reg_group_name(enum amd_reg_group g);

/* Calls visit(ctx, addr, idx) for every absolute address an entry has on the device described by d (every table
 * the device uses, every instance present); idx < amd_reg_allow_count indexes amd_reg_allow_list, else
 * amd_reg_ranges[idx - amd_reg_allow_count]. -1 with *bad set to the first name that is not a register name (a
 * typo in the list), else 0. */
int amd_reg_allow_each(const struct bg_am_discovery *d, void (*visit)(void *ctx, uint32_t addr, size_t idx),
                       void *ctx, const char **bad);

/* Linux's name of the register at absolute dword address addr on device d, or "(no register known at this
 * address)". */
const char *amd_reg_name_at(const struct bg_am_discovery *d, uint32_t addr);

#endif
