/* tests/mockgpu/cdna3/cdna3.h: a wave64 CDNA3 (gfx942, MI300) shader core, the part of the emulated MI300 that
 * executes dispatched code. The AQL packet processor (tests/mockgpu/amd_aql.c) calls cdna3_dispatch_run for each
 * kernel dispatch packet on each XCC, with the COMPUTE_* register values the CP firmware derives from the packet and
 * its kernel descriptor (LLVM AMDGPUUsage "Kernel Descriptor", "Initial Kernel Execution State"). Types are shared
 * with the RDNA3 core (memory callbacks, register values, report, statistics). */
#ifndef BG_MOCKGPU_CDNA3_H
#define BG_MOCKGPU_CDNA3_H

#include "rdna3/rdna3.h"

typedef struct cdna3_dispatch {
  rdna3_dispatch regs;  /* initiator CS_W32_EN must be 0 (wave64); RSRC3 carries ACCUM_OFFSET */
  unsigned xcc, nxcc;   /* this XCC runs the workgroups whose linear id % nxcc == xcc
                           (COMPUTE_TG_CHUNK_SIZE 1, COMPUTE_CURRENT_LOGIC_XCC_ID = xcc); nxcc 1: all */
} cdna3_dispatch;

/* Run this XCC's share of the grid. 0 when every wave reached s_endpgm; -1 with rep->msg otherwise. Single-threaded,
 * no global state. */
int cdna3_dispatch_run(const cdna3_dispatch *d, const rdna3_mem *mem, rdna3_report *rep);

#endif
