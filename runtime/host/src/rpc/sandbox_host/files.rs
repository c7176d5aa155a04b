//! The workspace folder's files over HTTP: `GET /files` (`{files, totalFiles,
//! totalSize}`, `?archive=true` for a zip of them all), `GET /files/{path}` (the bytes) and
//! `POST /upload?path=P` (a raw body, or a `multipart/form-data` body whose first file part
//! is taken; the part's filename when `path` is absent).

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::zip::{Member, archive};
use super::{AppState, json_body};
use crate::workspace_files::{self, relative};

fn problem(status: StatusCode, message: String) -> Response {
    json_body(
        status,
        json!({ "code": if status == StatusCode::NOT_FOUND { "FILE_NOT_FOUND" } else { "INVALID_REQUEST" }, "message": message })
            .to_string(),
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
    let listed = tokio::task::spawn_blocking(move || -> std::io::Result<Response> {
        let files = workspace_files::list(&root)?;
        if !archive_wanted {
            let total: u64 = files.iter().map(|file| file.size).sum();
            return Ok(json_body(
                StatusCode::OK,
                json!({ "files": files, "totalFiles": files.len(), "totalSize": total })
                    .to_string(),
            ));
        }
        let mut members = Vec::with_capacity(files.len());
        for file in files {
            let content = std::fs::read(root.join(&file.path))?;
            members.push(Member {
                path: file.path,
                content,
            });
        }
        Ok((
            [
                (header::CONTENT_TYPE, "application/zip"),
                (
                    header::CONTENT_DISPOSITION,
                    "attachment; filename=\"workspace.zip\"",
                ),
            ],
            archive(&members)?,
        )
            .into_response())
    })
    .await;
    match listed {
        Ok(Ok(response)) => response,
        Ok(Err(error)) => problem(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("The workspace folder could not be read: {error}."),
        ),
        Err(error) => problem(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("Listing the workspace folder failed: {error}."),
        ),
    }
}

pub(super) async fn download(
    State(state): State<Arc<AppState>>,
    Path(path): Path<String>,
) -> Response {
    let Some(rel) = relative(&path) else {
        return problem(
            StatusCode::BAD_REQUEST,
            format!("\"{path}\" is not a relative path inside the workspace."),
        );
    };
    let full = state.workspace_dir.join(rel);
    match tokio::fs::metadata(&full).await {
        Ok(meta) if meta.is_file() => {}
        _ => {
            return problem(
                StatusCode::NOT_FOUND,
                format!("The workspace has no file \"{path}\"."),
            );
        }
    }
    match tokio::fs::read(&full).await {
        Ok(content) => {
            let name = path.rsplit('/').next().unwrap_or(&path).replace('"', "");
            (
                [
                    (header::CONTENT_TYPE, "application/octet-stream".to_owned()),
                    (
                        header::CONTENT_DISPOSITION,
                        format!("attachment; filename=\"{name}\""),
                    ),
                ],
                content,
            )
                .into_response()
        }
        Err(error) => problem(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("The file \"{path}\" could not be read: {error}."),
        ),
    }
}

pub(super) async fn upload(
    State(state): State<Arc<AppState>>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let limit = state.host.config().rpc.max_line_bytes;
    let Ok(bytes) = axum::body::to_bytes(body, limit).await else {
        return problem(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("The upload is larger than the limit of {limit} bytes."),
        );
    };
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default();
    let (content, filename) = match boundary_of(content_type) {
        Some(boundary) => match first_file_part(&bytes, &boundary) {
            Some(part) => part,
            None => {
                return problem(
                    StatusCode::BAD_REQUEST,
                    "The multipart upload holds no file part.".to_owned(),
                );
            }
        },
        None => (bytes, None),
    };
    let Some(path) = query.get("path").cloned().or(filename) else {
        return problem(
            StatusCode::BAD_REQUEST,
            "Name the file to write with ?path=relative/path.".to_owned(),
        );
    };
    let Some(rel) = relative(&path) else {
        return problem(
            StatusCode::BAD_REQUEST,
            format!("\"{path}\" is not a relative path inside the workspace."),
        );
    };
    let full = state.workspace_dir.join(rel);
    if let Some(parent) = full.parent()
        && let Err(error) = tokio::fs::create_dir_all(parent).await
    {
        return problem(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("The folder of \"{path}\" could not be created: {error}."),
        );
    }
    match tokio::fs::write(&full, &content).await {
        Ok(()) => json_body(
            StatusCode::CREATED,
            json!({ "path": path, "size": content.len() }).to_string(),
        ),
        Err(error) => problem(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("\"{path}\" could not be written: {error}."),
        ),
    }
}

fn boundary_of(content_type: &str) -> Option<String> {
    let lower = content_type.to_ascii_lowercase();
    if !lower.starts_with("multipart/form-data") {
        return None;
    }
    content_type.split(';').find_map(|part| {
        let part = part.trim();
        let value = part
            .strip_prefix("boundary=")
            .or_else(|| part.strip_prefix("BOUNDARY="))?;
        Some(value.trim_matches('"').to_owned())
    })
}

/// The content and filename of the first part that carries a filename (else the first part).
fn first_file_part(body: &[u8], boundary: &str) -> Option<(Bytes, Option<String>)> {
    let delimiter = format!("--{boundary}");
    let delimiter = delimiter.as_bytes();
    let mut parts = Vec::new();
    let mut rest = body;
    while let Some(start) = find(rest, delimiter) {
        rest = &rest[start + delimiter.len()..];
        if rest.starts_with(b"--") {
            break;
        }
        let end = find(rest, delimiter).unwrap_or(rest.len());
        parts.push(&rest[..end]);
    }
    let parsed: Vec<(Bytes, Option<String>)> = parts
        .into_iter()
        .filter_map(|part| {
            let part = part.strip_prefix(b"\r\n").unwrap_or(part);
            let split = find(part, b"\r\n\r\n")?;
            let head = String::from_utf8_lossy(&part[..split]);
            let content = &part[split + 4..];
            let content = content.strip_suffix(b"\r\n").unwrap_or(content);
            let filename = head.split(';').find_map(|field| {
                let value = field.trim().strip_prefix("filename=")?;
                let value = value.split("\r\n").next()?.trim_matches('"');
                (!value.is_empty()).then(|| value.to_owned())
            });
            Some((Bytes::copy_from_slice(content), filename))
        })
        .collect();
    let with_name = parsed.iter().position(|(_, name)| name.is_some());
    parsed.into_iter().nth(with_name.unwrap_or(0))
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multipart_uploads_yield_the_file_part() {
        let body = b"--XyZ\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nignored\r\n--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\nline 1\r\nline 2\r\n--XyZ--\r\n";
        let boundary = boundary_of("multipart/form-data; boundary=XyZ").unwrap();
        let (content, name) = first_file_part(body, &boundary).unwrap();
        assert_eq!(&content[..], b"line 1\r\nline 2");
        assert_eq!(name.as_deref(), Some("a.txt"));
        assert!(boundary_of("application/octet-stream").is_none());
    }
}
