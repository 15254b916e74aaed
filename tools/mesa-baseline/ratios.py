#!/usr/bin/env python3
"""List entry points by Lathe/Mesa ratio of one ir3 statistic, worst first.

    ratios.py MESA.csv LATHE.csv [STAGE] [FIELD] [COUNT]

STAGE is vertex, fragment or compute (default: all), FIELD a Mesa column
(default instr; the Lathe column of the same meaning is read), COUNT the
number of rows printed (default 30). The last line gives the geometric
means of (x + 1) - 1 over the stage, as compare.py does.
"""
import csv
import math
import sys

LATHE_FIELD = {'instr': 'inst'}
STAGE = {'vert': 'vertex', 'frag': 'fragment', 'comp': 'compute'}


def main():
    if not 3 <= len(sys.argv) <= 6:
        sys.exit(__doc__)
    mesa_csv, lathe_csv = sys.argv[1:3]
    stage = sys.argv[3] if len(sys.argv) > 3 and sys.argv[3] != 'all' else None
    field = sys.argv[4] if len(sys.argv) > 4 else 'instr'
    count = int(sys.argv[5]) if len(sys.argv) > 5 else 30
    lathe_field = LATHE_FIELD.get(field, field)
    mesa = {(r['file'], r['entry']): r for r in csv.DictReader(open(mesa_csv)) if r['ok'] == '1'}
    lathe = {(r['file'], r['entry']): r for r in csv.DictReader(open(lathe_csv)) if not r['error']}
    rows = []
    for key in sorted(set(mesa) & set(lathe)):
        if stage and lathe[key]['stage'] != stage and STAGE.get(mesa[key]['stage']) != stage:
            continue
        m, l = float(mesa[key][field]), float(lathe[key][lathe_field])
        rows.append(((l + 1) / (m + 1), m, l, key))
    rows.sort(reverse=True)
    for ratio, m, l, (file, entry) in rows[:count]:
        print(f'{ratio:6.2f} {m:6.0f} {l:6.0f}  {file} {entry}')
    if rows:
        gm = lambda xs: math.exp(sum(math.log(x + 1) for x in xs) / len(xs)) - 1
        print(f'{len(rows)} entry points: Mesa {gm([r[1] for r in rows]):.2f}, '
              f'Lathe {gm([r[2] for r in rows]):.2f} ({field}, geometric mean)')


main()
