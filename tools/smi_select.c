/* tools/smi_select.c: device selectors (--dev or a positional device): parse them, resolve them
 * to the PCI GPUs or lock names a command acts on, and report what did not match. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "baregpu/error.h"
#include "tools/smi.h"
#include "tools/tool_err.h"

/* "DDDD:BB:DD.F" or "BB:DD.F" (hex digits, any case) into the kernel's form "0000:03:00.0". */
static bool parse_bdf(const char *s, char *out, size_t n) {
  static const char form[] = "hhhh:hh:hh.h";
  char buf[sizeof(form)];
  size_t len = strlen(s);
  if (len == sizeof(form) - 1) memcpy(buf, s, len + 1);
  else if (len == sizeof(form) - 6) snprintf(buf, sizeof(buf), "0000:%s", s);
  else return false;
  for (size_t i = 0; form[i]; i++) {
    if (form[i] == 'h' ? !isxdigit((unsigned char)buf[i]) : buf[i] != form[i]) return false;
    buf[i] = (char)tolower((unsigned char)buf[i]);
  }
  /* Device 0..0x1f, function 0..7. */
  if (strtoul(buf + 8, NULL, 16) > 0x1f || buf[11] > '7') return false;
  snprintf(out, n, "%s", buf);
  return true;
}

/* Did the DEV string name an explicit :INDEX after the kind? */
static bool has_index(const char *dev) {
  const char *plus = strrchr(dev, '+');
  return strchr(plus ? plus + 1 : dev, ':') != NULL;
}

int smi_sel_parse(const char *s, smi_opts *o, char *err, size_t n) {
  o->dev = s;
  o->sel = SMI_SEL_NONE;
  if (strchr(s, '.')) {
    if (!parse_bdf(s, o->name, sizeof(o->name))) {
      snprintf(err, n, "bad PCI address '%s': expected DDDD:BB:DD.F or BB:DD.F, e.g. 0000:03:00.0", s);
      return -1;
    }
    o->sel = SMI_SEL_BDF;
    return 0;
  }
  /* "usb:3-2", the lock name of an ASM24 bridge (a DEV string "USB:0+AMD" has a '+'). */
  if (strncasecmp(s, "usb:", 4) == 0 && !strchr(s, '+')) {
    if (!s[4] || strlen(s) >= sizeof(o->name) || strchr(s, '/')) {
      snprintf(err, n, "bad USB device name '%s': expected usb:BUS-ADDR as hcq_smi list shows it", s);
      return -1;
    }
    snprintf(o->name, sizeof(o->name), "usb:%s", s + 4);
    o->sel = SMI_SEL_NAME;
    return 0;
  }
  if (bg_target_parse(s, &o->target) < 0) {
    snprintf(err, n, "%s", bg_last_error());
    return -1;
  }
  o->sel = SMI_SEL_TARGET;
  o->dev_has_index = has_index(s);
  return 0;
}

void smi_print_gpus(FILE *f, const bg_pci_info *v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    const char *vname = bg_pci_vendor_name(v[i].vendor);
    fprintf(f, "  %s  %s %04x:%04x %s, driver %s\n", v[i].bdf, vname ? vname : "vendor", v[i].vendor, v[i].device,
            v[i].chip ? v[i].chip->chip : "unknown chip", v[i].driver[0] ? v[i].driver : "none");
  }
}

/* The same lines as the rest of an error message (stderr, and the --json error text). */
static void err_gpus(const bg_pci_info *v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    const char *vname = bg_pci_vendor_name(v[i].vendor);
    tool_err_more("  %s  %s %04x:%04x %s, driver %s\n", v[i].bdf, vname ? vname : "vendor", v[i].vendor,
                  v[i].device, v[i].chip ? v[i].chip->chip : "unknown chip", v[i].driver[0] ? v[i].driver : "none");
  }
}

void smi_report_error(const char *cmd, int code, const char *msg) {
  tool_err("%s%s%s", cmd ? cmd : "", cmd ? ": " : "", msg);
  if (code == -BG_EPERM) tool_err("%s needs root: run it as root, e.g. sudo hcq_smi %s ...", cmd, cmd);
}

/* "cmd: " before a message, nothing for a tool without commands (cmd NULL: bg-bringup). */
#define CMD_ARGS(cmd) (cmd) ? (cmd) : "", (cmd) ? ": " : ""

/* How the user gave the selector: "--dev X", "DEV=X" or "'X'". */
static void sel_source(const smi_opts *o, char *buf, size_t n) {
  if (o->dev_from_env) snprintf(buf, n, "DEV=%s", o->dev);
  else snprintf(buf, n, "'%s'", o->dev);
}

/* Why nothing matched, with what there is. */
static void report_no_match(const smi_opts *o, const char *cmd, const bg_pci_info *gpus, size_t ngpus,
                            size_t scanned) {
  char src[160];
  sel_source(o, src, sizeof(src));
  char what[96];
  if (o->sel == SMI_SEL_BDF) snprintf(what, sizeof(what), "no GPU at %s", o->name);
  else snprintf(what, sizeof(what), "no PCI GPU matches it");
  if (ngpus == 0) {
    tool_err("%s%sunknown device %s: %s; no GPU on PCI (%zu devices scanned)", CMD_ARGS(cmd), src, what, scanned);
    return;
  }
  tool_err("%s%sunknown device %s: %s; GPUs on PCI:", CMD_ARGS(cmd), src, what);
  err_gpus(gpus, ngpus);
}

int smi_select_gpus(const smi_opts *o, const char *cmd, bool one, bg_pci_info **out, size_t *n) {
  *out = NULL;
  *n = 0;
  if (o->sel == SMI_SEL_NAME) {
    tool_err("%s%s%s is a USB bridge; %s acts on PCI GPUs (name one by address or DEV, see hcq_smi list)",
             CMD_ARGS(cmd), o->name, cmd ? cmd : "this tool");
    return SMI_EXIT_USAGE;
  }
  if (o->sel == SMI_SEL_TARGET && strcmp(o->target.iface, "USB") == 0) {
    char src[160];
    sel_source(o, src, sizeof(src));
    tool_err("%s%s%s names ASM24 USB bridges; %s acts on PCI GPUs", CMD_ARGS(cmd), src, cmd ? cmd : "this tool");
    return SMI_EXIT_USAGE;
  }
  bg_pci_info *gpus = NULL;
  size_t ngpus = 0, scanned = 0;
  if (bg_pci_scan(0, &gpus, &ngpus, &scanned) < 0) {
    tool_err("%s%scannot scan PCI: %s", CMD_ARGS(cmd), bg_last_error());
    return SMI_EXIT_FAIL;
  }
  bg_pci_info *sel = malloc((ngpus ? ngpus : 1) * sizeof(*sel));
  if (!sel) {
    bg_pci_free(gpus);
    tool_err("%s%sout of memory", CMD_ARGS(cmd));
    return SMI_EXIT_FAIL;
  }
  if (ngpus) memcpy(sel, gpus, ngpus * sizeof(*sel));
  size_t nsel = ngpus;
  int rc = SMI_EXIT_OK;
  if (smi_pci_select(o, sel, &nsel) < 0) {
    tool_err("%s%s%s", CMD_ARGS(cmd), bg_last_error());
    rc = SMI_EXIT_FAIL;
  } else if (one && o->sel == SMI_SEL_NONE && !o->all) {
    if (ngpus) {
      tool_err("%s%sname a device (--dev DEV, or a PCI address) or give --all for every GPU; GPUs on PCI:", CMD_ARGS(cmd));
      err_gpus(gpus, ngpus);
    } else {
      tool_err("%s%sname a device (--dev DEV, or a PCI address) or give --all for every GPU; no GPU on PCI (%zu devices "
               "scanned)", CMD_ARGS(cmd), scanned);
    }
    rc = SMI_EXIT_USAGE;
  } else if (nsel == 0 && o->sel != SMI_SEL_NONE) {
    report_no_match(o, cmd, gpus, ngpus, scanned);
    rc = SMI_EXIT_USAGE;
  } else if (one && nsel > 1 && !o->all) {
    char src[160];
    sel_source(o, src, sizeof(src));
    tool_err("%s%s%s matches %zu GPUs; name one (a PCI address, or DEV with :INDEX such as %s:0) or give --all:",
             CMD_ARGS(cmd), src, nsel, o->target.kind);
    err_gpus(sel, nsel);
    rc = SMI_EXIT_USAGE;
  }
  bg_pci_free(gpus);
  if (rc != SMI_EXIT_OK) {
    free(sel);
    return rc;
  }
  *out = sel;
  *n = nsel;
  return SMI_EXIT_OK;
}

int smi_select_names(const smi_opts *o, const char *cmd, char (**names)[64], size_t *n) {
  *names = NULL;
  *n = 0;
  if (o->sel == SMI_SEL_NONE) return SMI_EXIT_OK;
  if (o->sel == SMI_SEL_NAME) {
    if (!(*names = calloc(1, sizeof(**names)))) return SMI_EXIT_FAIL;
    snprintf((*names)[0], sizeof((*names)[0]), "%s", o->name);
    *n = 1;
    return SMI_EXIT_OK;
  }
  bg_pci_info *v;
  size_t nv;
  int rc = smi_select_gpus(o, cmd, false, &v, &nv);
  if (rc != SMI_EXIT_OK) return rc;
  if (!(*names = calloc(nv ? nv : 1, sizeof(**names)))) {
    free(v);
    return SMI_EXIT_FAIL;
  }
  for (size_t i = 0; i < nv; i++) snprintf((*names)[i], sizeof((*names)[i]), "%s", v[i].bdf);
  *n = nv;
  free(v);
  return SMI_EXIT_OK;
}
