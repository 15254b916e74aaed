#!/usr/bin/env python3
"""Run Mesa's ir3_compiler (patched cmdline, /work/mesa) over the corpus."""
import csv, os, re, subprocess, sys
gpu = sys.argv[1]
out = sys.argv[2]
root = '/work/shared/corpus'
exe = '/work/mesa/mesa-25.0.7/build/src/gallium/drivers/freedreno/ir3_compiler'
stage_env = {'vert': 'vert', 'frag': 'frag', 'comp': 'comp'}
rows = []
with open(os.path.join(root, 'MANIFEST.tsv')) as f:
    for r in csv.DictReader(f, delimiter='\t'):
        spv = os.path.join(root, r['path'] + '.spv')
        if not os.path.exists(spv) or r['dup_of']:
            continue
        for ep in filter(None, re.split(r'[,\s]+', r['entry_points'])):
            name, st = ep.rsplit(':', 1)
            env = dict(os.environ, IR3_STAGE=stage_env[st])
            try:
                p = subprocess.run([exe, '--gpu', gpu, spv, name], env=env, capture_output=True, text=True, timeout=60)
                text, rc = p.stdout + p.stderr, p.returncode
            except subprocess.TimeoutExpired:
                text, rc = '', 'timeout'
            stats = {}
            for line in text.splitlines():
                m = re.match(r'; \S+ prog \d+/\d+: (.*)', line)
                if m:
                    for part in m.group(1).split(','):
                        v, k = part.strip().split(' ', 1)
                        stats[k] = v
            rows.append(dict(file=spv, entry=name, stage=st, rc=rc, ok=int('instr' in stats), **stats))
keys = []
for r in rows:
    for k in r:
        if k not in keys:
            keys.append(k)
with open(out, 'w', newline='') as f:
    w = csv.DictWriter(f, fieldnames=keys)
    w.writeheader()
    w.writerows(rows)
ok = sum(r['ok'] for r in rows)
print(f'{gpu}: {ok}/{len(rows)} compiled')
