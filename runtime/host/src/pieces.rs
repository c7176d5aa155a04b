//! A JSON document held as pieces shared with their owner — a head, a list of items and a
//! tail, the items written between the head and the tail with commas — and sent without
//! being joined into one buffer. The session history is the thread's stored JSON
//! (`Thread::stored`) between the upload request's fields; joining it was a whole
//! thread's worth of memory, at the end of every task.

use std::sync::Arc;

use bytes::{Bytes, BytesMut};

/// How much of the document one body chunk carries: few enough writes, little memory.
const CHUNK: usize = 16 * 1024;

#[derive(Clone)]
pub struct JsonPieces {
    head: Bytes,
    items: Arc<[Arc<str>]>,
    tail: Bytes,
}

impl JsonPieces {
    /// `head` and `tail` are what comes before the first item and after the last (for an
    /// array `…[` and `]…`).
    pub fn new(head: impl Into<Bytes>, items: Arc<[Arc<str>]>, tail: impl Into<Bytes>) -> Self {
        Self {
            head: head.into(),
            items,
            tail: tail.into(),
        }
    }

    /// `document` split where `slot` is first found, the items going between the brackets
    /// of the slot's `[]`. A slot such as `"messages":[]` is only ever a key (a quote inside
    /// a string value is escaped); one with its neighbours, such as
    /// `,"thread":[],"sessionTokensUsed":`, picks one of several same-named keys. `None`
    /// when the slot (or its `[]`) is not there.
    pub fn around(document: &str, slot: &str, items: Arc<[Arc<str>]>) -> Option<Self> {
        let at = document.find(slot)? + slot.find("[]")? + 1;
        let (head, tail) = document.split_at_checked(at)?;
        Some(Self::new(head.to_owned(), items, tail.to_owned()))
    }

    /// The same document with the exact-value backstop applied to its head and tail (the
    /// items are the owner's to keep clean).
    pub fn cleaned(self, redactor: &crate::redact::Redactor) -> Self {
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
    pub fn len(&self) -> usize {
        let items: usize = self.items.iter().map(|item| item.len()).sum();
        self.head.len() + items + self.items.len().saturating_sub(1) + self.tail.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The document in chunks of at most [`CHUNK`] bytes, made one at a time.
    pub fn chunks(&self) -> Chunks {
        Chunks {
            pieces: self.clone(),
            piece: 0,
            offset: 0,
        }
    }

    /// Writes the document piece by piece (a file's buffered writer copies them once).
    pub fn write_to(&self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        let mut k = 0;
        while let Some(piece) = self.piece(k) {
            out.write_all(piece)?;
            k += 1;
        }
        Ok(())
    }

    /// The document as one buffer (tests and small documents).
    pub fn to_vec(&self) -> Vec<u8> {
        let mut whole = Vec::with_capacity(self.len());
        // Writing into a Vec cannot fail.
        let _ = self.write_to(&mut whole);
        whole
    }

    /// Piece `k` of the sequence head, item 0, ",", item 1, …, item n−1, tail.
    fn piece(&self, k: usize) -> Option<&[u8]> {
        let between = (2 * self.items.len()).saturating_sub(1);
        match k {
            0 => Some(&self.head),
            k if k <= between && k % 2 == 1 => self.items.get(k / 2).map(|item| item.as_bytes()),
            k if k <= between => Some(b","),
            k if k == between + 1 => Some(&self.tail),
            _ => None,
        }
    }
}

pub struct Chunks {
    pieces: JsonPieces,
    piece: usize,
    offset: usize,
}

impl Iterator for Chunks {
    type Item = Bytes;

    fn next(&mut self) -> Option<Bytes> {
        let mut chunk = BytesMut::new();
        while let Some(piece) = self.pieces.piece(self.piece) {
            let rest = piece.get(self.offset..).unwrap_or_default();
            let take = rest.len().min(CHUNK - chunk.len());
            if chunk.is_empty() {
                chunk.reserve(CHUNK);
            }
            chunk.extend_from_slice(&rest[..take]);
            self.offset += take;
            if self.offset >= piece.len() {
                self.piece += 1;
                self.offset = 0;
            }
            if chunk.len() == CHUNK {
                break;
            }
        }
        (!chunk.is_empty()).then(|| chunk.freeze())
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
            assert_eq!(String::from_utf8_lossy(&pieces.to_vec()), expected);
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
        let text = String::from_utf8(pieces.to_vec()).unwrap();
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
    fn chunks_are_bounded_and_join_to_the_document() {
        let big = "x".repeat(CHUNK + 17);
        let texts = ["1", big.as_str(), "22", big.as_str(), "333"];
        let pieces = JsonPieces::new("[", items(&texts), "]");
        let chunks: Vec<Bytes> = pieces.chunks().collect();
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
