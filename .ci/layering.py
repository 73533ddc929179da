#!/usr/bin/env python3
"""Imports run one way: fails when the library's `use` graph has a circle.

Reads every library file under src/ (not src/bin, not src/tests, not `#[cfg(test)]` blocks),
collects the paths it names (`use` trees and `crate::`/`super::`/`self::` paths in code),
resolves each through the re-exports of `mod.rs` files to the file that defines the item, and
checks two graphs for cycles:

- files: an edge from a file to every other file whose items it uses; a `mod.rs` (or
  `lib.rs`) is the top of its own module, so its uses of its submodules are no edges, while
  a submodule's uses of it are;
- modules: the same edges between the top-level modules (`diff`, `ignore`, `sync`, ...) and,
  inside each module, between its direct submodules.

Prints every circle found and exits 1; prints a one-line summary and exits 0 otherwise.
    python3 .ci/layering.py [SRC_DIR]
"""
import os
import re
import sys

SRC = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "src")
SRC = os.path.normpath(SRC)


def module_of(path):
    rel = os.path.relpath(path, SRC)[:-3].split(os.sep)
    if rel == ["lib"]:
        return ("crate",)
    if rel[-1] == "mod":
        rel = rel[:-1]
    return ("crate", *rel)


def strip(text):
    """Removes comments, string literals, char literals and `#[cfg(test)]` modules."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'r(#*)"', text[i:])
            end = text.find('"' + m.group(1), i + len(m.group(0)))
            i = n if end < 0 else end + 1 + len(m.group(1))
            out.append('""')
        elif c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            out.append('""')
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:i + 4]) or c == "'" and re.match(r"'\\[xu]", text[i:i + 3]):
            j = text.find("'", i + 2)
            i = j + 1
            out.append("' '")
        else:
            out.append(c)
            i += 1
    s = "".join(out)
    # `#[cfg(test)] mod NAME { ... }` blocks: test code may reach anywhere.
    while True:
        m = re.search(r"#\[cfg\(test\)\]\s*(pub(\([a-z]+\))?\s+)?mod\s+\w+\s*\{", s)
        if not m:
            break
        depth, j = 1, m.end()
        while j < len(s) and depth:
            depth += {"{": 1, "}": -1}.get(s[j], 0)
            j += 1
        s = s[:m.start()] + s[j:]
    return s


def expand(tree):
    """`a::{b, c::{d as e}, self}` -> [(["a","b"], "b"), (["a","c","d"], "e"), (["a"], "a")]."""
    tree = re.sub(r"\s+", "", tree)
    out = []

    def walk(prefix, t):
        parts = split_top(t)
        for p in parts:
            if not p:
                continue
            brace = p.find("{")
            if brace >= 0:
                head = [x for x in p[:brace].split("::") if x]
                walk(prefix + head, p[brace + 1:-1])
            else:
                alias = None
                if "as" in p and re.search(r"[a-zA-Z0-9_]as[A-Z_a-z]", p):
                    # `xasy` after whitespace removal: split on the last `as` boundary.
                    pass
                segs = p.split("::")
                last = segs[-1]
                m = re.match(r"^(\w+?)as(\w+)$", last) if ALIASES.get(last) else None
                if m:
                    segs[-1], alias = m.group(1), m.group(2)
                if segs == ["self"]:
                    out.append((prefix, alias or prefix[-1]))
                else:
                    out.append((prefix + segs, alias or segs[-1]))

    walk([], tree)
    return out


ALIASES = {}


def split_top(t):
    parts, depth, cur = [], 0, ""
    for ch in t:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return parts


def parse_uses(code):
    """Every `use` item: (is_pub, [(segments, alias)])."""
    uses = []
    for m in re.finditer(r"(?m)^\s*(pub(\([^)]*\))?\s+)?use\s+([^;]+);", code):
        raw = m.group(3)
        # Mark `x as y` so expand() can split it after whitespace is removed.
        for a in re.finditer(r"(\w+)\s+as\s+(\w+)", raw):
            ALIASES[a.group(1) + "as" + a.group(2)] = True
        uses.append((m.group(1) is not None, expand(raw), m.start(), m.end()))
    return uses


def main():
    files = {}
    for root, dirs, names in os.walk(SRC):
        rel = os.path.relpath(root, SRC)
        if rel.split(os.sep)[0] in ("bin", "tests"):
            continue
        for name in names:
            if name.endswith(".rs"):
                p = os.path.join(root, name)
                files[module_of(p)] = p
    code = {m: strip(open(p, encoding="utf-8").read()) for m, p in files.items()}
    children = {m: set(re.findall(r"(?m)^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", c)) for m, c in code.items()}
    uses = {m: parse_uses(c) for m, c in code.items()}

    def absolute(mod, segs):
        if not segs:
            return None
        head = segs[0]
        if head == "crate":
            return ["crate", *segs[1:]]
        if head == "super":
            base = list(mod)
            while segs and segs[0] == "super":
                base, segs = base[:-1], segs[1:]
            return base + segs
        if head == "self":
            return list(mod) + segs[1:]
        if head in children.get(mod, ()):
            return list(mod) + segs
        return None  # an outside crate, std, or a local name

    # Names each module binds by `use` (alias -> absolute path), re-exports included.
    binds = {}
    reexports = {}
    for mod, items in uses.items():
        for is_pub, trees, _, _ in items:
            for segs, alias in trees:
                a = absolute(mod, segs)
                if a is None:
                    continue
                binds.setdefault(mod, {})[alias] = a
                if is_pub:
                    reexports.setdefault(mod, {})[alias] = a

    def resolve(path, depth=0):
        """The module (file) that defines the item a path names."""
        best = None
        for k in range(len(path), 0, -1):
            if tuple(path[:k]) in files:
                best = k
                break
        if best is None:
            return None
        mod = tuple(path[:best])
        rest = path[best:]
        if rest and depth < 20 and rest[0] in reexports.get(mod, {}):
            return resolve(reexports[mod][rest[0]] + rest[1:], depth + 1)
        return mod

    edges = {m: set() for m in files}

    def add(mod, t):
        # A `mod.rs` using its own submodules is the module's top; its children using it are
        # the edges that count (they may not reach back up through it).
        if t and t != mod and t[:len(mod)] != mod:
            edges[mod].add(t)
    for mod, c in code.items():
        # `use` items: a re-export in a `mod.rs` (or lib.rs) of its own descendants is its face.
        facade = files[mod].endswith(("mod.rs", "lib.rs"))
        spans = []
        for is_pub, trees, start, end in uses[mod]:
            spans.append((start, end))
            for segs, _ in trees:
                a = absolute(mod, segs)
                if a is None:
                    continue
                if facade and is_pub and a[:len(mod)] == list(mod):
                    continue
                add(mod, resolve(a))
        # Paths in code outside `use` items.
        body = c
        for start, end in reversed(spans):
            body = body[:start] + body[end:]
        for m in re.finditer(r"(?<![\w:])((?:crate|super|self)(?:::\w+)+|\w+(?:::\w+)+)", body):
            segs = m.group(1).split("::")
            a = absolute(mod, segs)
            if a is None and segs[0] in binds.get(mod, {}):
                a = binds[mod][segs[0]] + segs[1:]
            if a is None:
                continue
            add(mod, resolve(a))
        # Plain names bound by a non-re-export `use` count through the `use` already.

    problems = []
    problems += [("files", c) for c in cycles(edges)]
    # Module level: at every depth, the direct submodules of one parent.
    parents = {m[:-1] for m in files if len(m) > 1}
    for parent in sorted(parents):
        level = len(parent) + 1
        group = {}
        for a, ts in edges.items():
            if len(a) < level or a[:len(parent)] != parent:
                continue
            for t in ts:
                if len(t) < level or t[:len(parent)] != parent or t[:level] == a[:level]:
                    continue
                group.setdefault(a[:level], set()).add(t[:level])
        problems += [("modules of " + "::".join(parent), c) for c in cycles(group)]
    if problems:
        name = "::".join
        for where, (cyc, comp) in problems:
            print(f"import circle among {where}: " + " -> ".join(name(m) for m in cyc + [cyc[0]]))
            if len(comp) > len(cyc):
                print("  (all of " + ", ".join(name(m) for m in comp) + " reach each other)")
        sys.exit(1)
    n_edges = sum(len(v) for v in edges.values())
    print(f"imports run one way: {len(files)} files, {n_edges} file edges, no circle")


def cycles(graph):
    """One cycle per strongly connected component with more than one node (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    nodes = sorted(set(graph) | {t for ts in graph.values() for t in ts})
    sys.setrecursionlimit(10000)

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append((path_in(graph, set(comp)), sorted(comp)))

    for v in nodes:
        if v not in index:
            strong(v)
    return out


def path_in(graph, comp):
    """A shortest cycle through the smallest node of a strongly connected component."""
    start = min(comp)
    prev, frontier = {start: None}, [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph.get(v, ())):
                if w == start:
                    path = [v]
                    while prev[path[-1]] is not None:
                        path.append(prev[path[-1]])
                    return list(reversed(path))
                if w in comp and w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    return sorted(comp)


if __name__ == "__main__":
    main()
