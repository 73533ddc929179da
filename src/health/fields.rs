//! Typed reads of the fields a built-in check uses.
//!
//! Argo CD converts the object into the Kubernetes Go type before checking it: absent numbers
//! are 0, absent strings `""`, absent pointers nil, and a field of the wrong type fails the
//! conversion. [`Reader`] does the same for the fields a check reads, by RFC 6901 pointer,
//! and names the field at fault.

use serde_json::Value;

use super::HealthError;
use crate::object::{ObjectRef, type_name};

/// Reads typed fields of one object for one check.
pub(crate) struct Reader<'a> {
    /// The object.
    pub obj: &'a Value,
    object: &'a ObjectRef,
    check: &'static str,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(obj: &'a Value, object: &'a ObjectRef, check: &'static str) -> Self {
        Reader { obj, object, check }
    }

    /// The object's name.
    pub(crate) fn name(&self) -> &str {
        &self.object.name
    }

    fn error(&self, pointer: &str, expected: &'static str, found: &Value) -> HealthError {
        HealthError::Convert {
            object: Box::new(self.object.clone()),
            check: self.check,
            pointer: pointer.to_string(),
            expected,
            found: type_name(found),
        }
    }

    /// The value at `pointer`, `None` when it or a parent is absent or null. A parent that is
    /// neither an object nor null (nor an array, for a numeric token) is a conversion error.
    pub(crate) fn get(&self, pointer: &str) -> Result<Option<&'a Value>, HealthError> {
        let mut cur = self.obj;
        let mut end = 0;
        for token in pointer.split('/').skip(1) {
            let parent_end = end;
            end += token.len() + 1;
            let next = match cur {
                Value::Null => return Ok(None),
                Value::Object(map) => {
                    if token.contains('~') {
                        map.get(&token.replace("~1", "/").replace("~0", "~"))
                    } else {
                        map.get(token)
                    }
                }
                Value::Array(items) => match token.parse::<usize>() {
                    Ok(i) => items.get(i),
                    Err(_) => return Err(self.error(&pointer[..parent_end], "an object", cur)),
                },
                other => {
                    let expected =
                        if token.parse::<usize>().is_ok() { "an array" } else { "an object" };
                    return Err(self.error(&pointer[..parent_end], expected, other));
                }
            };
            match next {
                None | Some(Value::Null) => return Ok(None),
                Some(v) => cur = v,
            }
        }
        Ok(Some(cur))
    }

    /// An integer field of any size, `None` when absent ("nil" in Go).
    pub(crate) fn opt_i64(&self, pointer: &str) -> Result<Option<i64>, HealthError> {
        match self.get(pointer)? {
            None => Ok(None),
            Some(v) => match v.as_i64() {
                Some(i) => Ok(Some(i)),
                None => match v.as_f64() {
                    // The converter takes a float with an integral value.
                    Some(f) if f.fract() == 0.0 && f.abs() < 9.0e18 => Ok(Some(f as i64)),
                    _ => Err(self.error(pointer, "an integer", v)),
                },
            },
        }
    }

    /// An `int32` field (replica counts, partitions, exit codes), `None` when absent. A value
    /// out of the `int32` range is a conversion error, so the checks' arithmetic on these
    /// fields cannot overflow.
    pub(crate) fn opt_int(&self, pointer: &str) -> Result<Option<i64>, HealthError> {
        match self.opt_i64(pointer)? {
            Some(i) if i32::try_from(i).is_err() => match self.get(pointer)? {
                Some(v) => Err(self.error(pointer, "a 32-bit integer", v)),
                None => Ok(None),
            },
            other => Ok(other),
        }
    }

    /// An `int32` field, 0 when absent.
    pub(crate) fn int(&self, pointer: &str) -> Result<i64, HealthError> {
        Ok(self.opt_int(pointer)?.unwrap_or(0))
    }

    /// An `int64` field (generations), 0 when absent.
    pub(crate) fn int64(&self, pointer: &str) -> Result<i64, HealthError> {
        Ok(self.opt_i64(pointer)?.unwrap_or(0))
    }

    /// A string field, `""` when absent.
    pub(crate) fn str(&self, pointer: &str) -> Result<&'a str, HealthError> {
        match self.get(pointer)? {
            None => Ok(""),
            Some(Value::String(s)) => Ok(s),
            Some(v) => Err(self.error(pointer, "a string", v)),
        }
    }

    /// A boolean field, false when absent.
    pub(crate) fn bool(&self, pointer: &str) -> Result<bool, HealthError> {
        match self.get(pointer)? {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(v) => Err(self.error(pointer, "a boolean", v)),
        }
    }

    /// An object field, `None` when absent.
    pub(crate) fn opt_object(&self, pointer: &str) -> Result<Option<&'a Value>, HealthError> {
        match self.get(pointer)? {
            None => Ok(None),
            Some(v @ Value::Object(_)) => Ok(Some(v)),
            Some(v) => Err(self.error(pointer, "an object", v)),
        }
    }

    /// The length of an array field, 0 when absent.
    pub(crate) fn len(&self, pointer: &str) -> Result<usize, HealthError> {
        match self.get(pointer)? {
            None => Ok(0),
            Some(Value::Array(items)) => Ok(items.len()),
            Some(v) => Err(self.error(pointer, "an array", v)),
        }
    }

    /// The items of a list of conditions (or container statuses): each one's pointer.
    /// Every item must be an object.
    pub(crate) fn items(&self, pointer: &str) -> Result<Vec<String>, HealthError> {
        let n = self.len(pointer)?;
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let p = format!("{pointer}/{i}");
            // An item that is null is a zero-valued struct in Go.
            self.opt_object(&p)?;
            out.push(p);
        }
        Ok(out)
    }

    /// The first condition of `type` in the list at `pointer`, as its pointer.
    pub(crate) fn condition(
        &self,
        pointer: &str,
        kind: &str,
    ) -> Result<Option<String>, HealthError> {
        for item in self.items(pointer)? {
            if self.str(&format!("{item}/type"))? == kind {
                return Ok(Some(item));
            }
        }
        Ok(None)
    }
}
