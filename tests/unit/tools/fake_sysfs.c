/* tests/unit/tools/fake_sysfs.c: the emulated sysfs tree of fake_sysfs.h. */
#include <string.h>

#include "fake_sysfs.h"
#include "sysfs_tree.h"

static int put(const char *root, const char *rel, const char *text) {
  return sysfs_tree_put(root, rel, text, strlen(text), -1);
}

static int dir(const char *root, const char *rel) { return sysfs_tree_mkdir(root, rel); }

/* The resource file: six BARs, then the ROM line, as the kernel writes it. */
static const char navi31_resource[] =
    "0x0000007c00000000 0x0000007fffffffff 0x000000000014220c\n" /* BAR0 16 GiB, 64-bit prefetchable */
    "0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
    "0x0000007800000000 0x000000780fffffff 0x000000000014220c\n" /* BAR2 256 MiB */
    "0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
    "0x000000000000e000 0x000000000000e0ff 0x0000000000040101\n" /* BAR4 I/O 256 B */
    "0x00000000fca00000 0x00000000fcafffff 0x0000000000040200\n" /* BAR5 1 MiB, 32-bit */
    "0x00000000fcb00000 0x00000000fcb1ffff 0x0000000000046200\n";

static const char h200_resource[] =
    "0x00000000fa000000 0x00000000faffffff 0x0000000000040200\n" /* BAR0 16 MiB */
    "0x0000020000000000 0x000002ffffffffff 0x000000000014220c\n" /* BAR1 1 TiB */
    "0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
    "0x0000030000000000 0x0000030001ffffff 0x000000000014220c\n" /* BAR3 32 MiB */
    "0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
    "0x0000000000000000 0x0000000000000000 0x0000000000000000\n";

int fake_sysfs_create(char *root, size_t n) {
  if (sysfs_tree_tmpdir_new("fake-sysfs", root, n) < 0) return -1;
  static const char *const dirs[] = {
    "bus", "bus/pci", "bus/pci/devices", "bus/pci/drivers", "bus/pci/drivers/amdgpu",
    "bus/pci/devices/0000:03:00.0", "bus/pci/devices/0000:41:00.0", "bus/pci/devices/0000:00:01.0",
  };
  for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
    if (dir(root, dirs[i]) < 0) return -1;
  static const char *const files[][2] = {
    {"bus/pci/devices/0000:03:00.0/vendor", "0x1002\n"},
    {"bus/pci/devices/0000:03:00.0/device", "0x744c\n"},
    {"bus/pci/devices/0000:03:00.0/class", "0x030000\n"},
    {"bus/pci/devices/0000:03:00.0/subsystem_vendor", "0x1da2\n"},
    {"bus/pci/devices/0000:03:00.0/subsystem_device", "0x471e\n"},
    {"bus/pci/devices/0000:03:00.0/revision", "0xc8\n"},
    {"bus/pci/devices/0000:03:00.0/resource", navi31_resource},
    {"bus/pci/devices/0000:03:00.0/current_link_speed", "16.0 GT/s PCIe\n"},
    {"bus/pci/devices/0000:03:00.0/current_link_width", "16\n"},
    {"bus/pci/devices/0000:41:00.0/vendor", "0x10de\n"},
    {"bus/pci/devices/0000:41:00.0/device", "0x2335\n"},
    {"bus/pci/devices/0000:41:00.0/class", "0x030200\n"},
    {"bus/pci/devices/0000:41:00.0/resource", h200_resource},
    {"bus/pci/devices/0000:00:01.0/vendor", "0x1af4\n"},
    {"bus/pci/devices/0000:00:01.0/device", "0x1045\n"},
    {"bus/pci/devices/0000:00:01.0/class", "0xff0000\n"},
  };
  for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
    if (put(root, files[i][0], files[i][1]) < 0) return -1;
  return sysfs_tree_symlink(root, "../../drivers/amdgpu", "bus/pci/devices/0000:03:00.0/driver") == 0 ? 0 : -1;
}

void fake_sysfs_remove(const char *root) {
  if (root && root[0]) sysfs_tree_rm(root);
}
