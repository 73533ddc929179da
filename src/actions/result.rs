//! Reading what action and discovery scripts return (pure: JSON in, data out).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::kinds::table::{self, Edits, Node, Out, Slot};
use super::kinds::{Entry, Offers};
use super::{ActionPolicy, ImpactedResource, Operation, ResourceAction, ResourceActionParam};
use crate::diff::PatchOp;
use crate::object::{ObjectRef, RefParts, escape_pointer_token, type_name};

/// A result that cannot be used: the RFC 6901 pointer into the script's result and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Bad {
    pub(super) pointer: String,
    pub(super) message: String,
}

fn bad(pointer: impl Into<String>, message: impl Into<String>) -> Bad {
    Bad { pointer: pointer.into(), message: message.into() }
}

/// A member matched as Go's JSON decoder matches a struct field: case-insensitively, the
/// last match (in the sorted order gopher-json writes members) winning.
fn field<'a>(m: &'a Map<String, Value>, name: &str) -> Option<(&'a String, &'a Value)> {
    m.iter().rev().find(|(k, _)| k.eq_ignore_ascii_case(name))
}

/// `at` is the pointer of `m`, written only for an error.
fn text_field(m: &Map<String, Value>, name: &str, at: &dyn Fn() -> String) -> Result<String, Bad> {
    match field(m, name) {
        None => Ok(String::new()),
        Some((_, Value::String(s))) => Ok(s.clone()),
        Some((k, other)) => Err(bad(
            format!("{}/{}", at(), escape_pointer_token(k)),
            format!("expected a string, found {}", type_name(other)),
        )),
    }
}

/// Adds the actions of one discovery result (Argo CD's `ExecuteResourceActionDiscovery`):
/// an empty table offers nothing; each member is an action named by its key (a `name` field
/// renames it), enabled unless `disabled = true`; an action already in `found` (from an
/// earlier script) is kept.
pub(super) fn read_discovery(
    json: &Value,
    found: &mut BTreeMap<String, ResourceAction>,
) -> Result<(), Bad> {
    // A built-in's table arrives unencoded: its empty tables are `{}`, read as the `[]` the
    // engine's encoding makes of them.
    let members = match json {
        Value::Array(a) if a.is_empty() => return Ok(()),
        Value::Object(m) => m,
        other => {
            return Err(bad(
                "",
                format!("expected a table of actions by name, found {}", type_name(other)),
            ));
        }
    };
    for (key, value) in members {
        if found.contains_key(key) {
            continue;
        }
        let at = || format!("/{}", escape_pointer_token(key));
        let mut action = ResourceAction::named(key);
        match value {
            // `{}` encodes as `[]`: an action with nothing set. A list is read the same way
            // (Argo CD only looks at its type).
            Value::Array(_) => {}
            Value::Object(m) => {
                if let Some((_, v)) = field(m, "name") {
                    match v {
                        Value::String(s) => action.name = s.clone(),
                        other => {
                            return Err(bad(
                                format!("{}/name", at()),
                                format!("expected a string, found {}", type_name(other)),
                            ));
                        }
                    }
                }
                if let Some((k, v)) = field(m, "disabled") {
                    action.disabled = read_disabled(v, k, &at)?;
                }
                action.icon_class = text_field(m, "iconClass", &at)?;
                action.display_name = text_field(m, "displayName", &at)?;
                action.params = read_params(m, &at)?;
            }
            other => {
                return Err(bad(at(), format!("expected a table, found {}", type_name(other))));
            }
        }
        found.insert(key.clone(), action);
    }
    Ok(())
}

/// An entry's `disabled` member `k` (`at` the entry's pointer): a boolean, else the error.
fn read_disabled(v: &Value, k: &str, at: &dyn Fn() -> String) -> Result<bool, Bad> {
    match v {
        Value::Bool(b) => Ok(*b),
        other => Err(bad(
            format!("{}/{}", at(), escape_pointer_token(k)),
            format!("expected a boolean, found {}", type_name(other)),
        )),
    }
}

/// [`read_discovery`] of a built-in's table ([`Offers`]): the same actions and errors, read
/// from its entries without making the table. Those of names in `found` already are left out
/// unread.
pub(super) fn read_offers(
    offers: Offers,
    found: &mut BTreeMap<String, ResourceAction>,
) -> Result<(), Bad> {
    for (key, entry) in by_name(offers) {
        if !found.contains_key(key) {
            found.insert(key.to_string(), offered(key, &entry)?);
        }
    }
    Ok(())
}

/// [`read_offers`] of a built-in's table alone (no other source of actions): its actions
/// sorted by name, with no map of them by name.
pub(super) fn read_offers_alone(offers: Offers) -> Result<Vec<ResourceAction>, Bad> {
    by_name(offers).map(|(key, entry)| offered(key, &entry)).collect()
}

/// The entries of `offers` in the order of their names, as a table's members are read; a
/// later entry of a name replaces an earlier one (the sort is stable: the last of a run is
/// the one kept).
fn by_name(offers: Offers) -> impl Iterator<Item = (&'static str, Entry)> {
    let mut entries = offers.0;
    entries.sort_by(|a, b| a.0.cmp(b.0));
    let mut entries = entries.into_iter().peekable();
    std::iter::from_fn(move || {
        loop {
            let (key, entry) = entries.next()?;
            if entries.peek().is_none_or(|(next, _)| *next != key) {
                return Some((key, entry));
            }
        }
    })
}

/// The action of the entry `key` (a built-in's entry has no `name` member: it is named by
/// its key).
fn offered(key: &str, entry: &Entry) -> Result<ResourceAction, Bad> {
    let disabled = match &entry.disabled {
        Some(v) => read_disabled(v, "disabled", &|| format!("/{}", escape_pointer_token(key)))?,
        None => false,
    };
    Ok(ResourceAction {
        name: key.to_string(),
        disabled,
        icon_class: entry.icon.unwrap_or_default().to_string(),
        display_name: entry.display.unwrap_or_default().to_string(),
        params: entry
            .param
            .map(|name| ResourceActionParam { name: name.into() })
            .into_iter()
            .collect(),
    })
}

fn read_params(
    m: &Map<String, Value>,
    at: &dyn Fn() -> String,
) -> Result<Vec<ResourceActionParam>, Bad> {
    let Some((k, v)) = field(m, "params") else { return Ok(Vec::new()) };
    let at = || format!("{}/{}", at(), escape_pointer_token(k));
    let items = match v {
        Value::Array(items) => items.as_slice(),
        // An empty table a built-in has not encoded (`[]` once encoded).
        Value::Object(m) if m.is_empty() => &[],
        _ => return Err(bad(at(), format!("expected a list, found {}", type_name(v)))),
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let at = || format!("{}/{i}", at());
        let p = match item {
            Value::Array(a) if a.is_empty() => ResourceActionParam::default(),
            Value::Object(p) if p.is_empty() => ResourceActionParam::default(),
            Value::Object(p) => ResourceActionParam { name: text_field(p, "name", &at)? },
            other => {
                return Err(bad(at(), format!("expected a table, found {}", type_name(other))));
            }
        };
        out.push(p);
    }
    Ok(out)
}

/// Reads an action's result (Argo CD's `ExecuteResourceAction`): an object is the patched
/// source (old style); a list holds `{operation, resource}` entries (new style). Patched
/// objects get back the empty maps Lua turned into empty lists, and every entry is checked
/// against the policy.
pub(super) fn read_impacted(
    json: Value,
    source: &Value,
    policy: &ActionPolicy,
) -> Result<Vec<ImpactedResource>, Bad> {
    let entries = match json {
        Value::Object(_) => return Ok(vec![patch_of(json, source, "")?]),
        Value::Array(items) => items,
        other => return Err(bad("", format!("expected a table, found {}", type_name(&other)))),
    };
    let mut out = Vec::with_capacity(entries.len());
    for (i, entry) in entries.into_iter().enumerate() {
        let at = format!("/{i}");
        let Value::Object(mut m) = entry else {
            return Err(bad(
                at,
                format!("expected {{operation, resource}}, found {}", type_name(&entry)),
            ));
        };
        let operation = match field(&m, "operation") {
            Some((_, Value::String(s))) if s == "patch" => Operation::Patch,
            Some((_, Value::String(s))) if s == "create" => Operation::Create,
            Some((k, Value::String(s))) => {
                return Err(bad(
                    format!("{at}/{}", escape_pointer_token(k)),
                    format!("unsupported operation `{s}` (expected `patch` or `create`)"),
                ));
            }
            Some((k, other)) => {
                return Err(bad(
                    format!("{at}/{}", escape_pointer_token(k)),
                    format!("expected a string, found {}", type_name(other)),
                ));
            }
            None => return Err(bad(at, "missing `operation`")),
        };
        let (key, resource) = match field(&m, "resource") {
            Some((k, Value::Object(_))) => {
                let k = k.clone();
                let v = m.remove(&k).unwrap_or_default();
                (k, v)
            }
            Some((k, other)) => {
                return Err(bad(
                    format!("{at}/{}", escape_pointer_token(k)),
                    format!("expected an object, found {}", type_name(other)),
                ));
            }
            None => return Err(bad(at, "missing `resource`")),
        };
        let at = format!("{at}/{}", escape_pointer_token(&key));
        out.push(match operation {
            Operation::Patch => patch_of(resource, source, &at)?,
            Operation::Create => create_of(resource, source, policy, &at)?,
        });
    }
    Ok(out)
}

fn patch_of(new: Value, source: &Value, at: &str) -> Result<ImpactedResource, Bad> {
    patch_settled(clean_returned(new, source), source, at)
}

/// Reads a built-in action's result: what [`read_impacted`] gives for the table the Lua engine
/// would encode from it (`table::encode`), without encoding it first: a patched object gets
/// its empty tables settled in place ([`settle`]), as encoding and then putting back the
/// empty maps would leave them. `parts` are the source's.
///
/// A returned object whose changes leave its identity alone, on a source that is not a
/// Secret, gets its patch from the changes alone ([`patch_of_edits`]), without the object
/// being copied. A created object ([`Out::Create`]) is read as the entry
/// `{operation = "create", resource = ...}` of a list is.
pub(super) fn read_builtin(
    out: Out,
    source: &Value,
    parts: &RefParts<'_>,
    policy: &ActionPolicy,
) -> Result<Vec<ImpactedResource>, Bad> {
    let mut json = match out {
        Out::Object(edits) if by_edits(&edits, source, parts) => {
            return Ok(vec![patch_of_edits(edits.node, source, parts)?]);
        }
        Out::Object(edits) => edits.into_value(source),
        Out::Create(new) if new.as_object().is_some_and(|m| !m.is_empty()) => {
            // Encoded already: the entry's `resource`, at `/0/resource`.
            return Ok(vec![created(new, parts.namespace, policy, "/0/resource")?]);
        }
        Out::Made { resource, group, kind, group_kind, name_valid } => {
            // Encoded already, at `/0/resource`, as `created` reads it.
            if !name_valid {
                check_name(group, kind, &resource, "/0/resource")?;
            }
            check_creatable(group_kind, policy, "/0/resource")?;
            return Ok(vec![ImpactedResource {
                operation: Operation::Create,
                resource: Some(resource),
                patch: Vec::new(),
            }]);
        }
        Out::Create(new) => {
            let entry = [("operation", Some(Value::from("create"))), ("resource", Some(new))];
            return read_impacted(
                table::encode(Value::Array(vec![table::table(entry)])),
                source,
                policy,
            );
        }
    };
    match &json {
        Value::Object(m) if !m.is_empty() => {
            settle(&mut json, Some(source));
            Ok(vec![patch_settled(json, source, "")?])
        }
        _ => read_impacted(table::encode(json), source, policy),
    }
}

/// Whether the patch of `edits` is the patch of the object they leave (see [`read_builtin`]).
fn by_edits(edits: &Edits, source: &Value, parts: &RefParts<'_>) -> bool {
    let Value::Object(m) = source else { return false };
    if edits.whole.is_some() || m.is_empty() {
        return false;
    }
    let top = &edits.node;
    let identity = top.contains_key("apiVersion")
        || top.contains_key("kind")
        || match top.get("metadata") {
            None => false,
            Some(Slot::Into(meta)) => {
                ["name", "namespace", "generateName"].iter().any(|k| meta.contains_key(k))
            }
            Some(_) => true,
        };
    // An object left with no member reads as an empty list: no resource (read as the copy).
    let kept = top.values().any(|s| matches!(s, Slot::Set(_)))
        || m.iter().any(|(k, v)| !v.is_null() && !matches!(top.get(k), Some(Slot::Gone)));
    !identity && kept && !crate::diff::is_secret(parts.group, parts.kind)
}

/// The patch of an object's changes kept by path: the operations `json_patch_ops` gives
/// between the source and the object they leave, settled as [`read_builtin`] settles it,
/// in the same order (each map's changed and added members by name, then its removed ones).
/// The members the changes leave alone differ only where the source does not read back as
/// itself (a `null` goes, an integral float becomes an integer, an empty map in a list an
/// empty list: [`table::plain`]); only those are copied, to compare.
fn patch_of_edits(
    node: Node,
    source: &Value,
    parts: &RefParts<'_>,
) -> Result<ImpactedResource, Bad> {
    // The identity is the source's: the name is checked there.
    check_name_of(parts, source, "")?;
    // Made for a few operations (an action changes a member or a few), not grown from none.
    let mut patch = Vec::with_capacity(2);
    if let Value::Object(m) = source {
        node_ops(m, node, &mut String::with_capacity(64), &mut patch);
    }
    Ok(ImpactedResource { operation: Operation::Patch, resource: None, patch })
}

/// The operations of one map of the source: its changed members (`node`) and the members
/// left alone, walked together in the order of their names.
fn node_ops(src: &Map<String, Value>, node: Node, path: &mut String, out: &mut Vec<PatchOp>) {
    let len = path.len();
    let mut gone: Vec<&str> = Vec::new();
    let mut slots = node.into_sorted().peekable();
    let mut members = src.iter().peekable();
    loop {
        let slot_first = match (slots.peek(), members.peek()) {
            (None, None) => break,
            (Some((k, _)), Some((m, _))) => *k <= m.as_str(),
            (Some(_), None) => true,
            (None, Some(_)) => false,
        };
        if !slot_first {
            // A member the changes leave alone.
            let Some((k, w)) = members.next() else { break };
            if w.is_null() {
                gone.push(k);
            } else if !table::plain(w) {
                push_token(path, k);
                noise_ops(w, false, path, out);
                path.truncate(len);
            }
            continue;
        }
        let Some((k, slot)) = slots.next() else { break };
        let was = match members.peek() {
            Some((m, _)) if m.as_str() == k => members.next().map(|(m, v)| (m.as_str(), v)),
            _ => None,
        };
        match slot {
            Slot::Set(mut v) => {
                match was {
                    Some((_, w)) => settle_member(&mut v, w),
                    None => settle(&mut v, None),
                }
                push_token(path, k);
                match was {
                    Some((_, w)) if *w == v => {}
                    Some((_, w)) => replaced(w, v, path, out),
                    None => out.push(PatchOp {
                        op: "add".into(),
                        path: path.clone(),
                        value: Some(v),
                        from: None,
                    }),
                }
                path.truncate(len);
            }
            Slot::Into(n) => {
                if let Some((_, Value::Object(m))) = was {
                    push_token(path, k);
                    node_ops(m, n, path, out);
                    path.truncate(len);
                }
            }
            Slot::Gone => gone.extend(was.map(|(m, _)| m)),
        }
    }
    for k in gone {
        push_token(path, k);
        out.push(PatchOp { op: "remove".into(), path: path.clone(), value: None, from: None });
        path.truncate(len);
    }
}

/// The operations turning `w` into `v` (not equal) at `path`: `json_patch_ops_at`'s, which
/// walks two maps or two lists; anything else is one `replace` by `v`, pushed here with `v`
/// moved in (not copied, and no path copied for a walk).
fn replaced(w: &Value, v: Value, path: &str, out: &mut Vec<PatchOp>) {
    match (w, &v) {
        (Value::Object(_), Value::Object(_)) | (Value::Array(_), Value::Array(_)) => {
            crate::diff::json_patch_ops_at(w, &v, path, out);
        }
        _ => out.push(PatchOp {
            op: "replace".into(),
            path: path.into(),
            value: Some(v),
            from: None,
        }),
    }
}

/// The operations between `w`, a value of the source no change reaches, and what the result
/// holds there: its [`table::view`] settled ([`settle_member`] for a map's member, [`settle`]
/// against itself for a list's `item`), without copying what reads back as itself.
fn noise_ops(w: &Value, item: bool, path: &mut String, out: &mut Vec<PatchOp>) {
    let len = path.len();
    match w {
        // An item whose members are all `nil` is an empty table: `[]`.
        Value::Object(m) if item && m.values().all(Value::is_null) => out.push(PatchOp {
            op: "replace".into(),
            path: path.clone(),
            value: Some(Value::Array(Vec::new())),
            from: None,
        }),
        Value::Object(m) => {
            let mut gone = Vec::new();
            for (k, x) in m {
                if x.is_null() {
                    gone.push(k);
                } else if !table::plain_at(x, false) {
                    push_token(path, k);
                    noise_ops(x, false, path, out);
                    path.truncate(len);
                }
            }
            for k in gone {
                push_token(path, k);
                out.push(PatchOp {
                    op: "remove".into(),
                    path: path.clone(),
                    value: None,
                    from: None,
                });
                path.truncate(len);
            }
        }
        // Its items move down where a `nil` goes, and are settled against the source's items
        // at their new places: compared whole.
        Value::Array(a) if a.iter().any(Value::is_null) => {
            let mut v = table::view(w);
            settle(&mut v, Some(w));
            if v != *w {
                crate::diff::json_patch_ops_at(w, &v, path, out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                if !table::plain_at(x, true) {
                    use std::fmt::Write as _;
                    let _ = write!(path, "/{i}");
                    noise_ops(x, true, path, out);
                    path.truncate(len);
                }
            }
        }
        other => {
            let v = table::view_number(other);
            if v != *other {
                out.push(PatchOp {
                    op: "replace".into(),
                    path: path.clone(),
                    value: Some(v),
                    from: None,
                });
            }
        }
    }
}

/// Appends `/token`, escaped as RFC 6901 asks.
fn push_token(path: &mut String, token: &str) {
    path.push('/');
    if !token.contains(['~', '/']) {
        path.push_str(token);
        return;
    }
    // The text between escapes is copied a run at a time.
    let mut rest = token;
    while let Some(i) = rest.find(['~', '/']) {
        path.push_str(&rest[..i]);
        path.push_str(if rest.as_bytes()[i] == b'~' { "~0" } else { "~1" });
        rest = &rest[i + 1..];
    }
    path.push_str(rest);
}

/// The patch of an object whose empty tables are settled.
fn patch_settled(new: Value, source: &Value, at: &str) -> Result<ImpactedResource, Bad> {
    let was = RefParts::of(source);
    let target = RefParts::of(&new);
    if target.key() != was.key() {
        return Err(bad(
            at,
            format!(
                "a patch of {} but the action runs on {}: an action may patch only its own object",
                describe(&ObjectRef::from_object_lossy(&new)),
                describe(&ObjectRef::from_object_lossy(source))
            ),
        ));
    }
    check_name(target.group, target.kind, &new, at)?;
    let patch = crate::diff::json_patch_ops(source, &new);
    Ok(ImpactedResource { operation: Operation::Patch, resource: Some(new), patch })
}

/// [`check_name`] of an object whose identity `parts` holds: a name the identity holds that is
/// valid as a whole name is valid as whichever field holds it (`generateName` is only
/// looser); anything else is checked field by field.
fn check_name_of(parts: &RefParts<'_>, new: &Value, at: &str) -> Result<(), Bad> {
    let valid = !parts.name.is_empty()
        && crate::object::name_problem(parts.group, parts.kind, parts.name, false).is_none();
    if valid { Ok(()) } else { check_name(parts.group, parts.kind, new, at) }
}

/// Refuses a `metadata.name` (or `generateName`) the API server would refuse for the kind.
fn check_name(group: &str, kind: &str, new: &Value, at: &str) -> Result<(), Bad> {
    let meta = new.get("metadata");
    let name = meta.and_then(|m| m.get("name")).and_then(Value::as_str).unwrap_or("");
    let generate = meta.and_then(|m| m.get("generateName")).and_then(Value::as_str);
    let (field, value, prefix) = match generate {
        Some(g) if name.is_empty() => ("generateName", g, true),
        _ => ("name", name, false),
    };
    match crate::object::name_problem(group, kind, value, prefix) {
        None => Ok(()),
        Some(problem) => Err(bad(
            format!("{at}/metadata/{field}"),
            format!(
                "invalid {field} {value:?} for {}: {problem}",
                crate::object::group_kind_key(group, kind)
            ),
        )),
    }
}

fn create_of(
    new: Value,
    source: &Value,
    policy: &ActionPolicy,
    at: &str,
) -> Result<ImpactedResource, Bad> {
    created(new, RefParts::of(source).namespace, policy, at)
}

/// [`create_of`] by an action run in the namespace `was`.
fn created(
    mut new: Value,
    was: &str,
    policy: &ActionPolicy,
    at: &str,
) -> Result<ImpactedResource, Bad> {
    let text = |v: Option<&Value>| v.and_then(Value::as_str).filter(|s| !s.is_empty()).is_some();
    if !text(new.get("apiVersion")) {
        return Err(bad(format!("{at}/apiVersion"), "a created object needs an apiVersion"));
    }
    if !text(new.get("kind")) {
        return Err(bad(format!("{at}/kind"), "a created object needs a kind"));
    }
    let meta = new.get("metadata");
    if !text(meta.and_then(|m| m.get("name"))) && !text(meta.and_then(|m| m.get("generateName"))) {
        return Err(bad(
            format!("{at}/metadata"),
            "a created object needs metadata.name or metadata.generateName",
        ));
    }
    let target = RefParts::of(&new);
    check_name_of(&target, &new, at)?;
    // `group/Kind` (`Kind` in the core group), made once.
    let mut key = String::with_capacity(target.group.len() + 1 + target.kind.len());
    if !target.group.is_empty() {
        key.push_str(target.group);
        key.push('/');
    }
    key.push_str(target.kind);
    check_creatable(&key, policy, at)?;
    // A namespaced object created without a namespace is created beside the source.
    let cluster = || {
        crate::object::Scopes::builtin().scope(target.group, target.kind)
            == Some(crate::object::Scope::Cluster)
    };
    let beside = target.namespace.is_empty() && !was.is_empty() && !cluster();
    let namespace = if beside { was } else { target.namespace };
    if policy.same_namespace && !namespace.is_empty() && namespace != was {
        return Err(bad(
            format!("{at}/metadata/namespace"),
            format!(
                "creating in namespace `{namespace}` is not allowed: the action runs in `{was}`"
            ),
        ));
    }
    if beside && let Some(meta) = new.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.insert("namespace".into(), Value::String(was.to_string()));
    }
    Ok(ImpactedResource { operation: Operation::Create, resource: Some(new), patch: Vec::new() })
}

/// Refuses to create a `key` (`group/Kind`, `Kind` in the core group) the policy does not
/// list as creatable.
fn check_creatable(key: &str, policy: &ActionPolicy, at: &str) -> Result<(), Bad> {
    // A glob without a special character matches only itself (as `glob_match` decides it,
    // its characters looked at as bytes here).
    let matches = |g: &String| if special(g) { crate::glob::glob_match(g, key) } else { g == key };
    // A glob that is the key itself, without a special character, matches: looked for first
    // (a length compared per glob), before any other glob's bytes are looked at.
    let literal = || policy.creatable.iter().any(|g| g == key) && !special(key);
    if literal() || policy.creatable.iter().any(matches) {
        return Ok(());
    }
    Err(bad(
        format!("{at}/kind"),
        format!(
            "creating {key} is not allowed (creatable kinds: {})",
            if policy.creatable.is_empty() { "none".into() } else { policy.creatable.join(", ") }
        ),
    ))
}

/// The bytes special in a glob (`*`, `?`, `[`, `{`, `\\`), marked.
const SPECIAL: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 5 {
        t[b"*?[{\\"[i] as usize] = true;
        i += 1;
    }
    t
};

/// Whether `glob` has a special byte: every byte looked up, without a branch per byte.
fn special(glob: &str) -> bool {
    glob.bytes().fold(false, |any, b| any | SPECIAL[usize::from(b)])
}

/// `group/Kind namespace/name`, as far as the object says.
fn describe(r: &ObjectRef) -> String {
    let gk = r.group_kind();
    match (r.namespace.is_empty(), r.name.is_empty()) {
        (_, true) => format!("{gk} without a name"),
        (true, false) => format!("{gk} {}", r.name),
        (false, false) => format!("{gk} {}/{}", r.namespace, r.name),
    }
}

/// Lua cannot tell an empty map from an empty list, and an empty table encodes as `[]`:
/// where the source has a map and the result an empty list, the result gets an empty map
/// (not the source's: a script that removed every key of a map removed them), recursively
/// through maps and lists (Argo CD's `cleanReturnedObj`).
fn clean_returned(new: Value, old: &Value) -> Value {
    match (new, old) {
        (Value::Object(mut n), Value::Object(o)) => {
            for (k, old_v) in o {
                if let Some(new_v) = n.get_mut(k) {
                    let taken = std::mem::take(new_v);
                    *new_v = match (taken, old_v) {
                        (Value::Array(a), Value::Object(_)) if a.is_empty() => {
                            Value::Object(serde_json::Map::new())
                        }
                        (Value::Array(a), Value::Object(_)) => Value::Array(a),
                        (other, _) => clean_returned(other, old_v),
                    };
                }
            }
            Value::Object(n)
        }
        (Value::Array(mut n), Value::Array(o)) => {
            for (new_v, old_v) in n.iter_mut().zip(o) {
                if new_v.is_object() || new_v.is_array() {
                    let taken = std::mem::take(new_v);
                    *new_v = clean_returned(taken, old_v);
                }
            }
            Value::Array(n)
        }
        (new, _) => new,
    }
}

/// `v` as [`clean_returned`] leaves [`table::encode`]`(v)` against `old` (`None`: encoded
/// only), in place: an empty table is `[]`, except an object member whose source member is a
/// map, which is `{}`.
fn settle(v: &mut Value, old: Option<&Value>) {
    match v {
        Value::Object(m) if m.is_empty() => *v = Value::Array(Vec::new()),
        Value::Object(m) => match old {
            Some(Value::Object(o)) => {
                for (k, item) in m.iter_mut() {
                    match o.get(k) {
                        Some(was) => settle_member(item, was),
                        None => settle(item, None),
                    }
                }
            }
            _ => m.values_mut().for_each(|item| settle(item, None)),
        },
        Value::Array(a) => {
            let o = match old {
                Some(Value::Array(o)) => o.as_slice(),
                _ => &[],
            };
            for (i, item) in a.iter_mut().enumerate() {
                settle(item, o.get(i));
            }
        }
        _ => {}
    }
}

/// [`settle`] for a member of an object whose source has the member `was`.
fn settle_member(v: &mut Value, was: &Value) {
    if was.is_object() {
        match v {
            Value::Object(m) if m.is_empty() => return,
            Value::Array(a) if a.is_empty() => {
                *v = Value::Object(serde_json::Map::new());
                return;
            }
            Value::Array(_) => return settle(v, None),
            _ => {}
        }
    }
    settle(v, Some(was));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_escaped_as_rfc_6901_asks() {
        for (token, escaped) in [
            ("", "/"),
            ("plain", "/plain"),
            ("autoscaling.keda.sh/paused", "/autoscaling.keda.sh~1paused"),
            ("a~b/c", "/a~0b~1c"),
            ("~/~/", "/~0~1~0~1"),
            ("/é~", "/~1é~0"),
        ] {
            let mut path = String::new();
            push_token(&mut path, token);
            assert_eq!(path, escaped);
            let read: jsonptr::PointerBuf = path.parse().expect("a pointer");
            assert_eq!(read.tokens().next().expect("one token").decoded(), token);
        }
    }
    use serde_json::json;

    /// A built-in's entries read as [`read_discovery`] reads the table they stand for: the
    /// same actions, a later entry of a name replacing an earlier one, a name found already
    /// left unread, and a `disabled` that is not a boolean the same error.
    #[test]
    fn offers_are_read_as_their_table() {
        use crate::actions::kinds::{Offers, entry};
        let table_of = |offers: &Offers| {
            let mut m = Map::new();
            for (key, e) in &offers.0 {
                let mut t = Map::new();
                if let Some(d) = &e.disabled {
                    t.insert("disabled".into(), d.clone());
                }
                if let Some(i) = e.icon {
                    t.insert("iconClass".into(), json!(i));
                }
                if let Some(d) = e.display {
                    t.insert("displayName".into(), json!(d));
                }
                if let Some(p) = e.param {
                    t.insert("params".into(), json!([{"name": p}]));
                }
                m.insert((*key).into(), Value::Object(t));
            }
            Value::Object(m)
        };
        let cases = [
            Offers::default(),
            Offers(vec![
                ("scale", entry(None, Some("fa-plus"), None).with_param("replicas")),
                ("restart", entry(Some(json!(false)), Some("fa-redo"), Some("Restart"))),
                ("pause", entry(Some(json!(true)), None, None)),
            ]),
            Offers(vec![
                ("b", entry(Some(json!(true)), None, None)),
                ("b", entry(None, None, None)),
            ]),
            Offers(vec![
                ("b", entry(Some(json!("yes")), None, None)),
                ("a", entry(Some(json!(null)), None, None)),
            ]),
            Offers(vec![
                ("found", entry(Some(json!(1)), None, None)),
                ("z", entry(None, None, None)),
            ]),
        ];
        for offers in cases {
            let already = || {
                let mut m = BTreeMap::new();
                m.insert("found".to_string(), ResourceAction::named("kept"));
                m
            };
            let (mut a, mut b) = (already(), already());
            let typed = read_offers(offers.clone(), &mut a).map_err(|e| format!("{e:?}"));
            let table = read_discovery(&table_of(&offers), &mut b).map_err(|e| format!("{e:?}"));
            assert_eq!(typed, table, "{offers:?}");
            assert_eq!(a, b, "{offers:?}");
            if !offers.0.iter().any(|(k, _)| *k == "found") {
                let alone = read_offers_alone(offers.clone()).map_err(|e| format!("{e:?}"));
                let mut c = BTreeMap::new();
                let table =
                    read_discovery(&table_of(&offers), &mut c).map_err(|e| format!("{e:?}"));
                assert_eq!(alone.clone().map(|_| ()), table, "{offers:?}");
                if let Ok(alone) = alone {
                    assert_eq!(alone, c.into_values().collect::<Vec<_>>(), "{offers:?}");
                }
            }
        }
    }

    /// [`special`] marks the five bytes special in a glob, and [`check_creatable`] (a literal
    /// glob looked for first) decides as each glob matched in turn does, on policies of
    /// literal, special and odd globs and keys equal to some of them.
    #[test]
    fn creatable_literal_first_is_each_glob_in_turn() {
        for b in 0..=u8::MAX {
            let five = matches!(b, b'*' | b'?' | b'[' | b'{' | b'\\');
            assert_eq!(SPECIAL[usize::from(b)], five, "{b}");
        }
        let globs = ["batch/Job", "argoproj.io/Workflow", "*", "*.io/*", "a[b", "a*", "", "x/Y?"];
        let keys = ["argoproj.io/Workflow", "batch/Job", "a*", "a[b", "x/Y", "x/YZ", "", "*"];
        let mut compared = 0;
        for mask in 0..(1_u32 << globs.len()) {
            let creatable: Vec<String> = (0..globs.len())
                .filter(|i| mask & (1 << i) != 0)
                .map(|i| globs[i].to_string())
                .collect();
            let policy = ActionPolicy::default().with_creatable(creatable.clone());
            for key in keys {
                let in_turn = creatable.iter().any(|g| {
                    let special = g.bytes().any(|b| matches!(b, b'*' | b'?' | b'[' | b'{' | b'\\'));
                    if special { crate::glob::glob_match(g, key) } else { g == key }
                });
                assert_eq!(
                    check_creatable(key, &policy, "").is_ok(),
                    in_turn,
                    "{key} {creatable:?}"
                );
                compared += 1;
            }
        }
        assert_eq!(compared, 256 * 8);
    }

    /// [`replaced`] pushes what `json_patch_ops_at` pushes, for every pair of differing
    /// values of every type (maps and lists walked, the rest one `replace`), after operations
    /// already found.
    #[test]
    fn replaced_is_json_patch_ops_at() {
        let values = table::values_of_every_type();
        let mut compared = 0;
        for w in &values {
            for v in values.iter().filter(|v| *v != w) {
                let before =
                    PatchOp { op: "add".into(), path: "/x".into(), value: None, from: None };
                let (mut fast, mut walked) = (vec![before.clone()], vec![before]);
                replaced(w, v.clone(), "/spec/a~1b", &mut fast);
                crate::diff::json_patch_ops_at(w, v, "/spec/a~1b", &mut walked);
                assert_eq!(fast, walked, "{w} -> {v}");
                compared += 1;
            }
        }
        assert_eq!(compared, 14 * 13);
    }

    #[test]
    fn empty_maps_come_back_and_lists_stay() {
        let old = json!({"a": {}, "b": [], "c": [{"d": {}}], "e": {"f": {}}, "g": {"x": 1}});
        let new = json!({"a": [], "b": [], "c": [{"d": []}], "e": {"f": []}, "g": [1]});
        assert_eq!(
            clean_returned(new, &old),
            json!({"a": {}, "b": [], "c": [{"d": {}}], "e": {"f": {}}, "g": [1]})
        );
    }

    #[test]
    fn a_map_a_script_emptied_stays_empty() {
        // keda.sh/ScaledObject `resume` sets its only annotation to nil: Argo CD 3.6.2 patches
        // an empty map (found by oracle/run --only scripts --scripts-from-module).
        let old = json!({"metadata": {"annotations": {"autoscaling.keda.sh/paused": "true"}},
            "spec": {"template": {"metadata": {"creationTimestamp": null}}}});
        let new = json!({"metadata": {"annotations": []}, "spec": {"template": {"metadata": []}}});
        assert_eq!(
            clean_returned(new, &old),
            json!({"metadata": {"annotations": {}}, "spec": {"template": {"metadata": {}}}})
        );
    }

    #[test]
    fn settling_in_place_is_encoding_then_cleaning() {
        let old = json!({"a": {}, "b": [], "c": [{"d": {}}, {}], "e": {"f": {}}, "g": {"x": 1},
            "h": [[], {}], "i": 3});
        for new in [
            json!({"a": {}, "b": {}, "c": [{"d": {}}, {}], "e": {"f": []}, "g": [1, {}],
                "h": [{}, []], "i": {}, "j": {"k": {}}}),
            json!({"a": [], "b": [], "c": [{"d": [], "z": {}}, {}, {}], "e": [], "g": {},
                "h": {}, "i": []}),
            json!({"a": {"x": {}}, "c": {}, "e": {"f": {"y": []}}, "g": [[]]}),
        ] {
            let mut settled = new.clone();
            settle(&mut settled, Some(&old));
            assert_eq!(settled, clean_returned(table::encode(new.clone()), &old), "{new}");
        }
    }

    /// Small tables over a few keys, so that a new value and an old one share paths.
    fn tables() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![Just(Value::Null), any::<i8>().prop_map(Value::from)];
        leaf.prop_recursive(4, 32, 3, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                proptest::collection::btree_map("[abc]", inner, 0..3)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// Like [`tables`], with what a script does not see: `null`s, integral floats, empty maps.
    fn sources() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<i8>().prop_map(Value::from),
            any::<i8>().prop_map(|i| Value::from(f64::from(i))),
            Just(Value::from(0.5)),
            Just(json!({})),
            Just(json!([])),
        ];
        leaf.prop_recursive(5, 48, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::btree_map("[abc]", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        /// With no change, the operations of the members left alone are those between the
        /// source and its copy as the result holds it (viewed, then settled).
        #[test]
        fn members_left_alone_give_the_operations_of_the_copy(
            members in proptest::collection::btree_map("[abcd]", sources(), 1..5)
        ) {
            let source = Value::Object(members.into_iter().collect());
            // An object left empty is no resource (`read_builtin` reads it from the copy).
            proptest::prop_assume!(source.as_object().is_some_and(|m| m.values().any(|v| !v.is_null())));
            let mut copy = table::view(&source);
            settle(&mut copy, Some(&source));
            let mut ops = Vec::new();
            if let Value::Object(m) = &source {
                node_ops(m, Node::default(), &mut String::new(), &mut ops);
            }
            proptest::prop_assert_eq!(ops, crate::diff::json_patch_ops(&source, &copy));
        }

        #[test]
        fn settling_any_table_is_encoding_then_cleaning(new in tables(), old in tables()) {
            let mut settled = new.clone();
            settle(&mut settled, Some(&old));
            proptest::prop_assert_eq!(settled, clean_returned(table::encode(new), &old));
        }
    }

    #[test]
    fn discovery_fields_fold_case_and_types_are_checked() {
        let mut found = BTreeMap::new();
        read_discovery(&json!({"a": {"ICONCLASS": "i", "disabled": true}, "b": []}), &mut found)
            .unwrap();
        assert_eq!(found["a"].icon_class, "i");
        assert!(found["a"].disabled);
        assert!(!found["b"].disabled);
        let err = read_discovery(&json!({"z": {"disabled": 1}}), &mut found).unwrap_err();
        assert_eq!(err, bad("/z/disabled", "expected a boolean, found a number"));
        let err = read_discovery(&json!([1]), &mut found).unwrap_err();
        assert_eq!(err, bad("", "expected a table of actions by name, found an array"));
    }
}
