//! The workspace folder's files over HTTP: `GET /files` (`{files, totalFiles,
//! totalSize}`, `?archive=true` for a zip of them all), `GET /files/{path}` (the bytes) and
//! `POST /upload?path=P` (a raw body, or a `multipart/form-data` body whose first file part
//! is taken; the part's filename when `path` is absent).
//!
//! Every file is opened beneath the workspace folder by handle (`agent-beneath`): a link
//! the model planted that leads out is refused on read and replaced, never followed, on
//! write. Bodies stream both ways, so memory stays flat whatever the file's size; an upload
//! past the limit is answered 413.

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use agent_beneath::write::NewFile;
use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde_json::json;

use super::multipart::{Parser, Piece, boundary_of};
use super::zip::stream_archive;
use super::{AppState, SandboxLimits, json_body};
use crate::workspace_files::{self, describe, is_escape, relative};

/// A part without a filename is kept in memory up to this size, in case no part names one.
const MAX_FIELD_BYTES: usize = 64 * 1024;

fn problem(status: StatusCode, message: String) -> Response {
    let code = match status {
        StatusCode::NOT_FOUND => "FILE_NOT_FOUND",
        StatusCode::FORBIDDEN => "PATH_OUTSIDE_WORKSPACE",
        StatusCode::PAYLOAD_TOO_LARGE => "PAYLOAD_TOO_LARGE",
        StatusCode::REQUEST_TIMEOUT => "REQUEST_TIMEOUT",
        _ => "INVALID_REQUEST",
    };
    json_body(
        status,
        json!({ "code": code, "message": message }).to_string(),
    )
}

/// The answer to a failed open or write of `path`.
fn io_problem(path: &str, error: &std::io::Error) -> Response {
    let status = if is_escape(error) {
        StatusCode::FORBIDDEN
    } else if error.kind() == std::io::ErrorKind::NotFound {
        StatusCode::NOT_FOUND
    } else {
        StatusCode::INTERNAL_SERVER_ERROR
    };
    problem(status, format!("{}.", describe(path, error)))
}

fn not_relative(path: &str) -> Response {
    problem(
        StatusCode::BAD_REQUEST,
        format!("\"{path}\" is not a relative path inside the workspace."),
    )
}

pub(super) async fn list(
    State(state): State<Arc<AppState>>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let root = state.workspace_dir.clone();
    let archive_wanted = query
        .get("archive")
        .is_some_and(|value| matches!(value.as_str(), "true" | "1"));
    let listed = {
        let root = root.clone();
        tokio::task::spawn_blocking(move || workspace_files::list(&root)).await
    };
    let files = match listed {
        Ok(Ok(files)) => files,
        Ok(Err(error)) => {
            return problem(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("The workspace folder could not be read: {}.", error.kind()),
            );
        }
        Err(error) => {
            return problem(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("Listing the workspace folder failed: {error}."),
            );
        }
    };
    if !archive_wanted {
        let total: u64 = files.iter().map(|file| file.size).sum();
        return json_body(
            StatusCode::OK,
            json!({ "files": files, "totalFiles": files.len(), "totalSize": total }).to_string(),
        );
    }
    (
        [
            (header::CONTENT_TYPE, "application/zip"),
            (
                header::CONTENT_DISPOSITION,
                "attachment; filename=\"workspace.zip\"",
            ),
        ],
        Body::from_stream(stream_archive(root, files)),
    )
        .into_response()
}

pub(super) async fn download(
    State(state): State<Arc<AppState>>,
    Path(path): Path<String>,
) -> Response {
    let Some(rel) = relative(&path) else {
        return not_relative(&path);
    };
    let root = state.workspace_dir.clone();
    let opened = tokio::task::spawn_blocking(move || workspace_files::open(&root, &rel)).await;
    let (file, len) = match opened {
        Ok(Ok(opened)) => opened,
        Ok(Err(error)) => return io_problem(&path, &error),
        Err(error) => {
            return problem(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("Opening \"{path}\" failed: {error}."),
            );
        }
    };
    let name = path.rsplit('/').next().unwrap_or(&path).replace('"', "");
    let stream =
        tokio_util::io::ReaderStream::with_capacity(tokio::fs::File::from_std(file), 64 * 1024);
    (
        [
            (header::CONTENT_TYPE, "application/octet-stream".to_owned()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{name}\""),
            ),
            (header::CONTENT_LENGTH, len.to_string()),
        ],
        Body::from_stream(stream),
    )
        .into_response()
}

/// Where an upload's bytes go: a file being written beneath the workspace, moved in and out
/// of the blocking pool chunk by chunk.
struct Target {
    path: String,
    file: NewFile,
    written: u64,
}

impl Target {
    async fn open(root: PathBuf, path: String) -> Result<Self, Response> {
        let Some(rel) = relative(&path) else {
            return Err(not_relative(&path));
        };
        match tokio::task::spawn_blocking(move || workspace_files::create(&root, &rel)).await {
            Ok(Ok(file)) => Ok(Self {
                path,
                file,
                written: 0,
            }),
            Ok(Err(error)) => Err(io_problem(&path, &error)),
            Err(error) => Err(problem(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("Writing \"{path}\" failed: {error}."),
            )),
        }
    }

    async fn write(self, bytes: Vec<u8>) -> Result<Self, Response> {
        let path = self.path.clone();
        let written = tokio::task::spawn_blocking(move || {
            let mut target = self;
            target.file.write_all(&bytes).map(|()| {
                target.written += bytes.len() as u64;
                target
            })
        })
        .await;
        match written {
            Ok(Ok(target)) => Ok(target),
            Ok(Err(error)) => Err(io_problem(&path, &error)),
            Err(error) => Err(problem(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("Writing \"{path}\" failed: {error}."),
            )),
        }
    }

    async fn commit(self) -> Response {
        let Target {
            path,
            file,
            written,
        } = self;
        match tokio::task::spawn_blocking(move || file.commit()).await {
            Ok(Ok(())) => json_body(
                StatusCode::CREATED,
                json!({ "path": path, "size": written }).to_string(),
            ),
            Ok(Err(error)) => io_problem(&path, &error),
            Err(error) => problem(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("Writing \"{path}\" failed: {error}."),
            ),
        }
    }
}

/// Which part of a multipart body is being read.
enum Part {
    /// The file part, going to its target.
    File,
    /// The first part, kept in case no part names a file.
    Field,
    Skipped,
}

/// A multipart upload across the body's chunks: the part being read, and the first part
/// kept (up to [`MAX_FIELD_BYTES`]) in case no part names a file.
struct Multipart {
    parser: Parser,
    part: Part,
    parts_seen: usize,
    field: Option<Vec<u8>>,
}

impl Multipart {
    fn new(parser: Parser) -> Self {
        Self {
            parser,
            part: Part::Skipped,
            parts_seen: 0,
            field: None,
        }
    }

    /// Reads `chunk`, opening the target when a part names a file and writing the file
    /// part's bytes to it.
    async fn feed(
        &mut self,
        chunk: &[u8],
        target: &mut Option<Target>,
        destination: &Destination<'_>,
    ) -> Result<(), Response> {
        let mut pieces = Vec::new();
        if let Err(message) = self.parser.feed(chunk, &mut pieces) {
            return Err(problem(
                StatusCode::BAD_REQUEST,
                format!("The upload: {message}."),
            ));
        }
        for piece in pieces {
            match piece {
                Piece::Head(filename) => {
                    self.parts_seen += 1;
                    self.part = match filename {
                        Some(filename) if target.is_none() => {
                            *target = Some(destination.open(Some(filename)).await?);
                            self.field = None;
                            Part::File
                        }
                        None if self.parts_seen == 1 => {
                            self.field = Some(Vec::new());
                            Part::Field
                        }
                        _ => Part::Skipped,
                    };
                }
                Piece::Data(bytes) => match self.part {
                    Part::File => write_on(target, bytes).await?,
                    Part::Field => {
                        let keep = self
                            .field
                            .as_ref()
                            .is_some_and(|kept| kept.len() + bytes.len() <= MAX_FIELD_BYTES);
                        match self.field.as_mut() {
                            Some(kept) if keep => kept.extend_from_slice(&bytes),
                            _ => self.field = None,
                        }
                    }
                    Part::Skipped => {}
                },
                // The file part is complete; the rest of the body is not needed.
                Piece::End if matches!(self.part, Part::File) => self.part = Part::Skipped,
                Piece::End => {}
            }
        }
        Ok(())
    }

    /// At the body's end: the target, opened for the first part under `?path=` when no part
    /// named a file.
    async fn finish(
        mut self,
        target: Option<Target>,
        destination: &Destination<'_>,
    ) -> Result<Option<Target>, Response> {
        if target.is_none() {
            let (Some(content), Some(_)) = (self.field.take(), destination.path) else {
                return Err(problem(
                    StatusCode::BAD_REQUEST,
                    "The multipart upload holds no file part.".to_owned(),
                ));
            };
            let open = destination.open(None).await?;
            return Ok(Some(open.write(content).await?));
        }
        if !self.parser.done() && matches!(self.part, Part::File) {
            return Err(problem(
                StatusCode::BAD_REQUEST,
                "The multipart upload ended inside its file part.".to_owned(),
            ));
        }
        Ok(target)
    }
}

/// Where an upload goes: `?path=` under the workspace, or else the file part's name.
struct Destination<'a> {
    root: &'a std::path::Path,
    path: Option<&'a String>,
}

impl Destination<'_> {
    async fn open(&self, filename: Option<String>) -> Result<Target, Response> {
        let path = match (self.path, filename) {
            (Some(path), _) => path.clone(),
            (None, Some(filename)) => filename,
            (None, None) => {
                return Err(problem(
                    StatusCode::BAD_REQUEST,
                    "Name the file to write with ?path=relative/path.".to_owned(),
                ));
            }
        };
        Target::open(self.root.to_path_buf(), path).await
    }
}

/// Writes `bytes` on to the open target, if there is one.
async fn write_on(target: &mut Option<Target>, bytes: Vec<u8>) -> Result<(), Response> {
    if let Some(open) = target.take() {
        *target = Some(open.write(bytes).await?);
    }
    Ok(())
}

/// The body's next chunk (`None` at its end), bounded by the body timeout.
async fn next_chunk(
    stream: &mut axum::body::BodyDataStream,
    limits: &SandboxLimits,
) -> Result<Option<Bytes>, Response> {
    match tokio::time::timeout(limits.body_timeout, stream.next()).await {
        Err(_) => Err(problem(
            StatusCode::REQUEST_TIMEOUT,
            format!(
                "The upload's body stalled for {} s (AGENT_RUNTIME_SANDBOX_BODY_TIMEOUT_SECONDS).",
                limits.body_timeout.as_secs_f64()
            ),
        )),
        Ok(None) => Ok(None),
        Ok(Some(Ok(chunk))) => Ok(Some(chunk)),
        Ok(Some(Err(error))) => Err(problem(
            StatusCode::BAD_REQUEST,
            format!("The upload's body could not be read: {error}."),
        )),
    }
}

pub(super) async fn upload(
    State(state): State<Arc<AppState>>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    match receive(&state, &query, &headers, body).await {
        Ok(Some(open)) => open.commit().await,
        Ok(None) => problem(
            StatusCode::BAD_REQUEST,
            "The upload names no file.".to_owned(),
        ),
        Err(response) => response,
    }
}

/// Streams the upload's body to its target: the whole body, or the file part of a
/// multipart one. The file is not in place until the target is committed.
async fn receive(
    state: &AppState,
    query: &HashMap<String, String>,
    headers: &HeaderMap,
    body: Body,
) -> Result<Option<Target>, Response> {
    let limits = &state.limits;
    let limit = limits.upload_max_bytes;
    let too_large = || {
        problem(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "The upload is larger than the limit of {limit} bytes (AGENT_RUNTIME_SANDBOX_UPLOAD_MAX_BYTES)."
            ),
        )
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    if declared.is_some_and(|length| length > limit) {
        return Err(too_large());
    }
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default();
    let destination = Destination {
        root: &state.workspace_dir,
        path: query.get("path"),
    };
    let mut multipart =
        boundary_of(content_type).map(|boundary| Multipart::new(Parser::new(&boundary)));
    let mut target = None;
    if multipart.is_none() {
        target = Some(destination.open(None).await?);
    }
    let mut received: u64 = 0;
    let mut stream = body.into_data_stream();
    while let Some(chunk) = next_chunk(&mut stream, limits).await? {
        received += chunk.len() as u64;
        if received > limit {
            return Err(too_large());
        }
        match multipart.as_mut() {
            Some(multipart) => multipart.feed(&chunk, &mut target, &destination).await?,
            None => write_on(&mut target, chunk.to_vec()).await?,
        }
    }
    match multipart {
        Some(multipart) => multipart.finish(target, &destination).await,
        None => Ok(target),
    }
}
