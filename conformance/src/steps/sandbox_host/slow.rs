//! Slow peers of the sandbox's HTTP surface (INTEROP.md §9): an upload that keeps moving,
//! one that stalls, and an event reader that stops reading while the replay buffer rolls
//! over. Raw connections, so the kit controls when each byte moves: the pauses of the slow
//! upload are the stimulus (the time between pieces), never a wait for the runtime.

use std::collections::BTreeSet;
use std::time::Duration;

use anyhow::Context;
use cucumber::{then, when};
use serde_json::Value;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpSocket, TcpStream};
use tokio::time::Instant;

use crate::driver::sandbox::{Frame, FrameReader};
use crate::steps::sandbox_host::attacks::connect;
use crate::steps::sandbox_host::{frame_id, sandbox_only, task_event_ids};
use crate::steps::support::StepResult;
use crate::steps::task::wait_task_end;
use crate::world::ConformanceWorld;

/// An HTTP answer read from a raw connection: status, head, body.
async fn read_answer(
    stream: &mut TcpStream,
    deadline: Instant,
) -> anyhow::Result<(u16, String, Vec<u8>)> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    let read = async {
        loop {
            if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&buffer[..end]).into_owned();
                let length = head.lines().find_map(|line| {
                    let (name, value) = line.split_once(':')?;
                    name.trim()
                        .eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse::<usize>().ok())?
                });
                if length.is_some_and(|length| buffer.len() >= end + 4 + length) {
                    break;
                }
            }
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => buffer.extend_from_slice(&chunk[..n]),
            }
        }
    };
    tokio::time::timeout_at(deadline, read)
        .await
        .map_err(|_| anyhow::anyhow!("no complete answer arrived in time"))?;
    let end = buffer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .with_context(|| {
            format!(
                "the connection ended without an answer: {:?}",
                String::from_utf8_lossy(&buffer)
            )
        })?;
    let head = String::from_utf8_lossy(&buffer[..end]).into_owned();
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .with_context(|| format!("the answer's status line is not HTTP: {head:?}"))?;
    Ok((status, head, buffer[end + 4..].to_vec()))
}

/// Writes an `/upload` request head for `path` declaring `length` bytes.
async fn upload_head(
    stream: &mut TcpStream,
    authority: &str,
    path: &str,
    length: usize,
) -> StepResult {
    stream
        .write_all(
            format!(
                "POST /upload?path={path} HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/octet-stream\r\nContent-Length: {length}\r\n\r\n"
            )
            .as_bytes(),
        )
        .await?;
    Ok(())
}

#[when(
    expr = "the client uploads {string} to the sandbox in {int} pieces of {int} bytes, one every {int} ms"
)]
async fn slow_upload(
    world: &mut ConformanceWorld,
    path: String,
    pieces: usize,
    size: usize,
    every_ms: u64,
) -> StepResult {
    sandbox_only(world)?;
    let (mut stream, authority) = connect(world).await?;
    upload_head(&mut stream, &authority, &path, pieces * size).await?;
    let mut pace = tokio::time::interval(Duration::from_millis(every_ms));
    for _ in 0..pieces {
        pace.tick().await;
        stream
            .write_all(&vec![b'x'; size])
            .await
            .context("the sandbox closed the upload while it was still moving")?;
    }
    let deadline = Instant::now() + world.timeout();
    let (status, _, body) = read_answer(&mut stream, deadline).await?;
    world.sandbox.answer = Some((status, String::new(), body));
    Ok(())
}

#[when(
    expr = "the client starts uploading {int} bytes as {string} to the sandbox and stops after {int}"
)]
async fn stalled_upload(
    world: &mut ConformanceWorld,
    length: usize,
    path: String,
    sent: usize,
) -> StepResult {
    sandbox_only(world)?;
    let (mut stream, authority) = connect(world).await?;
    upload_head(&mut stream, &authority, &path, length).await?;
    stream.write_all(&vec![b'x'; sent.min(length)]).await?;
    world.sandbox.held.push(stream);
    Ok(())
}

#[then(expr = "the upload is answered HTTP {int} within {int} seconds")]
async fn stalled_answer(world: &mut ConformanceWorld, status: u16, seconds: u64) -> StepResult {
    let mut stream = world.sandbox.held.pop().context("no upload is held open")?;
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let (got, _, body) = read_answer(&mut stream, deadline).await.with_context(|| {
        format!("the sandbox did not answer the stalled upload within {seconds} s")
    })?;
    check!(
        got == status,
        "the stalled upload was answered HTTP {got}, not {status}: {}",
        String::from_utf8_lossy(&body)
    );
    Ok(())
}

#[then(expr = "the sandbox's workspace holds {string} of {int} bytes")]
async fn workspace_size(world: &mut ConformanceWorld, name: String, size: u64) -> StepResult {
    let path = world.dirs()?.workspace.join(&name);
    let meta =
        std::fs::symlink_metadata(&path).with_context(|| format!("the workspace has no {name}"))?;
    check!(
        meta.is_file() && meta.len() == size,
        "the workspace's {name} holds {} bytes, not {size}",
        meta.len()
    );
    Ok(())
}

/// Opens `GET /events` on a connection whose receive buffer is `recv_bytes` (when given),
/// as HTTP/1.0 so the stream is the body as it is, ended by the close; the answer's head is
/// read, and what followed it returned.
async fn open_events(
    world: &ConformanceWorld,
    recv_bytes: Option<u32>,
    last_event_id: Option<u64>,
) -> anyhow::Result<(TcpStream, Vec<u8>)> {
    let (probe, authority) = connect(world).await?;
    let address = probe.peer_addr()?;
    drop(probe);
    let socket = if address.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    if let Some(bytes) = recv_bytes {
        // Before connecting, so the window is small from the handshake on: loopback's
        // autotuned buffers would otherwise take megabytes of events.
        socket.set_recv_buffer_size(bytes)?;
    }
    let mut stream = socket.connect(address).await?;
    let resume = last_event_id
        .map(|id| format!("Last-Event-ID: {id}\r\n"))
        .unwrap_or_default();
    stream
        .write_all(
            format!(
                "GET /events HTTP/1.0\r\nHost: {authority}\r\nAccept: text/event-stream\r\n{resume}\r\n"
            )
            .as_bytes(),
        )
        .await?;
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 1024];
    let head = async {
        while !buffer.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = stream.read(&mut chunk).await?;
            anyhow::ensure!(n > 0, "the sandbox closed GET /events before answering");
            buffer.extend_from_slice(&chunk[..n]);
        }
        anyhow::Ok(())
    };
    tokio::time::timeout(world.timeout(), head)
        .await
        .map_err(|_| anyhow::anyhow!("GET /events was not answered in time"))??;
    let end = buffer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .context("no answer head")?;
    let status = String::from_utf8_lossy(&buffer[..end]).into_owned();
    anyhow::ensure!(
        status.split(' ').nth(1) == Some("200"),
        "GET /events answered {}",
        status.lines().next().unwrap_or_default()
    );
    Ok((stream, buffer.split_off(end + 4)))
}

#[when(expr = "a reader with a {int} KiB receive buffer opens the event stream and stops reading")]
async fn stalled_reader(world: &mut ConformanceWorld, kib: u32) -> StepResult {
    sandbox_only(world)?;
    let opened = open_events(world, Some(kib * 1024), None).await?;
    world.sandbox.stalled_reader = Some(opened);
    Ok(())
}

/// What the stalled reader got once it read again, through the task's last event.
struct ReadAgain {
    frames: Vec<Frame>,
    /// Times the sandbox closed the stream before that event (the reader reconnected).
    closes: usize,
    /// The stream open at the end, and its parser.
    stream: TcpStream,
    parser: FrameReader,
}

/// Reads the stalled reader again until it has the task's last event, reconnecting with
/// `Last-Event-ID` whenever the sandbox closes its stream; with every event id the runtime
/// sent in this session (as the kit's own reader saw them).
async fn read_again(world: &mut ConformanceWorld) -> anyhow::Result<(ReadAgain, BTreeSet<u64>)> {
    wait_task_end(world).await?;
    let last = *task_event_ids(world)?
        .last()
        .context("the task has no events")?;
    let sent: BTreeSet<u64> = world
        .started_runtime()?
        .events()
        .into_iter()
        .filter_map(|e| e.params.get("eventId").and_then(Value::as_u64))
        .collect();
    let (mut stream, rest) = world
        .sandbox
        .stalled_reader
        .take()
        .context("no stalled reader in this scenario")?;
    let deadline = Instant::now() + world.timeout();
    let mut parser = FrameReader::default();
    let mut frames: Vec<Frame> = parser.push(&rest);
    let mut chunk = vec![0u8; 16 * 1024];
    let mut closes = 0;
    while !frames.iter().any(|f| frame_id(f) == Some(last)) {
        let read = tokio::time::timeout_at(deadline, stream.read(&mut chunk))
            .await
            .map_err(|_| {
                anyhow::anyhow!(
                    "the stalled reader did not reach the task's last event {last} in time"
                )
            })?;
        match read {
            Ok(n) if n > 0 => frames.extend(parser.push(&chunk[..n])),
            _ => {
                // The sandbox closed the stream: reconnect from the last event received.
                closes += 1;
                check!(closes <= 8, "the stream kept closing without progress");
                let resume = frames.iter().rev().find_map(frame_id);
                let (again, rest) = open_events(world, None, resume).await?;
                stream = again;
                parser = FrameReader::default();
                frames.extend(parser.push(&rest));
            }
        }
    }
    let read = ReadAgain {
        frames,
        closes,
        stream,
        parser,
    };
    Ok((read, sent))
}

/// Checks the events are in order and none of `sent` was skipped without a gap before it;
/// the number of gaps told after some event had been received.
fn in_order(frames: &[Frame], sent: &BTreeSet<u64>) -> anyhow::Result<usize> {
    let mut previous: Option<u64> = None;
    let mut gap_pending = false;
    let mut gaps_after_events = 0;
    for frame in frames {
        match frame.event.as_deref() {
            Some("gap") => {
                gap_pending = true;
                gaps_after_events += usize::from(previous.is_some());
            }
            Some("session_event") => {
                let id = frame_id(frame).context("a session_event frame without an id")?;
                if let Some(before) = previous {
                    check!(
                        id > before,
                        "event {id} came after event {before}: out of order or repeated"
                    );
                    let skipped: Vec<u64> = sent.range(before + 1..id).copied().collect();
                    check!(
                        skipped.is_empty() || gap_pending,
                        "the reader was not sent {} event(s) ({}..={}) and was not told of a gap before event {id}",
                        skipped.len(),
                        skipped.first().copied().unwrap_or_default(),
                        skipped.last().copied().unwrap_or_default()
                    );
                }
                previous = Some(id);
                gap_pending = false;
            }
            _ => {}
        }
    }
    Ok(gaps_after_events)
}

#[then(
    "the stalled reader, reading again, is told of the gap and then gets the later events in order"
)]
async fn stalled_reader_told(world: &mut ConformanceWorld) -> StepResult {
    let (read, sent) = read_again(world).await?;
    let gaps_after_events = in_order(&read.frames, &sent)?;
    check!(
        gaps_after_events > 0,
        "the reader that stopped reading was never told of a gap (events received: {}), although the replay buffer kept fewer events than it missed: the sandbox's buffers took every event, or the gap was not sent",
        read.frames
            .iter()
            .filter(|f| f.event.as_deref() == Some("session_event"))
            .count()
    );
    Ok(())
}

#[then(
    "the stalled reader, reading again, is dropped and, reconnecting from the last event it got, misses no event"
)]
async fn stalled_reader_dropped(world: &mut ConformanceWorld) -> StepResult {
    let (mut read, sent) = read_again(world).await?;
    if read.closes == 0 {
        // Not dropped while it caught up: it must be once it has what the ring held for it.
        let deadline = Instant::now() + world.timeout();
        let mut chunk = vec![0u8; 16 * 1024];
        loop {
            let got = tokio::time::timeout_at(deadline, read.stream.read(&mut chunk))
                .await
                .map_err(|_| {
                    anyhow::anyhow!(
                        "the reader that fell further behind the live events than the backlog (AGENT_RUNTIME_SANDBOX_READER_BACKLOG) was not dropped: its stream stayed open after it had read every event of the task"
                    )
                })?;
            match got {
                Ok(n) if n > 0 => read.frames.extend(read.parser.push(&chunk[..n])),
                _ => break,
            }
        }
    }
    let gaps = in_order(&read.frames, &sent)?;
    let told: Vec<String> = read
        .frames
        .iter()
        .filter(|f| f.event.as_deref() == Some("gap"))
        .map(|f| f.data.join("\n"))
        .collect();
    check!(
        gaps == 0,
        "the dropped reader was told of a gap, although the replay buffer still held every event it missed (reconnected {} time(s)): {told:?}",
        read.closes
    );
    Ok(())
}
