/* platform/mock_plugin.h: how the library reaches the emulated devices of tests/mockgpu.
 *
 * The emulated hardware is not part of libbaregpu. With -Dmock=true, tests/mockgpu also builds the
 * loadable module libbaregpu-mock.so; the MOCKPCI / MOCKUSB interfaces (DEV=MOCKPCI+AMD) dlopen it
 * (BG_MOCK_PLUGIN, else the build tree's path from bg_config.h, else <libdir>/baregpu/), call
 * bg_mock_plugin_entry()->start, and then open the devices it created with the same driver code
 * as PCI+AMD / USB+AMD: only the lowest access layer (the sysfs tree's hooks, the USB transport)
 * is the model's.
 *
 * The plugin carries its own copies of the stateless library code it uses (discovery and
 * firmware parsers); everything with process state the driver must share (the PCI hook table) it
 * reaches through the bg_mock_host the library passes in. */
#ifndef BG_HCQ_MOCK_PLUGIN_H
#define BG_HCQ_MOCK_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include "platform/pci_hook.h"

/* ABI 2: MOCKUSB (an emulated ASM24 bridge in front of each GPU), usb_transport and exec_ns.
 * ABI 3: MOCKNVK+NV (an emulated nvidia kernel module and NVIDIA GPUs): nv_sys and nv_assemble.
 * ABI 4: inject (faults the stress tests of tests/stress inject into the emulated hardware); the USB transport table
 *   gained clear_halt and its transfer/stats records changed layout.
 * ABI 5: shader_stats (cumulative counters of the emulated shader core, bg_mock_shader_stats).
 * ABI 6: bg_pci_hooks gained vfio (the emulated VFIO container, group and device of platform/vfio_sys.h). */
#define BG_MOCK_PLUGIN_ABI 6
#define BG_MOCK_MAX_DEVICES 8

/* usb/usb_transport.h: hcq/ only passes the pointer on. */
typedef struct bg_usb_transport bg_usb_transport;
/* nv/nv_sys.h: hcq/ and platform/ only pass the pointer on. */
typedef struct bg_nv_sys bg_nv_sys;

/* What the emulated AMD GPU's shader core (tests/mockgpu/rdna3) executed, summed over every dispatch since the
 * device was created. Deterministic proxies for benchmarks on emulated hardware, where time says nothing: take the
 * difference of two reads around one kernel run. */
typedef struct bg_mock_shader_stats {
  uint64_t dispatches, waves, wave_insts;          /* instructions executed, counted once per wave */
  uint64_t valu_insts, salu_insts, vmem_insts, lds_insts, wmma_insts;  /* wmma_insts are also VALU */
  uint64_t global_load_bytes, global_store_bytes;  /* bytes of active lanes, global/flat/buffer memory */
  uint64_t lds_load_bytes, lds_store_bytes;
  uint64_t lds_bank_conflict_cycles;               /* extra cycles from LDS bank conflicts (emu's model) */
} bg_mock_shader_stats;

typedef struct bg_mock_host {
  unsigned abi;  /* BG_MOCK_PLUGIN_ABI */
  int (*pci_set_hooks)(const char *root, const bg_pci_hooks *hooks, void *ctx);
} bg_mock_host;

typedef struct bg_mock_devices {
  char sysfs_root[256];   /* fake sysfs tree of the PCI devices (what BG_SYSFS_ROOT would name) */
  char lock_dir[256];     /* lock files for them */
  char fw_dir[256];       /* firmware with correct headers for the emulated chips */
  int count;
  char bdf[BG_MOCK_MAX_DEVICES][16];
} bg_mock_devices;

typedef struct bg_mock_plugin {
  unsigned abi;  /* BG_MOCK_PLUGIN_ABI */
  /* Create the emulated devices of iface ("MOCKPCI", "MOCKUSB") and kind ("AMD") in this process on
   * the first call; later calls describe the same ones. Configuration from the environment:
   * MOCKGPU_CHIP=gfx11|gfx12|gfx942 (default gfx11: the shader core emulates RDNA3), MOCKGPU_COUNT
   * (default 1), MOCKGPU_VRAM_MB (default 512), MOCKGPU_HDP=strict|coherent (default strict: host BAR0 writes reach
   * the engines at an HDP flush), MOCKGPU_SHARED=0|1 (state shared with children forked after start). ("MOCKNVK", "NV"): emulated NVIDIA GPUs behind an emulated
   * nvidia kernel module (no sysfs tree), MOCKGPU_NV=hopper|ada (default hopper), MOCKGPU_COUNT. 0, or -BG_E* with err filled. */
  int (*start)(const bg_mock_host *host, const char *iface, const char *kind, bg_mock_devices *out, char *err,
               size_t errlen);
  /* Free every emulated device (process exit; the driver has closed them): bridges before GPUs. */
  void (*stop)(void);
  /* MOCKUSB: a new transport to the bridge in front of device index (usb/usb_transport.h; closing it leaves the
   * bridge alive). 0, or -BG_E* with err filled (not started as MOCKUSB, no such device). */
  int (*usb_transport)(int index, bg_usb_transport **out, char *err, size_t errlen);
  /* Wall time the emulated engines spent executing packets and shaders, summed over the module's GPUs
   * (mock_amd_exec_ns), so benches can subtract the emulator's share. */
  uint64_t (*exec_ns)(void);
  /* MOCKNVK: after start("MOCKNVK", "NV"), the system-call table (nv/nv_sys.h) through which nv/ reaches the emulated
   * kernel module: /dev/nvidiactl, /dev/nvidia<N> (N < count), /dev/nvidia-uvm, /proc/driver/nvidia/version, and
   * the doorbell. The table lives until stop(). 0, or -BG_E* with err filled (not started as MOCKNVK). */
  int (*nv_sys)(const bg_nv_sys **out, char *err, size_t errlen);
  /* MOCKNVK: the emulated GPU's assembler. Its shader core executes PTX (tests/mockgpu/ptx), so its "cubin" is an
   * ELF like ptxas output (EM_CUDA, sm in e_flags, .nv.info attributes with the parameter bank, offsets and
   * sizes, .nv.constant0.<entry>) whose .text.<entry> holds the PTX text. *cubin is malloc'd (*n bytes).
   * 0, or -BG_E* with err naming the PTX line. */
  int (*nv_assemble)(const char *ptx, unsigned sm, uint8_t **cubin, size_t *n, char *err, size_t errlen);
  /* Inject a fault of kind into the emulated device index of iface ("MOCKPCI", "MOCKUSB"), for the next count events
   * of that kind (the kinds are the rows of tests/mockgpu/mock_plugin.c's table, e.g. "doorbell-drop": the GPU
   * ignores the next count doorbell writes; "usb-stall": the bridge stalls the next count bulk transfers). 0, or
   * -BG_E* with err filled (not started, no such device, a kind unknown or not available on iface: err names the
   * known kinds). */
  int (*inject)(const char *iface, int index, const char *kind, unsigned count, char *err, size_t errlen);
  /* Cumulative shader-core counters of device index of iface ("MOCKPCI", "MOCKUSB") since start (every dispatch).
   * All zero on a chip whose command processor runs no shaders (gfx942). 0, or -BG_E* with err filled (iface not
   * MOCKPCI/MOCKUSB, not started, no such device). */
  int (*shader_stats)(const char *iface, int index, bg_mock_shader_stats *out, char *err, size_t errlen);
} bg_mock_plugin;

/* The one symbol the module exports. */
typedef const bg_mock_plugin *(*bg_mock_plugin_entry_fn)(void);
#define BG_MOCK_PLUGIN_ENTRY "bg_mock_plugin_entry"

/* The library's side (platform/mock_plugin.c): load the module once (BG_MOCK_PLUGIN, else BG_MOCK_PLUGIN_PATH of
 * bg_config.h, else BG_MOCK_PLUGIN_INSTALL_PATH), check its ABI and call start(iface, kind). Errors name every
 * path tried and dlerror(). Thread-safe; the module stays loaded until exit. */
int bg_mock_plugin_start(const char *iface, const char *kind, bg_mock_devices *out);
/* After bg_mock_plugin_start("MOCKUSB", ...): a transport to the bridge of device index. */
int bg_mock_plugin_usb_transport(int index, bg_usb_transport **out);
/* After bg_mock_plugin_start("MOCKNVK", "NV", ...): the emulated kernel module's system-call table. */
int bg_mock_plugin_nv_sys(const bg_nv_sys **out);
/* After bg_mock_plugin_start("MOCKNVK", ...): the emulated GPU's PTX -> cubin (see nv_assemble above). */
int bg_mock_plugin_nv_assemble(const char *ptx, unsigned sm, uint8_t **cubin, size_t *n);
/* After bg_mock_plugin_start(iface, ...): inject count faults of kind into device index (see inject above). */
int bg_mock_plugin_inject(const char *iface, int index, const char *kind, unsigned count);
/* After bg_mock_plugin_start(iface, ...): the shader statistics of device index (see shader_stats above). */
int bg_mock_plugin_shader_stats(const char *iface, int index, bg_mock_shader_stats *out);
/* Make the emulated tree the process's: BG_SYSFS_ROOT (when sysfs: platform/pci reads it for as long as a device
 * lives, DMA mappings go through the root's hooks) and BG_LOCK_DIR, each set only when its value changes (after the
 * first open every open finds them set, and no setenv runs while other threads read the environment). what names
 * the interface in the error ("MOCKPCI+AMD"). */
int bg_mock_plugin_enter(const bg_mock_devices *md, bool sysfs, const char *what);
/* The loaded module's exec_ns(), 0 when no module is loaded. */
uint64_t bg_mock_plugin_exec_ns(void);

#endif
