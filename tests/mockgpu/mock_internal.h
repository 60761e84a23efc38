/* tests/mockgpu/mock_internal.h: state shared by mock_pci.c (the device model) and mock_sysfs.c
 * (the tree and its hooks). Not for tests. */
#ifndef BG_MOCKGPU_MOCK_INTERNAL_H
#define BG_MOCKGPU_MOCK_INTERNAL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "platform/mmio.h"
#include "mock_sysfs.h"

/* 8 MOCKPCI + 8 MOCKUSB GPUs and the bridges of MOCKGPU_TOPOLOGY=split (3 per GPU), with room for tests. */
#define MOCK_MAX_DEVS 64
#define MOCK_MAX_FAULTS 8
#define MOCK_MAX_ROOTS 8

typedef struct mock_hook {
  int bar;
  uint64_t off, len;
  mock_pci_rd_fn rd;
  mock_pci_wr_fn wr;
  void *user;
} mock_hook;

/* One BAR view handed to the driver: the ctx of its bg_mmio. */
typedef struct mock_view {
  mock_pci *m;
  int bar;
  uint64_t off, size;
} mock_view;

struct mock_pci {
  mock_sysfs *tree;
  mock_pci_cfg cfg;             /* string fields point at the copies below */
  char bdf[16], driver[64], override[64], link_speed[32];
  char dir[256];                /* "devices/pci0000:00/0000:00:01.0/.../<bdf>", or "devices/<bdf>" on no bridge */
  char rc[16];                  /* its root complex "pci0000:00"; "" when flat (no host bridge in the tree) */
  bool bridge;                  /* a PCI-to-PCI bridge (type 1 header; mock_topo.c) */
  uint8_t sec_bus, sub_bus;     /* a bridge's secondary and subordinate bus numbers */
  uint8_t config[4096];
  uint8_t wmask[4096];          /* writable bits of each config byte */
  bool ident[4096];             /* identity bytes: writing another value is a driver bug */
  uint32_t rebar_off;           /* Resizable BAR capability, 0: none */
  uint64_t bar_size[6], bar_base[6];
  uint8_t *bar_mem[6];
  uint8_t *cpu_view[6]; /* what direct maps of the host CPU get instead of bar_mem (mock_pci_bar_cpu_view) */
  bool strict[6], direct[6];
  unsigned views[6];
  mock_hook *hooks;             /* sorted by (bar, off), never overlapping */
  size_t nhooks, caphooks;
  bool dead, gone, enabled;
  unsigned resets;
  void (*reset_fn)(void *user, mock_pci *m);
  void *reset_user;
};

typedef struct mock_vfio mock_vfio;

typedef struct mock_dma {
  uint64_t bus;
  size_t npages;
  uint8_t *va;
  bool reversed;                /* page i at bus + (npages-1-i)*4096: catches contiguity assumptions */
  mock_pci *dev;
  const void *domain;           /* the emulated IOMMU container whose IOVA this is (mock_vfio.c); NULL: physical */
} mock_dma;

struct mock_sysfs {
  char root[PATH_MAX];
  mock_pci *devs[MOCK_MAX_DEVS];
  size_t ndevs;
  mock_dma *dma;
  size_t ndma, capdma;
  uint64_t next_bus, next_mem64, next_mem32, next_io;
  unsigned roots[MOCK_MAX_ROOTS];  /* host bridges: domain << 8 | root bus (mock_sysfs_add_root) */
  size_t nroots;
  struct {
    char suffix[128];
    int err;
  } faults[MOCK_MAX_FAULTS];
  size_t nfaults;
  char last_open[256];
  unsigned nfail;
  char failures[4096];
  char *saved_env[4];
  unsigned vfio_flags;          /* mock_sysfs_add_vfio's: group nodes for devices added later too */
  struct mock_vfio *vfio;       /* the emulated VFIO's open files (mock_vfio.c) */
};

/* Record a strictness failure (also on stderr) and return -BG_EIO with the message. */
int mock_fail(mock_sysfs *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "<root>/<rel>" into buf[PATH_MAX]; -ENAMETOOLONG when it does not fit. */
int mock_path(const mock_sysfs *t, const char *rel, char *buf);
/* Write a whole file (rel to the root), or n bytes at off of an existing one (off >= 0). */
int mock_put(mock_sysfs *t, const char *rel, const void *data, size_t n, long off);

/* mock_pci.c */
mock_pci *mock_pci_create(mock_sysfs *t, const mock_pci_cfg *cfg);
void mock_pci_destroy(mock_pci *m);
int mock_pci_write_files(mock_pci *m);        /* config, resource, resourceN*, ids */
int mock_pci_config_written(mock_pci *m, uint64_t off, const uint8_t *data, size_t n);
int mock_pci_resize(mock_pci *m, int bar, const char *val);
int mock_pci_reset_written(mock_pci *m, const char *val);
int mock_pci_map(mock_pci *m, int bar, uint64_t off, uint64_t size, bg_mmio *out);
/* The same for the host CPU (the driver's mmap of resourceN): a direct BAR's view is its CPU view when one is set
 * (mock_pci_bar_cpu_view). mock_pci_map is a peer's (the USB bridge's PCIe accesses). */
int mock_pci_map_cpu(mock_pci *m, int bar, uint64_t off, uint64_t size, bg_mmio *out);
void mock_pci_unmap(bg_mmio *v);

/* mock_sysfs.c: where a new device's directory goes (below the bridge whose secondary bus is its bus, on a host
 * bridge's root bus, or flat under devices/): fills m->dir and m->rc. */
void mock_sysfs_place(mock_sysfs *t, mock_pci *m);
/* A relative link at rel to target (both relative to the tree's root), as sysfs makes them. */
int mock_link(mock_sysfs *t, const char *target, const char *rel);

/* mock_sysfs.c: bus address -> host memory, one 4 KiB page at a time: the host pages the driver mapped, or a peer
 * device's memory BAR when the topology routes the TLP there (peer_bar). NULL: nothing there, or (*refused true, a
 * failure naming why recorded) a peer BAR the TLP cannot reach. what ("read", "write", "access") names the TLP. */
uint8_t *mock_dma_host_rw(mock_sysfs *t, mock_pci *m, uint64_t bus, const char *what, bool *refused);
uint8_t *mock_dma_host(mock_sysfs *t, mock_pci *m, uint64_t bus); /* what "access", refusals only recorded */
/* IOVA ranges an emulated IOMMU container (domain) maps (mock_vfio.c): npages host pages at va reachable at bus by
 * the devices of its groups only. */
int mock_sysfs_dma_add(mock_sysfs *t, const void *domain, uint64_t bus, void *va, size_t npages);
void mock_sysfs_dma_del(mock_sysfs *t, const void *domain, uint64_t bus);
/* mock_vfio.c: the type1 container m's DMA is translated by (its open VFIO device's), NULL when none: physical. */
const void *mock_vfio_domain(mock_sysfs *t, const mock_pci *m);

#endif
