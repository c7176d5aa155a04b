//! What the tools that send the model images share (ViewImage, ExecuteCode's output
//! folder): the formats, told by name and by first bytes, the bound on one image, and sizes
//! as people read them.

/// The largest image sent when the policy sets no smaller size limit: 5 MiB, the most
/// the strictest multimodal models take per image.
pub(crate) const MAX_IMAGE_BYTES: u64 = 5 * 1024 * 1024;

/// The formats the models read: extension, media type, and the bytes a file starts with.
const FORMATS: &[(&str, &str, &[u8])] = &[
    ("png", "image/png", b"\x89PNG\r\n\x1a\n"),
    ("jpg", "image/jpeg", b"\xff\xd8\xff"),
    ("jpeg", "image/jpeg", b"\xff\xd8\xff"),
    ("gif", "image/gif", b"GIF8"),
    ("webp", "image/webp", b"RIFF"),
    ("bmp", "image/bmp", b"BM"),
];

/// The media type of an image file named with `extension` (any case).
pub(crate) fn media_type(extension: &str) -> Option<&'static str> {
    let extension = extension.to_ascii_lowercase();
    FORMATS
        .iter()
        .find(|(name, ..)| *name == extension)
        .map(|(_, media_type, _)| *media_type)
}

/// Whether `bytes` start as an image of `media_type` does.
pub(crate) fn holds(media_type: &str, bytes: &[u8]) -> bool {
    let webp = media_type != "image/webp" || bytes.get(8..12) == Some(b"WEBP".as_slice());
    webp && FORMATS
        .iter()
        .any(|(_, known, magic)| *known == media_type && bytes.starts_with(magic))
}

/// A size as people read it: bytes, KB or MB (1 KB = 1 024 bytes).
pub(crate) fn size_text(bytes: u64) -> String {
    const KB: f64 = 1024.0;
    let size = bytes as f64;
    if size < KB {
        format!("{bytes} B")
    } else if size < KB * KB {
        format!("{:.1} KB", size / KB)
    } else {
        format!("{:.1} MB", size / (KB * KB))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_say_them() {
        assert_eq!(size_text(70), "70 B");
        assert_eq!(size_text(1536), "1.5 KB");
        assert_eq!(size_text(3 * 1024 * 1024), "3.0 MB");
    }

    #[test]
    fn a_format_is_its_name_and_its_first_bytes() {
        assert_eq!(media_type("PNG"), Some("image/png"));
        assert_eq!(media_type("txt"), None);
        assert!(holds("image/png", b"\x89PNG\r\n\x1a\nrest"));
        assert!(!holds("image/png", b"GIF89a"));
        assert!(holds("image/webp", b"RIFF\0\0\0\0WEBPVP8 "));
        assert!(!holds("image/webp", b"RIFF\0\0\0\0WAVEfmt "));
    }
}
