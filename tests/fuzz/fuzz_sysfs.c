/* tests/fuzz/fuzz_sysfs.c: libFuzzer target for the sysfs attribute readers of platform/: the text of a device's
 * "resource" file (platform/pci_resource.h: every line, as bg_pci_open_sysfs reads BARs from it) and a PCI address
 * as given by a user or read from a sysfs link name (bg_pci_bdf_valid). The input goes through the file readers too:
 * written as an attribute file under a scratch BG_SYSFS_ROOT and read back with bg_sysfs_read into a small buffer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "platform/pci_attr.h"
#include "platform/pci_resource.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static char root[4096], file[4200];
  if (!root[0]) {
    snprintf(root, sizeof root, "%s", fuzz_tmpdir());
    setenv("BG_SYSFS_ROOT", root, 1);
    fuzz_path(file, sizeof file, "resource");
  }
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  for (int bar = -1; bar < 18; bar++) {
    bg_pci_bar b;
    if (bg_pci_resource_bar(text, bar, &b) && b.size && b.base + (b.size - 1) < b.base) abort();
  }
  bg_pci_bdf_valid(text);
  fuzz_write(file, data, size);
  char small[64];
  if (bg_sysfs_read("resource", small, sizeof small) >= 0 && strlen(small) >= sizeof small) abort();
  free(text);
  return 0;
}
