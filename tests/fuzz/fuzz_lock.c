/* tests/fuzz/fuzz_lock.c: libFuzzer target for the lock-file readers (platform/pci_lock.h): the bytes are the content
 * of a device lock file in a scratch BG_LOCK_DIR, held (flock, exclusive) by this process through another open file
 * description, as another user of the device would hold it. The owner's pid is read from it (bg_pci_lock_owner) and
 * the directory is listed (bg_pci_lock_list): the pid must be positive or -1 (held, not written yet). */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "platform/pci_lock.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static char path[4096];
  if (!path[0]) {
    setenv("BG_LOCK_DIR", fuzz_tmpdir(), 1);
    fuzz_path(path, sizeof path, "baregpu-0000:03:00.0.lock");
  }
  if (size > 4096) return 0;
  fuzz_write(path, data, size);
  int fd = open(path, O_RDONLY);
  if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0) abort();
  pid_t pid;
  if (bg_pci_lock_owner("0000:03:00.0", &pid) != 0 || pid == 0 || pid < -1) abort();
  bg_pci_lock_entry *list;
  size_t n;
  if (bg_pci_lock_list(&list, &n) != 0 || n != 1 || list[0].pid != pid) abort();
  free(list);
  close(fd);
  return 0;
}
