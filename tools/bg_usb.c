/* tools/bg_usb.c: bg-usb, the ASM24 USB bridge tool (see tools/README.md).
 *
 *   bg-usb [--json] [--index N | --dev DEV] [--mock] scan | info | read ADDR [N] | write ADDR VAL | xread ADDR [N] |
 *          xwrite ADDR BYTE | cfg-read BUS:DEV.FN OFF [SIZE] | cfg-write BUS:DEV.FN OFF VAL [SIZE] | copy-test MIB
 *
 * Every command but scan opens the bridge like the driver does (link up, hierarchy and BARs set up:
 * usb/usb_pci.h). read/write are PCIe memory accesses at GPU bus addresses (info prints the BARs);
 * xread/xwrite the bridge's XDATA; cfg-* config TLPs (the GPU is 04:00.0, the bridge ports 00..03:00.0);
 * copy-test copies MiB to VRAM and back through BAR0, checks the bytes, and prints MB/s and transfers.
 *
 * --mock (or BG_MOCK_USB=1) opens the emulated bridge instead, when the program links one
 * (bg_usb_tool_mock_open: tests/unit/usb runs bg_usb_main in-process, built with -DBG_USB_NO_MAIN).
 * --dev DEV (else the DEV variable, when neither --index nor --mock is given) names the bridge as every baregpu
 * program does: USB[:INDICES]+AMD[:N], AMD[:N], MOCKUSB+AMD[:N] (the emulated one). Options may come anywhere;
 * errors are "bg-usb: ..." on stderr and, with --json, {"error": "..."} on stdout (tools/tool_err.h). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "baregpu/error.h"
#include "baregpu/hcq.h"
#include "hcq/target.h"
#include "tools/json.h"
#include "tools/tool_err.h"
#include "usb/asm24.h"
#include "usb/usb_pci.h"
#include "usb/usb_progress.h"
#include "usb/usb_scan.h"
#include "util/clock.h"

typedef int (*bg_usb_tool_open_fn)(int index, bg_usb_transport **out);
/* Set by a program that links the emulated bridge. */
bg_usb_tool_open_fn bg_usb_tool_mock_open;
int bg_usb_main(int argc, char **argv);

enum { U_OK = 0, U_FAIL = 1, U_USAGE = 2 };

typedef struct opts {
  bool json, mock;
  int index;
  int argc;
  char **argv;   /* the command and its arguments */
} opts;

static const char usage[] =
    "usage: bg-usb [--json] [--index N | --dev DEV] [--mock] COMMAND\n"
    "  --json                            one JSON document on stdout, also for errors ({\"error\": ...})\n"
    "  --index N, --dev DEV              the bridge: its index, or USB[:INDICES]+AMD[:N], AMD[:N],\n"
    "                                    MOCKUSB+AMD[:N] (default: $DEV when no --index/--mock, else 0)\n"
    "  --mock                            the emulated bridge (BG_MOCK_USB=1), when the program links it\n"
    "  scan                              list ASM24 bridges (custom and stock firmware)\n"
    "  info                              link state, PCIe hierarchy, the GPU and its BARs\n"
    "  read ADDR [N]                     PCIe memory read of N bytes (default 4) at a GPU bus address\n"
    "  write ADDR VAL                    PCIe memory write of a 32-bit value\n"
    "  xread ADDR [N] | xwrite ADDR BYTE bridge XDATA (16-bit addresses)\n"
    "  cfg-read BUS:DEV.FN OFF [SIZE]    config read (GPU 04:00.0, bridge ports 00..03:00.0)\n"
    "  cfg-write BUS:DEV.FN OFF VAL [SIZE]\n"
    "  copy-test MIB                     copy MIB to VRAM and back through BAR0, check, print MB/s\n";

static int fail(const char *what) {
  tool_err("%s: %s", what, bg_last_error());
  return U_FAIL;
}

/* A usage error: the message (also the --json error), then the usage on stderr. */
static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  tool_err("%s", msg);
  fputs(usage, stderr);
  return U_USAGE;
}

static bool parse_u64(const char *s, uint64_t *v) {
  char *end;
  if (!s || !*s) return false;
  *v = strtoull(s, &end, 0);
  return *end == 0;
}

static bool parse_bdf(const char *s, unsigned *bus, unsigned *dev, unsigned *fn) {
  char tail;
  return s && sscanf(s, "%x:%x.%x%c", bus, dev, fn, &tail) == 3 && *bus < 256 && *dev < 32 && *fn < 8;
}

static int open_dev(const opts *o, bg_pci_dev **d) {
  bg_usb_transport *t;
  int r;
  if (o->mock) {
    if (!bg_usb_tool_mock_open)
      return bg_error(BG_ENOTSUP, "--mock: this program does not link the emulated bridge (the test suite runs "
                      "bg-usb in-process with it; see tools/README.md)");
    r = bg_usb_tool_mock_open(o->index, &t);
  } else {
    r = bg_usb_open_libusb(o->index, &t);
  }
  return r < 0 ? r : bg_usb_pci_open(t, d);
}

static int cmd_scan(const opts *o) {
  bg_usb_info *list;
  size_t n;
  if (bg_usb_scan(&list, &n) < 0) return fail("scan");
  jw w;
  if (o->json) {
    jw_init(&w, stdout);
    jw_obj_begin(&w);
    jw_key(&w, "bridges");
    jw_arr_begin(&w);
  }
  for (size_t i = 0; i < n; i++) {
    const bg_usb_info *u = &list[i];
    if (o->json) {
      jw_obj_begin(&w);
      jw_kstr(&w, "name", u->name);
      jw_kstr(&w, "port", u->port_path);
      jw_khex(&w, "vid", u->vid, 4);
      jw_khex(&w, "pid", u->pid, 4);
      jw_kbool(&w, "custom_firmware", u->id->custom_fw);
      jw_kstr(&w, "speed", u->speed);
      jw_kstr(&w, "product", u->product);
      jw_kstr(&w, "note", u->note);
      jw_obj_end(&w);
    } else {
      printf("%-12s %-10s %04x:%04x %-40s %s %s%s\n", u->name, u->port_path, u->vid, u->pid, u->id->what, u->speed,
             u->product, u->note[0] ? u->note : "");
    }
  }
  if (o->json) {
    jw_arr_end(&w);
    jw_obj_end(&w);
    jw_finish(&w);
    printf("\n");
  } else if (!n) {
    printf("no ASM24 bridges found\n");
  }
  bg_usb_free(list);
  return U_OK;
}

static int cmd_info(const opts *o, bg_pci_dev *d) {
  bg_asm24 *b = bg_usb_pci_bridge(d);
  bg_usb_transport *t = bg_asm24_transport(b);
  uint8_t ltssm = 0;
  uint32_t id = 0;
  if (bg_asm24_xdata_read(b, BG_ASM24_XDATA_LTSSM, &ltssm, 1) < 0 || bg_pci_cfg_read(d, 0, 4, &id) < 0)
    return fail("info");
  jw w;
  if (o->json) {
    jw_init(&w, stdout);
    jw_obj_begin(&w);
    jw_kstr(&w, "name", t->name);
    jw_kstr(&w, "product", t->product);
    jw_khex(&w, "ltssm", ltssm, 2);
    jw_kbool(&w, "link_up", ltssm == BG_ASM24_LTSSM_L0);
    jw_khex(&w, "gpu_vendor", id & 0xffff, 4);
    jw_khex(&w, "gpu_device", id >> 16, 4);
    jw_key(&w, "bars");
    jw_arr_begin(&w);
  } else {
    printf("%s: %s\nlink: LTSSM 0x%02x (%s)\nGPU 04:00.0: %04x:%04x\n", t->name, t->product, ltssm,
           ltssm == BG_ASM24_LTSSM_L0 ? "L0, up" : "down", id & 0xffff, id >> 16);
  }
  for (int i = 0; i < 6; i++) {
    bg_pci_bar bar;
    if (bg_pci_bar_info(d, i, &bar) < 0 || !bar.size) continue;
    if (o->json) {
      jw_obj_begin(&w);
      jw_kint(&w, "bar", i);
      jw_khex(&w, "address", bar.base, 9);
      jw_kuint(&w, "size", bar.size);
      jw_kbool(&w, "prefetchable", bar.prefetch);
      jw_kbool(&w, "64bit", bar.is_64);
      jw_obj_end(&w);
    } else {
      printf("BAR%d: 0x%09" PRIx64 " %8" PRIu64 " KiB%s%s\n", i, bar.base, bar.size >> 10, bar.is_64 ? " 64-bit" : "",
             bar.prefetch ? " prefetchable" : "");
    }
  }
  if (o->json) {
    jw_arr_end(&w);
    jw_obj_end(&w);
    jw_finish(&w);
    printf("\n");
  }
  return U_OK;
}

static void dump(const opts *o, const char *what, uint64_t addr, const uint8_t *p, size_t n) {
  if (o->json) {
    jw w;
    jw_init(&w, stdout);
    jw_obj_begin(&w);
    jw_kstr(&w, "space", what);
    jw_khex(&w, "address", addr, 1);
    jw_key(&w, "bytes");
    jw_arr_begin(&w);
    for (size_t i = 0; i < n; i++) jw_uint(&w, p[i]);
    jw_arr_end(&w);
    jw_obj_end(&w);
    jw_finish(&w);
    printf("\n");
    return;
  }
  for (size_t i = 0; i < n; i += 16) {
    printf("%0*" PRIx64 ":", what[0] == 'x' ? 4 : 9, addr + i);
    for (size_t k = i; k < n && k < i + 16; k++) printf(" %02x", p[k]);
    printf("\n");
  }
}

static int cmd_read(const opts *o, bg_pci_dev *d, bool xdata) {
  uint64_t addr, n = 4;
  if (o->argc < 2 || !parse_u64(o->argv[1], &addr) || (o->argc > 2 && !parse_u64(o->argv[2], &n)) || !n ||
      n > (1u << 20) || (xdata && addr + n > 0x10000)) {
    return usage_error("%s ADDR [N]: an address and 1..1048576 bytes (XDATA: below 0x10000)", o->argv[0]);
  }
  uint8_t *buf = malloc(n);
  if (!buf) return U_FAIL;
  bg_asm24 *b = bg_usb_pci_bridge(d);
  int r = xdata ? bg_asm24_xdata_read(b, (uint16_t)addr, buf, n) : bg_asm24_mem_read(b, addr, buf, n);
  if (r == 0) dump(o, xdata ? "xdata" : "pcie", addr, buf, n);
  free(buf);
  return r < 0 ? fail(o->argv[0]) : U_OK;
}

static int cmd_write(const opts *o, bg_pci_dev *d, bool xdata) {
  uint64_t addr, v;
  if (o->argc != 3 || !parse_u64(o->argv[1], &addr) || !parse_u64(o->argv[2], &v) ||
      (xdata ? addr > 0xFFFF || v > 0xFF : v > 0xFFFFFFFFu)) {
    return usage_error("%s ADDR VAL: %s", o->argv[0],
                       xdata ? "XDATA address < 0x10000 and a byte" : "an address and a 32-bit value");
  }
  bg_asm24 *b = bg_usb_pci_bridge(d);
  uint32_t v32 = (uint32_t)v;
  uint8_t v8 = (uint8_t)v;
  int r = xdata ? bg_asm24_xdata_write(b, (uint16_t)addr, &v8, 1) : bg_asm24_mem_write(b, addr, &v32, 4, false);
  if (r < 0) return fail(o->argv[0]);
  if (o->json) {
    tool_err_doc_started(stdout);
    printf("{\"written\": true}\n");
  }
  return U_OK;
}

static int cmd_cfg(const opts *o, bg_pci_dev *d, bool write) {
  unsigned bus, dev, fn;
  uint64_t off, v = 0, size = 4;
  int need = write ? 4 : 3;
  if (o->argc < need || o->argc > need + 1 || !parse_bdf(o->argv[1], &bus, &dev, &fn) || !parse_u64(o->argv[2], &off) ||
      (write && !parse_u64(o->argv[3], &v)) || (o->argc == need + 1 && !parse_u64(o->argv[need], &size)) ||
      (size != 1 && size != 2 && size != 4) || off > 0xFFF || off % size) {
    return usage_error("%s BUS:DEV.FN OFF%s [SIZE]: size 1, 2 or 4, naturally aligned, offset < 0x1000", o->argv[0],
                       write ? " VAL" : "");
  }
  bg_asm24 *b = bg_usb_pci_bridge(d);
  uint32_t val = (uint32_t)v;
  int r = write ? bg_asm24_cfg_write(b, bus, dev, fn, (unsigned)off, (unsigned)size, val)
                : bg_asm24_cfg_read(b, bus, dev, fn, (unsigned)off, (unsigned)size, &val);
  if (r < 0) return fail(o->argv[0]);
  if (o->json) {
    tool_err_doc_started(stdout);
    printf("{\"bdf\": \"%02x:%02x.%x\", \"offset\": %" PRIu64 ", \"size\": %" PRIu64 ", \"value\": %u}\n", bus, dev, fn,
           off, size, val);
  } else if (!write)
    printf("%02x:%02x.%x+0x%03" PRIx64 ": 0x%0*x\n", bus, dev, fn, off, (int)size * 2, val);
  return U_OK;
}

static double now_s(void) { return (double)bg_now_ns() * 1e-9; }

static int cmd_copy_test(const opts *o, bg_pci_dev *d) {
  uint64_t mib;
  bg_pci_bar bar0;
  if (o->argc != 2 || !parse_u64(o->argv[1], &mib) || !mib || mib > 4096) {
    return usage_error("copy-test MIB: 1..4096");
  }
  if (bg_pci_bar_info(d, 0, &bar0) < 0) return fail("copy-test");
  size_t n = (size_t)mib << 20;
  if (n > bar0.size) n = (size_t)bar0.size;
  uint8_t *a = malloc(n), *c = malloc(n);
  if (!a || !c) {
    free(a);
    free(c);
    return U_FAIL;
  }
  for (size_t i = 0; i < n; i++) a[i] = (uint8_t)(i * 2654435761u >> 13);
  bg_asm24 *b = bg_usb_pci_bridge(d);
  bg_usb_transport *t = bg_asm24_transport(b);
  bg_usb_progress pin, pout;
  bg_usb_progress_init(&pin, "copy in ");
  bg_usb_progress_init(&pout, "copy out");
  bg_usb_stats s0 = t->stats;
  double t0 = now_s();
  int r = bg_asm24_copy_in(b, bar0.base, a, n, bg_usb_progress_tty, &pin);
  double t1 = now_s();
  bg_usb_stats s1 = t->stats;
  if (r == 0) r = bg_asm24_copy_out(b, bar0.base, c, n, bg_usb_progress_tty, &pout);
  double t2 = now_s();
  bool same = r == 0 && memcmp(a, c, n) == 0;
  free(a);
  free(c);
  if (r < 0) return fail("copy-test");
  uint64_t xin = 0, xout = 0;
  for (int k = 0; k < BG_USB_NKINDS; k++) {
    xin += s1.xfers[k] - s0.xfers[k];
    xout += t->stats.xfers[k] - s1.xfers[k];
  }
  double mb = (double)n / 1e6;
  if (o->json) {
    tool_err_doc_started(stdout);
    printf("{\"bytes\": %zu, \"in_mb_s\": %.1f, \"out_mb_s\": %.1f, \"in_transfers\": %" PRIu64
           ", \"out_transfers\": %" PRIu64 ", \"match\": %s}\n", n, mb / (t1 - t0), mb / (t2 - t1), xin, xout,
           same ? "true" : "false");
  } else {
    printf("copy in  %zu bytes: %8.1f MB/s, %" PRIu64 " transfers\ncopy out %zu bytes: %8.1f MB/s, %" PRIu64
           " transfers\n%s\n", n, mb / (t1 - t0), xin, n, mb / (t2 - t1), xout, same ? "bytes match" : "MISMATCH");
  }
  return same ? U_OK : U_FAIL;
}

/* The bridge a DEV string names (--dev, or the DEV variable): its index, and whether it is the emulated one. */
static int select_dev(opts *o, const char *dev, bool from_env) {
  char src[160];
  snprintf(src, sizeof(src), "%s%s", from_env ? "DEV=" : "--dev ", dev);
  bg_target t;
  if (bg_target_parse(dev, &t) < 0) /* the parser's message names DEV=... itself */
    return from_env ? usage_error("%s", bg_last_error()) : usage_error("%s: %s", src, bg_last_error());
  bool mock = strcmp(t.iface, "MOCKUSB") == 0;
  if ((t.kind[0] && strcmp(t.kind, "AMD") != 0) || !(mock || !t.iface[0] || strcmp(t.iface, "USB") == 0))
    return usage_error("%s: not an ASM24 USB bridge; bg-usb takes USB[:INDICES]+AMD[:N], AMD[:N] or MOCKUSB+AMD[:N]",
                       src);
  int map[64];
  int nvis = bg_visible_filter(t.indices, 64, map, 64);
  if (t.index < 0 || t.index >= nvis)
    return usage_error("%s: index %d: the filter '%s' leaves %d bridge%s (0..63)", src, t.index, t.indices, nvis,
                       nvis == 1 ? "" : "s");
  o->index = map[t.index];
  o->mock = o->mock || mock;
  return U_OK;
}

static int usb_main(int argc, char **argv) {
  opts o = {.mock = getenv("BG_MOCK_USB") && strcmp(getenv("BG_MOCK_USB"), "1") == 0};
  bool index_given = false;
  const char *dev = NULL;
  char **rest = calloc((size_t)argc + 1, sizeof(*rest));
  if (!rest) return fail("arguments");
  int nrest = 0;
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--json") == 0) tool_err_json(o.json = true); /* usage errors before it are JSON too */
  /* Options anywhere (bg-usb scan --json); the rest is the command and its arguments, none of which starts with '-'. */
  int rc = U_OK;
  for (int i = 1; i < argc && rc == U_OK; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--json") == 0) {
      continue;
    } else if (strcmp(a, "--mock") == 0) {
      o.mock = true;
    } else if (strcmp(a, "--index") == 0 || strcmp(a, "--dev") == 0) {
      if (i + 1 >= argc) {
        rc = usage_error("%s needs a value", a);
      } else if (a[2] == 'i') {
        uint64_t v = 0;
        if (!parse_u64(argv[++i], &v) || v > 63) rc = usage_error("--index takes 0..63, not '%s'", argv[i]);
        o.index = (int)v;
        index_given = true;
      } else {
        dev = argv[++i];
      }
    } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(usage, stdout);
      free(rest);
      return U_OK;
    } else if (a[0] == '-' && a[1] != '\0') {
      rc = usage_error("unknown option '%s'", a);
    } else {
      rest[nrest++] = argv[i];
    }
  }
  if (rc == U_OK && dev && index_given) rc = usage_error("give the bridge once: --index %d or --dev %s", o.index, dev);
  const char *env = getenv("DEV");
  if (rc == U_OK && dev) rc = select_dev(&o, dev, false);
  else if (rc == U_OK && !index_given && !o.mock && env && *env) rc = select_dev(&o, env, true);
  if (rc == U_OK && nrest == 0) rc = usage_error("no command given");
  if (rc != U_OK) {
    free(rest);
    return rc;
  }
  o.argc = nrest;
  o.argv = rest;
  const char *cmd = o.argv[0];
  static const char *const known[] = {"scan", "info", "read", "write", "xread", "xwrite", "cfg-read", "cfg-write",
                                      "copy-test"};
  bool ok = false;
  for (size_t k = 0; k < sizeof(known) / sizeof(known[0]); k++) ok = ok || strcmp(cmd, known[k]) == 0;
  int r;
  if (!ok) {
    r = usage_error("unknown command '%s'", cmd);
  } else if ((strcmp(cmd, "scan") == 0 || strcmp(cmd, "info") == 0) && o.argc > 1) {
    r = usage_error("%s takes no arguments, got '%s'", cmd, o.argv[1]);
  } else if (strcmp(cmd, "scan") == 0 && !o.mock) {
    r = cmd_scan(&o);
  } else {
    bg_pci_dev *d;
    if (open_dev(&o, &d) < 0) {
      r = fail("open");
    } else {
      if (strcmp(cmd, "scan") == 0 || strcmp(cmd, "info") == 0) r = cmd_info(&o, d);
      else if (strcmp(cmd, "read") == 0) r = cmd_read(&o, d, false);
      else if (strcmp(cmd, "xread") == 0) r = cmd_read(&o, d, true);
      else if (strcmp(cmd, "write") == 0) r = cmd_write(&o, d, false);
      else if (strcmp(cmd, "xwrite") == 0) r = cmd_write(&o, d, true);
      else if (strcmp(cmd, "cfg-read") == 0) r = cmd_cfg(&o, d, false);
      else if (strcmp(cmd, "cfg-write") == 0) r = cmd_cfg(&o, d, true);
      else r = cmd_copy_test(&o, d);
      bg_pci_close(d);
    }
  }
  free(rest);
  return r;
}

int bg_usb_main(int argc, char **argv) {
  tool_err_setup("bg-usb", false);
  return tool_exit(usb_main(argc, argv));
}

#ifndef BG_USB_NO_MAIN
int main(int argc, char **argv) { return bg_usb_main(argc, argv); }
#endif
