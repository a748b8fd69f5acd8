//! A JSON value that keeps its objects' keys in the order they were read, so that a settings
//! file another tool owns can be edited without reordering it.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, Serializer};

/// A JSON value; objects keep their key order.
#[derive(Debug, Clone, PartialEq)]
pub enum JsonValue {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, as serde_json reads it.
    Number(serde_json::Number),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<JsonValue>),
    /// An object, keys in order.
    Object(JsonObject),
}

/// A JSON object whose keys keep their order (a repeated key keeps its first place and its
/// last value, as `JSON.parse` keeps the last value).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JsonObject(Vec<(String, JsonValue)>);

impl JsonObject {
    /// An object of these entries, in this order.
    pub fn of(entries: impl IntoIterator<Item = (impl Into<String>, JsonValue)>) -> Self {
        let mut object = JsonObject::default();
        for (key, value) in entries {
            object.insert(key.into(), value);
        }
        object
    }

    /// The value of a key.
    pub fn get(&self, key: &str) -> Option<&JsonValue> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// The value of a key, to change it.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut JsonValue> {
        self.0.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Sets a key: in its place when present, else at the end.
    pub fn insert(&mut self, key: String, value: JsonValue) {
        match self.get_mut(&key) {
            Some(slot) => *slot = value,
            None => self.0.push((key, value)),
        }
    }

    /// The value of a key, inserted at the end as `default` first when absent.
    pub fn entry(&mut self, key: &str, default: JsonValue) -> &mut JsonValue {
        let index = match self.0.iter().position(|(k, _)| k == key) {
            Some(index) => index,
            None => {
                self.0.push((key.to_owned(), default));
                self.0.len() - 1
            }
        };
        &mut self.0[index].1
    }

    /// The entries, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &JsonValue)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }
}

impl JsonValue {
    /// A string value.
    pub fn string(text: impl Into<String>) -> Self {
        JsonValue::String(text.into())
    }

    /// The text of a string value.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            JsonValue::String(text) => Some(text),
            _ => None,
        }
    }

    /// The value of a `true` or `false`.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            JsonValue::Bool(value) => Some(*value),
            _ => None,
        }
    }

    /// The object of an object value.
    pub fn as_object(&self) -> Option<&JsonObject> {
        match self {
            JsonValue::Object(object) => Some(object),
            _ => None,
        }
    }

    /// The items of an array value.
    pub fn as_array(&self) -> Option<&[JsonValue]> {
        match self {
            JsonValue::Array(items) => Some(items),
            _ => None,
        }
    }

    /// Pretty JSON with two-space indents and a final newline.
    pub fn to_pretty(&self) -> String {
        // A value made of these variants always serialises.
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }
}

impl Serialize for JsonValue {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            JsonValue::Null => serializer.serialize_unit(),
            JsonValue::Bool(value) => serializer.serialize_bool(*value),
            JsonValue::Number(number) => number.serialize(serializer),
            JsonValue::String(text) => serializer.serialize_str(text),
            JsonValue::Array(items) => items.serialize(serializer),
            JsonValue::Object(object) => {
                let mut map = serializer.serialize_map(Some(object.0.len()))?;
                for (key, value) in &object.0 {
                    map.serialize_entry(key, value)?;
                }
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for JsonValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ValueVisitor)
    }
}

/// Reads any JSON value into a [`JsonValue`].
struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = JsonValue;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<JsonValue, E> {
        Ok(JsonValue::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<JsonValue, E> {
        Ok(JsonValue::Number(value.into()))
    }

    fn visit_u64<E>(self, value: u64) -> Result<JsonValue, E> {
        Ok(JsonValue::Number(value.into()))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<JsonValue, E> {
        serde_json::Number::from_f64(value)
            .map(JsonValue::Number)
            .ok_or_else(|| E::custom("a number JSON cannot hold"))
    }

    fn visit_str<E>(self, value: &str) -> Result<JsonValue, E> {
        Ok(JsonValue::String(value.to_owned()))
    }

    fn visit_string<E>(self, value: String) -> Result<JsonValue, E> {
        Ok(JsonValue::String(value))
    }

    fn visit_unit<E>(self) -> Result<JsonValue, E> {
        Ok(JsonValue::Null)
    }

    fn visit_none<E>(self) -> Result<JsonValue, E> {
        Ok(JsonValue::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<JsonValue, D::Error> {
        JsonValue::deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<JsonValue, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(JsonValue::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<JsonValue, A::Error> {
        let mut object = JsonObject::default();
        while let Some((key, value)) = map.next_entry::<String, JsonValue>()? {
            object.insert(key, value);
        }
        Ok(JsonValue::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_keep_their_key_order_through_a_round_trip() {
        let text = "{\n  \"zeta\": 1,\n  \"alpha\": {\n    \"b\": [\n      true,\n      null,\n      -2.5\n    ],\n    \"a\": \"x\"\n  }\n}\n";
        let value: JsonValue = serde_json::from_str(text).unwrap_or(JsonValue::Null);
        assert_eq!(value.to_pretty(), text);
    }

    #[test]
    fn a_repeated_key_keeps_its_first_place_and_last_value() {
        let value: JsonValue =
            serde_json::from_str(r#"{"a": 1, "b": 2, "a": 3}"#).unwrap_or(JsonValue::Null);
        assert_eq!(
            serde_json::to_string(&value).unwrap_or_default(),
            r#"{"a":3,"b":2}"#
        );
    }

    #[test]
    fn entry_inserts_at_the_end_only_when_absent() {
        let mut object = JsonObject::of([("a", JsonValue::Null)]);
        *object.entry("b", JsonValue::Bool(false)) = JsonValue::Bool(true);
        object.entry("a", JsonValue::Bool(false));
        assert_eq!(
            serde_json::to_string(&JsonValue::Object(object)).unwrap_or_default(),
            r#"{"a":null,"b":true}"#
        );
    }

    #[test]
    fn large_and_negative_integers_round_trip_exactly() {
        let text = r#"[18446744073709551615,-9223372036854775808,0.1]"#;
        let value: JsonValue = serde_json::from_str(text).unwrap_or(JsonValue::Null);
        assert_eq!(serde_json::to_string(&value).unwrap_or_default(), text);
    }
}
