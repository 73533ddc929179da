//! A decoded YAML value into a typed structure as sigs.k8s.io/yaml's `Unmarshal` does it: a
//! scalar that YAML 1.1 resolved to a boolean or a number, where the structure wants a string,
//! becomes that value's text (`off` is `"false"`, `0644` is `"420"`, a float in Go's shortest
//! 32-bit `%g`), and a null where it wants a string is the empty string. Everything else is
//! serde_json's reading of the value.

use serde::de::value::{MapDeserializer, SeqDeserializer};
use serde::de::{DeserializeOwned, IntoDeserializer, Visitor};
use serde::forward_to_deserialize_any;
use serde_json::Value;

/// `value` as a `T`, read as sigs.k8s.io/yaml reads YAML into a Go structure; the error names
/// the field at fault (`[0].kinds: invalid type: ...`).
pub(crate) fn from_yaml_value<T: DeserializeOwned>(value: Value) -> Result<T, String> {
    serde_path_to_error::deserialize(Lenient(value)).map_err(|e| match e.path().to_string() {
        path if path == "." => e.inner().to_string(),
        path => format!("{path}: {}", e.inner()),
    })
}

/// A value whose scalars read as strings where a string is wanted.
struct Lenient(Value);

impl<'de> IntoDeserializer<'de, serde_json::Error> for Lenient {
    type Deserializer = Self;
    fn into_deserializer(self) -> Self {
        self
    }
}

impl<'de> serde::Deserializer<'de> for Lenient {
    type Error = serde_json::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Array(items) => {
                let mut seq = SeqDeserializer::new(items.into_iter().map(Lenient));
                let out = visitor.visit_seq(&mut seq)?;
                seq.end()?;
                Ok(out)
            }
            Value::Object(map) => {
                let mut entries =
                    MapDeserializer::new(map.into_iter().map(|(k, v)| (k, Lenient(v))));
                let out = visitor.visit_map(&mut entries)?;
                entries.end()?;
                Ok(out)
            }
            // A number as the JSON step leaves it (`1e6` is 1000000) where no string is wanted.
            Value::Number(n) => match super::resolve::json_number(&n) {
                Some(v) => serde::Deserializer::deserialize_any(v, visitor),
                None => serde::Deserializer::deserialize_any(Value::Number(n), visitor),
            },
            other => serde::Deserializer::deserialize_any(other, visitor),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            other => visitor.visit_some(Lenient(other)),
        }
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.deserialize_string(visitor)
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Null => visitor.visit_string(String::new()),
            Value::Bool(b) => visitor.visit_string(b.to_string()),
            Value::Number(n) => visitor.visit_string(match n.as_f64() {
                Some(f) if n.is_f64() => super::resolve::go_float32_g(f),
                _ => n.to_string(),
            }),
            other => serde::Deserializer::deserialize_string(other, visitor),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        serde::Deserializer::deserialize_enum(self.0, name, variants, visitor)
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char bytes byte_buf unit
        unit_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}
