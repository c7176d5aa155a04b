//! Deserializers for what the real services send in place of an absent field (`null`, an
//! empty string), so the wire types can keep plain defaults.

use serde::{Deserialize, Deserializer};

/// Deserialize a field whose `null` means "the default" (an empty list, `false`, ...).
///
/// The real Policy Service sends every unset scope field as `null` (INTEROP.md §5).
pub(crate) fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// An optional string where `null` and `""` both mean absent (the real Session Service
/// sends `""` for settings the sandbox reads from its own environment).
pub(crate) fn empty_string_as_none<'de, D>(deserializer: D) -> Result<Option<String>, D::Error>
where
    D: Deserializer<'de>,
{
    Ok(Option::<String>::deserialize(deserializer)?.filter(|text| !text.trim().is_empty()))
}
