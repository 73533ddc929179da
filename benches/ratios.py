#!/usr/bin/env python3
"""Ratios of medians between pairs of divan benchmarks of one run.

    cargo bench --bench builtin_rules -- every_kind | tee out.txt
    python3 benches/ratios.py [--fastest] out.txt [BUILTIN_SUFFIX LUA_SUFFIX]

Reads divan's table (a benchmark `<name>_builtin` and `<name>_lua`, each with the same
arguments), prints each argument's two medians and the ratio lua / builtin, sorted by ratio,
then the count, the minimum, the median and the maximum ratio. With `--fastest`, the fastest
samples instead of the medians (steadier on a loaded machine).
"""
import re
import statistics
import sys

UNITS = {"ps": 1e-3, "ns": 1.0, "µs": 1e3, "us": 1e3, "ms": 1e6, "s": 1e9}


def nanos(cell):
    m = re.match(r"\s*([0-9.]+)\s*(ps|ns|µs|us|ms|s)\s*$", cell)
    return float(m.group(1)) * UNITS[m.group(2)] if m else None


def read(lines, fastest=False):
    """{bench: {arg: median_ns}} from divan's tree (the fastest sample with `fastest`)."""
    out, bench = {}, None
    for line in lines:
        prefix = re.match(r"^[\s│├╰─]*", line).group(0)
        # depth: a benchmark is one level below the file, an argument two.
        depth = len(prefix) // 3
        cells = line[len(prefix):].rstrip("\n").split("│")
        parts = cells[0].split()
        if not parts:
            continue
        median = nanos(cells[2]) if len(cells) >= 4 else None
        if fastest and median is not None:
            median = nanos(" ".join(parts[1:3]))
        if depth == 1:
            bench = parts[0]
            out.setdefault(bench, {})
            if median is not None:
                out[bench][""] = median
        elif depth >= 2 and bench is not None and median is not None:
            out[bench][parts[0]] = median
    return out


def main():
    args = [a for a in sys.argv[1:] if a != "--fastest"]
    path = args[0]
    fast, slow = (args[1], args[2]) if len(args) > 2 else ("_builtin", "_lua")
    with open(path, encoding="utf-8") as f:
        benches = read(f, "--fastest" in sys.argv[1:])
    rows = []
    for name, args in benches.items():
        if not name.endswith(fast):
            continue
        other = benches.get(name[: -len(fast)] + slow, {})
        for arg, b in args.items():
            if arg in other and b > 0:
                rows.append((other[arg] / b, name[: -len(fast)], arg, b, other[arg]))
    rows.sort()
    for ratio, name, arg, b, l in rows:
        print(f"{name:<24} {arg:<60} {b:>12.1f} ns {l:>12.1f} ns {ratio:>8.1f}x")
    if rows:
        ratios = [r[0] for r in rows]
        print(f"{len(rows)} pairs: min {min(ratios):.1f}x, median {statistics.median(ratios):.1f}x, "
              f"max {max(ratios):.1f}x")


if __name__ == "__main__":
    main()
