//! python-lsp-server: flat symbols, pushed diagnostics (pyflakes), whole-file rename edits.

use std::time::Duration;

use serde_json::json;

use crate::{ok, server, servers, Project, TestResult};

#[tokio::test(flavor = "multi_thread")]
async fn pylsp_pushes_diagnostics_and_renames_whole_files() -> TestResult {
    let mut pylsp = server(
        "pylsp",
        std::path::Path::new("python3"),
        &["-m", "pylsp"],
        &[".py"],
    );
    pylsp.env.insert(
        "PYTHONPATH".into(),
        servers()?.pylsp_path.display().to_string(),
    );
    let p = Project::new("py", vec![pylsp], Duration::from_secs(60))?;
    let definition = p
        .call(json!({"action": "definition", "path": "util.py", "symbol": "greet"}))
        .await;
    assert_eq!(ok(&definition), "app.py:2:5  def greet(name: str) -> str:");
    // A flat outline is nested by each symbol's container.
    let symbols = p.call(json!({"action": "symbols", "path": "app.py"})).await;
    assert_eq!(
        ok(&symbols),
        "function greet  line 2\nclass Person  line 7\n  method __init__  line 8\n    \
         field name  line 9\n  method hello  line 11\nvariable x  line 15"
    );
    let expected = "warning bad.py:1:1 'os' imported but unused [pyflakes]\n\
                    error bad.py:4:13 undefined name 'undefined_name' [pyflakes]";
    let first = p.published_diagnostics("bad.py").await;
    assert_eq!(
        ok(&first).replace(" (as last published)", ""),
        format!("2 diagnostic(s) in bad.py:\n{expected}")
    );
    // Nothing changed since the server spoke: its last publication, said as such.
    let again = p
        .call(json!({"action": "diagnostics", "path": "bad.py"}))
        .await;
    assert_eq!(
        ok(&again),
        format!("2 diagnostic(s) in bad.py (as last published):\n{expected}")
    );
    let rename = p
        .call(json!({"action": "rename", "path": "util.py", "symbol": "greet", "new_name": "welcome"}))
        .await;
    assert_eq!(
        ok(&rename),
        "renamed to welcome: 4 edit(s) in 4 file(s)\n\
         app.py: 1 edit(s)\nbad.py: 1 edit(s)\nemoji.py: 1 edit(s)\nutil.py: 1 edit(s)"
    );
    assert_eq!(
        p.read("util.py")?,
        "from app import welcome\n\nprint(welcome(\"z\"))\n"
    );
    assert!(p
        .read("app.py")?
        .contains("        return welcome(self.name)\n"));
    Ok(())
}
