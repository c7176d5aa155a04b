//! A `multipart/form-data` body read as it arrives, so an upload of any size goes to its
//! file in pieces: the parser is fed chunks and hands back the parts' heads (their
//! filename) and content bytes, keeping only a delimiter's length of bytes between chunks.

/// What a chunk of the body held, in order.
#[derive(Debug, PartialEq)]
pub(super) enum Piece {
    /// A part begins; its `filename=` if it names one.
    Head(Option<String>),
    Data(Vec<u8>),
    /// The current part ended.
    End,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    Preamble,
    AfterDelimiter,
    Headers,
    Body,
    Done,
}

/// The largest head of a part; a body whose part heads grow past it is refused.
const MAX_HEAD_BYTES: usize = 16 * 1024;

pub(super) struct Parser {
    /// `\r\n--boundary`; the body is read as if it began with `\r\n`.
    delimiter: Vec<u8>,
    buffer: Vec<u8>,
    state: State,
}

impl Parser {
    pub(super) fn new(boundary: &str) -> Self {
        Self {
            delimiter: format!("\r\n--{boundary}").into_bytes(),
            buffer: b"\r\n".to_vec(),
            state: State::Preamble,
        }
    }

    /// Whether the closing delimiter was read.
    pub(super) fn done(&self) -> bool {
        self.state == State::Done
    }

    /// Feeds `chunk`; the pieces it completes are appended to `out`.
    pub(super) fn feed(&mut self, chunk: &[u8], out: &mut Vec<Piece>) -> Result<(), String> {
        if self.state == State::Done {
            return Ok(());
        }
        self.buffer.extend_from_slice(chunk);
        loop {
            match self.state {
                State::Preamble => match find(&self.buffer, &self.delimiter) {
                    Some(at) => {
                        self.buffer.drain(..at + self.delimiter.len());
                        self.state = State::AfterDelimiter;
                    }
                    None => {
                        self.keep_tail();
                        return Ok(());
                    }
                },
                State::AfterDelimiter => {
                    if self.buffer.len() < 2 {
                        return Ok(());
                    }
                    if self.buffer.starts_with(b"--") {
                        self.state = State::Done;
                        self.buffer.clear();
                        return Ok(());
                    }
                    match find(&self.buffer, b"\r\n") {
                        Some(at) => {
                            self.buffer.drain(..at + 2);
                            self.state = State::Headers;
                        }
                        None if self.buffer.len() > MAX_HEAD_BYTES => {
                            return Err("a multipart delimiter line is too long".to_owned());
                        }
                        None => return Ok(()),
                    }
                }
                State::Headers => match find(&self.buffer, b"\r\n\r\n") {
                    Some(at) => {
                        let head = String::from_utf8_lossy(&self.buffer[..at]).into_owned();
                        self.buffer.drain(..at + 4);
                        out.push(Piece::Head(filename_of(&head)));
                        self.state = State::Body;
                    }
                    // A part without header lines: its content starts at once.
                    None if self.buffer.starts_with(b"\r\n") => {
                        self.buffer.drain(..2);
                        out.push(Piece::Head(None));
                        self.state = State::Body;
                    }
                    None if self.buffer.len() > MAX_HEAD_BYTES => {
                        return Err(format!(
                            "a multipart part's head is longer than {MAX_HEAD_BYTES} bytes"
                        ));
                    }
                    None => return Ok(()),
                },
                State::Body => match find(&self.buffer, &self.delimiter) {
                    Some(at) => {
                        if at > 0 {
                            out.push(Piece::Data(self.buffer[..at].to_vec()));
                        }
                        out.push(Piece::End);
                        self.buffer.drain(..at + self.delimiter.len());
                        self.state = State::AfterDelimiter;
                    }
                    None => {
                        let keep = self.delimiter.len().saturating_sub(1);
                        if self.buffer.len() > keep {
                            let cut = self.buffer.len() - keep;
                            out.push(Piece::Data(self.buffer[..cut].to_vec()));
                            self.buffer.drain(..cut);
                        }
                        return Ok(());
                    }
                },
                State::Done => return Ok(()),
            }
        }
    }

    /// Outside a part only a possible start of the delimiter is worth keeping.
    fn keep_tail(&mut self) {
        let keep = self.delimiter.len().saturating_sub(1);
        if self.buffer.len() > keep {
            let cut = self.buffer.len() - keep;
            self.buffer.drain(..cut);
        }
    }
}

/// The `filename=` of a part's head, if it names a non-empty one.
fn filename_of(head: &str) -> Option<String> {
    head.split("\r\n")
        .filter(|line| {
            line.to_ascii_lowercase()
                .starts_with("content-disposition:")
        })
        .flat_map(|line| line.split(';'))
        .find_map(|field| {
            let value = field.trim().strip_prefix("filename=")?;
            let value = value.trim_matches('"');
            (!value.is_empty()).then(|| value.to_owned())
        })
}

/// The boundary of a `multipart/form-data` content type.
pub(super) fn boundary_of(content_type: &str) -> Option<String> {
    let lower = content_type.to_ascii_lowercase();
    if !lower.starts_with("multipart/form-data") {
        return None;
    }
    content_type.split(';').find_map(|part| {
        let part = part.trim();
        let (name, value) = part.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("boundary")
            .then(|| value.trim().trim_matches('"').to_owned())
    })
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || haystack.len() < needle.len() {
        return None;
    }
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_in_chunks(body: &[u8], size: usize) -> Vec<Piece> {
        let mut parser = Parser::new("XyZ");
        let mut out = Vec::new();
        for chunk in body.chunks(size) {
            parser.feed(chunk, &mut out).unwrap();
        }
        assert!(parser.done());
        // Adjacent data pieces joined, so every chunking compares equal.
        let mut joined: Vec<Piece> = Vec::new();
        for piece in out {
            match (joined.last_mut(), piece) {
                (Some(Piece::Data(bytes)), Piece::Data(more)) => bytes.extend(more),
                (_, piece) => joined.push(piece),
            }
        }
        joined
    }

    #[test]
    fn parts_arrive_whole_whatever_the_chunking() {
        let body = b"preamble\r\n--XyZ\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nignored\r\n--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\nline 1\r\n--Xy line 2\r\n--XyZ--\r\n";
        let expected = vec![
            Piece::Head(None),
            Piece::Data(b"ignored".to_vec()),
            Piece::End,
            Piece::Head(Some("a.txt".to_owned())),
            Piece::Data(b"line 1\r\n--Xy line 2".to_vec()),
            Piece::End,
        ];
        for size in [1, 2, 3, 7, 64, body.len()] {
            assert_eq!(parse_in_chunks(body, size), expected, "chunks of {size}");
        }
        assert_eq!(
            boundary_of("multipart/form-data; boundary=XyZ").as_deref(),
            Some("XyZ")
        );
        assert!(boundary_of("application/octet-stream").is_none());
    }
}
