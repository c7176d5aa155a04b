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
