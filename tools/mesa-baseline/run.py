#!/usr/bin/env python3
"""Run Mesa's ir3 or Valhall compiler over the corpus, one CSV row per entry point.

    run.py ir3 GPU_ID OUT.csv       # GPU_ID: 630, 740 (patched ir3_compiler)
    run.py valhall GPU_ID OUT.csv   # GPU_ID hex: a867 = G610 (v10), 9093 = G57 (v9)

Reads the corpus MANIFEST.tsv (duplicate files skipped), records Mesa's
shader-db fields (ir3's `; X prog` lines, Valhall's `SHADER-DB:` line) and
the whole process's wall time.
"""
import csv
import os
import re
import subprocess
import sys
import time

from manifest import entry_points

BUILD = '/work/mesa/mesa-25.0.7/build'
COMPILERS = {
    # kind: (argv before the file, environment variable for the stage, extra env, stats line)
    'ir3': (lambda gpu: [f'{BUILD}/src/gallium/drivers/freedreno/ir3_compiler', '--gpu', gpu],
            'IR3_STAGE', {}, r'; \S+ prog \d+/\d+: (.*)'),
    'valhall': (lambda gpu: [f'{BUILD}/src/panfrost/compiler/lathe_valhall_baseline', gpu],
                'PAN_STAGE', {'BIFROST_MESA_DEBUG': 'shaderdb'}, r'SHADER-DB: \S+ shader: (.*)'),
}


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in COMPILERS:
        sys.exit(__doc__)
    kind, gpu, out = sys.argv[1:]
    argv, stage_var, extra_env, stats_line = COMPILERS[kind]
    rows = []
    for spv, name, stage in entry_points():
        env = dict(os.environ, **extra_env, **{stage_var: stage})
        start = time.perf_counter()
        try:
            p = subprocess.run(argv(gpu) + [spv, name], env=env,
                               capture_output=True, text=True, timeout=60)
            text, rc = p.stdout + p.stderr, p.returncode
        except subprocess.TimeoutExpired:
            text, rc = '', 'timeout'
        ms = (time.perf_counter() - start) * 1000
        stats = {}
        for line in text.splitlines():
            m = re.match(stats_line, line)
            if m:
                for part in m.group(1).split(','):
                    value, field = part.strip().split(' ', 1)
                    stats[field] = value
        ok = int('instr' in stats or 'inst' in stats)
        rows.append(dict(file=spv, entry=name, stage=stage, rc=rc, ms=f'{ms:.2f}', ok=ok, **stats))
    fields = []
    for r in rows:
        fields += [k for k in r if k not in fields]
    with open(out, 'w', newline='') as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    times = sorted(float(r['ms']) for r in rows)
    print(f"{kind} {gpu}: {sum(r['ok'] for r in rows)}/{len(rows)} compiled; "
          f"median process wall {times[len(times) // 2]:.2f} ms")


main()
