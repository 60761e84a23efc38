/* platform/pci_topology.c: root complexes and peer-to-peer reach of PCI devices (platform/pci_topology.h), from the
 * sysfs device hierarchy (Linux Documentation/ABI/testing/sysfs-bus-pci; drivers/pci/p2pdma.c
 * pci_p2pdma_distance: a common upstream bridge below the host bridge is what makes P2P work). */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/error.h"
#include "platform/pci_scan.h"
#include "platform/pci_topology.h"
#include "platform/vfio.h"
#include "platform/vfio.h"

enum { MAX_DEPTH = 32 };

/* A host bridge's directory: "pci" DDDD (4 or more hex digits: VMD domains have 5) ":" BB. */
static bool is_host_bridge(const char *c, size_t len) {
  if (len < 10 || strncmp(c, "pci", 3) != 0) return false;
  size_t i = 3;
  while (i < len && isxdigit((unsigned char)c[i])) i++;
  return i >= 7 && i + 3 == len && c[i] == ':' && isxdigit((unsigned char)c[i + 1]) &&
         isxdigit((unsigned char)c[i + 2]);
}

/* The resolved path of bus/pci/devices/<bdf> split after its host bridge: comp[0] is "pciDDDD:BB", then the bridges,
 * the device last; the components point into real. */
typedef struct resolved {
  char real[PATH_MAX];
  const char *comp[MAX_DEPTH];
  size_t n;
} resolved;

static int resolve(const char *bdf, resolved *p) {
  char *real = p->real;
  const char **comp = p->comp;
  size_t *nc = &p->n;
  char link[PATH_MAX];
  if (!bdf || !*bdf || strchr(bdf, '/'))
    return bg_error(BG_EINVAL, "pci topology: bad PCI address '%s': expected DDDD:BB:DD.F", bdf ? bdf : "(null)");
  if (snprintf(link, sizeof(link), "%s/bus/pci/devices/%s", bg_pci_sysfs_root(), bdf) >= (int)sizeof(link))
    return bg_error(BG_EINVAL, "pci topology: path of %s too long", bdf);
  if (!realpath(link, real)) {
    int e = errno;
    return bg_error(BG_ENODEV, "pci topology: cannot resolve %s: %s (errno %d)", link, strerror(e), e);
  }
  *nc = 0;
  bool below = false;
  for (char *s = real, *save = NULL, *c; (c = strtok_r(s, "/", &save)) != NULL; s = NULL) {
    if (!below) below = is_host_bridge(c, strlen(c));
    if (!below) continue;
    if (*nc == MAX_DEPTH)
      return bg_error(BG_EINVAL, "pci topology: %s is more than %d levels below its host bridge", link, MAX_DEPTH);
    comp[(*nc)++] = c;
  }
  if (*nc < 2)
    return bg_error(BG_ENODEV, "pci topology: %s is not a PCI device link: it resolves to a path without a host "
                    "bridge component (pciDDDD:BB)", link);
  return 0;
}

int bg_pci_root_complex(const char *bdf, char *out, size_t n) {
  resolved p = {.n = 0};
  int r = resolve(bdf, &p);
  if (r < 0) return r;
  if (!out || strlen(p.comp[0]) >= n)
    return bg_error(BG_EINVAL, "pci topology: %s: no room for root complex %s (%zu bytes)", bdf, p.comp[0], n);
  memcpy(out, p.comp[0], strlen(p.comp[0]) + 1);
  return 0;
}

int bg_pci_p2p_distance(const char *a, const char *b, char *why, size_t n) {
  char scratch[1];
  resolved pa = {.n = 0}, pb = {.n = 0};
  if (!why) why = scratch, n = sizeof(scratch);
  /* Behind a translating IOMMU (VFIO type1) a device's DMA addresses are IOVAs: a peer's BAR is reachable only once
   * it is mapped into the container, which baregpu does not do, so such pairs stage through host memory. */
  int group = -1;
  const char *tr = bg_vfio_translated(a, &group) ? a : bg_vfio_translated(b, &group) ? b : NULL;
  if (tr && strcmp(a, b) != 0) {
    snprintf(why, n, "%s is behind an IOMMU (VFIO type1 group %d): peer BARs are not mapped into its container", tr,
             group);
    return bg_error(BG_ENOTSUP, "pci topology: no peer-to-peer between %s and %s: %s is behind an IOMMU (VFIO type1 "
                    "group %d): peer BARs are not mapped into its container", a, b, tr, group);
  }
  int r = resolve(a, &pa);
  if (r == 0) r = resolve(b, &pb);
  if (r < 0) {
    snprintf(why, n, "%s", bg_last_error());
    return r;
  }
  const char **ca = pa.comp, **cb = pb.comp;
  size_t na = pa.n, nb = pb.n;
  if (strcmp(ca[0], cb[0]) != 0) {
    snprintf(why, n, "different root complexes (%s, %s)", ca[0], cb[0]);
    return bg_error(BG_ENOTSUP, "pci topology: no peer-to-peer between %s and %s: different root complexes (%s, %s)",
                    a, b, ca[0], cb[0]);
  }
  if (na == nb && strcmp(ca[na - 1], cb[nb - 1]) == 0) {
    snprintf(why, n, "same device (root complex %s)", ca[0]);
    return 0;
  }
  /* Bridges above both (the device itself, the last component, excluded): the deepest is where TLPs turn. */
  size_t k = 1;
  while (k < na - 1 && k < nb - 1 && strcmp(ca[k], cb[k]) == 0) k++;
  if (k > 1) snprintf(why, n, "same root complex %s, same switch (below %s)", ca[0], ca[k - 1]);
  else snprintf(why, n, "same root complex %s, no common switch", ca[0]);
  return 0;
}
