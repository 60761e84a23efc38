/* tools/smi_inventory.c: gather PCI, USB and openable devices with their lock owners, and apply
 * the device selector (--dev). */
#include <stdlib.h>
#include <string.h>

#include "hcq/target.h"
#include "tools/smi.h"

#define MAX_DEVS 64

static bool kind_is(const smi_opts *o, const char *k) { return strcmp(o->target.kind, k) == 0; }
static bool iface_is(const smi_opts *o, const char *i) { return strcmp(o->target.iface, i) == 0; }

/* A DEV selector narrows PCI to GPUs of its kind reached through PCI (NVK drives the same PCI
 * GPUs); an address keeps that function, whatever its class. MOCKPCI: the scan is of the emulated
 * tree by then (smi_mock_enter switched the sysfs root), whose GPUs are its devices. */
static bool pci_wanted(const smi_opts *o, const bg_pci_info *p) {
  if (o->sel == SMI_SEL_NONE) return true;
  if (o->sel == SMI_SEL_BDF) return strcmp(p->bdf, o->name) == 0;
  if (o->sel != SMI_SEL_TARGET || !p->is_gpu) return false;
  if (iface_is(o, "MOCKPCI")) return (kind_is(o, "AMD") || kind_is(o, "NV")) && smi_mock_is_device(p->bdf);
  if (!(o->target.iface[0] == '\0' || iface_is(o, "PCI") || iface_is(o, "NVK"))) return false;
  return (kind_is(o, "AMD") && p->vendor == BG_PCI_VENDOR_AMD) || (kind_is(o, "NV") && p->vendor == BG_PCI_VENDOR_NV);
}

/* Bridges carry AMD GPUs only (tinygrad's USB path is ops_amd.py USBIface; NV has none). */
static bool usb_wanted(const smi_opts *o) {
  if (o->sel == SMI_SEL_NONE || o->sel == SMI_SEL_NAME) return true;
  return o->sel == SMI_SEL_TARGET && kind_is(o, "AMD") && (o->target.iface[0] == '\0' || iface_is(o, "USB"));
}

static bool dev_wanted(const smi_opts *o, const char *name) {
  if (o->sel == SMI_SEL_NONE) return true;
  if (o->sel != SMI_SEL_TARGET) return false;
  bg_target t;
  if (bg_target_parse(name, &t) < 0) return false;
  if (strcmp(t.kind, o->target.kind) != 0) return false;
  return o->target.iface[0] == '\0' || strcmp(t.iface, o->target.iface) == 0;
}

/* Apply the --dev visibility filter and index to keep[0..n) (entries already matching kind and
 * interface), in place: keep[i] stays true only for the selected entries. A selector without
 * indices keeps them all. */
int smi_select_visible(const smi_opts *o, bool *keep, size_t n) {
  if (o->sel != SMI_SEL_TARGET || (!o->target.indices[0] && !o->dev_has_index) || n == 0) return 0;
  int *idx = malloc(n * sizeof(*idx)), *map = malloc(n * sizeof(*map));
  if (!idx || !map) {
    free(idx);
    free(map);
    return bg_error(BG_ENOMEM, "hcq_smi: out of memory filtering %zu devices", n);
  }
  int m = 0;
  for (size_t i = 0; i < n; i++)
    if (keep[i]) idx[m++] = (int)i;
  int nvis = bg_visible_filter(o->target.indices, m, map, m);
  memset(keep, 0, n * sizeof(*keep));
  for (int v = 0; v < nvis; v++)
    if (!o->dev_has_index || v == o->target.index) keep[idx[map[v]]] = true;
  free(idx);
  free(map);
  return 0;
}

int smi_pci_select(const smi_opts *o, bg_pci_info *v, size_t *n) {
  bool *keep = calloc(*n ? *n : 1, sizeof(*keep));
  if (!keep) return bg_error(BG_ENOMEM, "hcq_smi: out of memory filtering %zu PCI devices", *n);
  for (size_t i = 0; i < *n; i++) keep[i] = pci_wanted(o, &v[i]);
  int r = smi_select_visible(o, keep, *n);
  if (r == 0) {
    size_t k = 0;
    for (size_t i = 0; i < *n; i++)
      if (keep[i]) v[k++] = v[i];
    *n = k;
  }
  free(keep);
  return r;
}

static void collect_pci(const smi_opts *o, smi_inventory *inv) {
  const char *root = getenv("BG_SYSFS_ROOT");
  if (root && *root && smi_sel_is_mockpci(o))
    snprintf(inv->pci_source, sizeof(inv->pci_source), "MOCKPCI+%s's sysfs tree %s", kind_is(o, "NV") ? "NV" : "AMD",
             root);
  else if (root && *root) snprintf(inv->pci_source, sizeof(inv->pci_source), "sysfs tree %s", root);
  else snprintf(inv->pci_source, sizeof(inv->pci_source), "libpciaccess");
  bg_pci_info *all = NULL;
  size_t n = 0;
  bool every = (o->all && o->sel == SMI_SEL_NONE) || o->sel == SMI_SEL_BDF;
  inv->pci_err = bg_pci_scan(every ? BG_PCI_SCAN_ALL : 0, &all, &n, &inv->pci_scanned);
  if (inv->pci_err == 0) inv->pci_err = smi_pci_select(o, all, &n);
  if (inv->pci_err == 0 && n &&
      (!(inv->pci_owner = calloc(n, sizeof(*inv->pci_owner))) || !(inv->pci_mem = calloc(n, sizeof(*inv->pci_mem)))))
    inv->pci_err = bg_error(BG_ENOMEM, "hcq_smi: out of memory for %zu lock owners", n);
  if (inv->pci_err < 0) {
    snprintf(inv->pci_msg, sizeof(inv->pci_msg), "%s", bg_last_error());
    bg_pci_free(all);
    return;
  }
  inv->pci = all;
  inv->npci = n;
  for (size_t i = 0; i < n; i++) {
    inv->pci_gpus += all[i].is_gpu;
    smi_owner_get(all[i].bdf, &inv->pci_owner[i]);
    smi_mem_get(all[i].bdf, &inv->pci_owner[i], &inv->pci_mem[i]);
  }
}

static void collect_usb(const smi_opts *o, smi_inventory *inv) {
  if (!usb_wanted(o)) return;
  inv->usb_searched = true;
  bg_usb_info *v = NULL;
  size_t n = 0;
  inv->usb_err = bg_usb_scan(&v, &n);
  if (inv->usb_err < 0) {
    snprintf(inv->usb_msg, sizeof(inv->usb_msg), "%s", bg_last_error());
    return;
  }
  bool keep[MAX_DEVS] = {false};
  if (n > MAX_DEVS) n = MAX_DEVS; /* more bridges than ports on any host */
  for (size_t i = 0; i < n; i++) keep[i] = o->sel != SMI_SEL_NAME || strcmp(v[i].name, o->name) == 0;
  if (smi_select_visible(o, keep, n) < 0) {
    inv->usb_err = -BG_ENOMEM;
    snprintf(inv->usb_msg, sizeof(inv->usb_msg), "%s", bg_last_error());
    n = 0;
  }
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (keep[i]) v[k++] = v[i];
  inv->usb = v;
  inv->nusb = k;
  if (k && !(inv->usb_owner = calloc(k, sizeof(*inv->usb_owner)))) {
    inv->usb_err = -BG_ENOMEM;
    snprintf(inv->usb_msg, sizeof(inv->usb_msg), "out of memory");
    inv->nusb = 0;
    return;
  }
  for (size_t i = 0; i < k; i++) smi_owner_get(v[i].name, &inv->usb_owner[i]);
}

static void collect_devs(const smi_opts *o, smi_inventory *inv) {
  bool mocks = o->all || (o->sel == SMI_SEL_TARGET && strncmp(o->target.iface, "MOCK", 4) == 0);
  inv->devs = calloc(MAX_DEVS, sizeof(*inv->devs));
  if (!inv->devs) {
    inv->devs_err = -BG_ENOMEM;
    snprintf(inv->devs_msg, sizeof(inv->devs_msg), "out of memory");
    return;
  }
  int n = bg_dev_list(mocks, inv->devs, MAX_DEVS);
  if (n < 0) {
    inv->devs_err = n;
    snprintf(inv->devs_msg, sizeof(inv->devs_msg), "%s", bg_last_error());
    return;
  }
  if (n > MAX_DEVS) n = MAX_DEVS;
  bool keep[MAX_DEVS] = {false};
  for (int i = 0; i < n; i++) keep[i] = dev_wanted(o, inv->devs[i]);
  if (smi_select_visible(o, keep, (size_t)n) < 0) {
    inv->devs_err = -BG_ENOMEM;
    snprintf(inv->devs_msg, sizeof(inv->devs_msg), "%s", bg_last_error());
    n = 0;
  }
  size_t k = 0;
  for (int i = 0; i < n; i++)
    if (keep[i]) memmove(inv->devs[k++], inv->devs[i], sizeof(inv->devs[0]));
  inv->ndevs = k;
}

int smi_inventory_collect(const smi_opts *o, smi_inventory *inv) {
  memset(inv, 0, sizeof(*inv));
  collect_pci(o, inv);
  collect_usb(o, inv);
  collect_devs(o, inv);
  /* Only a failed PCI scan fails the command: no usbfs is normal in containers, and a build
   * without libpciaccess is a configuration, reported in the output. */
  return inv->pci_err == -BG_ENOTSUP ? 0 : inv->pci_err;
}

void smi_inventory_free(smi_inventory *inv) {
  bg_pci_free(inv->pci);
  free(inv->pci_owner);
  free(inv->pci_mem);
  bg_usb_free(inv->usb);
  free(inv->usb_owner);
  free(inv->devs);
  memset(inv, 0, sizeof(*inv));
}

void smi_inventory_summary(const smi_inventory *inv, const smi_opts *o, char *buf, size_t n) {
  if (inv->pci_gpus == 0 && inv->nusb == 0 && !smi_sel_is_mockusb(o)) {
    if (inv->pci_err < 0)
      snprintf(buf, n, "no GPU found: PCI could not be scanned%s", inv->usb_err < 0 ? ", nor USB" : ", none on USB");
    else if (o->sel == SMI_SEL_BDF && inv->npci)
      snprintf(buf, n, "%s is not a GPU (%zu devices scanned)", o->name, inv->pci_scanned);
    else if (o->sel == SMI_SEL_BDF)
      snprintf(buf, n, "no PCI function %s (%zu devices scanned)", o->name, inv->pci_scanned);
    else if (o->sel != SMI_SEL_NONE)
      snprintf(buf, n, "no GPU matching --dev %s found on PCI (%zu devices scanned) or USB", o->dev, inv->pci_scanned);
    else
      snprintf(buf, n, "no GPU found on PCI (%zu devices scanned) or USB", inv->pci_scanned);
    return;
  }
  if (smi_sel_is_mockusb(o)) {
    buf[0] = '\0'; /* the emulated USB section's own count follows (smi_inventory_summary_all) */
    return;
  }
  if (smi_sel_is_mockpci(o))
    snprintf(buf, n, "%zu emulated GPU%s (MOCKPCI, %zu devices in its sysfs tree)", inv->pci_gpus,
             inv->pci_gpus == 1 ? "" : "s", inv->pci_scanned);
  else
    snprintf(buf, n, "%zu GPU%s on PCI (%zu devices scanned), %zu ASM24 bridge%s on USB", inv->pci_gpus,
             inv->pci_gpus == 1 ? "" : "s", inv->pci_scanned, inv->nusb, inv->nusb == 1 ? "" : "s");
}

void smi_inventory_summary_all(const smi_inventory *inv, const smi_opts *o, char *buf, size_t n) {
  smi_inventory_summary(inv, o, buf, n);
  size_t len = strlen(buf);
  if (inv->emu && inv->emu->pci_err == 0)
    snprintf(buf + len, n - len, "; %zu emulated GPU%s (MOCKPCI+AMD)", inv->emu->pci_gpus,
             inv->emu->pci_gpus == 1 ? "" : "s");
  len = strlen(buf);
  if (inv->emu_usb && inv->emu_usb->pci_err == 0)
    snprintf(buf + len, n - len, "%s%zu emulated GPU%s behind emulated ASM24 bridges (MOCKUSB+AMD)", len ? "; " : "",
             inv->emu_usb->pci_gpus, inv->emu_usb->pci_gpus == 1 ? "" : "s");
  else if (inv->emu_usb && !len)
    snprintf(buf, n, "no emulated GPU behind an ASM24 bridge: %s", inv->emu_usb->pci_msg);
}
