//! Attachments to a message: up to 4, 10 MB each. Images (PNG, JPEG, GIF, WebP) are kept as files
//! under `data/attachments/` (named by their SHA-256, so the same image is stored once) and go to
//! the model as images; text documents (Markdown, CSV, JSON, code, logs…) go in the message, each
//! under a header line the transcript recognises.

use std::path::Path;

use base64::Engine;
use cairn_llm::Image;
use sha2::{Digest, Sha256};

use crate::{Cairn, Error};

pub const MAX_ATTACHMENTS: usize = 4;
pub const MAX_ATTACHMENT_BYTES: usize = 10 * 1024 * 1024;

/// The header a text document starts with inside a message.
const DOCUMENT_HEADER: &str = "\n\n--- Attached file: ";

pub use cairn_protocol::AttachmentInput;

/// A message ready for the runtime: the text with its documents, and the images.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedMessage {
    pub text: String,
    pub images: Vec<Image>,
}

const IMAGE_TYPES: [(&str, &str); 4] = [
    ("image/png", "png"),
    ("image/jpeg", "jpg"),
    ("image/gif", "gif"),
    ("image/webp", "webp"),
];

const TEXT_EXTENSIONS: &[&str] = &[
    "txt", "md", "markdown", "csv", "tsv", "json", "jsonl", "yaml", "yml", "toml", "xml", "html",
    "htm", "css", "js", "ts", "tsx", "jsx", "rs", "py", "go", "java", "kt", "c", "h", "cc", "cpp",
    "hpp", "cs", "rb", "php", "swift", "sh", "bash", "zsh", "sql", "log", "ini", "cfg", "conf",
    "env", "tex", "rst", "org", "diff", "patch", "svg",
];

fn invalid(message: String) -> Error {
    Error::Attachment(message)
}

/// `data:<type>;base64,<data>` → (type, bytes).
fn decode_data_url(name: &str, url: &str) -> Result<(String, Vec<u8>), Error> {
    let unreadable = || invalid(format!("{name} could not be read (not a base64 data URL)."));
    let rest = url.strip_prefix("data:").ok_or_else(unreadable)?;
    let (meta, data) = rest.split_once(',').ok_or_else(unreadable)?;
    let media_type = meta
        .strip_suffix(";base64")
        .ok_or_else(unreadable)?
        .to_ascii_lowercase();
    // 10 MB of bytes is about 13.4 MB of base64: refuse before decoding anything bigger.
    if data.len() > MAX_ATTACHMENT_BYTES / 3 * 4 + 4 {
        return Err(too_big(name, data.len() / 4 * 3));
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .map_err(|_| unreadable())?;
    if bytes.len() > MAX_ATTACHMENT_BYTES {
        return Err(too_big(name, bytes.len()));
    }
    Ok((media_type, bytes))
}

fn too_big(name: &str, bytes: usize) -> Error {
    invalid(format!(
        "{name} is {:.1} MB; attachments are limited to 10 MB each.",
        bytes as f64 / 1_048_576.0
    ))
}

fn extension(name: &str) -> String {
    Path::new(name)
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default()
}

fn is_text(name: &str, media_type: &str) -> bool {
    media_type.starts_with("text/")
        || matches!(
            media_type,
            "application/json" | "application/xml" | "application/x-yaml" | "application/toml"
        )
        || TEXT_EXTENSIONS.contains(&extension(name).as_str())
}

impl Cairn {
    /// Checks and stores `attachments`; the message the runtime gets.
    pub fn prepare_message(
        &self,
        text: &str,
        attachments: &[AttachmentInput],
    ) -> Result<PreparedMessage, Error> {
        if attachments.len() > MAX_ATTACHMENTS {
            return Err(invalid(format!(
                "At most {MAX_ATTACHMENTS} attachments per message ({} were added).",
                attachments.len()
            )));
        }
        let mut message = PreparedMessage {
            text: text.to_owned(),
            images: Vec::new(),
        };
        for attachment in attachments {
            let name = attachment.name.trim();
            let (media_type, bytes) = decode_data_url(name, &attachment.data_url)?;
            if let Some((media_type, ext)) =
                IMAGE_TYPES.iter().find(|(t, _)| *t == media_type).copied()
            {
                let path = self
                    .home()
                    .data_dir()
                    .join("attachments")
                    .join(stored_name(name, ext, &bytes));
                if !path.exists() {
                    cairn_config::write_private_atomically(&path, &bytes)
                        .map_err(|e| invalid(format!("{name} could not be stored: {e}")))?;
                }
                message.images.push(Image {
                    media_type: media_type.to_owned(),
                    path,
                });
            } else if is_text(name, &media_type) {
                let content = String::from_utf8(bytes).map_err(|_| {
                    invalid(format!(
                        "{name} is not UTF-8 text: attach images, or text documents such as .md, .csv or .json."
                    ))
                })?;
                message.text.push_str(&format!(
                    "{DOCUMENT_HEADER}{name} ---\n{}",
                    content.trim_end()
                ));
            } else {
                return Err(invalid(format!(
                    "{name} cannot be attached: Cairn takes images (PNG, JPEG, GIF, WebP) and text documents (.md, .txt, .csv, .json, code, logs)."
                )));
            }
        }
        Ok(message)
    }
}

/// `<first 12 hex digits of the SHA-256>-<the name, made file-safe>`: the same image under the
/// same name is stored once, and the transcript can show the name.
fn stored_name(name: &str, ext: &str, bytes: &[u8]) -> String {
    let hash = hex::encode(Sha256::digest(bytes));
    let mut safe: String = name
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .take(80)
        .collect();
    if extension(&safe) != ext && !(ext == "jpg" && extension(&safe) == "jpeg") {
        safe.push('.');
        safe.push_str(ext);
    }
    format!("{}-{safe}", &hash[..12])
}

/// The name an image was attached under, from its stored file's name.
pub fn attached_name(stored: &Path) -> String {
    let file = stored
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match file.split_once('-') {
        Some((hash, name)) if hash.len() == 12 && hash.chars().all(|c| c.is_ascii_hexdigit()) => {
            name.to_owned()
        }
        _ => file,
    }
}

/// A person's message split into their words and the names of the documents attached to it.
pub fn split_documents(text: &str) -> (&str, Vec<String>) {
    let Some(first) = text.find(DOCUMENT_HEADER) else {
        return (text, Vec::new());
    };
    let names = text[first..]
        .split(DOCUMENT_HEADER)
        .filter_map(|part| part.split_once(" ---\n").map(|(name, _)| name.to_owned()))
        .collect();
    (&text[..first], names)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cairn(dir: &Path) -> Cairn {
        Cairn::new(cairn_config::Home::at(dir))
    }

    fn data_url(media_type: &str, bytes: &[u8]) -> String {
        format!(
            "data:{media_type};base64,{}",
            base64::engine::general_purpose::STANDARD.encode(bytes)
        )
    }

    #[test]
    fn documents_go_in_the_text_and_images_to_files() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let cairn = cairn(dir.path());
        let prepared = cairn.prepare_message(
            "Compare these",
            &[
                AttachmentInput {
                    name: "notes.md".into(),
                    data_url: data_url("text/markdown", "# Plan\n- soil\n".as_bytes()),
                },
                AttachmentInput {
                    name: "beds.csv".into(),
                    data_url: data_url("", b"bed,plant\nsouth,basil\n"),
                },
                AttachmentInput {
                    name: "photo.png".into(),
                    data_url: data_url("image/png", b"\x89PNG..."),
                },
            ],
        )?;
        assert_eq!(
            prepared.text,
            "Compare these\n\n--- Attached file: notes.md ---\n# Plan\n- soil\n\n--- Attached file: beds.csv ---\nbed,plant\nsouth,basil"
        );
        assert_eq!(prepared.images.len(), 1);
        assert_eq!(std::fs::read(&prepared.images[0].path)?, b"\x89PNG...");
        assert_eq!(attached_name(&prepared.images[0].path), "photo.png");
        assert_eq!(
            split_documents(&prepared.text),
            (
                "Compare these",
                vec!["notes.md".to_owned(), "beds.csv".to_owned()]
            )
        );
        assert_eq!(split_documents("just words"), ("just words", vec![]));
        Ok(())
    }

    #[test]
    fn too_many_too_big_or_binary_is_refused_plainly() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let cairn = cairn(dir.path());
        let one = AttachmentInput {
            name: "a.txt".into(),
            data_url: data_url("text/plain", b"a"),
        };
        let five = vec![one.clone(); 5];
        let err = cairn.prepare_message("x", &five).err().ok_or("five")?;
        assert!(
            err.to_string().starts_with("At most 4 attachments"),
            "{err}"
        );
        let big = AttachmentInput {
            name: "big.log".into(),
            data_url: data_url("text/plain", &vec![b'a'; MAX_ATTACHMENT_BYTES + 1]),
        };
        let err = cairn.prepare_message("x", &[big]).err().ok_or("big")?;
        assert!(err.to_string().contains("limited to 10 MB each"), "{err}");
        let binary = AttachmentInput {
            name: "tool.exe".into(),
            data_url: data_url("application/octet-stream", b"MZ\x00\x01"),
        };
        let err = cairn
            .prepare_message("x", &[binary])
            .err()
            .ok_or("binary")?;
        assert!(err.to_string().contains("cannot be attached"), "{err}");
        let latin1 = AttachmentInput {
            name: "old.txt".into(),
            data_url: data_url("text/plain", b"caf\xe9"),
        };
        let err = cairn
            .prepare_message("x", &[latin1])
            .err()
            .ok_or("latin1")?;
        assert!(err.to_string().contains("not UTF-8"), "{err}");
        let broken = AttachmentInput {
            name: "x.png".into(),
            data_url: "not a data url".into(),
        };
        assert!(cairn.prepare_message("x", &[broken]).is_err());
        // Nothing was stored for the refused ones.
        assert!(!dir.path().join("data/attachments").exists());
        Ok(())
    }
}
