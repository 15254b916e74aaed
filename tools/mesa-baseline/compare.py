#!/usr/bin/env python3
"""Compare Lathe with Mesa entry point by entry point.

    compare.py ir3|valhall MESA.csv LATHE.csv

MESA.csv comes from run.py, LATHE.csv from
`lathe stats --gpu MODEL --format csv /work/shared/corpus`. Only entry points
that both compilers compile are compared; geometric means are of (x + 1) - 1
so that zero counts are allowed.
"""
import csv
import math
import sys

FIELDS = {
    # (Mesa's field, Lathe's field)
    'ir3': [('instr', 'inst'), ('nops', 'nops'), ('non-nops', 'non-nops'), ('mov', 'mov'),
            ('cov', 'cov'), ('full', 'full'), ('half', 'half'), ('constlen', 'constlen'),
            ('(ss)', '(ss)'), ('(sy)', '(sy)'), ('cat5', 'cat5'), ('dwords', 'dwords')],
    'valhall': [('inst', 'instrs'), ('cycles', 'cycles'), ('fma', 'fma'), ('cvt', 'cvt'),
                ('sfu', 'sfu'), ('v', 'v'), ('t', 't'), ('ls', 'ls'), ('threads', 'threads')],
}


def geomean(values):
    return math.exp(sum(math.log(v + 1) for v in values) / len(values)) - 1


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in FIELDS:
        sys.exit(__doc__)
    kind, mesa_csv, lathe_csv = sys.argv[1:]
    mesa = {(r['file'], r['entry']): r for r in csv.DictReader(open(mesa_csv)) if r['ok'] == '1'}
    lathe = {(r['file'], r['entry']): r for r in csv.DictReader(open(lathe_csv)) if not r['error']}
    both = sorted(set(mesa) & set(lathe))
    print(f'Mesa compiles {len(mesa)}, Lathe {len(lathe)}, both {len(both)}')
    if not both:
        return
    print(f"{'field':10} {'Mesa':>8} {'Lathe':>8}  Lathe lower / higher")
    for mesa_field, lathe_field in FIELDS[kind]:
        m = [float(mesa[k][mesa_field]) for k in both]
        l = [float(lathe[k][lathe_field]) for k in both]
        lower = sum(a < b for a, b in zip(l, m))
        higher = sum(a > b for a, b in zip(l, m))
        print(f'{mesa_field:10} {geomean(m):8.2f} {geomean(l):8.2f}  {lower:4} / {higher:4}')


main()
