/* tools/smi_proc.c: lock owners and the processes behind them, for list, pids and kill_pids. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "baregpu/error.h"
#include "platform/pci_lock.h"
#include "platform/sysmem.h"
#include "tools/smi.h"

/* First line of a small file into buf[n]; false when unreadable or empty. */
static bool read_line(const char *path, char *buf, size_t n) {
  FILE *f = fopen(path, "re");
  if (!f) return false;
  bool ok = fgets(buf, (int)n, f) != NULL;
  fclose(f);
  if (!ok) return false;
  buf[strcspn(buf, "\n")] = '\0';
  return buf[0] != '\0';
}

void smi_proc_comm(pid_t pid, char *buf, size_t n) {
  char path[512];
  buf[0] = '\0';
  if (pid <= 0) return;
  /* BG_PROC_ROOT (tests) may fake a name; the real /proc knows every live process. */
  snprintf(path, sizeof(path), "%s/%d/comm", bg_sysmem_proc_root(), (int)pid);
  if (read_line(path, buf, n)) return;
  snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
  if (!read_line(path, buf, n)) buf[0] = '\0';
}

bool smi_proc_alive(pid_t pid) {
  if (pid <= 0) return false;
  if (kill(pid, 0) != 0 && errno == ESRCH) return false;
  /* A zombie still answers kill(pid, 0) until its parent reaps it; it holds no files. The
   * state follows the last ')' of /proc/<pid>/stat (the name may contain one). */
  char path[64], line[512];
  snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
  if (!read_line(path, line, sizeof(line))) return true;
  const char *rp = strrchr(line, ')');
  return !(rp && rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X'));
}

void smi_owner_get(const char *name, smi_owner *ow) {
  memset(ow, 0, sizeof(*ow));
  int r = bg_pci_lock_owner(name, &ow->pid);
  if (r < 0) {
    snprintf(ow->err, sizeof(ow->err), "%s", bg_last_error());
    ow->pid = 0;
    return;
  }
  ow->known = true;
  if (ow->pid > 0) smi_proc_comm(ow->pid, ow->comm, sizeof(ow->comm));
}

int smi_holders_collect(char (*names)[64], size_t nnames, smi_holder **out, size_t *n) {
  *out = NULL;
  *n = 0;
  bg_pci_lock_entry *e = NULL;
  size_t ne = 0;
  /* No lock directory yet: nobody has locked anything. */
  if (access(bg_pci_lock_dir(), F_OK) != 0 && errno == ENOENT) return 0;
  int r = bg_pci_lock_list(&e, &ne);
  if (r < 0) return r;
  smi_holder *v = calloc(ne ? ne : 1, sizeof(*v));
  if (!v) {
    free(e);
    return bg_error(BG_ENOMEM, "hcq_smi: out of memory listing %zu lock files", ne);
  }
  size_t k = 0;
  for (size_t i = 0; i < ne; i++) {
    if (e[i].pid == 0) continue;
    bool wanted = names == NULL;
    for (size_t j = 0; !wanted && j < nnames; j++) wanted = strcmp(names[j], e[i].name) == 0;
    if (!wanted) continue;
    smi_holder *h = &v[k++];
    snprintf(h->name, sizeof(h->name), "%s", e[i].name);
    snprintf(h->lock, sizeof(h->lock), "%s", e[i].path);
    h->pid = e[i].pid;
    smi_proc_comm(h->pid, h->comm, sizeof(h->comm));
  }
  free(e);
  *out = v;
  *n = k;
  return 0;
}
