#!/usr/bin/env python3
"""am/regs/gen_regs.py: generate the AM register tables (am/regs/<ip>_<ver>.c, am_regtab.h, am_reg_ids.h, am_reg_names.c).

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


def emit_module(outdir, module, ver, relpaths, regs, source_desc, ids):
    tab = f'{module}_{ver}'
    # Registers with identical field lists (CONTEXT0..15, INVALIDATE_ENG0..17, C2PMSG_*) share one run of F.
    runs, keyreg, at, nf = {}, {}, [], 0
    for r in regs:
        # the key holds the field indices too (they differ between registers with equal field lists)
        key = (tuple(ids.fidx[(r[0], f[0])] for f in r[3]), tuple(r[3]))
        if r[3] and key not in runs:
            runs[key] = nf
            keyreg[key] = r[0]
            nf += len(r[3])
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
    lines += [f' * {len(regs)} registers, {nfall} fields ({nf} distinct runs). */', '#include "am/regs/am_regtab.h"', '#include "am/regs/am_reg_ids.h"', '']

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
            rname = keyreg[key]
            packed([f'{{{c_str(n)},{ids.fidx[(rname, n)]},{s},0x{m:x}}}' for n, s, m in key[1]])
        lines.append('};')
        lines.append('')
    lines.append(f'static const struct bg_am_reg R[{len(regs)}] = {{')
    packed([f'{{{c_str(name)},{name},0x{off:x},{seg},{len(fields)},' + (f'F+{a}' if fields else 'NULL') + '}'
            for (name, off, seg, fields), a in zip(regs, at)])
    lines.append('};')
    lines.append('')
    lines.append(f'const struct bg_am_regtab bg_am_regtab_{tab} = {{{c_str(tab)}, {len(regs)}, R}};')
    with open(os.path.join(outdir, f'{tab}.c'), 'w') as f:
        f.write('\n'.join(lines) + '\n')
    return tab, len(regs), nfall


class Ids:
    """Register and field identifiers over the union of all tables (am/regs/am_reg_ids.h).

    Registers: the Linux name (regGCVM_L2_CNTL, mmMP1_SMN_C2PMSG_53), numbered in strcmp order of the names.
    Fields: as Linux's sh_mask headers spell them, REG__FIELD without the prefix (GCVM_L2_CNTL__ENABLE_L2_CACHE);
    value = register id << 8 | index of the field in the register's field names (union over versions, sorted),
    so the register a field belongs to is (field >> 8). Where one bare name exists with both prefixes (the MP
    mailboxes: regMP0_SMN_C2PMSG_35 and mmMP0_SMN_C2PMSG_35), the mm register's fields keep the mm prefix."""

    def __init__(self, tables):
        fields = {}
        for regs in tables:
            for name, _, _, fl in regs:
                fields.setdefault(name, set()).update(f[0] for f in fl)
        self.regs = sorted(fields)
        self.rid = {n: i for i, n in enumerate(self.regs)}
        assert len(self.regs) < 65536
        bare_count = {}
        for n in self.regs:
            bare_count[bare(n)] = bare_count.get(bare(n), 0) + 1
        self.fields = {}  # reg name -> sorted field names
        self.fidx = {}
        self.fid_name = {}
        for n in self.regs:
            fl = sorted(fields[n])
            assert len(fl) < 256, n
            self.fields[n] = fl
            pfx = n if (n.startswith('mm') and bare_count[bare(n)] > 1) else bare(n)
            for i, f in enumerate(fl):
                self.fidx[(n, f)] = i
                self.fid_name[(n, f)] = f'{pfx}__{f}'


def bare(name):
    return name[3:] if name.startswith('reg') else name[2:]


def emit_ids(outdir, ids, source_desc):
    nf = sum(len(v) for v in ids.fields.values())
    lines = [
        '/* am/regs/am_reg_ids.h: compile-time register and field identifiers of the AM register tables. GENERATED by',
        ' * am/regs/gen_regs.py -- do not edit; regenerate instead.',
        f' * Source: {source_desc}, {ASIC_REG}/.',
        ' * Registers: one identifier per register name in the union of all tables, spelled as Linux spells it',
        ' * (regGCVM_L2_CNTL, mmMP1_SMN_C2PMSG_53; Linux SOC15_REG_OFFSET takes the same names), numbered in strcmp',
        ' * order of the names. Fields: as Linux sh_mask headers spell them, REG__FIELD (GCVM_L2_CNTL__ENABLE_L2_CACHE),',
        ' * value = register id << 8 | index in the register\'s sorted field names, so BG_AM_FIELD_REG(f) is the register',
        ' * the field belongs to. Where a bare name has both prefixes (the MP mailboxes), the mm register\'s fields keep',
        ' * the mm prefix (mmMP0_SMN_C2PMSG_35__CONTENT). Whether a register or field exists on a given IP version is',
        ' * decided by its table (am/am_regs.h); a misspelt name is a compile error. */',
        '#ifndef BG_AM_REG_IDS_H',
        '#define BG_AM_REG_IDS_H',
        '',
        '/* Identifiers are macros of enum type, not enumerators: a 12,000-constant enum in every translation unit',
        ' * made cppcheck 100 times slower. */',
        'enum bg_am_reg_id {',
        '  BG_AM_REG_ID_FIRST = 0,',
        f'  BG_AM_REG_ID_COUNT = {len(ids.regs)}',
        '};',
        'enum bg_am_field_id {',
        '  BG_AM_FIELD_ID_NONE = -1,',
        f'  BG_AM_FIELD_ID_END = {len(ids.regs) << 8}',
        '};',
        '',
    ]
    for i, n in enumerate(ids.regs):
        lines.append(f'#define {n} ((enum bg_am_reg_id){i})')
    lines += ['', f'/* {nf} fields */']
    for n in ids.regs:
        r = ids.rid[n]
        for i, f in enumerate(ids.fields[n]):
            lines.append(f'#define {ids.fid_name[(n, f)]} ((enum bg_am_field_id){r << 8 | i})')
    lines += ['',
              '#define BG_AM_FIELD_REG(f) ((enum bg_am_reg_id)((unsigned)(f) >> 8))',
              '#define BG_AM_FIELD_IDX(f) ((unsigned)(f) & 0xffu)',
              '',
              '/* Names by id (am/regs/am_reg_names.c): bg_am_reg_id_names[id] = "regGCVM_L2_CNTL"; the field names of',
              ' * register id are bg_am_field_id_names[bg_am_field_id_first[id] .. bg_am_field_id_first[id + 1]) ("ENABLE_L2_CACHE"). */',
              'extern const char *const bg_am_reg_id_names[BG_AM_REG_ID_COUNT];',
              'extern const unsigned bg_am_field_id_first[BG_AM_REG_ID_COUNT + 1];',
              f'extern const char *const bg_am_field_id_names[{nf}];',
              '', '#endif', '']
    with open(os.path.join(outdir, 'am_reg_ids.h'), 'w') as f:
        f.write('\n'.join(lines))
    lines = [
        '/* am/regs/am_reg_names.c: names of the identifiers of am_reg_ids.h (error messages, BG_DEBUG traces). GENERATED by',
        ' * am/regs/gen_regs.py -- do not edit; regenerate instead. */',
        '#include "am/regs/am_reg_ids.h"', '',
        'const char *const bg_am_reg_id_names[BG_AM_REG_ID_COUNT] = {',
    ]
    for n in ids.regs:
        lines.append(f'  {c_str(n)},')
    lines += ['};', '', 'const unsigned bg_am_field_id_first[BG_AM_REG_ID_COUNT + 1] = {']
    at, items = 0, []
    for n in ids.regs:
        items.append(str(at))
        at += len(ids.fields[n])
    items.append(str(at))
    for k in range(0, len(items), 16):
        lines.append('  ' + ', '.join(items[k:k + 16]) + ',')
    lines += ['};', '', f'const char *const bg_am_field_id_names[{nf}] = {{']
    for n in ids.regs:
        if ids.fields[n]:
            lines.append('  ' + ', '.join(c_str(f) for f in ids.fields[n]) + ',')
    lines += ['};', '']
    with open(os.path.join(outdir, 'am_reg_names.c'), 'w') as f:
        f.write('\n'.join(lines))


def emit_header(outdir, tabs, source_desc, missing):
    lines = [
        '/* am/regs/am_regtab.h: the generated AM register tables (am/regs/<ip>_<ver>.c). GENERATED by',
        ' * am/regs/gen_regs.py -- do not edit; regenerate instead.',
        f' * Source: {source_desc}, {ASIC_REG}/.',
        ' * Each table lists the registers the driver uses (name filters of tinygrad tinygrad/runtime/support/am/amdev.py AMDev._build_regs), sorted by id',
        ' * (enum bg_am_reg_id of am_reg_ids.h, which is also strcmp order of the names), with offset (dwords) and segment (_BASE_IDX): absolute dword address =',
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
        '  uint8_t idx;      /* low 8 bits of its enum bg_am_field_id (am_reg_ids.h) */',
        '  uint8_t shift;',
        '  uint32_t mask;    /* in place: (mask >> shift) is the field maximum */',
        '};',
        '',
        'struct bg_am_reg {',
        '  const char *name; /* as Linux names it, prefix included: "regGCVM_L2_CNTL", "mmMP1_SMN_C2PMSG_53" */',
        '  uint16_t id;      /* enum bg_am_reg_id (am_reg_ids.h) */',
        '  uint32_t offset;  /* dwords from the segment base */',
        '  uint8_t base_idx; /* segment */',
        '  uint8_t nfields;',
        '  const struct bg_am_regfield *fields;',
        '};',
        '',
        'struct bg_am_regtab {',
        '  const char *name; /* "gc_11_0_0" */',
        '  size_t nregs;',
        '  const struct bg_am_reg *regs; /* sorted by id */',
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
    tabs, missing, built = [], [], []
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
        built.append((module, ver, rel, regs))
    ids = Ids([b[3] for b in built])
    for module, ver, rel, regs in built:
        tabs.append(emit_module(a.out, module, ver, rel, regs, a.source, ids))
        print(f'{module}_{ver}: {tabs[-1][1]} registers, {tabs[-1][2]} fields')
    emit_header(a.out, tabs, a.source, missing)
    emit_ids(a.out, ids, a.source)
    print(f'am_reg_ids.h: {len(ids.regs)} registers, {sum(len(v) for v in ids.fields.values())} fields')


if __name__ == '__main__':
    main()
