#!/usr/bin/env python3
"""am/regs/gen_regs.py: generate the AM register tables (am/regs/<ip>_<ver>.c + am/regs/am_regtab.h).

Run by hand, never by the build (Python 3 standard library only):

    apt-get install -y linux-source-6.12     # Debian 12: 6.12.117-1~deb12u1 when generated
    mkdir -p /tmp/ksrc && tar -C /tmp/ksrc -xJf /usr/src/linux-source-6.12.tar.xz \\
        --wildcards '*/drivers/gpu/drm/amd/include/asic_reg/*'
    python3 am/regs/gen_regs.py /tmp/ksrc/linux-source-6.12 [--source "how to name it"]

Input: Linux drivers/gpu/drm/amd/include/asic_reg/<dir>/<ip>_<ver>_offset.h (regNAME / mmNAME offsets and
their _BASE_IDX segment) and <ip>_<ver>_sh_mask.h (NAME__FIELD__SHIFT, NAME__FIELD_MASK), MIT-licensed.
Only the registers matching the name filters of tinygrad's AMDev._build_regs
(tinygrad/runtime/support/am/amdev.py) are kept, with all their fields. CDNA headers (gc 9.4.3, mmhub 1.8.0) name the hub VM
registers VM_* / MC_VM_*; they are renamed GCVM_* / GCMC_VM_* (gc) and MMVM_* / MMMC_VM_* (mmhub) first,
as tinygrad does, so that one name works on every generation.
"""
import argparse
import os
import re
import sys

ASIC_REG = 'drivers/gpu/drm/amd/include/asic_reg'

# tinygrad tinygrad/runtime/support/am/amdev.py AMDev._build_regs: name filters per module (re.match on the name after the reg/mm prefix).
FILTERS = {
    'gc': [r'GCVM', r'GCMC_VM',
           r'CP_(HQD|MQD|MEC|ME_CNTL|PERFMON|RB_WPTR_POLL_CNTL|INT_CNTL|STAT|PFP_PRGRM|ME_PRGRM|COHER_START)',
           r'COMPUTE_', r'(SQ|GL2C|TCC)_PERFCOUNTER', r'SQ_THREAD_TRACE', r'SPI_(CONFIG_CNTL|COMPUTE_QUEUE_RESET)',
           r'GRBM', r'SH_MEM', r'RLC', r'TCP', r'GB_ADDR_CONFIG',
           r'SDMA[01]_(WATCHDOG_CNTL|UTCL1_(CNTL|PAGE)|MCU_CNTL|F32_CNTL|CNTL|QUEUE0_|RLC_CGCG_CTRL)',
           r'SCRATCH_REG[67]'],
    'mmhub': [r'MMVM', r'MMMC_VM', r'MM_ATC_L2_MISC_CG'],
    'nbio': [r'BIF_BX_PF[01]_GPU_HDP_FLUSH', r'BIF_BX_PF0_RSMU',
             r'BIF_BX0_(REMAP_HDP_MEM_FLUSH_CNTL|BIF_DOORBELL_INT_CNTL|PCIE_INDEX2|PCIE_DATA2)',
             r'BIFC_(DOORBELL_ACCESS_EN_PF|GFX_INT_MONITOR_MASK)', r'XCC_DOORBELL_FENCE', r'DOORBELL0_CTRL_ENTRY',
             r'GDC_S2A0_S2A_DOORBELL_ENTRY', r'S2A_DOORBELL_ENTRY', r'RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN',
             r'RCC_DEV0_EPF2_STRAP2'],
    'mp': [r'MP([01]|ASP)_SMN_C2PMSG'],
    'hdp': [r'HDP_MEM_POWER_CTRL'],
    'osssys': [r'IH_'],
    'sdma': [r'SDMA_GFX', r'SDMA_CNTL'],
}
FILTERS['nbif'] = FILTERS['nbio']

# (module, version, directory, file stem): the modules of tinygrad tinygrad/runtime/support/am/amdev.py AMDev._build_regs that the supported chips (device ids of tinygrad tinygrad/runtime/ops_amd.py PCIIface) select.
MODULES = [
    ('gc', '9_4_3', 'gc', 'gc_9_4_3'), ('gc', '11_0_0', 'gc', 'gc_11_0_0'), ('gc', '12_0_0', 'gc', 'gc_12_0_0'),
    ('mmhub', '1_8_0', 'mmhub', 'mmhub_1_8_0'), ('mmhub', '3_0_0', 'mmhub', 'mmhub_3_0_0'),
    ('mmhub', '3_0_1', 'mmhub', 'mmhub_3_0_1'), ('mmhub', '3_0_2', 'mmhub', 'mmhub_3_0_2'),  # gfx11 variants
    ('mmhub', '4_1_0', 'mmhub', 'mmhub_4_1_0'),
    ('nbio', '4_3_0', 'nbio', 'nbio_4_3_0'), ('nbio', '7_9_0', 'nbio', 'nbio_7_9_0'),
    ('nbif', '6_3_1', 'nbif', 'nbif_6_3_1'),
    ('mp', '11_0_0', 'mp', 'mp_11_0'),  # Linux names the MP 11.0.0 headers mp_11_0_*.h (mm prefix)
    ('mp', '13_0_0', 'mp', 'mp_13_0_0'), ('mp', '14_0_2', 'mp', 'mp_14_0_2'),
    ('hdp', '4_4_2', 'hdp', 'hdp_4_4_2'), ('hdp', '6_0_0', 'hdp', 'hdp_6_0_0'), ('hdp', '7_0_0', 'hdp', 'hdp_7_0_0'),
    ('osssys', '4_4_2', 'oss', 'osssys_4_4_2'), ('osssys', '6_0_0', 'oss', 'osssys_6_0_0'),
    ('osssys', '7_0_0', 'oss', 'osssys_7_0_0'),
    ('sdma', '4_4_2', 'sdma', 'sdma_4_4_2'),
]

# Registers missing from Linux, added as tinygrad's extra/amdpci/overlay/gc_9_4_3.h does: (name, offset, seg, fields).
OVERLAYS = {
    'gc_9_4_3': [('regCOMPUTE_CURRENT_LOGIC_XCC_ID', 0x0e25, 0, [('CURRENT_LOGICAL_XCC_ID', 0, 0xf)])],
}

HUB_PREFIX = {'gc': 'GC', 'mmhub': 'MM'}
DEF_RE = re.compile(r'^\s*#\s*define\s+([A-Za-z_][A-Za-z0-9_]*)\s+\(?\s*(0x[0-9A-Fa-f]+|[0-9]+)[uUlL]*\s*\)?\s*(?:/[/*].*)?$')


def normalise(module, bare):
    """CDNA hub names: VM_* -> GCVM_*/MMVM_*, MC_VM_* -> GCMC_VM_*/MMMC_VM_* (gc and mmhub modules only)."""
    hub = HUB_PREFIX.get(module)
    if hub and (bare.startswith('VM_') or bare.startswith('MC_VM_')):
        return hub + bare
    return bare


def parse_defines(path):
    out = {}
    with open(path, encoding='latin-1') as f:
        for line in f:
            m = DEF_RE.match(line)
            if m:
                name, val = m.group(1), int(m.group(2), 0)
                if name in out and out[name] != val:
                    sys.stderr.write(f'{path}: {name} defined twice (0x{out[name]:x}, 0x{val:x}); keeping the first\n')
                    continue
                out.setdefault(name, val)
    return out


def keep(module, bare):
    return any(re.match(p, bare) for p in FILTERS[module])


def build(module, tab, offset_h, mask_h):
    offs = parse_defines(offset_h)
    masks = parse_defines(mask_h)
    regs = {}  # bare (normalised) name -> [full name, offset, seg, fields]
    for name, val in offs.items():
        if name.endswith('_BASE_IDX'):
            continue
        m = re.match(r'^(reg|mm)(.*)$', name)
        if not m:
            continue
        prefix, bare = m.group(1), normalise(module, m.group(2))
        if not keep(module, bare):
            continue
        seg = offs.get(name + '_BASE_IDX')
        if seg is None:  # e.g. regRLC_RLCS_DSM_TRIG in gc_12_0_0_offset.h (6.12)
            print(f'note: {os.path.basename(offset_h)}: {name} has no {name}_BASE_IDX, skipped')
            continue
        if bare in regs:
            sys.exit(f'{offset_h}: {name} collides with {regs[bare][0]} after normalisation')
        regs[bare] = [prefix + bare, val, seg, []]
    # Fields: NAME__FIELD__SHIFT with NAME__FIELD_MASK; NAME is the bare (un-normalised) register name.
    for name, shift in masks.items():
        if not name.endswith('__SHIFT'):
            continue
        base = name[:-len('__SHIFT')]
        i = base.find('__')
        if i <= 0:
            continue
        reg, field = normalise(module, base[:i]), base[i + 2:]
        if reg not in regs:
            continue
        mask = masks.get(base + '_MASK')
        if mask is None:  # e.g. MMVM_L2_CNTL5__UTCL2_ATC_INVREQ_REPEATER_FGCG_OFF in mmhub_4_1_0_sh_mask.h (6.12)
            print(f'note: {os.path.basename(mask_h)}: {name} has no {base}_MASK, field skipped')
            continue
        if mask == 0 or shift > 31 or mask > 0xffffffff or (mask & ((1 << shift) - 1)):
            print(f'note: {os.path.basename(mask_h)}: {base} shift {shift} inconsistent with mask 0x{mask:x}, skipped')
            continue
        fl = regs[reg][3]
        if any(f[0] == field for f in fl):
            continue
        fl.append((field, shift, mask))
    for name, off, seg, fields in OVERLAYS.get(tab, []):
        bare = name[3:]
        assert bare not in regs, f'overlay {name} is already in {offset_h}'
        regs[bare] = [name, off, seg, list(fields)]
    out = sorted(regs.values(), key=lambda r: r[0])
    for r in out:
        r[3].sort(key=lambda f: (f[1], f[0]))
        assert len(r[3]) < 256
    return out


def c_str(s):
    assert re.match(r'^[A-Za-z0-9_]+$', s), s
    return '"' + s + '"'


def emit_module(outdir, module, ver, relpaths, regs, source_desc):
    tab = f'{module}_{ver}'
    # Registers with identical field lists (CONTEXT0..15, INVALIDATE_ENG0..17, C2PMSG_*) share one run of F.
    runs, at, nf = {}, [], 0
    for r in regs:
        key = tuple(r[3])
        if key and key not in runs:
            runs[key] = nf
            nf += len(key)
        at.append(runs.get(key))
    nfall = sum(len(r[3]) for r in regs)
    lines = [
        f'/* am/regs/{tab}.c: {module} {ver.replace("_", ".")} registers for the AM driver. GENERATED by',
        ' * am/regs/gen_regs.py -- do not edit; regenerate instead.',
        f' * Source: {source_desc},',
    ]
    for p in relpaths:
        lines.append(f' *   {p}')
    lines += [
        ' * (MIT licence, Copyright Advanced Micro Devices, Inc.). Kept: the registers matching',
        f' *   {" | ".join(FILTERS[module])}',
        ' * (name filters of tinygrad tinygrad/runtime/support/am/amdev.py AMDev._build_regs) with all their fields.',
    ]
    if HUB_PREFIX.get(module):
        lines.append(f' * VM_* / MC_VM_* names are renamed {HUB_PREFIX[module]}VM_* / {HUB_PREFIX[module]}MC_VM_* (CDNA headers).')
    for name, off, seg, _ in OVERLAYS.get(tab, []):
        lines.append(f' * Overlay (not in Linux; tinygrad extra/amdpci/overlay/{tab}.h): {name} 0x{off:04x} seg {seg}.')
    lines += [f' * {len(regs)} registers, {nfall} fields ({nf} distinct runs). */', '#include "am/regs/am_regtab.h"', '']

    def packed(items, width=118):
        cur = ' '
        for it in items:
            if len(cur) + len(it) + 2 > width and cur.strip():
                lines.append(cur.rstrip())
                cur = ' '
            cur += ' ' + it + ','
        if cur.strip():
            lines.append(cur.rstrip())

    if nf:
        lines.append(f'static const struct bg_am_regfield F[{nf}] = {{')
        for key in runs:
            packed([f'{{{c_str(n)},{s},0x{m:x}}}' for n, s, m in key])
        lines.append('};')
        lines.append('')
    lines.append(f'static const struct bg_am_reg R[{len(regs)}] = {{')
    packed([f'{{{c_str(name)},0x{off:x},{seg},{len(fields)},' + (f'F+{a}' if fields else 'NULL') + '}'
            for (name, off, seg, fields), a in zip(regs, at)])
    lines.append('};')
    lines.append('')
    lines.append(f'const struct bg_am_regtab bg_am_regtab_{tab} = {{{c_str(tab)}, {len(regs)}, R}};')
    with open(os.path.join(outdir, f'{tab}.c'), 'w') as f:
        f.write('\n'.join(lines) + '\n')
    return tab, len(regs), nfall


def emit_header(outdir, tabs, source_desc, missing):
    lines = [
        '/* am/regs/am_regtab.h: the generated AM register tables (am/regs/<ip>_<ver>.c). GENERATED by',
        ' * am/regs/gen_regs.py -- do not edit; regenerate instead.',
        f' * Source: {source_desc}, {ASIC_REG}/.',
        ' * Each table lists the registers the driver uses (name filters of tinygrad tinygrad/runtime/support/am/amdev.py AMDev._build_regs), sorted by name',
        ' * (strcmp order), with offset (dwords) and segment (_BASE_IDX): absolute dword address =',
        ' * ip_base[hwip][instance][base_idx] + offset. Fields are sorted by shift; value = (reg & mask) >> shift.',
    ]
    if missing:
        lines.append(' * Not in this source (skipped): ' + ', '.join(missing) + '.')
    lines += [
        ' * Look-ups and version selection: am/am_regs.h. */',
        '#ifndef BG_AM_REGTAB_H',
        '#define BG_AM_REGTAB_H',
        '',
        '#include <stddef.h>',
        '#include <stdint.h>',
        '',
        'struct bg_am_regfield {',
        '  const char *name; /* "ENABLE_L2_CACHE" */',
        '  uint8_t shift;',
        '  uint32_t mask;    /* in place: (mask >> shift) is the field maximum */',
        '};',
        '',
        'struct bg_am_reg {',
        '  const char *name; /* as Linux names it, prefix included: "regGCVM_L2_CNTL", "mmMP1_SMN_C2PMSG_53" */',
        '  uint32_t offset;  /* dwords from the segment base */',
        '  uint8_t base_idx; /* segment */',
        '  uint8_t nfields;',
        '  const struct bg_am_regfield *fields;',
        '};',
        '',
        'struct bg_am_regtab {',
        '  const char *name; /* "gc_11_0_0" */',
        '  size_t nregs;',
        '  const struct bg_am_reg *regs; /* sorted by name (strcmp) */',
        '};',
        '',
    ]
    for tab, nr, nf in tabs:
        lines.append(f'extern const struct bg_am_regtab bg_am_regtab_{tab}; /* {nr} registers, {nf} fields */')
    lines += ['', f'#define BG_AM_REGTAB_COUNT {len(tabs)}',
              '#define BG_AM_REGTABS \\']
    lines.append(', \\\n'.join(f'  &bg_am_regtab_{t}' for t, _, _ in tabs))
    lines += ['', '#endif', '']
    with open(os.path.join(outdir, 'am_regtab.h'), 'w') as f:
        f.write('\n'.join(lines))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('linux', help='root of an extracted Linux tree (holding drivers/gpu/drm/amd/include/asic_reg)')
    ap.add_argument('--source', default='Debian linux-source-6.12 package (6.12.117-1~deb12u1)',
                    help='how to name the source in the generated comments')
    ap.add_argument('--out', default=os.path.dirname(os.path.abspath(__file__)))
    a = ap.parse_args()
    root = os.path.join(a.linux, ASIC_REG)
    if not os.path.isdir(root):
        sys.exit(f'{root}: not a directory')
    tabs, missing = [], []
    for module, ver, d, stem in MODULES:
        rel = [f'{ASIC_REG}/{d}/{stem}_offset.h', f'{ASIC_REG}/{d}/{stem}_sh_mask.h']
        paths = [os.path.join(a.linux, p) for p in rel]
        if not all(os.path.exists(p) for p in paths):
            print(f'note: {module} {ver}: {rel[0]} not in this tree, skipped')
            missing.append(f'{module}_{ver}')
            continue
        regs = build(module, f'{module}_{ver}', *paths)
        if not regs:
            sys.exit(f'{module} {ver}: no register matches the filters')
        tabs.append(emit_module(a.out, module, ver, rel, regs, a.source))
        print(f'{module}_{ver}: {tabs[-1][1]} registers, {tabs[-1][2]} fields')
    emit_header(a.out, tabs, a.source, missing)


if __name__ == '__main__':
    main()
