//! The thread's stored JSON on disk. A message is written to an unnamed file beside the
//! checkpoints once it has been checked against the credential values, joined to the
//! ones before it with commas — exactly the bytes of the checkpoint's `thread` array —
//! and memory keeps only where each one ends. Checkpoints and history uploads copy the
//! file's bytes; the few messages a request needs are read back one by one.
//!
//! Memory was the alternative: the checkpoint file already holds the whole thread, and a
//! second copy on the heap grew with every step of a long session (BENCHMARKS.md). On
//! Unix the file is deleted as soon as it is created (`tempfile`), so nothing is left
//! behind however the process ends; on Windows it is deleted when closed, and a crash of
//! the machine can leave a `.tmp…` file. What a crash must not lose is in the checkpoint.
//! Writes are small (one message each) and reads come from the page cache; they run on
//! the runtime's thread like the other per-step work.

use std::fs::File;
use std::io;
use std::path::Path;
use std::sync::Arc;

/// Messages' stored JSON, joined with commas, in an unnamed file that only grows.
pub(crate) struct SpillFile {
    file: Arc<File>,
    /// Where each message ends. Message `i` starts one byte (its comma) after message
    /// `i - 1` ends; the first starts at 0.
    ends: Vec<u64>,
    /// Tests: appends fail, as on a full disk.
    #[cfg(test)]
    pub(crate) refuse_appends: bool,
}

impl SpillFile {
    /// An empty spill file in `dir`, created if it is missing.
    pub(crate) fn create(dir: &Path) -> io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        Ok(Self {
            file: Arc::new(tempfile::tempfile_in(dir)?),
            ends: Vec::new(),
            #[cfg(test)]
            refuse_appends: false,
        })
    }

    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    /// Appends one message. Bytes written by a failed append lie past the last end and are
    /// never read; the next append writes over them.
    pub(crate) fn append(&mut self, json: &str) -> io::Result<()> {
        #[cfg(test)]
        if self.refuse_appends {
            return Err(io::Error::other("no space left on the test's device"));
        }
        let end = self.ends.last().copied();
        let at = end.map_or(0, |end| end + 1);
        if let Some(end) = end {
            write_all_at(&self.file, b",", end)?;
        }
        write_all_at(&self.file, json.as_bytes(), at)?;
        self.ends.push(at + json.len() as u64);
        Ok(())
    }

    /// Message `index`'s stored JSON.
    pub(crate) fn read(&self, index: usize) -> io::Result<String> {
        let Some(&end) = self.ends.get(index) else {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("the thread has no message {index}"),
            ));
        };
        let start = match index.checked_sub(1) {
            Some(before) => self.ends.get(before).map_or(0, |end| end + 1),
            None => 0,
        };
        let mut bytes = vec![0; usize::try_from(end - start).unwrap_or(0)];
        read_exact_at(&self.file, &mut bytes, start)?;
        String::from_utf8(bytes).map_err(|error| io::Error::new(io::ErrorKind::InvalidData, error))
    }

    /// Every message so far, joined: a region that later appends never change.
    pub(crate) fn region(&self) -> FileRegion {
        FileRegion {
            file: Arc::clone(&self.file),
            len: self.ends.last().copied().unwrap_or(0),
        }
    }
}

/// The first `len` bytes of a file, shared: readable while the file keeps growing.
#[derive(Clone, Debug)]
pub struct FileRegion {
    file: Arc<File>,
    len: u64,
}

impl FileRegion {
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Reads from `offset` into `buf`, no further than the region's end; 0 at its end.
    pub fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let left = usize::try_from(self.len.saturating_sub(offset)).unwrap_or(usize::MAX);
        let want = buf.len().min(left);
        if want == 0 {
            return Ok(0);
        }
        let read = read_at(&self.file, &mut buf[..want], offset)?;
        if read == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the thread's spill file is shorter than the thread",
            ));
        }
        Ok(read)
    }
}

// Positional reads and writes: readers of a shared region and the appender never move a
// shared cursor. Elsewhere than Unix and Windows there are none, and the thread stays in
// memory.

#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, offset)
}

#[cfg(windows)]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(file, buf, offset)
}

#[cfg(not(any(unix, windows)))]
fn read_at(_: &File, _: &mut [u8], _: u64) -> io::Result<usize> {
    Err(io::ErrorKind::Unsupported.into())
}

fn read_exact_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
    while !buf.is_empty() {
        match read_at(file, buf, offset) {
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the thread's spill file is shorter than the thread",
                ));
            }
            Ok(n) => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(())
}

#[cfg(unix)]
fn write_all_at(file: &File, buf: &[u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, buf, offset)
}

#[cfg(windows)]
fn write_all_at(file: &File, mut buf: &[u8], mut offset: u64) -> io::Result<()> {
    while !buf.is_empty() {
        match std::os::windows::fs::FileExt::seek_write(file, buf, offset) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => {
                buf = &buf[n..];
                offset += n as u64;
            }
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(())
}

#[cfg(not(any(unix, windows)))]
fn write_all_at(_: &File, _: &[u8], _: u64) -> io::Result<()> {
    Err(io::ErrorKind::Unsupported.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_read_back_and_the_region_is_them_joined_with_commas() {
        let dir = tempfile::tempdir().unwrap();
        let mut spill = SpillFile::create(&dir.path().join("new")).unwrap();
        assert_eq!(spill.region().len(), 0);
        let messages = ["{\"a\":1}", "\"\u{1F600} two\"", "3"];
        for message in messages {
            spill.append(message).unwrap();
        }
        let before = spill.region();
        spill.append("[4]").unwrap();
        for (index, message) in messages.iter().enumerate() {
            assert_eq!(spill.read(index).unwrap(), *message);
        }
        assert_eq!(spill.read(3).unwrap(), "[4]");
        assert!(spill.read(4).is_err());
        let mut joined = [0; 64];
        let mut got = 0;
        while got < joined.len() {
            match before.read_at(&mut joined[got..], got as u64).unwrap() {
                0 => break,
                n => got += n,
            }
        }
        assert_eq!(
            String::from_utf8_lossy(&joined[..got]),
            messages.join(","),
            "a region taken earlier ends where it ended"
        );
        #[cfg(unix)]
        assert!(
            std::fs::read_dir(dir.path().join("new"))
                .unwrap()
                .next()
                .is_none(),
            "the file has no name"
        );
    }
}
