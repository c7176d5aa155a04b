//! A JSON document held as pieces shared with their owner — a head, a list of items and a
//! tail, the items written between the head and the tail with commas — and sent without
//! being joined into one buffer. The session history and the checkpoint are the thread's
//! stored JSON (`Thread::stored`) between the fields of a request or of the checkpoint;
//! joining them would cost a whole thread's worth of memory at the end of every task.

use std::io::Read;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};

use crate::thread::spill::FileRegion;

/// How much of the document one body chunk carries: few enough writes, little memory.
/// hyper queues up to 16 chunks of a streamed body before it writes them (one `writev`),
/// so this is a sixteenth of what an upload holds at once.
const CHUNK: usize = 4 * 1024;

/// The items of a document: a file region holding the first of them already joined with
/// commas (the thread's spill file), then each of the rest as its own JSON.
#[derive(Clone, Debug)]
pub struct Items {
    joined: Option<FileRegion>,
    each: Arc<[Arc<str>]>,
}

impl Items {
    pub fn new(joined: Option<FileRegion>, each: Arc<[Arc<str>]>) -> Self {
        Self {
            joined: joined.filter(|region| !region.is_empty()),
            each,
        }
    }

    /// Tests: the file region, when there is one.
    #[cfg(test)]
    pub fn joined(&self) -> Option<&FileRegion> {
        self.joined.as_ref()
    }

    /// Tests: the items held on their own.
    #[cfg(test)]
    pub fn each(&self) -> &[Arc<str>] {
        &self.each
    }

    fn len(&self) -> usize {
        let joined = self.joined.as_ref().map_or(0, |region| {
            usize::try_from(region.len()).unwrap_or(usize::MAX)
        });
        let each: usize = self.each.iter().map(|item| item.len()).sum();
        let parts = self.each.len() + usize::from(self.joined.is_some());
        joined
            .saturating_add(each)
            .saturating_add(parts.saturating_sub(1))
    }
}

impl From<Arc<[Arc<str>]>> for Items {
    fn from(each: Arc<[Arc<str>]>) -> Self {
        Self::new(None, each)
    }
}

#[derive(Clone)]
pub(crate) struct JsonPieces {
    head: Bytes,
    items: Items,
    tail: Bytes,
}

/// One stretch of the document: bytes in memory, or the region of a file.
enum Segment<'a> {
    Bytes(&'a [u8]),
    Region(&'a FileRegion),
}

impl JsonPieces {
    /// `head` and `tail` are what comes before the first item and after the last (for an
    /// array `…[` and `]…`).
    pub(crate) fn new(
        head: impl Into<Bytes>,
        items: impl Into<Items>,
        tail: impl Into<Bytes>,
    ) -> Self {
        Self {
            head: head.into(),
            items: items.into(),
            tail: tail.into(),
        }
    }

    /// `document` split where `slot` is first found, the items going between the brackets
    /// of the slot's `[]`. A slot such as `"messages":[]` is only ever a key (a quote inside
    /// a string value is escaped); one with its neighbours, such as
    /// `,"thread":[],"sessionTokensUsed":`, picks one of several same-named keys. `None`
    /// when the slot (or its `[]`) is not there.
    pub(crate) fn around(document: &str, slot: &str, items: impl Into<Items>) -> Option<Self> {
        let at = document.find(slot)? + slot.find("[]")? + 1;
        let (head, tail) = document.split_at_checked(at)?;
        Some(Self::new(head.to_owned(), items, tail.to_owned()))
    }

    /// The same document with the exact-value backstop applied to its head and tail (the
    /// items are the owner's to keep clean).
    pub(crate) fn cleaned(self, redactor: &crate::redact::Redactor) -> Self {
        let clean = |part: Bytes| match redactor.redact_values(&String::from_utf8_lossy(&part)) {
            std::borrow::Cow::Owned(clean) => Bytes::from(clean),
            std::borrow::Cow::Borrowed(_) => part,
        };
        Self {
            head: clean(self.head),
            items: self.items,
            tail: clean(self.tail),
        }
    }

    /// Bytes of the whole document.
    pub(crate) fn len(&self) -> usize {
        self.head.len() + self.items.len() + self.tail.len()
    }

    /// The document in chunks of at most [`CHUNK`] bytes, made one at a time. A chunk is
    /// an error when the file holding the items cannot be read.
    pub(crate) fn chunks(&self) -> Chunks {
        Chunks {
            reader: self.reader(),
        }
    }

    /// Writes the document piece by piece (a file's buffered writer copies them once).
    pub(crate) fn write_to(&self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        std::io::copy(&mut self.reader(), out).map(drop)
    }

    /// The document as one buffer.
    #[cfg(test)]
    pub(crate) fn to_vec(&self) -> std::io::Result<Vec<u8>> {
        let mut whole = Vec::with_capacity(self.len());
        self.write_to(&mut whole)?;
        Ok(whole)
    }

    /// The document, read from its start.
    pub(crate) fn reader(&self) -> Reader {
        Reader {
            pieces: self.clone(),
            segment: 0,
            offset: 0,
        }
    }

    /// Segment `k` of the sequence head, the joined region (when there is one), then for
    /// each item its separator (a comma, but before the very first item) and the item,
    /// and the tail.
    fn segment(&self, k: usize) -> Option<Segment<'_>> {
        let Some(mut k) = k.checked_sub(1) else {
            return Some(Segment::Bytes(&self.head));
        };
        let joined = self.items.joined.as_ref();
        if let Some(region) = joined {
            let Some(after) = k.checked_sub(1) else {
                return Some(Segment::Region(region));
            };
            k = after;
        }
        let each = &self.items.each;
        match (k / 2, k % 2) {
            (0, 0) if joined.is_none() && !each.is_empty() => Some(Segment::Bytes(b"")),
            (i, 0) if i < each.len() => Some(Segment::Bytes(b",")),
            (i, _) if i < each.len() => each.get(i).map(|item| Segment::Bytes(item.as_bytes())),
            (i, 0) if i == each.len() => Some(Segment::Bytes(&self.tail)),
            _ => None,
        }
    }
}

/// Reads a [`JsonPieces`] document from its start.
pub(crate) struct Reader {
    pieces: JsonPieces,
    segment: usize,
    offset: u64,
}

impl Read for Reader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            let read = match self.pieces.segment(self.segment) {
                None => return Ok(0),
                Some(Segment::Bytes(bytes)) => {
                    let start = usize::try_from(self.offset).unwrap_or(usize::MAX);
                    let rest = bytes.get(start..).unwrap_or_default();
                    let take = rest.len().min(buf.len());
                    buf[..take].copy_from_slice(&rest[..take]);
                    take
                }
                Some(Segment::Region(region)) => region.read_at(buf, self.offset)?,
            };
            if read > 0 {
                self.offset += read as u64;
                return Ok(read);
            }
            self.segment += 1;
            self.offset = 0;
        }
    }
}

pub(crate) struct Chunks {
    reader: Reader,
}

impl Iterator for Chunks {
    type Item = std::io::Result<Bytes>;

    fn next(&mut self) -> Option<std::io::Result<Bytes>> {
        let mut chunk = BytesMut::zeroed(CHUNK);
        let mut filled = 0;
        while filled < CHUNK {
            match self.reader.read(&mut chunk[filled..]) {
                Ok(0) => break,
                Ok(read) => filled += read,
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(error) => return Some(Err(error)),
            }
        }
        chunk.truncate(filled);
        (filled > 0).then(|| Ok(chunk.freeze()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(texts: &[&str]) -> Arc<[Arc<str>]> {
        texts.iter().map(|text| Arc::from(*text)).collect()
    }

    #[test]
    fn the_document_is_head_items_with_commas_and_tail() {
        for (texts, expected) in [
            (&[][..], "{\"a\":[]}"),
            (&["1"][..], "{\"a\":[1]}"),
            (&["1", "{\"b\":2}", "3"][..], "{\"a\":[1,{\"b\":2},3]}"),
        ] {
            let Some(pieces) = JsonPieces::around("{\"a\":[]}", "\"a\":[]", items(texts)) else {
                panic!("the slot is there");
            };
            assert_eq!(String::from_utf8_lossy(&pieces.to_vec().unwrap()), expected);
            assert_eq!(pieces.len(), expected.len());
        }
        assert!(JsonPieces::around("{\"b\":[]}", "\"a\":[]", items(&[])).is_none());
    }

    #[test]
    fn cleaning_replaces_credentials_in_head_and_tail_and_leaves_items_alone() {
        let redactor =
            crate::redact::Redactor::with_defaults().with_values(["hunter2-secret".to_owned()]);
        let pieces = JsonPieces::new(
            "{\"a\":\"hunter2-secret\",\"m\":[",
            items(&["\"kept as the owner left it\""]),
            "],\"z\":\"hunter2-secret\"}",
        )
        .cleaned(&redactor);
        let text = String::from_utf8(pieces.to_vec().unwrap()).unwrap();
        assert!(!text.contains("hunter2-secret"), "{text}");
        assert!(
            text.contains("\"m\":[\"kept as the owner left it\"]"),
            "{text}"
        );
        assert!(
            serde_json::from_str::<serde_json::Value>(&text).is_ok(),
            "{text}"
        );
        assert_eq!(pieces.len(), text.len());
    }

    #[test]
    fn a_joined_region_then_items_read_as_one_document_in_bounded_chunks() {
        let dir = tempfile::tempdir().unwrap();
        let mut spill = crate::thread::spill::SpillFile::create(dir.path()).unwrap();
        let big = format!("\"{}\"", "y".repeat(2 * CHUNK + 5));
        for text in ["\"a\"", big.as_str(), "1"] {
            spill.append(text).unwrap();
        }
        let expected = format!("{{\"m\":[\"a\",{big},1,2,{{}}]}}");
        let pieces = JsonPieces::new(
            "{\"m\":[",
            Items::new(Some(spill.region()), items(&["2", "{}"])),
            "]}",
        );
        let chunks: Vec<Bytes> = pieces.chunks().map(Result::unwrap).collect();
        assert!(
            chunks
                .iter()
                .all(|chunk| !chunk.is_empty() && chunk.len() <= CHUNK)
        );
        let joined = chunks.concat();
        assert_eq!(String::from_utf8_lossy(&joined), expected);
        assert_eq!(joined.len(), pieces.len());
        // A region alone, and an empty one that is no region at all.
        let alone = JsonPieces::new("[", Items::new(Some(spill.region()), items(&[])), "]");
        assert_eq!(alone.to_vec().unwrap().len(), alone.len());
        let empty = crate::thread::spill::SpillFile::create(dir.path()).unwrap();
        let none = JsonPieces::new("[", Items::new(Some(empty.region()), items(&["7"])), "]");
        assert_eq!(none.to_vec().unwrap(), b"[7]");
    }

    #[test]
    fn chunks_are_bounded_and_join_to_the_document() {
        let big = "x".repeat(CHUNK + 17);
        let texts = ["1", big.as_str(), "22", big.as_str(), "333"];
        let pieces = JsonPieces::new("[", items(&texts), "]");
        let chunks: Vec<Bytes> = pieces.chunks().map(Result::unwrap).collect();
        assert!(
            chunks
                .iter()
                .all(|chunk| !chunk.is_empty() && chunk.len() <= CHUNK)
        );
        assert!(chunks.len() >= 3, "{} chunks", chunks.len());
        let joined: Vec<u8> = chunks.concat();
        assert_eq!(joined, format!("[{}]", texts.join(",")).into_bytes());
        assert_eq!(joined.len(), pieces.len());
    }
}
