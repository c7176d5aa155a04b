//! The sandbox's workspace folder as files (INTEROP.md §9): listing it, resolving the
//! relative paths clients name, opening and writing them beneath the folder without
//! following a link out (`agent-beneath`, the resolution WriteFile uses), and the Workspace Service's file API that `workspace.sync`
//! copies from and to (`GET /workspaces/{ws}/files` → `[{path, size}]`,
//! `GET …/files/{path}` → the bytes, `POST …/files?path=P` multipart field `file` → 201).

use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use bytes::Bytes;
use serde::{Deserialize, Serialize};

/// One file of the workspace folder, by its `/`-separated path relative to the folder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WorkspaceFile {
    pub path: String,
    pub size: u64,
}

/// The folder-relative path a client named, or `None` when it is empty, absolute or
/// climbs out of the folder.
pub(crate) fn relative(path: &str) -> Option<PathBuf> {
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

/// Every regular file under `root`, sorted by path, walked by folder handles opened beneath
/// it (links are neither listed nor entered: `agent-beneath`).
pub(crate) fn list(root: &Path) -> std::io::Result<Vec<WorkspaceFile>> {
    Ok(agent_beneath::listing::files(root)?
        .into_iter()
        .map(|entry| WorkspaceFile {
            path: entry.path,
            size: entry.size,
        })
        .collect())
}

/// Opens the regular file `relative` beneath `root` for reading, with its size. A link on
/// the way that leads out of the folder is refused ([`is_escape`]), and so is anything but
/// a regular file.
pub(crate) fn open(root: &Path, relative: &Path) -> std::io::Result<(std::fs::File, u64)> {
    let file = agent_beneath::open_beneath(root, relative, agent_beneath::Access::Read)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "not a regular file",
        ));
    }
    Ok((file, meta.len()))
}

/// Starts writing `relative` beneath `root` (missing folders made beneath it, a link at the
/// name replaced, never followed); the file appears at `commit`.
pub(crate) fn create(
    root: &Path,
    relative: &Path,
) -> std::io::Result<agent_beneath::write::NewFile> {
    agent_beneath::write::create(root, relative)
}

/// Whether `error` refused a resolution that would have left the workspace folder.
pub(crate) fn is_escape(error: &std::io::Error) -> bool {
    agent_beneath::escaped(error).is_some()
}

/// Why a file operation failed, as a client reads it (never the folder's real path).
pub(crate) fn describe(path: &str, error: &std::io::Error) -> String {
    if is_escape(error) {
        format!("\"{path}\" leads out of the workspace through a symbolic link; it is refused")
    } else if error.kind() == std::io::ErrorKind::NotFound {
        format!("the workspace has no file \"{path}\"")
    } else {
        format!("\"{path}\" could not be used: {}", error.kind())
    }
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum FilesError {
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
pub(crate) struct WorkspaceFilesClient {
    http: reqwest::Client,
    base: String,
    timeout: Duration,
}

impl WorkspaceFilesClient {
    pub(crate) fn new(
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

    pub(crate) async fn list(&self) -> Result<Vec<WorkspaceFile>, FilesError> {
        let body = self.fetch(&self.base).await?;
        serde_json::from_slice(&body).map_err(|error| FilesError::InvalidList(error.to_string()))
    }

    /// The file's bytes as they arrive (`workspace_stream::write_streamed` puts them on
    /// disk), never the whole file in memory.
    pub(crate) async fn download(
        &self,
        path: &str,
    ) -> Result<impl futures::Stream<Item = reqwest::Result<Bytes>> + Unpin + use<>, FilesError>
    {
        let url = format!("{}/{}", self.base, encode_path(path));
        let response = self
            .http
            .get(&url)
            .timeout(self.timeout)
            .send()
            .await
            .map_err(|error| FilesError::Unreachable {
                url: url.clone(),
                detail: with_causes(&error),
            })?;
        if !response.status().is_success() {
            return Err(refusal(&url, response).await);
        }
        Ok(response.bytes_stream())
    }

    /// Sends `content` as the multipart upload of `path`, streamed as it is produced.
    pub(crate) async fn upload<S>(&self, path: &str, content: S) -> Result<(), FilesError>
    where
        S: futures::Stream<Item = std::io::Result<Bytes>> + Send + Sync + 'static,
    {
        use futures::StreamExt;
        let url = format!("{}?path={}", self.base, encode_component(path));
        let boundary = format!("agent-runtime-{}", uuid::Uuid::new_v4().simple());
        let name = path.rsplit('/').next().unwrap_or(path).replace('"', "");
        let head = Bytes::from(format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
        ));
        let end = Bytes::from(format!("\r\n--{boundary}--\r\n"));
        let body = futures::stream::once(async move { Ok(head) })
            .chain(content)
            .chain(futures::stream::once(async move { Ok(end) }));
        let request = self
            .http
            .post(&url)
            .timeout(self.timeout)
            .header(
                reqwest::header::CONTENT_TYPE,
                format!("multipart/form-data; boundary={boundary}"),
            )
            .body(reqwest::Body::wrap_stream(body));
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
            detail: with_causes(&error),
        };
        let response = request.send().await.map_err(unreachable)?;
        if !response.status().is_success() {
            return Err(refusal(url, response).await);
        }
        response.bytes().await.map_err(unreachable)
    }
}

/// A refusal's status and the start of its body (read no further: a refusal's body says
/// why in its first lines).
async fn refusal(url: &str, mut response: reqwest::Response) -> FilesError {
    let status = response.status().as_u16();
    let mut body = Vec::new();
    while body.len() < 1024 {
        match response.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            _ => break,
        }
    }
    FilesError::Status {
        url: url.to_owned(),
        status,
        body: String::from_utf8_lossy(&body).chars().take(300).collect(),
    }
}

/// An error with the causes under it (reqwest's own message names none of them).
fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
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
