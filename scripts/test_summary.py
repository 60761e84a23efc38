#!/usr/bin/env python3
"""Add up the results of meson test logs: Check summaries ("NN%: Checks: N, Failures: F, Errors: E"),
the plain lines of our own runners ("name: N passed, N failed, N skipped"), and plain pass/fail for
tests that print neither. Prints the device runs that happened (tests run with DEV set, per build) with
the LLVM each build used (its bg_config.h), Check's totals and the final "N passed, N failed, N skipped"
line; exits 1 on any failure."""
import collections
import json
import os
import re
import sys

check_re = re.compile(r"^\d+%: Checks: (\d+), Failures: (\d+), Errors: (\d+)", re.M)
plain_re = re.compile(r"^(?:[\w-]+: )?(\d+) passed, (\d+) failed(?:, (\d+) skipped)?\s*$", re.M)

passed = failed = skipped = 0
checks = check_fail = check_err = 0
device_runs = collections.OrderedDict()  # build -> device -> [tests run, tests passed]
llvm = {}
for path in sys.argv[1:]:
    label = path.split("/")[0]
    config = os.path.join(os.path.dirname(os.path.dirname(path)), "bg_config.h")
    try:
        with open(config) as f:
            m = re.search(r'^#define BG_LLVM_VERSION "(.*)"', f.read(), re.M)
        llvm[label] = m.group(1) if m else "unknown"
    except OSError:
        llvm[label] = "unknown (no bg_config.h)"
    runs = device_runs.setdefault(label, collections.OrderedDict())
    with open(path) as f:
        for line in f:
            t = json.loads(line)
            cmd = t.get("command") or []
            dev = next((cmd[i + 1] for i in range(len(cmd) - 1) if cmd[i] == "--dev"), None)
            dev = dev or (t.get("env") or {}).get("DEV")
            if dev and t["result"] != "SKIP":
                r = runs.setdefault(dev, [0, 0])
                r[0] += 1
                r[1] += t["result"] in ("OK", "EXPECTEDFAIL")
            out = (t.get("stdout") or "") + (t.get("stderr") or "")
            ok = t["result"] in ("OK", "EXPECTEDFAIL")
            cs = check_re.findall(out)
            ps = plain_re.findall(out)
            if cs:
                for n, fl, er in cs:
                    n, fl, er = int(n), int(fl), int(er)
                    checks += n; check_fail += fl; check_err += er
                    passed += n - fl - er; failed += fl + er
                if not ok and not any(int(fl) + int(er) for _, fl, er in cs):
                    failed += 1  # crashed outside a test case
            elif ps:
                p, fl, sk = ps[-1]
                passed += int(p); failed += int(fl); skipped += int(sk or 0)
                if not ok and int(fl) == 0:
                    failed += 1
            elif t["result"] == "SKIP":
                skipped += 1
            elif ok:
                passed += 1
            else:
                failed += 1
            print(f"  {label:10s} {t['name']:28s} {t['result']}")
for label, runs in device_runs.items():
    devs = ", ".join(f"{d} ({ok}/{n} suites passed)" for d, (n, ok) in runs.items()) or "none"
    print(f"device runs in {label}: {devs}; LLVM {llvm[label]}")
print(f"Check: {100 * (checks - check_fail - check_err) // max(checks, 1)}%: Checks: {checks}, "
      f"Failures: {check_fail}, Errors: {check_err}")
print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed else 0)
