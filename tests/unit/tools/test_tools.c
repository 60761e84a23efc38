/* tests/unit/tools/test_tools.c: Check suite for tools/ and the scans they print (platform/pci_scan,
 * usb/usb_scan): JSON writer, chip table, size formatting, the real scan and an emulated sysfs tree. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "am/chips.h"
#include "bg_config.h"
#include "baregpu/error.h"
#include "fake_sysfs.h"
#include "hcq/chip.h"
#include "platform/pci_lock.h"
#include "hcq/gpu_scan.h"
#include "hcq/usage.h"
#include "json_check.h"
#include "tools/json.h"
#include "tools/smi.h"
#include "tools/smi_fmt.h"

/* ---------------- helpers ---------------- */

typedef struct membuf {
  char *data;
  size_t len;
  FILE *f;
} membuf;

static void mb_open(membuf *m) {
  m->data = NULL;
  m->len = 0;
  m->f = open_memstream(&m->data, &m->len);
  ck_assert_ptr_nonnull(m->f);
}

static char *mb_close(membuf *m) {
  fclose(m->f);
  return m->data;
}

static char *escaped(const char *s) {
  membuf m;
  mb_open(&m);
  jw_write_string(m.f, s);
  return mb_close(&m);
}

static void assert_json(const char *s) {
  char err[128];
  ck_assert_msg(json_check(s, strlen(s), err, sizeof(err)) == 0, "invalid JSON (%s): %s", err, s);
}

/* ---------------- JSON writer ---------------- */

START_TEST(json_escape_specials) {
  char *e = escaped("a\"b\\c/\n\t\r\b\f\x01\x1f\x7f");
  ck_assert_str_eq(e, "\"a\\\"b\\\\c/\\n\\t\\r\\b\\f\\u0001\\u001f\\u007f\"");
  assert_json(e);
  free(e);
}
END_TEST

START_TEST(json_escape_utf8) {
  /* Valid UTF-8 passes through; a stray byte, an overlong form, a surrogate and a truncated
   * sequence each become U+FFFD, so the document stays valid. */
  char *e = escaped("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  ck_assert_str_eq(e, "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
  assert_json(e);
  free(e);
  e = escaped("x\xffy\xc0\xafz\xed\xa0\x80w\xe2\x82");
  ck_assert_str_eq(e, "\"x\\ufffdy\\ufffd\\ufffdz\\ufffd\\ufffd\\ufffdw\\ufffd\\ufffd\"");
  assert_json(e);
  free(e);
}
END_TEST

START_TEST(json_document) {
  membuf m;
  mb_open(&m);
  jw w;
  jw_init(&w, m.f);
  jw_obj_begin(&w);
  jw_kstr(&w, "s", "q\"uote");
  jw_kstr(&w, "null", NULL);
  jw_kint(&w, "neg", -42);
  jw_kuint(&w, "big", UINT64_MAX);
  jw_kbool(&w, "t", true);
  jw_khex(&w, "hex", 0x744c, 4);
  jw_key(&w, "empty_arr");
  jw_arr_begin(&w);
  jw_arr_end(&w);
  jw_key(&w, "empty_obj");
  jw_obj_begin(&w);
  jw_obj_end(&w);
  jw_key(&w, "arr");
  jw_arr_begin(&w);
  jw_int(&w, 1);
  jw_str(&w, "two");
  jw_obj_begin(&w);
  jw_kbool(&w, "f", false);
  jw_obj_end(&w);
  jw_null(&w);
  jw_arr_end(&w);
  jw_obj_end(&w);
  ck_assert_int_eq(jw_finish(&w), 0);
  char *s = mb_close(&m);
  assert_json(s);
  ck_assert_ptr_nonnull(strstr(s, "\"big\": 18446744073709551615"));
  ck_assert_ptr_nonnull(strstr(s, "\"hex\": \"0x744c\""));
  ck_assert_ptr_nonnull(strstr(s, "\"empty_arr\": []"));
  ck_assert_ptr_nonnull(strstr(s, "\"null\": null"));
  free(s);
}
END_TEST

START_TEST(json_misuse_detected) {
  membuf m;
  mb_open(&m);
  jw w;
  jw_init(&w, m.f);
  jw_obj_begin(&w);
  jw_int(&w, 1); /* value without a key */
  jw_obj_end(&w);
  ck_assert_int_eq(jw_finish(&w), -1);
  jw_init(&w, m.f);
  jw_arr_begin(&w); /* never closed */
  ck_assert_int_eq(jw_finish(&w), -1);
  jw_init(&w, m.f);
  jw_arr_begin(&w);
  jw_obj_end(&w); /* wrong closer */
  ck_assert_int_eq(jw_finish(&w), -1);
  free(mb_close(&m));
}
END_TEST

START_TEST(json_checker_rejects) {
  static const char *const bad[] = {
    "", "{", "{\"a\":1,}", "[1 2]", "{\"a\" 1}", "01", "1.", "-", "\"\\x\"", "\"a\nb\"", "tru", "[1]x",
    "\"\\u12g4\"", "\"\xff\"", "{1:2}",
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    ck_assert_msg(json_check(bad[i], strlen(bad[i]), NULL, 0) != 0, "accepted: %s", bad[i]);
  static const char *const good[] = {"0", "-1.5e+3", "\"\\u00e9\\/\"", " [ ] ", "{\"a\":[true,false,null]}"};
  for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
    ck_assert_msg(json_check(good[i], strlen(good[i]), NULL, 0) == 0, "rejected: %s", good[i]);
}
END_TEST

/* ---------------- tables and formatting ---------------- */

/* One table: every AMD id the PCI scan and the tools name is am/chips.c's entry, reached through the backends'
 * bg_iface.chip_lookup (bg_chip_lookup), and pci_scan knows no AMD id the AM table lacks; chip names are
 * Linux amdgpu's lower-case spelling. */
START_TEST(chip_one_table) {
  ck_assert_uint_gt(bg_am_chip_count(), 0);
  for (size_t i = 0; i < bg_am_chip_count(); i++) {
    const bg_chip_info *a = bg_am_chip_at(i);
    ck_assert_uint_eq(a->vendor, 0x1002);
    ck_assert_ptr_eq(bg_chip_lookup(a->vendor, a->device), a);
    ck_assert_ptr_eq(bg_pci_chip_lookup(a->vendor, a->device), a);
    ck_assert_ptr_nonnull(a->product);
    for (const char *p = a->chip; *p; p++) ck_assert_msg(!(*p >= 'A' && *p <= 'Z'), "chip name %s not lower case", a->chip);
  }
  for (unsigned d = 0; d <= 0xffff; d++)
    ck_assert_msg(bg_pci_chip_lookup(0x1002, (uint16_t)d) == bg_am_chip_lookup((uint16_t)d),
                  "AMD id 0x%04x: pci_scan and am/chips.c disagree", d);
  /* 0x75b0 was named only by the tools' old table: with one table it is unknown everywhere (not in AM's gate). */
  ck_assert_ptr_null(bg_chip_lookup(0x1002, 0x75b0));
  ck_assert_ptr_null(bg_pci_chip_lookup(0x1002, 0x75b0));
  const bg_chip_info *c = bg_chip_lookup(0x1002, 0x744c);
  ck_assert_ptr_eq(c, bg_am_chip_lookup(0x744c));
  ck_assert_str_eq(c->chip, "navi31");
  ck_assert_str_eq(c->product, "Radeon RX 7900 XT/XTX/GRE");
  ck_assert_ptr_null(bg_chip_lookup(0x10de, 0x2684)); /* NVIDIA: no backend yet; pci_scan's families */
}
END_TEST

START_TEST(chip_lookup) {
  const bg_pci_chip *c = bg_pci_chip_lookup(0x1002, 0x744c);
  ck_assert_ptr_nonnull(c);
  ck_assert_str_eq(c->chip, "navi31");
  ck_assert_str_eq(c->arch, "gfx1100");
  c = bg_pci_chip_lookup(0x1002, 0x74a1);
  ck_assert_str_eq(c->arch, "gfx942");
  c = bg_pci_chip_lookup(0x1002, 0x7551);
  ck_assert_str_eq(c->arch, "gfx1201");
  ck_assert_ptr_null(bg_pci_chip_lookup(0x1002, 0x744d)); /* AMD ids match exactly */
  ck_assert_ptr_null(bg_pci_chip_lookup(0x10de, 0x744c)); /* vendor must match */
  c = bg_pci_chip_lookup(0x10de, 0x2684);                 /* NVIDIA by device & 0xff00 */
  ck_assert_str_eq(c->family, "Ada");
  ck_assert_str_eq(c->arch, "sm_89");
  c = bg_pci_chip_lookup(0x10de, 0x2335);
  ck_assert_str_eq(c->chip, "GH100");
  c = bg_pci_chip_lookup(0x10de, 0x2b85);
  ck_assert_str_eq(c->arch, "sm_120");
  ck_assert_ptr_null(bg_pci_chip_lookup(0x10de, 0x1eb8)); /* Turing: not in the table */
}
END_TEST

START_TEST(gpu_filter) {
  ck_assert(bg_pci_is_gpu(0x1002, 0x1234, 0x030000));
  ck_assert(bg_pci_is_gpu(0x10de, 0x1eb8, 0x030200));
  ck_assert(bg_pci_is_gpu(0x1002, 0x74a1, 0x120000));
  ck_assert(bg_pci_is_gpu(0x1002, 0x74a1, 0x038000));
  ck_assert(bg_pci_is_gpu(0x1002, 0x744c, 0x000000)); /* known id, any class (AM probes by id) */
  ck_assert(!bg_pci_is_gpu(0x1002, 0xab30, 0x040300)); /* HDMI audio function */
  ck_assert(!bg_pci_is_gpu(0x8086, 0x56a0, 0x030000)); /* not AMD/NVIDIA */
  ck_assert(!bg_pci_is_gpu(0x10de, 0x22bc, 0x040300));
}
END_TEST

START_TEST(size_format) {
  char b[32];
  ck_assert_str_eq(smi_fmt_size(0, b, sizeof(b)), "0 B");
  ck_assert_str_eq(smi_fmt_size(256, b, sizeof(b)), "256 B");
  ck_assert_str_eq(smi_fmt_size(1023, b, sizeof(b)), "1023 B");
  ck_assert_str_eq(smi_fmt_size(1024, b, sizeof(b)), "1 KiB");
  ck_assert_str_eq(smi_fmt_size(1536, b, sizeof(b)), "1.5 KiB");
  ck_assert_str_eq(smi_fmt_size(256ull << 20, b, sizeof(b)), "256 MiB");
  ck_assert_str_eq(smi_fmt_size(32ull << 30, b, sizeof(b)), "32 GiB");
  ck_assert_str_eq(smi_fmt_size((1ull << 30) + (1ull << 29) + 1, b, sizeof(b)), "1.5 GiB");
  ck_assert_str_eq(smi_fmt_size((2ull << 20) - 1, b, sizeof(b)), "2 MiB"); /* rounds up cleanly */
  ck_assert_str_eq(smi_fmt_size(1ull << 40, b, sizeof(b)), "1 TiB");
  ck_assert_str_eq(smi_fmt_size(UINT64_MAX, b, sizeof(b)), "16 EiB");
  ck_assert_str_eq(smi_fmt_size(100 << 20, b, 4), "100"); /* truncates, never overflows */
}
END_TEST

START_TEST(class_names) {
  ck_assert_str_eq(smi_class_name(0x030000), "VGA controller");
  ck_assert_str_eq(smi_class_name(0x030200), "3D controller");
  ck_assert_str_eq(smi_class_name(0x120000), "processing accelerator");
  ck_assert_str_eq(smi_class_name(0x020000), "network controller");
  ck_assert_str_eq(smi_class_name(0xff0000), "unassigned class");
}
END_TEST

START_TEST(usb_bridge_table) {
  const bg_usb_bridge_id *id = bg_usb_bridge_lookup(0xadd1, 0x0001);
  ck_assert_ptr_nonnull(id);
  ck_assert(id->custom_fw);
  ck_assert(bg_usb_bridge_lookup(0x3801, 0x0001)->custom_fw);
  ck_assert(!bg_usb_bridge_lookup(0x174c, 0x2464)->custom_fw);
  ck_assert(!bg_usb_bridge_lookup(0x174c, 0x2463)->custom_fw);
  ck_assert_ptr_null(bg_usb_bridge_lookup(0x174c, 0x55aa)); /* an ordinary ASMedia enclosure */
  const bg_usb_bridge_id *all;
  ck_assert_uint_eq(bg_usb_bridge_ids(&all), 4);
}
END_TEST

/* ---------------- scans ---------------- */

#if BG_HAVE_PCIACCESS
static size_t count_sys_pci(void) {
  DIR *d = opendir("/sys/bus/pci/devices");
  size_t n = 0;
  if (!d) return 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) n += de->d_name[0] != '.';
  closedir(d);
  return n;
}
#endif

START_TEST(pci_scan_real) {
  unsetenv("BG_SYSFS_ROOT");
  bg_pci_info *v;
  size_t n, scanned;
  int r = bg_pci_scan(BG_PCI_SCAN_ALL, &v, &n, &scanned);
#if BG_HAVE_PCIACCESS
  ck_assert_msg(r == 0, "scan failed: %s", bg_last_error());
  ck_assert_uint_eq(n, scanned); /* --all keeps every function */
  ck_assert_uint_eq(n, count_sys_pci());
  size_t non_gpu = 0;
  for (size_t i = 0; i < n; i++) {
    non_gpu += !v[i].is_gpu;
    ck_assert_uint_eq(strlen(v[i].bdf), 12);
    if (i) ck_assert_int_lt(strcmp(v[i - 1].bdf, v[i].bdf), 0);
  }
  if (count_sys_pci() > 0) ck_assert_uint_gt(non_gpu, 0); /* CI hosts have bridges at least */
  bg_pci_free(v);
  /* The default scan keeps GPUs only, and sees the same functions. */
  size_t ngpu, scanned2;
  ck_assert_int_eq(bg_pci_scan(0, &v, &ngpu, &scanned2), 0);
  ck_assert_uint_eq(scanned2, scanned);
  ck_assert_uint_eq(ngpu + non_gpu, scanned);
  for (size_t i = 0; i < ngpu; i++) ck_assert(v[i].is_gpu);
  bg_pci_free(v);
#else
  ck_assert_int_eq(r, -BG_ENOTSUP);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "built without libpciaccess"));
#endif
}
END_TEST

START_TEST(usb_scan_real) {
  bg_usb_info *v;
  size_t n;
  int r = bg_usb_scan(&v, &n);
  if (r < 0) {
    /* No usbfs (containers) or no libusb: a message that names the cause, and nothing listed. */
    ck_assert_ptr_null(v);
    ck_assert_uint_eq(n, 0);
    ck_assert(strstr(bg_last_error(), "libusb") != NULL);
  } else {
    for (size_t i = 0; i < n; i++) ck_assert_ptr_nonnull(v[i].id);
    bg_usb_free(v);
  }
}
END_TEST

static char fake_root[512];

static void fake_setup(void) {
  ck_assert_int_eq(fake_sysfs_create(fake_root, sizeof(fake_root)), 0);
  setenv("BG_SYSFS_ROOT", fake_root, 1);
  setenv("BG_LOCK_DIR", fake_root, 1); /* no lock files: every device is free */
}

static void fake_teardown(void) {
  unsetenv("BG_SYSFS_ROOT");
  unsetenv("BG_LOCK_DIR");
  fake_sysfs_remove(fake_root);
}

START_TEST(pci_scan_sysfs_tree) {
  bg_pci_info *v;
  size_t n, scanned;
  ck_assert_int_eq(bg_pci_scan(0, &v, &n, &scanned), 0);
  ck_assert_uint_eq(scanned, 3);
  ck_assert_uint_eq(n, 2);
  const bg_pci_info *a = &v[0], *nv = &v[1];
  ck_assert_str_eq(a->bdf, "0000:03:00.0");
  ck_assert_uint_eq(a->bus, 3);
  ck_assert_uint_eq(a->vendor, 0x1002);
  ck_assert_uint_eq(a->subvendor, 0x1da2);
  ck_assert_uint_eq(a->subdevice, 0x471e);
  ck_assert_uint_eq(a->revision, 0xc8);
  ck_assert_str_eq(a->chip->chip, "navi31");
  ck_assert_str_eq(a->driver, "amdgpu");
  ck_assert_str_eq(a->link_speed, "16.0 GT/s PCIe");
  ck_assert_int_eq(a->link_width, 16);
  ck_assert(a->bars_known);
  ck_assert_uint_eq(a->bars[0].size, 16ull << 30);
  ck_assert(a->bars[0].is_64 && a->bars[0].prefetch && !a->bars[0].is_io);
  ck_assert_uint_eq(a->bars[1].size, 0);
  ck_assert_uint_eq(a->bars[2].size, 256ull << 20);
  ck_assert(a->bars[4].is_io);
  ck_assert_uint_eq(a->bars[4].size, 256);
  ck_assert_uint_eq(a->bars[5].size, 1ull << 20);
  ck_assert(!a->bars[5].is_64 && !a->bars[5].prefetch);
  ck_assert_str_eq(nv->bdf, "0000:41:00.0");
  ck_assert_str_eq(nv->chip->family, "Hopper");
  ck_assert_str_eq(nv->driver, "");
  ck_assert_str_eq(nv->link_speed, "");
  ck_assert_int_eq(nv->link_width, 0);
  ck_assert_uint_eq(nv->bars[1].size, 1ull << 40);
  bg_pci_free(v);
  ck_assert_int_eq(bg_pci_scan(BG_PCI_SCAN_ALL, &v, &n, &scanned), 0);
  ck_assert_uint_eq(n, 3);
  ck_assert_str_eq(v[0].bdf, "0000:00:01.0"); /* sorted */
  ck_assert(!v[0].is_gpu);
  ck_assert_ptr_nonnull(strstr(v[0].note, "BARs unknown")); /* no resource file */
  bg_pci_free(v);
}
END_TEST

START_TEST(pci_scan_missing_root) {
  setenv("BG_SYSFS_ROOT", "/nonexistent/bg_sysfs", 1);
  bg_pci_info *v = (bg_pci_info *)1;
  size_t n = 7;
  ck_assert_int_eq(bg_pci_scan(0, &v, &n, NULL), -BG_ENODEV);
  ck_assert_ptr_null(v);
  ck_assert_uint_eq(n, 0);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "/nonexistent/bg_sysfs/bus/pci/devices"));
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "No such file"));
}
END_TEST

/* Run list through the inventory with a --dev string and return the JSON. */
static char *list_json(const char *dev, bool all, smi_inventory *inv_out) {
  smi_opts o = {0};
  o.all = all;
  if (dev) {
    char err[512];
    ck_assert_msg(smi_sel_parse(dev, &o, err, sizeof(err)) == 0, "%s", err);
  }
  smi_inventory inv;
  ck_assert_int_eq(smi_inventory_collect(&o, &inv), 0);
  membuf m;
  mb_open(&m);
  ck_assert_int_eq(smi_list_json(&inv, &o, m.f), 0);
  char *s = mb_close(&m);
  assert_json(s);
  if (inv_out) *inv_out = inv;
  else smi_inventory_free(&inv);
  return s;
}

START_TEST(list_filters) {
  smi_inventory inv;
  char *s = list_json(NULL, false, &inv);
  ck_assert_uint_eq(inv.npci, 2);
  ck_assert_uint_eq(inv.pci_gpus, 2);
  ck_assert_ptr_nonnull(strstr(s, "\"device\": \"0x744c\""));
  ck_assert_ptr_nonnull(strstr(s, "\"size_human\": \"16 GiB\""));
  ck_assert_ptr_nonnull(strstr(s, "\"driver\": \"amdgpu\""));
  smi_inventory_free(&inv);
  free(s);

  s = list_json("NV", false, &inv);
  ck_assert_uint_eq(inv.npci, 1);
  ck_assert_uint_eq(inv.pci[0].device, 0x2335);
  ck_assert(!inv.usb_searched); /* bridges carry AMD only */
  smi_inventory_free(&inv);
  free(s);

  s = list_json("PCI+AMD", false, &inv);
  ck_assert_uint_eq(inv.npci, 1);
  ck_assert_uint_eq(inv.pci[0].device, 0x744c);
  ck_assert(!inv.usb_searched);
  smi_inventory_free(&inv);
  free(s);

  s = list_json("AMD:1", false, &inv); /* there is one AMD GPU: index 1 selects nothing */
  ck_assert_uint_eq(inv.npci, 0);
  smi_inventory_free(&inv);
  free(s);

  s = list_json("PCI:0+NV:0", false, &inv);
  ck_assert_uint_eq(inv.npci, 1);
  smi_inventory_free(&inv);
  free(s);

  s = list_json("CPU", false, &inv);
  ck_assert_uint_eq(inv.npci, 0);
  ck_assert_ptr_nonnull(strstr(s, "no GPU matching --dev CPU"));
  smi_inventory_free(&inv);
  free(s);

  s = list_json(NULL, true, &inv);
  ck_assert_uint_eq(inv.npci, 3);
  ck_assert_uint_eq(inv.pci_gpus, 2);
  smi_inventory_free(&inv);
  free(s);
}
END_TEST

START_TEST(selector_parse) {
  smi_opts o = {0};
  char err[512];
  ck_assert_int_eq(smi_sel_parse("0000:03:00.0", &o, err, sizeof(err)), 0);
  ck_assert_int_eq(o.sel, SMI_SEL_BDF);
  ck_assert_str_eq(o.name, "0000:03:00.0");
  ck_assert_int_eq(smi_sel_parse("0A:1f.7", &o, err, sizeof(err)), 0);
  ck_assert_int_eq(o.sel, SMI_SEL_BDF);
  ck_assert_str_eq(o.name, "0000:0a:1f.7");
  ck_assert_int_eq(smi_sel_parse("usb:3-2", &o, err, sizeof(err)), 0);
  ck_assert_int_eq(o.sel, SMI_SEL_NAME);
  ck_assert_str_eq(o.name, "usb:3-2");
  ck_assert_int_eq(smi_sel_parse("PCI+AMD:1", &o, err, sizeof(err)), 0);
  ck_assert_int_eq(o.sel, SMI_SEL_TARGET);
  ck_assert(o.dev_has_index);
  ck_assert_int_eq(o.target.index, 1);
  ck_assert_int_eq(smi_sel_parse("USB:0+AMD", &o, err, sizeof(err)), 0); /* a DEV string, not a lock name */
  ck_assert_int_eq(o.sel, SMI_SEL_TARGET);
  ck_assert_int_eq(smi_sel_parse("NV", &o, err, sizeof(err)), 0);
  ck_assert(!o.dev_has_index);
  static const char *const bad[] = {"0000:03:00", "03:00.8", "03:20.0", "0000:g3:00.0", "1.2", "usb:", "FOO", "PCI+CPU"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    err[0] = '\0';
    ck_assert_msg(smi_sel_parse(bad[i], &o, err, sizeof(err)) < 0, "'%s' parsed", bad[i]);
    ck_assert_msg(err[0] != '\0', "'%s': no message", bad[i]);
  }
  ck_assert_ptr_nonnull(strstr((smi_sel_parse("03:00.8", &o, err, sizeof(err)), err), "expected DDDD:BB:DD.F"));
}
END_TEST

START_TEST(list_by_address) {
  smi_inventory inv;
  char *s = list_json("41:00.0", false, &inv);
  ck_assert_uint_eq(inv.npci, 1);
  ck_assert_str_eq(inv.pci[0].bdf, "0000:41:00.0");
  ck_assert(!inv.usb_searched);
  ck_assert_uint_eq(inv.ndevs, 0);
  ck_assert_ptr_nonnull(strstr(s, "\"owner_pid\": null"));
  ck_assert_ptr_nonnull(strstr(s, "\"in_use\": false"));
  smi_inventory_free(&inv);
  free(s);
  s = list_json("0000:00:01.0", false, &inv); /* not a GPU: still listed */
  ck_assert_uint_eq(inv.npci, 1);
  ck_assert_uint_eq(inv.pci_gpus, 0);
  ck_assert_ptr_nonnull(strstr(s, "0000:00:01.0 is not a GPU"));
  smi_inventory_free(&inv);
  free(s);
}
END_TEST

START_TEST(list_text_output) {
  smi_opts o = {0};
  smi_inventory inv;
  ck_assert_int_eq(smi_inventory_collect(&o, &inv), 0);
  membuf m;
  mb_open(&m);
  smi_list_text(&inv, &o, m.f);
  char *s = mb_close(&m);
  ck_assert_ptr_nonnull(strstr(s, "0000:03:00.0  AMD 1002:744c  navi31 (gfx1100, RDNA3)"));
  ck_assert_ptr_nonnull(strstr(s, "driver     amdgpu"));
  ck_assert_ptr_nonnull(strstr(s, "driver     none"));
  ck_assert_ptr_nonnull(strstr(s, "link       16.0 GT/s PCIe x16"));
  ck_assert_ptr_nonnull(strstr(s, "BAR0       16 GiB    mem 64-bit prefetchable"));
  ck_assert_ptr_nonnull(strstr(s, "BAR4       256 B     I/O"));
  ck_assert_ptr_nonnull(strstr(s, "owner      none")); /* no lock file in BG_LOCK_DIR names them */
  ck_assert_ptr_nonnull(strstr(s, "2 GPUs on PCI (3 devices scanned)"));
  smi_inventory_free(&inv);
  free(s);
}
END_TEST

START_TEST(list_no_gpu_message) {
  /* Remove the GPUs: the tree then looks like this CI host. */
  char cmd[1200];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s/bus/pci/devices/0000:03:00.0' '%s/bus/pci/devices/0000:41:00.0'", fake_root,
           fake_root);
  ck_assert_int_eq(system(cmd), 0);
  smi_opts o = {0};
  smi_inventory inv;
  ck_assert_int_eq(smi_inventory_collect(&o, &inv), 0);
  char sum[256];
  smi_inventory_summary(&inv, &o, sum, sizeof(sum));
  if (inv.nusb == 0) ck_assert_str_eq(sum, "no GPU found on PCI (1 devices scanned) or USB");
  smi_inventory_free(&inv);
}
END_TEST

/* ---------------- one-line JSON (watch --json) and published device memory (hcq/usage.h) ---------------- */

START_TEST(json_one_line) {
  membuf m;
  mb_open(&m);
  jw w;
  jw_init_line(&w, m.f);
  jw_obj_begin(&w);
  jw_kstr(&w, "a", "x\ny");
  jw_key(&w, "b");
  jw_arr_begin(&w);
  jw_int(&w, 1);
  jw_obj_begin(&w);
  jw_kbool(&w, "c", true);
  jw_obj_end(&w);
  jw_arr_end(&w);
  jw_obj_end(&w);
  ck_assert_int_eq(jw_finish(&w), 0);
  char *out = mb_close(&m);
  ck_assert_str_eq(out, "{\"a\": \"x\\ny\", \"b\": [1, {\"c\": true}]}\n");
  char err[128];
  ck_assert_msg(json_check(out, strlen(out), err, sizeof(err)) == 0, "%s", err);
  free(out);
}
END_TEST

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  fclose(f);
}

/* Only the lock holder's own file counts; a stale, malformed or special file is no use and never blocks. */
START_TEST(usage_read_checks) {
  char dir[] = "/tmp/bg_usage_test_XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  setenv("BG_LOCK_DIR", dir, 1);
  const char *name = "0000:77:00.0";
  char path[256], text[128];
  snprintf(path, sizeof(path), "%s/baregpu-%s.lock.mem", dir, name);
  bg_usage u;
  snprintf(text, sizeof(text), "pid %d\ndev PCI+AMD\nbytes 4096\nbuffers 2\n", (int)getpid());
  write_file(path, text);
  ck_assert_int_eq(bg_usage_read(name, &u), -BG_ENODEV); /* nobody holds the lock: stale */
  int fd = -1;
  ck_assert_int_eq(bg_pci_lock_acquire(name, &fd), 0);
  ck_assert_int_eq(bg_usage_read(name, &u), 0);
  ck_assert_int_eq(u.pid, getpid());
  ck_assert_str_eq(u.dev, "PCI+AMD");
  ck_assert_uint_eq(u.bytes, 4096);
  ck_assert_uint_eq(u.buffers, 2);
  write_file(path, "pid 1\ndev PCI+AMD\nbytes 4096\nbuffers 2\n"); /* written by an earlier holder */
  ck_assert_int_eq(bg_usage_read(name, &u), -BG_ENODEV);
  write_file(path, "pid 12 bytes lots\n");
  ck_assert_int_eq(bg_usage_read(name, &u), -BG_EFORMAT);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), path));
  unlink(path);
  ck_assert_int_eq(mkfifo(path, 0600), 0); /* a FIFO planted there: no writer, must not block */
  ck_assert_int_eq(bg_usage_read(name, &u), -BG_ENODEV);
  unlink(path);
  ck_assert_int_eq(bg_usage_read(name, &u), -BG_ENODEV); /* nothing published */
  bg_pci_lock_release(fd);
  char lock[256];
  snprintf(lock, sizeof(lock), "%s/baregpu-%s.lock", dir, name);
  unlink(lock);
  rmdir(dir);
  unsetenv("BG_LOCK_DIR");
}
END_TEST


static Suite *tools_suite(void) {
  Suite *s = suite_create("tools");
  TCase *tc = tcase_create("json");
  tcase_add_test(tc, json_escape_specials);
  tcase_add_test(tc, json_escape_utf8);
  tcase_add_test(tc, json_document);
  tcase_add_test(tc, json_misuse_detected);
  tcase_add_test(tc, json_checker_rejects);
  tcase_add_test(tc, json_one_line);
  tcase_add_test(tc, usage_read_checks);
  suite_add_tcase(s, tc);
  tc = tcase_create("tables");
  tcase_add_test(tc, chip_lookup);
  tcase_add_test(tc, chip_one_table);
  tcase_add_test(tc, gpu_filter);
  tcase_add_test(tc, size_format);
  tcase_add_test(tc, class_names);
  tcase_add_test(tc, usb_bridge_table);
  tcase_add_test(tc, selector_parse);
  suite_add_tcase(s, tc);
  tc = tcase_create("scan");
  tcase_add_test(tc, pci_scan_real);
  tcase_add_test(tc, usb_scan_real);
  tcase_add_test(tc, pci_scan_missing_root);
  suite_add_tcase(s, tc);
  tc = tcase_create("sysfs_tree");
  tcase_add_checked_fixture(tc, fake_setup, fake_teardown);
  tcase_add_test(tc, pci_scan_sysfs_tree);
  tcase_add_test(tc, list_filters);
  tcase_add_test(tc, list_by_address);
  tcase_add_test(tc, list_text_output);
  tcase_add_test(tc, list_no_gpu_message);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(tools_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
