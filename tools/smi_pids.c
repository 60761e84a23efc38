/* tools/smi_pids.c: `hcq_smi pids`: the processes holding GPUs, from the lock files
 * (platform/pci_lock.h), with their names from /proc/<pid>/comm and the device memory each published (hcq/usage.h). tinygrad runs lsof on its lock
 * files; here the lock file holds the owner's pid and the flock tells whether it is still held. */
#include <stdlib.h>
#include <string.h>

#include "bg_config.h"
#include "platform/pci_lock.h"
#include "tools/json.h"
#include "tools/smi_fmt.h"
#include "tools/smi.h"
#include "tools/tool_err.h"

/* The use h's holder published, or false. */
static bool usage_of(const smi_holder *h, bg_usage *u) { return h->pid > 0 && bg_usage_read(h->name, u) == 0; }

static void print_json(const smi_opts *o, const smi_holder *h, size_t n, const char *err) {
  jw w;
  jw_init(&w, stdout);
  jw_obj_begin(&w);
  jw_kstr(&w, "tool", "hcq_smi");
  jw_kstr(&w, "version", BG_VERSION);
  jw_kstr(&w, "command", "pids");
  jw_kstr(&w, "dev", o->dev);
  jw_kstr(&w, "lock_dir", bg_pci_lock_dir());
  jw_kstr(&w, "error", err);
  jw_key(&w, "holders");
  jw_arr_begin(&w);
  for (size_t i = 0; i < n; i++) {
    jw_obj_begin(&w);
    jw_kstr(&w, "device", h[i].name);
    jw_kstr(&w, "bdf", strncmp(h[i].name, "usb:", 4) == 0 ? NULL : h[i].name);
    jw_key(&w, "pid");
    if (h[i].pid > 0) jw_int(&w, h[i].pid);
    else jw_null(&w);
    jw_kstr(&w, "process", h[i].comm[0] ? h[i].comm : NULL);
    jw_kstr(&w, "lock", h[i].lock);
    bg_usage u;
    jw_key(&w, "device_memory");
    if (usage_of(&h[i], &u)) {
      jw_obj_begin(&w);
      jw_kuint(&w, "bytes", u.bytes);
      jw_kuint(&w, "buffers", u.buffers);
      jw_kstr(&w, "dev", u.dev);
      jw_obj_end(&w);
    } else {
      jw_null(&w);
    }
    jw_obj_end(&w);
  }
  jw_arr_end(&w);
  jw_kuint(&w, "count", n);
  jw_obj_end(&w);
  if (jw_finish(&w) < 0) tool_err("pids: internal error: unbalanced JSON output");
}

static void print_text(const smi_opts *o, const smi_holder *h, size_t n) {
  if (n == 0) {
    printf("no process holds %s (lock dir %s)\n", o->dev ? o->dev : "a GPU", bg_pci_lock_dir());
    return;
  }
  printf("%-14s %-8s %s\n", "DEVICE", "PID", "PROCESS");
  for (size_t i = 0; i < n; i++) {
    char pid[16];
    if (h[i].pid > 0) snprintf(pid, sizeof(pid), "%d", (int)h[i].pid);
    else snprintf(pid, sizeof(pid), "?");
    printf("%-14s %-8s %s", h[i].name, pid,
           h[i].pid > 0 ? (h[i].comm[0] ? h[i].comm : "?") : "(lock held, pid not written yet)");
    bg_usage u;
    if (usage_of(&h[i], &u)) {
      char mem[32];
      printf(", device memory %s in %llu buffer%s", smi_fmt_size(u.bytes, mem, sizeof(mem)),
             (unsigned long long)u.buffers, u.buffers == 1 ? "" : "s");
    }
    putchar('\n');
  }
  printf("%zu device%s held (lock dir %s)\n", n, n == 1 ? "" : "s", bg_pci_lock_dir());
}

int smi_cmd_pids(const smi_opts *o) {
  char (*names)[64] = NULL;
  size_t nnames = 0;
  int rc = smi_select_names(o, "pids", &names, &nnames);
  if (rc != SMI_EXIT_OK) return rc;
  smi_holder *h = NULL;
  size_t n = 0;
  int r = smi_holders_collect(names, nnames, &h, &n);
  free(names);
  if (r < 0) {
    char msg[512];
    snprintf(msg, sizeof(msg), "%s", bg_last_error());
    if (o->json) print_json(o, NULL, 0, msg);
    smi_report_error("pids", r, msg);
    return SMI_EXIT_FAIL;
  }
  if (o->json) print_json(o, h, n, NULL);
  else print_text(o, h, n);
  free(h);
  return SMI_EXIT_OK;
}
