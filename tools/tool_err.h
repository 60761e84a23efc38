/* tools/tool_err.h: error messages of the command-line tools, and `--json` on every path.
 *
 * Every error a tool reports goes through tool_err: "TOOL: message" on stderr, and the message kept. When --json
 * was given and the tool ends without having written its JSON document to stdout (a usage error, a bad --dev or
 * DEV, an unknown device), tool_exit prints {"error": "<the same text>"} on stdout, so a program reading the tool's
 * JSON always gets one document. The exit status is unchanged. */
#ifndef BG_TOOLS_TOOL_ERR_H
#define BG_TOOLS_TOOL_ERR_H

#include <stdbool.h>
#include <stdio.h>

/* The tool's name for the prefix ("hcq_smi", "bg-bringup", "bg-usb") and whether --json was given (may be set
 * again once the options are parsed). Forgets earlier messages. */
void tool_err_setup(const char *tool, bool json);
void tool_err_json(bool json);
/* "TOOL: <fmt>\n" on stderr; the text (without the prefix) is kept for the JSON error document. */
void tool_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* More lines of the same message (a list of GPUs): written as they are, kept too. */
void tool_err_more(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The message text kept so far ("" when none). */
const char *tool_err_text(void);
/* Called by the JSON writer when a document starts on stdout. */
void tool_err_doc_started(const FILE *f);
/* The status to exit with: with --json, a failure (rc != 0) that wrote no document prints {"error": ...}. */
int tool_exit(int rc);

#endif
