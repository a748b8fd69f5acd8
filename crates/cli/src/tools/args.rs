//! Tool arguments written once: [`tool_args!`] makes, from one list of fields, the struct a
//! tool's arguments are read into and the JSON schema `tools/list` shows for them. Each value
//! is read by serde as its field's type; what goes wrong is a [`ToolError`] naming the key.
//! Null counts as absent; unknown keys are ignored.

use std::collections::BTreeMap;
use std::num::NonZeroU32;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use squiggle_actors::Direction;

use super::error::ToolError;

/// Declares a tool's argument struct.
///
/// ```text
/// tool_args! {
///     /// Docs of the struct.
///     pub struct Name, shared: SharedArgs {     // `, shared: SharedArgs`: optional; its
///                                               // fields are read from the same object
///         /// Docs of the field.
///         key: Type = default, {"description": "..."};   // schema: the type's, these
///         other: Option<Type>, hidden;                   // members, and the default
///     }
/// }
/// ```
///
/// A field of type `Option<T>` may be absent; one of a bare type must be there unless it has
/// a default, which the schema then states. `hidden` leaves a field out of the schema.
macro_rules! tool_args {
    (
        $(#[doc = $doc:literal])*
        pub struct $name:ident $(, $shared:ident: $shared_ty:ty)? {
            $(
                $(#[doc = $field_doc:literal])*
                $field:ident: $ty:ty $(= $default:expr)?, $schema:tt;
            )*
        }
    ) => {
        $(#[doc = $doc])*
        #[derive(Debug, Clone, PartialEq)]
        pub struct $name {
            $(
                /// The arguments this tool shares with others.
                pub $shared: $shared_ty,
            )?
            $( $(#[doc = $field_doc])* pub $field: $ty, )*
        }

        impl $crate::tools::args::ToolArgs for $name {
            fn read(
                args: &serde_json::Map<String, serde_json::Value>,
            ) -> Result<Self, $crate::tools::error::ToolError> {
                Ok(Self {
                    $( $shared: <$shared_ty as $crate::tools::args::ToolArgs>::read(args)?, )?
                    $(
                        $field: $crate::tools::args::field::<$ty>(
                            stringify!($field),
                            args.get(stringify!($field)),
                            None $(.or(Some($default)))?,
                        )?,
                    )*
                })
            }

            fn describe(
                properties: &mut serde_json::Map<String, serde_json::Value>,
                required: &mut Vec<&'static str>,
            ) {
                $( <$shared_ty as $crate::tools::args::ToolArgs>::describe(properties, required); )?
                $(
                    let default: Option<$ty> = None $(.or(Some($default)))?;
                    let needed = default.is_none()
                        && <$ty as $crate::tools::args::Field>::absent().is_none();
                    if let Some(schema) = $crate::tools::args::property_schema!($ty, default, $schema) {
                        properties.insert(stringify!($field).to_string(), schema);
                        if needed {
                            required.push(stringify!($field));
                        }
                    }
                )*
            }
        }
    };
}

/// A field's schema: its type's, with the members written beside it and its default; none
/// when `hidden`.
macro_rules! property_schema {
    ($ty:ty, $default:expr, hidden) => {{
        let _ = $default;
        None::<serde_json::Value>
    }};
    ($ty:ty, $default:expr, { $($member:tt)* }) => {
        Some($crate::tools::args::property::<$ty>($default, serde_json::json!({ $($member)* })))
    };
}

pub(crate) use {property_schema, tool_args};

/// A tool's arguments: read from the object a call gives, and described as a JSON schema.
pub trait ToolArgs: Sized {
    /// Reads the arguments; the first one that is wrong or missing is the error.
    fn read(args: &Map<String, Value>) -> Result<Self, ToolError>;

    /// Adds each argument's schema, and the names of those that are required.
    fn describe(properties: &mut Map<String, Value>, required: &mut Vec<&'static str>);

    /// The JSON schema of the arguments (an object; `required` only when some are).
    fn schema() -> Value {
        let (mut properties, mut required) = (Map::new(), Vec::new());
        Self::describe(&mut properties, &mut required);
        let mut schema = Map::new();
        schema.insert("type".into(), "object".into());
        schema.insert("properties".into(), Value::Object(properties));
        if !required.is_empty() {
            schema.insert("required".into(), required.into());
        }
        Value::Object(schema)
    }
}

/// A type an argument can have: how a value is read as it, and its schema.
pub trait Arg: Sized + Serialize {
    /// What a value must be, for the error when it is not (`a string`).
    const EXPECTED: &'static str;

    /// The schema of the type, before a field's own members.
    fn schema() -> Map<String, Value>;

    /// Reads a value that is there and not null.
    fn read(key: &'static str, value: &Value) -> Result<Self, ToolError>;
}

/// How a field follows from its argument: `Option<T>` may be absent, a bare `T` must be there
/// unless the field has a default.
pub trait Field: Sized + Serialize {
    /// The type of the argument's value.
    type Value: Arg;

    /// The field when its argument is given.
    fn given(value: Self::Value) -> Self;

    /// The field when its argument is absent and it has no default, if it may be absent.
    fn absent() -> Option<Self>;
}

impl<T: Arg> Field for T {
    type Value = T;

    fn given(value: T) -> Self {
        value
    }

    fn absent() -> Option<Self> {
        None
    }
}

impl<T: Arg> Field for Option<T> {
    type Value = T;

    fn given(value: T) -> Self {
        Some(value)
    }

    fn absent() -> Option<Self> {
        Some(None)
    }
}

/// Reads a field from its argument: absent or null is the default, if there is one.
pub fn field<F: Field>(
    key: &'static str,
    value: Option<&Value>,
    default: Option<F>,
) -> Result<F, ToolError> {
    match present(value) {
        Some(value) => F::Value::read(key, value).map(F::given),
        None => default.or_else(F::absent).ok_or(ToolError::Missing(key)),
    }
}

/// A value that is there: null counts as absent.
fn present(value: Option<&Value>) -> Option<&Value> {
    value.filter(|value| !value.is_null())
}

/// A field's schema: its type's, the members given, and the default when there is one.
pub fn property<F: Field>(default: Option<F>, members: Value) -> Value {
    let mut schema = F::Value::schema();
    if let Value::Object(members) = members {
        schema.extend(members);
    }
    if let Some(default) = default {
        let default = serde_json::to_value(default).unwrap_or(Value::Null);
        schema.insert("default".into(), default);
    }
    Value::Object(schema)
}

/// A schema of one member, `{"type": ...}`.
fn typed(name: &str) -> Map<String, Value> {
    Map::from_iter([("type".to_string(), Value::from(name))])
}

/// Reads a value as `T` with serde, or says what it must be instead.
fn deserialized<'a, T: Deserialize<'a>>(
    key: &'static str,
    expected: &str,
    value: &'a Value,
) -> Result<T, ToolError> {
    T::deserialize(value).map_err(|_| wrong_type(key, expected, value))
}

/// The error for a value of the wrong type.
pub fn wrong_type(key: &'static str, expected: &str, got: &Value) -> ToolError {
    let got = match got {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    ToolError::BadArgument {
        key,
        expected: expected.to_string(),
        got: got.to_string(),
    }
}

/// Implements [`Arg`] for types serde reads as they are: their schema type, and what a value
/// must be.
macro_rules! plain_arg {
    ($($ty:ty: $json_type:literal, $expected:literal;)*) => {$(
        impl Arg for $ty {
            const EXPECTED: &'static str = $expected;

            fn schema() -> Map<String, Value> {
                typed($json_type)
            }

            fn read(key: &'static str, value: &Value) -> Result<Self, ToolError> {
                deserialized(key, Self::EXPECTED, value)
            }
        }
    )*};
}

plain_arg! {
    String: "string", "a string";
    bool: "boolean", "true or false";
}

/// A 1-based line, column, depth or index: a whole number from 1.
impl Arg for u32 {
    const EXPECTED: &'static str = "a whole number from 1";

    fn schema() -> Map<String, Value> {
        let mut schema = typed("integer");
        schema.insert("minimum".into(), 1.into());
        schema
    }

    fn read(key: &'static str, value: &Value) -> Result<Self, ToolError> {
        deserialized::<NonZeroU32>(key, Self::EXPECTED, value)
            .map(NonZeroU32::get)
            .map_err(|error| match value {
                // A whole number out of range (0, -1, too large) is named as it was given.
                Value::Number(number) if number.is_i64() || number.is_u64() => {
                    ToolError::OutOfRange {
                        key,
                        expected: Self::EXPECTED,
                        got: number.to_string(),
                    }
                }
                _ => error,
            })
    }
}

/// Which way a call hierarchy goes: `"incoming"` or `"outgoing"`.
impl Arg for Direction {
    const EXPECTED: &'static str = "\"incoming\" or \"outgoing\"";

    fn schema() -> Map<String, Value> {
        Map::from_iter([(
            "enum".to_string(),
            serde_json::json!(["incoming", "outgoing"]),
        )])
    }

    fn read(key: &'static str, value: &Value) -> Result<Self, ToolError> {
        let text: String = deserialized(key, String::EXPECTED, value)?;
        text.parse().map_err(|_| ToolError::BadArgument {
            key,
            expected: Self::EXPECTED.to_string(),
            got: format!("{text:?}"),
        })
    }
}

/// The content hashes of the files a preview touched, by file, as an apply passes them back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hashes(pub BTreeMap<String, String>);

impl Arg for Hashes {
    const EXPECTED: &'static str = "an object of file -> hash";

    fn schema() -> Map<String, Value> {
        typed("object")
    }

    fn read(key: &'static str, value: &Value) -> Result<Self, ToolError> {
        let Value::Object(map) = value else {
            return Err(wrong_type(key, Self::EXPECTED, value));
        };
        let hash = |hash: &Value| hash.as_str().unwrap_or_default().to_string();
        Ok(Hashes(
            map.iter()
                .map(|(file, value)| (file.clone(), hash(value)))
                .collect(),
        ))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    tool_args! {
        /// Arguments to try the macro on.
        pub struct Sample {
            /// Required.
            file: String, {"description": "A file."};
            /// Optional.
            line: Option<u32>, {};
            /// With a default.
            flag: bool = true, {};
            /// Left out of the schema.
            expect: Option<Hashes>, hidden;
        }
    }

    fn read(value: Value) -> Result<Sample, String> {
        Sample::read(value.as_object().unwrap()).map_err(|e| e.to_string())
    }

    #[test]
    fn an_argument_of_the_wrong_type_is_an_error_not_absent() {
        assert_eq!(
            read(json!({"file": 5})).unwrap_err(),
            "`file` must be a string, not a number"
        );
        assert_eq!(
            read(json!({"file": ["x"]})).unwrap_err(),
            "`file` must be a string, not an array"
        );
        assert_eq!(
            read(json!({"file": "a", "flag": "no"})).unwrap_err(),
            "`flag` must be true or false, not a string"
        );
        assert_eq!(
            read(json!({"file": "a", "expect": 3})).unwrap_err(),
            "`expect` must be an object of file -> hash, not a number"
        );
    }

    #[test]
    fn absent_and_null_arguments_are_absent() {
        assert_eq!(
            read(json!({"file": null})).unwrap_err(),
            "`file` is required"
        );
        assert_eq!(
            read(json!({"file": "a", "line": null, "flag": null, "other": 1})),
            Ok(Sample {
                file: "a".into(),
                line: None,
                flag: true,
                expect: None,
            })
        );
    }

    #[test]
    fn positions_are_whole_numbers_from_one() {
        assert_eq!(read(json!({"file": "a", "line": 3})).unwrap().line, Some(3));
        for bad in [
            json!(0),
            json!(-1),
            json!(1.5),
            json!("3"),
            json!(4294967296u64),
        ] {
            let error = read(json!({"file": "a", "line": bad})).unwrap_err();
            assert!(
                error.starts_with("`line` must be a whole number from 1, "),
                "{bad}"
            );
        }
        let said = |value: Value| read(json!({"file": "a", "line": value})).unwrap_err();
        let cases = [
            (json!(0), "`line` must be a whole number from 1, got 0"),
            (json!(-1), "`line` must be a whole number from 1, got -1"),
            (
                json!(4294967296u64),
                "`line` must be a whole number from 1, got 4294967296",
            ),
            (
                json!(1.5),
                "`line` must be a whole number from 1, not a number",
            ),
            (
                json!("3"),
                "`line` must be a whole number from 1, not a string",
            ),
        ];
        for (value, message) in cases {
            assert_eq!(said(value), message);
        }
    }

    #[test]
    fn a_direction_is_incoming_or_outgoing() {
        let read = |value| Direction::read("direction", &value).map_err(|e| e.to_string());
        assert_eq!(read(json!("outgoing")), Ok(Direction::Outgoing));
        assert_eq!(
            read(json!("up")).unwrap_err(),
            "`direction` must be \"incoming\" or \"outgoing\", not \"up\""
        );
        assert_eq!(
            read(json!(1)).unwrap_err(),
            "`direction` must be a string, not a number"
        );
    }

    #[test]
    fn the_schema_comes_from_the_same_fields() {
        assert_eq!(
            Sample::schema(),
            json!({"type": "object", "properties": {
                "file": {"type": "string", "description": "A file."},
                "line": {"type": "integer", "minimum": 1},
                "flag": {"type": "boolean", "default": true},
            }, "required": ["file"]})
        );
    }
}
