//! typescript-language-server over TypeScript's tsserver.

use std::time::Duration;

use serde_json::json;

use crate::{ok, server, servers, Project, TestResult};

#[tokio::test(flavor = "multi_thread")]
async fn typescript_navigates_checks_and_renames() -> TestResult {
    let ts = server(
        "typescript",
        &servers()?.typescript,
        &["--stdio"],
        &[".ts", ".js"],
    );
    let p = Project::new("ts", vec![ts], Duration::from_secs(60))?;
    // tsserver loads the rest of the project in the background after the first file opens:
    // the diagnostics' wait lets it finish before the references are asked for.
    let diagnostics = p.published_diagnostics("app.ts").await;
    assert_eq!(
        ok(&diagnostics).replace(" (as last published)", ""),
        "1 diagnostic(s) in app.ts:\n\
         error app.ts:13:7 Type 'string' is not assignable to type 'number'. [typescript]"
    );
    // Through the import, to where it is defined.
    let through = p
        .call(json!({"action": "definition", "path": "util.ts", "symbol": "greet", "line": 2}))
        .await;
    assert_eq!(
        ok(&through),
        "app.ts:2:17  export function greet(name: string): string {"
    );
    let definition = p
        .call(json!({"action": "definition", "path": "app.ts", "symbol": "greet", "line": 9}))
        .await;
    assert_eq!(
        ok(&definition),
        "app.ts:2:17  export function greet(name: string): string {"
    );
    let references = p
        .call(json!({"action": "references", "path": "app.ts", "symbol": "greet"}))
        .await;
    assert_eq!(
        ok(&references),
        "5 reference(s):\n\
         app.ts:2:17  export function greet(name: string): string {\n\
         app.ts:9:12  return greet(this.name);\n\
         app.ts:14:13  console.log(greet(\"a\"), new Person(\"b\").hello(), x);\n\
         util.ts:1:10  import { greet } from \"./app\";\n\
         util.ts:2:13  console.log(greet(\"z\"));"
    );
    let hover = p
        .call(json!({"action": "hover", "path": "app.ts", "symbol": "greet", "line": 9}))
        .await;
    assert_eq!(
        ok(&hover),
        "```typescript\nfunction greet(name: string): string\n```"
    );
    let symbols = p.call(json!({"action": "symbols", "path": "app.ts"})).await;
    assert_eq!(
        ok(&symbols),
        "function greet  line 2\nclass Person  line 6\n  constructor constructor  line 7\n  \
         property name  line 7\n  method hello  line 8\nconstant x  line 13"
    );
    let rename = p
        .call(
            json!({"action": "rename", "path": "app.ts", "symbol": "greet", "new_name": "welcome"}),
        )
        .await;
    assert_eq!(
        ok(&rename),
        "renamed to welcome: 5 edit(s) in 2 file(s)\napp.ts: 3 edit(s)\nutil.ts: 2 edit(s)"
    );
    assert_eq!(
        p.read("util.ts")?,
        "import { welcome } from \"./app\";\nconsole.log(welcome(\"z\"));\n"
    );
    Ok(())
}
