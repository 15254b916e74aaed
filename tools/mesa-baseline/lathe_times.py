#!/usr/bin/env python3
"""Time whole `lathe compile` processes over the corpus, as run.py times Mesa's.

    lathe_times.py LATHE_BINARY GPU     # e.g. target/release/lathe a630

Same entry points as run.py (MANIFEST.tsv, duplicates skipped), one
`lathe compile --gpu GPU --entry NAME --emit stats FILE.spv` process each,
wall time including `subprocess.run`'s own overhead (run.py's Mesa times
include it too); prints the median.
"""
import subprocess
import sys
import time

from manifest import entry_points



def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    binary, gpu = sys.argv[1:]
    times = []
    for spv, name, _stage in entry_points():
        start = time.perf_counter()
        subprocess.run([binary, 'compile', '--gpu', gpu, '--entry', name, '--emit', 'stats', spv],
                       capture_output=True)
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    print(f'{gpu}: {len(times)} processes; median wall {times[len(times) // 2]:.2f} ms')


main()
