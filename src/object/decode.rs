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
    /// Objects' `metadata.managedFields` are read without being built
    /// ([`super::ParseOptions::leave_out_managed_fields`]): see [`Skip`].
    pub leave_out: bool,
    /// Set when a reading with [`Context::leave_out`] met something it cannot prove would read
    /// the same without the field (the caller then reads the text again in full).
    pub given_up: bool,
    /// The key hashes of the mappings [`Skip`] is reading, innermost last, for their repeats.
    key_hashes: Vec<u64>,
    /// Whether a field was left out under the document's `items` (which must then be a
    /// `List`'s).
    skipped_items: bool,
    /// The items of the arrays being read, innermost last: each array is made once, of the
    /// length it read, from its own items at the end.
    array_items: Vec<Value>,
}

impl<'a> Context<'a> {
    pub(super) fn new(
        document: usize,
        options: &'a ParseOptions,
        warnings: &'a mut Vec<ParseWarning>,
    ) -> Self {
        Context {
            document,
            options,
            warnings,
            path: Vec::new(),
            error: None,
            json_numbers: false,
            leave_out: false,
            given_up: false,
            key_hashes: Vec::new(),
            skipped_items: false,
            array_items: Vec::new(),
        }
    }

    /// Gives up a reading with [`Context::leave_out`]: the parser stops, and the caller reads
    /// the text again with every field built.
    fn give_up<E: serde::de::Error>(&mut self) -> E {
        self.given_up = true;
        E::custom("managedFields cannot be left out")
    }

    /// Whether the mapping being read is the `metadata` of an object of the document (the
    /// document itself, an item of a document that is an array, or an item of a `List`'s
    /// `items`), and whether it is the latter.
    fn at_object_metadata(&self) -> Option<bool> {
        match self.path.as_slice() {
            [Token::Key(m)] | [Token::Index(_), Token::Key(m)] if m == "metadata" => Some(false),
            [Token::Key(items), Token::Index(_), Token::Key(m)]
                if items == "items" && m == "metadata" =>
            {
                Some(true)
            }
            _ => None,
        }
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
        let start = ctx.array_items.len();
        loop {
            ctx.path.push(Token::Index(ctx.array_items.len() - start));
            let item = seq.next_element_seed(Node(&mut *ctx));
            ctx.path.pop();
            match item {
                Ok(Some(v)) => ctx.array_items.push(v),
                Ok(None) => {
                    // One allocation of the array's length: the tree is kept whole, so its
                    // arrays hold what they read (no doubling growth, no shrinking after).
                    let out: Vec<Value> = ctx.array_items.drain(start..).collect();
                    return Ok(Value::Array(out));
                }
                Err(e) => {
                    ctx.array_items.truncate(start);
                    return Err(e);
                }
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let ctx = self.0;
        let mut out = MapBuilder::default();
        // An object's metadata whose `managedFields` may be left out ([`Skip`]), and whether it
        // was.
        let metadata = if ctx.leave_out { ctx.at_object_metadata() } else { None };
        let mut left_out = false;
        while let Some(key) = map.next_key_seed(Key(&mut *ctx))? {
            if metadata.is_some() && key == "managedFields" {
                if left_out {
                    // A repeated key: its warning names it.
                    return Err(ctx.give_up());
                }
                ctx.push_key(key);
                let read = map.next_value_seed(Skip { ctx: &mut *ctx, at: Level::List });
                ctx.pop();
                read?;
                left_out = true;
                ctx.skipped_items |= metadata == Some(true);
                continue;
            }
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
        let out = out.finish();
        if left_out && last_applied_may_name_managed_fields(&out) {
            return Err(ctx.give_up());
        }
        if ctx.leave_out && ctx.path.is_empty() && ctx.skipped_items && !is_list(&out) {
            // `items` was not a `List`'s: its items are no objects of the text.
            return Err(ctx.give_up());
        }
        Ok(Value::Object(out))
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

/// The annotation `kubectl apply` keeps the object it applied in
/// (`crate::config::LAST_APPLIED_ANNOTATION`; this module is read before the configuration's).
const LAST_APPLIED_ANNOTATION: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Whether an object's metadata has a last-applied annotation that may hold a
/// `metadata.managedFields` ([`last_applied_may_hold_managed_fields`]).
fn last_applied_may_name_managed_fields(metadata: &Map<String, Value>) -> bool {
    metadata
        .get("annotations")
        .and_then(|a| a.get(LAST_APPLIED_ANNOTATION))
        .and_then(Value::as_str)
        .is_some_and(last_applied_may_hold_managed_fields)
}

/// Whether a last-applied annotation's text may hold a `metadata.managedFields` once read as
/// JSON: it names the key, or holds a `\u` escape of an ASCII letter or digit (which could
/// spell it). Conservative: a value naming the key is enough.
pub(crate) fn last_applied_may_hold_managed_fields(text: &str) -> bool {
    text.contains("managedFields")
        || text.match_indices("\\u").any(|(i, _)| {
            text.get(i + 2..i + 6)
                .and_then(|hex| u32::from_str_radix(hex, 16).ok())
                .and_then(char::from_u32)
                .is_none_or(|c| c.is_ascii_alphanumeric())
        })
}

/// Whether a document is a `List` whose items `parse_manifests` reads as objects.
fn is_list(doc: &Map<String, Value>) -> bool {
    doc.get("kind").and_then(Value::as_str).is_some_and(|k| k.ends_with("List"))
        && doc.get("items").is_some_and(Value::is_array)
}

/// Where [`Skip`] is in an object's `metadata.managedFields`, and what it accepts there.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    /// The field: a list of entries.
    List,
    /// An entry: a mapping of the fields of a Kubernetes `ManagedFieldsEntry`.
    Entry,
    /// An entry's string field (`apiVersion`, `fieldsType`, `manager`, `operation`,
    /// `subresource`).
    Text,
    /// An entry's `time`: a `metav1.Time`, in the form the API server writes it.
    Time,
    /// An entry's `fieldsV1`: a mapping.
    Fields,
    /// Anything, inside `fieldsV1`.
    Any,
}

/// Reads an object's `metadata.managedFields` without building it, when it is provably
/// irrelevant to what a reading with every field gives: the same parser reads the same
/// tokens (its syntax errors, depth limit and numbers are the same), and the reading gives up
/// ([`Context::give_up`]) on anything that would make a warning or an error of this crate
/// (a string over the limit, a key that may repeat) and on any field that a typed reading
/// of a built-in object might refuse: only a list of entries whose keys are
/// `ManagedFieldsEntry`'s, with strings, a `time` in the API server's form
/// (`2006-01-02T15:04:05Z`) and a `fieldsV1` mapping, is left out. Allocates nothing.
struct Skip<'c, 'a> {
    ctx: &'c mut Context<'a>,
    at: Level,
}

/// The most keys of one mapping [`Skip`] checks for repeats (a longer one is read in full).
const SKIP_MAX_KEYS: usize = 64;

impl<'de> DeserializeSeed<'de> for Skip<'_, '_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl Skip<'_, '_> {
    /// A scalar other than a string: only inside `fieldsV1`.
    fn scalar<E: serde::de::Error>(self) -> Result<(), E> {
        if self.at == Level::Any { Ok(()) } else { Err(self.ctx.give_up()) }
    }
}

impl<'de> Visitor<'de> for Skip<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<(), E> {
        self.scalar()
    }
    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<(), E> {
        self.scalar()
    }
    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<(), E> {
        self.scalar()
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<(), E> {
        if v.is_finite() { self.scalar() } else { Err(self.ctx.give_up()) }
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        self.scalar()
    }
    fn visit_none<E: serde::de::Error>(self) -> Result<(), E> {
        self.scalar()
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<(), E> {
        let fits = v.len() <= self.ctx.options.max_string_bytes
            && match self.at {
                Level::Text | Level::Any => true,
                Level::Time => is_api_time(v),
                Level::List | Level::Entry | Level::Fields => false,
            };
        if fits { Ok(()) } else { Err(self.ctx.give_up()) }
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let item = match self.at {
            Level::List => Level::Entry,
            Level::Any => Level::Any,
            _ => return Err(self.ctx.give_up()),
        };
        while seq.next_element_seed(Skip { ctx: &mut *self.ctx, at: item })?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let ctx = self.ctx;
        let entry = match self.at {
            Level::Entry => true,
            Level::Fields | Level::Any => false,
            _ => return Err(ctx.give_up()),
        };
        let start = ctx.key_hashes.len();
        while let Some((hash, field)) = map.next_key_seed(SkipKey(&mut *ctx, entry))? {
            if ctx.key_hashes[start..].contains(&hash)
                || ctx.key_hashes.len() - start >= SKIP_MAX_KEYS
            {
                return Err(ctx.give_up());
            }
            ctx.key_hashes.push(hash);
            let at = match (entry, field) {
                (false, _) => Level::Any,
                (true, Some(level)) => level,
                (true, None) => return Err(ctx.give_up()),
            };
            map.next_value_seed(Skip { ctx: &mut *ctx, at })?;
        }
        ctx.key_hashes.truncate(start);
        Ok(())
    }
}

/// Reads a key for [`Skip`]: its hash (eight bytes at a time, as FxHash mixes them), and, in
/// an entry (the flag), what the entry's field of that name holds.
struct SkipKey<'c, 'a>(&'c mut Context<'a>, bool);

impl<'de> DeserializeSeed<'de> for SkipKey<'_, '_> {
    type Value = (u64, Option<Level>);
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for SkipKey<'_, '_> {
    type Value = (u64, Option<Level>);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string key")
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
        if v.len() > self.0.options.max_string_bytes {
            return Err(self.0.give_up());
        }
        let mix = |h: u64, word: u64| (h.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
        let mut words = v.as_bytes().chunks_exact(8);
        let mut hash = v.len() as u64;
        for chunk in &mut words {
            let mut word = [0; 8];
            word.copy_from_slice(chunk);
            hash = mix(hash, u64::from_le_bytes(word));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            // The last bytes as a little-endian word, padded with zeros.
            hash = mix(hash, rest.iter().rev().fold(0, |w, &b| (w << 8) | u64::from(b)));
        }
        let level = match v {
            _ if !self.1 => None,
            "apiVersion" | "fieldsType" | "manager" | "operation" | "subresource" => {
                Some(Level::Text)
            }
            "time" => Some(Level::Time),
            "fieldsV1" => Some(Level::Fields),
            _ => None,
        };
        Ok((hash, level))
    }
}

/// Whether a `time` is in the form the API server writes (`2006-01-02T15:04:05Z`, a real date
/// and time), which every RFC 3339 reading of a `metav1.Time` accepts.
fn is_api_time(t: &str) -> bool {
    let b = t.as_bytes();
    let digits = |r: std::ops::Range<usize>| -> Option<u32> {
        let part = b.get(r)?;
        part.iter()
            .all(u8::is_ascii_digit)
            .then(|| part.iter().fold(0, |n, d| n * 10 + u32::from(d - b'0')))
    };
    let shape = b.len() == 20
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && b[16] == b':'
        && b[19] == b'Z';
    let parts =
        (digits(0..4), digits(5..7), digits(8..10), digits(11..13), digits(14..16), digits(17..19));
    let (Some(year), Some(month), Some(day), Some(hour), Some(min), Some(sec)) = parts else {
        return false;
    };
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    shape && (1..=days).contains(&day) && hour < 24 && min < 60 && sec < 60
}
