//! The real all-MiniLM-L6-v2, as installed by `./run setup` (or at `$CAIRN_EMBED_MODEL`).

use std::path::PathBuf;

use cairn_embed::MiniLm;

fn model_dir() -> PathBuf {
    if let Ok(dir) = std::env::var("CAIRN_EMBED_MODEL") {
        return PathBuf::from(dir);
    }
    let home = std::env::var("CAIRN_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(std::env::var("HOME").unwrap_or_default()).join(".cairn")
        });
    home.join("models").join(cairn_embed::MODEL_NAME)
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn similar_sentences_are_close_and_others_far() -> Result<(), Box<dyn std::error::Error>> {
    let dir = model_dir();
    let model =
        MiniLm::load(&dir).map_err(|e| format!("{e} (run ./run setup to install the model)"))?;
    let dog = model.embed("A dog is playing in the park.");
    let puppy = model.embed("A puppy runs around on the grass.");
    let market = model.embed("The stock market fell sharply today.");
    assert_eq!(dog.len(), 384);
    let norm: f32 = dog.iter().map(|v| v * v).sum::<f32>().sqrt();
    assert!((norm - 1.0).abs() < 1e-4, "{norm}");
    // Reference values from an independent NumPy implementation of the same checkpoint.
    let close = cosine(&dog, &puppy);
    let far = cosine(&dog, &market);
    assert!((close - 0.3887).abs() < 2e-3, "dog/puppy {close}");
    assert!((far - 0.0476).abs() < 2e-3, "dog/market {far}");
    let head = [0.05570, -0.07352, 0.06378, -0.01312, 0.02936];
    for (got, want) in dog.iter().zip(head) {
        assert!((got - want).abs() < 1e-3, "{:?}", &dog[..5]);
    }
    Ok(())
}

#[test]
fn wordpiece_matches_the_reference_tokenizer() -> Result<(), Box<dyn std::error::Error>> {
    let vocab = std::fs::read_to_string(model_dir().join("vocab.txt"))?;
    let tokenizer = cairn_embed::WordPiece::new(&vocab)?;
    assert_eq!(
        tokenizer.encode("A puppy runs around on the grass.", 256),
        vec![101, 1037, 17022, 3216, 2105, 2006, 1996, 5568, 1012, 102]
    );
    Ok(())
}

#[test]
fn the_same_text_gives_the_same_vector() -> Result<(), Box<dyn std::error::Error>> {
    let model = MiniLm::load(&model_dir())?;
    assert_eq!(
        model.embed("remember to water the plants"),
        model.embed("remember to water the plants")
    );
    assert_eq!(model.embed("").len(), 384);
    Ok(())
}

#[test]
fn a_query_s_fast_embedding_stays_with_the_exact_one() -> Result<(), Box<dyn std::error::Error>> {
    use cairn_embed::Precision;
    let model = MiniLm::load(&model_dir())?;
    for query in [
        "what did we decide about the staging database migration",
        "who owns the payments service",
        "港口的数据库迁移是什么时候",
        "x",
    ] {
        let fast = model.embed_with(query, Precision::Fast);
        let exact = model.embed_with(query, Precision::Exact);
        assert_eq!(fast, model.embed(query), "queries take the fast path");
        let cos = cosine(&fast, &exact);
        assert!(cos > 0.99999 && cos <= 1.00001, "{query}: cosine {cos}");
    }
    // Past 32 tokens the fast path is the f32 multiply, or the integer one where the CPU has
    // VNNI: either way the vectors agree.
    let long = "the deploy of the payments service failed again last night: the migration that \
                adds the invoices index timed out after ten minutes, the health check marked the \
                pods as unready and the rollout stopped half way through the second region";
    let cos = cosine(
        &model.embed_with(long, Precision::Fast),
        &model.embed_with(long, Precision::Exact),
    );
    assert!(cos > 0.99999 && cos <= 1.00001, "long input: cosine {cos}");
    Ok(())
}

#[test]
fn a_missing_model_is_a_clear_error() {
    let err = MiniLm::load(std::path::Path::new("/nonexistent/model"))
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("/nonexistent/model/vocab.txt"), "{err}");
}

#[test]
fn the_app_s_embedder_loads_on_use_and_unloads_when_idle() -> Result<(), Box<dyn std::error::Error>>
{
    use cairn_memory::Embedder;
    let idle = cairn_embed::IdleMiniLm::new(model_dir(), std::time::Duration::from_secs(1));
    assert!(
        !idle.is_loaded(),
        "nothing is read before the first embedding"
    );
    assert_eq!(idle.dim(), 384);
    let first = idle.embed("A dog is playing in the park.")?;
    assert!(idle.is_loaded());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while idle.is_loaded() {
        assert!(std::time::Instant::now() < deadline, "never unloaded");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // Loaded again, it embeds the same.
    assert_eq!(idle.embed("A dog is playing in the park.")?, first);
    Ok(())
}
