/* tests/unit/usb/test_tool.c: bg-usb (tools/bg_usb.c, built with -DBG_USB_NO_MAIN) in-process against the
 * emulated bridge: --mock selects it through bg_usb_tool_mock_open. Output goes to a temp file and is checked
 * (text and --json, the latter with the strict validator of tests/unit/tools); usage errors exit 2, device
 * errors exit 1 with a message. --json is JSON on every path ({"error": ...} for errors, options after the
 * command too); --dev and DEV name the bridge like every baregpu program, a bad one exits 2. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "json_check.h"
#include "usb_test.h"

typedef int (*bg_usb_tool_open_fn)(int index, bg_usb_transport **out);
extern bg_usb_tool_open_fn bg_usb_tool_mock_open;
int bg_usb_main(int argc, char **argv);

static int open_mock(int index, bg_usb_transport **out) {
  if (index != 0) return bg_error(BG_ENODEV, "mockusb: no emulated bridge %d", index);
  *out = mock_asm24_transport(UB);
  return *out ? 0 : -BG_ENOMEM;
}

static char out[1 << 16];

/* Run bg-usb with args (NULL-terminated), stdout captured into out. */
static int run(const char *const *args) {
  char *argv[16];
  int argc = 0;
  argv[argc++] = (char *)"bg-usb";
  for (; args[argc - 1]; argc++) argv[argc] = (char *)args[argc - 1];
  char path[] = "/tmp/bg_usb_out_XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  fflush(stdout);
  int saved = dup(1);
  dup2(fd, 1);
  int r = bg_usb_main(argc, argv);
  fflush(stdout);
  dup2(saved, 1);
  close(saved);
  lseek(fd, 0, SEEK_SET);
  ssize_t n = read(fd, out, sizeof(out) - 1);
  out[n > 0 ? n : 0] = 0;
  close(fd);
  unlink(path);
  return r;
}

static void expect_json(void) {
  char err[128];
  ck_assert_msg(json_check(out, strlen(out), err, sizeof(err)) == 0, "invalid JSON (%s):\n%s", err, out);
}

START_TEST(tool_against_mock) {
  bg_usb_tool_mock_open = open_mock;
  unsetenv("DEV"); /* bg-usb reads it without --dev/--index/--mock */
  ck_assert_int_eq(run((const char *[]){"--mock", "info", NULL}), 0);
  ck_assert_msg(strstr(out, "GPU 04:00.0: 1002:744c") && strstr(out, "L0, up") && strstr(out, "BAR5: 0x010000000"),
                "%s", out);
  ck_assert_int_eq(run((const char *[]){"--mock", "--json", "info", NULL}), 0);
  expect_json();
  ck_assert_msg(strstr(out, "\"gpu_vendor\": \"0x1002\"") || strstr(out, "\"gpu_vendor\":\"0x1002\""), "%s", out);
  /* MEMSIZE (dword 0xde3 of BAR5 at 0x10000000): 256 MiB */
  ck_assert_int_eq(run((const char *[]){"--mock", "read", "0x1000378c", NULL}), 0);
  ck_assert_msg(strstr(out, "01000378c: 00 01 00 00"), "%s", out);
  ck_assert_int_eq(run((const char *[]){"--mock", "write", "0x800000100", "0xdeadbeef", NULL}), 0);
  uint32_t v;
  memcpy(&v, mock_amd_vram(UG) + 0x100, 4);
  ck_assert_uint_eq(v, 0xdeadbeefu);
  ck_assert_int_eq(run((const char *[]){"--mock", "--json", "read", "0x800000100", "8", NULL}), 0);
  expect_json();
  ck_assert_msg(strstr(out, "239") && strstr(out, "222"), "%s", out);
  ck_assert_int_eq(run((const char *[]){"--mock", "cfg-read", "04:00.0", "0", NULL}), 0);
  ck_assert_msg(strstr(out, "04:00.0+0x000: 0x744c1002"), "%s", out);
  ck_assert_int_eq(run((const char *[]){"--mock", "cfg-read", "02:00.0", "0x18", NULL}), 0);
  ck_assert_msg(strstr(out, "0x00040300"), "%s", out);
  ck_assert_int_eq(run((const char *[]){"--mock", "xwrite", "0xA804", "0x5a", NULL}), 0);
  ck_assert_int_eq(run((const char *[]){"--mock", "xread", "0xA800", "8", NULL}), 0);
  ck_assert_msg(strstr(out, "a800: 00 00 00 00 5a 00 00 00"), "%s", out);
  ck_assert_int_eq(run((const char *[]){"--mock", "copy-test", "3", NULL}), 0);
  ck_assert_msg(strstr(out, "bytes match") && strstr(out, "copy in  3145728 bytes"), "%s", out);
  ck_assert_int_eq(run((const char *[]){"--mock", "--json", "copy-test", "1", NULL}), 0);
  expect_json();
  /* errors */
  ck_assert_int_eq(run((const char *[]){"--mock", "cfg-read", "07:00.0", "0", NULL}), 1);
  ck_assert_int_eq(run((const char *[]){"--mock", "read", "0x30000000", NULL}), 1);
  mock_asm24_clear_failures(UB);  /* the unassigned read is a recorded model failure */
  ck_assert_int_eq(run((const char *[]){"--mock", "cfg-read", "04:00.0", "3", "2", NULL}), 2);
  ck_assert_int_eq(run((const char *[]){"--mock", "frobnicate", NULL}), 2);
  ck_assert_int_eq(run((const char *[]){"--bogus", NULL}), 2);
  ck_assert_int_eq(run((const char *[]){"--mock", "--index", "1", "info", NULL}), 1);
  bg_usb_tool_mock_open = NULL;
  ck_assert_int_eq(run((const char *[]){"--mock", "info", NULL}), 1);
}
END_TEST


/* out is one JSON document {"error": ...} containing text */
static void expect_json_error(const char *text) {
  expect_json();
  ck_assert_msg(strncmp(out, "{\n  \"error\": \"", 13) == 0 && strstr(out, text), "no error '%s' in:\n%s", text, out);
}

START_TEST(tool_json_and_dev) {
  bg_usb_tool_mock_open = open_mock;
  unsetenv("DEV");
  /* options after the command count (bg-usb scan --json printed text) */
  ck_assert_int_eq(run((const char *[]){"info", "--mock", "--json", NULL}), 0);
  expect_json();
  ck_assert_msg(strstr(out, "\"gpu_device\": \"0x744c\""), "%s", out);
  int r = run((const char *[]){"scan", "--json", NULL});
  ck_assert_msg(r == 0 || r == 1, "scan: %d", r);
  expect_json(); /* the bridges, or {"error"} where this machine has no usbfs */
  ck_assert_msg(strstr(out, r == 0 ? "\"bridges\": [" : "\"error\": \"scan: "), "%s", out);
  /* errors under --json: one document with the message, the status unchanged */
  ck_assert_int_eq(run((const char *[]){"--json", "frobnicate", NULL}), 2);
  expect_json_error("unknown command 'frobnicate'");
  ck_assert_int_eq(run((const char *[]){"--json", NULL}), 2);
  expect_json_error("no command given");
  ck_assert_int_eq(run((const char *[]){"--mock", "cfg-read", "04:00.0", "3", "2", "--json", NULL}), 2);
  expect_json_error("cfg-read BUS:DEV.FN OFF [SIZE]: size 1, 2 or 4");
  ck_assert_int_eq(run((const char *[]){"--json", "--mock", "read", "0x30000000", NULL}), 1);
  expect_json_error("read: ");
  mock_asm24_clear_failures(UB);
  ck_assert_int_eq(run((const char *[]){"--json", "--mock", "--index", "1", "info", NULL}), 1);
  expect_json_error("open: mockusb: no emulated bridge 1");
  /* --dev and DEV: MOCKUSB+AMD[:N] is the emulated bridge N, other kinds and interfaces are usage errors */
  ck_assert_int_eq(run((const char *[]){"--dev", "MOCKUSB+AMD", "info", NULL}), 0);
  ck_assert_msg(strstr(out, "GPU 04:00.0: 1002:744c"), "%s", out);
  ck_assert_int_eq(run((const char *[]){"--dev", "MOCKUSB+AMD:1", "info", NULL}), 1);
  ck_assert_int_eq(run((const char *[]){"--json", "--dev", "PCI+AMD", "info", NULL}), 2);
  expect_json_error("--dev PCI+AMD: not an ASM24 USB bridge");
  ck_assert_int_eq(run((const char *[]){"--dev", "FOO", "info", NULL}), 2);
  ck_assert_int_eq(run((const char *[]){"--dev", "MOCKUSB+AMD", "--index", "0", "info", NULL}), 2);
  setenv("DEV", "MOCKUSB+AMD", 1);
  ck_assert_int_eq(run((const char *[]){"info", NULL}), 0);
  ck_assert_msg(strstr(out, "GPU 04:00.0: 1002:744c"), "%s", out);
  setenv("DEV", "CPU", 1);
  ck_assert_int_eq(run((const char *[]){"--json", "info", NULL}), 2);
  expect_json_error("DEV=CPU: not an ASM24 USB bridge");
  ck_assert_int_eq(run((const char *[]){"--dev", "MOCKUSB+AMD", "info", NULL}), 0); /* --dev wins */
  ck_assert_int_eq(run((const char *[]){"--mock", "info", NULL}), 0);               /* --mock: DEV not read */
  unsetenv("DEV");
  bg_usb_tool_mock_open = NULL;
}
END_TEST

Suite *usb_tool_suite(void) {
  Suite *s = suite_create("usb-tool");
  TCase *tc = ux_tcase("bg-usb", false);
  tcase_add_test(tc, tool_against_mock);
  tcase_add_test(tc, tool_json_and_dev);
  suite_add_tcase(s, tc);
  return s;
}
