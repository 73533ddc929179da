//! Small JSON helpers shared by the diff pipeline and the field sets: canonical equality, path
//! access, base64.

use serde_json::{Map, Value};

// The engine reads `serde_json::Map`'s members in key order: the output's bytes follow Go's
// sorted keys, and some walks stop at the first member past the one they look for
// (`actions::run::identity`). serde_json's `preserve_order` feature makes the map keep the
// insertion order instead, and one dependency of a host can turn it on for every crate of the
// build (Cargo unifies features). The build refuses it rather than give other answers.
const _: () = assert!(
    std::mem::size_of::<Map<String, Value>>()
        == std::mem::size_of::<std::collections::BTreeMap<String, Value>>(),
    "gitops-core reads serde_json maps in key order: serde_json's `preserve_order` feature \
     must be off in this build"
);

/// The order of two member names (`str`'s), told by their first bytes where they differ
/// there: no call to compare the rest.
pub(crate) fn key_order(a: &str, b: &str) -> std::cmp::Ordering {
    match (a.as_bytes().first(), b.as_bytes().first()) {
        (Some(x), Some(y)) if x != y => x.cmp(y),
        _ => a.cmp(b),
    }
}

/// The members of `m` named `keys` (sorted, as a map's members are), `None` where absent:
/// read in one walk of the members, stopping past the last key, not a lookup per key.
pub(crate) fn members_in_order<'a, const N: usize>(
    m: &'a Map<String, Value>,
    keys: [&str; N],
) -> [Option<&'a Value>; N] {
    debug_assert!(keys.is_sorted(), "{keys:?}");
    let mut out = [None; N];
    let mut i = 0;
    'members: for (k, item) in m {
        while i < N {
            match key_order(keys[i], k) {
                // Not a member.
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Equal => {
                    out[i] = Some(item);
                    i += 1;
                    continue 'members;
                }
                // A member not asked for.
                std::cmp::Ordering::Greater => continue 'members,
            }
        }
        break;
    }
    out
}

/// Canonical JSON equality as Argo CD compares its serialised outputs (gitops-engine
/// pkg/diff/diff.go `buildDiffResult`, which compares the JSON bytes): object keys unordered,
/// numbers by value (`2 == 2.0`), `null` distinct from absent.
pub(crate) fn canonical_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            if x == y {
                return true;
            }
            match (x.as_f64(), y.as_f64()) {
                (Some(p), Some(q)) => p == q,
                _ => false,
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| canonical_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| canonical_eq(v, w)))
        }
        _ => a == b,
    }
}

/// The object at `metadata`, if it is one.
pub(crate) fn metadata_mut(obj: &mut Value) -> Option<&mut Map<String, Value>> {
    obj.get_mut("metadata").and_then(Value::as_object_mut)
}

/// Removes an annotation; drops `metadata.annotations` when it becomes empty only if
/// `drop_empty` is set.
pub(crate) fn remove_annotation(obj: &mut Value, key: &str) {
    if let Some(ann) =
        metadata_mut(obj).and_then(|m| m.get_mut("annotations")).and_then(Value::as_object_mut)
    {
        ann.remove(key);
    }
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard padded base64, as Go's `base64.StdEncoding`.
pub(crate) fn base64_encode(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [chunk[0], chunk.get(1).copied().unwrap_or(0), chunk.get(2).copied().unwrap_or(0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let idx = [(n >> 18) & 63, (n >> 12) & 63, (n >> 6) & 63, n & 63];
        out.push(B64[idx[0] as usize] as char);
        out.push(B64[idx[1] as usize] as char);
        out.push(if chunk.len() > 1 { B64[idx[2] as usize] as char } else { '=' });
        out.push(if chunk.len() > 2 { B64[idx[3] as usize] as char } else { '=' });
    }
    out
}

/// Standard padded base64 decoding as Go's `base64.StdEncoding` inside `encoding/json`:
/// `\r` and `\n` are skipped, anything else out of the alphabet or wrong padding fails.
pub(crate) fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let clean: Vec<u8> = text.bytes().filter(|b| *b != b'\r' && *b != b'\n').collect();
    if !clean.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(clean.len() / 4 * 3);
    let chunks = clean.len() / 4;
    for (i, chunk) in clean.chunks(4).enumerate() {
        let last = i + 1 == chunks;
        let mut vals = [0u32; 4];
        let mut pad = 0;
        for (j, c) in chunk.iter().enumerate() {
            if *c == b'=' {
                // Padding only at the end of the last quantum, in the last two places.
                if !last || j < 2 {
                    return None;
                }
                pad += 1;
                continue;
            }
            if pad > 0 {
                return None;
            }
            vals[j] = u32::from(decode_char(*c)?);
        }
        let n = (vals[0] << 18) | (vals[1] << 12) | (vals[2] << 6) | vals[3];
        out.push((n >> 16) as u8);
        if pad < 2 {
            out.push((n >> 8) as u8);
        }
        if pad < 1 {
            out.push(n as u8);
        }
    }
    Some(out)
}

fn decode_char(c: u8) -> Option<u8> {
    match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn base64_round_trips_and_rejects_garbage() {
        for s in ["", "f", "fo", "foo", "foob", "fooba", "foobar"] {
            let e = base64_encode(s.as_bytes());
            assert_eq!(base64_decode(&e).as_deref(), Some(s.as_bytes()));
        }
        assert_eq!(base64_encode(b"bar"), "YmFy");
        assert_eq!(base64_decode("YmF\nyCg==").as_deref(), Some(&b"bar\n"[..]));
        assert_eq!(base64_decode("YmF"), None);
        assert_eq!(base64_decode("Y=Fy"), None);
        assert_eq!(base64_decode("****"), None);
    }

    #[test]
    fn numbers_compare_by_value() {
        assert!(canonical_eq(&json!({"a": 2}), &json!({"a": 2.0})));
        assert!(!canonical_eq(&json!({"a": null}), &json!({})));
        assert!(!canonical_eq(&json!([1, 2]), &json!([2, 1])));
        assert!(!canonical_eq(&json!("80"), &json!(80)));
    }
}
