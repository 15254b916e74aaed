#!/usr/bin/env python3
"""Run Mesa's Valhall compiler (lathe_valhall_baseline, /work/mesa) over the corpus."""
import csv, os, re, subprocess, sys, time
gpu = sys.argv[1]          # hex gpu id: a867 = G610 (v10), 9093 = G57 (v9)
out = sys.argv[2]
root = '/work/shared/corpus'
exe = '/work/mesa/mesa-25.0.7/build/src/panfrost/compiler/lathe_valhall_baseline'
rows = []
with open(os.path.join(root, 'MANIFEST.tsv')) as f:
    for r in csv.DictReader(f, delimiter='\t'):
        spv = os.path.join(root, r['path'] + '.spv')
        if not os.path.exists(spv) or r['dup_of']:
            continue
        for ep in filter(None, re.split(r'[,\s]+', r['entry_points'])):
            name, st = ep.rsplit(':', 1)
            env = dict(os.environ, PAN_STAGE=st, BIFROST_MESA_DEBUG='shaderdb')
            t0 = time.perf_counter()
            try:
                p = subprocess.run([exe, gpu, spv, name], env=env, capture_output=True, text=True, timeout=60)
                text, rc = p.stdout + p.stderr, p.returncode
            except subprocess.TimeoutExpired:
                text, rc = '', 'timeout'
            ms = (time.perf_counter() - t0) * 1000
            stats = {}
            for line in text.splitlines():
                m = re.match(r'SHADER-DB: \S+ shader: (.*)', line)
                if m:
                    for part in m.group(1).split(','):
                        v, k = part.strip().split(' ', 1)
                        stats[k] = v
            rows.append(dict(file=spv, entry=name, stage=st, rc=rc, ms=f'{ms:.2f}', ok=int('inst' in stats), **stats))
keys = []
for r in rows:
    for k in r:
        if k not in keys:
            keys.append(k)
with open(out, 'w', newline='') as f:
    w = csv.DictWriter(f, fieldnames=keys)
    w.writeheader()
    w.writerows(rows)
ok = [r for r in rows if r['ok']]
ms = sorted(float(r['ms']) for r in rows)
print(f'{gpu}: {len(ok)}/{len(rows)} compiled; median process wall {ms[len(ms)//2]:.2f} ms')
