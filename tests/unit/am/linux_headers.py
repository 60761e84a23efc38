"""tests/unit/am/linux_headers.py: the Linux AMD headers the oracles of tests/unit/am read, from Debian's
linux-source-6.12 package (the version am/regs/ was generated from): asic_reg/ (register offsets) and
pm/swsmu/inc/pmfw_if/ (SMU tables), extracted once from /usr/src/linux-source-6.12.tar.xz into a cache
folder. A missing tarball is a failure naming the package to install."""
import fcntl
import os
import subprocess
import sys

TARBALL = '/usr/src/linux-source-6.12.tar.xz'
PACKAGE = 'linux-source-6.12'
TOP = 'linux-source-6.12'
PARTS = ['drivers/gpu/drm/amd/include/asic_reg', 'drivers/gpu/drm/amd/pm/swsmu/inc/pmfw_if']


def fail(who, msg):
    print(f'{who}: FAIL: {msg}', file=sys.stderr)
    sys.exit(1)


def linux_root(who, cache):
    """<cache>/linux-source-6.12 holding PARTS; extracted under a lock (the tests may run in parallel)."""
    os.makedirs(cache, exist_ok=True)
    root = os.path.join(cache, TOP)
    stamp = os.path.join(cache, 'extracted.stamp')
    with open(os.path.join(cache, 'extract.lock'), 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(stamp):
            return root
        if not os.path.exists(TARBALL):
            fail(who, f'{TARBALL} is missing: install the Debian package {PACKAGE} '
                 f'(apt-get install {PACKAGE}; scripts/setup.sh does)')
        r = subprocess.run(['tar', '-C', cache, '-xJf', TARBALL, '--wildcards'] + [f'{TOP}/{p}/*' for p in PARTS],
                           capture_output=True, text=True)
        if r.returncode != 0:
            fail(who, f'extracting {" ".join(PARTS)} from {TARBALL}: {r.stderr.strip()}')
        open(stamp, 'w').close()
    return root
