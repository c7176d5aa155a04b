//! The streamed copies hold a bounded amount whatever the file's size: a file many times
//! the bound is pushed through the redaction and pulled to disk while the test counts what
//! is held at once; and redaction a window at a time finds the secrets the whole would.

use std::io::Read;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::StreamExt;

use super::*;

/// Lines of text, `total` bytes of them, made as they are read and counted.
struct Lines {
    total: usize,
    made: Arc<AtomicUsize>,
}

impl Read for Lines {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let made = self.made.load(Ordering::SeqCst);
        let count = buf.len().min(self.total - made);
        for (at, byte) in buf[..count].iter_mut().enumerate() {
            let index = made + at;
            *byte = if index % 80 == 79 {
                b'\n'
            } else {
                b'a' + (index % 26) as u8
            };
        }
        self.made.fetch_add(count, Ordering::SeqCst);
        Ok(count)
    }
}

fn redactor() -> Arc<Redactor> {
    Arc::new(Redactor::with_defaults())
}

fn redact_all(content: &[u8]) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    Redacting::new(content, redactor()).read_to_end(&mut out)?;
    Ok(out)
}

#[test]
fn redacting_holds_a_few_windows_of_a_large_file() {
    let total = 16 * 1024 * 1024;
    let made = Arc::new(AtomicUsize::new(0));
    let mut reader = Redacting::new(
        Lines {
            total,
            made: Arc::clone(&made),
        },
        redactor(),
    );
    let mut buf = vec![0; 8192];
    let mut handed = 0;
    loop {
        let read = reader.read(&mut buf).unwrap();
        if read == 0 {
            break;
        }
        handed += read;
        // What was read from the file but not yet handed on stays within a few windows.
        let ahead = made.load(Ordering::SeqCst) - handed;
        assert!(
            ahead <= 2 * WINDOW,
            "{ahead} bytes held ahead of the reader"
        );
    }
    assert_eq!(handed, total);
    assert!(reader.peak() <= 2 * WINDOW, "peak {}", reader.peak());
}

#[test]
fn a_secret_across_a_window_boundary_is_redacted() {
    let secret = "sk-abcdefghijklmnopqrstuvwx";
    for offset in [WINDOW - OVERLAP - 10, WINDOW - 5, WINDOW + BLOCK - 3] {
        let mut text = "x".repeat(offset);
        text.push_str(secret);
        text.push_str(&"y".repeat(3 * WINDOW));
        let out = String::from_utf8(redact_all(text.as_bytes()).unwrap()).unwrap();
        assert!(!out.contains(secret), "leaked at offset {offset}");
        assert!(
            !out.contains("sk-abcdefghijklmnop"),
            "part leaked at {offset}"
        );
        let whole = Redactor::with_defaults().redact(&text).into_owned();
        assert_eq!(out, whole, "windowed redaction differs at offset {offset}");
    }
}

#[test]
fn text_without_secrets_passes_unchanged_and_short_files_whole() {
    let text: String = (0..200_000).map(|i| format!("line {i} ü\n")).collect();
    assert_eq!(redact_all(text.as_bytes()).unwrap(), text.as_bytes());
    assert_eq!(redact_all(b"").unwrap(), b"");
    assert_eq!(redact_all(b"hello").unwrap(), b"hello");
}

#[test]
fn bytes_that_are_no_text_pass_unless_they_hold_a_secret() {
    let mut binary = vec![0xff_u8, 0xfe, 0x00, 0x01];
    binary.extend(std::iter::repeat_n(0x80_u8, 3 * WINDOW));
    assert_eq!(redact_all(&binary).unwrap(), binary);
    binary.extend_from_slice(b" sk-abcdefghijklmnopqrstuvwx ");
    binary.extend(std::iter::repeat_n(0x80_u8, 2 * WINDOW));
    let error = redact_all(&binary).unwrap_err();
    assert!(
        error
            .get_ref()
            .is_some_and(|inner| inner.is::<SecretInBinary>())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chunks_are_read_only_a_few_ahead_of_the_upload() {
    let total = 16 * 1024 * 1024;
    let made = Arc::new(AtomicUsize::new(0));
    let (stream, reading) = chunks(Lines {
        total,
        made: Arc::clone(&made),
    });
    let mut stream = std::pin::pin!(stream);
    let mut taken = 0;
    while let Some(chunk) = stream.next().await {
        // Before the chunk is taken, the reader may not have read past the few in flight.
        let ahead_before = made.load(Ordering::SeqCst) - taken;
        let chunk = chunk.unwrap();
        assert!(chunk.len() <= BLOCK, "a chunk of {} bytes", chunk.len());
        taken += chunk.len();
        assert!(
            ahead_before <= (IN_FLIGHT + 2) * BLOCK,
            "{ahead_before} bytes read ahead of the upload"
        );
        let ahead = made.load(Ordering::SeqCst) - taken;
        assert!(
            ahead <= (IN_FLIGHT + 2) * BLOCK,
            "{ahead} bytes read ahead of the upload"
        );
    }
    assert_eq!(taken, total);
    reading.await.unwrap().unwrap();
}

/// The size of every file in `dir`, the temporary one being written included.
fn written(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|entry| entry.metadata().ok())
        .map(|meta| meta.len())
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    windows,
    ignore = "under Wine the streamed pull's file is refused (Access denied): not yet working on Windows; sandbox mode runs on Linux"
)]
async fn a_pulled_file_reaches_the_disk_as_it_arrives() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    let chunk = Bytes::from(vec![b'z'; BLOCK]);
    let count = 256; // 16 MiB
    let watched = root.clone();
    let stream = futures::stream::iter(0..count).then(move |index| {
        let (chunk, watched) = (chunk.clone(), watched.clone());
        async move {
            // Before handing on chunk `index`, all but the few in flight are on disk.
            let lag = (IN_FLIGHT + 2) as u64;
            let floor = (index as u64).saturating_sub(lag) * BLOCK as u64;
            let on_disk = written(&watched);
            assert!(
                on_disk >= floor,
                "chunk {index}: {on_disk} bytes on disk, at least {floor} expected"
            );
            Ok::<_, io::Error>(chunk)
        }
    });
    write_streamed(Box::pin(stream), &root, PathBuf::from("big.bin"))
        .await
        .unwrap();
    assert_eq!(
        std::fs::metadata(root.join("big.bin")).unwrap().len(),
        (count * BLOCK) as u64
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    windows,
    ignore = "under Wine the streamed pull's file is refused (Access denied): not yet working on Windows; sandbox mode runs on Linux"
)]
async fn a_broken_off_pull_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let stream = futures::stream::iter(vec![
        Ok(Bytes::from_static(b"partial")),
        Err(io::Error::other("connection reset")),
    ]);
    let error = write_streamed(stream, dir.path(), PathBuf::from("cut.txt"))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("broke off"));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
