//! Tests of the local run store: JSON lines under a safe name, rotation and the size caps,
//! and what it leaves out under backlog.

use std::time::Duration;

use agent_protocol::events::{EventBody, SessionEvent, TextChunk};

use super::*;

/// A text chunk of a session whose id would climb out of the store's folder.
fn chunk(id: u64, text: &str) -> SessionEvent {
    SessionEvent {
        session_id: "sess/../1".into(),
        ..crate::testing::event(id, EventBody::TextChunk(TextChunk { text: text.into() }))
    }
}

fn limits(max_file_bytes: u64, max_total_bytes: u64) -> RunStoreLimits {
    RunStoreLimits {
        max_file_bytes,
        max_total_bytes,
        queue_bound: 100_000,
    }
}

/// Waits (bounded) until the writer has written everything queued.
fn drained(store: &RunStore) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while store.pending() > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the writer never drained"
        );
        std::thread::yield_now();
    }
}

fn files(dir: &Path) -> Vec<(String, u64)> {
    let mut out: Vec<(String, u64)> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| {
            (
                e.file_name().into_string().unwrap(),
                e.metadata().unwrap().len(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn events_are_appended_as_json_lines_under_a_safe_name() {
    let dir = tempfile::tempdir().unwrap();
    let store =
        RunStore::open(dir.path().to_owned(), limits(1 << 20, 1 << 30), "sess/../1").unwrap();
    for id in 1..=3 {
        assert_eq!(store.record(&chunk(id, "hello")), Admission::Queued);
    }
    drained(&store);
    let text = fs::read_to_string(dir.path().join("sess____1.jsonl")).unwrap();
    let ids: Vec<u64> = text
        .lines()
        .map(|line| serde_json::from_str::<SessionEvent>(line).unwrap().event_id)
        .collect();
    assert_eq!(ids, vec![1, 2, 3]);
}

#[test]
fn files_rotate_at_the_file_cap_and_the_directory_stays_under_the_total_cap() {
    let dir = tempfile::tempdir().unwrap();
    let store = RunStore::open(dir.path().to_owned(), limits(2_000, 7_000), "s1").unwrap();
    for id in 1..=400 {
        store.record(&chunk(id, &"y".repeat(50)));
    }
    drained(&store);
    let files = files(dir.path());
    assert!(files.len() >= 3, "rotated: {files:?}");
    assert!(files.iter().all(|(_, len)| *len <= 2_000), "{files:?}");
    let total: u64 = files.iter().map(|(_, len)| len).sum();
    assert!(total <= 7_000, "total {total}: {files:?}");
    assert!(files.iter().any(|(name, _)| name == "s1.jsonl"));
    // The newest events survive.
    let current = fs::read_to_string(dir.path().join("s1.jsonl")).unwrap();
    assert!(current.contains("\"eventId\":400"));
}

#[test]
fn under_backlog_text_chunks_are_left_out_summarised_and_warned_once() {
    let dir = tempfile::tempdir().unwrap();
    let bounds = RunStoreLimits {
        queue_bound: 4,
        ..limits(1 << 20, 1 << 30)
    };
    let store = RunStore::open(dir.path().to_owned(), bounds, "s2").unwrap();
    // Pretend the writer is behind: the queue looks half full.
    store.backlog.pending.fetch_add(2, Ordering::AcqRel);
    assert_eq!(store.record(&chunk(1, "a")), Admission::DroppedFirst);
    assert_eq!(store.record(&chunk(2, "b")), Admission::Dropped);
    let mut other = chunk(3, "c");
    other.body = EventBody::PolicyExpired(agent_protocol::events::Empty {});
    assert_eq!(
        store.record(&other),
        Admission::Queued,
        "only chunks give way first"
    );
    store.backlog.pending.fetch_sub(2, Ordering::AcqRel);
    let mut last = other.clone();
    last.event_id = 5;
    assert_eq!(store.record(&last), Admission::Queued);
    drained(&store);
    // The summary is written once the queue drains, after the event that drained it.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let text = loop {
        let text = fs::read_to_string(dir.path().join("s2.jsonl")).unwrap_or_default();
        if text.contains("events_left_out") || std::time::Instant::now() > deadline {
            break text;
        }
        std::thread::yield_now();
    };
    assert!(text.contains("\"textChunks\":2"), "{text}");
    assert!(
        !text.contains("\"eventId\":1,"),
        "left-out chunks are not written"
    );
    // The backlog cleared: the next drop warns again.
    store.backlog.pending.fetch_add(2, Ordering::AcqRel);
    assert_eq!(store.record(&chunk(4, "d")), Admission::DroppedFirst);
    store.backlog.pending.fetch_sub(2, Ordering::AcqRel);
}
