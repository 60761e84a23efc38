/* tools/smi_kill.c: `hcq_smi kill_pids`: stop the processes holding GPUs. Each holder gets
 * SIGTERM, then SIGKILL when it still holds its devices after the grace period; hcq_smi never
 * signals itself or pid 1. A holder counts as stopped when it exited or released its locks. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bg_config.h"
#include "platform/pci_lock.h"
#include "tools/json.h"
#include "tools/smi.h"
#include "tools/tool_err.h"
#include "util/clock.h"

#define KILL_WAIT_S 5.0 /* after SIGKILL: a process in uninterruptible sleep may take a moment */

typedef struct victim {
  pid_t pid;
  char comm[64];
  size_t first, ndevs;   /* its devices: holders[first .. first+ndevs) after grouping */
  bool term, killed;     /* signals sent */
  bool pending, failed;
  const char *outcome;   /* exited, released, killed, gone, skipped, failed */
  double secs;           /* from SIGTERM to the outcome */
  double released_at;    /* when its locks were first seen released while it still ran, or 0 */
  char err[256];
} victim;

static double now_s(void) { return (double)bg_now_ns() * 1e-9; }

static void nap_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Does v still hold any of its locks? */
static bool still_holds(const victim *v, const smi_holder *h) {
  for (size_t i = v->first; i < v->first + v->ndevs; i++) {
    pid_t p = 0;
    if (bg_pci_lock_owner(h[i].name, &p) == 0 && p == v->pid) return true;
  }
  return false;
}

static void fail(victim *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(victim *v, const char *fmt, ...) {
  v->failed = true;
  v->pending = false;
  v->outcome = "failed";
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(v->err, sizeof(v->err), fmt, ap);
  va_end(ap);
}

/* Send sig to every pending victim. */
static void signal_all(victim *v, size_t n, int sig, double t0) {
  for (size_t i = 0; i < n; i++) {
    if (!v[i].pending) continue;
    if (kill(v[i].pid, sig) == 0) {
      if (sig == SIGTERM) v[i].term = true;
      else v[i].killed = true;
      continue;
    }
    if (errno == ESRCH) {
      v[i].pending = false;
      v[i].outcome = sig == SIGTERM ? "gone" : "exited";
      v[i].secs = now_s() - t0;
    } else if (errno == EPERM) {
      fail(&v[i], "not permitted to signal pid %d (another user's process): run hcq_smi kill_pids as root",
           (int)v[i].pid);
    } else {
      fail(&v[i], "cannot signal pid %d: %s", (int)v[i].pid, strerror(errno));
    }
  }
}

/* Poll until every pending victim exited or released its locks, or the deadline. */
static void wait_all(victim *v, size_t n, const smi_holder *h, double t0, double deadline, const char *done) {
  for (;;) {
    size_t left = 0;
    for (size_t i = 0; i < n; i++) {
      if (!v[i].pending) continue;
      bool alive = smi_proc_alive(v[i].pid);
      if (alive && still_holds(&v[i], h)) {
        left++;
        continue;
      }
      /* An exiting process closes its files (releasing the locks) before it becomes a zombie:
       * give it a moment so an exit is reported as one, not as a release. */
      if (alive && v[i].released_at == 0) v[i].released_at = now_s();
      if (alive && now_s() - v[i].released_at < 0.2 && now_s() < deadline) {
        left++;
        continue;
      }
      v[i].pending = false;
      v[i].outcome = alive ? "released" : done;
      v[i].secs = now_s() - t0;
    }
    if (left == 0 || now_s() >= deadline) return;
    nap_ms(10);
  }
}

/* One victim per pid, its devices adjacent in h (reordered in place). */
static size_t group(smi_holder *h, size_t n, victim *v) {
  size_t nv = 0;
  for (size_t i = 0; i < n;) {
    victim *x = &v[nv++];
    memset(x, 0, sizeof(*x));
    x->pid = h[i].pid;
    snprintf(x->comm, sizeof(x->comm), "%s", h[i].comm);
    x->first = i;
    x->ndevs = 1;
    size_t end = i + 1;
    for (size_t j = i + 1; j < n; j++) {
      if (h[j].pid != x->pid || x->pid <= 0) continue;
      smi_holder t = h[end];
      h[end] = h[j];
      h[j] = t;
      end++;
      x->ndevs++;
    }
    i = end;
  }
  return nv;
}

static void prepare(victim *v, const smi_holder *h) {
  if (v->pid <= 0) {
    fail(v, "%s: lock held, but its holder has not written its pid yet; retry", h[v->first].name);
  } else if (v->pid == getpid()) {
    v->outcome = "skipped";
    snprintf(v->err, sizeof(v->err), "pid %d is hcq_smi itself", (int)v->pid);
  } else if (v->pid == 1) {
    fail(v, "refusing to signal pid 1 (init)");
  } else if (!still_holds(v, h)) {
    v->outcome = "released";
  } else {
    v->pending = true;
  }
}

static void print_text(const victim *v, size_t nv, const smi_holder *h, double grace) {
  for (size_t i = 0; i < nv; i++) {
    const victim *x = &v[i];
    printf("pid %d (%s) holding", (int)x->pid, x->comm[0] ? x->comm : "?");
    for (size_t j = x->first; j < x->first + x->ndevs; j++) printf(" %s", h[j].name);
    printf(": ");
    if (x->failed)
      printf("%sfailed: %s", x->killed ? "SIGTERM, SIGKILL, " : x->term ? "SIGTERM, " : "", x->err);
    else if (strcmp(x->outcome, "skipped") == 0) printf("skipped: %s", x->err);
    else if (!x->term) printf("%s before any signal", strcmp(x->outcome, "gone") == 0 ? "exited" : x->outcome);
    else if (!x->killed) printf("SIGTERM, %s after %.2f s", x->outcome, x->secs);
    else printf("SIGTERM, still holding after %.2f s; SIGKILL, %s after %.2f s", grace, x->outcome, x->secs);
    putchar('\n');
  }
}

static void print_json(const smi_opts *o, const victim *v, size_t nv, const smi_holder *h, size_t stopped,
                       size_t failed, const char *err) {
  jw w;
  jw_init(&w, stdout);
  jw_obj_begin(&w);
  jw_kstr(&w, "tool", "hcq_smi");
  jw_kstr(&w, "version", BG_VERSION);
  jw_kstr(&w, "command", "kill_pids");
  jw_kstr(&w, "dev", o->dev);
  jw_kstr(&w, "lock_dir", bg_pci_lock_dir());
  jw_key(&w, "grace_ms");
  jw_int(&w, (int64_t)(o->grace_s * 1000.0 + 0.5));
  jw_kint(&w, "self_pid", getpid());
  jw_kstr(&w, "error", err);
  jw_key(&w, "processes");
  jw_arr_begin(&w);
  for (size_t i = 0; i < nv; i++) {
    const victim *x = &v[i];
    jw_obj_begin(&w);
    jw_key(&w, "pid");
    if (x->pid > 0) jw_int(&w, x->pid);
    else jw_null(&w);
    jw_kstr(&w, "process", x->comm[0] ? x->comm : NULL);
    jw_key(&w, "devices");
    jw_arr_begin(&w);
    for (size_t j = x->first; j < x->first + x->ndevs; j++) jw_str(&w, h[j].name);
    jw_arr_end(&w);
    jw_kbool(&w, "sigterm", x->term);
    jw_kbool(&w, "sigkill", x->killed);
    jw_kstr(&w, "outcome", x->outcome);
    jw_kint(&w, "ms", x->term ? (int64_t)(x->secs * 1000.0 + 0.5) : 0);
    jw_kstr(&w, "error", x->err[0] ? x->err : NULL);
    jw_obj_end(&w);
  }
  jw_arr_end(&w);
  jw_kuint(&w, "stopped", stopped);
  jw_kuint(&w, "failed", failed);
  jw_obj_end(&w);
  if (jw_finish(&w) < 0) tool_err("kill_pids: internal error: unbalanced JSON output");
}

int smi_cmd_kill_pids(const smi_opts *o) {
  char (*names)[64] = NULL;
  size_t nnames = 0;
  int rc = smi_select_names(o, "kill_pids", &names, &nnames);
  if (rc != SMI_EXIT_OK) return rc;
  smi_holder *h = NULL;
  size_t n = 0;
  int r = smi_holders_collect(names, nnames, &h, &n);
  free(names);
  if (r < 0) {
    char msg[512];
    snprintf(msg, sizeof(msg), "%s", bg_last_error());
    if (o->json) print_json(o, NULL, 0, NULL, 0, 0, msg);
    smi_report_error("kill_pids", r, msg);
    return SMI_EXIT_FAIL;
  }
  victim *v = calloc(n ? n : 1, sizeof(*v));
  if (!v) {
    free(h);
    tool_err("kill_pids: out of memory");
    return SMI_EXIT_FAIL;
  }
  size_t nv = group(h, n, v);
  for (size_t i = 0; i < nv; i++) prepare(&v[i], h);

  double t0 = now_s();
  signal_all(v, nv, SIGTERM, t0);
  wait_all(v, nv, h, t0, t0 + o->grace_s, "exited");
  signal_all(v, nv, SIGKILL, t0);
  wait_all(v, nv, h, t0, now_s() + KILL_WAIT_S, "killed");
  size_t stopped = 0, failed = 0;
  for (size_t i = 0; i < nv; i++) {
    if (v[i].pending)
      fail(&v[i], "pid %d still holds its devices %.0f s after SIGKILL (stuck in the kernel?)", (int)v[i].pid,
           KILL_WAIT_S);
    if (v[i].failed) failed++;
    else if (strcmp(v[i].outcome, "skipped") != 0) stopped++;
  }

  if (o->json) {
    print_json(o, v, nv, h, stopped, failed, NULL);
  } else if (nv == 0) {
    printf("no process holds %s (lock dir %s): nothing to kill\n", o->dev ? o->dev : "a GPU", bg_pci_lock_dir());
  } else {
    print_text(v, nv, h, o->grace_s);
    printf("kill_pids: %zu of %zu process%s stopped%s\n", stopped, nv, nv == 1 ? "" : "es",
           failed ? ", some still hold GPUs" : "");
  }
  for (size_t i = 0; i < nv; i++)
    if (v[i].failed) tool_err("kill_pids: %s", v[i].err);
  for (size_t i = 0; i < nv; i++)
    if (v[i].failed && strstr(v[i].err, "as root")) {
      tool_err("kill_pids needs root to signal other users' processes: sudo hcq_smi kill_pids");
      break;
    }
  free(v);
  free(h);
  return failed ? SMI_EXIT_FAIL : SMI_EXIT_OK;
}
