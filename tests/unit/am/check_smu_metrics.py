#!/usr/bin/env python3
"""tests/unit/am/check_smu_metrics.py: an independent oracle for the SMU metrics layouts that the AM driver
(am/am_smu.c) reads and the emulated GPU (tests/mockgpu/amd_smu.c) writes.

Every offset, count and size of both is compared with what the C compiler computes (offsetof, sizeof, enum
values) from Linux's PMFW headers, drivers/gpu/drm/amd/pm/swsmu/inc/pmfw_if/:
  SMU 13.0.0 SmuMetricsExternal_t  smu13_driver_if_v13_0_0.h   (driver M_13_0_0, mock MOCK_AMD_GFX11)
  SMU 14.0.2 SmuMetricsExternal_t  smu14_driver_if_v14_0.h     (driver M_14_0_2, mock MOCK_AMD_MOCK)
  SMU 13.0.6 MetricsTableX_t       smu_v13_0_6_pmfw.h          (driver M6_*; the mock does not model it)
The driver's and the mock's numbers are read from their sources (the initialisers and the M6_ enum), so a wrong
offset in either fails here naming the field and the Linux member.

Usage: check_smu_metrics.py <source root> <cache dir>   (headers: linux_headers.py; compiler: $CC, else cc)
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile

import linux_headers

WHO = 'check_smu_metrics'
PMFW = 'drivers/gpu/drm/amd/pm/swsmu/inc/pmfw_if'

# Linux expression for each field name of the driver's struct metrics_layout and the mock's mock_amd_metrics_layout.
EXT = 'SmuMetricsExternal_t'
RDNA = {
    'size': f'sizeof({EXT})',
    'curr_clock': f'offsetof({EXT}, SmuMetrics.CurrClock)',
    'nclocks': 'PPCLK_COUNT',
    'gfxclk': f'offsetof({EXT}, SmuMetrics.AverageGfxclkFrequencyPreDs)',
    'gfxclk_pre_ds': f'offsetof({EXT}, SmuMetrics.AverageGfxclkFrequencyPreDs)',
    'gfxclk_post_ds': f'offsetof({EXT}, SmuMetrics.AverageGfxclkFrequencyPostDs)',
    'fclk_pre_ds': f'offsetof({EXT}, SmuMetrics.AverageFclkFrequencyPreDs)',
    'fclk_post_ds': f'offsetof({EXT}, SmuMetrics.AverageFclkFrequencyPostDs)',
    'memclk': f'offsetof({EXT}, SmuMetrics.AverageMemclkFrequencyPreDs)',
    'memclk_pre_ds': f'offsetof({EXT}, SmuMetrics.AverageMemclkFrequencyPreDs)',
    'memclk_post_ds': f'offsetof({EXT}, SmuMetrics.AverageMemclkFrequencyPostDs)',
    'wmax': f'offsetof({EXT}, SmuMetrics.dGPU_W_MAX)',
    'dgpu_w_max': f'offsetof({EXT}, SmuMetrics.dGPU_W_MAX)',
    'counter': f'offsetof({EXT}, SmuMetrics.MetricsCounter)',
    'metrics_counter': f'offsetof({EXT}, SmuMetrics.MetricsCounter)',
    'avg_voltage': f'offsetof({EXT}, SmuMetrics.AvgVoltage)',
    'nvoltage': 'SVI_PLANE_COUNT',
    'gfx_act': f'offsetof({EXT}, SmuMetrics.AverageGfxActivity)',
    'gfx_activity': f'offsetof({EXT}, SmuMetrics.AverageGfxActivity)',
    'uclk_act': f'offsetof({EXT}, SmuMetrics.AverageUclkActivity)',
    'uclk_activity': f'offsetof({EXT}, SmuMetrics.AverageUclkActivity)',
    'power': f'offsetof({EXT}, SmuMetrics.AverageSocketPower)',
    'socket_power': f'offsetof({EXT}, SmuMetrics.AverageSocketPower)',
    'temps': f'offsetof({EXT}, SmuMetrics.AvgTemperature)',
    'avg_temperature': f'offsetof({EXT}, SmuMetrics.AvgTemperature)',
    'ntemps': 'TEMP_COUNT',
    'temp_mem_idx': 'TEMP_MEM',
    'fan_pwm': f'offsetof({EXT}, SmuMetrics.AvgFanPwm)',
    'fan_rpm': f'offsetof({EXT}, SmuMetrics.AvgFanRpm)',
    'throttling': f'offsetof({EXT}, SmuMetrics.ThrottlingPercentage)',
    'nthrottlers': 'THROTTLER_COUNT',
}
X = 'MetricsTableX_t'
M6 = {
    'M6_COUNTER': f'offsetof({X}, AccumulationCounter)',
    'M6_MAX_SOCKET_TEMP': f'offsetof({X}, MaxSocketTemperature)',
    'M6_MAX_VR_TEMP': f'offsetof({X}, MaxVrTemperature)',
    'M6_MAX_HBM_TEMP': f'offsetof({X}, MaxHbmTemperature)',
    'M6_MAX_SOCKET_POWER_LIMIT': f'offsetof({X}, MaxSocketPowerLimit)',
    'M6_SOCKET_POWER': f'offsetof({X}, SocketPower)',
    'M6_FCLK': f'offsetof({X}, FclkFrequency)',
    'M6_UCLK': f'offsetof({X}, UclkFrequency)',
    'M6_SOCCLK': f'offsetof({X}, SocclkFrequency)',
    'M6_SOCKET_GFX_BUSY': f'offsetof({X}, SocketGfxBusy)',
    'M6_DRAM_BW_UTIL': f'offsetof({X}, DramBandwidthUtilization)',
    'M6_PROCHOT_ACC': f'offsetof({X}, ProchotResidencyAcc)',
    'M6_PPT_ACC': f'offsetof({X}, PptResidencyAcc)',
    'M6_SOCKET_THM_ACC': f'offsetof({X}, SocketThmResidencyAcc)',
    'M6_VR_THM_ACC': f'offsetof({X}, VrThmResidencyAcc)',
    'M6_HBM_THM_ACC': f'offsetof({X}, HbmThmResidencyAcc)',
    'M6_GFXCLK': f'offsetof({X}, GfxclkFrequency)',
}


def fail(msg):
    linux_headers.fail(WHO, msg)


def linux_values(inc, header, exprs, work):
    """{expr: value} computed by the C compiler from the Linux header."""
    exprs = sorted(set(exprs))
    src = os.path.join(work, 'probe.c')
    with open(src, 'w') as f:
        f.write('#include <stddef.h>\n#include <stdint.h>\n#include <stdio.h>\n#include "%s"\nint main(void) {\n' % header)
        for i, e in enumerate(exprs):
            f.write(f'  printf("%d %%lu\\n", (unsigned long)({e}));\n' % i)
        f.write('  return 0;\n}\n')
    exe = os.path.join(work, 'probe')
    cc = shlex.split(os.environ.get('CC') or 'cc')
    r = subprocess.run(cc + ['-std=gnu11', '-I', inc, '-o', exe, src], capture_output=True, text=True)
    if r.returncode != 0:
        fail(f'compiling against {header}: {r.stderr.strip()[:2000]}')
    out = subprocess.run([exe], capture_output=True, text=True, check=True).stdout.split('\n')
    vals = {}
    for line in out:
        if line:
            i, v = line.split()
            vals[exprs[int(i)]] = int(v)
    return vals


def driver_layouts(text):
    """am/am_smu.c: the field names of struct metrics_layout and the M_13_0_0 / M_14_0_2 initialisers."""
    m = re.search(r'typedef struct metrics_layout \{\s*uint32_t ([^;]+);\s*\} metrics_layout;', text)
    if not m:
        fail('am/am_smu.c: no "typedef struct metrics_layout { uint32_t ...; } metrics_layout;"')
    names = [n.strip() for n in m.group(1).split(',')]
    out = {}
    for var in ('M_13_0_0', 'M_14_0_2'):
        v = re.search(r'static const metrics_layout %s = \{([^}]*)\};' % var, text)
        if not v:
            fail(f'am/am_smu.c: no initialiser of {var}')
        nums = [int(x.strip(), 0) for x in v.group(1).split(',')]
        if len(nums) != len(names):
            fail(f'am/am_smu.c: {var} has {len(nums)} values for {len(names)} fields')
        out[var] = dict(zip(names, nums))
    return out


def driver_m6(text):
    m = re.search(r'enum \{([^}]*M6_SIZE[^}]*)\};', text)
    if not m:
        fail('am/am_smu.c: no enum with M6_SIZE')
    return {k: int(v, 0) for k, v in re.findall(r'(M6_\w+)\s*=\s*(0x[0-9a-fA-F]+|\d+)', m.group(1))}


def mock_layouts(text):
    out = {}
    for chip in ('MOCK_AMD_GFX11', 'MOCK_AMD_MOCK'):
        m = re.search(r'if \(chip == %s\) \{[^{]*\(mock_amd_metrics_layout\)\{([^}]*)\}' % chip, text)
        if not m:
            fail(f'tests/mockgpu/amd_smu.c: no layout for {chip}')
        out[chip] = {k: int(v, 0) for k, v in re.findall(r'\.(\w+)\s*=\s*(0x[0-9a-fA-F]+|\d+)', m.group(1))}
    return out


def main():
    if len(sys.argv) != 3:
        fail('usage: check_smu_metrics.py <source root> <cache dir>')
    src, cache = sys.argv[1], sys.argv[2]
    inc = os.path.join(linux_headers.linux_root(WHO, cache), PMFW)
    drv_text = open(os.path.join(src, 'am', 'am_smu.c'), encoding='utf-8').read()
    mock_text = open(os.path.join(src, 'tests', 'mockgpu', 'amd_smu.c'), encoding='utf-8').read()
    drv, m6, mock = driver_layouts(drv_text), driver_m6(drv_text), mock_layouts(mock_text)
    # (who, header, {field: value}, {field: linux expression})
    cases = [
        ('am/am_smu.c M_13_0_0', 'smu13_driver_if_v13_0_0.h', drv['M_13_0_0'], RDNA),
        ('am/am_smu.c M_14_0_2', 'smu14_driver_if_v14_0.h', drv['M_14_0_2'], RDNA),
        ('tests/mockgpu/amd_smu.c MOCK_AMD_GFX11', 'smu13_driver_if_v13_0_0.h', mock['MOCK_AMD_GFX11'], RDNA),
        ('tests/mockgpu/amd_smu.c MOCK_AMD_MOCK', 'smu14_driver_if_v14_0.h', mock['MOCK_AMD_MOCK'], RDNA),
        ('am/am_smu.c M6_', 'smu_v13_0_6_pmfw.h', {k: v for k, v in m6.items() if k != 'M6_SIZE'}, M6),
    ]
    errors, checked = [], 0
    with tempfile.TemporaryDirectory() as work:
        for who, header, fields, table in cases:
            if not os.path.exists(os.path.join(inc, header)):
                fail(f'{header} is not in {linux_headers.TARBALL}')
            unknown = [f for f in fields if f not in table]
            if unknown:
                fail(f'{who}: field {unknown[0]} has no Linux counterpart in {sys.argv[0]}: add it')
            vals = linux_values(inc, header, [table[f] for f in fields], work)
            for f, v in fields.items():
                checked += 1
                if vals[table[f]] != v:
                    errors.append(f'{who}: {f} = {v}, Linux {header} {table[f]} = {vals[table[f]]}')
        # The driver reads M6_SIZE bytes: they must lie inside MetricsTableX_t and cover every field it reads.
        size = linux_values(inc, 'smu_v13_0_6_pmfw.h', [f'sizeof({X})'], work)[f'sizeof({X})']
        checked += 1
        if not max(m6[k] + 4 for k in m6 if k != 'M6_SIZE') <= m6['M6_SIZE'] <= size:
            errors.append(f'am/am_smu.c M6_SIZE = {m6["M6_SIZE"]}: not between the last field read and '
                          f'sizeof({X}) = {size} (smu_v13_0_6_pmfw.h)')
    for e in errors:
        print(f'{WHO}: {e}', file=sys.stderr)
    if errors:
        fail(f'{len(errors)} of {checked} metrics offsets/sizes disagree with Linux {linux_headers.TOP}')
    print(f'{WHO}: {checked} metrics offsets/sizes of the driver and the mock match Linux {linux_headers.TOP} PMFW headers')


if __name__ == '__main__':
    main()
