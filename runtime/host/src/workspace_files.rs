//! The sandbox's workspace folder as files (INTEROP.md §9): listing it, resolving the
//! relative paths clients name, and the Workspace Service's file API that `workspace.sync`
//! copies from and to (`GET /workspaces/{ws}/files` → `[{path, size}]`,
//! `GET …/files/{path}` → the bytes, `POST …/files?path=P` multipart field `file` → 201).

use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use bytes::Bytes;
use serde::{Deserialize, Serialize};

/// One file of the workspace folder, by its `/`-separated path relative to the folder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceFile {
    pub path: String,
    pub size: u64,
}

/// The folder-relative path a client named, or `None` when it is empty, absolute or
/// climbs out of the folder.
pub fn relative(path: &str) -> Option<PathBuf> {
    let trimmed = path.trim_start_matches("./");
    if trimmed.is_empty() || trimmed.contains('\0') {
        return None;
    }
    let candidate = Path::new(trimmed);
    let mut clean = PathBuf::new();
    for component in candidate.components() {
        match component {
            Component::Normal(part) => clean.push(part),
            Component::CurDir => {}
            _ => return None,
        }
    }
    (!clean.as_os_str().is_empty()).then_some(clean)
}

/// Every regular file under `root` (symbolic links are not followed), sorted by path.
pub fn list(root: &Path) -> std::io::Result<Vec<WorkspaceFile>> {
    let mut found = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            let kind = entry.file_type()?;
            if kind.is_dir() {
                pending.push(entry.path());
            } else if kind.is_file() {
                let path = entry.path();
                let Ok(rel) = path.strip_prefix(root) else {
                    continue;
                };
                let rel: Vec<String> = rel
                    .components()
                    .map(|part| part.as_os_str().to_string_lossy().into_owned())
                    .collect();
                found.push(WorkspaceFile {
                    path: rel.join("/"),
                    size: entry.metadata()?.len(),
                });
            }
        }
    }
    found.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(found)
}

#[derive(Debug, thiserror::Error)]
pub enum FilesError {
    #[error("the Workspace Service at {url} could not be reached ({detail})")]
    Unreachable { url: String, detail: String },
    #[error("the Workspace Service answered HTTP {status} for {url}: {body}")]
    Status {
        url: String,
        status: u16,
        body: String,
    },
    #[error("the Workspace Service's file list could not be read ({0})")]
    InvalidList(String),
}

/// The Workspace Service's files of one workspace.
pub struct WorkspaceFilesClient {
    http: reqwest::Client,
    base: String,
    timeout: Duration,
}

impl WorkspaceFilesClient {
    pub fn new(
        http: reqwest::Client,
        service_url: &str,
        workspace_id: &str,
        timeout: Duration,
    ) -> Self {
        Self {
            http,
            base: format!(
                "{}/workspaces/{workspace_id}/files",
                service_url.trim_end_matches('/')
            ),
            timeout,
        }
    }

    pub async fn list(&self) -> Result<Vec<WorkspaceFile>, FilesError> {
        let body = self.fetch(&self.base).await?;
        serde_json::from_slice(&body).map_err(|error| FilesError::InvalidList(error.to_string()))
    }

    pub async fn download(&self, path: &str) -> Result<Bytes, FilesError> {
        self.fetch(&format!("{}/{}", self.base, encode_path(path)))
            .await
    }

    pub async fn upload(&self, path: &str, content: Vec<u8>) -> Result<(), FilesError> {
        let url = format!("{}?path={}", self.base, encode_component(path));
        let boundary = format!("agent-runtime-{}", uuid::Uuid::new_v4().simple());
        let name = path.rsplit('/').next().unwrap_or(path).replace('"', "");
        let mut body = format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
        )
        .into_bytes();
        body.extend_from_slice(&content);
        body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
        let request = self
            .http
            .post(&url)
            .timeout(self.timeout)
            .header(
                reqwest::header::CONTENT_TYPE,
                format!("multipart/form-data; boundary={boundary}"),
            )
            .body(body);
        self.finish(&url, request).await.map(|_| ())
    }

    async fn fetch(&self, url: &str) -> Result<Bytes, FilesError> {
        let request = self.http.get(url).timeout(self.timeout);
        self.finish(url, request).await
    }

    async fn finish(
        &self,
        url: &str,
        request: reqwest::RequestBuilder,
    ) -> Result<Bytes, FilesError> {
        let unreachable = |error: reqwest::Error| FilesError::Unreachable {
            url: url.to_owned(),
            detail: error.to_string(),
        };
        let response = request.send().await.map_err(unreachable)?;
        let status = response.status();
        let body = response.bytes().await.map_err(unreachable)?;
        if !status.is_success() {
            return Err(FilesError::Status {
                url: url.to_owned(),
                status: status.as_u16(),
                body: String::from_utf8_lossy(&body).chars().take(300).collect(),
            });
        }
        Ok(body)
    }
}

fn encode_path(path: &str) -> String {
    path.split('/')
        .map(encode_component)
        .collect::<Vec<_>>()
        .join("/")
}

fn encode_component(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes())
        .collect::<String>()
        .replace('+', "%20")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_stay_inside_the_folder() {
        assert_eq!(relative("a/b.txt"), Some(PathBuf::from("a/b.txt")));
        assert_eq!(relative("./a.txt"), Some(PathBuf::from("a.txt")));
        assert_eq!(relative("../etc/passwd"), None);
        assert_eq!(relative("a/../../b"), None);
        assert_eq!(relative("/etc/passwd"), None);
        assert_eq!(relative(""), None);
    }

    #[test]
    fn listing_walks_subfolders_in_path_order() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/b.txt"), "bb").unwrap();
        std::fs::write(dir.path().join("a.txt"), "a").unwrap();
        let files = list(dir.path()).unwrap();
        let paths: Vec<&str> = files.iter().map(|file| file.path.as_str()).collect();
        assert_eq!(paths, ["a.txt", "sub/b.txt"]);
        assert_eq!(files[1].size, 2);
    }
}
