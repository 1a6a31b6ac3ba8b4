//! The tools outside the runtime: bash's read-back of huge outputs, read_skill's catalogue and
//! path safety, read_file's windows and folders, write_file's identical-content answer.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use cairn_tools::{Bash, ReadFile, ReadSkill, ResultKind, Tool, ToolContext, WriteFile};
use serde_json::json;

#[tokio::test]
async fn a_huge_output_is_read_back_from_both_ends() {
    let dir = tempfile::tempdir().unwrap();
    let mut ctx = ToolContext::new(dir.path().to_path_buf());
    ctx.max_output = 10 << 20;
    // 3 MiB of numbered lines: more than the 2 × 1 MiB read back.
    let out = Bash.run(json!({"command": "seq 1 400000"}), &ctx).await;
    assert!(out.text.starts_with("1\n2\n3\n"));
    assert!(out
        .text
        .contains("\n[... output too large to read back in full ...]\n"));
    assert!(out.text.ends_with("399999\n400000\n"));
    assert!(out.text.len() < (2 << 20) + 100);
}

#[tokio::test]
async fn output_past_max_output_is_cut_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let mut ctx = ToolContext::new(dir.path().to_path_buf());
    ctx.max_output = 10;
    let out = Bash
        .run(json!({"command": "echo 0123456789abcdef"}), &ctx)
        .await;
    assert_eq!(
        out.text,
        "0123456789\n[... output truncated to 10 characters ...]"
    );
}

#[tokio::test]
async fn skills_are_catalogued_sorted_and_names_cannot_escape_the_folder() {
    let dir = tempfile::tempdir().unwrap();
    let skills = dir.path().join("skills");
    std::fs::create_dir_all(skills.join("deploy")).unwrap();
    std::fs::write(
        skills.join("review.md"),
        "---\ndescription: Review a change\n---\nRead the diff.\n",
    )
    .unwrap();
    std::fs::write(
        skills.join("deploy/SKILL.md"),
        "# Deploy\nShip to production safely.\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("secret.md"), "do not read").unwrap();
    let tool = ReadSkill::load(&skills).unwrap();
    let description = tool.declaration().description;
    assert!(
        description.ends_with(
            "Skills:\n  deploy — Ship to production safely.\n  review — Review a change"
        ),
        "{description}"
    );
    let ctx = ToolContext::new(dir.path().to_path_buf());
    let out = tool.run(json!({"name": "deploy"}), &ctx).await;
    assert_eq!(out.text, "# Deploy\nShip to production safely.\n");
    let out = tool.run(json!({"name": "../secret"}), &ctx).await;
    assert_eq!(
        out.text,
        "No skill named \"../secret\". Available skills: deploy, review"
    );
    assert!(ReadSkill::load(&dir.path().join("none")).is_none());
}

#[tokio::test]
async fn read_file_shows_windows_and_keeps_the_final_newline_only_at_the_end() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.txt"), "a\nb\nc\n").unwrap();
    let ctx = ToolContext::new(dir.path().to_path_buf());
    let out = ReadFile::default()
        .run(
            json!({"path": "f.txt", "start": 1, "end": 2, "numbered": true}),
            &ctx,
        )
        .await;
    assert_eq!(out.text, "     1\ta\n     2\tb");
    assert!(matches!(
        out.kind,
        ResultKind::Read {
            from: 1,
            to: 2,
            of: 3,
            full: false,
            ..
        }
    ));
    let out = ReadFile::default()
        .run(json!({"path": "f.txt", "start": 3}), &ctx)
        .await;
    assert_eq!(out.text, "c\n");
}

#[tokio::test]
async fn read_file_on_a_folder_lists_what_it_holds() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.md"), "n").unwrap();
    std::fs::write(dir.path().join("main.py"), "m").unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    let ctx = ToolContext::new(dir.path().to_path_buf());
    for path in [".", "./"] {
        let out = ReadFile::default().run(json!({ "path": path }), &ctx).await;
        assert!(!out.failed, "{}", out.text);
        assert_eq!(
            out.text,
            format!("[{path} is a folder with 3 entries:]\nmain.py\nnotes.md\nsrc/")
        );
    }
}

#[tokio::test]
async fn write_file_creates_replaces_with_a_diff_and_skips_identical_content() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path().to_path_buf());
    let out = WriteFile
        .run(
            json!({"path": "deep/new.txt", "content": "one\ntwo\n"}),
            &ctx,
        )
        .await;
    assert_eq!(out.text, "Created, 2 lines.");
    let out = WriteFile
        .run(json!({"path": "deep/new.txt", "content": "one\n2\n"}), &ctx)
        .await;
    assert!(
        out.text.starts_with("Wrote deep/new.txt: +1 -1 lines\n"),
        "{}",
        out.text
    );
    assert!(
        out.text.contains("- 2 │ two") && out.text.contains("+ 2 │ 2"),
        "{}",
        out.text
    );
    let out = WriteFile
        .run(json!({"path": "deep/new.txt", "content": "one\n2\n"}), &ctx)
        .await;
    assert_eq!(
        out.text,
        "deep/new.txt already has this content: nothing was written."
    );
}
