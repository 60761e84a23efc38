/* tools/hcq_smi.c: hcq_smi, the device inspection tool (tinygrad's extra/hcq/hcq_smi.py, reference
 * am.md 8.1 and nv.md 8). Commands are rows of `cmds`; options are parsed once for all of them. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tools/smi.h"

static int cmd_help(const smi_opts *o);

static const smi_cmd cmds[] = {
  {"list", "[--json] [--all] [--dev DEV]",
   "list PCI GPUs (BDF, ids, chip, driver, BARs, link), ASM24 USB bridges and the openable devices",
   SMI_OPT_JSON | SMI_OPT_ALL | SMI_OPT_DEV, smi_cmd_list},
  {"help", "[COMMAND]", "show this help, or one command's", SMI_OPT_ARG, cmd_help},
};
#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

static const smi_cmd *find_cmd(const char *name) {
  for (size_t i = 0; i < NCMDS; i++)
    if (strcmp(cmds[i].name, name) == 0) return &cmds[i];
  return NULL;
}

static void cmd_names(FILE *f) {
  for (size_t i = 0; i < NCMDS; i++) fprintf(f, "%s%s", i ? ", " : "", cmds[i].name);
}

static void usage(FILE *f, const smi_cmd *only) {
  fprintf(f, "usage: hcq_smi COMMAND [OPTIONS]\n\ncommands:\n");
  for (size_t i = 0; i < NCMDS; i++) {
    if (only && only != &cmds[i]) continue;
    fprintf(f, "  %s %s\n      %s\n", cmds[i].name, cmds[i].args, cmds[i].summary);
  }
  fprintf(f,
          "\noptions:\n"
          "  --json      print one JSON document instead of text\n"
          "  --all       list every PCI function, not only AMD/NVIDIA GPUs, and the emulated devices\n"
          "  --dev DEV   only devices matching DEV=[IFACE[:INDICES]+]KIND[:INDEX], e.g. AMD, NV:1,\n"
          "              PCI+AMD, USB+AMD, PCI:0-1+NV (list does not read the DEV variable)\n"
          "  -h, --help  show this help\n"
          "\nenvironment:\n"
          "  BG_SYSFS_ROOT  scan the sysfs tree under this root instead of the real PCI bus\n"
          "  BG_DEBUG       0..4, log to stderr\n"
          "\nexit status: 0 success, 1 a scan failed, 2 usage error\n");
}

static int cmd_help(const smi_opts *o) {
  const smi_cmd *c = NULL;
  if (o->arg && !(c = find_cmd(o->arg))) {
    fprintf(stderr, "hcq_smi: help: unknown command '%s'; commands: ", o->arg);
    cmd_names(stderr);
    fputc('\n', stderr);
    return SMI_EXIT_USAGE;
  }
  usage(stdout, c);
  return SMI_EXIT_OK;
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("hcq_smi: ", stderr);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputs("; see hcq_smi --help\n", stderr);
  return SMI_EXIT_USAGE;
}

/* Did the DEV string name an explicit :INDEX after the kind? */
static bool has_index(const char *dev) {
  const char *plus = strrchr(dev, '+');
  return strchr(plus ? plus + 1 : dev, ':') != NULL;
}

int main(int argc, char **argv) {
  smi_opts o = {0};
  const char *cmd_name = NULL;
  unsigned seen = 0;
  bool help = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      help = true;
    } else if (strcmp(a, "--json") == 0) {
      o.json = true;
      seen |= SMI_OPT_JSON;
    } else if (strcmp(a, "--all") == 0) {
      o.all = true;
      seen |= SMI_OPT_ALL;
    } else if (strcmp(a, "--dev") == 0 || strncmp(a, "--dev=", 6) == 0) {
      if (o.dev) return usage_error("--dev given twice ('%s' and '%s')", o.dev, a);
      if (a[5] == '=') o.dev = a + 6;
      else if (i + 1 < argc) o.dev = argv[++i];
      else return usage_error("--dev needs a value");
      seen |= SMI_OPT_DEV;
    } else if (a[0] == '-' && a[1] != '\0') {
      return usage_error("unknown option '%s'", a);
    } else if (!cmd_name) {
      cmd_name = a;
    } else if (!o.arg) {
      o.arg = a;
    } else {
      return usage_error("unexpected argument '%s' after '%s'", a, o.arg);
    }
  }
  const smi_cmd *c = cmd_name ? find_cmd(cmd_name) : NULL;
  if (help) {
    usage(stdout, c);
    return SMI_EXIT_OK;
  }
  if (!cmd_name || !c) {
    fprintf(stderr, "hcq_smi: %s%s%s; commands: ", cmd_name ? "unknown command '" : "no command given",
            cmd_name ? cmd_name : "", cmd_name ? "'" : "");
    cmd_names(stderr);
    fputs("; see hcq_smi --help\n", stderr);
    return SMI_EXIT_USAGE;
  }
  static const char *const opt_names[] = {"--json", "--all", "--dev"};
  for (unsigned b = 0; b < 3; b++)
    if ((seen & (1u << b)) && !(c->opts & (1u << b))) return usage_error("%s does not take %s", c->name, opt_names[b]);
  if (o.arg && !(c->opts & SMI_OPT_ARG)) return usage_error("%s takes no argument, got '%s'", c->name, o.arg);
  if (o.dev) {
    if (bg_target_parse(o.dev, &o.target) < 0) {
      fprintf(stderr, "hcq_smi: --dev: %s\n", bg_last_error());
      return SMI_EXIT_USAGE;
    }
    o.dev_has_index = has_index(o.dev);
  }
  return c->run(&o);
}
