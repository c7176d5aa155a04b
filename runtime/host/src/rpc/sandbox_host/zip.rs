//! The archive of `GET /files?archive=true`, written with the `zip` crate (deflated entries,
//! zip64 when a member needs it).

use std::io::{Cursor, Write};

use zip::write::SimpleFileOptions;

/// One archive member: its `/`-separated path and its bytes.
pub(super) struct Member {
    pub path: String,
    pub content: Vec<u8>,
}

/// The members as a zip archive.
pub(super) fn archive(members: &[Member]) -> std::io::Result<Vec<u8>> {
    let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for member in members {
        let options = SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .large_file(member.content.len() >= u32::MAX as usize);
        writer
            .start_file(member.path.as_str(), options)
            .map_err(std::io::Error::other)?;
        writer.write_all(&member.content)?;
    }
    let cursor = writer.finish().map_err(std::io::Error::other)?;
    Ok(cursor.into_inner())
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    #[test]
    fn every_member_reads_back_from_the_archive() {
        let bytes = archive(&[
            Member {
                path: "a.txt".into(),
                content: b"hello".to_vec(),
            },
            Member {
                path: "docs/b.md".into(),
                content: b"# B\n".to_vec(),
            },
        ])
        .unwrap();
        let mut read = zip::ZipArchive::new(Cursor::new(bytes)).unwrap();
        assert_eq!(read.len(), 2);
        let mut text = String::new();
        read.by_name("docs/b.md")
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        assert_eq!(text, "# B\n");
    }
}
