/* tools/smi_list.c: `hcq_smi list`: PCI GPUs (with the SMU metrics of the AMD ones baregpu can open, smi_am.c),
 * ASM24 bridges and openable devices, as text or JSON. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bg_config.h"
#include "platform/pci_lock.h"
#include "tools/json.h"
#include "tools/smi.h"
#include "tools/tool_err.h"
#include "tools/smi_fmt.h"

/* ---------------- text ---------------- */

static void text_owner(const smi_owner *ow, FILE *f) {
  fprintf(f, "      owner      ");
  if (!ow->known) fprintf(f, "unknown (%s)\n", ow->err);
  else if (ow->pid == 0) fprintf(f, "none\n");
  else if (ow->pid < 0) fprintf(f, "held by a process that has not written its pid yet\n");
  else fprintf(f, "pid %d (%s)\n", (int)ow->pid, ow->comm[0] ? ow->comm : "?");
}

static void text_pci(const bg_pci_info *p, const smi_owner *ow, const smi_mem *mem, const smi_am_metrics *am, FILE *f) {
  const char *vname = bg_pci_vendor_name(p->vendor);
  fprintf(f, "  %s  %s %04x:%04x", p->bdf, vname ? vname : "vendor", p->vendor, p->device);
  if (p->chip) fprintf(f, "  %s (%s, %s)", p->chip->chip, p->chip->arch, p->chip->family);
  else if (p->is_gpu) fprintf(f, "  unknown chip");
  fputc('\n', f);
  fprintf(f, "      class      0x%06x %s, rev 0x%02x, subsystem %04x:%04x\n", p->class_code,
          smi_class_name(p->class_code), p->revision, p->subvendor, p->subdevice);
  fprintf(f, "      driver     %s\n", p->driver[0] ? p->driver : "none");
  if (p->link_speed[0] || p->link_width) {
    fprintf(f, "      link       %s", p->link_speed[0] ? p->link_speed : "unknown speed");
    if (p->link_width > 0) fprintf(f, " x%d", p->link_width);
    fputc('\n', f);
  } else
    fprintf(f, "      link       unknown (no PCIe link attributes in sysfs)\n");
  for (int i = 0; i < BG_PCI_NBARS; i++) {
    const bg_pci_bar *b = &p->bars[i];
    if (!b->size) continue;
    char sz[32];
    fprintf(f, "      BAR%d       %-9s %s%s%s @ 0x%" PRIx64 "\n", i, smi_fmt_size(b->size, sz, sizeof(sz)),
            b->is_io ? "I/O" : "mem", b->is_io ? "" : (b->is_64 ? " 64-bit" : " 32-bit"),
            b->prefetch ? " prefetchable" : "", b->base);
  }
  text_owner(ow, f);
  if (p->is_gpu && mem) smi_mem_text(mem, am, f);
  if (am) smi_am_text(am, f);
  if (p->note[0]) fprintf(f, "      note       %s\n", p->note);
}

static void text_usb(const bg_usb_info *u, const smi_owner *ow, FILE *f) {
  fprintf(f, "  %s  %04x:%04x  port %s  %s  %s\n", u->name, u->vid, u->pid, u->port_path, u->speed,
          u->id ? u->id->what : "");
  if (u->opened)
    fprintf(f, "      product    \"%s\"%s\n", u->product,
            u->product_ok ? "" : " (not custom firmware: the driver wants \"custom...\" or \"AS2462...\")");
  else
    fprintf(f, "      product    unknown (%s)\n", u->note);
  text_owner(ow, f);
}

void smi_list_text(const smi_inventory *inv, const smi_opts *o, FILE *f) {
  if (smi_sel_is_mockusb(o)) {
    /* only the emulated USB section below */
  } else if (inv->pci_err < 0) {
    fprintf(f, "PCI: unavailable: %s\n", inv->pci_msg);
  } else {
    fprintf(f, "%s (%s%s): %zu functions scanned, %zu GPU%s", smi_sel_is_mockpci(o) ? "Emulated PCI" : "PCI",
            inv->pci_source,
            !smi_sel_is_mockpci(o) ? "" : strcmp(o->target.kind, "NV") == 0 ? ", cold (bg-bringup boots it)" : ", booted in this process", inv->pci_scanned,
            inv->pci_gpus, inv->pci_gpus == 1 ? "" : "s");
    if (o->all && o->sel == SMI_SEL_NONE) fprintf(f, ", listing all %zu functions", inv->npci);
    fputs(inv->npci ? ":\n" : "\n", f);
    for (size_t i = 0; i < inv->npci; i++) text_pci(&inv->pci[i], &inv->pci_owner[i], &inv->pci_mem[i], inv->am ? &inv->am[i] : NULL, f);
  }
  if (smi_sel_is_mockusb(o))
    ; /* the emulated bridges are listed with their GPUs below */
  else if (!inv->usb_searched && o->sel == SMI_SEL_BDF)
    fprintf(f, "USB: not searched (--dev %s is a PCI address)\n", o->dev);
  else if (!inv->usb_searched)
    fprintf(f, "USB: not searched (--dev %s; ASM24 bridges carry AMD GPUs, interface USB)\n", o->dev);
  else if (inv->usb_err < 0)
    fprintf(f, "USB: unavailable: %s\n", inv->usb_msg);
  else
    fprintf(f, "USB: %zu ASM24 bridge%s%s\n", inv->nusb, inv->nusb == 1 ? "" : "s", inv->nusb ? ":" : "");
  for (size_t i = 0; i < inv->nusb; i++) text_usb(&inv->usb[i], &inv->usb_owner[i], f);
  if (inv->devs_err < 0) {
    fprintf(f, "Devices: unavailable: %s\n", inv->devs_msg);
  } else {
    fprintf(f, "Devices (openable with --dev/DEV):");
    for (size_t i = 0; i < inv->ndevs; i++) fprintf(f, " %s", inv->devs[i]);
    fputs(inv->ndevs ? "\n" : " none\n", f);
  }
  if (inv->nv) smi_nv_text(inv->nv, f);
  if (inv->emu && inv->emu->pci_err < 0) {
    fprintf(f, "Emulated (MOCKPCI+AMD): unavailable: %s\n", inv->emu->pci_msg);
  } else if (inv->emu) {
    const smi_inventory *e = inv->emu;
    fprintf(f, "Emulated PCI (%s, booted in this process): %zu GPU%s%s\n", e->pci_source, e->pci_gpus,
            e->pci_gpus == 1 ? "" : "s", e->npci ? ":" : "");
    for (size_t i = 0; i < e->npci; i++) text_pci(&e->pci[i], &e->pci_owner[i], &e->pci_mem[i], e->am ? &e->am[i] : NULL, f);
  }
  if (inv->emu_usb && inv->emu_usb->pci_err < 0) {
    fprintf(f, "Emulated USB (MOCKUSB+AMD): unavailable: %s\n", inv->emu_usb->pci_msg);
  } else if (inv->emu_usb) {
    const smi_inventory *e = inv->emu_usb;
    fprintf(f, "Emulated USB (%s, booted in this process): %zu GPU%s%s\n", e->pci_source, e->pci_gpus,
            e->pci_gpus == 1 ? "" : "s", e->npci ? ":" : "");
    for (size_t i = 0; i < e->npci; i++)
      text_pci(&e->pci[i], &e->pci_owner[i], &e->pci_mem[i], e->am ? &e->am[i] : NULL, f);
  }
  char sum[320];
  smi_inventory_summary_all(inv, o, sum, sizeof(sum));
  fprintf(f, "%s\n", sum);
}

/* ---------------- JSON ---------------- */

/* "in_use", "owner_pid" (null when free or not yet written), "owner_process", "owner_error". */
static void json_owner(jw *w, const smi_owner *ow) {
  jw_kbool(w, "in_use", ow->known && ow->pid != 0);
  jw_key(w, "owner_pid");
  if (ow->known && ow->pid > 0) jw_int(w, ow->pid);
  else jw_null(w);
  jw_kstr(w, "owner_process", ow->known && ow->pid > 0 && ow->comm[0] ? ow->comm : NULL);
  jw_kstr(w, "owner_error", ow->known ? NULL : ow->err);
}

static void json_pci(jw *w, const bg_pci_info *p, const smi_owner *ow, const smi_mem *mem, const smi_am_metrics *am) {
  jw_obj_begin(w);
  jw_kstr(w, "bdf", p->bdf);
  jw_khex(w, "vendor", p->vendor, 4);
  jw_kstr(w, "vendor_name", bg_pci_vendor_name(p->vendor));
  jw_khex(w, "device", p->device, 4);
  jw_khex(w, "subsystem_vendor", p->subvendor, 4);
  jw_khex(w, "subsystem_device", p->subdevice, 4);
  jw_khex(w, "class", p->class_code, 6);
  jw_kstr(w, "class_name", smi_class_name(p->class_code));
  jw_khex(w, "revision", p->revision, 2);
  jw_kbool(w, "gpu", p->is_gpu);
  jw_key(w, "chip");
  if (p->chip) {
    jw_obj_begin(w);
    jw_kstr(w, "name", p->chip->chip);
    jw_kstr(w, "arch", p->chip->arch);
    jw_kstr(w, "family", p->chip->family);
    jw_obj_end(w);
  } else {
    jw_null(w);
  }
  jw_kstr(w, "driver", p->driver[0] ? p->driver : NULL);
  jw_key(w, "link");
  if (p->link_speed[0] || p->link_width) {
    jw_obj_begin(w);
    jw_kstr(w, "speed", p->link_speed[0] ? p->link_speed : NULL);
    jw_kint(w, "width", p->link_width);
    jw_obj_end(w);
  } else {
    jw_null(w);
  }
  jw_key(w, "bars");
  if (!p->bars_known) {
    jw_null(w);
  } else {
    jw_arr_begin(w);
    for (int i = 0; i < BG_PCI_NBARS; i++) {
      const bg_pci_bar *b = &p->bars[i];
      if (!b->size) continue;
      char sz[32];
      jw_obj_begin(w);
      jw_kint(w, "index", i);
      jw_khex(w, "base", b->base, 1);
      jw_kuint(w, "size", b->size);
      jw_kstr(w, "size_human", smi_fmt_size(b->size, sz, sizeof(sz)));
      jw_kstr(w, "type", b->is_io ? "io" : "mem");
      jw_kbool(w, "is_64", b->is_64);
      jw_kbool(w, "prefetchable", b->prefetch);
      jw_obj_end(w);
    }
    jw_arr_end(w);
  }
  json_owner(w, ow);
  if (p->is_gpu && mem) smi_mem_json(w, mem, am);
  else {
    jw_key(w, "vram");
    jw_null(w);
  }
  if (am) smi_am_json(w, am);
  jw_kstr(w, "note", p->note[0] ? p->note : NULL);
  jw_obj_end(w);
}

/* One emulated interface's section of list --json: null when not gathered. */
static void json_emulated(jw *w, const char *key, const char *iface, const smi_inventory *e) {
  jw_key(w, key);
  if (!e) {
    jw_null(w);
    return;
  }
  jw_obj_begin(w);
  jw_kstr(w, "interface", iface);
  jw_kstr(w, "source", e->pci_source);
  jw_kstr(w, "error", e->pci_err < 0 ? e->pci_msg : NULL);
  jw_kuint(w, "gpus", e->pci_gpus);
  jw_key(w, "devices");
  jw_arr_begin(w);
  for (size_t i = 0; i < e->npci; i++) json_pci(w, &e->pci[i], &e->pci_owner[i], &e->pci_mem[i], e->am ? &e->am[i] : NULL);
  jw_arr_end(w);
  jw_obj_end(w);
}


static void json_usb(jw *w, const bg_usb_info *u, const smi_owner *ow) {
  jw_obj_begin(w);
  jw_kstr(w, "name", u->name);
  jw_kint(w, "bus", u->bus);
  jw_kint(w, "address", u->address);
  jw_kstr(w, "port_path", u->port_path);
  jw_khex(w, "vendor", u->vid, 4);
  jw_khex(w, "product_id", u->pid, 4);
  jw_kstr(w, "what", u->id ? u->id->what : NULL);
  jw_kbool(w, "custom_firmware", u->id && u->id->custom_fw);
  jw_kstr(w, "speed", u->speed);
  jw_kint(w, "speed_mbps", u->speed_mbps);
  jw_kstr(w, "product", u->opened ? u->product : NULL);
  jw_kbool(w, "product_ok", u->product_ok);
  json_owner(w, ow);
  jw_kstr(w, "note", u->note[0] ? u->note : NULL);
  jw_obj_end(w);
}

int smi_list_json(const smi_inventory *inv, const smi_opts *o, FILE *f) {
  jw w;
  jw_init(&w, f);
  jw_obj_begin(&w);
  jw_kstr(&w, "tool", "hcq_smi");
  jw_kstr(&w, "version", BG_VERSION);
  jw_kstr(&w, "command", "list");
  jw_kstr(&w, "lock_dir", bg_pci_lock_dir());
  jw_key(&w, "filter");
  jw_obj_begin(&w);
  jw_kstr(&w, "dev", o->dev);
  jw_kbool(&w, "all", o->all);
  jw_obj_end(&w);

  jw_key(&w, "pci");
  jw_obj_begin(&w);
  jw_kstr(&w, "source", inv->pci_source);
  jw_kstr(&w, "error", inv->pci_err < 0 ? inv->pci_msg : NULL);
  jw_kuint(&w, "scanned", inv->pci_scanned);
  jw_kuint(&w, "gpus", inv->pci_gpus);
  jw_key(&w, "devices");
  jw_arr_begin(&w);
  for (size_t i = 0; i < inv->npci; i++) json_pci(&w, &inv->pci[i], &inv->pci_owner[i], &inv->pci_mem[i], inv->am ? &inv->am[i] : NULL);
  jw_arr_end(&w);
  jw_obj_end(&w);

  jw_key(&w, "usb");
  jw_obj_begin(&w);
  jw_kbool(&w, "searched", inv->usb_searched);
  jw_kstr(&w, "error", inv->usb_err < 0 ? inv->usb_msg : NULL);
  jw_key(&w, "bridges");
  jw_arr_begin(&w);
  for (size_t i = 0; i < inv->nusb; i++) json_usb(&w, &inv->usb[i], &inv->usb_owner[i]);
  jw_arr_end(&w);
  jw_obj_end(&w);

  jw_key(&w, "openable");
  jw_obj_begin(&w);
  jw_kstr(&w, "error", inv->devs_err < 0 ? inv->devs_msg : NULL);
  jw_key(&w, "names");
  jw_arr_begin(&w);
  for (size_t i = 0; i < inv->ndevs; i++) jw_str(&w, inv->devs[i]);
  jw_arr_end(&w);
  jw_obj_end(&w);

  /* list --all: the emulated MOCKPCI+AMD devices, and (also --dev MOCKUSB+AMD) the GPUs behind the emulated ASM24
   * bridges (each null when not gathered) */
  if (inv->nv) smi_nv_json(&w, inv->nv);
  json_emulated(&w, "emulated", "MOCKPCI+AMD", inv->emu);
  json_emulated(&w, "emulated_usb", "MOCKUSB+AMD", inv->emu_usb);

  char sum[320];
  smi_inventory_summary_all(inv, o, sum, sizeof(sum));
  jw_kuint(&w, "gpu_count", inv->pci_gpus);
  jw_kuint(&w, "bridge_count", inv->nusb);
  jw_kstr(&w, "summary", sum);
  jw_obj_end(&w);
  return jw_finish(&w);
}

int smi_cmd_list(const smi_opts *o) {
  smi_inventory inv;
  int r = smi_inventory_collect(o, &inv);
  smi_am_collect(&inv);
  smi_nv_inventory nv;
  smi_nv_collect(o, &nv); /* its errors are in its section */
  inv.nv = &nv;
  /* --all shows the emulated devices too, when this build has them (tests/mockgpu's plugin) */
  if (BG_HAVE_MOCK && o->all && o->sel == SMI_SEL_NONE) inv.emu = smi_mock_inventory();
  if (BG_HAVE_MOCK && ((o->all && o->sel == SMI_SEL_NONE) || smi_sel_is_mockusb(o))) inv.emu_usb = smi_mockusb_inventory(o);
  int jr = 0;
  if (o->json) jr = smi_list_json(&inv, o, stdout);
  else smi_list_text(&inv, o, stdout);
  if (r < 0) tool_err("list: %s", inv.pci_msg);
  free(inv.am);
  smi_nv_free(&nv);
  smi_mock_inventory_free(inv.emu);
  smi_mock_inventory_free(inv.emu_usb);
  smi_inventory_free(&inv);
  if (jr < 0) tool_err("list: internal error: unbalanced JSON output");
  return (r < 0 || jr < 0) ? SMI_EXIT_FAIL : SMI_EXIT_OK;
}
