#!/usr/bin/env python3
"""Seeds fuzz/corpus/<target>/ from the conformance data under testdata/.

Every target reads its first byte as a mode: an even byte (the character '0') means the rest
is JSON text, an odd one means the rest drives the target's generator. The seeds written here
are JSON-mode inputs built from the objects, ignore rules, Lua scripts and plan cases of
testdata/, plus a few generator-mode inputs. The corpus is not committed (see .gitignore);
the small seeds kept under testdata/fuzz/ are.

Usage (from the repository root): python3 fuzz/seed-corpus.py
"""

import glob
import hashlib
import itertools
import json
import os
import random

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTDATA = os.path.join(ROOT, "testdata")
CORPUS = os.path.join(ROOT, "fuzz", "corpus")
LIMIT = 300  # seeds per target


def documents():
    """Every YAML/JSON document under testdata/, except the schemas and the fuzz inputs."""
    for path in sorted(glob.glob(os.path.join(TESTDATA, "**", "*"), recursive=True)):
        rel = os.path.relpath(path, TESTDATA)
        if rel.startswith(("k8s", "fuzz", "diff/smp/schema")) or os.path.getsize(path) > 200_000:
            continue
        if not path.endswith((".yaml", ".yml", ".json")):
            continue
        try:
            with open(path, encoding="utf-8") as f:
                yield from (d for d in yaml.safe_load_all(f) if d is not None)
        except (yaml.YAMLError, UnicodeDecodeError):
            continue


def walk(v):
    yield v
    if isinstance(v, dict):
        for x in v.values():
            yield from walk(x)
    elif isinstance(v, list):
        for x in v:
            yield from walk(x)


def write(target, data):
    os.makedirs(os.path.join(CORPUS, target), exist_ok=True)
    name = hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(CORPUS, target, name), "wb") as f:
        f.write(data)


def json_seed(target, value):
    write(target, b"0" + json.dumps(value, sort_keys=True, default=str).encode())


def main():
    objects, rules, plans, scripts = [], [], [], []
    for doc in documents():
        for v in walk(doc):
            if isinstance(v, dict):
                if "apiVersion" in v and "kind" in v and isinstance(v.get("metadata"), dict):
                    objects.append(v)
                if isinstance(v.get("jsonPointers"), list) or isinstance(
                    v.get("jqPathExpressions"), list
                ):
                    rules.append(v)
                if v.get("kind") == "plan" and isinstance(v.get("request"), dict):
                    plans.append(v)
            elif isinstance(v, str) and "return" in v and "obj" in v:
                scripts.append(v)
    for path in glob.glob(os.path.join(TESTDATA, "**", "*.lua"), recursive=True):
        with open(path, encoding="utf-8") as f:
            scripts.append(f.read())

    rng = random.Random(1)
    by_kind = {}
    for o in objects:
        # Keyed by the text of both fields: a case may hold any JSON there.
        by_kind.setdefault((json.dumps(o.get("apiVersion")), json.dumps(o.get("kind"))), []).append(o)
    pairs = [p for group in by_kind.values() for p in itertools.product(group[:12], repeat=2)]
    rng.shuffle(pairs)
    for desired, live in pairs[:LIMIT]:
        json_seed("diff", {"desired": desired, "live": live, "flags": rng.randrange(16)})
        json_seed("strategic_merge", {"kind": rng.randrange(6), "a": desired, "b": live,
                                      "c": live, "patch": desired})
    for o in objects[:LIMIT]:
        json_seed("health_assess", o)
    for r in rules[:LIMIT]:
        rule = {k: r[k] for k in ("group", "kind", "name", "namespace", "jsonPointers",
                                  "jqPathExpressions") if k in r}
        for o in rng.sample(objects, min(3, len(objects))):
            json_seed("ignore_rules", {"rules": [rule], "object": o})
    for s in scripts[:LIMIT]:
        write("lua_eval", b"0" + s.encode())
        write("lua_eval", b"1" + s.encode())
    for p in plans[:LIMIT]:
        json_seed("plan_build", {"request": p["request"], "observations": p.get("observations", {})})
    for target in ("diff", "strategic_merge", "ignore_rules", "health_assess", "plan_build"):
        for _ in range(32):
            write(target, b"1" + bytes(rng.randrange(256) for _ in range(rng.randrange(8, 256))))
    for target in sorted(os.listdir(CORPUS)):
        print(target, len(os.listdir(os.path.join(CORPUS, target))))


if __name__ == "__main__":
    main()
