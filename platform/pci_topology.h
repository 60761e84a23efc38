/* platform/pci_topology.h: where PCI devices sit in the hierarchy, and whether two can do peer-to-peer.
 *
 * Read from sysfs under bg_pci_sysfs_root(): bus/pci/devices/<bdf> links into devices/pciDDDD:BB/<bridges>/<bdf>,
 * the path through the host bridge, root port and switch ports (Linux drivers/pci/probe.c). Two devices below the
 * same host bridge can reach each other's BARs; between host bridges the root complexes need not route
 * peer-to-peer TLPs (Linux drivers/pci/p2pdma.c pci_p2pdma_distance refuses them unless the host bridge is
 * whitelisted), so callers stage through host memory instead. */
#ifndef BG_PLATFORM_PCI_TOPOLOGY_H
#define BG_PLATFORM_PCI_TOPOLOGY_H

#include <stddef.h>

/* The root complex of device bdf: the first "pciDDDD:BB" component of the resolved bus/pci/devices/<bdf> into
 * out[n] ("pci0000:00"). 0, or -BG_ENODEV (no such link, or it does not lead below a host bridge: not a PCI device
 * link; the message names the path), -BG_EINVAL (bad arguments, out too small). */
int bg_pci_root_complex(const char *bdf, char *out, size_t n);

/* Whether a and b can do peer-to-peer: 0 when both are below the same root complex (why says so, and whether they
 * also share a switch: "same root complex pci0000:00, same switch (below 0000:01:00.0)" or "same root complex
 * pci0000:00, no common switch"), -BG_ENOTSUP with why = "different root complexes (pci0000:00, pci0000:40)" or
 * "<bdf> is behind an IOMMU (VFIO type1 group N): ..." (its DMA addresses are IOVAs; platform/vfio.h
 * bg_vfio_translated), or bg_pci_root_complex's error for either (why holds its message). why may be NULL. */
int bg_pci_p2p_distance(const char *a, const char *b, char *why, size_t n);

#endif
