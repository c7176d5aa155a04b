//! ViewImage (INTEROP.md §11): an image file of the project for the model to see. The
//! result's text names the file and its size; the image itself rides along as an
//! [`ImagePart`], which the host sends to the gateway as an `image_url` part. The format is
//! taken from the file's name and must match its first bytes, so a text file named `.png`
//! is never sent as an image (the gateway would refuse the whole request).

use std::io::Read;
use std::path::Path;

use agent_protocol::{ErrorCode, ImagePart, ToolDefinition, ToolRequest, ToolResult};
use async_trait::async_trait;
use base64::Engine;
use serde_json::json;

use super::io_failure;
use crate::args::Args;
use crate::platform::beneath;
use crate::tool::Tool;

pub(crate) use crate::platform::image::MAX_IMAGE_BYTES;
use crate::platform::image::{holds, media_type, size_text};

pub(crate) struct ViewImage;

#[async_trait]
impl Tool for ViewImage {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            tool_name: "ViewImage".to_owned(),
            description:
                "Read an image file and show it to you. Supports PNG, JPEG, GIF, WebP and BMP"
                    .to_owned(),
            input_schema: json!({
                "type": "object",
                "required": ["path"],
                "additionalProperties": false,
                "properties": {
                    "path": { "type": "string", "description": "Image file path (relative paths resolve against the project folder)" }
                }
            }).into(),
        }
    }

    async fn run(&self, request: &ToolRequest) -> ToolResult {
        let args = Args::new("ViewImage", &request.arguments);
        let raw_path = match args
            .only(&["path"])
            .and_then(|()| args.required_str("path"))
        {
            Ok(path) => path,
            Err(error) => return ToolResult::failed(request, ErrorCode::InvalidRequest, error.0),
        };
        let path = match super::resolve_path("ViewImage", raw_path, request) {
            Ok(path) => path,
            Err(failure) => return *failure,
        };
        let request_owned = request.clone();
        tokio::task::spawn_blocking(move || view(&request_owned, &path))
            .await
            .unwrap_or_else(|error| {
                ToolResult::failed(
                    request,
                    ErrorCode::ToolExecutionFailed,
                    format!("ViewImage stopped unexpectedly: {error}"),
                )
            })
    }
}

fn view(request: &ToolRequest, path: &Path) -> ToolResult {
    let extension = path
        .extension()
        .map(|extension| extension.to_string_lossy().into_owned())
        .unwrap_or_default();
    let Some(media_type) = media_type(&extension) else {
        return ToolResult::failed(
            request,
            ErrorCode::InvalidRequest,
            format!(
                "{} is not an image ViewImage shows; it shows .png, .jpg, .jpeg, .gif, .webp and .bmp files",
                path.display()
            ),
        );
    };
    // Opened beneath the project folder: the file judged is the file sent.
    let root = request.workspace_root.as_deref().map(Path::new);
    let file = match beneath::open(root, path, beneath::Access::Read) {
        Ok(file) => file,
        Err(error) => return super::open_failure(request, "ViewImage", path, &error),
    };
    let metadata = match file.metadata() {
        Ok(metadata) => metadata,
        Err(error) => return io_failure(request, path, &error),
    };
    if !metadata.is_file() {
        return ToolResult::failed(
            request,
            ErrorCode::InvalidRequest,
            format!("{} is not a regular file", path.display()),
        );
    }
    let limit = request
        .limits
        .max_file_size_bytes
        .map_or(MAX_IMAGE_BYTES, |limit| limit.min(MAX_IMAGE_BYTES));
    let size = metadata.len();
    if size > limit {
        return ToolResult::failed(
            request,
            ErrorCode::FileTooLarge,
            format!(
                "{} is {size} bytes, more than the {limit} bytes an image may have",
                path.display()
            ),
        );
    }
    let mut bytes = Vec::new();
    // No more than the limit even if the file grew since it was measured.
    if let Err(error) = file.take(limit + 1).read_to_end(&mut bytes) {
        return io_failure(request, path, &error);
    }
    if bytes.len() as u64 > limit {
        return ToolResult::failed(
            request,
            ErrorCode::FileTooLarge,
            format!(
                "{} grew past the {limit} bytes an image may have while it was read",
                path.display()
            ),
        );
    }
    if !holds(media_type, &bytes) {
        return ToolResult::failed(
            request,
            ErrorCode::InvalidRequest,
            format!(
                "{} is named as {media_type} but its content is not one",
                path.display()
            ),
        );
    }
    let mut result = ToolResult::succeeded(
        request,
        format!("Image: {} ({})", path.display(), size_text(size)),
    );
    result.images.push(ImagePart {
        media_type: media_type.to_owned(),
        data_base64: base64::engine::general_purpose::STANDARD.encode(&bytes),
    });
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{assert_failed, request};
    use agent_protocol::ToolStatus;
    use serde_json::Value;

    /// The smallest valid PNG: a 1×1 transparent pixel.
    const PIXEL: &[u8] = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\x00\x01\x00\x00\x05\x00\x01\r\n-\xb4\x00\x00\x00\x00IEND\xaeB`\x82";

    async fn run(dir: &Path, args: Value) -> ToolResult {
        ViewImage.run(&request("ViewImage", dir, args)).await
    }

    #[tokio::test]
    async fn an_image_goes_to_the_model_as_its_bytes_with_its_media_type() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("pixel.PNG"), PIXEL).unwrap();
        let result = run(dir.path(), json!({"path": "pixel.PNG"})).await;
        assert_eq!(result.status, ToolStatus::Succeeded, "{result:?}");
        let text = result.output_text.as_deref().unwrap();
        assert!(
            text.starts_with("Image: ") && text.ends_with("pixel.PNG (67 B)"),
            "{text}"
        );
        assert_eq!(result.images.len(), 1);
        assert_eq!(result.images[0].media_type, "image/png");
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&result.images[0].data_base64)
            .unwrap();
        assert_eq!(bytes, PIXEL);
        assert!(
            result.images[0]
                .data_uri()
                .starts_with("data:image/png;base64,iVBORw0KGgo")
        );
    }

    #[tokio::test]
    async fn other_files_and_impostors_are_refused_readably() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), "text").unwrap();
        std::fs::write(dir.path().join("fake.png"), "not an image at all").unwrap();
        std::fs::write(dir.path().join("fake.webp"), b"RIFF\0\0\0\0WAVEfmt ").unwrap();
        let txt = run(dir.path(), json!({"path": "notes.txt"})).await;
        assert_failed(&txt, ErrorCode::InvalidRequest, "it shows .png, .jpg");
        for name in ["fake.png", "fake.webp"] {
            let fake = run(dir.path(), json!({"path": name})).await;
            assert_failed(&fake, ErrorCode::InvalidRequest, "its content is not one");
            assert!(fake.images.is_empty());
        }
        let missing = run(dir.path(), json!({"path": "gone.png"})).await;
        assert_eq!(missing.status, ToolStatus::Failed);
        assert_eq!(missing.error.unwrap().code, ErrorCode::FileNotFound);
        let extra = run(dir.path(), json!({"path": "a.png", "zoom": 2})).await;
        assert_failed(&extra, ErrorCode::InvalidRequest, "zoom");
    }

    #[tokio::test]
    async fn an_image_over_the_size_limit_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("pixel.png"), PIXEL).unwrap();
        let mut call = request("ViewImage", dir.path(), json!({"path": "pixel.png"}));
        call.limits.max_file_size_bytes = Some(66);
        let result = ViewImage.run(&call).await;
        assert_failed(
            &result,
            ErrorCode::FileTooLarge,
            "67 bytes, more than the 66 bytes",
        );
        call.limits.max_file_size_bytes = Some(67);
        assert_eq!(ViewImage.run(&call).await.status, ToolStatus::Succeeded);
    }

    #[test]
    fn offered_only_where_the_gateway_takes_image_parts() {
        use agent_protocol::ToolRouter;
        let offered = |image_parts| {
            crate::LocalToolRouter::with_options(crate::ToolOptions {
                image_parts,
                ..Default::default()
            })
            .available_tools()
            .iter()
            .any(|tool| tool.tool_name == "ViewImage")
        };
        assert!(!offered(false));
        assert!(offered(true));
    }
}
