//! The one place a configuration key is declared: [`keyed!`] makes, from one list, the resolved
//! struct (with its defaults) and the patch a source gives (every key optional, read by serde
//! from TOML and from opencode.json), and the one function that applies a patch.

/// Declares a configuration struct whose keys are written once.
///
/// ```text
/// keyed! {
///     /// Docs of the struct.
///     pub struct Config, patched by Patch {
///         /// Docs of the key (on the struct field and the patch field).
///         #[serde(alias = "camelCaseName")]   // serde attributes, for the patch only
///         pub key_name: Type = default,
///     }
///     fixed {                                 // fields no source sets
///         /// Docs.
///         pub other: Type = default,
///     }
///     patch only {                            // patch fields `apply_to` leaves alone
///         /// Docs.
///         pub servers: Type,
///     }
/// }
/// ```
///
/// It makes `pub struct Config` (keys, then fixed fields) with `Default` from the defaults;
/// `pub(crate) struct Patch`, deserializable, unknown keys refused, each key an `Option` of
/// its type (`None`: absent, leave the value as it was); and `Patch::apply_to(self, &mut
/// Config)`, which sets every key the patch gives. A key whose source value needs checking or
/// normalizing says so with `#[serde(deserialize_with = "...")]` returning `Option<Type>`.
macro_rules! keyed {
    (
        $(#[doc = $doc:literal])*
        pub struct $name:ident, patched by $patch:ident {
            $(
                $(#[doc = $key_doc:literal])*
                $(#[serde $key_serde:tt])*
                pub $key:ident: $key_ty:ty = $key_default:expr,
            )*
        }
        fixed {
            $(
                $(#[doc = $fixed_doc:literal])*
                pub $fixed:ident: $fixed_ty:ty = $fixed_default:expr,
            )*
        }
        patch only {
            $(
                $(#[doc = $extra_doc:literal])*
                pub $extra:ident: $extra_ty:ty,
            )*
        }
    ) => {
        $(#[doc = $doc])*
        #[derive(Debug, Clone, PartialEq, serde::Serialize)]
        pub struct $name {
            $( $(#[doc = $key_doc])* pub $key: $key_ty, )*
            $( $(#[doc = $fixed_doc])* pub $fixed: $fixed_ty, )*
        }

        impl Default for $name {
            fn default() -> Self {
                $name {
                    $( $key: $key_default, )*
                    $( $fixed: $fixed_default, )*
                }
            }
        }

        #[doc = concat!("What one source sets of a [`", stringify!($name), "`]: every key optional.")]
        #[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        pub(crate) struct $patch {
            $( $(#[doc = $key_doc])* #[serde(default)] $(#[serde $key_serde])* pub $key: Option<$key_ty>, )*
            $( $(#[doc = $extra_doc])* #[serde(default)] pub $extra: $extra_ty, )*
        }

        impl $patch {
            /// Sets every key this patch gives; the others keep their values.
            pub(crate) fn apply_to(self, target: &mut $name) {
                $(
                    if let Some(value) = self.$key {
                        target.$key = value;
                    }
                )*
            }
        }
    };
}
