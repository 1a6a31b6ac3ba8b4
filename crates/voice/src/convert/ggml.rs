//! whisper.cpp's legacy ggml model file: writing it (hashing as it goes) and reading back its
//! header and tensor index to verify what was written.
//!
//! Layout (little-endian `i32` unless said), as whisper.cpp's `convert-pt-to-ggml.py` writes it and
//! `whisper_model_load` reads it: magic `0x67676d6c`; hparams `n_vocab, n_audio_ctx,
//! n_audio_state, n_audio_head, n_audio_layer, n_text_ctx, n_text_state, n_text_head,
//! n_text_layer, n_mels, ftype`; the mel filters (`n_mel`, `n_fft`, then `n_mel × n_fft` f32);
//! the vocabulary (count, then per token a `u32` length and its bytes); then each tensor:
//! `n_dims`, name length, type (0 = f32, 1 = f16), the dims innermost first, the name, the data.

use std::fs::File;
use std::io::{self, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::ct2::ValuesRef;
use super::ConvertError;

/// `ggml` in ASCII, read as a little-endian u32.
pub const GGML_MAGIC: u32 = 0x6767_6d6c;

/// Whisper's hyper-parameters, in file order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hparams {
    pub n_vocab: i32,
    pub n_audio_ctx: i32,
    pub n_audio_state: i32,
    pub n_audio_head: i32,
    pub n_audio_layer: i32,
    pub n_text_ctx: i32,
    pub n_text_state: i32,
    pub n_text_head: i32,
    pub n_text_layer: i32,
    pub n_mels: i32,
    /// 0 = all f32, 1 = f16 weights.
    pub ftype: i32,
}

impl Hparams {
    fn to_array(self) -> [i32; 11] {
        [
            self.n_vocab,
            self.n_audio_ctx,
            self.n_audio_state,
            self.n_audio_head,
            self.n_audio_layer,
            self.n_text_ctx,
            self.n_text_state,
            self.n_text_head,
            self.n_text_layer,
            self.n_mels,
            self.ftype,
        ]
    }

    fn from_array(a: [i32; 11]) -> Self {
        Self {
            n_vocab: a[0],
            n_audio_ctx: a[1],
            n_audio_state: a[2],
            n_audio_head: a[3],
            n_audio_layer: a[4],
            n_text_ctx: a[5],
            n_text_state: a[6],
            n_text_head: a[7],
            n_text_layer: a[8],
            n_mels: a[9],
            ftype: a[10],
        }
    }
}

/// Element type of a ggml tensor in this file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GgmlType {
    F32,
    F16,
}

impl GgmlType {
    fn id(self) -> i32 {
        match self {
            Self::F32 => 0,
            Self::F16 => 1,
        }
    }

    fn size(self) -> u64 {
        match self {
            Self::F32 => 4,
            Self::F16 => 2,
        }
    }
}

/// One tensor entry of a ggml file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GgmlTensorInfo {
    pub name: String,
    /// Dims as ggml counts them: innermost (fastest-varying) first.
    pub ne: Vec<u64>,
    pub ty: GgmlType,
    /// Offset of the first data byte in the file.
    pub offset: u64,
}

/// What a ggml whisper file says about itself.
#[derive(Debug, Clone, PartialEq)]
pub struct GgmlHeader {
    pub hparams: Hparams,
    pub n_mel: u32,
    pub n_fft: u32,
    pub n_tokens: u32,
    pub tensors: Vec<GgmlTensorInfo>,
    /// Total file size in bytes.
    pub bytes: u64,
}

/// A writer that feeds every byte to a SHA-256 and counts them.
pub struct HashingWriter<W: Write> {
    inner: W,
    hasher: Sha256,
    written: u64,
}

impl<W: Write> HashingWriter<W> {
    pub fn new(inner: W) -> Self {
        Self {
            inner,
            hasher: Sha256::new(),
            written: 0,
        }
    }

    /// The inner writer, the hex SHA-256 and the byte count.
    pub fn finish(self) -> (W, String, u64) {
        let digest = self.hasher.finalize();
        let hex = digest.iter().map(|b| format!("{b:02x}")).collect();
        (self.inner, hex, self.written)
    }

    fn i32(&mut self, v: i32) -> io::Result<()> {
        self.write_all(&v.to_le_bytes())
    }
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Writes the header: magic, hparams, mel filters, vocabulary.
pub fn write_header<W: Write>(
    w: &mut HashingWriter<W>,
    hparams: &Hparams,
    n_mel: usize,
    filters: &[f32],
    tokens: &[Vec<u8>],
) -> io::Result<()> {
    w.write_all(&GGML_MAGIC.to_le_bytes())?;
    for v in hparams.to_array() {
        w.i32(v)?;
    }
    let n_fft = filters.len() / n_mel.max(1);
    w.i32(to_i32(n_mel)?)?;
    w.i32(to_i32(n_fft)?)?;
    let mut buf = Vec::with_capacity(filters.len() * 4);
    for f in filters {
        buf.extend_from_slice(&f.to_le_bytes());
    }
    w.write_all(&buf)?;
    w.i32(to_i32(tokens.len())?)?;
    for t in tokens {
        w.write_all(&u32::try_from(t.len()).map_err(invalid)?.to_le_bytes())?;
        w.write_all(t)?;
    }
    Ok(())
}

/// Writes one tensor. `shape` is in row-major order (outermost first), as PyTorch and
/// CTranslate2 give it; ggml's dims are written reversed. f16 input bound for an f16 tensor is
/// copied as is.
pub fn write_tensor<W: Write>(
    w: &mut HashingWriter<W>,
    name: &str,
    shape: &[u64],
    ty: GgmlType,
    values: ValuesRef<'_>,
) -> io::Result<()> {
    let numel: u64 = shape.iter().product();
    if numel != values.len() as u64 {
        return Err(invalid(format!(
            "{name}: shape {shape:?} but {} values",
            values.len()
        )));
    }
    w.i32(to_i32(shape.len())?)?;
    w.i32(to_i32(name.len())?)?;
    w.i32(ty.id())?;
    for &d in shape.iter().rev() {
        w.i32(i32::try_from(d).map_err(invalid)?)?;
    }
    w.write_all(name.as_bytes())?;
    match (ty, values) {
        (GgmlType::F16, ValuesRef::F16(bytes)) => w.write_all(bytes),
        (GgmlType::F16, ValuesRef::F32(v)) => {
            let mut buf = Vec::with_capacity(v.len() * 2);
            for x in v {
                buf.extend_from_slice(&half::f16::from_f32(*x).to_bits().to_le_bytes());
            }
            w.write_all(&buf)
        }
        (GgmlType::F32, ValuesRef::F16(bytes)) => {
            let mut buf = Vec::with_capacity(bytes.len() * 2);
            for b in bytes.chunks_exact(2) {
                let x = half::f16::from_bits(u16::from_le_bytes([b[0], b[1]])).to_f32();
                buf.extend_from_slice(&x.to_le_bytes());
            }
            w.write_all(&buf)
        }
        (GgmlType::F32, ValuesRef::F32(v)) => {
            let mut buf = Vec::with_capacity(v.len() * 4);
            for x in v {
                buf.extend_from_slice(&x.to_le_bytes());
            }
            w.write_all(&buf)
        }
    }
}

fn to_i32(n: usize) -> io::Result<i32> {
    i32::try_from(n).map_err(invalid)
}

fn invalid<E: ToString>(e: E) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e.to_string())
}

/// Reads the header and the tensor index of a ggml whisper file, skipping the tensor data, and
/// checks that the file ends exactly after the last tensor.
pub fn read_ggml_header(path: &Path) -> Result<GgmlHeader, ConvertError> {
    let io_err = |source| ConvertError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = File::open(path).map_err(io_err)?;
    let len = file.metadata().map_err(io_err)?.len();
    let mut r = Reader {
        inner: BufReader::with_capacity(1 << 16, file),
        pos: 0,
        len,
        path: path.to_path_buf(),
    };
    let magic = r.u32("the magic")?;
    if magic != GGML_MAGIC {
        return Err(r.corrupt(format!("bad magic {magic:#010x}, not a ggml file")));
    }
    let mut hp = [0i32; 11];
    for v in hp.iter_mut() {
        *v = r.i32("the hparams")?;
    }
    let hparams = Hparams::from_array(hp);
    let n_mel = r.u32("the mel filter rows")?;
    let n_fft = r.u32("the mel filter columns")?;
    r.skip(u64::from(n_mel) * u64::from(n_fft) * 4, "the mel filters")?;
    let n_tokens = r.u32("the token count")?;
    for i in 0..n_tokens {
        let n = r.u32("a token length")?;
        if n > 1024 {
            return Err(r.corrupt(format!("token {i} claims {n} bytes")));
        }
        r.skip(u64::from(n), "a token")?;
    }
    let mut tensors = Vec::new();
    while r.pos < len {
        let n_dims = r.u32("a tensor's rank")?;
        let name_len = r.u32("a tensor's name length")?;
        let ty = match r.u32("a tensor's type")? {
            0 => GgmlType::F32,
            1 => GgmlType::F16,
            other => return Err(r.corrupt(format!("tensor type {other} is not f32/f16"))),
        };
        if n_dims == 0 || n_dims > 4 || name_len == 0 || name_len > 512 {
            return Err(r.corrupt(format!(
                "tensor #{} has rank {n_dims} and a {name_len}-byte name",
                tensors.len()
            )));
        }
        let mut ne = Vec::with_capacity(n_dims as usize);
        for _ in 0..n_dims {
            ne.push(u64::from(r.u32("a tensor's dims")?));
        }
        let name_bytes = r.bytes(u64::from(name_len), "a tensor's name")?;
        let name = String::from_utf8(name_bytes)
            .map_err(|_| r.corrupt("a tensor name is not UTF-8".into()))?;
        let numel: u64 = ne.iter().product();
        let offset = r.pos;
        r.skip(numel * ty.size(), "a tensor's data")?;
        tensors.push(GgmlTensorInfo {
            name,
            ne,
            ty,
            offset,
        });
    }
    Ok(GgmlHeader {
        hparams,
        n_mel,
        n_fft,
        n_tokens,
        tensors,
        bytes: len,
    })
}

struct Reader {
    inner: BufReader<File>,
    pos: u64,
    len: u64,
    path: PathBuf,
}

impl Reader {
    fn corrupt(&self, detail: String) -> ConvertError {
        ConvertError::Corrupt {
            path: self.path.clone(),
            detail,
        }
    }

    fn check(&self, n: u64, what: &str) -> Result<(), ConvertError> {
        if self.pos.saturating_add(n) > self.len {
            return Err(ConvertError::Truncated {
                path: self.path.clone(),
                detail: format!(
                    "{what} needs {n} bytes at offset {} but the file has {} bytes",
                    self.pos, self.len
                ),
            });
        }
        Ok(())
    }

    fn bytes(&mut self, n: u64, what: &str) -> Result<Vec<u8>, ConvertError> {
        self.check(n, what)?;
        let mut buf = vec![0u8; n as usize];
        self.inner
            .read_exact(&mut buf)
            .map_err(|source| ConvertError::Io {
                path: self.path.clone(),
                source,
            })?;
        self.pos += n;
        Ok(buf)
    }

    fn u32(&mut self, what: &str) -> Result<u32, ConvertError> {
        let b = self.bytes(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn i32(&mut self, what: &str) -> Result<i32, ConvertError> {
        let b = self.bytes(4, what)?;
        Ok(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn skip(&mut self, n: u64, what: &str) -> Result<(), ConvertError> {
        self.check(n, what)?;
        let delta = i64::try_from(n).map_err(|_| self.corrupt(format!("{what}: size {n}")))?;
        self.inner
            .seek_relative(delta)
            .map_err(|source| ConvertError::Io {
                path: self.path.clone(),
                source,
            })?;
        self.pos += n;
        Ok(())
    }
}
