//! The images an ExecuteCode run leaves in its output folder (INTEROP.md §11: "images it
//! writes may go back to the model like ViewImage"): the folder's own files, in name order,
//! that are PNG, JPEG, GIF or WebP images by name and by content — the formats every
//! multimodal model reads —, each no larger than ViewImage's bound, at most
//! [`MAX_IMAGES`] of them and [`MAX_TOTAL_BYTES`] together. Each file is opened beneath the
//! folder and must be a regular file with no other name, so a link the code made to a file
//! it could not read itself never reaches the model. What is left out is named, with why,
//! in the result's text.

use std::io::Read as _;
use std::path::Path;

use agent_protocol::ImagePart;
use base64::Engine as _;

use crate::platform::image::{MAX_IMAGE_BYTES, holds, media_type, size_text};

/// The most images one run sends: a handful of figures of one analysis (the Python runtime
/// sends its first only).
pub(super) const MAX_IMAGES: usize = 4;

/// The most bytes the images of one run have together: two of the largest ViewImage sends.
pub(super) const MAX_TOTAL_BYTES: u64 = 2 * MAX_IMAGE_BYTES;

/// The most entries of the folder looked at: code that writes thousands of files does not
/// hold the call up while they are listed.
const MAX_ENTRIES: usize = 256;

/// The most files named as left out; the rest are counted.
const MAX_NAMED: usize = 10;

/// The image formats sent (ViewImage's but BMP, which models do not read).
const EXTENSIONS: &[&str] = &["png", "jpg", "jpeg", "gif", "webp"];

/// One image to send.
#[derive(Debug)]
pub(super) struct Image {
    pub name: String,
    pub size: u64,
    pub part: ImagePart,
}

/// What the output folder held.
#[derive(Debug, Default)]
pub(super) struct Collected {
    pub images: Vec<Image>,
    /// One "name (why)" each.
    pub skipped: Vec<String>,
    /// Files left out but not named ([`MAX_NAMED`]) or not looked at ([`MAX_ENTRIES`]).
    pub unnamed: usize,
    /// Why the folder could not be read, if it could not.
    pub unreadable: Option<String>,
}

impl Collected {
    fn skip(&mut self, name: &str, why: impl std::fmt::Display) {
        if self.skipped.len() < MAX_NAMED {
            self.skipped.push(format!("{name} ({why})"));
        } else {
            self.unnamed += 1;
        }
    }

    /// Whether the run left anything in the folder.
    pub(super) fn is_empty(&self) -> bool {
        self.images.is_empty()
            && self.skipped.is_empty()
            && self.unnamed == 0
            && self.unreadable.is_none()
    }

    /// The result text's section about the folder, naming it by its variable; empty when the
    /// run left nothing there. `shown` says whether the images go to the model.
    pub(super) fn section(&self, variable: &str, shown: bool) -> String {
        if self.is_empty() {
            return String::new();
        }
        let mut text = String::from("--- images ---\n");
        if !self.images.is_empty() {
            let names: Vec<String> = self
                .images
                .iter()
                .map(|image| format!("{} ({})", image.name, size_text(image.size)))
                .collect();
            let fate = if shown {
                "shown to you with this result"
            } else {
                "not shown to you: this runtime's model gateway takes no images"
            };
            text.push_str(&format!(
                "Written to {variable}, {fate}: {}\n",
                names.join(", ")
            ));
        }
        if !self.skipped.is_empty() || self.unnamed > 0 {
            let mut left = self.skipped.join("; ");
            if self.unnamed > 0 {
                if !left.is_empty() {
                    left.push_str("; ");
                }
                left.push_str(&format!("{} more file(s)", self.unnamed));
            }
            text.push_str(&format!("Left out of {variable}'s images: {left}\n"));
        }
        if let Some(why) = &self.unreadable {
            text.push_str(&format!("{variable} could not be read: {why}\n"));
        }
        text
    }
}

/// The images in `folder`, each at most `max_bytes` (and [`MAX_IMAGE_BYTES`]).
pub(super) fn collect(folder: &Path, max_bytes: Option<u64>) -> Collected {
    let each = max_bytes.map_or(MAX_IMAGE_BYTES, |limit| limit.min(MAX_IMAGE_BYTES));
    let mut collected = Collected::default();
    let entries = match std::fs::read_dir(folder) {
        Ok(entries) => entries,
        Err(error) => {
            collected.unreadable = Some(error.to_string());
            return collected;
        }
    };
    let mut names = Vec::new();
    for entry in entries {
        match entry {
            Ok(entry) if names.len() < MAX_ENTRIES => names.push(entry.file_name()),
            Ok(_) => collected.unnamed += 1,
            Err(error) => collected.unreadable = Some(error.to_string()),
        }
    }
    names.sort();
    let mut total = 0u64;
    for name in names {
        let shown = name.to_string_lossy().into_owned();
        let extension = Path::new(&name)
            .extension()
            .map(|extension| extension.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        let media_type = media_type(&extension).filter(|_| EXTENSIONS.contains(&&*extension));
        let Some(media_type) = media_type else {
            collected.skip(&shown, "not a PNG, JPEG, GIF or WebP image");
            continue;
        };
        let bytes = match read(folder, Path::new(&name), each) {
            Ok(bytes) => bytes,
            Err(why) => {
                collected.skip(&shown, why);
                continue;
            }
        };
        let size = bytes.len() as u64;
        if !holds(media_type, &bytes) {
            collected.skip(
                &shown,
                format!("named as {media_type} but its content is not one"),
            );
        } else if collected.images.len() >= MAX_IMAGES {
            collected.skip(&shown, format!("more than {MAX_IMAGES} images"));
        } else if total + size > MAX_TOTAL_BYTES {
            collected.skip(
                &shown,
                format!(
                    "the images would pass {} together",
                    size_text(MAX_TOTAL_BYTES)
                ),
            );
        } else {
            total += size;
            collected.images.push(Image {
                name: shown,
                size,
                part: ImagePart {
                    media_type: media_type.to_owned(),
                    data_base64: base64::engine::general_purpose::STANDARD.encode(&bytes),
                },
            });
        }
    }
    collected
}

/// The bytes of the regular file `name` of `folder`, at most `limit` of them; `Err` says why
/// not, for the result's text.
fn read(folder: &Path, name: &Path, limit: u64) -> Result<Vec<u8>, String> {
    let meta = folder
        .join(name)
        .symlink_metadata()
        .map_err(|error| error.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file".to_owned());
    }
    let file = agent_beneath::open_beneath(folder, name, agent_beneath::Access::Read)
        .map_err(|error| error.to_string())?;
    let meta = file.metadata().map_err(|error| error.to_string())?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        // A second name of a file elsewhere: not an image the code made here.
        if meta.nlink() > 1 {
            return Err("a link to another file".to_owned());
        }
    }
    if !meta.is_file() {
        return Err("not a regular file".to_owned());
    }
    let too_large = |size: u64| {
        format!(
            "{}, more than the {} an image may have",
            size_text(size),
            size_text(limit)
        )
    };
    if meta.len() > limit {
        return Err(too_large(meta.len()));
    }
    let mut bytes = Vec::new();
    // No more than the limit even if the file grew since it was measured.
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|error| error.to_string())?;
    if bytes.len() as u64 > limit {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}
