//! Text decoding for ReadFile (local-tool-runtime.md §4.1 "Platform notes", §6.3): a byte
//! order mark decides first (UTF-8 stripped; UTF-16 LE/BE decoded as UTF-16); otherwise
//! `utf-8` → the OS default (`windows-1252` on Windows, `macRoman` on macOS; Linux has no
//! legacy default) → `latin-1`, which accepts every byte. An explicit `encoding` is a WHATWG
//! label (`utf-16le`, `windows-1252`, `shift_jis`, …) or `latin-1`, decoded without fallback.
//! Pure functions of the [`Os`], so each platform's chain is tested everywhere.

use encoding_rs::{Encoding, MACINTOSH, UTF_8, UTF_16BE, UTF_16LE, WINDOWS_1252};

use super::shell::Os;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum DecodeError {
    #[error(
        "unknown encoding \"{0}\"; use a standard label such as utf-8, utf-16le, utf-16be, windows-1252, latin-1 or shift_jis"
    )]
    UnknownEncoding(String),
    #[error(
        "the file is not valid {0} text; try another encoding, or leave encoding out to detect it"
    )]
    Malformed(&'static str),
}

/// The OS's legacy default encoding, tried after UTF-8 (§6.3); `None` on Linux, whose
/// default is UTF-8 itself.
pub(crate) fn os_default(os: Os) -> Option<&'static Encoding> {
    match os {
        Os::Windows => Some(WINDOWS_1252),
        Os::MacOs => Some(MACINTOSH),
        Os::OtherUnix => None,
    }
}

/// The encoding a byte order mark at the start of `bytes` announces, and the mark's length.
pub(crate) fn bom(bytes: &[u8]) -> Option<(&'static Encoding, usize)> {
    Encoding::for_bom(bytes)
}

/// Whether `label` asks for latin-1 proper (ISO-8859-1: every byte is the code point of the
/// same value). WHATWG reads these labels as windows-1252, which differs in 0x80–0x9F.
fn is_latin1(label: &str) -> bool {
    matches!(
        label.trim().to_ascii_lowercase().as_str(),
        "latin-1" | "latin1" | "iso-8859-1" | "iso8859-1" | "l1"
    )
}

fn latin1(bytes: &[u8]) -> String {
    bytes.iter().map(|&byte| char::from(byte)).collect()
}

fn strict(encoding: &'static Encoding, bytes: &[u8]) -> Option<String> {
    encoding
        .decode_without_bom_handling_and_without_replacement(bytes)
        .map(|text| text.into_owned())
}

/// Decodes a file's bytes: see the module docs. `requested` is the ReadFile `encoding`
/// argument; `utf-8` (its default) runs the detection chain.
pub(crate) fn decode(os: Os, bytes: &[u8], requested: Option<&str>) -> Result<String, DecodeError> {
    let explicit = match requested {
        Some(label) if is_latin1(label) => return Ok(latin1(bytes)),
        Some(label) => Some(
            Encoding::for_label(label.trim().as_bytes())
                .ok_or_else(|| DecodeError::UnknownEncoding(label.to_owned()))?,
        ),
        None => None,
    };
    let marked = bom(bytes);
    match explicit.filter(|encoding| *encoding != UTF_8) {
        Some(encoding) => {
            let body = match marked {
                Some((announced, length)) if announced == encoding => &bytes[length..],
                _ => bytes,
            };
            strict(encoding, body).ok_or(DecodeError::Malformed(encoding.name()))
        }
        None => Ok(detect(os, bytes, marked)),
    }
}

/// The §6.3 chain. A BOM wins: a UTF-16 file read as UTF-8 would be garbage.
fn detect(os: Os, bytes: &[u8], marked: Option<(&'static Encoding, usize)>) -> String {
    if let Some((encoding, length)) = marked {
        if let Some(text) = strict(encoding, &bytes[length..]) {
            return text;
        }
        if encoding == UTF_16LE || encoding == UTF_16BE {
            // Odd length or lone surrogates: still UTF-16, shown with replacement characters.
            return encoding
                .decode_without_bom_handling(&bytes[length..])
                .0
                .into_owned();
        }
    }
    let body = match marked {
        Some((encoding, length)) if encoding == UTF_8 => &bytes[length..],
        _ => bytes,
    };
    strict(UTF_8, body)
        .or_else(|| os_default(os).and_then(|encoding| strict(encoding, body)))
        .unwrap_or_else(|| latin1(body))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Os; 3] = [Os::OtherUnix, Os::MacOs, Os::Windows];

    #[test]
    fn boms_are_stripped_and_utf16_is_decoded_on_every_os() {
        for os in ALL {
            assert_eq!(decode(os, b"\xEF\xBB\xBFhi", None).unwrap(), "hi");
            assert_eq!(decode(os, b"\xFF\xFEh\0i\0", None).unwrap(), "hi");
            assert_eq!(decode(os, b"\xFE\xFF\0h\0i", None).unwrap(), "hi");
            assert_eq!(decode(os, b"\xFF\xFE\xE9\0", None).unwrap(), "é");
            assert_eq!(decode(os, b"plain", Some("UTF-8")).unwrap(), "plain");
            assert_eq!(decode(os, "café".as_bytes(), None).unwrap(), "café");
        }
        // A truncated UTF-16 file still reads as UTF-16.
        assert_eq!(
            decode(Os::OtherUnix, b"\xFF\xFEh\0i", None).unwrap(),
            "h\u{FFFD}"
        );
    }

    #[test]
    fn invalid_utf8_falls_back_to_the_os_default_then_latin1() {
        // 0x80 is € in windows-1252, Ä in macRoman, a C1 control in latin-1.
        let bytes = b"\x80 caf\xE9";
        assert_eq!(decode(Os::Windows, bytes, None).unwrap(), "€ café");
        assert_eq!(decode(Os::MacOs, bytes, None).unwrap(), "Ä cafÈ");
        assert_eq!(decode(Os::OtherUnix, bytes, None).unwrap(), "\u{80} café");
        assert_eq!(os_default(Os::Windows), Some(WINDOWS_1252));
        assert_eq!(os_default(Os::MacOs), Some(MACINTOSH));
        assert_eq!(os_default(Os::OtherUnix), None);
    }

    #[test]
    fn an_explicit_encoding_is_used_without_fallback() {
        let os = Os::OtherUnix;
        assert_eq!(decode(os, b"\x80", Some("windows-1252")).unwrap(), "€");
        assert_eq!(decode(os, b"\x80", Some("latin-1")).unwrap(), "\u{80}");
        assert_eq!(decode(os, b"\x80", Some("ISO-8859-1")).unwrap(), "\u{80}");
        assert_eq!(decode(os, b"h\0i\0", Some("utf-16le")).unwrap(), "hi");
        assert_eq!(decode(os, b"\xFF\xFEh\0", Some("utf-16le")).unwrap(), "h");
        assert_eq!(decode(os, b"\x82\xA0", Some("shift_jis")).unwrap(), "あ");
        assert_eq!(
            decode(os, b"x", Some("klingon")),
            Err(DecodeError::UnknownEncoding("klingon".into()))
        );
        assert_eq!(
            decode(os, b"\x82", Some("shift_jis")),
            Err(DecodeError::Malformed("Shift_JIS"))
        );
        let message = DecodeError::UnknownEncoding("klingon".into()).to_string();
        assert!(message.contains("utf-16le"), "{message}");
    }
}
