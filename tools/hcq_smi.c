/* tools/hcq_smi.c: hcq_smi, the GPU management tool (tinygrad's extra/hcq/hcq_smi.py). Commands are rows of `cmds`; options are parsed once for all of them and
 * checked against what each command accepts; the device selector is parsed by smi_sel_parse. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/smi.h"
#include "tools/tool_err.h"

#define DEFAULT_GRACE_S 3.0
#define MAX_GRACE_S 3600.0
#define DEFAULT_INTERVAL_S 2.0
#define MIN_INTERVAL_S 0.1
#define MAX_INTERVAL_S 86400.0
#define MAX_COUNT 1000000000L

static int cmd_help(const smi_opts *o);

static const smi_cmd cmds[] = {
  {"list", "[--json] [--all] [--dev DEV]",
   "list PCI GPUs (BDF, ids, chip, driver, BARs, link, lock owner pid, VRAM used and total; for AMD\n"
   "      GPUs baregpu can open: temperature, power, clocks and activity from the SMU metrics), ASM24 USB\n"
   "      bridges and the openable devices",
   SMI_OPT_JSON | SMI_OPT_ALL | SMI_OPT_DEV | SMI_OPT_ENVDEV, smi_cmd_list},
  {"watch", "[-n SECONDS] [--count N] [--json] [--dev DEV]",
   "a table of every GPU's sensors (temperature, power, clocks, activity), VRAM used and total and the\n"
   "      device memory of each process holding it, refreshed every SECONDS (default 2) until Ctrl-C or N\n"
   "      refreshes; --json: one JSON object a line per refresh",
   SMI_OPT_JSON | SMI_OPT_DEV | SMI_OPT_ENVDEV | SMI_OPT_INTERVAL | SMI_OPT_COUNT, smi_cmd_watch},
  {"pids", "[--json] [--all | --dev DEV | DEVICE]",
   "processes holding GPUs (device, pid, process name, device memory), from the lock files; every\n"
   "      device by default",
   SMI_OPT_JSON | SMI_OPT_ALL | SMI_OPT_DEV | SMI_OPT_ARG | SMI_OPT_POSDEV | SMI_OPT_ENVDEV, smi_cmd_pids},
  {"kill_pids", "[--json] [--grace SECONDS] [--all | --dev DEV | DEVICE]",
   "stop every process holding a GPU (or the selected ones): SIGTERM, then SIGKILL to those still\n"
   "      holding it after the grace period; never hcq_smi itself; reports what it did",
   SMI_OPT_JSON | SMI_OPT_ALL | SMI_OPT_DEV | SMI_OPT_ARG | SMI_OPT_POSDEV | SMI_OPT_GRACE | SMI_OPT_ENVDEV,
   smi_cmd_kill_pids},
  {"unbind", "[--json] (--dev DEV | DEVICE | --all)",
   "hand a GPU from its kernel driver to baregpu (tinygrad's rmmod, for one device); prints the\n"
   "      driver it was bound to, for bind",
   SMI_OPT_JSON | SMI_OPT_ALL | SMI_OPT_DEV | SMI_OPT_ARG | SMI_OPT_POSDEV, smi_cmd_unbind},
  {"bind", "[--json] [--driver NAME] (--dev DEV | DEVICE | --all)",
   "hand a GPU back to a kernel driver: NAME, else amdgpu for AMD (0x1002), nvidia for NVIDIA (0x10de)",
   SMI_OPT_JSON | SMI_OPT_ALL | SMI_OPT_DEV | SMI_OPT_ARG | SMI_OPT_POSDEV | SMI_OPT_DRIVER, smi_cmd_bind},
  {"reset", "[--json] [--function] (--dev DEV | DEVICE | --all)",
   "an AMD GPU baregpu can open (no kernel driver, not held by another process): SMU mode1 reset\n"
   "      through am/ (sOS and the SMU stop; the next bg-bringup boots cold); other GPUs, or with\n"
   "      --function: PCI function reset through sysfs (writes 1 to /sys/bus/pci/devices/BDF/reset)",
   SMI_OPT_JSON | SMI_OPT_ALL | SMI_OPT_DEV | SMI_OPT_ARG | SMI_OPT_POSDEV | SMI_OPT_FUNCTION, smi_cmd_reset},
  {"help", "[COMMAND]", "show this help, or one command's", SMI_OPT_ARG, cmd_help},
};
#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

static const smi_cmd *find_cmd(const char *name) {
  for (size_t i = 0; i < NCMDS; i++)
    if (strcmp(cmds[i].name, name) == 0) return &cmds[i];
  return NULL;
}

static void cmd_names(char *buf, size_t n) {
  size_t len = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < NCMDS && len < n; i++) len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? ", " : "", cmds[i].name);
}

static void usage(FILE *f, const smi_cmd *only) {
  fprintf(f, "usage: hcq_smi COMMAND [OPTIONS] [DEVICE]\n\ncommands:\n");
  for (size_t i = 0; i < NCMDS; i++) {
    if (only && only != &cmds[i]) continue;
    fprintf(f, "  %s %s\n      %s\n", cmds[i].name, cmds[i].args, cmds[i].summary);
  }
  fprintf(f,
          "\ndevices:\n"
          "  DEVICE, --dev DEV  a PCI address (0000:03:00.0 or 03:00.0); a DEV string\n"
          "                     [IFACE[:INDICES]+]KIND[:INDEX] such as AMD, NV:1, PCI+AMD:1, PCI:0-1+NV\n"
          "                     (indices count the GPUs of that kind);\n"
          "                     or, for list, pids and kill_pids, a USB bridge's lock name usb:BUS-ADDR;\n"
          "                     MOCKPCI+AMD: the emulated GPU of tests/mockgpu's plugin (created in\n"
          "                     this process and booted for list and reset); MOCKUSB+AMD (list,\n"
          "                     watch): the emulated GPU behind its emulated ASM24 bridge\n"
          "  DEV=...            list, watch, pids and kill_pids read the DEV variable as --dev when no\n"
          "                     --dev, DEVICE or --all is given (DEV=\"\" is no selector); unbind,\n"
          "                     bind and reset act only on a device named on the command line\n"
          "  --all              list: every PCI function, not only GPUs, and the emulated devices\n"
          "                     (the GPUs of MOCKPCI+AMD and MOCKUSB+AMD with their SMU metrics,\n"
          "                     when the plugin is built);\n"
          "                     unbind, bind, reset: every GPU the selector matches (all without one),\n"
          "                     which they need when a selector matches several; pids and kill_pids\n"
          "                     take every device when no selector is given\n"
          "\noptions:\n"
          "  --json             print one JSON document on stdout instead of text, also on failure;\n"
          "                     an error before the command ran (usage, bad DEV): {\"error\": \"...\"};\n"
          "                     messages also go to stderr\n"
          "  -n SECONDS         watch: seconds between refreshes (default %.0f, %.1f..%.0f)\n"
          "  --count N          watch: stop after N refreshes (default: until Ctrl-C)\n"
          "  --driver NAME      bind: the kernel driver to bind (default by vendor)\n"
          "  --function         reset: a PCI function reset, also for AMD GPUs a mode1 reset could reset\n"
          "  --grace SECONDS    kill_pids: wait after SIGTERM before SIGKILL (default %.0f, 0..%.0f)\n"
          "  -h, --help         show this help (with a command: that command's)\n"
          "\nenvironment:\n"
          "  BG_SYSFS_ROOT  use the sysfs tree under this root instead of /sys and the real PCI bus\n"
          "  BG_LOCK_DIR    directory of the device lock files (default /run/lock, else /tmp)\n"
          "  BG_PROC_ROOT   read process names from <root>/<pid>/comm first (tests), then /proc\n"
          "  DEV            the device of list, watch, pids and kill_pids when none is given (see above)\n"
          "  BG_MOCK_PLUGIN the emulated-device module for MOCKPCI+AMD (default: the build tree's);\n"
          "                 MOCKGPU_CHIP=gfx11|gfx12|gfx942 picks the emulated chip\n"
          "  BG_DEBUG       0..4, log to stderr\n"
          "\nexit status: 0 success; 1 a scan or an action failed: not root (run as root), device in\n"
          "use by pid N (stop it: hcq_smi kill_pids DEVICE), no reset method, an SMU that does not\n"
          "answer a mode1 reset (use --function), a holder that did not stop; 2 usage error, or\n"
          "an unknown device or a bad --dev/DEV (the message lists the GPUs)\n",
          DEFAULT_INTERVAL_S, MIN_INTERVAL_S, MAX_INTERVAL_S, DEFAULT_GRACE_S, MAX_GRACE_S);
}

static int cmd_help(const smi_opts *o) {
  const smi_cmd *c = NULL;
  if (o->arg && !(c = find_cmd(o->arg))) {
    char names[256];
    cmd_names(names, sizeof(names));
    tool_err("help: unknown command '%s'; commands: %s", o->arg, names);
    return SMI_EXIT_USAGE;
  }
  usage(stdout, c);
  return SMI_EXIT_OK;
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  tool_err("%s; see hcq_smi --help", msg);
  return SMI_EXIT_USAGE;
}

/* A number of seconds (or a count) in [lo, hi]. */
static bool parse_num(const char *s, double lo, double hi, double *out) {
  char *end = NULL;
  double v = strtod(s, &end);
  if (end == s || *end || !isfinite(v) || v < lo || v > hi) return false;
  *out = v;
  return true;
}

/* "--name VALUE" or "--name=VALUE": 1 when argv[*i] is the option (value in *val), 0 when it is
 * another, -1 when the value is missing. */
static int opt_value(int argc, char **argv, int *i, const char *name, const char **val) {
  size_t len = strlen(name);
  const char *a = argv[*i];
  if (strncmp(a, name, len) != 0 || (a[len] != '\0' && a[len] != '=')) return 0;
  if (a[len] == '=') *val = a + len + 1;
  else if (*i + 1 < argc) *val = argv[++*i];
  else return -1;
  return 1;
}

static bool driver_name_ok(const char *d) {
  if (!*d || strlen(d) >= 64) return false;
  for (const char *c = d; *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_' || *c == '-'))
      return false;
  return true;
}

/* Parse and run; main() turns a failure under --json into a JSON error document (tool_exit). */
static int run(int argc, char **argv) {
  smi_opts o = {0};
  o.grace_s = DEFAULT_GRACE_S;
  o.interval_s = DEFAULT_INTERVAL_S;
  const char *cmd_name = NULL, *dev = NULL, *grace = NULL, *interval = NULL, *count = NULL;
  unsigned seen = 0;
  bool help = false;
  /* --json first, so that even an error in an option before it is reported as JSON */
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--json") == 0) tool_err_json(true);
  static const struct {
    const char *name;
    unsigned bit;
  } valued[] = {{"--dev", SMI_OPT_DEV}, {"--driver", SMI_OPT_DRIVER}, {"--grace", SMI_OPT_GRACE},
                {"-n", SMI_OPT_INTERVAL}, {"--count", SMI_OPT_COUNT}};
  enum { NVALUED = sizeof(valued) / sizeof(valued[0]) };
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int k = 0, got = 0;
    const char *val = NULL;
    for (; k < NVALUED && !(got = opt_value(argc, argv, &i, valued[k].name, &val)); k++) {}
    if (got < 0) return usage_error("%s needs a value", valued[k].name);
    if (got > 0) {
      const char **slots[NVALUED] = {&dev, &o.driver, &grace, &interval, &count};
      const char **slot = slots[k];
      if (*slot) return usage_error("%s given twice ('%s' and '%s')", valued[k].name, *slot, val);
      *slot = val;
      seen |= valued[k].bit;
    } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      help = true;
    } else if (strcmp(a, "--json") == 0) {
      o.json = true;
      seen |= SMI_OPT_JSON;
    } else if (strcmp(a, "--function") == 0) {
      o.function = true;
      seen |= SMI_OPT_FUNCTION;
    } else if (strcmp(a, "--all") == 0) {
      o.all = true;
      seen |= SMI_OPT_ALL;
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
    char names[256];
    cmd_names(names, sizeof(names));
    if (cmd_name) tool_err("unknown command '%s'; commands: %s; see hcq_smi --help", cmd_name, names);
    else tool_err("no command given; commands: %s; see hcq_smi --help", names);
    return SMI_EXIT_USAGE;
  }
  static const struct {
    unsigned bit;
    const char *name;
  } opt_names[] = {{SMI_OPT_JSON, "--json"}, {SMI_OPT_ALL, "--all"}, {SMI_OPT_DEV, "--dev"},
                   {SMI_OPT_DRIVER, "--driver"}, {SMI_OPT_GRACE, "--grace"}, {SMI_OPT_FUNCTION, "--function"},
                   {SMI_OPT_INTERVAL, "-n"}, {SMI_OPT_COUNT, "--count"}};
  for (size_t b = 0; b < sizeof(opt_names) / sizeof(opt_names[0]); b++)
    if ((seen & opt_names[b].bit) && !(c->opts & opt_names[b].bit))
      return usage_error("%s does not take %s", c->name, opt_names[b].name);
  if (o.arg && !(c->opts & SMI_OPT_ARG)) return usage_error("%s takes no argument, got '%s'", c->name, o.arg);
  if (o.arg && (c->opts & SMI_OPT_POSDEV)) {
    if (dev) return usage_error("%s: give the device once, not both '%s' and --dev %s", c->name, o.arg, dev);
    dev = o.arg;
  }
  if (o.driver && !driver_name_ok(o.driver))
    return usage_error("--driver: bad kernel driver name '%s' (letters, digits, '_' and '-')", o.driver);
  if (grace && !parse_num(grace, 0, MAX_GRACE_S, &o.grace_s))
    return usage_error("--grace: '%s' is not a number of seconds from 0 to %.0f", grace, MAX_GRACE_S);
  if (interval && !parse_num(interval, MIN_INTERVAL_S, MAX_INTERVAL_S, &o.interval_s))
    return usage_error("-n: '%s' is not a number of seconds from %.1f to %.0f", interval, MIN_INTERVAL_S,
                       MAX_INTERVAL_S);
  double cnt = 0;
  if (count && (!parse_num(count, 1, (double)MAX_COUNT, &cnt) || cnt != (double)(long)cnt))
    return usage_error("--count: '%s' is not a whole number from 1 to %ld", count, MAX_COUNT);
  o.count = (long)cnt;
  /* DEV: the device of the reading commands when none is named (as every baregpu program reads it); "" is none */
  if (!dev && !o.all && (c->opts & SMI_OPT_ENVDEV)) {
    const char *env = getenv("DEV");
    if (env && *env) {
      dev = env;
      o.dev_from_env = true;
    }
  }
  if (dev) {
    char err[512];
    if (smi_sel_parse(dev, &o, err, sizeof(err)) < 0) {
      if (o.dev_from_env && strncmp(err, "DEV=", 4) == 0) tool_err("%s", err); /* the parser names DEV=... itself */
      else tool_err("%s%s: %s", o.dev_from_env ? "DEV=" : dev == o.arg ? "device " : "--dev ", dev, err);
      return SMI_EXIT_USAGE;
    }
  }
  /* MOCKPCI+AMD: the emulated GPUs exist only in this process; start them and run the command on their tree,
   * booted first where the command needs a running SMU (list's metrics, reset's mode1 reset). */
  smi_mock_env menv;
  if (smi_sel_is_mockpci(&o)) {
    char err[768];
    bool boot = c->run == smi_cmd_list || c->run == smi_cmd_watch || c->run == smi_cmd_reset;
    if (smi_mock_enter(o.target.kind, boot, &menv, err, sizeof(err)) < 0) {
      tool_err("%s: %s", c->name, err);
      return SMI_EXIT_FAIL;
    }
  }
  return c->run(&o);
}

int main(int argc, char **argv) {
  tool_err_setup("hcq_smi", false);
  return tool_exit(run(argc, argv));
}
