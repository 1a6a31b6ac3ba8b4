//! CTranslate2 → ggml conversion of Whisper models: turns a faster-whisper folder (`model.bin` +
//! `vocabulary.*`/`tokenizer.json`) into the ggml `.bin` whisper.cpp (and so whisper-rs) loads,
//! self-contained (the mel filter bank and the byte vocabulary are computed here, no whisper
//! assets needed).
//!
//! Per tensor: CTranslate2's fused self-attention projection (`linear_0` = q;k;v stacked by rows)
//! is split into `attn.query`/`attn.key`/`attn.value`, the cross-attention's fused `linear_1`
//! (k;v) into `cross_attn.key`/`cross_attn.value`; the key bias slice is dropped (whisper has
//! none, CTranslate2 fills zeros, and a key bias cannot change the softmax anyway); the conv biases
//! become `[n, 1]`; the tied output projection (`decoder/projection`, an alias of the token
//! embedding) is left out. Matrices and conv kernels are written as f16, vectors, conv biases and
//! the positional embeddings as f32, as whisper.cpp's `convert-pt-to-ggml.py` does. f16/bf16/f32
//! weights convert directly; int8/int16 weights are dequantized with their `_scale` first.

mod ct2;
mod ggml;
mod mel;
mod vocab;

use std::fs::{self, File};
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};
use std::time::Instant;

pub use ct2::{Ct2Dtype, Ct2Model, Ct2Variable, Values, ValuesRef, MAX_BINARY_VERSION};
pub use ggml::{read_ggml_header, GgmlHeader, GgmlTensorInfo, GgmlType, Hparams, GGML_MAGIC};
pub use mel::mel_filters;
pub use vocab::{ggml_tokens, read_token_strings, token_bytes, unicode_to_byte, VocabSource};

use ggml::HashingWriter;

/// The newest `WhisperSpec` revision whose layout this converter knows.
pub const MAX_WHISPER_REVISION: u32 = 3;

/// What [`convert_ct2_to_ggml`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Converted {
    /// The ggml file.
    pub path: PathBuf,
    /// Hex SHA-256 of the file.
    pub sha256: String,
    /// File size in bytes.
    pub bytes: u64,
    /// Whether the model is multilingual (`n_vocab >= 51865`), as whisper.cpp decides it.
    pub multilingual: bool,
    /// Rows of the token embedding.
    pub n_vocab: u32,
    /// `(encoder layers, decoder layers)`.
    pub layers: (u32, u32),
}

/// Why a conversion failed.
#[derive(Debug, thiserror::Error)]
pub enum ConvertError {
    #[error("{0} does not exist or is not a folder")]
    NoSuchFolder(PathBuf),
    #[error("{dir} is not a CTranslate2 model folder: {missing} is missing")]
    NotCt2Folder { dir: PathBuf, missing: String },
    #[error("{path}: CTranslate2 binary version {version} is not supported (known: 1 to {max})", path = .path.display(), max = MAX_BINARY_VERSION)]
    UnsupportedVersion { path: PathBuf, version: u32 },
    #[error("unsupported model: {0}")]
    UnsupportedSpec(String),
    #[error("variable {name:?} has an unsupported data type: {dtype}")]
    UnsupportedDtype { name: String, dtype: String },
    #[error("{path} is truncated: {detail}", path = .path.display())]
    Truncated { path: PathBuf, detail: String },
    #[error("{path} is corrupt: {detail}", path = .path.display())]
    Corrupt { path: PathBuf, detail: String },
    #[error("the model has no variable {name:?}")]
    MissingTensor { name: String },
    #[error("variable {name:?} has shape {got:?}, expected {expected:?}")]
    ShapeMismatch {
        name: String,
        expected: Vec<u64>,
        got: Vec<u64>,
    },
    #[error("vocabulary {path}: {detail}", path = .path.display())]
    Vocabulary { path: PathBuf, detail: String },
    #[error("the written file {path} failed verification: {detail}", path = .path.display())]
    Verify { path: PathBuf, detail: String },
    #[error("{path}: {source}", path = .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// Reads the variable index of a CTranslate2 `model.bin` (no tensor data).
pub fn read_ct2_model(model_bin: &Path) -> Result<Ct2Model, ConvertError> {
    Ct2Model::open(model_bin)
}

/// Where an output tensor's values come from.
#[derive(Debug, Clone)]
enum Source {
    /// A whole CTranslate2 variable.
    Whole(String),
    /// Row block `part` of `parts` equal blocks of a fused variable.
    Rows { name: String, part: u64, parts: u64 },
}

impl Source {
    fn name(&self) -> &str {
        match self {
            Self::Whole(n) | Self::Rows { name: n, .. } => n,
        }
    }
}

/// One tensor of the output file.
#[derive(Debug, Clone)]
struct Planned {
    name: String,
    /// Row-major shape of the output tensor.
    shape: Vec<u64>,
    ty: GgmlType,
    src: Source,
}

/// Converts the CTranslate2 Whisper model in `ct2_dir` to a ggml file at `out` (written
/// atomically: temp file + rename); verifies the result by re-reading its header.
pub fn convert_ct2_to_ggml(ct2_dir: &Path, out: &Path) -> Result<Converted, ConvertError> {
    let started = Instant::now();
    if !ct2_dir.is_dir() {
        return Err(ConvertError::NoSuchFolder(ct2_dir.to_path_buf()));
    }
    let model_bin = ct2_dir.join("model.bin");
    if !model_bin.is_file() {
        return Err(ConvertError::NotCt2Folder {
            dir: ct2_dir.to_path_buf(),
            missing: "model.bin".into(),
        });
    }
    // Fail on a missing vocabulary before reading any weights.
    read_token_strings(ct2_dir)?;

    let model = Ct2Model::open(&model_bin)?;
    check_spec(&model)?;
    let hparams = whisper_hparams(&model)?;
    check_tied_projection(&model)?;
    let plan = plan_tensors(&hparams);
    for p in &plan {
        check_source_shape(&model, p)?;
    }

    let tokens = ggml_tokens(ct2_dir, hparams.n_vocab as u64)?;
    let n_mels = hparams.n_mels as usize;
    let filters = mel_filters(n_mels);

    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&parent).map_err(|source| ConvertError::Io {
        path: parent.clone(),
        source,
    })?;
    let file_name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "model.bin".into());
    let tmp = parent.join(format!(".{file_name}.partial-{}", std::process::id()));

    let result = write_and_verify(&model, &hparams, &plan, n_mels, &filters, &tokens, &tmp);
    let (sha256, bytes) = match result {
        Ok(v) => v,
        Err(e) => {
            let _ = fs::remove_file(&tmp);
            return Err(e);
        }
    };
    if let Err(source) = fs::rename(&tmp, out) {
        let _ = fs::remove_file(&tmp);
        return Err(ConvertError::Io {
            path: out.to_path_buf(),
            source,
        });
    }
    if let Ok(dir) = File::open(&parent) {
        // Persist the rename where the platform allows syncing a directory.
        let _ = dir.sync_all();
    }

    let converted = Converted {
        path: out.to_path_buf(),
        sha256,
        bytes,
        multilingual: hparams.n_vocab >= 51865,
        n_vocab: hparams.n_vocab as u32,
        layers: (hparams.n_audio_layer as u32, hparams.n_text_layer as u32),
    };
    tracing::info!(
        from = %ct2_dir.display(),
        to = %out.display(),
        bytes = converted.bytes,
        n_vocab = converted.n_vocab,
        layers = ?converted.layers,
        elapsed_ms = started.elapsed().as_millis() as u64,
        "converted CTranslate2 whisper model to ggml"
    );
    Ok(converted)
}

fn check_spec(model: &Ct2Model) -> Result<(), ConvertError> {
    if model.spec != "WhisperSpec" {
        let spec = if model.spec.is_empty() {
            "an unnamed spec (binary version 1)".to_string()
        } else {
            format!("spec {:?}", model.spec)
        };
        return Err(ConvertError::UnsupportedSpec(format!(
            "{} holds {spec}, not WhisperSpec",
            model.path.display()
        )));
    }
    if model.revision > MAX_WHISPER_REVISION {
        return Err(ConvertError::UnsupportedSpec(format!(
            "WhisperSpec revision {} is newer than the known layout (revision {MAX_WHISPER_REVISION})",
            model.revision
        )));
    }
    if let Some(var) = model.get("decoder/scale_embeddings") {
        if model.read_raw(var)?.iter().any(|&b| b != 0) {
            return Err(ConvertError::UnsupportedSpec(
                "decoder/scale_embeddings is set; whisper does not scale its embeddings".into(),
            ));
        }
    }
    Ok(())
}

fn shape_of(model: &Ct2Model, name: &str) -> Result<Vec<u64>, ConvertError> {
    model
        .get(name)
        .map(|v| v.shape.clone())
        .ok_or_else(|| ConvertError::MissingTensor { name: name.into() })
}

fn dim(shape: &[u64], i: usize, name: &str, rank: usize) -> Result<u64, ConvertError> {
    if shape.len() != rank {
        return Err(ConvertError::UnsupportedSpec(format!(
            "variable {name:?} has shape {shape:?}, expected rank {rank}"
        )));
    }
    Ok(shape[i])
}

fn to_i32(v: u64, what: &str) -> Result<i32, ConvertError> {
    i32::try_from(v)
        .map_err(|_| ConvertError::UnsupportedSpec(format!("{what} = {v} is out of range")))
}

fn count_layers(model: &Ct2Model, prefix: &str) -> u64 {
    (0u64..)
        .take_while(|i| {
            model.contains(&format!(
                "{prefix}/layer_{i}/self_attention/linear_0/weight"
            ))
        })
        .count() as u64
}

/// An integer scalar such as `encoder/num_heads`.
fn read_scalar_int(model: &Ct2Model, name: &str) -> Result<Option<u64>, ConvertError> {
    let Some(var) = model.get(name) else {
        return Ok(None);
    };
    let raw = model.read_raw(var)?;
    let v = match (var.dtype, raw.as_slice()) {
        (Ct2Dtype::I8, [a]) => i64::from(*a as i8),
        (Ct2Dtype::I16, [a, b]) => i64::from(i16::from_le_bytes([*a, *b])),
        (Ct2Dtype::I32, [a, b, c, d]) => i64::from(i32::from_le_bytes([*a, *b, *c, *d])),
        _ => {
            return Err(ConvertError::UnsupportedDtype {
                name: name.into(),
                dtype: format!(
                    "{} {:?} (expected an integer scalar)",
                    var.dtype.name(),
                    var.shape
                ),
            })
        }
    };
    u64::try_from(v)
        .map(Some)
        .map_err(|_| ConvertError::UnsupportedSpec(format!("{name} = {v}")))
}

fn whisper_hparams(model: &Ct2Model) -> Result<Hparams, ConvertError> {
    let conv1 = "encoder/conv1/weight";
    let conv1_shape = shape_of(model, conv1)?;
    let d = dim(&conv1_shape, 0, conv1, 3)?;
    let n_mels = conv1_shape[1];
    if conv1_shape[2] != 3 {
        return Err(ConvertError::ShapeMismatch {
            name: conv1.into(),
            expected: vec![d, n_mels, 3],
            got: conv1_shape,
        });
    }
    let enc_pos = "encoder/position_encodings/encodings";
    let enc_pos_shape = shape_of(model, enc_pos)?;
    let n_audio_ctx = dim(&enc_pos_shape, 0, enc_pos, 2)?;
    let emb = "decoder/embeddings/weight";
    let emb_shape = shape_of(model, emb)?;
    let n_vocab = dim(&emb_shape, 0, emb, 2)?;
    if emb_shape[1] != d {
        return Err(ConvertError::UnsupportedSpec(format!(
            "decoder width {} differs from encoder width {d}; whisper.cpp needs them equal",
            emb_shape[1]
        )));
    }
    let dec_pos = "decoder/position_encodings/encodings";
    let dec_pos_shape = shape_of(model, dec_pos)?;
    let n_text_ctx = dim(&dec_pos_shape, 0, dec_pos, 2)?;

    let n_audio_layer = count_layers(model, "encoder");
    let n_text_layer = count_layers(model, "decoder");
    if n_audio_layer == 0 || n_text_layer == 0 {
        return Err(ConvertError::MissingTensor {
            name: if n_audio_layer == 0 {
                "encoder/layer_0/self_attention/linear_0/weight".into()
            } else {
                "decoder/layer_0/self_attention/linear_0/weight".into()
            },
        });
    }
    // Whisper's heads are 64 wide; older specs do not store the head count.
    let n_audio_head = read_scalar_int(model, "encoder/num_heads")?.unwrap_or(d / 64);
    let n_text_head = read_scalar_int(model, "decoder/num_heads")?.unwrap_or(d / 64);
    if n_audio_head == 0 || d % n_audio_head != 0 || n_text_head == 0 || d % n_text_head != 0 {
        return Err(ConvertError::UnsupportedSpec(format!(
            "{n_audio_head}/{n_text_head} attention heads do not divide the width {d}"
        )));
    }

    Ok(Hparams {
        n_vocab: to_i32(n_vocab, "n_vocab")?,
        n_audio_ctx: to_i32(n_audio_ctx, "n_audio_ctx")?,
        n_audio_state: to_i32(d, "n_audio_state")?,
        n_audio_head: to_i32(n_audio_head, "n_audio_head")?,
        n_audio_layer: to_i32(n_audio_layer, "n_audio_layer")?,
        n_text_ctx: to_i32(n_text_ctx, "n_text_ctx")?,
        n_text_state: to_i32(d, "n_text_state")?,
        n_text_head: to_i32(n_text_head, "n_text_head")?,
        n_text_layer: to_i32(n_text_layer, "n_text_layer")?,
        n_mels: to_i32(n_mels, "n_mels")?,
        ftype: 1,
    })
}

/// whisper.cpp ties the output projection to the token embedding: refuse a model whose
/// projection is a separate, different matrix (or has a bias).
fn check_tied_projection(model: &Ct2Model) -> Result<(), ConvertError> {
    let proj = "decoder/projection/weight";
    if let Some(bias) = model.get("decoder/projection/bias") {
        if model.read_float(bias)?.iter().any(|&v| v != 0.0) {
            return Err(ConvertError::UnsupportedSpec(
                "the output projection has a bias; whisper.cpp has none".into(),
            ));
        }
    }
    if !model.contains(proj) || model.is_alias(proj) {
        return Ok(());
    }
    let (_, p) = model.read_weight_f32(proj)?;
    let (_, e) = model.read_weight_f32("decoder/embeddings/weight")?;
    if p != e {
        return Err(ConvertError::UnsupportedSpec(
            "the output projection differs from the token embedding; whisper.cpp ties them".into(),
        ));
    }
    Ok(())
}

/// Builds the output tensor list in the order of openai-whisper's state dict.
struct Planner {
    d: u64,
    plan: Vec<Planned>,
}

impl Planner {
    fn push(&mut self, name: String, shape: Vec<u64>, src: Source) {
        // As convert-pt-to-ggml.py: matrices and conv kernels f16; vectors, conv biases
        // (`[n, 1]`) and positional embeddings f32.
        let ty = if shape.len() >= 2 && !name.ends_with(".bias") && !name.contains("positional") {
            GgmlType::F16
        } else {
            GgmlType::F32
        };
        self.plan.push(Planned {
            name,
            shape,
            ty,
            src,
        });
    }

    /// A `d × d` projection `out` from row block `part` of `parts` of `src` (`parts == 1`: all).
    fn linear(&mut self, out: &str, src: &str, part: u64, parts: u64, bias: bool) {
        let source = |leaf: &str| {
            let name = format!("{src}/{leaf}");
            if parts == 1 {
                Source::Whole(name)
            } else {
                Source::Rows { name, part, parts }
            }
        };
        let d = self.d;
        self.push(format!("{out}.weight"), vec![d, d], source("weight"));
        if bias {
            self.push(format!("{out}.bias"), vec![d], source("bias"));
        }
    }

    fn whole(&mut self, out: String, shape: Vec<u64>, src: String) {
        self.push(out, shape, Source::Whole(src));
    }

    fn layer_norm(&mut self, out: &str, src: &str) {
        let d = self.d;
        self.whole(format!("{out}.weight"), vec![d], format!("{src}/gamma"));
        self.whole(format!("{out}.bias"), vec![d], format!("{src}/beta"));
    }

    fn self_attention(&mut self, out: &str, src: &str) {
        let fused = format!("{src}/self_attention/linear_0");
        self.linear(&format!("{out}.attn.query"), &fused, 0, 3, true);
        self.linear(&format!("{out}.attn.key"), &fused, 1, 3, false);
        self.linear(&format!("{out}.attn.value"), &fused, 2, 3, true);
        self.linear(
            &format!("{out}.attn.out"),
            &format!("{src}/self_attention/linear_1"),
            0,
            1,
            true,
        );
        self.layer_norm(
            &format!("{out}.attn_ln"),
            &format!("{src}/self_attention/layer_norm"),
        );
    }

    fn cross_attention(&mut self, out: &str, src: &str) {
        let cross = format!("{src}/attention");
        self.linear(
            &format!("{out}.cross_attn.query"),
            &format!("{cross}/linear_0"),
            0,
            1,
            true,
        );
        let kv = format!("{cross}/linear_1");
        self.linear(&format!("{out}.cross_attn.key"), &kv, 0, 2, false);
        self.linear(&format!("{out}.cross_attn.value"), &kv, 1, 2, true);
        self.linear(
            &format!("{out}.cross_attn.out"),
            &format!("{cross}/linear_2"),
            0,
            1,
            true,
        );
        self.layer_norm(
            &format!("{out}.cross_attn_ln"),
            &format!("{cross}/layer_norm"),
        );
    }

    fn mlp(&mut self, out: &str, src: &str) {
        let d = self.d;
        let ffn = format!("{src}/ffn");
        self.whole(
            format!("{out}.mlp.0.weight"),
            vec![4 * d, d],
            format!("{ffn}/linear_0/weight"),
        );
        self.whole(
            format!("{out}.mlp.0.bias"),
            vec![4 * d],
            format!("{ffn}/linear_0/bias"),
        );
        self.whole(
            format!("{out}.mlp.2.weight"),
            vec![d, 4 * d],
            format!("{ffn}/linear_1/weight"),
        );
        self.whole(
            format!("{out}.mlp.2.bias"),
            vec![d],
            format!("{ffn}/linear_1/bias"),
        );
        self.layer_norm(&format!("{out}.mlp_ln"), &format!("{ffn}/layer_norm"));
    }
}

fn plan_tensors(hp: &Hparams) -> Vec<Planned> {
    let d = hp.n_audio_state as u64;
    let mut p = Planner {
        d,
        plan: Vec::new(),
    };
    p.whole(
        "encoder.positional_embedding".into(),
        vec![hp.n_audio_ctx as u64, d],
        "encoder/position_encodings/encodings".into(),
    );
    for (i, in_channels) in [(1, hp.n_mels as u64), (2, d)] {
        p.whole(
            format!("encoder.conv{i}.weight"),
            vec![d, in_channels, 3],
            format!("encoder/conv{i}/weight"),
        );
        p.whole(
            format!("encoder.conv{i}.bias"),
            vec![d, 1],
            format!("encoder/conv{i}/bias"),
        );
    }
    for i in 0..hp.n_audio_layer {
        let (out, src) = (format!("encoder.blocks.{i}"), format!("encoder/layer_{i}"));
        p.self_attention(&out, &src);
        p.mlp(&out, &src);
    }
    p.layer_norm("encoder.ln_post", "encoder/layer_norm");

    p.whole(
        "decoder.positional_embedding".into(),
        vec![hp.n_text_ctx as u64, d],
        "decoder/position_encodings/encodings".into(),
    );
    p.whole(
        "decoder.token_embedding.weight".into(),
        vec![hp.n_vocab as u64, d],
        "decoder/embeddings/weight".into(),
    );
    for i in 0..hp.n_text_layer {
        let (out, src) = (format!("decoder.blocks.{i}"), format!("decoder/layer_{i}"));
        p.self_attention(&out, &src);
        p.cross_attention(&out, &src);
        p.mlp(&out, &src);
    }
    p.layer_norm("decoder.ln", "decoder/layer_norm");
    p.plan
}

/// The shape a planned tensor's source variable must have.
fn expected_source_shape(p: &Planned) -> Vec<u64> {
    match &p.src {
        Source::Whole(_) if p.name.starts_with("encoder.conv") && p.name.ends_with(".bias") => {
            vec![p.shape[0]]
        }
        Source::Whole(_) => p.shape.clone(),
        Source::Rows { parts, .. } => {
            let mut s = p.shape.clone();
            s[0] *= parts;
            s
        }
    }
}

fn check_source_shape(model: &Ct2Model, p: &Planned) -> Result<(), ConvertError> {
    let name = p.src.name();
    let got = shape_of(model, name)?;
    let expected = expected_source_shape(p);
    if got != expected {
        return Err(ConvertError::ShapeMismatch {
            name: name.into(),
            expected,
            got,
        });
    }
    Ok(())
}

fn write_and_verify(
    model: &Ct2Model,
    hparams: &Hparams,
    plan: &[Planned],
    n_mels: usize,
    filters: &[f32],
    tokens: &[Vec<u8>],
    tmp: &Path,
) -> Result<(String, u64), ConvertError> {
    let io_err = |source| ConvertError::Io {
        path: tmp.to_path_buf(),
        source,
    };
    let file = File::create(tmp).map_err(io_err)?;
    let mut w = HashingWriter::new(BufWriter::with_capacity(1 << 20, file));
    ggml::write_header(&mut w, hparams, n_mels, filters, tokens).map_err(io_err)?;

    // The fused q;k;v and k;v matrices feed several outputs in a row: keep the last one read.
    let mut cached: Option<(String, Values)> = None;
    for p in plan {
        let src_name = p.src.name();
        let values = match &cached {
            Some((n, v)) if n == src_name => v,
            _ => {
                let (_, v) = model.read_weight(src_name)?;
                &cached.insert((src_name.to_string(), v)).1
            }
        };
        let slice = match &p.src {
            Source::Whole(_) => values.as_ref(),
            Source::Rows { part, parts, .. } => {
                let block = values.len() / *parts as usize;
                values.slice(block * *part as usize, block)
            }
        };
        ggml::write_tensor(&mut w, &p.name, &p.shape, p.ty, slice).map_err(io_err)?;
    }

    let (buf, sha256, bytes) = w.finish();
    let file = buf
        .into_inner()
        .map_err(|e| io_err(io::Error::other(e.to_string())))?;
    file.sync_all().map_err(io_err)?;
    drop(file);

    verify(
        tmp,
        hparams,
        n_mels,
        filters.len(),
        tokens.len(),
        plan,
        bytes,
    )?;
    Ok((sha256, bytes))
}

fn verify(
    path: &Path,
    hparams: &Hparams,
    n_mels: usize,
    n_filters: usize,
    n_tokens: usize,
    plan: &[Planned],
    bytes: u64,
) -> Result<(), ConvertError> {
    let fail = |detail: String| ConvertError::Verify {
        path: path.to_path_buf(),
        detail,
    };
    let header = read_ggml_header(path).map_err(|e| fail(e.to_string()))?;
    if header.hparams != *hparams {
        return Err(fail(format!(
            "hparams read back as {:?}, wrote {hparams:?}",
            header.hparams
        )));
    }
    if header.n_mel as usize != n_mels || (header.n_mel * header.n_fft) as usize != n_filters {
        return Err(fail(format!(
            "mel filters read back as {}x{}",
            header.n_mel, header.n_fft
        )));
    }
    if header.n_tokens as usize != n_tokens {
        return Err(fail(format!(
            "{} tokens read back, wrote {n_tokens}",
            header.n_tokens
        )));
    }
    if header.bytes != bytes {
        return Err(fail(format!(
            "file has {} bytes, wrote {bytes}",
            header.bytes
        )));
    }
    if header.tensors.len() != plan.len() {
        return Err(fail(format!(
            "{} tensors read back, wrote {}",
            header.tensors.len(),
            plan.len()
        )));
    }
    for (t, p) in header.tensors.iter().zip(plan) {
        let ne: Vec<u64> = p.shape.iter().rev().copied().collect();
        if t.name != p.name || t.ne != ne || t.ty != p.ty {
            return Err(fail(format!(
                "tensor {:?} {:?} {:?} read back where {:?} {ne:?} {:?} was written",
                t.name, t.ne, t.ty, p.name, p.ty
            )));
        }
    }
    Ok(())
}
