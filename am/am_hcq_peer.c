/* am/am_hcq_peer.c: peer access between AM devices (hcq/backend.h peer_*; hcq/peer.c uses them).
 *
 * A GPU reaches another GPU's VRAM as SYSTEM pages at bus address BAR0 start + VRAM offset, which needs the owner's
 * whole VRAM behind BAR0 (a large BAR), and host memory through its DMA pages' bus addresses (tinygrad
 * tinygrad/runtime/support/am/amdev.py AMMemoryManager.map_range with system=True; tinygrad
 * tinygrad/runtime/ops_amd.py PCIIface.map: paddrs of a peer's VRAM are its BAR's bus addresses). A GPU behind a USB
 * bridge reaches neither and cannot be reached (tinygrad USBIface: supports_transfer False). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "am/am_hcq.h"
#include "am/mm_pt.h"
#include "platform/pci_topology.h"

#define SZ_4K ((uint64_t)0x1000)

/* P2P distance of two PCI functions (platform/pci_topology.h, as Linux's pci_p2pdma_distance): 0 below one root
 * complex, else -BG_ENOTSUP (different host bridges) or the topology error, with the reason in why. */
static int p2p_distance(const char *a, const char *b, char *why, size_t n) {
  int r = bg_pci_p2p_distance(a, b, why, n);
  if (r == 0 && n) why[0] = '\0'; /* "same root complex ..." describes a success: no fallback reason */
  return r;
}

static uint64_t mib(uint64_t v) { return v >> 20; }

int bg_am_hcq_peer_export(bg_dev *owner, const bg_mem *m, bg_peer_pages *out) {
  am_hcq *h = owner->priv;
  const am_alloc *a = m->meta;
  memset(out, 0, sizeof(*out));
  snprintf(out->func, sizeof(out->func), "%s", h->d->bdf);
  if (h->usb) return bg_error(BG_ENOTSUP, "am: %s is behind a USB bridge: no peer access to its memory", h->d->bdf);
  if (!a) return bg_error(BG_EINVAL, "am: %s: exporting an allocation without backing", h->d->bdf);
  out->size = a->map_size;
  if (a->host) {
    out->pages = a->sm.bus;
    out->npages = a->sm.npages;
    return 0;
  }
  if (h->d->bar0_size < h->d->vram_size)
    return bg_error(BG_ENOTSUP, "am: %s: BAR0 (%" PRIu64 " MiB) is smaller than VRAM (%" PRIu64 " MiB): its VRAM "
                    "is not reachable by peers", h->d->bdf, mib(h->d->bar0_size), mib(h->d->vram_size));
  bg_pci_bar bar;
  int e = bg_pci_bar_info(h->d->pci, 0, &bar);
  if (e < 0) return bg_error_context(e, "am: %s: peer access: ", h->d->bdf);
  out->vram = true;
  out->bus = bar.base + a->pa;
  return 0;
}

int bg_am_hcq_peer_reach(const bg_dev *d, const bg_dev *owner, bool vram, char *why, size_t n) {
  const am_hcq *h = d->priv, *o = owner->priv;
  if (h->usb || o->usb) {
    snprintf(why, n, "%s is behind a USB bridge", h->usb ? d->name : owner->name);
    return -BG_ENOTSUP;
  }
  if (!vram) return 0; /* host memory: every PCI GPU reaches it */
  if (o->d->bar0_size < o->d->vram_size) {
    snprintf(why, n, "%s's BAR0 (%" PRIu64 " MiB) is smaller than its VRAM (%" PRIu64 " MiB)", owner->name,
             mib(o->d->bar0_size), mib(o->d->vram_size));
    return -BG_ENOTSUP;
  }
  return p2p_distance(h->d->bdf, o->d->bdf, why, n);
}

int bg_am_hcq_peer_map(bg_dev *d, const bg_peer_pages *p, uint64_t *va) {
  am_hcq *h = d->priv;
  if (h->usb) return bg_error(BG_ENOTSUP, "am: %s is behind a USB bridge: it cannot map peer memory", h->d->bdf);
  if (!p->size || (p->pages ? p->npages * SZ_4K < p->size : p->bus % SZ_4K != 0))
    return bg_error(BG_EINVAL, "am: %s: peer pages of %s: %" PRIu64 " bytes, %zu pages, bus 0x%" PRIx64 " (want whole "
                    "4 KiB pages)", h->d->bdf, p->func, p->size, p->npages, p->bus);
  /* SYSTEM|SNOOPED (tinygrad: system=True, snooped=True); host pages also uncached as their owner maps them */
  unsigned flags = BG_AM_PT_RWX | BG_AM_PT_SNOOPED | (p->vram ? 0 : BG_AM_PT_UNCACHED);
  uint64_t at = 0;
  pthread_mutex_lock(&h->lock);
  int e = bg_am_va_alloc(h->va, p->size, SZ_4K, &at);
  if (e >= 0)
    e = p->pages ? bg_am_pt_map_pages(h->blk.gmc->pt, at, p->pages, (size_t)(p->size / SZ_4K), BG_AM_ASPACE_SYS, flags)
                 : bg_am_pt_map_contig(h->blk.gmc->pt, at, p->bus, p->size, BG_AM_ASPACE_SYS, flags);
  if (e < 0 && at) bg_am_va_free(h->va, at);
  pthread_mutex_unlock(&h->lock);
  if (e < 0) return bg_error_context(e, "am: %s: mapping %" PRIu64 " bytes of %s: ", h->d->bdf, p->size, p->func);
  BG_LOG(4, "am: %s: peer mapping of %s (%s) at va 0x%" PRIx64 ", %" PRIu64 " bytes", h->d->bdf, p->func,
         p->vram ? "VRAM" : "host memory", at, p->size);
  *va = at;
  return 0;
}

/* As bg_am_hcq_free: unmap (the TLB flush is the page tables' callback), then the VA goes back. */
void bg_am_hcq_peer_unmap(bg_dev *d, uint64_t va, uint64_t size) {
  am_hcq *h = d->priv;
  pthread_mutex_lock(&h->lock);
  int e = bg_am_pt_unmap(h->blk.gmc->pt, va, size);
  if (e < 0) BG_LOG(1, "am: %s: unmapping peer memory at 0x%" PRIx64 ": %s", h->d->bdf, va, bg_last_error());
  bg_am_va_free(h->va, va);
  pthread_mutex_unlock(&h->lock);
}
