#!/usr/bin/env python3
"""Whole-process compile times of Mesa's offline compilers and Lathe, measured alike.

    proctime.py [--rounds N] [--limit N] LATHE_BINARY

Builds `proctime.c` (beside this file) into /tmp if needed and hands it one
job list: for every entry point run.py compiles (MANIFEST.tsv, duplicates
skipped), Mesa's ir3 for a630, `lathe compile --gpu a630`, Mesa's Valhall
for G610 and `lathe compile --gpu g610`, interleaved, plus `/bin/true` as
the floor any process costs. proctime runs the whole list N times (default
11) with posix_spawn/wait4, output to /dev/null, so Python's own process
start (about 0.7 ms with `subprocess.run`) is not in any number.

Reports per compiler, over the entry points that both Mesa and Lathe
compile: the median of the per-entry-point median wall times, the same of
CPU time (user + system from wait4, robust to machine load, unlike wall),
the median of minor page faults, and Mesa's medians divided by Lathe's.
"""
import argparse
import os
import statistics
import subprocess
import sys

from manifest import entry_points

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = '/work/mesa/mesa-25.0.7/build'
IR3 = f'{BUILD}/src/gallium/drivers/freedreno/ir3_compiler'
VALHALL = f'{BUILD}/src/panfrost/compiler/lathe_valhall_baseline'


def jobs(lathe, spv, name, stage):
    """(compiler, environment, argv) per compiler for one entry point, as run.py and lathe_times.py run them."""
    def lathe_job(gpu):
        return [lathe, 'compile', '--gpu', gpu, '--entry', name, '--stage', stage, '--emit', 'stats', spv]
    return [
        ('mesa-a630', [f'IR3_STAGE={stage}'], [IR3, '--gpu', '630', spv, name]),
        ('lathe-a630', [], lathe_job('a630')),
        ('mesa-g610', [f'PAN_STAGE={stage}', 'BIFROST_MESA_DEBUG=shaderdb'], [VALHALL, 'a867', spv, name]),
        ('lathe-g610', [], lathe_job('g610')),
    ]


def proctime_binary():
    source = os.path.join(HERE, 'proctime.c')
    binary = '/tmp/lathe-proctime'
    if not os.path.exists(binary) or os.path.getmtime(binary) < os.path.getmtime(source):
        subprocess.run(['cc', '-O2', '-o', binary, source], check=True)
    return binary


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('lathe')
    ap.add_argument('--rounds', type=int, default=11)
    ap.add_argument('--limit', type=int, help='only the first N entry points (a quick look)')
    args = ap.parse_args()
    lathe = os.path.abspath(args.lathe)

    listed = []  # (entry point index or None, compiler)
    lines = []
    for i, (spv, name, stage) in enumerate(entry_points()):
        if args.limit is not None and i >= args.limit:
            break
        for compiler, env, argv in jobs(lathe, spv, name, stage):
            listed.append((i, compiler))
            lines.append('\t'.join(env + ['--'] + argv))
    listed.append((None, 'true'))
    lines.append('--\t/bin/true')

    out = subprocess.run([proctime_binary(), str(args.rounds)], input='\n'.join(lines) + '\n',
                         capture_output=True, text=True, check=True).stdout
    results = {}  # (entry, compiler) -> (status, wall, cpu, faults)
    for row, (entry, compiler) in zip(out.splitlines(), listed):
        _job, status, wall, cpu, faults, _fastest = row.split('\t')
        results[entry, compiler] = (int(status), float(wall), float(cpu), float(faults))

    load = open('/proc/loadavg').read().split()[:3]
    entries = sorted({e for e, _ in listed if e is not None})
    print(f'{len(entries)} entry points, {args.rounds} rounds, load average {" ".join(load)}')
    true = results[None, 'true']
    print(f'/bin/true: {true[1]:.2f} ms wall, {true[2]:.2f} ms CPU, {true[3]:.0f} faults')
    for gpu in ['a630', 'g610']:
        both = [e for e in entries
                if results[e, f'mesa-{gpu}'][0] == 0 and results[e, f'lathe-{gpu}'][0] == 0]
        medians = {}
        for who in ['mesa', 'lathe']:
            rows = [results[e, f'{who}-{gpu}'] for e in both]
            medians[who] = [statistics.median(r[k] for r in rows) for k in (1, 2, 3)]
            ok = sum(results[e, f'{who}-{gpu}'][0] == 0 for e in entries)
            print(f'{who:5} {gpu}: {ok} of {len(entries)} compile; over the {len(both)} both compile: '
                  f'median {medians[who][0]:.2f} ms wall, {medians[who][1]:.2f} ms CPU, '
                  f'{medians[who][2]:.0f} faults')
        mesa, lathe_ = medians['mesa'], medians['lathe']
        print(f'      {gpu}: Mesa / Lathe = {mesa[0] / lathe_[0]:.2f}x wall, {mesa[1] / lathe_[1]:.2f}x CPU')


if __name__ == '__main__':
    sys.exit(main())
