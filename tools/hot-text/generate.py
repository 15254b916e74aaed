#!/usr/bin/env python3
"""Writes the linker script that puts the code a compile runs first in `.text`.

    python3 tools/hot-text/generate.py target/release/lathe [-o tools/hot-text/lathe.ld]

A `lathe compile` process runs a small part of its 13 MB of code, but
spread over 4-5 MB of it. Each 64 KiB of code it touches first costs a
page fault that maps 16 pages (about 5 us each in a VM, 70 of them per
process), and scattered code costs TLB and cache misses besides. The
script places the functions a few compiles run, for both targets, side
by side at the start of the code (3.4 MB with WGSL's), so they share
pages.

The functions are found by running the binary under callgrind (valgrind
must be installed) on the shaders in PROFILE, one process per shader and
GPU, and reading the names of the functions that ran. They are grouped by
which runs used them (all of them first, then ir3 only, Valhall only,
WGSL only) and sorted by name within a group, which keeps a module's
functions together. A Rust symbol's hash is replaced by a wildcard, so
the script survives changes to the code around a function, except where
the binary has several instances of a generic function under that name:
those keep their hash (it depends on the toolchain and the crate's
metadata, not on the code), so the others stay out of the way. A renamed
or new function, or a stale hash, just lands in the ordinary `.text`
again. Regenerate after large changes or a toolchain update.

`build.rs` hands the script to the linker for the `lathe` binary in
release builds (`-T` with `INSERT`: it adds to the default script).
"""

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile

CORPUS = "/work/shared/corpus"
# (file under the corpus, extra arguments): vertex and fragment stages, the
# corpus-median shader first, and one WGSL source.
PROFILE = [
    ("sascha-vulkan/pipelinestatistics/scene.frag.spv", []),
    ("sascha-vulkan/pipelinestatistics/scene.vert.spv", []),
    ("sascha-vulkan/pbribl/pbribl.frag.spv", []),
    ("sascha-vulkan/texture/texture.vert.spv", []),
    ("webgpu-samples/animometer/animometer.wgsl.spv", ["--entry", "vert_main", "--stage", "vert"]),
]
WGSL = [("webgpu-samples/_shared/basic.vert.wgsl", [])]
GPUS = ["a630", "g610"]

HASH = re.compile(r"17h[0-9a-f]{16}E")


def functions(binary, args):
    """The (mangled) names of the functions one process ran."""
    with tempfile.NamedTemporaryFile(suffix=".cg") as out:
        subprocess.run(
            ["valgrind", "--tool=callgrind", "--demangle=no", f"--callgrind-out-file={out.name}", binary, *args],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        names = set()
        for line in open(out.name, encoding="utf-8", errors="replace"):
            m = re.match(r"c?fn=\(\d+\) (.+)", line)
            if m:
                names.add(m.group(1).strip())
        return names


def instances(binary):
    """How many functions of the binary share each name without its hash."""
    out = subprocess.run(["nm", binary], check=True, capture_output=True, text=True).stdout
    count = collections.Counter()
    for line in out.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[1] in "tTwW":
            count[HASH.sub("17h*", fields[2].split(".llvm.")[0])] += 1
    return count


def pattern(name, shared):
    """The input section pattern for a Rust function, or None for others:
    without its hash unless it is one of several instances of a generic
    function (those would all match)."""
    if not name.startswith("_ZN"):
        return None
    name = name.split(".llvm.")[0].split("'")[0]
    if not HASH.search(name):
        return None
    general = HASH.sub("17h*", name)
    return ".text." + (name + "*" if shared[general] > 1 else general)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("binary")
    parser.add_argument("-o", "--output", default=os.path.join(os.path.dirname(__file__), "lathe.ld"))
    parser.add_argument("--corpus", default=CORPUS)
    opts = parser.parse_args()

    shared = instances(opts.binary)
    used = collections.defaultdict(set)  # pattern -> groups that ran it
    for gpu in GPUS:
        for path, extra in PROFILE:
            args = ["compile", "--gpu", gpu, *extra, "--emit", "stats", os.path.join(opts.corpus, path)]
            for name in functions(opts.binary, args):
                if (p := pattern(name, shared)):
                    used[p].add(gpu)
    for path, extra in WGSL:
        for gpu in GPUS:
            args = ["compile", "--gpu", gpu, *extra, "--emit", "stats", os.path.join(opts.corpus, path)]
            for name in functions(opts.binary, args):
                if (p := pattern(name, shared)):
                    used[p].add("wgsl-" + gpu)

    def group(runs):
        if set(GPUS) <= runs:
            return 0
        if "a630" in runs:
            return 1
        if "g610" in runs:
            return 2
        return 3

    ordered = sorted(used, key=lambda p: (group(used[p]), p))
    with open(opts.output, "w") as out:
        out.write("/* Generated by tools/hot-text/generate.py: the functions a compile runs,\n")
        out.write("   placed together before the rest of the code. Do not edit. */\n")
        out.write("SECTIONS\n{\n  .text.lathe_hot :\n  {\n")
        for p in ordered:
            out.write(f"    *({p})\n")
        out.write("  }\n}\nINSERT BEFORE .text;\n")
    counts = collections.Counter(group(r) for r in used.values())
    print(f"{len(ordered)} patterns: {counts[0]} shared, {counts[1]} ir3, {counts[2]} Valhall, {counts[3]} WGSL", file=sys.stderr)


if __name__ == "__main__":
    main()
