//! `cairn memory …`, straight on the database and through a running API.

use std::process::Command;

use crate::{cairn, start_server, stdout};

#[test]
fn add_search_get_delete_without_a_running_app() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let added = cairn(
        dir.path(),
        &[
            "memory",
            "add",
            "The staging database lives on db-stage-2",
            "--source",
            "notes",
            "--json",
        ],
    )?;
    assert!(
        added.status.success(),
        "{}",
        String::from_utf8_lossy(&added.stderr)
    );
    let record: serde_json::Value = serde_json::from_str(&stdout(&added))?;
    let id = record["id"].as_i64().ok_or("no id")?.to_string();

    let found = cairn(
        dir.path(),
        &[
            "memory",
            "search",
            "where is the staging database?",
            "--verbose",
        ],
    )?;
    let text = stdout(&found);
    assert!(text.contains(&format!(" 1. #{id} ")), "{text}");
    assert!(
        text.contains("db-stage-2") && text.contains("kept:"),
        "{text}"
    );

    let got = cairn(dir.path(), &["memory", "get", &id])?;
    assert!(stdout(&got).contains("[L1 · notes · activated]"));

    let health = cairn(dir.path(), &["memory", "health", "--json"])?;
    let health: serde_json::Value = serde_json::from_str(&stdout(&health))?;
    assert_eq!(health["integrity"], "ok");
    assert_eq!(health["overview"]["total"], 1);

    assert!(cairn(dir.path(), &["memory", "delete", &id])?
        .status
        .success());
    let again = cairn(dir.path(), &["memory", "get", &id])?;
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains(&format!("memory {id} not found")));
    Ok(())
}

#[test]
fn without_the_app_a_memory_added_is_found_by_meaning_at_once(
) -> Result<(), Box<dyn std::error::Error>> {
    let Some(home) = crate::home_with_model("all-MiniLM-L6-v2/model.safetensors")? else {
        return Ok(());
    };
    for text in [
        "I water the tomato plants on the balcony every morning",
        "The release train leaves on Thursdays",
    ] {
        let added = cairn(home.path(), &["memory", "add", text])?;
        assert!(
            added.status.success(),
            "{}",
            String::from_utf8_lossy(&added.stderr)
        );
    }
    // No process stays behind to embed them: the command did it before it answered.
    let health = cairn(home.path(), &["memory", "health", "--json"])?;
    let health: serde_json::Value = serde_json::from_str(&stdout(&health))?;
    assert_eq!(health["overview"]["backlog"]["embeddings"], 0, "{health}");
    assert_eq!(health["overview"]["backlog"]["facts"], 0, "{health}");

    // No word in common: only the meaning finds it.
    let found = cairn(
        home.path(),
        &["memory", "search", "gardening routine", "--limit", "1"],
    )?;
    let text = stdout(&found);
    assert!(
        text.contains("tomato plants") && text.contains("vec#1"),
        "{text}"
    );
    Ok(())
}

#[test]
fn when_the_app_speaks_chinese_memories_are_found_by_meaning_in_chinese(
) -> Result<(), Box<dyn std::error::Error>> {
    // No `[memory] embedder`: the app's language picks the multilingual model.
    chinese_memories_are_found_by_meaning(Some("[ui]\nlanguage = \"zh-CN\"\n"))
}

#[test]
fn memories_written_in_chinese_are_found_by_meaning_whatever_the_app_speaks(
) -> Result<(), Box<dyn std::error::Error>> {
    // No config at all: the memories' own script picks the multilingual model.
    chinese_memories_are_found_by_meaning(None)
}

fn chinese_memories_are_found_by_meaning(
    config: Option<&str>,
) -> Result<(), Box<dyn std::error::Error>> {
    let Some(home) = crate::home_with_model("multilingual-e5-small/e5-small-q4.bin")? else {
        return Ok(());
    };
    if let Some(config) = config {
        std::fs::write(home.path().join("config.toml"), config)?;
    }
    for text in [
        "我们决定下个月把数据库从MySQL迁移到PostgreSQL。",
        "小王负责支付服务的部署，他每周三上线新版本。",
        "昨天晚上的发布失败了，因为迁移脚本超时了十分钟。",
        "我女儿下周六过生日，我打算送她一辆自行车。",
        "公司年会定在十二月二十日，在杭州西湖边的酒店举行。",
        "我对花生过敏，吃了会起疹子。",
        "我的猫叫豆豆，是一只橘猫，今年三岁了。",
        "我每天早上六点起床跑步，已经坚持了两年。",
        "服务器的磁盘快满了，需要清理旧的日志文件。",
        "妈妈做的红烧肉是我最喜欢吃的菜。",
    ] {
        let added = cairn(home.path(), &["memory", "add", text])?;
        assert!(
            added.status.success(),
            "{}",
            String::from_utf8_lossy(&added.stderr)
        );
    }
    let health = stdout(&cairn(home.path(), &["memory", "health"])?);
    assert!(
        health.contains("embedded by multilingual-e5-small"),
        "{health}"
    );
    // Not one character pair in common with the memory each asks about (all-MiniLM-L6-v2,
    // which knows English only, ranks none of these three first).
    for (question, answer) in [
        ("我有什么食物不能吃？", "花生"),
        ("年终聚会在哪里办？", "杭州"),
        ("上次发版为什么没成功？", "超时"),
    ] {
        let found = cairn(home.path(), &["memory", "search", question, "--limit", "1"])?;
        let text = stdout(&found);
        assert!(
            text.contains(answer) && text.contains("vec#1"),
            "{question}: {text}"
        );
    }
    Ok(())
}

#[test]
fn a_damaged_multilingual_model_is_refused_and_recall_goes_on(
) -> Result<(), Box<dyn std::error::Error>> {
    // A truncated model file: its C engine would read past the end, so Cairn must not load it.
    let home = tempfile::tempdir()?;
    let dir = home.path().join("models/multilingual-e5-small");
    std::fs::create_dir_all(&dir)?;
    std::fs::write(
        dir.join("e5-small-q4.bin"),
        b"E5S1\x01\x00\x00\x00 and then nothing",
    )?;
    std::fs::write(
        home.path().join("config.toml"),
        "[memory]\nembedder = \"multilingual-e5-small\"\n",
    )?;
    let added = cairn(
        home.path(),
        &["memory", "add", "公司年会定在十二月二十日，在杭州举行。"],
    )?;
    assert!(
        added.status.success(),
        "{}",
        String::from_utf8_lossy(&added.stderr)
    );
    let found = cairn(home.path(), &["memory", "search", "公司年会在哪里"])?;
    assert!(
        found.status.success(),
        "{}",
        String::from_utf8_lossy(&found.stderr)
    );
    assert!(stdout(&found).contains("杭州"), "{}", stdout(&found));
    let health = cairn(home.path(), &["status"])?;
    let said = format!(
        "{}{}",
        stdout(&health),
        String::from_utf8_lossy(&health.stderr)
    );
    assert!(!said.contains("panicked"), "{said}");
    Ok(())
}

#[test]
fn commands_go_through_the_running_api() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let (mut server, info) = start_server(dir.path())?;
    let outcome = (|| -> Result<(), Box<dyn std::error::Error>> {
        let health = cairn(dir.path(), &["memory", "health"])?;
        assert!(
            stdout(&health).contains(&format!("served by {}", info.api_url)),
            "{}",
            stdout(&health)
        );
        let added = cairn(
            dir.path(),
            &[
                "memory",
                "add",
                "Release trains leave on Thursdays",
                "--layer",
                "L3",
            ],
        )?;
        assert!(
            stdout(&added).starts_with("added memory "),
            "{}",
            stdout(&added)
        );
        let found = cairn(
            dir.path(),
            &[
                "memory",
                "search",
                "release train",
                "--layer",
                "L3",
                "--json",
            ],
        )?;
        let found: serde_json::Value = serde_json::from_str(&stdout(&found))?;
        assert_eq!(
            found["hits"][0]["memory"]["text"],
            "Release trains leave on Thursdays"
        );
        let bad = cairn(dir.path(), &["memory", "search", "x", "--layer", "L7"])?;
        assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown layer"));
        Ok(())
    })();
    Command::new("kill").arg(server.id().to_string()).status()?;
    server.wait()?;
    outcome
}
