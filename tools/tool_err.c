/* tools/tool_err.c: error messages of the tools and the JSON error document (tools/tool_err.h). */
#include <stdarg.h>
#include <string.h>

#include "tools/json.h"
#include "tools/tool_err.h"

static struct {
  const char *tool;
  bool json, doc;
  char text[4096];
} E = {.tool = "baregpu"};

void tool_err_setup(const char *tool, bool json) {
  E.tool = tool;
  E.json = json;
  E.doc = false;
  E.text[0] = '\0';
}

void tool_err_json(bool json) { E.json = json; }

static void keep(const char *fmt, va_list ap) {
  size_t len = strlen(E.text);
  if (len + 1 < sizeof(E.text)) vsnprintf(E.text + len, sizeof(E.text) - len, fmt, ap);
}

void tool_err(const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "%s: ", E.tool);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  /* One document carries every message of the run, a line each. */
  size_t len = strlen(E.text);
  if (len && len + 1 < sizeof(E.text)) strcat(E.text, "\n");
  va_start(ap, fmt);
  keep(fmt, ap);
  va_end(ap);
}

void tool_err_more(const char *fmt, ...) {
  va_list ap;
  if (!fmt) return; /* (and GCC's -fsanitize=undefined build then sees fmt non-null below) */
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  va_start(ap, fmt);
  keep(fmt, ap);
  va_end(ap);
}

const char *tool_err_text(void) { return E.text; }

void tool_err_doc_started(const FILE *f) {
  if (f == stdout) E.doc = true;
}

int tool_exit(int rc) {
  if (!E.json || rc == 0 || E.doc) return rc;
  /* Trailing newlines of multi-line messages are not part of the text. */
  size_t len = strlen(E.text);
  while (len && E.text[len - 1] == '\n') E.text[--len] = '\0';
  jw w;
  jw_init(&w, stdout);
  jw_obj_begin(&w);
  jw_kstr(&w, "error", E.text[0] ? E.text : "failed");
  jw_obj_end(&w);
  jw_finish(&w);
  fflush(stdout);
  return rc;
}
