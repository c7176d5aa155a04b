//! The Workspace Service fake's file API for cloud workspaces (the real service's
//! `routes/files.py` and `services/file_service.py`): `POST /workspaces/{ws}/files?path=P`
//! with a multipart field `file` → 201 `{path, size}`, `GET /workspaces/{ws}/files` → a bare
//! array `[{path, size}]`, `GET /workspaces/{ws}/files/{path}` → the bytes (404
//! `ARTIFACT_NOT_FOUND` otherwise). Paths are relative, without `..` (400 otherwise).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::json;
use wiremock::{Request, ResponseTemplate};

use crate::faults::json_template;
use crate::util::service_error;

/// Files by workspace, then by path.
pub(crate) type FileMap = BTreeMap<String, BTreeMap<String, Vec<u8>>>;
pub(crate) type Files = Arc<Mutex<FileMap>>;

fn error(status: u16, code: &str, message: &str) -> ResponseTemplate {
    json_template(status, &service_error(code, message, status >= 500))
}

fn valid(path: &str) -> Result<String, Box<ResponseTemplate>> {
    if path.trim().is_empty() {
        return Err(Box::new(error(
            400,
            "INVALID_REQUEST",
            "File path must not be empty",
        )));
    }
    if path.starts_with('/') {
        return Err(Box::new(error(
            400,
            "INVALID_REQUEST",
            "File path must be relative",
        )));
    }
    if path.split('/').any(|part| part == "..") {
        return Err(Box::new(error(
            400,
            "INVALID_REQUEST",
            "File path must not contain '..' components",
        )));
    }
    Ok(path.trim_start_matches("./").to_owned())
}

fn segments(request: &Request) -> Vec<String> {
    request
        .url
        .path_segments()
        .map(|parts| parts.map(percent_decode).collect())
        .unwrap_or_default()
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let hex = bytes
            .get(index + 1..index + 3)
            .and_then(|pair| std::str::from_utf8(pair).ok())
            .and_then(|pair| u8::from_str_radix(pair, 16).ok());
        match (bytes[index], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                index += 3;
            }
            (byte, _) => {
                out.push(byte);
                index += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

pub(crate) fn list(files: &mut FileMap, request: &Request) -> ResponseTemplate {
    let workspace = segments(request).get(1).cloned().unwrap_or_default();
    let all = files;
    let listed: Vec<_> = all
        .get(&workspace)
        .map(|entries| {
            entries
                .iter()
                .map(|(path, content)| json!({"path": path, "size": content.len()}))
                .collect()
        })
        .unwrap_or_default();
    json_template(200, &json!(listed))
}

pub(crate) fn download(files: &mut FileMap, request: &Request) -> ResponseTemplate {
    let parts = segments(request);
    let workspace = parts.get(1).cloned().unwrap_or_default();
    let path = parts
        .get(3..)
        .map(|rest| rest.join("/"))
        .unwrap_or_default();
    let path = match valid(&path) {
        Ok(path) => path,
        Err(answer) => return *answer,
    };
    match files.get(&workspace).and_then(|entries| entries.get(&path)) {
        Some(content) => ResponseTemplate::new(200)
            .insert_header("content-type", "application/octet-stream")
            .set_body_bytes(content.clone()),
        None => error(
            404,
            "ARTIFACT_NOT_FOUND",
            &format!("Artifact not found: {path}"),
        ),
    }
}

pub(crate) fn upload(files: &mut FileMap, request: &Request) -> ResponseTemplate {
    let workspace = segments(request).get(1).cloned().unwrap_or_default();
    let Some(path) = request
        .url
        .query_pairs()
        .find(|(name, _)| name == "path")
        .map(|(_, value)| value.into_owned())
    else {
        return error(422, "VALIDATION_ERROR", "query parameter path is required");
    };
    let path = match valid(&path) {
        Ok(path) => path,
        Err(answer) => return *answer,
    };
    let content_type = request
        .headers
        .get("content-type")
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default();
    let Some(content) = file_field(&request.body, content_type) else {
        return error(422, "VALIDATION_ERROR", "multipart field file is required");
    };
    let size = content.len();
    files
        .entry(workspace)
        .or_default()
        .insert(path.clone(), content);
    json_template(201, &json!({"path": path, "size": size}))
}

/// The content of the multipart part named `file`.
fn file_field(body: &[u8], content_type: &str) -> Option<Vec<u8>> {
    let boundary = content_type
        .split(';')
        .find_map(|part| part.trim().strip_prefix("boundary="))?
        .trim_matches('"');
    let delimiter = format!("--{boundary}").into_bytes();
    let mut rest = body;
    while let Some(start) = find(rest, &delimiter) {
        rest = &rest[start + delimiter.len()..];
        let end = find(rest, &delimiter).unwrap_or(rest.len());
        let part = &rest[..end];
        let part = part.strip_prefix(b"\r\n").unwrap_or(part);
        let Some(split) = find(part, b"\r\n\r\n") else {
            continue;
        };
        let head = String::from_utf8_lossy(&part[..split]);
        if head.contains("name=\"file\"") {
            let content = &part[split + 4..];
            return Some(content.strip_suffix(b"\r\n").unwrap_or(content).to_vec());
        }
    }
    None
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}
