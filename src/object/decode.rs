//! Text to JSON values, read the way Kubernetes' YAML reader (sigs.k8s.io/yaml over go-yaml v2)
//! and so Argo CD, Helm and kubectl read it: merge keys (`<<`) resolved, a repeated key keeps
//! its last value (with a warning, or refused in strict mode), plain scalar keys become their
//! text, strings over the limit refused at their pointer.
//!
//! One visitor serves both parsers (serde_json for JSON, serde_norway for YAML); it carries the
//! document, the pointer of the value it is reading and the warnings so far.

use std::collections::HashSet;
use std::fmt;

use serde::de::{DeserializeSeed, EnumAccess, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::{
    DuplicateKeys, Location, ParseError, ParseOptions, ParseWarning, escape_pointer_token,
};

/// What the visitor shares while it reads one document.
pub(super) struct Context<'a> {
    /// YAML reads `<<` as a merge key and tags as unsupported; JSON keys are always quoted,
    /// so a JSON `"<<"` is an ordinary key, as go-yaml reads a quoted one.
    pub yaml: bool,
    pub document: usize,
    pub options: &'a ParseOptions,
    pub warnings: &'a mut Vec<ParseWarning>,
    /// The pointer of the value being read, as its tokens (made into text only for a
    /// warning or an error: a key is moved here while its value is read, then moved back).
    path: Vec<Token>,
    /// The first error of this crate's own (the parser sees a placeholder).
    pub error: Option<ParseError>,
}

impl<'a> Context<'a> {
    pub(super) fn new(
        yaml: bool,
        document: usize,
        options: &'a ParseOptions,
        warnings: &'a mut Vec<ParseWarning>,
    ) -> Self {
        Context { yaml, document, options, warnings, path: Vec::new(), error: None }
    }

    fn at(&self) -> Location {
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
    fn pop_key(&mut self) -> String {
        match self.path.pop() {
            Some(Token::Key(k)) => k,
            _ => String::new(),
        }
    }

    /// Records an error of this crate's and gives the parser an error to stop with.
    fn fail<E: serde::de::Error>(&mut self, error: ParseError) -> E {
        let message = error.to_string();
        self.error.get_or_insert(error);
        E::custom(message)
    }

    fn check_len<E: serde::de::Error>(&mut self, len: usize) -> Result<(), E> {
        let limit = self.options.max_string_bytes;
        if len > limit {
            let at = self.at();
            return Err(self.fail(ParseError::TooLong { at, bytes: len, limit }));
        }
        Ok(())
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
        Ok(Value::from(v))
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Value, E> {
        match serde_json::Number::from_f64(v) {
            Some(n) => Ok(Value::Number(n)),
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
                None => return Ok(Value::Array(out)),
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let ctx = self.0;
        let mut out = Map::new();
        // Keys the mapping itself sets; a key set by a merge may be set again without a word.
        // Until a merge, those are the keys of `out`; from the first merge on, a set of them.
        let mut explicit: Option<HashSet<String>> = None;
        while let Some(key) = map.next_key_seed(Key(&mut *ctx))? {
            ctx.path.push(Token::Key(key));
            let value = map.next_value_seed(Node(&mut *ctx));
            let value = match value {
                Ok(v) => v,
                Err(e) => {
                    ctx.path.pop();
                    return Err(e);
                }
            };
            if ctx.yaml && matches!(ctx.path.last(), Some(Token::Key(k)) if k == "<<") {
                if explicit.is_none() {
                    explicit = Some(out.keys().cloned().collect());
                }
                let merged = merge(ctx, &mut out, value);
                ctx.path.pop();
                merged?;
                continue;
            }
            let duplicate = match (&mut explicit, ctx.path.last()) {
                (Some(set), Some(Token::Key(k))) => !set.insert(k.clone()),
                (None, Some(Token::Key(k))) => out.contains_key(k),
                _ => false,
            };
            if duplicate {
                let at = ctx.at();
                let key = ctx.pop_key();
                match ctx.options.duplicate_keys {
                    DuplicateKeys::Refuse => {
                        return Err(ctx.fail(ParseError::DuplicateKey { at, key }));
                    }
                    DuplicateKeys::LastWins => {
                        ctx.warnings.push(ParseWarning::DuplicateKey { at, key: key.clone() })
                    }
                }
                out.insert(key, value);
                continue;
            }
            let key = ctx.pop_key();
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Value, A::Error> {
        // serde_norway presents a value with a tag it does not resolve as an enum.
        let (tag, _rest) = data.variant::<String>()?;
        let at = self.0.at();
        let tag = if tag.starts_with('!') { tag } else { format!("!{tag}") };
        let message = format!("yaml tag `{tag}` is not supported");
        Err(self.0.fail(ParseError::Unsupported { at, message }))
    }
}

/// Spreads a merge key's value into the mapping read so far, as go-yaml v2 does: a mapping's
/// keys are set in turn (over what is there, explicit keys before the `<<` included); of a
/// sequence of mappings, the earlier ones take precedence.
fn merge<E: serde::de::Error>(
    ctx: &mut Context<'_>,
    out: &mut Map<String, Value>,
    value: Value,
) -> Result<(), E> {
    let wrong = |ctx: &mut Context<'_>| {
        let at = ctx.at();
        let message = "map merge requires map or sequence of maps as the value".to_string();
        ctx.fail(ParseError::Unsupported { at, message })
    };
    match value {
        Value::Object(m) => out.extend(m),
        Value::Array(items) => {
            if !items.iter().all(Value::is_object) {
                return Err(wrong(ctx));
            }
            for item in items.into_iter().rev() {
                if let Value::Object(m) = item {
                    out.extend(m);
                }
            }
        }
        _ => return Err(wrong(ctx)),
    }
    Ok(())
}

/// Reads a mapping key as Kubernetes does: through JSON, where keys are strings, so a plain
/// scalar key such as `80`, `true` or `~` becomes its text.
struct Key<'c, 'a>(&'c mut Context<'a>);

impl<'de> DeserializeSeed<'de> for Key<'_, '_> {
    type Value = String;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Key<'_, '_> {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a scalar mapping key")
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<String, E> {
        self.0.check_len(v.len())?;
        Ok(v.to_owned())
    }
    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<String, E> {
        self.0.check_len(v.len())?;
        Ok(v)
    }
    fn visit_bool<E>(self, v: bool) -> Result<String, E> {
        Ok(v.to_string())
    }
    fn visit_i64<E>(self, v: i64) -> Result<String, E> {
        Ok(v.to_string())
    }
    fn visit_u64<E>(self, v: u64) -> Result<String, E> {
        Ok(v.to_string())
    }
    fn visit_f64<E>(self, v: f64) -> Result<String, E> {
        Ok(serde_norway::Number::from(v).to_string())
    }
    fn visit_unit<E>(self) -> Result<String, E> {
        Ok("null".to_owned())
    }
    fn visit_none<E>(self) -> Result<String, E> {
        Ok("null".to_owned())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<String, A::Error> {
        Err(self.not_scalar())
    }
    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<String, A::Error> {
        Err(self.not_scalar())
    }
    fn visit_enum<A: EnumAccess<'de>>(self, _: A) -> Result<String, A::Error> {
        Err(self.not_scalar())
    }
}

impl Key<'_, '_> {
    fn not_scalar<E: serde::de::Error>(self) -> E {
        let at = self.0.at();
        let message = "a mapping key must be a scalar".to_string();
        self.0.fail(ParseError::Unsupported { at, message })
    }
}
