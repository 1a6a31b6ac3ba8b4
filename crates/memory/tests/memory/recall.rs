//! Recall: ranking, languages, filters, explanations.

use cairn_memory::{Layer, MemoryStore, NewMemory, SearchQuery};

use crate::TestResult;

fn store_with(texts: &[(&str, &str)]) -> Result<MemoryStore, Box<dyn std::error::Error>> {
    let store = MemoryStore::open_in_memory()?;
    for (i, (session, text)) in texts.iter().enumerate() {
        store.add(NewMemory {
            text: (*text).into(),
            session: Some((*session).into()),
            created_at: Some(1_700_000_000_000 + i as i64 * 1000),
            ..NewMemory::default()
        })?;
    }
    Ok(store)
}

fn top_texts(
    store: &MemoryStore,
    query: &str,
    limit: usize,
) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    Ok(store
        .search(&SearchQuery::new(query).limit(limit))?
        .hits
        .into_iter()
        .map(|h| h.memory.text)
        .collect())
}

#[test]
fn any_query_term_can_match_and_better_matches_rank_first() -> TestResult {
    let store = store_with(&[
        ("s1", "We moved the database backups to the night schedule"),
        ("s2", "The cat knocked over the plant"),
        (
            "s3",
            "Backups of the database failed because the disk was full",
        ),
    ])?;
    let top = top_texts(&store, "why did the database backups fail?", 3)?;
    assert_eq!(
        top.first().map(String::as_str),
        Some("Backups of the database failed because the disk was full")
    );
    assert!(top.iter().all(|t| !t.contains("cat")), "{top:?}");
    Ok(())
}

#[test]
fn stems_match_other_forms_of_a_word() -> TestResult {
    let store = store_with(&[("s", "She has been painting landscapes lately")])?;
    assert_eq!(top_texts(&store, "Who paints?", 1)?.len(), 1);
    Ok(())
}

#[test]
fn chinese_queries_find_chinese_memories() -> TestResult {
    let store = store_with(&[
        ("s1", "我们把数据库备份改到了夜间执行"),
        ("s2", "猫把花盆打翻了"),
        ("s3", "记得给植物浇水"),
    ])?;
    assert_eq!(
        top_texts(&store, "数据库备份是什么时候执行的？", 1)?,
        vec!["我们把数据库备份改到了夜间执行"]
    );
    assert_eq!(top_texts(&store, "浇水", 1)?, vec!["记得给植物浇水"]);
    Ok(())
}

#[test]
fn japanese_queries_find_japanese_memories() -> TestResult {
    let store = store_with(&[("s1", "東京タワーに行きました"), ("s2", "ラーメンを食べた")])?;
    assert_eq!(
        top_texts(&store, "東京タワー", 1)?,
        vec!["東京タワーに行きました"]
    );
    Ok(())
}

#[test]
fn a_turn_is_found_through_its_neighbours() -> TestResult {
    // The answer never names the topic; the question before it does.
    let store = store_with(&[
        ("chat", "Ana: Have you ever been to the Louvre?"),
        (
            "chat",
            "Ben: Yes, twice, the second time with my sister in 2019.",
        ),
        ("other", "Cy: I fixed the printer."),
    ])?;
    let top = top_texts(&store, "When did Ben visit the Louvre with his sister?", 2)?;
    assert!(
        top.iter().any(|t| t.starts_with("Ben: Yes, twice")),
        "{top:?}"
    );
    Ok(())
}

#[test]
fn structural_fragments_are_their_own_channel() -> TestResult {
    let store = store_with(&[
        ("s1", "cargo failed with error[E0599] in src/agent/loop.rs"),
        ("s2", "error handling is discussed in the book"),
    ])?;
    let result = store.search(&SearchQuery::new("what was E0599 about?").limit(5))?;
    let first = result.hits.first().ok_or("no hit")?;
    assert!(first.memory.text.contains("E0599"));
    assert!(
        first.channels.iter().any(|c| c.channel == "structural"),
        "{:?}",
        first.channels
    );
    Ok(())
}

#[test]
fn filters_narrow_by_layer_source_session_and_time() -> TestResult {
    let store = MemoryStore::open_in_memory()?;
    for (text, layer, source, session, at) in [
        ("deploys use blue green", Layer::Trace, "codex", "a", 1_000),
        ("deploys need approval", Layer::Policy, "cairn", "b", 2_000),
        ("deploys happen at noon", Layer::Trace, "cairn", "c", 3_000),
    ] {
        store.add(NewMemory {
            text: text.into(),
            layer: Some(layer),
            source: Some(source.into()),
            session: Some(session.into()),
            created_at: Some(at),
            ..NewMemory::default()
        })?;
    }
    let texts = |q: SearchQuery| -> Result<Vec<String>, Box<dyn std::error::Error>> {
        Ok(store
            .search(&q)?
            .hits
            .into_iter()
            .map(|h| h.memory.text)
            .collect())
    };
    let mut q = SearchQuery::new("deploys");
    q.layers = vec![Layer::Policy];
    assert_eq!(texts(q)?, vec!["deploys need approval"]);
    let mut q = SearchQuery::new("deploys");
    q.sources = vec!["codex".into()];
    assert_eq!(texts(q)?, vec!["deploys use blue green"]);
    let mut q = SearchQuery::new("deploys");
    q.exclude_session = Some("a".into());
    q.after = Some(2_500);
    assert_eq!(texts(q)?, vec!["deploys happen at noon"]);
    Ok(())
}

#[test]
fn verbose_search_explains_kept_and_dropped() -> TestResult {
    let mut texts = vec![("s", "the quarterly report is due on friday".to_owned())];
    for i in 0..30 {
        texts.push(("s", format!("note {i} about the quarterly report")));
        texts.push(("other", format!("lunch menu {i} has soup")));
    }
    let borrowed: Vec<(&str, &str)> = texts.iter().map(|(s, t)| (*s, t.as_str())).collect();
    let store = store_with(&borrowed)?;
    let mut q = SearchQuery::new("when is the quarterly report due").limit(3);
    q.verbose = true;
    let result = store.search(&q)?;
    assert_eq!(result.hits.len(), 3);
    assert!(result.hits[0].memory.text.contains("due on friday"));
    assert!(result
        .hits
        .iter()
        .all(|h| h.kept && h.reason.starts_with("kept")));
    assert!(!result.dropped.is_empty());
    assert!(result
        .dropped
        .iter()
        .all(|h| !h.kept && h.reason.starts_with("dropped")));
    let fts = result.hits[0]
        .channels
        .iter()
        .find(|c| c.channel == "fts")
        .ok_or("no fts channel")?;
    assert_eq!(fts.rank, 0);
    assert!(fts.score > 0.0);
    Ok(())
}

#[test]
fn the_injection_block_is_labelled_and_capped() -> TestResult {
    let store = store_with(&[(
        "s",
        &format!("long memory about kubernetes {}", "x".repeat(2000)),
    )])?;
    let hits = store.search(&SearchQuery::new("kubernetes"))?.hits;
    let block = cairn_memory::render_injection(&hits);
    assert!(block.starts_with("## Recalled from memory (historical context)"));
    assert!(block.contains("The current request always takes precedence."));
    assert!(block.contains("· cairn · L1]"));
    let snippet_line = block.lines().last().unwrap_or_default();
    assert_eq!(snippet_line.chars().count(), 640);
    assert!(cairn_memory::render_injection(&[]).is_empty());
    Ok(())
}

#[test]
fn quality_signals_lift_a_memory_among_equals() -> TestResult {
    let store = MemoryStore::open_in_memory()?;
    for (text, gain) in [
        ("always run the linter before pushing", 0.0),
        ("always run the tests before pushing", 1.0),
    ] {
        store.add(NewMemory {
            text: text.into(),
            layer: Some(Layer::Policy),
            metadata: Some(serde_json::json!({ "gain": gain })),
            ..NewMemory::default()
        })?;
    }
    let top = store
        .search(&SearchQuery::new("what to run before pushing"))?
        .hits;
    assert_eq!(top[0].memory.text, "always run the tests before pushing");
    Ok(())
}

#[test]
fn a_line_that_only_asks_ranks_below_one_that_answers() -> TestResult {
    // The question's words match the line that asks them best; the answer is in the other.
    let store = store_with(&[
        ("s1", "Caroline: Nice! What did your pottery class make?"),
        (
            "s1",
            "Melanie: We made bowls at the pottery class last week, each one with its own pattern of leaves.",
        ),
    ])?;
    let mut q = SearchQuery::new("What did the pottery class make?").limit(2);
    q.verbose = true;
    let result = store.search(&q)?;
    let texts: Vec<&str> = result.hits.iter().map(|h| h.memory.text.as_str()).collect();
    assert!(texts[0].starts_with("Melanie: We made bowls"), "{texts:?}");
    let asks = result.hits.get(1).ok_or("one hit only")?;
    assert!(
        asks.channels
            .iter()
            .any(|c| c.channel == "only_asks" && c.score < 0.0),
        "{asks:?}"
    );

    // Asked what was asked, the question is the answer.
    let mut q = SearchQuery::new("What did Caroline ask about the pottery class?").limit(2);
    q.verbose = true;
    let result = store.search(&q)?;
    let first = result.hits.first().ok_or("nothing recalled")?;
    assert!(
        first.memory.text.starts_with("Caroline: Nice!"),
        "{result:?}"
    );
    assert!(result
        .hits
        .iter()
        .all(|h| h.channels.iter().all(|c| c.channel != "only_asks")));
    Ok(())
}

#[test]
fn a_line_said_by_the_person_the_question_names_ranks_first() -> TestResult {
    // The same words, said by two people: the question names one of them.
    let store = store_with(&[
        (
            "s1",
            "Melanie: Caroline and I painted a sunset over the lake last weekend.",
        ),
        (
            "s1",
            "Caroline: We painted a sunset over the lake last weekend.",
        ),
        ("s2", "Caroline: The pottery class starts on Tuesday."),
    ])?;
    let mut q = SearchQuery::new("What did Caroline paint last weekend?").limit(2);
    q.verbose = true;
    let result = store.search(&q)?;
    let first = result.hits.first().ok_or("nothing recalled")?;
    assert!(
        first.memory.text.starts_with("Caroline: We painted"),
        "{result:?}"
    );
    assert!(first.channels.iter().any(|c| c.channel == "speaker"));
    let second = result.hits.get(1).ok_or("one hit only")?;
    assert!(second.channels.iter().all(|c| c.channel != "speaker"));

    // Lower case is a word, not a name; a line without a speaker gets nothing.
    let store = store_with(&[
        ("s1", "Note: caroline is a song title"),
        ("s1", "caroline is a song title"),
    ])?;
    let result = store.search(&SearchQuery::new("caroline song").limit(2))?;
    assert!(result
        .hits
        .iter()
        .all(|h| h.channels.iter().all(|c| c.channel != "speaker")));

    // A name in Chinese has no capitals: the question names the speaker by containing it, with
    // the full-width colon or the ASCII one. The same words said by two people: the question
    // names one of them.
    let store = store_with(&[
        ("s1", "梅兰妮：我们上周末画了湖上的日落。"),
        ("s1", "卡罗琳：我们上周末画了湖上的日落。"),
        ("s2", "卡罗琳:陶艺课周二开始。"),
    ])?;
    let result = store.search(&SearchQuery::new("卡罗琳上周末画了什么？").limit(3))?;
    let first = result.hits.first().ok_or("nothing recalled")?;
    assert!(first.memory.text.starts_with("卡罗琳：我们"), "{result:?}");
    let speakers: Vec<bool> = result
        .hits
        .iter()
        .map(|h| h.channels.iter().any(|c| c.channel == "speaker"))
        .collect();
    let said_by_caroline: Vec<bool> = result
        .hits
        .iter()
        .map(|h| h.memory.text.starts_with("卡罗琳"))
        .collect();
    assert_eq!(speakers, said_by_caroline, "{result:?}");
    Ok(())
}

#[test]
fn a_date_the_question_names_favours_what_was_said_then() -> TestResult {
    let store = MemoryStore::open_in_memory()?;
    // 2024-03-12 and 2024-06-04, noon.
    for (at, text) in [
        (
            1_710_244_800_000,
            "After a talk, we decided the schema keeps one table per source.",
        ),
        (
            1_717_502_400_000,
            "We decided the schema merges every source into one table.",
        ),
    ] {
        store.add(NewMemory {
            text: text.into(),
            created_at: Some(at),
            ..NewMemory::default()
        })?;
    }
    let mut q = SearchQuery::new("What did we decide about the schema in March 2024?").limit(2);
    q.verbose = true;
    let result = store.search(&q)?;
    let first = result.hits.first().ok_or("nothing recalled")?;
    assert!(
        first.memory.text.contains("one table per source"),
        "{result:?}"
    );
    assert!(first.channels.iter().any(|c| c.channel == "date"));
    // Asked without the date, the closer match in words leads.
    let hits = top_texts(&store, "What did we decide about the schema?", 2)?;
    assert!(hits[0].contains("merges every source"), "{hits:?}");
    Ok(())
}

/// Issue 48, finding 14: "hello" recalled an imported turn about `ls` because both said hello.
#[test]
fn greetings_and_small_talk_recall_nothing() -> TestResult {
    let store = store_with(&[
        (
            "imported",
            "User: hello, what is in this folder?\nAssistant: I ran `ls`: Cargo.toml, src and README.md.",
        ),
        ("imported", "User: 你好\nAssistant: 你好！有什么可以帮你？"),
        ("other", "The staging database password rotates every 90 days"),
    ])?;
    for greeting in [
        "hello",
        "Hello!",
        "Hi there!",
        "good morning",
        "thanks, ok",
        "你好",
    ] {
        assert_eq!(
            top_texts(&store, greeting, 5)?,
            Vec::<String>::new(),
            "{greeting}"
        );
    }
    // A greeting in front of a real question leaves the question.
    assert_eq!(
        top_texts(&store, "hello, when does the staging password rotate?", 5)?,
        vec!["The staging database password rotates every 90 days"]
    );
    Ok(())
}

/// One shared common word does not recall a memory: a match must carry enough of the question.
#[test]
fn one_shared_common_word_recalls_nothing() -> TestResult {
    let mut texts = vec![("s", "The rocket launch moved to May".to_owned())];
    for i in 0..20 {
        texts.push(("s", format!("project note {i}: renamed the module {i}")));
    }
    let borrowed: Vec<(&str, &str)> = texts.iter().map(|(s, t)| (*s, t.as_str())).collect();
    let store = store_with(&borrowed)?;
    let mut q = SearchQuery::new("what is the project budget for the marketing review?");
    q.verbose = true;
    let result = store.search(&q)?;
    assert!(result.hits.is_empty(), "{:?}", result.hits);
    assert!(
        result
            .dropped
            .iter()
            .any(|h| h.reason.contains("of the question's information")),
        "{:?}",
        result.dropped
    );
    assert_eq!(
        top_texts(&store, "when is the rocket launch?", 1)?,
        vec!["The rocket launch moved to May"]
    );
    Ok(())
}

/// In a store of a few memories the question's topic may be in all of them: it still recalls
/// the memory about it ("basil" was in both, and weighed less than "go", which none holds).
#[test]
fn a_small_store_recalls_by_the_questions_topic() -> TestResult {
    let store = store_with(&[
        (
            "s",
            "Last summer the basil grew best in the south bed, next to the tomatoes",
        ),
        ("s", "Start with tomatoes and basil."),
    ])?;
    let texts = top_texts(&store, "Where should the basil go?", 2)?;
    assert!(texts.iter().any(|t| t.contains("south bed")), "{texts:?}");
    Ok(())
}

/// The plain "why": the question's own words the memory holds, as the person wrote them.
#[test]
fn a_hit_names_the_questions_words_it_holds() -> TestResult {
    let store = store_with(&[
        ("s", "The staging database password rotates every 90 days"),
        ("s", "Lunch is at noon"),
    ])?;
    let result = store.search(&SearchQuery::new("Which staging databases rotate?"))?;
    let first = result.hits.first().ok_or("nothing recalled")?;
    assert_eq!(first.words, ["staging", "databases", "rotate"]);
    assert!(!first.close_in_meaning, "no embedder, no meaning");
    Ok(())
}
