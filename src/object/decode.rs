//! JSON text to JSON values, and what the YAML reader (`yaml.rs`) shares with it: the context of
//! a document (its index, the pointer of the value being read, the warnings so far) and the
//! mapping being built, where a repeated key keeps its last value (with a warning, or refused
//! in strict mode) and strings over the limit are refused at their pointer.

use std::collections::HashSet;
use std::fmt;

use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::map::Entry;
use serde_json::{Map, Value};

use super::{
    DuplicateKeys, Location, ParseError, ParseOptions, ParseWarning, escape_pointer_token,
};

/// What the visitor shares while it reads one document.
pub(super) struct Context<'a> {
    pub document: usize,
    pub options: &'a ParseOptions,
    pub warnings: &'a mut Vec<ParseWarning>,
    /// The pointer of the value being read, as its tokens (made into text only for a
    /// warning or an error: a key is moved here while its value is read, then moved back).
    path: Vec<Token>,
    /// The first error of this crate's own (the parser sees a placeholder).
    pub error: Option<ParseError>,
    /// Numbers as go-yaml v2 reads a JSON document ([`super::resolve::json_number`]), as they
    /// are read (not in a second walk over the tree).
    pub json_numbers: bool,
}

impl<'a> Context<'a> {
    pub(super) fn new(
        document: usize,
        options: &'a ParseOptions,
        warnings: &'a mut Vec<ParseWarning>,
    ) -> Self {
        Context { document, options, warnings, path: Vec::new(), error: None, json_numbers: false }
    }

    pub(super) fn at(&self) -> Location {
        let mut path = String::new();
        for token in &self.path {
            path.push('/');
            match token {
                Token::Key(k) => path.push_str(&escape_pointer_token(k)),
                Token::Index(i) => path.push_str(&i.to_string()),
            }
        }
        Location { document: self.document, item: None, path }
    }

    /// The key whose value was being read, taken back from the pointer.
    pub(super) fn pop_key(&mut self) -> String {
        match self.path.pop() {
            Some(Token::Key(k)) => k,
            _ => String::new(),
        }
    }

    /// Records an error of this crate's and gives the parser an error to stop with.
    pub(super) fn fail<E: serde::de::Error>(&mut self, error: ParseError) -> E {
        let message = error.to_string();
        self.error.get_or_insert(error);
        E::custom(message)
    }

    fn check_len<E: serde::de::Error>(&mut self, len: usize) -> Result<(), E> {
        self.string_fits(len).map_err(|e| self.fail(e))
    }

    /// A string (value or key) of `len` bytes, refused over the limit at the pointer.
    pub(super) fn string_fits(&self, len: usize) -> Result<(), ParseError> {
        let limit = self.options.max_string_bytes;
        if len > limit {
            return Err(ParseError::TooLong { at: self.at(), bytes: len, limit });
        }
        Ok(())
    }

    /// A number read, as [`Context::json_numbers`] says.
    fn number(&self, n: serde_json::Number) -> Value {
        match self.json_numbers.then(|| super::resolve::json_number(&n)).flatten() {
            Some(v) => v,
            None => Value::Number(n),
        }
    }

    /// Enters a mapping's value (the key goes on the pointer).
    pub(super) fn push_key(&mut self, key: String) {
        self.path.push(Token::Key(key));
    }

    /// Enters a sequence's item.
    pub(super) fn push_index(&mut self, index: usize) {
        self.path.push(Token::Index(index));
    }

    /// Leaves what [`Context::push_key`] or [`Context::push_index`] entered.
    pub(super) fn pop(&mut self) {
        self.path.pop();
    }
}

/// One token of the pointer being read.
enum Token {
    Key(String),
    Index(usize),
}

/// Reads any value.
pub(super) struct Node<'c, 'a>(pub &'c mut Context<'a>);

impl<'de> DeserializeSeed<'de> for Node<'_, '_> {
    type Value = Value;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Node<'_, '_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON or YAML value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(self.0.number(serde_json::Number::from(v)))
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Value, E> {
        match serde_json::Number::from_f64(v) {
            Some(n) => Ok(self.0.number(n)),
            None => {
                let at = self.0.at();
                let message = format!("number {} has no json form", serde_norway::Number::from(v));
                Err(self.0.fail(ParseError::Unsupported { at, message }))
            }
        }
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Value, E> {
        self.0.check_len(v.len())?;
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Value, E> {
        self.0.check_len(v.len())?;
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let ctx = self.0;
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        loop {
            ctx.path.push(Token::Index(out.len()));
            let item = seq.next_element_seed(Node(&mut *ctx));
            ctx.path.pop();
            match item? {
                Some(v) => out.push(v),
                None => {
                    // The doubling growth leaves up to half the slots empty (a one-item list
                    // holds four); the tree is kept whole, so its arrays hold what they read.
                    out.shrink_to_fit();
                    return Ok(Value::Array(out));
                }
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let ctx = self.0;
        let mut out = MapBuilder::default();
        while let Some(key) = map.next_key_seed(Key(&mut *ctx))? {
            ctx.push_key(key);
            let value = map.next_value_seed(Node(&mut *ctx));
            let value = match value {
                Ok(v) => v,
                Err(e) => {
                    ctx.pop();
                    return Err(e);
                }
            };
            out.set(ctx, value).map_err(|e| ctx.fail(e))?;
        }
        Ok(Value::Object(out.finish()))
    }
}

/// A mapping being read: its keys so far, and which of them the mapping sets itself (a key set
/// by a merge may be set again without a word).
#[derive(Default)]
pub(super) struct MapBuilder {
    out: Map<String, Value>,
    /// Until a merge, the keys of `out`; from the first merge on, a set of them.
    explicit: Option<HashSet<String>>,
}

impl MapBuilder {
    /// Sets the key on the pointer (taken off it) to `value`, as the mapping's own key: a
    /// repeated key keeps its last value with a warning, or is refused in strict mode.
    pub(super) fn set(&mut self, ctx: &mut Context<'_>, value: Value) -> Result<(), ParseError> {
        if self.explicit.is_none() && matches!(ctx.path.last(), Some(Token::Key(_))) {
            // Before any merge: one look-up of the key, the pointer rebuilt only for a repeat.
            let key = ctx.pop_key();
            return match self.out.entry(key) {
                Entry::Vacant(slot) => {
                    slot.insert(value);
                    Ok(())
                }
                Entry::Occupied(mut slot) => {
                    ctx.push_key(slot.key().clone());
                    let at = ctx.at();
                    let key = ctx.pop_key();
                    match ctx.options.duplicate_keys {
                        DuplicateKeys::Refuse => Err(ParseError::DuplicateKey { at, key }),
                        DuplicateKeys::LastWins => {
                            ctx.warnings.push(ParseWarning::DuplicateKey { at, key });
                            slot.insert(value);
                            Ok(())
                        }
                    }
                }
            };
        }
        let duplicate = match (&mut self.explicit, ctx.path.last()) {
            (Some(set), Some(Token::Key(k))) => !set.insert(k.clone()),
            (None, Some(Token::Key(k))) => self.out.contains_key(k),
            _ => false,
        };
        if duplicate {
            let at = ctx.at();
            let key = ctx.pop_key();
            match ctx.options.duplicate_keys {
                DuplicateKeys::Refuse => return Err(ParseError::DuplicateKey { at, key }),
                DuplicateKeys::LastWins => {
                    ctx.warnings.push(ParseWarning::DuplicateKey { at, key: key.clone() })
                }
            }
            self.out.insert(key, value);
            return Ok(());
        }
        let key = ctx.pop_key();
        self.out.insert(key, value);
        Ok(())
    }

    /// Sets every key of a merged mapping, over what is there (go-yaml v2 sets them in turn,
    /// explicit keys before the `<<` included).
    pub(super) fn merge(&mut self, m: Map<String, Value>) {
        if self.explicit.is_none() {
            self.explicit = Some(self.out.keys().cloned().collect());
        }
        self.out.extend(m);
    }

    pub(super) fn finish(self) -> Map<String, Value> {
        self.out
    }
}

/// The error of a merge key whose value is not a mapping or a sequence of mappings.
pub(super) fn wrong_merge(ctx: &Context<'_>) -> ParseError {
    let message = "map merge requires map or sequence of maps as the value".to_string();
    ParseError::Unsupported { at: ctx.at(), message }
}

/// Reads a JSON object key (always a string).
struct Key<'c, 'a>(&'c mut Context<'a>);

impl<'de> DeserializeSeed<'de> for Key<'_, '_> {
    type Value = String;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key<'_, '_> {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string key")
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<String, E> {
        self.0.check_len(v.len())?;
        Ok(v.to_owned())
    }
    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<String, E> {
        self.0.check_len(v.len())?;
        Ok(v)
    }
}
