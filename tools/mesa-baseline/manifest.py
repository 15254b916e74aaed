"""The corpus entry points the Mesa baseline and the timing scripts share.

`entry_points()` yields (SPIR-V file, entry point, stage) for every entry
point of /work/shared/corpus/MANIFEST.tsv whose SPIR-V exists and that is
not a duplicate of another file, in manifest order.
"""
import csv
import os
import re

ROOT = '/work/shared/corpus'


def entry_points():
    with open(os.path.join(ROOT, 'MANIFEST.tsv')) as f:
        for r in csv.DictReader(f, delimiter='\t'):
            spv = os.path.join(ROOT, r['path'] + '.spv')
            if not os.path.exists(spv) or r['dup_of']:
                continue
            for ep in filter(None, re.split(r'[,\s]+', r['entry_points'])):
                name, stage = ep.rsplit(':', 1)
                yield spv, name, stage
