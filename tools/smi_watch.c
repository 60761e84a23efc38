/* tools/smi_watch.c: `hcq_smi watch`: every GPU's sensors (SMU metrics, smi_am.c), VRAM used and total and the
 * device memory of the process holding it (smi_mem.c), refreshed every -n seconds: a table redrawn in place on a
 * terminal (nvidia-smi -l, watch rocm-smi), one JSON object a line with --json. --count N stops after N refreshes;
 * SIGINT / SIGTERM end it after the current refresh, exit status 0. Each refresh gathers what `list` gathers. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bg_config.h"
#include "tools/json.h"
#include "tools/smi.h"
#include "tools/smi_fmt.h"
#include "tools/tool_err.h"

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig) {
  (void)sig;
  stop_requested = 1;
}

/* One GPU row: the entry of a PCI inventory (or of the emulated USB one). */
typedef struct row {
  const bg_pci_info *p;
  const smi_owner *ow;
  const smi_mem *mem;
  const smi_am_metrics *am;
} row;

static size_t gather_rows(const smi_inventory *inv, row *rows, size_t max) {
  size_t n = 0;
  const smi_inventory *parts[2] = {inv, inv->emu_usb};
  for (int k = 0; k < 2; k++) {
    const smi_inventory *v = parts[k];
    for (size_t i = 0; v && i < v->npci && n < max; i++) {
      if (!v->pci[i].is_gpu) continue;
      rows[n++] = (row){&v->pci[i], &v->pci_owner[i], &v->pci_mem[i], v->am ? &v->am[i] : NULL};
    }
  }
  return n;
}

static void text_row(const row *r, FILE *f) {
  const smi_am_metrics *m = r->am;
  char used[32], total[32], vram[80];
  snprintf(vram, sizeof(vram), "%s / %s",
           r->mem->used_known ? smi_fmt_size(r->mem->published ? r->mem->u.bytes : 0, used, sizeof(used)) : "?",
           m && m->vram_size ? smi_fmt_size(m->vram_size, total, sizeof(total)) : "?");
  fprintf(f, "%-14s %-10s ", r->p->bdf, r->p->chip ? r->p->chip->chip : "unknown");
  if (m && m->state == SMI_AM_OK) {
    char edge[8] = "n/a", fan[12] = "n/a";
    if (!m->cdna) {
      snprintf(edge, sizeof(edge), "%u", m->temp_edge);
      snprintf(fan, sizeof(fan), "%u", m->fan_rpm);
    }
    char power[24];
    snprintf(power, sizeof(power), "%u/%u W", m->power_w, m->power_limit_w);
    fprintf(f, "%4s %4u %4u %11s %7u %7u %4u %4u %6s  %s\n", edge, m->temp_hotspot, m->temp_mem, power, m->gfxclk,
            m->uclk, m->gfx_activity, m->mem_activity, fan, vram);
  } else {
    const char *why = !m || m->state == SMI_AM_NONE ? "no sensors read (not an AMD GPU)" : m->msg;
    fprintf(f, "%-58s  %s\n", why, vram);
  }
  if (r->mem->published)
    fprintf(f, "    pid %d (%s) %s in %llu buffer%s (%s)\n", (int)r->mem->u.pid, r->mem->comm[0] ? r->mem->comm : "?",
            smi_fmt_size(r->mem->u.bytes, used, sizeof(used)), (unsigned long long)r->mem->u.buffers,
            r->mem->u.buffers == 1 ? "" : "s", r->mem->u.dev);
  else if (r->ow->known && r->ow->pid > 0)
    fprintf(f, "    pid %d (%s) holds it, device memory not published\n", (int)r->ow->pid,
            r->ow->comm[0] ? r->ow->comm : "?");
}

static void print_text(const smi_opts *o, const row *rows, size_t n, long refresh, bool tty, FILE *f) {
  if (tty) fputs("\033[H\033[2J", f); /* redraw in place */
  else if (refresh > 1) fputc('\n', f);
  time_t now = time(NULL);
  char ts[32];
  strftime(ts, sizeof(ts), "%Y-%m-%d %H:%M:%S", localtime(&now));
  fprintf(f, "hcq_smi watch: %s, every %.1f s, refresh %ld%s%s%s\n", ts, o->interval_s, refresh,
          o->dev ? " (" : "", o->dev ? o->dev : "", o->dev ? ")" : "");
  fprintf(f, "%-14s %-10s %4s %4s %4s %11s %7s %7s %4s %4s %6s  %s\n", "DEVICE", "CHIP", "EDGE", "HOT", "MEM",
          "POWER", "GFX MHz", "MEM MHz", "GFX%", "MEM%", "FAN", "VRAM USED / TOTAL");
  for (size_t i = 0; i < n; i++) text_row(&rows[i], f);
  if (n == 0) fprintf(f, "no GPU%s%s\n", o->dev ? " matching " : "", o->dev ? o->dev : "");
  fflush(f);
}

static int print_json(const smi_opts *o, const row *rows, size_t n, long refresh, FILE *f) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  jw w;
  jw_init_line(&w, f);
  jw_obj_begin(&w);
  jw_kstr(&w, "tool", "hcq_smi");
  jw_kstr(&w, "version", BG_VERSION);
  jw_kstr(&w, "command", "watch");
  jw_kint(&w, "refresh", refresh);
  jw_kint(&w, "time_ms", (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
  jw_kstr(&w, "dev", o->dev);
  jw_key(&w, "gpus");
  jw_arr_begin(&w);
  for (size_t i = 0; i < n; i++) {
    const row *r = &rows[i];
    jw_obj_begin(&w);
    jw_kstr(&w, "device", r->p->bdf);
    jw_khex(&w, "vendor", r->p->vendor, 4);
    jw_khex(&w, "device_id", r->p->device, 4);
    jw_kstr(&w, "chip", r->p->chip ? r->p->chip->chip : NULL);
    jw_key(&w, "owner_pid");
    if (r->ow->known && r->ow->pid > 0) jw_int(&w, r->ow->pid);
    else jw_null(&w);
    smi_mem_json(&w, r->mem, r->am);
    if (r->am) smi_am_json(&w, r->am);
    else {
      jw_key(&w, "metrics");
      jw_null(&w);
    }
    jw_obj_end(&w);
  }
  jw_arr_end(&w);
  jw_obj_end(&w);
  int r = jw_finish(&w);
  fflush(f);
  return r;
}

/* Sleep s seconds unless a signal asks to stop first. */
static void pause_s(double s) {
  struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  while (!stop_requested && nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

int smi_cmd_watch(const smi_opts *o) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  bool tty = !o->json && isatty(STDOUT_FILENO);
  int rc = SMI_EXIT_OK;
  for (long refresh = 1; !stop_requested && (o->count == 0 || refresh <= o->count); refresh++) {
    if (refresh > 1) pause_s(o->interval_s);
    if (stop_requested) break;
    smi_inventory inv;
    int r = smi_inventory_collect(o, &inv);
    smi_am_collect(&inv);
    if (BG_HAVE_MOCK && smi_sel_is_mockusb(o)) inv.emu_usb = smi_mockusb_inventory(o);
    row rows[64];
    size_t n = gather_rows(&inv, rows, sizeof(rows) / sizeof(rows[0]));
    int jr = 0;
    if (o->json) jr = print_json(o, rows, n, refresh, stdout);
    else print_text(o, rows, n, refresh, tty, stdout);
    if (r < 0) tool_err("watch: %s", inv.pci_msg);
    if (jr < 0) tool_err("watch: internal error: unbalanced JSON output");
    free(inv.am);
    smi_mock_inventory_free(inv.emu_usb);
    smi_inventory_free(&inv);
    if (r < 0 || jr < 0) {
      rc = SMI_EXIT_FAIL;
      break;
    }
  }
  return rc;
}
