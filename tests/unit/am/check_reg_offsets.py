#!/usr/bin/env python3
"""tests/unit/am/check_reg_offsets.py: an independent oracle for the AM register tables (am/regs/<ip>_<ver>.c).

For every register in every generated table (the registers the driver can address), the offset and
segment (_BASE_IDX) must be what Linux's drivers/gpu/drm/amd/include/asic_reg/<dir>/<ip>_<ver>_offset.h
says. Shares no code with am/regs/gen_regs.py: its own module -> header map, its own reader (one regex
per #define), its own handling of the CDNA hub names.

Usage: check_reg_offsets.py <source root> <cache dir>
The headers come from Debian's linux-source-6.12 package (the version the tables were generated from),
extracted once into <cache dir> by linux_headers.py; a missing tarball fails naming the package.
"""
import os
import re
import sys

import linux_headers

ASIC_REG = 'drivers/gpu/drm/amd/include/asic_reg'

# table stem (am/regs/<stem>.c) -> Linux offset header (relative to asic_reg/), written out by hand.
HEADERS = {
    'gc_9_4_3': 'gc/gc_9_4_3_offset.h', 'gc_11_0_0': 'gc/gc_11_0_0_offset.h', 'gc_12_0_0': 'gc/gc_12_0_0_offset.h',
    'mmhub_1_8_0': 'mmhub/mmhub_1_8_0_offset.h', 'mmhub_3_0_0': 'mmhub/mmhub_3_0_0_offset.h',
    'mmhub_3_0_1': 'mmhub/mmhub_3_0_1_offset.h', 'mmhub_3_0_2': 'mmhub/mmhub_3_0_2_offset.h',
    'mmhub_4_1_0': 'mmhub/mmhub_4_1_0_offset.h',
    'nbio_4_3_0': 'nbio/nbio_4_3_0_offset.h', 'nbio_7_9_0': 'nbio/nbio_7_9_0_offset.h',
    'nbif_6_3_1': 'nbif/nbif_6_3_1_offset.h',
    'mp_11_0_0': 'mp/mp_11_0_offset.h', 'mp_13_0_0': 'mp/mp_13_0_0_offset.h', 'mp_14_0_2': 'mp/mp_14_0_2_offset.h',
    'hdp_4_4_2': 'hdp/hdp_4_4_2_offset.h', 'hdp_6_0_0': 'hdp/hdp_6_0_0_offset.h', 'hdp_7_0_0': 'hdp/hdp_7_0_0_offset.h',
    'osssys_4_4_2': 'oss/osssys_4_4_2_offset.h', 'osssys_6_0_0': 'oss/osssys_6_0_0_offset.h',
    'osssys_7_0_0': 'oss/osssys_7_0_0_offset.h',
    'sdma_4_4_2': 'sdma/sdma_4_4_2_offset.h',
}

# Registers that are not in Linux, with the reason (checked against their own source here).
NOT_IN_LINUX = {
    ('gc_9_4_3', 'regCOMPUTE_CURRENT_LOGIC_XCC_ID'): (0x0e25, 0, "tinygrad extra/amdpci/overlay/gc_9_4_3.h"),
}

ROW = re.compile(r'\{"((?:reg|mm)[A-Za-z0-9_]+)",\s*[A-Za-z0-9_]+,\s*(0x[0-9a-fA-F]+|\d+),\s*(\d+),')
COUNT = re.compile(r'static const struct bg_am_reg R\[(\d+)\]')
DEFINE = re.compile(r'^\s*#\s*define\s+(\w+)\s+\(?\s*(0x[0-9a-fA-F]+|\d+)', re.M)


def fail(msg):
    linux_headers.fail('check_reg_offsets', msg)


def defines(path):
    with open(path, encoding='utf-8', errors='replace') as f:
        return {m.group(1): int(m.group(2), 0) for m in DEFINE.finditer(f.read())}


def linux_names(stem, name):
    """Candidate Linux spellings: CDNA headers (gc 9.4.3, mmhub 1.8.0) spell the hub registers VM_* / MC_VM_*."""
    prefix = 'reg' if name.startswith('reg') else 'mm'
    bare = name[len(prefix):]
    out = [name]
    for hub in ('GC', 'MM'):
        if bare.startswith(hub + 'VM_') or bare.startswith(hub + 'MC_VM_'):
            out.append(prefix + bare[len(hub):])
    return out


def main():
    if len(sys.argv) != 3:
        fail('usage: check_reg_offsets.py <source root> <cache dir>')
    src, cache = sys.argv[1], sys.argv[2]
    asic = os.path.join(linux_headers.linux_root('check_reg_offsets', cache), ASIC_REG)
    regs_dir = os.path.join(src, 'am', 'regs')
    tables = sorted(f[:-2] for f in os.listdir(regs_dir) if f.endswith('.c') and f != 'am_reg_names.c')
    unmapped = [t for t in tables if t not in HEADERS]
    if unmapped:
        fail(f'am/regs/{unmapped[0]}.c has no Linux header in HEADERS of {sys.argv[0]}: add it')
    errors, checked = [], 0
    for stem in tables:
        text = open(os.path.join(regs_dir, stem + '.c'), encoding='utf-8').read()
        rows = ROW.findall(text)
        n = COUNT.search(text)
        if not n or int(n.group(1)) != len(rows):
            fail(f'am/regs/{stem}.c: read {len(rows)} register rows, the table declares '
                 f'{n.group(1) if n else "no R[] array"}')
        hpath = os.path.join(asic, HEADERS[stem])
        if not os.path.exists(hpath):
            fail(f'{HEADERS[stem]} is not in {linux_headers.TARBALL}')
        d = defines(hpath)
        for name, off, seg in rows:
            off, seg = int(off, 0), int(seg)
            checked += 1
            if (stem, name) in NOT_IN_LINUX:
                want_off, want_seg, why = NOT_IN_LINUX[(stem, name)]
                if (off, seg) != (want_off, want_seg):
                    errors.append(f'{stem} {name}: offset 0x{off:x} seg {seg}, {why} says 0x{want_off:x} seg {want_seg}')
                continue
            hit = next((c for c in linux_names(stem, name) if c in d), None)
            if hit is None:
                errors.append(f'{stem} {name}: not defined in {HEADERS[stem]}')
            elif hit + '_BASE_IDX' not in d:
                errors.append(f'{stem} {name}: {HEADERS[stem]} has no {hit}_BASE_IDX')
            elif (d[hit], d[hit + '_BASE_IDX']) != (off, seg):
                errors.append(f'{stem} {name}: table has offset 0x{off:x} seg {seg}, {HEADERS[stem]} has {hit} '
                              f'0x{d[hit]:x} seg {d[hit + "_BASE_IDX"]}')
    for e in errors:
        print('check_reg_offsets: ' + e, file=sys.stderr)
    if errors:
        fail(f'{len(errors)} of {checked} registers disagree with Linux {linux_headers.TOP}')
    print(f'check_reg_offsets: {checked} registers in {len(tables)} tables match Linux {linux_headers.TOP} asic_reg headers')


if __name__ == '__main__':
    main()
