//! Removing an RFC 6901 pointer the way Argo CD does: a JSON Patch `remove` operation applied
//! with evanphx/json-patch (negative array indices allowed), with its error classes.

use serde_json::Value;

/// Why a pointer removed nothing. Argo CD logs the first two classes at no level at all
/// ("expected" errors) and the last at debug level; in every case the object is unchanged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PointerMiss {
    /// The path to the parent does not exist (or the pointer has no leading `/`):
    /// "remove operation does not apply: doc is missing path".
    MissingPath,
    /// The parent exists but the key does not: "Unable to remove nonexistent key".
    MissingKey(String),
    /// Anything else: an array index that is not a number or is out of range.
    Other(String),
}

impl PointerMiss {
    /// Whether Argo CD treats this as an expected, silent miss.
    pub(crate) fn expected(&self) -> bool {
        !matches!(self, PointerMiss::Other(_))
    }

    /// The message, as evanphx/json-patch words it.
    pub(crate) fn message(&self, pointer: &str) -> String {
        match self {
            PointerMiss::MissingPath => {
                format!(
                    "remove operation does not apply: doc is missing path: \"{pointer}\": missing value"
                )
            }
            PointerMiss::MissingKey(key) => {
                format!("unable to remove nonexistent key: {key}: missing value")
            }
            PointerMiss::Other(m) => m.clone(),
        }
    }
}

fn decode(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

/// Go's `strconv.Atoi`: optional sign, decimal digits.
fn atoi(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Resolves an index token against an array of `len` elements (negative from the end).
fn index(token: &str, len: usize) -> Result<usize, PointerMiss> {
    let i = atoi(token).ok_or_else(|| {
        PointerMiss::Other(format!(
            "value was not a proper array index: '{token}': strconv.Atoi: parsing \"{token}\": invalid syntax"
        ))
    })?;
    let len_i = i64::try_from(len).unwrap_or(i64::MAX);
    let abs = if i < 0 { i + len_i } else { i };
    if abs < 0 || abs >= len_i {
        return Err(PointerMiss::Other(format!(
            "unable to access invalid index: {i}: invalid index referenced"
        )));
    }
    // In range of a `usize` length, so the conversion holds.
    usize::try_from(abs).map_err(|_| {
        PointerMiss::Other(format!("unable to access invalid index: {i}: invalid index referenced"))
    })
}

/// A pointer split into its tokens once, each as written (read as an array index) and
/// decoded (read as an object key); `None` without the leading `/`.
#[derive(Debug, Clone)]
pub(crate) struct Pointer(Option<Vec<(String, String)>>);

impl Pointer {
    pub(crate) fn new(pointer: &str) -> Pointer {
        let tokens = pointer
            .strip_prefix('/')
            .map(|rest| rest.split('/').map(|token| (token.to_owned(), decode(token))).collect());
        Pointer(tokens)
    }
}

/// Removes the value at `pointer`; on a miss the document is left unchanged.
#[cfg(test)]
pub(crate) fn remove(doc: &mut Value, pointer: &str) -> Result<(), PointerMiss> {
    remove_parsed(doc, &Pointer::new(pointer))
}

/// Removes the value at a parsed pointer; on a miss the document is left unchanged.
pub(crate) fn remove_parsed(doc: &mut Value, pointer: &Pointer) -> Result<(), PointerMiss> {
    let Some(tokens) = &pointer.0 else {
        return Err(PointerMiss::MissingPath);
    };
    let Some(((last, last_key), parents)) = tokens.split_last() else {
        return Err(PointerMiss::MissingPath);
    };
    let mut cur = doc;
    for (token, key) in parents {
        cur = match cur {
            Value::Object(m) => m.get_mut(key).ok_or(PointerMiss::MissingPath)?,
            Value::Array(a) => {
                let i = index(token, a.len()).map_err(|_| PointerMiss::MissingPath)?;
                &mut a[i]
            }
            _ => return Err(PointerMiss::MissingPath),
        };
    }
    match cur {
        Value::Object(m) => {
            if m.remove(last_key).is_none() {
                return Err(PointerMiss::MissingKey(last_key.clone()));
            }
            Ok(())
        }
        Value::Array(a) => {
            let i = index(last, a.len())?;
            a.remove(i);
            Ok(())
        }
        _ => Err(PointerMiss::MissingPath),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn evanphx_semantics() {
        let mut d = json!({"a/b": 1, "m~n": 2, "l": [1, 2, 3], "o": {"x": null}});
        assert_eq!(remove(&mut d, "/a~1b"), Ok(()));
        assert_eq!(remove(&mut d, "/m~0n"), Ok(()));
        assert_eq!(remove(&mut d, "/l/-1"), Ok(()));
        assert_eq!(d["l"], json!([1, 2]));
        assert_eq!(
            remove(&mut d, "/l/x"),
            Err(PointerMiss::Other(
                "value was not a proper array index: 'x': strconv.Atoi: parsing \"x\": invalid syntax"
                    .into()
            ))
        );
        assert_eq!(
            remove(&mut d, "/l/5"),
            Err(PointerMiss::Other(
                "unable to access invalid index: 5: invalid index referenced".into()
            ))
        );
        assert_eq!(remove(&mut d, "/o/x/y"), Err(PointerMiss::MissingPath));
        assert_eq!(remove(&mut d, "/o/q"), Err(PointerMiss::MissingKey("q".into())));
        assert_eq!(remove(&mut d, "o"), Err(PointerMiss::MissingPath));
        assert_eq!(remove(&mut d, ""), Err(PointerMiss::MissingPath));
        assert_eq!(remove(&mut d, "/l/x/y"), Err(PointerMiss::MissingPath));
        assert_eq!(remove(&mut d, "/o/x"), Ok(()));
        assert_eq!(d, json!({"l": [1, 2], "o": {}}));
    }
}
