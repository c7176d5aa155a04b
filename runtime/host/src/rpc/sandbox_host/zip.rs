//! The archive of `GET /files?archive=true`, written with the `zip` crate as a stream
//! (deflated entries with data descriptors, zip64 when a member needs it): a blocking task
//! reads each member beneath the workspace folder and hands the archive on in chunks
//! through a short channel, so memory stays flat whatever the files' sizes and the task
//! stops when the client goes.

use std::io::{self, Write};
use std::path::PathBuf;

use bytes::Bytes;
use futures::Stream;
use tokio::sync::mpsc;
use zip::write::SimpleFileOptions;

use crate::workspace_files::{self, WorkspaceFile};

/// The bytes handed on at once.
const CHUNK_BYTES: usize = 64 * 1024;

/// A writer whose bytes go to the response in chunks.
struct Sender {
    channel: mpsc::Sender<io::Result<Bytes>>,
    pending: Vec<u8>,
}

impl Sender {
    fn send(&mut self) -> io::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let chunk = Bytes::from(std::mem::replace(
            &mut self.pending,
            Vec::with_capacity(CHUNK_BYTES),
        ));
        self.channel
            .blocking_send(Ok(chunk))
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the client went away"))
    }
}

impl Write for Sender {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(bytes);
        if self.pending.len() >= CHUNK_BYTES {
            self.send()?;
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.send()
    }
}

/// Writes the archive of `files` (read beneath `root`) into `out`. A member that can no
/// longer be opened beneath the folder (removed, or swapped for a link since the listing)
/// is left out.
fn write_archive<W: Write>(
    root: &std::path::Path,
    files: &[WorkspaceFile],
    out: W,
) -> io::Result<W> {
    let mut writer = zip::ZipWriter::new_stream(out);
    for member in files {
        let Some(rel) = workspace_files::relative(&member.path) else {
            continue;
        };
        let Ok((mut file, len)) = workspace_files::open(root, &rel) else {
            continue;
        };
        let options = SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .large_file(len >= u64::from(u32::MAX));
        writer
            .start_file(member.path.as_str(), options)
            .map_err(io::Error::other)?;
        io::copy(&mut file, &mut writer)?;
    }
    let inner = writer.finish().map_err(io::Error::other)?;
    Ok(inner.into_inner())
}

/// The archive as a body stream.
pub(super) fn stream_archive(
    root: PathBuf,
    files: Vec<WorkspaceFile>,
) -> impl Stream<Item = io::Result<Bytes>> {
    let (channel, receiver) = mpsc::channel(4);
    tokio::task::spawn_blocking(move || {
        let sender = Sender {
            channel: channel.clone(),
            pending: Vec::with_capacity(CHUNK_BYTES),
        };
        let written = write_archive(&root, &files, sender).and_then(|mut sender| sender.send());
        if let Err(error) = written
            && error.kind() != io::ErrorKind::BrokenPipe
        {
            tracing::warn!(%error, "the workspace archive could not be written");
            let _ = channel.blocking_send(Err(error));
        }
    });
    futures::stream::unfold(receiver, |mut receiver| async move {
        receiver.recv().await.map(|item| (item, receiver))
    })
}

#[cfg(test)]
mod tests {
    use std::io::{Cursor, Read};

    use super::*;

    #[test]
    fn every_member_reads_back_and_links_out_are_left_out() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("docs")).unwrap();
        std::fs::write(root.path().join("a.txt"), "hello").unwrap();
        std::fs::write(root.path().join("docs/b.md"), "# B\n").unwrap();
        std::fs::write(outside.path().join("secret"), "s").unwrap();
        let mut files = workspace_files::list(root.path()).unwrap();
        // Listed as a file, then swapped for a link out before the archive reads it.
        files.push(WorkspaceFile {
            path: "swapped".into(),
            size: 1,
        });
        #[cfg(unix)]
        std::os::unix::fs::symlink(outside.path().join("secret"), root.path().join("swapped"))
            .unwrap();
        let bytes = write_archive(root.path(), &files, Vec::new()).unwrap();
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
