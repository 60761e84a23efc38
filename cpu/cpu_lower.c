/* cpu/cpu_lower.c: lowering recorded queue commands into CPU ring slots. Constant fields are
 * written directly; every operand goes through bg_tmpl_put so symbolic ones become patches. */
#include <stddef.h>
#include <string.h>

#include "cpu/cpu.h"

static const char *const op_names[] = {"wait", "signal", "timestamp", "memory_barrier", "exec", "copy"};

#define PUT(field, width, v)                                                                   \
  do {                                                                                          \
    int r_ = bg_tmpl_put(t, BG_SEC_CMD, (size_t)off + offsetof(cpu_slot, field), (width), (v)); \
    if (r_ < 0) return r_;                                                                      \
  } while (0)

static int lower_exec(const bg_cmd *c, bg_tmpl *t, long off, cpu_slot *s) {
  const bg_program *prg = c->prg;
  const cpu_prog *cp = prg->handle;
  memcpy(&s->a, &cp->fn, sizeof(cp->fn));
  s->prg = (uint64_t)(uintptr_t)cp;
  memcpy(t->cmd + off, s, sizeof(*s));
  /* The program's argument block goes to the kernel-argument section; the slot points at this
   * submit's copy of it through the kargs-base slot. */
  long ko = bg_tmpl_reserve(t, BG_SEC_KARGS, prg->kargs_size, 16);
  if (ko < 0) return (int)ko;
  for (unsigned i = 0; i < prg->nargs; i++) {
    int r = bg_tmpl_put(t, BG_SEC_KARGS, (size_t)ko + prg->arg_offsets[i], prg->arg_sizes[i], c->args[i]);
    if (r < 0) return bg_error_context(r, "argument %u of '%s': ", i, prg->name);
  }
  const ir_node *ka = bg_tmpl_kargs_addr(t, (size_t)ko);
  if (!ka) return bg_error(BG_ENOMEM, "out of memory for the kernel-argument address of '%s'", prg->name);
  PUT(b, 8, ka);
  for (int k = 0; k < 3; k++) {
    PUT(c.grid.gsz[k], 4, c->gsz[k]);
    PUT(c.grid.lsz[k], 4, c->lsz[k]);
  }
  return 0;
}

static int lower_one(const bg_cmd *c, bg_tmpl *t) {
  long off = bg_tmpl_reserve(t, BG_SEC_CMD, sizeof(cpu_slot), 8);
  if (off < 0) return (int)off;
  cpu_slot s;
  memset(&s, 0, sizeof(s));
  switch (c->op) {
  case BG_CMD_WAIT: s.op = CPU_OP_WAIT; break;
  case BG_CMD_SIGNAL: s.op = CPU_OP_SIGNAL; break;
  case BG_CMD_TIMESTAMP: s.op = CPU_OP_TIMESTAMP; break;
  case BG_CMD_BARRIER: s.op = CPU_OP_BARRIER; break;
  case BG_CMD_COPY: s.op = CPU_OP_COPY; s.c.size = c->size; break;
  case BG_CMD_EXEC: s.op = CPU_OP_EXEC; return lower_exec(c, t, off, &s);
  default: return bg_error(BG_EINVAL, "unknown command op %d", (int)c->op);
  }
  memcpy(t->cmd + off, &s, sizeof(s));
  switch (c->op) {
  case BG_CMD_WAIT:
  case BG_CMD_SIGNAL:
  case BG_CMD_COPY:
    PUT(a, 8, c->addr);
    PUT(b, 8, c->value);
    break;
  case BG_CMD_TIMESTAMP:
    PUT(a, 8, c->addr);
    break;
  default:
    break;
  }
  return 0;
}

int bg_cpu_lower(bg_dev *d, bg_queue_hw *hq, const bg_cmd *cmds, size_t ncmds, bg_tmpl *t) {
  (void)d;
  if (ncmds > hq->nslots)
    return bg_error(BG_EINVAL, "cpu: %s: %zu commands exceed the ring of %u commands: split the program", hq->name,
                    ncmds, hq->nslots);
  for (size_t i = 0; i < ncmds; i++) {
    int r = lower_one(&cmds[i], t);
    if (r < 0) {
      const char *op = (unsigned)cmds[i].op < sizeof(op_names) / sizeof(op_names[0]) ? op_names[cmds[i].op] : "?";
      return bg_error_context(r, "cpu: command %zu (%s): ", i, op);
    }
  }
  return 0;
}
