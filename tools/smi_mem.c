/* tools/smi_mem.c: VRAM used and total of a GPU, and the device memory of the process holding it.
 *
 * Total: what the AMD driver read from the IP discovery table when hcq_smi could open the device (smi_am.c; a device
 * another process holds is not opened, its total is unknown here). Used: the holder publishes its device memory
 * next to the lock file (hcq/usage.h); a free device uses none; a holder that publishes nothing (not a baregpu
 * program, or one that allocated nothing through bg_buf_alloc) is unknown. */
#include <string.h>

#include "tools/json.h"
#include "tools/smi.h"
#include "tools/smi_fmt.h"

void smi_mem_get(const char *name, const smi_owner *ow, smi_mem *m) {
  memset(m, 0, sizeof(*m));
  if (ow && ow->known && ow->pid == 0) {
    m->used_known = true; /* nobody holds it */
    return;
  }
  if (bg_usage_read(name, &m->u) == 0) {
    m->used_known = m->published = true;
    smi_proc_comm(m->u.pid, m->comm, sizeof(m->comm));
  }
}

void smi_mem_text(const smi_mem *m, const smi_am_metrics *am, FILE *f) {
  char used[32];
  fprintf(f, "      vram       ");
  if (m->used_known) fprintf(f, "%s used", smi_fmt_size(m->published ? m->u.bytes : 0, used, sizeof(used)));
  else fprintf(f, "used unknown (the holder publishes none)");
  if (am && am->vram_size) {
    char total[32];
    fprintf(f, " of %s", smi_fmt_size(am->vram_size, total, sizeof(total)));
  } else fprintf(f, ", total unknown%s", am && am->state == SMI_AM_IN_USE ? " (in use)" : "");
  if (m->published)
    fprintf(f, "; pid %d (%s) %s in %llu buffer%s", (int)m->u.pid, m->comm[0] ? m->comm : "?",
            smi_fmt_size(m->u.bytes, used, sizeof(used)), (unsigned long long)m->u.buffers,
            m->u.buffers == 1 ? "" : "s");
  fputc('\n', f);
}

void smi_mem_json(struct jw *w, const smi_mem *m, const smi_am_metrics *am) {
  jw_key(w, "vram");
  jw_obj_begin(w);
  jw_key(w, "total");
  if (am && am->vram_size) jw_uint(w, am->vram_size);
  else jw_null(w);
  jw_key(w, "used");
  if (m->used_known) jw_uint(w, m->published ? m->u.bytes : 0);
  else jw_null(w);
  jw_key(w, "processes");
  jw_arr_begin(w);
  if (m->published) {
    jw_obj_begin(w);
    jw_kint(w, "pid", m->u.pid);
    jw_kstr(w, "process", m->comm[0] ? m->comm : NULL);
    jw_kstr(w, "dev", m->u.dev);
    jw_kuint(w, "bytes", m->u.bytes);
    jw_kuint(w, "buffers", m->u.buffers);
    jw_obj_end(w);
  }
  jw_arr_end(w);
  jw_obj_end(w);
}
