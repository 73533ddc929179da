#!/usr/bin/env python3
"""The crate's public face, read from rustdoc's JSON (the policy: lib.rs, "The public face").

Checks two rules and prints the count of public items:

1. One path per item: every item reachable from the crate root by public paths (modules
   walked, `pub use` followed, globs expanded) is reachable by exactly one path.
2. External types: every type named in a public signature (function parameters and results,
   generic bounds, public fields, enum variants, constants, the methods of inherent impls and
   of public traits) comes from std/core/alloc, serde, serde_json or this crate, and every trait
   a public type implements comes from those or from ALLOWED_TRAIT_CRATES. So mlua, jaq, jiff,
   similar, json-patch... stay private and can be upgraded without a semver break.

Usage (as .ci/run does):

    RUSTC_BOOTSTRAP=1 cargo rustdoc --lib --all-features -- -Z unstable-options --output-format json
    python3 .ci/public_face.py [target/doc/gitops_core.json] [--list]

`--list` prints every public path with its kind. Exit status 1 when a rule is broken, naming
each item and where the foreign type appears.
"""

import collections
import json
import sys

# Crates whose types may appear in public signatures.
ALLOWED_TYPE_CRATES = {"std", "core", "alloc", "serde", "serde_core", "serde_json"}
# Crates whose traits public types may implement, besides ALLOWED_TYPE_CRATES, with the reason.
ALLOWED_TRAIT_CRATES = {
    # `serve` feature: the protocol's JSON Schema is derived from the types themselves
    # (`protocol::Server::json_schema`); the impls exist only with that feature.
    "schemars": "JsonSchema derives of the `serve` feature",
}


def kind_of(item):
    return next(iter(item["inner"]))


class Face:
    def __init__(self, doc):
        self.doc = doc
        self.index = doc["index"]
        self.paths = collections.defaultdict(set)
        self.foreign = []  # (public path, where, crate, type path)

    def item(self, item_id):
        return self.index.get(str(item_id)) if item_id is not None else None

    # --- rule 1: paths -------------------------------------------------------------------
    def walk(self, module_id, prefix, seen):
        for child_id in self.item(module_id)["inner"]["module"]["items"]:
            child = self.item(child_id)
            if child is None or child["visibility"] != "public":
                continue
            kind = kind_of(child)
            target_id, name = child_id, child["name"]
            if kind == "use":
                use = child["inner"]["use"]
                target = self.item(use["id"])
                if use["is_glob"]:
                    if target is not None and kind_of(target) == "module":
                        self.walk(use["id"], prefix, seen)
                    continue
                if target is None:
                    # A re-export of another crate's item: that is a foreign item in the face.
                    self.paths[("extern", use["source"])].add("::".join(prefix + [use["name"]]))
                    continue
                target_id, name, kind = use["id"], use["name"], kind_of(target)
            path = prefix + [name]
            self.paths[target_id].add("::".join(path))
            if kind == "module" and target_id not in seen:
                self.walk(target_id, path, seen | {target_id})

    # --- rule 2: external types ----------------------------------------------------------
    def crate_of(self, type_id):
        summary = self.doc["paths"].get(str(type_id))
        if summary is None:
            return self.doc["external_crates"].get("0", {}).get("name", "?")
        crate_id = summary["crate_id"]
        if crate_id == 0:
            return None
        return self.doc["external_crates"][str(crate_id)]["name"]

    def note(self, where, type_id, path, allowed):
        crate = self.crate_of(type_id)
        if crate is not None and crate not in allowed:
            self.foreign.append((self.current, where, crate, path))

    def ty(self, t, where):
        if t is None:
            return
        (kind, v), = t.items()
        if kind == "resolved_path":
            self.note(where, v["id"], v["path"], ALLOWED_TYPE_CRATES)
            self.args(v.get("args"), where)
        elif kind == "dyn_trait":
            for poly in v["traits"]:
                self.trait_path(poly["trait"], where, ALLOWED_TYPE_CRATES)
        elif kind == "impl_trait":
            self.bounds(v, where)
        elif kind in ("borrowed_ref", "raw_pointer"):
            self.ty(v["type"], where)
        elif kind == "slice":
            self.ty(v, where)
        elif kind == "array":
            self.ty(v["type"], where)
        elif kind == "tuple":
            for x in v:
                self.ty(x, where)
        elif kind == "qualified_path":
            self.ty(v["self_type"], where)
            if v.get("trait"):
                self.trait_path(v["trait"], where, ALLOWED_TYPE_CRATES)
        elif kind == "function_pointer":
            self.sig(v["sig"], where)
        elif kind == "pat":
            self.ty(v["type"], where)
        # primitive, generic, infer: nothing foreign

    def trait_path(self, p, where, allowed):
        self.note(where, p["id"], p["path"], allowed)
        self.args(p.get("args"), where)

    def args(self, args, where):
        if not args:
            return
        if "angle_bracketed" in args:
            for a in args["angle_bracketed"]["args"]:
                if "type" in a:
                    self.ty(a["type"], where)
            for c in args["angle_bracketed"]["constraints"]:
                self.args(c.get("args"), where)
                binding = c.get("binding", {})
                if "equality" in binding and "type" in binding["equality"]:
                    self.ty(binding["equality"]["type"], where)
                if "constraint" in binding:
                    self.bounds(binding["constraint"], where)
        elif "parenthesized" in args:
            for x in args["parenthesized"]["inputs"]:
                self.ty(x, where)
            self.ty(args["parenthesized"]["output"], where)

    def bounds(self, bounds, where):
        for b in bounds:
            if "trait_bound" in b:
                self.trait_path(b["trait_bound"]["trait"], where, ALLOWED_TYPE_CRATES)

    def generics(self, g, where):
        for p in g["params"]:
            k = p["kind"]
            if "type" in k:
                self.bounds(k["type"]["bounds"], where)
                self.ty(k["type"].get("default"), where)
            elif "const" in k:
                self.ty(k["const"]["type"], where)
        for w in g["where_predicates"]:
            if "bound_predicate" in w:
                self.ty(w["bound_predicate"]["type"], where)
                self.bounds(w["bound_predicate"]["bounds"], where)
            elif "eq_predicate" in w:
                self.ty(w["eq_predicate"]["lhs"], where)

    def sig(self, sig, where):
        for name, t in sig["inputs"]:
            self.ty(t, f"{where} parameter `{name}`")
        self.ty(sig["output"], f"{where} result")

    def fields(self, ids, where):
        for fid in ids:
            f = self.item(fid)
            if f is not None and f["visibility"] == "public":
                self.ty(f["inner"]["struct_field"], f"{where} field `{f['name']}`")

    def assoc(self, item_id, where, check_visibility):
        it = self.item(item_id)
        if it is None:
            return
        if check_visibility and it["visibility"] != "public":
            return
        k = kind_of(it)
        at = f"{where}::{it['name']}"
        if k == "function":
            self.generics(it["inner"]["function"]["generics"], at)
            self.sig(it["inner"]["function"]["sig"], at)
        elif k == "assoc_const":
            self.ty(it["inner"]["assoc_const"]["type"], at)
        elif k == "assoc_type":
            self.bounds(it["inner"]["assoc_type"]["bounds"], at)
            self.ty(it["inner"]["assoc_type"].get("type"), at)

    def impls(self, ids, where):
        for iid in ids:
            imp = self.item(iid)["inner"]["impl"]
            if imp["is_synthetic"] or imp["blanket_impl"] is not None:
                continue
            if imp["trait"] is None:
                self.generics(imp["generics"], where)
                for m in imp["items"]:
                    self.assoc(m, where, check_visibility=True)
            else:
                allowed = ALLOWED_TYPE_CRATES | set(ALLOWED_TRAIT_CRATES)
                self.trait_path(imp["trait"], f"{where} impl {imp['trait']['path']}", allowed)
                self.generics(imp["generics"], where)

    def check(self, item_id):
        it = self.item(item_id)
        k = kind_of(it)
        v = it["inner"][k]
        where = self.current
        if k == "function":
            self.generics(v["generics"], where)
            self.sig(v["sig"], where)
        elif k == "struct":
            self.generics(v["generics"], where)
            kind = v["kind"]
            if "plain" in kind:
                self.fields(kind["plain"]["fields"], where)
            elif "tuple" in kind:
                self.fields([f for f in kind["tuple"] if f is not None], where)
            self.impls(v["impls"], where)
        elif k == "enum":
            self.generics(v["generics"], where)
            for vid in v["variants"]:
                var = self.item(vid)
                vk = var["inner"]["variant"]["kind"]
                at = f"{where}::{var['name']}"
                if isinstance(vk, dict) and "tuple" in vk:
                    for fid in vk["tuple"]:
                        if fid is not None:
                            self.ty(self.item(fid)["inner"]["struct_field"], at)
                elif isinstance(vk, dict) and "struct" in vk:
                    for fid in vk["struct"]["fields"]:
                        f = self.item(fid)
                        self.ty(f["inner"]["struct_field"], f"{at} field `{f['name']}`")
            self.impls(v["impls"], where)
        elif k == "trait":
            self.generics(v["generics"], where)
            self.bounds(v["bounds"], where)
            for m in v["items"]:
                self.assoc(m, where, check_visibility=False)
        elif k in ("constant",):
            self.ty(v["type"], where)
        elif k == "static":
            self.ty(v["type"], where)
        elif k == "type_alias":
            self.generics(v["generics"], where)
            self.ty(v["type"], where)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    path = args[0] if args else "target/doc/gitops_core.json"
    with open(path) as f:
        doc = json.load(f)
    face = Face(doc)
    face.walk(doc["root"], [face.item(doc["root"])["name"]], {doc["root"]})

    kinds = collections.Counter()
    for item_id in face.paths:
        it = face.item(item_id) if not isinstance(item_id, tuple) else None
        kinds["re-exported foreign item" if it is None else kind_of(it)] += 1
    if "--list" in sys.argv:
        rows = sorted(
            (sorted(p)[0], "extern" if isinstance(i, tuple) else kind_of(face.item(i)))
            for i, p in face.paths.items()
        )
        for p, k in rows:
            print(f"{k:10} {p}")

    failed = False
    items = sum(n for k, n in kinds.items() if k != "module")
    print(
        f"public face: {items} public items besides {kinds['module']} modules ("
        + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()) if k != "module")
        + ")"
    )
    multi = sorted(sorted(p) for p in face.paths.values() if len(p) > 1)
    for p in multi:
        print(f"error: one item, {len(p)} paths: {', '.join(p)}")
        failed = True
    for item_id, p in face.paths.items():
        if isinstance(item_id, tuple):
            print(f"error: {sorted(p)[0]} re-exports the foreign item {item_id[1]}")
            failed = True
            continue
        face.current = sorted(p)[0]
        face.check(item_id)
    for current, where, crate, type_path in sorted(set(face.foreign)):
        print(f"error: {where}: `{type_path}` is from the crate `{crate}`, not std, serde or serde_json")
        failed = True
    print(
        f"one path per item: {len(multi)} items with more than one; "
        f"foreign types in the public API: {len(set(face.foreign))}"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
