#!/usr/bin/env python3
"""No long functions: fails when a function in the given folders is longer than the limit.

A function's length is the number of lines from the line of its `fn` keyword to the line of
its closing brace, both included (doc comments and attributes above it do not count; nested
functions and closures count in the function that holds them, and nested functions are also
checked on their own). Comments, string and char literals are blanked first, so braces in them
do not count. Declarations without a body (`fn f();` in a trait) are skipped.

    python3 .ci/fn_length.py [--max N] [--report K] [DIR ...]

Defaults: `--max 80` and `src/sync`. `--report K` also prints the K longest functions. Prints
every function over the limit (file:line name length) and exits 1; prints a one-line summary
and exits 0 otherwise.
"""
import os
import re
import sys


def blank(text):
    """The text with comments and literals replaced by spaces (newlines kept)."""
    out, i, n = [], 0, len(text)

    def keep_lines(s):
        return "".join(c if c == "\n" else " " for c in s)

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(keep_lines(text[i:j]))
            i = j
        elif c in "rb" and re.match(r'(br|r|b)?#*"', text[i:i + 12]) and re.match(r'b?r#*"', text[i:i + 12]) \
                and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'b?r(#*)"', text[i:])
            end = text.find('"' + m.group(1), i + len(m.group(0)))
            j = n if end < 0 else end + 1 + len(m.group(1))
            out.append(keep_lines(text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j += 1
            out.append(keep_lines(text[i:j]))
            i = j
        elif c == "'" and (re.match(r"'(\\.|[^\\'])'", text[i:i + 4]) or re.match(r"'\\[xu]", text[i:i + 3])):
            j = text.find("'", i + 2) + 1
            out.append(" " * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


FN = re.compile(r"\bfn\s+(\w+)")


def functions(path):
    """(name, first line, length) of every function with a body in the file."""
    code = blank(open(path, encoding="utf-8").read())
    found = []
    for m in FN.finditer(code):
        # The body starts at the first `{` after the signature, unless a `;` comes first.
        # Generic bounds and where clauses hold no braces, a signature's `->` type neither.
        j, depth = m.end(), 0
        while j < len(code):
            ch = code[j]
            if ch in "(<[":
                depth += 1
            elif ch in ")>]":
                # `->` is not a closing bracket.
                if not (ch == ">" and code[j - 1] == "-"):
                    depth -= 1
            elif ch == ";" and depth <= 0:
                j = -1
                break
            elif ch == "{" and depth <= 0:
                break
            j += 1
        if j < 0 or j >= len(code):
            continue
        level, k = 0, j
        while k < len(code):
            if code[k] == "{":
                level += 1
            elif code[k] == "}":
                level -= 1
                if level == 0:
                    break
            k += 1
        first = code.count("\n", 0, m.start()) + 1
        last = code.count("\n", 0, k) + 1
        found.append((m.group(1), first, last - first + 1))
    return found


def main(argv):
    limit, report, dirs = 80, 0, []
    args = iter(argv)
    for a in args:
        if a == "--max":
            limit = int(next(args))
        elif a == "--report":
            report = int(next(args))
        else:
            dirs.append(a)
    root = os.path.normpath(os.path.join(os.path.dirname(__file__), ".."))
    dirs = dirs or [os.path.join(root, "src", "sync")]
    rows = []
    for d in dirs:
        for base, _, names in sorted(os.walk(d)):
            for name in sorted(names):
                if name.endswith(".rs"):
                    p = os.path.join(base, name)
                    rel = os.path.relpath(p, root)
                    rows += [(length, rel, line, fname) for fname, line, length in functions(p)]
    rows.sort(key=lambda r: (-r[0], r[1], r[2]))
    for length, rel, line, fname in rows[:report]:
        print(f"{length:5} {rel}:{line} {fname}")
    over = [r for r in rows if r[0] > limit]
    for length, rel, line, fname in over:
        print(f"{rel}:{line}: fn {fname} is {length} lines long (limit {limit})")
    if over:
        sys.exit(1)
    longest = rows[0] if rows else (0, "-", 0, "-")
    print(f"no long functions: {len(rows)} functions in {', '.join(os.path.relpath(d, root) for d in dirs)}, "
          f"the longest {longest[0]} lines ({longest[3]}), limit {limit}")


if __name__ == "__main__":
    main(sys.argv[1:])
