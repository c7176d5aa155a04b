//! Newline-delimited framing with no practical line-length limit (a 10 MB prompt is one
//! line) but a configurable ceiling, so a runaway client cannot exhaust memory. A line over
//! the ceiling is skipped up to its newline and reported, and reading goes on.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Frame {
    Line(Vec<u8>),
    TooLong { bytes: usize },
    Eof,
}

pub(crate) struct LineReader<R> {
    reader: R,
    max_line_bytes: usize,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    pub(crate) fn new(reader: R, max_line_bytes: usize) -> Self {
        Self {
            reader,
            max_line_bytes,
        }
    }

    /// The next non-blank line, without its `\n` (or `\r\n`).
    pub(crate) async fn next_frame(&mut self) -> std::io::Result<Frame> {
        loop {
            let frame = self.read_line().await?;
            match &frame {
                Frame::Line(line) if line.iter().all(u8::is_ascii_whitespace) => continue,
                _ => return Ok(frame),
            }
        }
    }

    async fn read_line(&mut self) -> std::io::Result<Frame> {
        let mut line = Vec::new();
        let mut total = 0usize;
        let mut overflow = false;
        loop {
            let available = self.reader.fill_buf().await?;
            if available.is_empty() {
                // EOF: a last line without a newline still counts.
                return Ok(if overflow {
                    Frame::TooLong { bytes: total }
                } else if line.is_empty() {
                    Frame::Eof
                } else {
                    Frame::Line(line)
                });
            }
            let (chunk, found_newline) = match available.iter().position(|&b| b == b'\n') {
                Some(index) => (&available[..index], true),
                None => (available, false),
            };
            total += chunk.len();
            if !overflow && total > self.max_line_bytes {
                overflow = true;
                line = Vec::new();
            }
            if !overflow {
                line.extend_from_slice(chunk);
            }
            let consumed = chunk.len() + usize::from(found_newline);
            self.reader.consume(consumed);
            if found_newline {
                if overflow {
                    return Ok(Frame::TooLong { bytes: total });
                }
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return Ok(Frame::Line(line));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn frames(input: &[u8], max: usize) -> Vec<Frame> {
        let mut reader = LineReader::new(tokio::io::BufReader::with_capacity(4, input), max);
        let mut out = Vec::new();
        loop {
            let frame = reader.next_frame().await.unwrap();
            let end = frame == Frame::Eof;
            out.push(frame);
            if end {
                return out;
            }
        }
    }

    #[tokio::test]
    async fn splits_lines_skips_blanks_and_keeps_a_last_unterminated_line() {
        let got = frames(b"{\"a\":1}\r\n\n  \nabc\nlast", 100).await;
        assert_eq!(
            got,
            vec![
                Frame::Line(b"{\"a\":1}".to_vec()),
                Frame::Line(b"abc".to_vec()),
                Frame::Line(b"last".to_vec()),
                Frame::Eof
            ]
        );
    }

    #[tokio::test]
    async fn an_oversized_line_is_reported_and_reading_goes_on() {
        let got = frames(b"0123456789abcdef\nok\n", 8).await;
        assert_eq!(
            got,
            vec![
                Frame::TooLong { bytes: 16 },
                Frame::Line(b"ok".to_vec()),
                Frame::Eof
            ]
        );
    }

    #[tokio::test]
    async fn lines_longer_than_the_read_buffer_arrive_whole() {
        let long = "x".repeat(100_000);
        let input = format!("{long}\n");
        let got = frames(input.as_bytes(), usize::MAX).await;
        assert_eq!(got[0], Frame::Line(long.into_bytes()));
    }
}
