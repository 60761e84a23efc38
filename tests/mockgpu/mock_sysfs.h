/* tests/mockgpu/mock_sysfs.h: a fake sysfs tree holding emulated PCI devices (mock_pci.h).
 *
 * Layout under a new temp root, as Linux lays it out:
 *   devices/<dev>/{vendor,device,class,subsystem_vendor,subsystem_device,revision,enable,config,
 *                  resource,resourceN,resourceN_wc,resourceN_resize,reset,remove,driver_override,
 *                  current_link_speed,current_link_width,driver -> ../../bus/pci/drivers/<name>,
 *                  iommu_group -> ../../kernel/iommu_groups/<n>}
 *   bus/pci/devices/<bdf> -> ../../../devices/<dev>
 *   bus/pci/drivers/<name>/{bind,unbind,<bdf> -> ../../../../devices/<dev>}, bus/pci/drivers_probe
 * where <dev> is <bdf> (a flat tree), or with host bridges and bridges (Topology below) the path through them:
 * pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0 (root port, switch upstream and downstream port).
 *   kernel/iommu_groups/<n>/devices/<bdf> -> the device,
 *   module/vfio/parameters/enable_unsafe_noiommu_mode, dev/vfio/{vfio,<n>|noiommu-<n>} (mock_sysfs_add_vfio),
 *   lock/ (lock files),
 *   proc/sys/vm/compact_unevictable_allowed
 * mock_sysfs_new points BG_SYSFS_ROOT, BG_LOCK_DIR and BG_PROC_ROOT at it and attaches the tree's hooks
 * (platform/pci_hook.h), so platform/pci's sysfs code runs unchanged; the files are regular files the
 * model rewrites after each write to what the kernel would show. Not thread-safe. */
#ifndef BG_MOCKGPU_MOCK_SYSFS_H
#define BG_MOCKGPU_MOCK_SYSFS_H

#include <stddef.h>
#include <stdint.h>

#include "mock_pci.h"

/* NULL on failure (message on stderr). */
mock_sysfs *mock_sysfs_new(void);
/* Detach, delete the tree, restore the environment. */
void mock_sysfs_free(mock_sysfs *t);
/* Remove path and everything below it (temp dirs of the models and tests). */
void mock_rm_tree(const char *path);
/* A new temp dir <TMPDIR or /tmp>/bg-mock-<pid>-<tag>-XXXXXX into buf[n], after removing such trees whose <pid> is
 * gone (a killed run's); removed at this process's normal exit if mock_rm_tree has not removed it. 0 or -errno. */
int mock_tmpdir_new(const char *tag, char *buf, size_t n);
/* Remove the bg-mock-<pid>-* trees in TMPDIR whose process is gone; how many. */
int mock_tmpdir_sweep(void);
const char *mock_sysfs_root(const mock_sysfs *t);

int mock_sysfs_add_driver(mock_sysfs *t, const char *name);
/* A device and its files; NULL on a bad config (recorded as a failure). */
mock_pci *mock_sysfs_add(mock_sysfs *t, const mock_pci_cfg *cfg);
mock_pci *mock_sysfs_find(mock_sysfs *t, const char *bdf);
/* Surprise removal: config reads turn to all ones and the device's directory disappears. */
int mock_sysfs_vanish(mock_sysfs *t, const char *bdf);

enum mock_vfio_flags {
  MOCK_VFIO_MODULE = 1u << 0,       /* module/vfio and the vfio-pci driver exist */
  MOCK_VFIO_DEVNODES = 1u << 1,     /* <root>/dev/vfio/{vfio,noiommu-N} (regular files) + BG_DEV_ROOT */
  MOCK_VFIO_TYPE1 = 1u << 2,        /* an IOMMU translates: group nodes are dev/vfio/N (type1 backend) */
  MOCK_VFIO_NOIOMMU_OFF = 1u << 3,  /* enable_unsafe_noiommu_mode reads N and no group nodes exist */
};
/* The VFIO module and nodes (the emulated container, groups and devices behind them: mock_vfio.h); group nodes also
 * for devices added later. MOCKGPU_VFIO in the environment does this for the display functions mock_sysfs_add
 * creates without a driver (see mock_sysfs.c env_vfio). */
int mock_sysfs_add_vfio(mock_sysfs *t, unsigned flags);

/* Fault injection: opens of a path ending in suffix fail with errno err (0 clears all). */
void mock_sysfs_fail_open(mock_sysfs *t, const char *suffix, int err);

/* The last path (relative to the root) the sysfs code opened, e.g. ".../resource0_wc". */
const char *mock_sysfs_last_open(const mock_sysfs *t);

/* Failures the model recorded (strictness violations). */
unsigned mock_sysfs_nfail(const mock_sysfs *t);
const char *mock_sysfs_failures(const mock_sysfs *t);
void mock_sysfs_clear_failures(mock_sysfs *t);

/* Topology (mock_topo.c). A device goes below the bridge whose secondary bus is its bus, or below the host bridge
 * of its root bus (devices/pciDDDD:BB/<bdf>), else flat in devices/ - so add host bridges and bridges first. A DMA
 * into a peer's memory BAR is routed only between devices below the same root complex (flat devices count as one). */
typedef enum mock_topology {
  MOCK_TOPO_SWITCH, /* one root complex: root port 0000:00:01.0, switch 0000:01:00.0, a downstream port per GPU */
  MOCK_TOPO_SPLIT,  /* a root complex per GPU (pci0000:00, pci0000:40, ...: several sockets), each with that chain */
} mock_topology;
/* "switch" (also NULL or ""), "split" -> *out: 0; anything else -1. */
int mock_topology_parse(const char *s, mock_topology *out);
/* A host bridge: devices on root bus `bus` of `domain` go in devices/pciDDDD:BB. 0 or -BG_EIO (recorded). */
int mock_sysfs_add_root(mock_sysfs *t, unsigned domain, unsigned bus);
typedef enum mock_port_type { MOCK_PORT_ROOT = 4, MOCK_PORT_UPSTREAM = 5, MOCK_PORT_DOWNSTREAM = 6 } mock_port_type;
/* A PCI-to-PCI bridge (class 0x060400, type 1 header with bus numbers, PCIe port type, bound to pcieport) at bdf,
 * leading to buses sec..sub. NULL on failure (recorded). */
mock_pci *mock_sysfs_add_bridge(mock_sysfs *t, const char *bdf, uint16_t vendor, uint16_t device, mock_port_type type,
                                unsigned sec, unsigned sub);
/* Host bridges and bridges for count GPUs laid out as topo; where to create GPU i into bdf[i] (switch:
 * 0000:03:00.0, 0000:04:00.0, ...; split with up to 4 GPUs: 0000:03:00.0, 0000:43:00.0, ...). 0 or <0 (recorded). */
int mock_sysfs_gpu_topology(mock_sysfs *t, mock_topology topo, int count, char (*bdf)[16]);

/* DMA mappings the driver holds (bus ranges handed out by the tree). */
size_t mock_sysfs_dma_ranges(const mock_sysfs *t);

/* How trees attach their hooks to platform/pci: bg_pci_set_hooks by default; the plugin module (mock_plugin.c) points
 * it at the library's instance (bg_mock_host.pci_set_hooks). Set before creating a tree. */
struct bg_pci_hooks;
typedef int (*mock_sysfs_set_hooks_fn)(const char *root, const struct bg_pci_hooks *hooks, void *ctx);
void mock_sysfs_use_set_hooks(mock_sysfs_set_hooks_fn fn);

#endif
