//! The ggml vocabulary of a faster-whisper folder: its byte-level BPE token strings (from
//! `vocabulary.json`, `vocabulary.txt` or `tokenizer.json`) decoded back to raw bytes through
//! GPT-2's bytes↔unicode table, cut before `<|endoftext|>` as whisper.cpp's converter writes them
//! from tiktoken (whisper.cpp names the special tokens itself).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::ConvertError;

/// The special token that ends the ordinary (BPE) part of Whisper's vocabulary.
pub const END_OF_TEXT: &str = "<|endoftext|>";

/// Where a folder's vocabulary came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VocabSource {
    VocabularyJson(PathBuf),
    VocabularyTxt(PathBuf),
    TokenizerJson(PathBuf),
}

impl VocabSource {
    pub fn path(&self) -> &Path {
        match self {
            Self::VocabularyJson(p) | Self::VocabularyTxt(p) | Self::TokenizerJson(p) => p,
        }
    }
}

/// GPT-2's `bytes_to_unicode`: the printable bytes map to themselves, the other 68 bytes to
/// U+0100 onwards in byte order. Returned as the inverse map, char → byte.
pub fn unicode_to_byte() -> HashMap<char, u8> {
    let printable = |b: u8| (b'!'..=b'~').contains(&b) || (0xA1..=0xAC).contains(&b) || b >= 0xAE;
    let mut map = HashMap::with_capacity(256);
    let mut n = 0u32;
    for b in 0..=255u8 {
        let c = if printable(b) {
            u32::from(b)
        } else {
            n += 1;
            255 + n
        };
        if let Some(c) = char::from_u32(c) {
            map.insert(c, b);
        }
    }
    map
}

/// Decodes one byte-level token string to its bytes. A character outside the table (which no
/// BPE token has) is kept as its UTF-8 encoding.
pub fn token_bytes(token: &str, table: &HashMap<char, u8>) -> Vec<u8> {
    let mut out = Vec::with_capacity(token.len());
    for c in token.chars() {
        match table.get(&c) {
            Some(&b) => out.push(b),
            None => {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    out
}

/// The token strings of a CTranslate2 folder, in id order, and where they came from.
pub fn read_token_strings(dir: &Path) -> Result<(Vec<String>, VocabSource), ConvertError> {
    let json = dir.join("vocabulary.json");
    if json.is_file() {
        let text = read_text(&json)?;
        let tokens: Vec<String> =
            serde_json::from_str(&text).map_err(|e| ConvertError::Vocabulary {
                path: json.clone(),
                detail: format!("not a JSON list of strings: {e}"),
            })?;
        return Ok((tokens, VocabSource::VocabularyJson(json)));
    }
    let txt = dir.join("vocabulary.txt");
    if txt.is_file() {
        let text = read_text(&txt)?;
        let body = text.strip_suffix('\n').unwrap_or(&text);
        // Keep empty lines: the multilingual vocabulary has an empty token (id 50256).
        let tokens = body
            .split('\n')
            .map(|l| l.strip_suffix('\r').unwrap_or(l).to_string())
            .collect();
        return Ok((tokens, VocabSource::VocabularyTxt(txt)));
    }
    let tok = dir.join("tokenizer.json");
    if tok.is_file() {
        let tokens = tokenizer_json_tokens(&tok)?;
        return Ok((tokens, VocabSource::TokenizerJson(tok)));
    }
    Err(ConvertError::NotCt2Folder {
        dir: dir.to_path_buf(),
        missing: "vocabulary.json, vocabulary.txt or tokenizer.json".into(),
    })
}

fn read_text(path: &Path) -> Result<String, ConvertError> {
    std::fs::read_to_string(path).map_err(|source| ConvertError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Token strings by id from a Hugging Face `tokenizer.json` (`model.vocab` plus `added_tokens`).
fn tokenizer_json_tokens(path: &Path) -> Result<Vec<String>, ConvertError> {
    let bad = |detail: String| ConvertError::Vocabulary {
        path: path.to_path_buf(),
        detail,
    };
    let value: serde_json::Value =
        serde_json::from_str(&read_text(path)?).map_err(|e| bad(format!("not JSON: {e}")))?;
    let mut by_id: Vec<(u64, String)> = Vec::new();
    let vocab = value
        .pointer("/model/vocab")
        .and_then(|v| v.as_object())
        .ok_or_else(|| bad("no model.vocab object".into()))?;
    for (token, id) in vocab {
        let id = id
            .as_u64()
            .ok_or_else(|| bad(format!("token {token:?} has no integer id")))?;
        by_id.push((id, token.clone()));
    }
    if let Some(added) = value.get("added_tokens").and_then(|v| v.as_array()) {
        for entry in added {
            if let (Some(id), Some(content)) = (
                entry.get("id").and_then(|v| v.as_u64()),
                entry.get("content").and_then(|v| v.as_str()),
            ) {
                by_id.push((id, content.to_string()));
            }
        }
    }
    by_id.sort();
    by_id.dedup_by_key(|(id, _)| *id);
    let mut tokens = Vec::with_capacity(by_id.len());
    for (expected, (id, token)) in by_id.into_iter().enumerate() {
        if id != expected as u64 {
            return Err(bad(format!("token ids jump from {expected} to {id}")));
        }
        tokens.push(token);
    }
    Ok(tokens)
}

/// The tokens whisper.cpp's file holds: every id before `<|endoftext|>`, as raw bytes. Checks
/// that `<|endoftext|>` sits where whisper.cpp expects it for a model with `n_vocab` rows
/// (50256 for English-only models, 50257 for multilingual ones).
pub fn ggml_tokens(dir: &Path, n_vocab: u64) -> Result<Vec<Vec<u8>>, ConvertError> {
    let (tokens, source) = read_token_strings(dir)?;
    let eot = tokens
        .iter()
        .position(|t| t == END_OF_TEXT)
        .ok_or_else(|| ConvertError::Vocabulary {
            path: source.path().to_path_buf(),
            detail: format!("no {END_OF_TEXT} token"),
        })?;
    let expected = if n_vocab >= 51865 { 50257 } else { 50256 };
    if eot != expected {
        return Err(ConvertError::Vocabulary {
            path: source.path().to_path_buf(),
            detail: format!(
                "{END_OF_TEXT} is token {eot}, but whisper.cpp expects {expected} for a model with \
                 {n_vocab} embedding rows"
            ),
        });
    }
    let table = unicode_to_byte();
    Ok(tokens[..eot]
        .iter()
        .map(|t| token_bytes(t, &table))
        .collect())
}
