#!/usr/bin/env python3
"""tests/unit/nv/smi_nv_check.py: `hcq_smi list` shows the emulated NVIDIA GPUs (MOCKNVK+NV) with what nv/nv_query.h
reads through RM: for each emulated configuration the JSON row's arch, classes, driver version, UUID and memory, and
the text rows.

    smi_nv_check.py HCQ_SMI
"""
import json
import os
import re
import subprocess
import sys

WANT = {
    'hopper': {'arch': 'sm_90', 'compute_class': '0xcbc0', 'copy_class': '0xc8b5', 'gpfifo_class': '0xc86f',
               'device': '0x2335', 'qmd_version': 4, 'text': 'HOPPER_COMPUTE_A'},
    'ada': {'arch': 'sm_89', 'compute_class': '0xc9c0', 'copy_class': '0xc7b5', 'gpfifo_class': '0xc56f',
            'device': '0x2684', 'qmd_version': 3, 'text': 'ADA_COMPUTE_A'},
}


def run(smi, args, cfg):
    env = dict(os.environ, MOCKGPU_NV=cfg)
    env.pop('DEV', None)
    p = subprocess.run([smi, 'list', '--dev', 'MOCKNVK+NV'] + args, env=env, capture_output=True, text=True, timeout=120)
    if p.returncode not in (0, 1):
        sys.exit('hcq_smi list %s (MOCKGPU_NV=%s) exited %d: %s' % (args, cfg, p.returncode, p.stderr))
    return p.stdout


def main():
    smi = sys.argv[1]
    bad = []
    for cfg, want in WANT.items():
        d = json.loads(run(smi, ['--json'], cfg))
        nv = d.get('nvidia')
        if not nv or nv['interface'] != 'MOCKNVK' or nv['error'] or len(nv['gpus']) != 1:
            bad.append('%s: "nvidia" section %r' % (cfg, nv))
            continue
        g = nv['gpus'][0]
        for k in ('arch', 'compute_class', 'copy_class', 'gpfifo_class', 'device', 'qmd_version'):
            if g.get(k) != want[k]:
                bad.append('%s: %s is %r, want %r' % (cfg, k, g.get(k), want[k]))
        if g.get('driver_version') != '580.65.06' or g.get('abi_family') != 580:
            bad.append('%s: driver %r family %r' % (cfg, g.get('driver_version'), g.get('abi_family')))
        if not re.fullmatch(r'GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}', g.get('uuid') or ''):
            bad.append('%s: uuid %r' % (cfg, g.get('uuid')))
        if not (isinstance(g.get('memory_total'), int) and g['memory_total'] > 0) and not g.get('memory_note'):
            bad.append('%s: memory_total %r without a note' % (cfg, g.get('memory_total')))
        if g.get('temperature_c') is not None:
            bad.append('%s: temperature %r (nothing reads it)' % (cfg, g.get('temperature_c')))
        text = run(smi, [], cfg)
        if 'NVIDIA (MOCKNVK+NV' not in text or want['text'] not in text or 'driver     580.65.06' not in text:
            bad.append('%s: text rows lack the NVIDIA section:\n%s' % (cfg, text))
    for b in bad:
        print(b)
    print('smi_nv_check: %s' % ('%d problem(s)' % len(bad) if bad else 'ok'))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
