/* tests/unit/pci/test_discovery.c: platform/pci_scan over the emulated tree (BG_SYSFS_ROOT). */
#include "hcq/gpu_scan.h"
#include "pci_test.h"

static const bg_pci_info *find(const bg_pci_info *v, size_t n, const char *bdf) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(v[i].bdf, bdf) == 0) return &v[i];
  return NULL;
}

START_TEST(scan_gpus) {
  bg_pci_info *v;
  size_t n, seen;
  OK(bg_pci_scan(0, &v, &n, &seen));
  ck_assert_uint_eq(seen, 4);
  ck_assert_uint_eq(n, 2);
  /* Sorted by BDF. */
  ck_assert_str_eq(v[0].bdf, AMD_BDF);
  ck_assert_str_eq(v[1].bdf, NV_BDF);
  const bg_pci_info *a = &v[0];
  ck_assert_uint_eq(a->vendor, 0x1002);
  ck_assert_uint_eq(a->device, 0x744c);
  ck_assert_uint_eq(a->subvendor, 0x1da2);
  ck_assert_uint_eq(a->subdevice, 0x471e);
  ck_assert_uint_eq(a->class_code, 0x030000);
  ck_assert_uint_eq(a->revision, 0xc8);
  ck_assert_ptr_nonnull(a->chip);
  ck_assert_str_eq(a->chip->chip, "navi31");
  ck_assert_str_eq(a->driver, "amdgpu");
  ck_assert_str_eq(a->link_speed, "16.0 GT/s PCIe");
  ck_assert_int_eq(a->link_width, 16);
  ck_assert(a->bars_known);
  ck_assert_uint_eq(a->bars[0].size, 256u << 20);
  ck_assert(a->bars[0].is_64 && a->bars[0].prefetch);
  ck_assert_uint_eq(a->bars[1].size, 0);
  ck_assert_uint_eq(a->bars[2].size, 2u << 20);
  ck_assert(a->bars[4].is_io);
  ck_assert_uint_eq(a->bars[4].size, 256);
  ck_assert_uint_eq(a->bars[5].size, 1u << 20);
  ck_assert(!a->bars[5].is_64 && !a->bars[5].prefetch);
  const bg_pci_info *nv = &v[1];
  ck_assert_uint_eq(nv->vendor, 0x10de);
  ck_assert_str_eq(nv->driver, "");
  ck_assert_str_eq(nv->link_speed, "");
  ck_assert_uint_eq(nv->bars[1].size, 64u << 20);
  bg_pci_free(v);
}
END_TEST

START_TEST(scan_all) {
  bg_pci_info *v;
  size_t n;
  OK(bg_pci_scan(BG_PCI_SCAN_ALL, &v, &n, NULL));
  ck_assert_uint_eq(n, 4);
  const bg_pci_info *audio = find(v, n, AUDIO_BDF), *nic = find(v, n, NIC_BDF);
  ck_assert_ptr_nonnull(audio);
  ck_assert_ptr_nonnull(nic);
  ck_assert(!audio->is_gpu);
  ck_assert_str_eq(audio->driver, "snd_hda_intel");
  ck_assert(!nic->is_gpu);
  ck_assert_str_eq(nic->driver, "e1000e");
  ck_assert_int_eq(nic->link_width, 1);
  bg_pci_free(v);
}
END_TEST

/* A hot-unplugged device drops out of the next scan. */
START_TEST(scan_after_vanish) {
  ck_assert_int_eq(mock_sysfs_vanish(fx, NV_BDF), 0);
  bg_pci_info *v;
  size_t n;
  OK(bg_pci_scan(0, &v, &n, NULL));
  ck_assert_uint_eq(n, 1);
  ck_assert_str_eq(v[0].bdf, AMD_BDF);
  bg_pci_free(v);
}
END_TEST

TCase *tcase_discovery(void) {
  TCase *tc = fx_tcase("discovery");
  tcase_add_test(tc, scan_gpus);
  tcase_add_test(tc, scan_all);
  tcase_add_test(tc, scan_after_vanish);
  return tc;
}
