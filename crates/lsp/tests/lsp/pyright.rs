//! Every action against pyright on a small Python project (pyright pulls its diagnostics).

use std::time::Duration;

use serde_json::json;

use crate::{failed, ok, server, servers, Project, TestResult};

fn project() -> TestResult<Project> {
    let pyright = server(
        "pyright",
        &servers()?.pyright,
        &["--stdio"],
        &[".py", ".pyi"],
    );
    Project::new("py", vec![pyright], Duration::from_secs(60))
}

#[tokio::test(flavor = "multi_thread")]
async fn navigation_answers_with_locations_hover_and_outline() -> TestResult {
    let p = project()?;
    let definition = p
        .call(json!({"action": "definition", "path": "util.py", "symbol": "greet"}))
        .await;
    assert_eq!(ok(&definition), "app.py:2:5  def greet(name: str) -> str:");

    // A symbol written the way a model writes it, on a line with an emoji before it: columns
    // are characters at the boundary and UTF-16 on the wire.
    let at_emoji = p
        .call(json!({"action": "definition", "path": "emoji.py", "symbol": "`app.greet',", "line": 2}))
        .await;
    assert_eq!(ok(&at_emoji), "app.py:2:5  def greet(name: str) -> str:");
    let by_position = p
        .call(json!({"action": "definition", "path": "emoji.py", "line": 2, "column": 12}))
        .await;
    assert_eq!(ok(&by_position), "app.py:2:5  def greet(name: str) -> str:");

    let references = p
        .call(json!({"action": "references", "path": "app.py", "symbol": "greet"}))
        .await;
    assert_eq!(
        ok(&references),
        "9 reference(s):\n\
         app.py:2:5  def greet(name: str) -> str:\n\
         app.py:12:16  return greet(self.name)\n\
         app.py:16:7  print(greet(\"a\"), Person(\"b\").hello())\n\
         bad.py:2:17  from app import greet\n\
         bad.py:4:7  print(greet(undefined_name))\n\
         emoji.py:1:17  from app import greet\n\
         emoji.py:2:10  s = \"😀\"; greet(s)\n\
         util.py:1:17  from app import greet\n\
         util.py:3:7  print(greet(\"z\"))"
    );

    let hover = p
        .call(json!({"action": "hover", "path": "app.py", "line": 12, "column": 17}))
        .await;
    assert_eq!(
        ok(&hover),
        "```python\n(function) def greet(name: str) -> str\n```\n---\nSay hello."
    );

    let symbols = p.call(json!({"action": "symbols", "path": "app.py"})).await;
    assert_eq!(
        ok(&symbols),
        "function greet  line 2\n\
         \x20 variable name  line 2\n\
         class Person  line 7\n\
         \x20 method __init__  line 8\n\
         \x20   variable name  line 8\n\
         \x20 variable name  line 9\n\
         \x20 method hello  line 11\n\
         variable x  line 15"
    );

    // The first occurrence tried is the code's, the comment's last; none at all is said.
    let missing = p
        .call(json!({"action": "hover", "path": "app.py", "symbol": "nobody"}))
        .await;
    assert_eq!(failed(&missing), "[lsp: \"nobody\" not found in app.py]");
    let nothing = p
        .call(json!({"action": "definition", "path": "app.py", "line": 3, "column": 8}))
        .await;
    assert_eq!(
        failed(&nothing),
        "[lsp: no definition found for the symbol at app.py:3:8]"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn diagnostics_follow_the_file_on_disk() -> TestResult {
    let p = project()?;
    let bad = p
        .call(json!({"action": "diagnostics", "path": "bad.py"}))
        .await;
    assert_eq!(
        ok(&bad),
        "1 diagnostic(s) in bad.py:\nerror bad.py:4:13 \"undefined_name\" is not defined [Pyright]"
    );
    let app = p
        .call(json!({"action": "diagnostics", "path": "app.py"}))
        .await;
    assert_eq!(
        ok(&app),
        "1 diagnostic(s) in app.py:\nerror app.py:15:10 Type \"Literal['oops']\" is not \
         assignable to declared type \"int\" \"Literal['oops']\" is not assignable to \"int\" [Pyright]"
    );
    // Fixed on disk (as edit_file would): the next call sees it without any other step.
    let fixed = p.read("bad.py")?.replace("undefined_name", "os.sep");
    std::fs::write(p.root.join("bad.py"), fixed)?;
    let clean = p
        .call(json!({"action": "diagnostics", "path": "bad.py"}))
        .await;
    assert_eq!(ok(&clean), "no diagnostics: bad.py is clean");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn rename_changes_every_file_on_disk() -> TestResult {
    let p = project()?;
    let without = p
        .call(json!({"action": "rename", "path": "util.py", "symbol": "greet"}))
        .await;
    assert_eq!(
        failed(&without),
        "[lsp: rename needs new_name — call lsp again with {\"action\": \"rename\", \"path\": \"util.py\", \"symbol\": \"greet\", \"new_name\": \"<the new identifier>\"}; do not use edit_file for a rename]"
    );
    // Symbol and new name in one string, as a small model writes them.
    let rename = p
        .call(json!({"action": "rename", "path": "util.py", "symbol": "greet 3 7 welcome"}))
        .await;
    assert_eq!(
        ok(&rename),
        "renamed to welcome: 9 edit(s) in 4 file(s)\n\
         app.py: 3 edit(s)\nbad.py: 2 edit(s)\nemoji.py: 2 edit(s)\nutil.py: 2 edit(s)"
    );
    assert_eq!(
        p.read("util.py")?,
        "from app import welcome\n\nprint(welcome(\"z\"))\n"
    );
    assert_eq!(
        p.read("emoji.py")?,
        "from app import welcome\ns = \"😀\"; welcome(s)\n"
    );
    assert!(p.read("app.py")?.contains("def welcome(name: str) -> str:"));
    assert!(!p.read("app.py")?.contains("greet"));
    // The server was told: it finds the new name where the old one was.
    let definition = p
        .call(json!({"action": "definition", "path": "util.py", "symbol": "welcome"}))
        .await;
    assert_eq!(
        ok(&definition),
        "app.py:2:5  def welcome(name: str) -> str:"
    );
    Ok(())
}
