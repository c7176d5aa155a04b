//! The standard streams as the stdio transport's reader and writer.
//!
//! A pipe (a FIFO) or a socket (what libuv-based apps such as Electron create) is driven
//! non-blocking by the runtime's own thread. tokio's stdio hands every read and every
//! write to a blocking-pool thread instead: a thread wake-up per line, several per step
//! (text_chunk p50 0.10 → 0.06 ms; BENCHMARKS.md). A terminal or a file keeps tokio's
//! stdio, and so does a stdout that is also stderr (`2>&1`): O_NONBLOCK belongs to the
//! open file description, which the log writer would then share.

use tokio::io::{AsyncRead, AsyncWrite};

pub(crate) type Reader = Box<dyn AsyncRead + Unpin>;
pub(crate) type Writer = Box<dyn AsyncWrite + Unpin + Send>;

/// Puts stdin and stdout back in blocking mode when dropped (after the transport ends).
/// Their descriptions are shared with whoever gave them to the runtime — a wrapper script,
/// a shell pipeline — which must not find them non-blocking afterwards.
#[must_use]
pub(crate) struct Restore {
    // Elsewhere tokio's stdio is kept as it is, so there is nothing to put back.
    #[cfg(unix)]
    stdin: bool,
    #[cfg(unix)]
    stdout: bool,
}

#[cfg(unix)]
pub(crate) fn streams() -> (Reader, Writer, Restore) {
    use std::os::fd::AsFd;
    use tokio::net::unix::pipe;

    let owned = |fd: std::os::fd::BorrowedFd<'_>| fd.try_clone_to_owned().ok();
    let kind = |fd: &std::os::fd::OwnedFd| {
        use rustix::fs::FileType;
        let stat = rustix::fs::fstat(fd).ok()?;
        let kind = FileType::from_raw_mode(stat.st_mode);
        Some((
            kind == FileType::Fifo,
            kind == FileType::Socket,
            (stat.st_dev, stat.st_ino),
        ))
    };
    let socket = |fd: std::os::fd::OwnedFd| {
        let stream = std::os::unix::net::UnixStream::from(fd);
        stream.set_nonblocking(true).ok()?;
        tokio::net::UnixStream::from_std(stream).ok()
    };

    let mut restore = Restore {
        stdin: false,
        stdout: false,
    };
    let stdin = owned(std::io::stdin().as_fd());
    let reader = stdin.and_then(|fd| -> Option<Reader> {
        match kind(&fd)? {
            (true, _, _) => Some(Box::new(
                pipe::Receiver::from_file(std::fs::File::from(fd)).ok()?,
            )),
            (_, true, _) => Some(Box::new(socket(fd)?)),
            _ => None,
        }
    });
    restore.stdin = reader.is_some();
    let stderr = owned(std::io::stderr().as_fd())
        .and_then(|fd| kind(&fd))
        .map(|k| k.2);
    let stdout = owned(std::io::stdout().as_fd());
    let writer = stdout.and_then(|fd| -> Option<Writer> {
        match kind(&fd)? {
            (_, _, identity) if Some(identity) == stderr => None,
            (true, _, _) => Some(Box::new(
                pipe::Sender::from_file(std::fs::File::from(fd)).ok()?,
            )),
            (_, true, _) => Some(Box::new(socket(fd)?)),
            _ => None,
        }
    });
    restore.stdout = writer.is_some();
    (
        reader.unwrap_or_else(|| Box::new(tokio::io::stdin())),
        writer.unwrap_or_else(|| Box::new(tokio::io::stdout())),
        restore,
    )
}

#[cfg(not(unix))]
pub(crate) fn streams() -> (Reader, Writer, Restore) {
    (
        Box::new(tokio::io::stdin()),
        Box::new(tokio::io::stdout()),
        Restore {},
    )
}

impl Drop for Restore {
    fn drop(&mut self) {
        #[cfg(unix)]
        {
            use rustix::fs::{OFlags, fcntl_getfl, fcntl_setfl};
            use std::os::fd::AsFd;
            let blocking = |fd: std::os::fd::BorrowedFd<'_>| {
                if let Ok(flags) = fcntl_getfl(fd) {
                    let _ = fcntl_setfl(fd, flags.difference(OFlags::NONBLOCK));
                }
            };
            if self.stdin {
                blocking(std::io::stdin().as_fd());
            }
            if self.stdout {
                blocking(std::io::stdout().as_fd());
            }
        }
    }
}
