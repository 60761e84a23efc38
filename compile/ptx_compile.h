/* compile/ptx_compile.h: PTX text -> cubin for an NVIDIA SM.
 *
 * Tools, in order (BG_PTX_AUTO): nvJitLink (libnvJitLink.so.*, loaded with dlopen at run time:
 * nvJitLinkCreate with "-arch=sm_XY", nvJitLinkAddData of the PTX, nvJitLinkComplete,
 * nvJitLinkGetLinkedCubin), else `ptxas` from PATH or /usr/local/cuda/bin run on temporary files in
 * $TMPDIR (removed afterwards; its diagnostics become the error message). None found: -BG_ENOTSUP
 * naming what was looked for. A PTX error: -BG_ECOMPILE with the tool's log. */
#ifndef BG_COMPILE_PTX_COMPILE_H
#define BG_COMPILE_PTX_COMPILE_H

#include <stddef.h>
#include <stdint.h>

typedef enum bg_ptx_tool { BG_PTX_AUTO = 0, BG_PTX_NVJITLINK = 1, BG_PTX_PTXAS = 2 } bg_ptx_tool;

/* Compile ptx (NUL-terminated) for sm_<sm> with tool; on success *cubin (malloc'd) holds *n bytes. */
int bg_ptx_compile(const char *ptx, unsigned sm, bg_ptx_tool tool, uint8_t **cubin, size_t *n);
/* The ptxas that BG_PTX_PTXAS would run, written into path (size n); -BG_ENOTSUP (message set) when none. */
int bg_ptx_find_ptxas(char *path, size_t n);

#endif
